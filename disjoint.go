package singletable

import (
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Disjoint primary keys. Two entities on one table must never render the same
// primary key: a batch write, which carries no condition, would overwrite the
// other entity's item. Register proves it: each key template is a regular
// language over bytes (literal text exactly; each placeholder what keys.go can
// render for its field), and two entities are refused when their partition key
// languages intersect and their sort key languages do too. The languages are
// nondeterministic automata over byte classes, and an intersection is found by a
// breadth-first search of their product, which also gives the shortest key both
// can render, for the error.
//
// What a placeholder renders (see Template.appendValueAt):
//
//	string            one or more bytes, none the delimiter (an over-approximation of
//	                  valid UTF-8 without the delimiter: bytes that UTF-8 never uses
//	                  are left out, partial sequences are not)
//	signed integer    0, or a non-zero digit then digits, maybe after '-' (never with
//	                  the delimiter '-', which refuses negative values)
//	unsigned integer  0, or a non-zero digit then digits
//	shard field       1 to N in decimal (its digits, as an over-approximation), or
//	                  zero-padded as its format says
//	{n:0W}            exactly W digits
//	{t}, {t:time}     2006-01-02T15:04:05.000000000Z with any digits
//	{t:date}          2006-01-02 with any digits
//	{t:unix}, unixms, rev   10, 13, 19 digits
//
// Every class is a superset of what is rendered, so "disjoint" is a proof. The
// classes are exact for strings, integers and padded numbers; for times they admit
// digits no calendar has (month 13), for shards numbers past the count. A collision
// is reported with the shortest key both templates accept, which they really render
// unless a literal of one of them is such a time or shard.

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

// phLang is what decides one placeholder's language besides its format: the kind
// of its field, and for the shard field the number of shards (0 otherwise).
type phLang struct {
	kind   kvKind
	shards int
}

// keyLang is a nondeterministic automaton over bytes accepting every key a
// template can render (and, for the classes above, some more). State 0 starts.
type keyLang struct {
	edges  [][]langEdge // by state
	accept []bool
}

type langEdge struct {
	on byteSet
	to int
}

// langBuilder appends to a keyLang: front is the states the text so far ends in.
type langBuilder struct {
	l     keyLang
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

// placeholder reads what segment s renders for a field described by ph.
func (b *langBuilder) placeholder(s *segment, ph phLang, delim byte) {
	switch s.format {
	case fmtPad, fmtUnix, fmtUnixMs, fmtRev:
		for range s.width {
			b.step(digitSet)
		}
		return
	case fmtTime:
		b.pattern(timeLayout)
		return
	case fmtDate:
		b.pattern(dateLayout)
		return
	}
	switch {
	case ph.shards > 0:
		if ph.shards < 10 {
			b.step(rangeSet('1', byte('0'+ph.shards)))
		} else {
			b.decimal(false, true, len(strconv.Itoa(ph.shards)))
		}
	case ph.kind == kvInt:
		b.decimal(delim != '-', false, 0)
	case ph.kind == kvUint:
		b.decimal(false, false, 0)
	case ph.kind == kvTime:
		b.pattern(timeLayout)
	default:
		set := plainSet(delim)
		n := b.step(set)
		b.edge(n, set, n)
	}
}

// newKeyLang returns the language of template tm whose placeholders, in order,
// are described by phs.
func newKeyLang(tm *Template, phs []phLang) *keyLang {
	b := &langBuilder{}
	b.front = []int{b.state()}
	pi := 0
	for si := range tm.segs {
		s := &tm.segs[si]
		if s.name == "" {
			for i := 0; i < len(s.literal); i++ {
				b.step(byteOf(s.literal[i]))
			}
			continue
		}
		b.placeholder(s, phs[pi], tm.delim)
		pi++
	}
	for _, f := range b.front {
		b.l.accept[f] = true
	}
	return &b.l
}

// commonKey returns a key that both languages accept, the shortest there is, or
// ok=false when none exists. It visits only the pairs of states reachable
// together, so two long literal templates cost about their length.
func commonKey(a, b *keyLang) (key string, ok bool) {
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

// phLangs describes kt's placeholders for newKeyLang.
func (info *entityInfo) phLangs(kt *keyTemplate) []phLang {
	out := make([]phLang, len(kt.fields))
	for i, f := range kt.fields {
		out[i].kind = keyKindOf(derefType(f.Type))
		if kt.typ == types.ScalarAttributeTypeB {
			out[i].kind = kvString // a binary key's bytes: any text, as far as colliding goes
		}
		if info.shard != nil && f == info.shard.field {
			out[i].shards = info.shard.count
		}
	}
	return out
}

// primaryLangs returns the languages of info's partition and sort key templates.
func (info *entityInfo) primaryLangs() (pk, sk *keyLang) {
	if info.sk == nil { // a table keyed by partition alone
		return newKeyLang(info.pk.tmpl, info.phLangs(info.pk)), nil
	}
	return newKeyLang(info.pk.tmpl, info.phLangs(info.pk)), newKeyLang(info.sk.tmpl, info.phLangs(info.sk))
}

// sharedPrimaryKey returns a primary key that entities a and b could both render,
// or ok=false when their templates prove that they never can.
func sharedPrimaryKey(a, b *entityInfo) (pk, sk string, ok bool) {
	apk, ask := a.primaryLangs()
	bpk, bsk := b.primaryLangs()
	if pk, ok = commonKey(apk, bpk); !ok {
		return "", "", false
	}
	if ask == nil || bsk == nil {
		return pk, "", true
	}
	if sk, ok = commonKey(ask, bsk); !ok {
		return "", "", false
	}
	return pk, sk, true
}

// checkDisjoint refuses info when its primary key templates could render a key
// that other's can: the error names both entities and their templates, a key
// both render, and a fix.
func (t *Table) checkDisjoint(info, other *entityInfo) error {
	pk, sk, ok := sharedPrimaryKey(info, other)
	if !ok {
		return nil
	}
	if info.sk == nil {
		reason := "key template " + strconv.Quote(info.pk.tmpl.String()) + " collides with " + other.name + "'s " + strconv.Quote(other.pk.tmpl.String()) +
			": both render " + t.opts.PartitionKey + " " + strconv.Quote(t.keyDisplay(t.opts.PartitionKey, pk)) + ", so a batch write of one would overwrite the other's item; " + t.disjointAdvice(t.opts.PartitionKey)
		return &EntityError{Entity: info.name, Field: t.opts.PartitionKey, Reason: reason}
	}
	reason := "key templates " + strconv.Quote(info.pk.tmpl.String()) + " / " + strconv.Quote(info.sk.tmpl.String()) +
		" collide with " + other.name + "'s " + strconv.Quote(other.pk.tmpl.String()) + " / " + strconv.Quote(other.sk.tmpl.String()) +
		": both render " + t.opts.PartitionKey + " " + strconv.Quote(pk) + ", " + t.opts.SortKey + " " + strconv.Quote(sk) +
		", so a batch write of one would overwrite the other's item; " + t.disjointAdvice(t.opts.PartitionKey, t.opts.SortKey)
	if fix := t.disjointFix(info, other); fix != "" && t.keyType(t.opts.PartitionKey) == types.ScalarAttributeTypeS && t.keyType(t.opts.SortKey) == types.ScalarAttributeTypeS {
		reason += ", e.g. " + fix
	}
	return &EntityError{Entity: info.name, Field: t.opts.SortKey, Reason: reason}
}

// disjointAdvice says how to make two colliding entities disjoint: a static
// prefix where a key attribute holds strings; a number or binary key attribute
// holds no prefix, so such entities need keys of their own.
func (t *Table) disjointAdvice(attrs ...string) string {
	for _, a := range attrs {
		if t.keyType(a) == types.ScalarAttributeTypeS {
			return "give one of them a distinct static prefix"
		}
	}
	return "a number or binary key holds no prefix, so keep one of them in another table (or make a key attribute a string and give one a distinct static prefix)"
}

// disjointFix suggests a static prefix that makes the two entities disjoint: the
// discriminator in capitals before the sort key (then the partition key) of the
// one whose sort key starts with a placeholder, else of info. It returns "" when
// no such prefix would do.
func (t *Table) disjointFix(info, other *entityInfo) string {
	order := []*entityInfo{info, other}
	if info.sk.tmpl.StaticPrefix() != "" && other.sk.tmpl.StaticPrefix() == "" {
		order = []*entityInfo{other, info}
	}
	for _, e := range order {
		that := other
		if e == other {
			that = info
		}
		prefix := prefixFor(e.discriminator)
		tpk, tsk := that.primaryLangs()
		for _, kt := range []*keyTemplate{e.sk, e.pk} {
			text := prefix + string(t.opts.Delimiter) + kt.tmpl.String()
			tm, err := ParseTemplate(text, t.opts.Delimiter)
			if err != nil {
				continue
			}
			pk, sk := e.primaryLangs()
			if kt == e.sk {
				sk = newKeyLang(tm, e.phLangs(kt))
			} else {
				pk = newKeyLang(tm, e.phLangs(kt))
			}
			_, pkMeet := commonKey(pk, tpk)
			_, skMeet := commonKey(sk, tsk)
			if !pkMeet || !skMeet {
				return e.name + "'s " + kt.attr + " " + strconv.Quote(text)
			}
		}
	}
	return ""
}

// prefixFor makes a key prefix of a discriminator: its letters and digits in
// capitals ("TYPE" when it has none).
func prefixFor(discriminator string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(discriminator) {
		if ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "TYPE"
	}
	return b.String()
}
