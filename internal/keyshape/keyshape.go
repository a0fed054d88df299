// Package keyshape splits key templates into literal text and placeholders and
// answers what the parts imply: a template's shape, its static prefix, whether
// its keys can begin with a given text, whether one template's keys continue
// another's. The root package's registration and the design package both read
// templates through it, so each rule is written once.
//
// Templates are taken as already checked (by the root package's ParseTemplate);
// text that is not a valid template is split as well as it goes, never with a
// panic.
package keyshape

import (
	"strconv"
	"strings"
)

// Kind is the kind of a placeholder's input: how its value is written into a key.
type Kind string

// The kinds of placeholder input; "" is any other.
const (
	String Kind = "string"
	Int    Kind = "int"
	Uint   Kind = "uint"
	Time   Kind = "time"
)

// Template is a key template split into parts.
type Template struct {
	Text  string
	Parts []Part
}

// Part is literal text or one placeholder.
type Part struct {
	Placeholder bool
	Literal     string // the text of a literal part
	Name        string // the placeholder's attribute
	Text        string // the placeholder as written, e.g. "{createdAt:rev}"
	Format      string // "" (plain), "time", "date", "unix", "unixms", "rev", or "0N": zero-padded to N digits; a plain time is "time"
	Kind        Kind   // the kind of the placeholder's input
}

// FixedWidth reports whether a placeholder renders at a fixed width: every
// format but the plain one does.
func (p Part) FixedWidth() bool { return p.Format != "" }

// Parse splits a template into its parts; kinds gives each placeholder's input kind.
func Parse(text string, kinds map[string]Kind) *Template {
	t := &Template{Text: text}
	for rest := text; rest != ""; {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			t.Parts = append(t.Parts, Part{Literal: rest})
			break
		}
		if i > 0 {
			t.Parts = append(t.Parts, Part{Literal: rest[:i]})
		}
		name, spec, _ := strings.Cut(rest[i+1:j], ":")
		p := Part{Placeholder: true, Name: name, Text: rest[i : j+1], Format: canonicalFormat(spec), Kind: kinds[name]}
		if p.Format == "" && p.Kind == Time {
			p.Format = "time" // a plain time placeholder takes the time format
		}
		t.Parts = append(t.Parts, p)
		rest = rest[j+1:]
	}
	return t
}

// canonicalFormat writes a zero padding one way ("008" and "08" are both "08").
func canonicalFormat(spec string) string {
	if len(spec) >= 2 && spec[0] == '0' {
		if n, err := strconv.Atoi(spec[1:]); err == nil {
			return "0" + strconv.Itoa(n)
		}
	}
	return spec
}

// StaticPrefix returns the literal text before the first placeholder (the whole
// template when it has none).
func (t *Template) StaticPrefix() string {
	if len(t.Parts) > 0 && !t.Parts[0].Placeholder {
		return t.Parts[0].Literal
	}
	return ""
}

// Names returns the set of the template's placeholder names.
func (t *Template) Names() map[string]bool {
	out := map[string]bool{}
	for _, p := range t.Parts {
		if p.Placeholder {
			out[p.Name] = true
		}
	}
	return out
}

// Shape identifies a template's shape: literals and formats in place,
// placeholder names ignored. Entities whose partition key templates share a
// shape share partitions (an item collection).
func (t *Template) Shape() string {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Placeholder {
			b.WriteString("P" + strconv.Quote(p.Format))
		} else {
			b.WriteString("L" + strconv.Quote(p.Literal))
		}
	}
	return b.String()
}

// sameSegment compares parts as Shape does: placeholder names aside.
func sameSegment(a, b Part) bool {
	return a.Placeholder == b.Placeholder && a.Literal == b.Literal && a.Format == b.Format
}

// TextOf joins the written text of parts.
func TextOf(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Placeholder {
			b.WriteString(p.Text)
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// ContinuesTree reports whether every key of child's shape continues a key of
// parent's shape after the delimiter, as SKTree reads them.
func ContinuesTree(parent, child *Template, delim byte) bool {
	ps, cs := parent.Parts, child.Parts
	if len(ps) == 0 || len(cs) < len(ps) {
		return false
	}
	for i := range len(ps) - 1 {
		if !sameSegment(ps[i], cs[i]) {
			return false
		}
	}
	last, at := ps[len(ps)-1], cs[len(ps)-1]
	if !last.Placeholder {
		return !at.Placeholder && len(at.Literal) > len(last.Literal) &&
			strings.HasPrefix(at.Literal, last.Literal) && at.Literal[len(last.Literal)] == delim
	}
	if !at.Placeholder || at.Format != last.Format || len(cs) == len(ps) {
		return false
	}
	next := cs[len(ps)]
	return !next.Placeholder && strings.HasPrefix(next.Literal, string(delim))
}

// Overlap says whether a template's keys can begin with a text.
type Overlap uint8

// The answers of [Template.MayBeginWith].
const (
	None  Overlap = iota // no key can
	Maybe                // some keys can, depending on the values
	Sure                 // every key does
)

// MayBeginWith reports whether keys rendered from t can begin with prefix.
func (t *Template) MayBeginWith(prefix string, delim byte) Overlap {
	rest := prefix
	for _, p := range t.Parts {
		if rest == "" {
			return Sure
		}
		if !p.Placeholder {
			switch {
			case strings.HasPrefix(rest, p.Literal):
				rest = rest[len(p.Literal):]
				continue
			case strings.HasPrefix(p.Literal, rest):
				return Sure
			}
			return None
		}
		c := rest[0]
		digit := '0' <= c && c <= '9'
		switch {
		case p.Format != "" || p.Kind == Time || p.Kind == Uint:
			if !digit {
				return None
			}
		case p.Kind == Int:
			if !digit && c != '-' {
				return None
			}
		case c == delim:
			return None
		}
		return Maybe
	}
	if rest == "" {
		return Sure
	}
	return None
}
