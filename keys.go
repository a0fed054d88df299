package singletable

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DynamoDB's limits on key attribute values, in UTF-8 bytes.
const (
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// DefaultDelimiter separates the parts of a rendered key unless the table says otherwise.
const DefaultDelimiter = '#'

// keyFormat is how a placeholder's value is written into a key.
type keyFormat uint8

const (
	fmtPlain  keyFormat = iota // strings as they are, integers in decimal, times as fmtTime
	fmtPad                     // {n:08}: non-negative integer, zero-padded to a fixed width
	fmtTime                    // {t:time}: UTC, 2006-01-02T15:04:05.000000000Z, 30 bytes
	fmtDate                    // {t:date}: UTC, 2006-01-02, 10 bytes
	fmtUnix                    // {t:unix}: unix seconds, 10 digits
	fmtUnixMs                  // {t:unixms}: unix milliseconds, 13 digits
	fmtRev                     // {t:rev}: 3155378975999999999 minus 100 ns ticks since 0001-01-01 UTC, 19 digits
)

const (
	timeLayout = "2006-01-02T15:04:05.000000000Z"
	dateLayout = "2006-01-02"
	// maxTicks is .NET's DateTime.MaxValue.Ticks (9999-12-31T23:59:59.9999999Z), the
	// "judgement day" of the reverse-time feed pattern.
	maxTicks = 3155378975999999999
	// unixToTicks is the number of seconds from 0001-01-01 to 1970-01-01.
	unixToTicks = 62135596800
)

var formatNames = map[string]keyFormat{
	"time": fmtTime, "date": fmtDate, "unix": fmtUnix, "unixms": fmtUnixMs, "rev": fmtRev,
}

// fixedWidth is the rendered width of a format, or 0 when it varies.
func (f keyFormat) fixedWidth() int {
	switch f {
	case fmtTime:
		return len(timeLayout)
	case fmtDate:
		return len(dateLayout)
	case fmtUnix:
		return 10
	case fmtUnixMs:
		return 13
	case fmtRev:
		return 19
	}
	return 0
}

func (f keyFormat) isTime() bool { return f >= fmtTime }

// segment is literal text (name == "") or one placeholder.
type segment struct {
	literal string
	name    string
	format  keyFormat
	width   int // fixed rendered width; 0 when the width varies
}

// Template is a parsed key template such as "ORDER#{createdAt:time}#{orderId}":
// literal text and {placeholder} parts naming stored attributes. A Template is
// immutable and safe for concurrent use.
//
// Placeholder formats:
//
//	{name}         strings as they are; integers in decimal; times as {name:time}
//	{name:08}      a non-negative integer zero-padded to 8 digits (any width 1-20)
//	{name:time}    UTC time, fixed width, sorts as text: 2024-05-01T09:30:00.000000000Z
//	{name:date}    UTC date: 2024-05-01
//	{name:unix}    unix seconds, 10 digits
//	{name:unixms}  unix milliseconds, 13 digits
//	{name:rev}     reverse time for newest-first order: 3155378975999999999 minus the
//	               100 ns ticks since 0001-01-01 UTC, 19 digits
//
// Safety: a value of variable width may not contain the delimiter, and such a
// placeholder must be followed by the end of the template or by literal text that
// starts with the delimiter. Together these make rendering injective: two different
// inputs never render the same key, and [Template.Extract] recovers every value.
type Template struct {
	text  string
	delim byte
	segs  []segment
	names []string
}

// ParseTemplate parses a key template; delimiter is the byte that separates key parts
// (usually [DefaultDelimiter]). It must be ASCII punctuation other than '{', '}' and ':'.
func ParseTemplate(text string, delimiter byte) (*Template, error) {
	if err := checkDelimiter(delimiter); err != nil {
		return nil, err
	}
	t := &Template{text: text, delim: delimiter}
	if text == "" {
		return nil, templateError(text, "empty template")
	}
	if !utf8.ValidString(text) {
		return nil, templateError(text, "template is not valid UTF-8")
	}
	rest := text
	seen := map[string]bool{}
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			t.segs = append(t.segs, segment{literal: rest})
			break
		}
		if rest[open] == '}' {
			return nil, templateError(text, "unexpected '}'")
		}
		if open > 0 {
			t.segs = append(t.segs, segment{literal: rest[:open]})
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] != '}' {
			return nil, templateError(text, "unclosed '{'")
		}
		body := rest[open+1 : open+1+end]
		rest = rest[open+1+end+1:]
		name, spec, hasSpec := strings.Cut(body, ":")
		if name == "" {
			return nil, templateError(text, "empty placeholder name")
		}
		if seen[name] {
			return nil, templateError(text, "placeholder {"+name+"} appears twice")
		}
		seen[name] = true
		seg := segment{name: name}
		if hasSpec {
			f, w, err := parseSpec(spec)
			if err != nil {
				return nil, templateError(text, "placeholder {"+name+"}: "+err.Error())
			}
			seg.format, seg.width = f, w
		}
		t.segs = append(t.segs, seg)
		t.names = append(t.names, name)
	}
	// A variable-width placeholder must end the template or be followed by literal
	// text that starts with the delimiter, so a parser knows where its value ends.
	for i, s := range t.segs {
		if s.name == "" || s.width > 0 || i == len(t.segs)-1 {
			continue
		}
		next := t.segs[i+1]
		if next.name != "" || next.literal[0] != delimiter {
			return nil, templateError(text, "placeholder {"+s.name+"} has a variable width and must be followed by the delimiter "+strconv.QuoteRune(rune(delimiter))+" or end the template")
		}
	}
	return t, nil
}

func checkDelimiter(d byte) error {
	if d > 0x7e || d <= ' ' || d == '{' || d == '}' || d == ':' ||
		('0' <= d && d <= '9') || ('a' <= d && d <= 'z') || ('A' <= d && d <= 'Z') {
		return &KeyError{Reason: "delimiter " + strconv.QuoteRune(rune(d)) + " must be ASCII punctuation other than '{', '}' and ':'"}
	}
	return nil
}

func parseSpec(spec string) (keyFormat, int, error) {
	if f, ok := formatNames[spec]; ok {
		return f, f.fixedWidth(), nil
	}
	if len(spec) >= 2 && spec[0] == '0' {
		w, err := strconv.Atoi(spec[1:])
		if err == nil && w >= 1 && w <= 20 && strings.TrimLeft(spec[1:], "0123456789") == "" {
			return fmtPad, w, nil
		}
	}
	return 0, 0, &KeyError{Reason: "unknown format " + strconv.Quote(spec) + " (want 0N for zero padding, time, date, unix, unixms or rev)"}
}

func templateError(text, reason string) error {
	return &KeyError{Reason: "template " + strconv.Quote(text) + ": " + reason}
}

// String returns the template text.
func (t *Template) String() string { return t.text }

// Placeholders returns the placeholder names in order of appearance.
func (t *Template) Placeholders() []string { return append([]string(nil), t.names...) }

// StaticPrefix returns the literal text before the first placeholder (the whole
// template when it has none).
func (t *Template) StaticPrefix() string {
	if len(t.segs) > 0 && t.segs[0].name == "" {
		return t.segs[0].literal
	}
	return ""
}

// keyValue is one placeholder input, taken from a struct field or a map.
type keyValue struct {
	kind kvKind
	s    string
	i    int64
	u    uint64
	t    time.Time
}

type kvKind uint8

const (
	kvMissing kvKind = iota
	kvString
	kvInt
	kvUint
	kvTime
	kvBytes // a []byte, only in a binary key's template (keytypes.go)
)

// keyValueOf converts a value given to the map-based Template methods.
func keyValueOf(v any) (keyValue, bool) {
	switch x := v.(type) {
	case nil:
		return keyValue{}, true
	case string:
		if x == "" {
			return keyValue{}, true
		}
		return keyValue{kind: kvString, s: x}, true
	case int:
		return keyValue{kind: kvInt, i: int64(x)}, true
	case int8:
		return keyValue{kind: kvInt, i: int64(x)}, true
	case int16:
		return keyValue{kind: kvInt, i: int64(x)}, true
	case int32:
		return keyValue{kind: kvInt, i: int64(x)}, true
	case int64:
		return keyValue{kind: kvInt, i: x}, true
	case uint:
		return keyValue{kind: kvUint, u: uint64(x)}, true
	case uint8:
		return keyValue{kind: kvUint, u: uint64(x)}, true
	case uint16:
		return keyValue{kind: kvUint, u: uint64(x)}, true
	case uint32:
		return keyValue{kind: kvUint, u: uint64(x)}, true
	case uint64:
		return keyValue{kind: kvUint, u: x}, true
	case time.Time:
		if x.IsZero() {
			return keyValue{}, true
		}
		return keyValue{kind: kvTime, t: x}, true
	}
	return keyValue{}, false
}

// Render renders the key from values keyed by placeholder name. Values may be
// strings, integers or time.Time; a missing, nil, "" or zero-time value is an error.
func (t *Template) Render(values map[string]any) (string, error) {
	return t.renderMap(values, false)
}

// Prefix renders the key up to the first missing value, including the literal text
// that follows the last value present, for use with begins_with: given
// "ORDER#{orderId}#ITEM#{itemId}" and only orderId 5 it returns "ORDER#5#ITEM#".
// With every value present it returns the whole key.
func (t *Template) Prefix(values map[string]any) (string, error) {
	return t.renderMap(values, true)
}

func (t *Template) renderMap(values map[string]any, prefix bool) (string, error) {
	var inline [4]keyValue
	vals := inline[:0]
	if len(t.names) > len(inline) {
		vals = make([]keyValue, 0, len(t.names))
	}
	for _, name := range t.names {
		kv, ok := keyValueOf(values[name])
		if !ok {
			return "", &KeyError{Field: name, Reason: "{" + name + "}: unsupported value of type " + reflect.TypeOf(values[name]).String()}
		}
		vals = append(vals, kv)
	}
	var buf [128]byte
	b, _, err := t.appendKey(buf[:0], vals, prefix)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendKey renders the template onto dst from vals, the value of each placeholder
// in order. With prefix set it stops at the first missing value and reports
// complete=false; otherwise a missing value is an error.
func (t *Template) appendKey(dst []byte, vals []keyValue, prefix bool) (out []byte, complete bool, err error) {
	pi := 0
	for si := range t.segs {
		s := &t.segs[si]
		if s.name == "" {
			dst = append(dst, s.literal...)
			continue
		}
		v := &vals[pi]
		pi++
		if v.kind == kvMissing {
			if prefix {
				return dst, false, nil
			}
			return dst, false, &KeyError{Field: s.name, Reason: "empty or missing value for {" + s.name + "} in " + strconv.Quote(t.text)}
		}
		dst, err = t.appendValueAt(dst, s, v)
		if err != nil {
			return dst, false, err
		}
	}
	return dst, true, nil
}

// valueError is the error of a value that cannot be rendered for placeholder s.
func valueError(s *segment, reason string) error {
	return &KeyError{Field: s.name, Reason: "{" + s.name + "}: " + reason}
}

func (t *Template) appendValue(dst []byte, s segment, v keyValue) ([]byte, error) {
	return t.appendValueAt(dst, &s, &v)
}

// appendValueAt appends one placeholder's value. On error the result is nil; callers
// drop it. (Nothing here captures dst, so a caller's stack buffer stays on the stack.)
func (t *Template) appendValueAt(dst []byte, s *segment, v *keyValue) ([]byte, error) {
	switch s.format {
	case fmtPlain:
		switch v.kind {
		case kvString:
			if !utf8.ValidString(v.s) {
				return nil, valueError(s, "value is not valid UTF-8")
			}
			if strings.IndexByte(v.s, t.delim) >= 0 {
				return nil, valueError(s, "value "+strconv.Quote(v.s)+" contains the delimiter "+strconv.QuoteRune(rune(t.delim)))
			}
			return append(dst, v.s...), nil
		case kvInt:
			if v.i < 0 && t.delim == '-' {
				return nil, valueError(s, "negative value contains the delimiter '-'")
			}
			return strconv.AppendInt(dst, v.i, 10), nil
		case kvUint:
			return strconv.AppendUint(dst, v.u, 10), nil
		case kvTime:
			return appendTime(dst, s, fmtTime, 0, &v.t)
		case kvBytes:
			return append(dst, v.s...), nil // alone in its template: no delimiter to keep out
		}
	case fmtPad:
		var u uint64
		switch v.kind {
		case kvInt:
			if v.i < 0 {
				return nil, valueError(s, "negative value "+strconv.FormatInt(v.i, 10)+" cannot be zero-padded")
			}
			u = uint64(v.i)
		case kvUint:
			u = v.u
		default:
			return nil, valueError(s, "zero padding needs an integer")
		}
		var digits [20]byte
		d := strconv.AppendUint(digits[:0], u, 10)
		if len(d) > s.width {
			return nil, valueError(s, "value "+string(d)+" is wider than "+strconv.Itoa(s.width)+" digits")
		}
		for range s.width - len(d) {
			dst = append(dst, '0')
		}
		return append(dst, d...), nil
	default:
		if v.kind != kvTime {
			return nil, valueError(s, "format needs a time.Time")
		}
		return appendTime(dst, s, s.format, s.width, &v.t)
	}
	return nil, valueError(s, "unsupported value")
}

// The range of times a key can hold, 0001-01-01 to 9999-12-31 UTC, in unix seconds.
const (
	minKeyUnix = -unixToTicks     // 0001-01-01T00:00:00Z
	maxKeyUnix = 253402300800 - 1 // 9999-12-31T23:59:59Z
	secsPerDay = 86400
	daysTo1970 = 719468 // days from 0000-03-01 to 1970-01-01, for civilDate
)

// appendTime appends t in format f (width digits for the numeric formats) for
// placeholder s.
func appendTime(dst []byte, s *segment, f keyFormat, width int, tp *time.Time) ([]byte, error) {
	sec := tp.Unix()
	if sec < minKeyUnix || sec > maxKeyUnix {
		return nil, valueError(s, "year "+strconv.Itoa(tp.UTC().Year())+" is outside 0001-9999")
	}
	switch f {
	case fmtTime:
		return appendFixedTime(dst, sec, tp.Nanosecond(), true), nil
	case fmtDate:
		return appendFixedTime(dst, sec, 0, false), nil
	}
	var n int64
	switch f {
	case fmtUnix:
		n = sec
	case fmtUnixMs:
		n = tp.UnixMilli()
	case fmtRev:
		n = maxTicks - ((sec+unixToTicks)*10_000_000 + int64(tp.Nanosecond()/100))
	}
	if n < 0 {
		return nil, valueError(s, "time "+tp.UTC().Format(time.RFC3339)+" is before 1970 and has no unix form")
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	if len(d) > width {
		return nil, valueError(s, "time "+tp.UTC().Format(time.RFC3339)+" does not fit in "+strconv.Itoa(width)+" digits")
	}
	for range width - len(d) {
		dst = append(dst, '0')
	}
	return append(dst, d...), nil
}

const twoDigits = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendFixedTime appends the UTC time sec (unix seconds within minKeyUnix to
// maxKeyUnix) and nsec as timeLayout, or as dateLayout when clock is false: the
// same bytes as time.Time.AppendFormat, without its layout interpreter.
func appendFixedTime(dst []byte, sec int64, nsec int, clock bool) []byte {
	days := sec / secsPerDay
	r := sec - days*secsPerDay
	if r < 0 {
		days, r = days-1, r+secsPerDay
	}
	rem := uint32(r)
	// The civil date, by Neri and Schneider's algorithm ("Euclidean affine
	// functions and their application to calendar algorithms", 2022), on days
	// counted from 0000-03-01 (years start in March, so leap days end them).
	n := uint32(days + daysTo1970)
	n1 := 4*n + 3
	century := n1 / 146097
	n2 := n1%146097 | 3
	p := 2939745 * uint64(n2)
	year := 100*century + uint32(p>>32)
	yday := uint32(p) / 2939745 / 4 // from March 1st
	n3 := 2141*yday + 197913
	month, day := n3>>16, (n3&0xffff)/2141+1
	if yday >= 306 { // January or February of the next year
		year, month = year+1, month-12
	}

	w := len(dateLayout)
	if clock {
		w = len(timeLayout)
	}
	at := len(dst)
	dst = slices.Grow(dst, w)[:at+w]
	b := dst[at : at+w]
	_ = b[len(dateLayout)-1]
	b[0], b[1] = twoDigits[2*(year/100)], twoDigits[2*(year/100)+1]
	b[2], b[3] = twoDigits[2*(year%100)], twoDigits[2*(year%100)+1]
	b[4] = '-'
	b[5], b[6] = twoDigits[2*month], twoDigits[2*month+1]
	b[7] = '-'
	b[8], b[9] = twoDigits[2*day], twoDigits[2*day+1]
	if !clock {
		return dst
	}
	_ = b[len(timeLayout)-1]
	h, m, s := rem/3600, rem/60%60, rem%60
	b[10] = 'T'
	b[11], b[12] = twoDigits[2*h], twoDigits[2*h+1]
	b[13] = ':'
	b[14], b[15] = twoDigits[2*m], twoDigits[2*m+1]
	b[16] = ':'
	b[17], b[18] = twoDigits[2*s], twoDigits[2*s+1]
	b[19] = '.'
	ns := uint32(nsec)
	d0, d1, d2, d3 := ns/10_000_000, ns/100_000%100, ns/1000%100, ns/10%100
	b[20], b[21] = twoDigits[2*d0], twoDigits[2*d0+1]
	b[22], b[23] = twoDigits[2*d1], twoDigits[2*d1+1]
	b[24], b[25] = twoDigits[2*d2], twoDigits[2*d2+1]
	b[26], b[27] = twoDigits[2*d3], twoDigits[2*d3+1]
	b[28] = byte('0' + ns%10)
	b[29] = 'Z'
	return dst
}

// plainPart reports whether s can be a plain key part as written: valid UTF-8
// without the delimiter. ASCII is checked eight bytes at a time.
func plainPart(s string, delim byte) bool {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == delim || c >= utf8.RuneSelf {
				return utf8.ValidString(s) && strings.IndexByte(s, delim) < 0
			}
		}
		return true
	}
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	d := lo * uint64(delim)
	ok := func(x uint64) bool {
		y := x ^ d
		return x&hi == 0 && (y-lo)&^y&hi == 0 // ASCII, and no zero byte in y (the delimiter in x)
	}
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !ok(load64(s[i:])) {
			return utf8.ValidString(s) && strings.IndexByte(s, delim) < 0
		}
	}
	if i < len(s) && !ok(load64(s[len(s)-8:])) { // the last 8 bytes, overlapping
		return utf8.ValidString(s) && strings.IndexByte(s, delim) < 0
	}
	return true
}

// load64 reads the first 8 bytes of s, little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Extract parses a rendered key back into its placeholder values: zero-padded
// placeholders as int64 (uint64 when too large), time formats as time.Time in UTC,
// plain placeholders as strings (the caller converts them to the field's type).
// A key that this template could not have rendered is an error.
func (t *Template) Extract(key string) (map[string]any, error) {
	out := make(map[string]any, len(t.names))
	err := t.extract(key, func(name, raw string, f keyFormat) error {
		v, err := parseKeyValue(raw, f)
		if err != nil {
			return err
		}
		out[name] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// extract walks key against the template, calling set with each placeholder's raw text.
func (t *Template) extract(key string, set func(name, raw string, f keyFormat) error) error {
	fail := func(reason string) error {
		return &KeyError{Reason: "key " + strconv.Quote(key) + " does not match " + strconv.Quote(t.text) + ": " + reason}
	}
	pos := 0
	for i, s := range t.segs {
		if s.name == "" {
			if !strings.HasPrefix(key[pos:], s.literal) {
				return fail("expected " + strconv.Quote(s.literal) + " at byte " + strconv.Itoa(pos))
			}
			pos += len(s.literal)
			continue
		}
		var raw string
		switch {
		case s.width > 0:
			if len(key)-pos < s.width {
				return fail("{" + s.name + "} is shorter than " + strconv.Itoa(s.width) + " bytes")
			}
			raw = key[pos : pos+s.width]
		case i == len(t.segs)-1:
			raw = key[pos:]
			if strings.IndexByte(raw, t.delim) >= 0 {
				return fail("{" + s.name + "} contains the delimiter")
			}
		default:
			end := strings.IndexByte(key[pos:], t.delim)
			if end < 0 {
				return fail("no delimiter after {" + s.name + "}")
			}
			raw = key[pos : pos+end]
		}
		if raw == "" {
			return fail("{" + s.name + "} is empty")
		}
		if err := set(s.name, raw, s.format); err != nil {
			return fail("{" + s.name + "}: " + err.Error())
		}
		pos += len(raw)
	}
	if pos != len(key) {
		return fail("unexpected text after byte " + strconv.Itoa(pos))
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseKeyValue converts the raw text of a placeholder into a value.
func parseKeyValue(raw string, f keyFormat) (any, error) {
	switch f {
	case fmtPlain:
		if !utf8.ValidString(raw) {
			return nil, &KeyError{Reason: "not valid UTF-8"}
		}
		return raw, nil
	case fmtPad:
		if !allDigits(raw) {
			return nil, &KeyError{Reason: strconv.Quote(raw) + " is not a zero-padded number"}
		}
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return n, nil
		}
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, &KeyError{Reason: strconv.Quote(raw) + " is out of range"}
		}
		return n, nil
	}
	return parseKeyTime(raw, f)
}

func parseKeyTime(raw string, f keyFormat) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, &KeyError{Reason: strconv.Quote(raw) + " is not a valid " + formatName(f)}
	}
	switch f {
	case fmtTime, fmtDate:
		layout := timeLayout
		if f == fmtDate {
			layout = dateLayout
		}
		tm, err := time.Parse(layout, raw)
		if err != nil || len(raw) != len(layout) {
			return bad()
		}
		return tm.UTC(), nil
	}
	if !allDigits(raw) {
		return bad()
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return bad()
	}
	switch f {
	case fmtUnix:
		return time.Unix(n, 0).UTC(), nil
	case fmtUnixMs:
		return time.UnixMilli(n).UTC(), nil
	case fmtRev:
		if n > maxTicks {
			return bad()
		}
		ticks := maxTicks - n
		return time.Unix(ticks/10_000_000-unixToTicks, (ticks%10_000_000)*100).UTC(), nil
	}
	return bad()
}

func formatName(f keyFormat) string {
	for n, v := range formatNames {
		if v == f {
			return n
		}
	}
	return "key part"
}
