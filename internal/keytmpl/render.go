package keytmpl

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Value is one placeholder input, taken from a struct field or a map.
type Value struct {
	Kind Kind
	S    string // a string's text, or a []byte's bytes
	I    int64
	U    uint64
	T    time.Time
}

// Kind is the kind of a placeholder input.
type Kind uint8

// The kinds of placeholder input; KindMissing is an input that is not there.
// Their values are part of the stored data's layout (the root's shard.go hashes
// them into the shard of an item): never renumber them.
const (
	KindMissing Kind = iota
	KindString
	KindInt
	KindUint
	KindTime
	KindBytes // a []byte, only in a binary key's template (the root's keytypes.go)
)

// ValueOf converts a value given to the map-based Template methods; ok is false
// for a type a key cannot hold.
func ValueOf(v any) (Value, bool) {
	switch x := v.(type) {
	case nil:
		return Value{}, true
	case string:
		if x == "" {
			return Value{}, true
		}
		return Value{Kind: KindString, S: x}, true
	case int:
		return Value{Kind: KindInt, I: int64(x)}, true
	case int8:
		return Value{Kind: KindInt, I: int64(x)}, true
	case int16:
		return Value{Kind: KindInt, I: int64(x)}, true
	case int32:
		return Value{Kind: KindInt, I: int64(x)}, true
	case int64:
		return Value{Kind: KindInt, I: x}, true
	case uint:
		return Value{Kind: KindUint, U: uint64(x)}, true
	case uint8:
		return Value{Kind: KindUint, U: uint64(x)}, true
	case uint16:
		return Value{Kind: KindUint, U: uint64(x)}, true
	case uint32:
		return Value{Kind: KindUint, U: uint64(x)}, true
	case uint64:
		return Value{Kind: KindUint, U: x}, true
	case time.Time:
		if x.IsZero() {
			return Value{}, true
		}
		return Value{Kind: KindTime, T: x}, true
	}
	return Value{}, false
}

// RenderMap renders the key from values keyed by placeholder name; with prefix
// set, up to the first missing value (see the root's Template.Prefix).
func (t *Template) RenderMap(values map[string]any, prefix bool) (string, error) {
	var inline [4]Value
	vals := inline[:0]
	if len(t.Names) > len(inline) {
		vals = make([]Value, 0, len(t.Names))
	}
	for _, name := range t.Names {
		kv, ok := ValueOf(values[name])
		if !ok {
			return "", &Error{Field: name, Reason: "{" + name + "}: unsupported value of type " + reflect.TypeOf(values[name]).String()}
		}
		vals = append(vals, kv)
	}
	var buf [128]byte
	b, _, err := t.AppendKey(buf[:0], vals, prefix)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendKey renders the template onto dst from vals, the value of each placeholder
// in order. With prefix set it stops at the first missing value and reports
// complete=false; otherwise a missing value is an error.
func (t *Template) AppendKey(dst []byte, vals []Value, prefix bool) (out []byte, complete bool, err error) {
	pi := 0
	for si := range t.Segs {
		s := &t.Segs[si]
		if s.Name == "" {
			dst = append(dst, s.Literal...)
			continue
		}
		v := &vals[pi]
		pi++
		if v.Kind == KindMissing {
			if prefix {
				return dst, false, nil
			}
			return dst, false, &Error{Field: s.Name, Reason: "empty or missing value for {" + s.Name + "} in " + strconv.Quote(t.Text)}
		}
		dst, err = t.AppendValueAt(dst, s, v)
		if err != nil {
			return dst, false, err
		}
	}
	return dst, true, nil
}

// valueError is the error of a value that cannot be rendered for placeholder s.
func valueError(s *Seg, reason string) error {
	return &Error{Field: s.Name, Reason: "{" + s.Name + "}: " + reason}
}

// AppendValue is AppendValueAt taking its arguments by value.
func (t *Template) AppendValue(dst []byte, s Seg, v Value) ([]byte, error) {
	return t.AppendValueAt(dst, &s, &v)
}

// AppendValueAt appends one placeholder's value. On error the result is nil; callers
// drop it. (Nothing here captures dst, so a caller's stack buffer stays on the stack.)
func (t *Template) AppendValueAt(dst []byte, s *Seg, v *Value) ([]byte, error) {
	switch s.Format {
	case Plain:
		switch v.Kind {
		case KindString:
			if !utf8.ValidString(v.S) {
				return nil, valueError(s, "value is not valid UTF-8")
			}
			if strings.IndexByte(v.S, t.Delim) >= 0 {
				return nil, valueError(s, "value "+strconv.Quote(v.S)+" contains the delimiter "+strconv.QuoteRune(rune(t.Delim)))
			}
			return append(dst, v.S...), nil
		case KindInt:
			if v.I < 0 && t.Delim == '-' {
				return nil, valueError(s, "negative value contains the delimiter '-'")
			}
			return strconv.AppendInt(dst, v.I, 10), nil
		case KindUint:
			return strconv.AppendUint(dst, v.U, 10), nil
		case KindTime:
			return appendTime(dst, s, Time, 0, &v.T)
		case KindBytes:
			return append(dst, v.S...), nil // alone in its template: no delimiter to keep out
		}
	case Pad:
		var u uint64
		switch v.Kind {
		case KindInt:
			if v.I < 0 {
				return nil, valueError(s, "negative value "+strconv.FormatInt(v.I, 10)+" cannot be zero-padded")
			}
			u = uint64(v.I)
		case KindUint:
			u = v.U
		default:
			return nil, valueError(s, "zero padding needs an integer")
		}
		var digits [20]byte
		d := strconv.AppendUint(digits[:0], u, 10)
		if len(d) > s.Width {
			return nil, valueError(s, "value "+string(d)+" is wider than "+strconv.Itoa(s.Width)+" digits")
		}
		for range s.Width - len(d) {
			dst = append(dst, '0')
		}
		return append(dst, d...), nil
	default:
		if v.Kind != KindTime {
			return nil, valueError(s, "format needs a time.Time")
		}
		return appendTime(dst, s, s.Format, s.Width, &v.T)
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
func appendTime(dst []byte, s *Seg, f Format, width int, tp *time.Time) ([]byte, error) {
	sec := tp.Unix()
	if sec < minKeyUnix || sec > maxKeyUnix {
		return nil, valueError(s, "year "+strconv.Itoa(tp.UTC().Year())+" is outside 0001-9999")
	}
	switch f {
	case Time:
		return appendFixedTime(dst, sec, tp.Nanosecond(), true), nil
	case Date:
		return appendFixedTime(dst, sec, 0, false), nil
	}
	var n int64
	switch f {
	case Unix:
		n = sec
	case UnixMs:
		n = tp.UnixMilli()
	case Rev:
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
// maxKeyUnix) and nsec as TimeLayout, or as DateLayout when clock is false: the
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

	w := len(DateLayout)
	if clock {
		w = len(TimeLayout)
	}
	at := len(dst)
	dst = slices.Grow(dst, w)[:at+w]
	b := dst[at : at+w]
	_ = b[len(DateLayout)-1]
	b[0], b[1] = twoDigits[2*(year/100)], twoDigits[2*(year/100)+1]
	b[2], b[3] = twoDigits[2*(year%100)], twoDigits[2*(year%100)+1]
	b[4] = '-'
	b[5], b[6] = twoDigits[2*month], twoDigits[2*month+1]
	b[7] = '-'
	b[8], b[9] = twoDigits[2*day], twoDigits[2*day+1]
	if !clock {
		return dst
	}
	_ = b[len(TimeLayout)-1]
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
