package keyshape

import (
	"slices"
	"strconv"
)

// Key languages: the keys a template can render, as a nondeterministic
// automaton over byte classes, and the shortest key two of them both accept.
// Registration proves with them that two entities' primary keys never collide
// (the root package's disjoint.go; LangOf, template.go, describes each template's
// segments).
//
// What a placeholder renders:
//
//	string            one or more bytes, none the delimiter (an over-approximation of
//	                  valid UTF-8 without the delimiter: bytes that UTF-8 never uses
//	                  are left out, partial sequences are not)
//	signed integer    0, or a non-zero digit then digits, maybe after '-' (never with
//	                  the delimiter '-', which refuses negative values)
//	unsigned integer  0, or a non-zero digit then digits
//	shard field       1 to N in decimal (its digits, as an over-approximation)
//	a fixed layout    the layout, each digit of it any digit: a zero-padded number,
//	                  a time or date format, unix seconds...
//
// Every class is a superset of what is rendered, so "disjoint" is a proof. The
// classes are exact for strings, integers and padded numbers; for times they admit
// digits no calendar has (month 13), for shards numbers past the count.

// Seg is one segment of a template as its language reads it: literal text, or a
// placeholder with what it renders.
type Seg struct {
	Placeholder bool
	Literal     string // a literal segment's text
	// Layout is what a placeholder of fixed width renders, each digit of it
	// standing for any digit ("2006-01-02", "00000" for five digits); "" when
	// its field's Kind and Shards decide.
	Layout string
	Kind   Kind // the kind of the placeholder's field: Int, Uint, or any text
	Shards int  // the number of shards for the shard field; 0 otherwise
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte) { s[c>>6] |= 1 << (c & 63) }

func (s byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

func (s byteSet) and(o byteSet) byteSet {
	return byteSet{s[0] & o[0], s[1] & o[1], s[2] & o[2], s[3] & o[3]}
}

func (s byteSet) empty() bool { return s == byteSet{} }

func rangeSet(lo, hi byte) byteSet {
	var s byteSet
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
	return s
}

func byteOf(c byte) byteSet {
	var s byteSet
	s.add(c)
	return s
}

// pick returns a byte of s, which is not empty: a letter, digit or punctuation
// when it holds one, so that a witness key reads well; '1' before '0', so that a
// run of any digits reads as a real date and time (1111-11-11T11:11:11...).
func (s byteSet) pick() byte {
	for _, r := range [...][2]byte{{'a', 'z'}, {'A', 'Z'}, {'1', '9'}, {'0', '0'}, {'!', '~'}, {0, 0xff}} {
		for c := int(r[0]); c <= int(r[1]); c++ {
			if s.has(byte(c)) {
				return byte(c)
			}
		}
	}
	return 0
}

var (
	digitSet   = rangeSet('0', '9')
	nonzeroSet = rangeSet('1', '9')
)

// plainSet holds the bytes a plain string value may hold: every byte valid UTF-8
// uses (not 0xC0, 0xC1, 0xF5-0xFF), except the delimiter.
func plainSet(delim byte) byteSet {
	s := rangeSet(0, 0xbf)
	for c := 0xc2; c <= 0xf4; c++ {
		s.add(byte(c))
	}
	s[delim>>6] &^= 1 << (delim & 63)
	return s
}

// Lang is a nondeterministic automaton over bytes accepting every key a
// template can render (and, for the classes above, some more). State 0 starts.
// It is immutable once built.
type Lang struct {
	edges  [][]langEdge // by state
	accept []bool
}

type langEdge struct {
	on byteSet
	to int
}

// langBuilder appends to a Lang: front is the states the text so far ends in.
type langBuilder struct {
	l     Lang
	front []int
}

func (b *langBuilder) state() int {
	b.l.edges = append(b.l.edges, nil)
	b.l.accept = append(b.l.accept, false)
	return len(b.l.edges) - 1
}

func (b *langBuilder) edge(from int, on byteSet, to int) {
	b.l.edges[from] = append(b.l.edges[from], langEdge{on, to})
}

// step reads one byte of on from every state of the front into a new state,
// which becomes the front.
func (b *langBuilder) step(on byteSet) int {
	n := b.state()
	for _, f := range b.front {
		b.edge(f, on, n)
	}
	b.front = []int{n}
	return n
}

// pattern reads a fixed-width layout: each digit of it stands for any digit.
func (b *langBuilder) pattern(layout string) {
	for i := 0; i < len(layout); i++ {
		if c := layout[i]; '0' <= c && c <= '9' {
			b.step(digitSet)
		} else {
			b.step(byteOf(c))
		}
	}
}

// decimal reads an integer in canonical decimal: "0" (unless positive), or a
// non-zero digit and at most maxDigits-1 more (no bound when maxDigits is 0),
// after a '-' when negative is set.
func (b *langBuilder) decimal(negative, positive bool, maxDigits int) {
	from := b.front
	var ends []int
	if !positive {
		zero := b.state()
		for _, f := range from {
			b.edge(f, byteOf('0'), zero)
		}
		ends = append(ends, zero)
	}
	lead := b.state()
	for _, f := range from {
		b.edge(f, nonzeroSet, lead)
	}
	if negative {
		minus := b.state()
		for _, f := range from {
			b.edge(f, byteOf('-'), minus)
		}
		b.edge(minus, nonzeroSet, lead)
	}
	ends = append(ends, lead)
	if maxDigits == 0 {
		b.edge(lead, digitSet, lead)
	} else {
		for prev, i := lead, 1; i < maxDigits; i++ {
			n := b.state()
			b.edge(prev, digitSet, n)
			ends = append(ends, n)
			prev = n
		}
	}
	b.front = ends
}

// placeholder reads what placeholder s renders.
func (b *langBuilder) placeholder(s *Seg, delim byte) {
	switch {
	case s.Layout != "":
		b.pattern(s.Layout)
	case s.Shards > 0:
		if s.Shards < 10 {
			b.step(rangeSet('1', byte('0'+s.Shards)))
		} else {
			b.decimal(false, true, len(strconv.Itoa(s.Shards)))
		}
	case s.Kind == Int:
		b.decimal(delim != '-', false, 0)
	case s.Kind == Uint:
		b.decimal(false, false, 0)
	default:
		set := plainSet(delim)
		n := b.step(set)
		b.edge(n, set, n)
	}
}

// NewLang returns the language of the template made of segs, whose variable
// placeholders end at delim.
func NewLang(segs []Seg, delim byte) *Lang {
	b := &langBuilder{}
	b.front = []int{b.state()}
	for i := range segs {
		s := &segs[i]
		if !s.Placeholder {
			for i := 0; i < len(s.Literal); i++ {
				b.step(byteOf(s.Literal[i]))
			}
			continue
		}
		b.placeholder(s, delim)
	}
	for _, f := range b.front {
		b.l.accept[f] = true
	}
	return &b.l
}

// CommonKey returns a key that both languages accept, the shortest there is, or
// ok=false when none exists. It visits only the pairs of states reachable
// together, so two long literal templates cost about their length.
func CommonKey(a, b *Lang) (key string, ok bool) {
	type pair struct{ a, b int }
	type step struct {
		from pair
		c    byte
	}
	seen := map[pair]step{{}: {}}
	queue := []pair{{}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if a.accept[p.a] && b.accept[p.b] {
			var out []byte
			for q := p; q != (pair{}); q = seen[q].from {
				out = append(out, seen[q].c)
			}
			slices.Reverse(out)
			return string(out), true
		}
		for _, ea := range a.edges[p.a] {
			for _, eb := range b.edges[p.b] {
				on := ea.on.and(eb.on)
				if on.empty() {
					continue
				}
				if n := (pair{ea.to, eb.to}); !hasKey(seen, n) {
					seen[n] = step{p, on.pick()}
					queue = append(queue, n)
				}
			}
		}
	}
	return "", false
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}
