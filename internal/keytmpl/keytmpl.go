// Package keytmpl is the key template language behind the root package's
// Template: parsing "ORDER#{createdAt:time}#{orderId}" into literal text and
// placeholders, rendering keys from placeholder values (from a map, from a
// struct field through reflect, or straight from a struct's memory by offset),
// and extracting the values back from a rendered key.
//
// Its errors are *Error values, which the root package turns into its public
// *KeyError (with the same text) at its boundary.
package keytmpl

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format is how a placeholder's value is written into a key.
type Format uint8

// The formats of a placeholder.
const (
	Plain  Format = iota // strings as they are, integers in decimal, times as Time
	Pad                  // {n:08}: non-negative integer, zero-padded to a fixed width
	Time                 // {t:time}: UTC, 2006-01-02T15:04:05.000000000Z, 30 bytes
	Date                 // {t:date}: UTC, 2006-01-02, 10 bytes
	Unix                 // {t:unix}: unix seconds, 10 digits
	UnixMs               // {t:unixms}: unix milliseconds, 13 digits
	Rev                  // {t:rev}: 3155378975999999999 minus 100 ns ticks since 0001-01-01 UTC, 19 digits
)

// The layouts of the Time and Date formats.
const (
	TimeLayout = "2006-01-02T15:04:05.000000000Z"
	DateLayout = "2006-01-02"
)

const (
	// maxTicks is .NET's DateTime.MaxValue.Ticks (9999-12-31T23:59:59.9999999Z), the
	// "judgement day" of the reverse-time feed pattern.
	maxTicks = 3155378975999999999
	// unixToTicks is the number of seconds from 0001-01-01 to 1970-01-01.
	unixToTicks = 62135596800
)

var formatNames = map[string]Format{
	"time": Time, "date": Date, "unix": Unix, "unixms": UnixMs, "rev": Rev,
}

// FixedWidth is the rendered width of a format, or 0 when it varies.
func (f Format) FixedWidth() int {
	switch f {
	case Time:
		return len(TimeLayout)
	case Date:
		return len(DateLayout)
	case Unix:
		return 10
	case UnixMs:
		return 13
	case Rev:
		return 19
	}
	return 0
}

// IsTime reports whether f is one of the time formats.
func (f Format) IsTime() bool { return f >= Time }

// Name is the format's name in a template ("time", "unixms"), or "key part" for
// the plain and padded formats.
func (f Format) Name() string {
	for n, v := range formatNames {
		if v == f {
			return n
		}
	}
	return "key part"
}

// Seg is literal text (Name == "") or one placeholder.
type Seg struct {
	Literal string
	Name    string
	Format  Format
	Width   int // fixed rendered width; 0 when the width varies
}

// Template is a parsed key template: its text, the delimiter, its segments and
// its placeholder names in order. It is not changed after registration binds it
// (which may give a plain time placeholder the Time format), and is then safe for
// concurrent use.
type Template struct {
	Text  string
	Delim byte
	Segs  []Seg
	Names []string
}

// Error is an invalid key or template: the placeholder (or field) at fault, if
// any, and why. Its text is that of the root package's KeyError without entity.
type Error struct {
	Field  string
	Reason string
}

// Error says "singletable: invalid key (field F): reason".
func (e *Error) Error() string {
	s := "singletable: invalid key"
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s + ": " + e.Reason
}

// Parse parses a key template with the delimiter (see CheckDelimiter).
func Parse(text string, delimiter byte) (*Template, error) {
	if err := CheckDelimiter(delimiter); err != nil {
		return nil, err
	}
	t := &Template{Text: text, Delim: delimiter}
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
			t.Segs = append(t.Segs, Seg{Literal: rest})
			break
		}
		if rest[open] == '}' {
			return nil, templateError(text, "unexpected '}'")
		}
		if open > 0 {
			t.Segs = append(t.Segs, Seg{Literal: rest[:open]})
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
		seg := Seg{Name: name}
		if hasSpec {
			f, w, err := parseSpec(spec)
			if err != nil {
				return nil, templateError(text, "placeholder {"+name+"}: "+err.Error())
			}
			seg.Format, seg.Width = f, w
		}
		t.Segs = append(t.Segs, seg)
		t.Names = append(t.Names, name)
	}
	// A variable-width placeholder must end the template or be followed by literal
	// text that starts with the delimiter, so a parser knows where its value ends.
	for i, s := range t.Segs {
		if s.Name == "" || s.Width > 0 || i == len(t.Segs)-1 {
			continue
		}
		next := t.Segs[i+1]
		if next.Name != "" || next.Literal[0] != delimiter {
			return nil, templateError(text, "placeholder {"+s.Name+"} has a variable width and must be followed by the delimiter "+strconv.QuoteRune(rune(delimiter))+" or end the template")
		}
	}
	return t, nil
}

// CheckDelimiter refuses a delimiter that is not ASCII punctuation other than
// '{', '}' and ':'.
func CheckDelimiter(d byte) error {
	if d > 0x7e || d <= ' ' || d == '{' || d == '}' || d == ':' ||
		('0' <= d && d <= '9') || ('a' <= d && d <= 'z') || ('A' <= d && d <= 'Z') {
		return &Error{Reason: "delimiter " + strconv.QuoteRune(rune(d)) + " must be ASCII punctuation other than '{', '}' and ':'"}
	}
	return nil
}

func parseSpec(spec string) (Format, int, error) {
	if f, ok := formatNames[spec]; ok {
		return f, f.FixedWidth(), nil
	}
	if len(spec) >= 2 && spec[0] == '0' {
		w, err := strconv.Atoi(spec[1:])
		if err == nil && w >= 1 && w <= 20 && strings.TrimLeft(spec[1:], "0123456789") == "" {
			return Pad, w, nil
		}
	}
	return 0, 0, &Error{Reason: "unknown format " + strconv.Quote(spec) + " (want 0N for zero padding, time, date, unix, unixms or rev)"}
}

func templateError(text, reason string) error {
	return &Error{Reason: "template " + strconv.Quote(text) + ": " + reason}
}

// StaticPrefix returns the literal text before the first placeholder (the whole
// template when it has none).
func (t *Template) StaticPrefix() string {
	if len(t.Segs) > 0 && t.Segs[0].Name == "" {
		return t.Segs[0].Literal
	}
	return ""
}
