package codec

import (
	"unicode"
	"unicode/utf8"
)

// attributevalue decodes an attribute into the field whose name equals the attribute name, else into the
// first field (in field order) whose name is equal under strings.EqualFold. EqualFold equates two strings
// when they have the same number of runes and each pair of runes is in one simple case-folding orbit, so
// mapping every rune to the smallest rune of its orbit gives a key that is equal exactly when EqualFold is
// true. An invalid UTF-8 byte counts as utf8.RuneError in both.

// foldKey returns the case-folding key of s.
func foldKey(s string) string {
	if k, ok := foldKeyASCII(s, make([]byte, 0, len(s))); ok {
		return string(k)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = utf8.AppendRune(b, foldRune(r))
	}
	return string(b)
}

// foldKeyASCII appends the key of s to dst when s is all ASCII. For ASCII letters the smallest rune of the
// orbit is the upper-case letter ('K' < 'k' < U+212A KELVIN SIGN, 'S' < 's' < U+017F LONG S).
func foldKeyASCII(s string, dst []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return dst, false
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// foldRune returns the smallest rune in r's simple case-folding orbit.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

// lookupFold finds the field for attribute name s by case-insensitive match, without allocating for an
// ASCII name of up to 64 bytes.
func (p *Plan) lookupFold(s string) (*Field, bool) {
	if len(p.byFold) == 0 {
		return nil, false
	}
	var buf [64]byte
	if len(s) <= len(buf) {
		if k, ok := foldKeyASCII(s, buf[:0]); ok {
			f, ok := p.byFold[string(k)]
			return f, ok
		}
	}
	f, ok := p.byFold[foldKey(s)]
	return f, ok
}
