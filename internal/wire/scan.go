package wire

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner reads JSON from a []byte by hand, at least as strictly as the SDK's own parser
// (smithy-go's transport/http/protocol/internal/json): the same whitespace, the same string rules
// (no control characters, only the escapes \" \\ \/ \b \f \n \r \t \uXXXX), the same number grammar.
// Whatever it refuses, the SDK's path reads instead, so refusing more than the SDK is safe and
// accepting more would not be: the scanner must never accept what the SDK rejects.

// errSyntax means the body is not JSON as this package reads it: the whole response goes the SDK's way.
var errSyntax = errors.New("wire: malformed or unexpected JSON")

// maxDepth bounds nesting: DynamoDB nests attribute values 32 levels deep at most, each level two JSON
// objects or arrays. Deeper input is refused (and read by the SDK), which keeps recursion bounded.
const maxDepth = 160

// scanner is a position in a body.
type scanner struct {
	b []byte
	i int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ws skips whitespace and returns the next byte, or 0 at the end.
func (s *scanner) ws() byte {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !isSpace(c) {
			return c
		}
		s.i++
	}
	return 0
}

// expect skips whitespace and consumes c.
func (s *scanner) expect(c byte) bool {
	if s.ws() != c {
		return false
	}
	s.i++
	return true
}

const (
	swarLo = uint64(0x0101010101010101)
	swarHi = uint64(0x8080808080808080)
)

// swarSpecial reports, per byte of v, whether it is '"', '\\' or a control character.
func swarSpecial(v uint64) uint64 {
	quote := v ^ (swarLo * '"')
	slash := v ^ (swarLo * '\\')
	return ((v-swarLo*0x20) & ^v | (quote-swarLo) & ^quote | (slash-swarLo) & ^slash) & swarHi
}

// str scans a string whose opening quote is at s.i and returns the offsets of its contents (between the
// quotes) and whether it holds escapes. It checks the escapes as the SDK's parser does.
func (s *scanner) str() (start, end int, escaped bool, err error) {
	b := s.b
	i := s.i + 1
	start = i
	for {
		for i+8 <= len(b) {
			if m := swarSpecial(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3 // the first special byte
				break
			}
			i += 8
		}
		if i >= len(b) {
			return 0, 0, false, errSyntax
		}
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return start, i, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, 0, false, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, 0, false, errSyntax
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return 0, 0, false, errSyntax
					}
				}
				i += 6
			default:
				return 0, 0, false, errSyntax
			}
		case c < 0x20:
			return 0, 0, false, errSyntax
		default:
			i++
		}
	}
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// number scans a JSON number at s.i, with the SDK parser's grammar.
func (s *scanner) number() (start, end int, err error) {
	b := s.b
	i := s.i
	start = i
	if i < len(b) && b[i] == '-' {
		i++
	}
	d := i
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	if i == d || (b[d] == '0' && i-d > 1) {
		return 0, 0, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		d = i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, 0, errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d = i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, 0, errSyntax
		}
	}
	s.i = i
	return start, i, nil
}

// literal consumes lit (true, false, null) at s.i.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// skip scans one JSON value after whitespace, checking it, and leaves s.i after it.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	switch s.ws() {
	case '"':
		_, _, _, err := s.str()
		return err
	case '{':
		s.i++
		if s.ws() == '}' {
			s.i++
			return nil
		}
		for {
			if s.ws() != '"' {
				return errSyntax
			}
			if _, _, _, err := s.str(); err != nil {
				return err
			}
			if !s.expect(':') {
				return errSyntax
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.ws() {
			case ',':
				s.i++
			case '}':
				s.i++
				return nil
			default:
				return errSyntax
			}
		}
	case '[':
		s.i++
		if s.ws() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.ws() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return errSyntax
			}
		}
	case 't':
		if s.literal("true") {
			return nil
		}
	case 'f':
		if s.literal("false") {
			return nil
		}
	case 'n':
		if s.literal("null") {
			return nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, _, err := s.number()
		return err
	}
	return errSyntax
}

// unquote appends to dst the text of the string contents s (between the quotes, escapes checked by str)
// as the SDK decodes a string with escapes: encoding/json's unquoteBytes (copied into smithy-go as
// stdlib.UnquoteBytes), whose rules are reproduced here. Invalid UTF-8 and unpaired surrogates become
// U+FFFD. ok is false where that function fails (it cannot, for input str accepted).
func unquote(dst, s []byte) ([]byte, bool) {
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return dst, false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				dst = append(dst, s[r])
				r++
			case 'b':
				dst = append(dst, '\b')
				r++
			case 'f':
				dst = append(dst, '\f')
				r++
			case 'n':
				dst = append(dst, '\n')
				r++
			case 'r':
				dst = append(dst, '\r')
				r++
			case 't':
				dst = append(dst, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return dst, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						dst = utf8.AppendRune(dst, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
			default:
				return dst, false
			}
		case c == '"', c < ' ':
			return dst, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst, true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
