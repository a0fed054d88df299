package keytmpl

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Extract parses a rendered key back into its placeholder values: zero-padded
// placeholders as int64 (uint64 when too large), time formats as time.Time in UTC,
// plain placeholders as strings. A key that this template could not have rendered
// is an error.
func (t *Template) Extract(key string) (map[string]any, error) {
	out := make(map[string]any, len(t.Names))
	err := t.Walk(key, func(name, raw string, f Format) error {
		v, err := ParseValue(raw, f)
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

// Walk walks key against the template, calling set with each placeholder's raw
// text. An error of set is reported, in an *Error about the key, by its text.
func (t *Template) Walk(key string, set func(name, raw string, f Format) error) error {
	fail := func(reason string) error {
		return &Error{Reason: "key " + strconv.Quote(key) + " does not match " + strconv.Quote(t.Text) + ": " + reason}
	}
	pos := 0
	for i, s := range t.Segs {
		if s.Name == "" {
			if !strings.HasPrefix(key[pos:], s.Literal) {
				return fail("expected " + strconv.Quote(s.Literal) + " at byte " + strconv.Itoa(pos))
			}
			pos += len(s.Literal)
			continue
		}
		var raw string
		switch {
		case s.Width > 0:
			if len(key)-pos < s.Width {
				return fail("{" + s.Name + "} is shorter than " + strconv.Itoa(s.Width) + " bytes")
			}
			raw = key[pos : pos+s.Width]
		case i == len(t.Segs)-1:
			raw = key[pos:]
			if strings.IndexByte(raw, t.Delim) >= 0 {
				return fail("{" + s.Name + "} contains the delimiter")
			}
		default:
			end := strings.IndexByte(key[pos:], t.Delim)
			if end < 0 {
				return fail("no delimiter after {" + s.Name + "}")
			}
			raw = key[pos : pos+end]
		}
		if raw == "" {
			return fail("{" + s.Name + "} is empty")
		}
		if err := set(s.Name, raw, s.Format); err != nil {
			return fail("{" + s.Name + "}: " + err.Error())
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

// ParseValue converts the raw text of a placeholder of format f into a value:
// a string (Plain), an int64 or uint64 (Pad), a time.Time in UTC (the time formats).
func ParseValue(raw string, f Format) (any, error) {
	switch f {
	case Plain:
		if !utf8.ValidString(raw) {
			return nil, &Error{Reason: "not valid UTF-8"}
		}
		return raw, nil
	case Pad:
		if !allDigits(raw) {
			return nil, &Error{Reason: strconv.Quote(raw) + " is not a zero-padded number"}
		}
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return n, nil
		}
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, &Error{Reason: strconv.Quote(raw) + " is out of range"}
		}
		return n, nil
	}
	return parseTime(raw, f)
}

func parseTime(raw string, f Format) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, &Error{Reason: strconv.Quote(raw) + " is not a valid " + f.Name()}
	}
	switch f {
	case Time, Date:
		layout := TimeLayout
		if f == Date {
			layout = DateLayout
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
	case Unix:
		return time.Unix(n, 0).UTC(), nil
	case UnixMs:
		return time.UnixMilli(n).UTC(), nil
	case Rev:
		if n > maxTicks {
			return bad()
		}
		ticks := maxTicks - n
		return time.Unix(ticks/10_000_000-unixToTicks, (ticks%10_000_000)*100).UTC(), nil
	}
	return bad()
}
