package singletable

import (
	"reflect"
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
	for _, name := range t.names {
		if _, ok := keyValueOf(values[name]); !ok {
			return "", &KeyError{Field: name, Reason: "{" + name + "}: unsupported value of type " + reflect.TypeOf(values[name]).String()}
		}
	}
	var buf [128]byte
	b, _, err := t.appendKey(buf[:0], func(i int, name string) keyValue {
		kv, _ := keyValueOf(values[name])
		return kv
	}, prefix)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendKey renders the template onto dst, asking get for the value of the i-th
// placeholder. With prefix set it stops at the first missing value and reports
// complete=false; otherwise a missing value is an error.
func (t *Template) appendKey(dst []byte, get func(i int, name string) keyValue, prefix bool) (out []byte, complete bool, err error) {
	pi := 0
	for _, s := range t.segs {
		if s.name == "" {
			dst = append(dst, s.literal...)
			continue
		}
		v := get(pi, s.name)
		pi++
		if v.kind == kvMissing {
			if prefix {
				return dst, false, nil
			}
			return dst, false, &KeyError{Field: s.name, Reason: "empty or missing value for {" + s.name + "} in " + strconv.Quote(t.text)}
		}
		dst, err = t.appendValue(dst, s, v)
		if err != nil {
			return dst, false, err
		}
	}
	return dst, true, nil
}

func (t *Template) appendValue(dst []byte, s segment, v keyValue) ([]byte, error) {
	fail := func(reason string) ([]byte, error) {
		return dst, &KeyError{Field: s.name, Reason: "{" + s.name + "}: " + reason}
	}
	switch s.format {
	case fmtPlain:
		switch v.kind {
		case kvString:
			if !utf8.ValidString(v.s) {
				return fail("value is not valid UTF-8")
			}
			if strings.IndexByte(v.s, t.delim) >= 0 {
				return fail("value " + strconv.Quote(v.s) + " contains the delimiter " + strconv.QuoteRune(rune(t.delim)))
			}
			return append(dst, v.s...), nil
		case kvInt:
			if v.i < 0 && t.delim == '-' {
				return fail("negative value contains the delimiter '-'")
			}
			return strconv.AppendInt(dst, v.i, 10), nil
		case kvUint:
			return strconv.AppendUint(dst, v.u, 10), nil
		case kvTime:
			return appendTime(dst, fmtTime, 0, v.t, fail)
		}
	case fmtPad:
		var u uint64
		switch v.kind {
		case kvInt:
			if v.i < 0 {
				return fail("negative value " + strconv.FormatInt(v.i, 10) + " cannot be zero-padded")
			}
			u = uint64(v.i)
		case kvUint:
			u = v.u
		default:
			return fail("zero padding needs an integer")
		}
		var digits [20]byte
		d := strconv.AppendUint(digits[:0], u, 10)
		if len(d) > s.width {
			return fail("value " + string(d) + " is wider than " + strconv.Itoa(s.width) + " digits")
		}
		for range s.width - len(d) {
			dst = append(dst, '0')
		}
		return append(dst, d...), nil
	default:
		if v.kind != kvTime {
			return fail("format needs a time.Time")
		}
		return appendTime(dst, s.format, s.width, v.t, fail)
	}
	return fail("unsupported value")
}

func appendTime(dst []byte, f keyFormat, width int, t time.Time, fail func(string) ([]byte, error)) ([]byte, error) {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return fail("year " + strconv.Itoa(y) + " is outside 0001-9999")
	}
	switch f {
	case fmtTime:
		return t.AppendFormat(dst, timeLayout), nil
	case fmtDate:
		return t.AppendFormat(dst, dateLayout), nil
	}
	var n int64
	switch f {
	case fmtUnix:
		n = t.Unix()
	case fmtUnixMs:
		n = t.UnixMilli()
	case fmtRev:
		n = maxTicks - ((t.Unix()+unixToTicks)*10_000_000 + int64(t.Nanosecond()/100))
	}
	if n < 0 {
		return fail("time " + t.Format(time.RFC3339) + " is before 1970 and has no unix form")
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	if len(d) > width {
		return fail("time " + t.Format(time.RFC3339) + " does not fit in " + strconv.Itoa(width) + " digits")
	}
	for range width - len(d) {
		dst = append(dst, '0')
	}
	return append(dst, d...), nil
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
