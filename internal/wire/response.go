package wire

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/singletable/singletable/internal/codec"
)

// Op is the DynamoDB operation whose response a [Sink] reads.
type Op uint8

// The operations whose responses hold items.
const (
	GetItem          Op = iota + 1 // Item
	Query                          // Items, Count, ScannedCount, LastEvaluatedKey
	Scan                           // as Query
	BatchGetItem                   // Responses by table, UnprocessedKeys
	TransactGetItems               // Responses[].Item
)

// String returns the operation's API name.
func (op Op) String() string {
	switch op {
	case GetItem:
		return "GetItem"
	case Query:
		return "Query"
	case Scan:
		return "Scan"
	case BatchGetItem:
		return "BatchGetItem"
	case TransactGetItems:
		return "TransactGetItems"
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// Target describes the items of one entity type: the plan their fields decode through and the
// attributes that decide whether an item can be decoded here. It is immutable once made; make it once
// per entity type with [NewTarget].
type Target struct {
	Plan    *codec.Plan
	Ignored *codec.Ignored // attributes items carry beside the fields (keys, type...), skipped fast
	// TypeAttr holds the discriminator; an item is decoded here only when it is {"S": Type}.
	TypeAttr, Type string
	// SchemaAttr, when set, holds the item's schema version (absent: 1); an item is decoded here only
	// when it is at Schema (strconv.Atoi of its N text). Others are left to the migration path.
	SchemaAttr string
	Schema     int
	// ID is the caller's, to tell targets apart.
	ID int
}

// NewTarget checks and returns a Target. The type, schema and kept key attributes must not be fields of
// the plan, not even ignoring case: they are read as the target's own, never decoded into a field.
func NewTarget(plan *codec.Plan, ignored *codec.Ignored, typeAttr, typ, schemaAttr string, schema int, keep []string, id int) (*Target, error) {
	if plan == nil || typeAttr == "" {
		return nil, fmt.Errorf("wire: a target needs a plan and a type attribute")
	}
	if ignored != nil && ignored.Plan() != plan {
		return nil, fmt.Errorf("wire: ignored names of another plan")
	}
	for _, a := range append([]string{typeAttr, schemaAttr}, keep...) {
		if a == "" {
			continue
		}
		if _, ok := plan.Field(a); ok {
			return nil, fmt.Errorf("wire: attribute %q is a field of %s", a, plan.Type())
		}
		if _, ok := plan.LookupFold(a); ok {
			return nil, fmt.Errorf("wire: attribute %q matches a field of %s ignoring case", a, plan.Type())
		}
	}
	return &Target{Plan: plan, Ignored: ignored, TypeAttr: typeAttr, Type: typ, SchemaAttr: schemaAttr, Schema: schema, ID: id}, nil
}

// Slots hands out the values items are decoded into. Implementations keep the values of a response, in
// order, until the caller takes them; they need not be safe for concurrent use (one call uses them).
type Slots interface {
	// Hint says that about n items are coming.
	Hint(n int)
	// Next returns the address of a new zero value of t.Plan's type for the next item.
	Next(t *Target) unsafe.Pointer
	// Drop discards the value Next returned last: its item is left to the SDK.
	Drop(t *Target)
	// Reset discards every value: the response is read again (a retried attempt) or left to the SDK.
	Reset()
}

// Entry is one item of a response, in response order.
type Entry struct {
	// Target is the target the item was decoded as, into the next value Slots handed out for it; nil
	// when the SDK decoded it (Raw) or there is no item (a TransactGetItems response without one).
	Target *Target
	// Raw is, when Target is nil, the index of the item in the SDK's output: Items (Query, Scan),
	// Responses[Table] (BatchGetItem), Responses (TransactGetItems; -1 without an item); 0 for
	// GetItem's Item.
	Raw int
}

// A Sink receives the items of one call's response decoded straight from its JSON (see [Sink.Option]).
// Set its fields before the call; after it, [Sink.Decoded] says whether the response was read here,
// and then [Sink.Entries] lists its items, the decoded ones in Slots and the others in the SDK's output,
// which holds only those (and every other member of the response, as the SDK reads them). A Sink is for
// one call at a time.
type Sink struct {
	Op Op
	// Table is the table whose BatchGetItem responses are decoded (a response naming another is read by
	// the SDK).
	Table string
	// Target, when set, is the one entity every item is tried as; else Lookup finds an item's target by
	// the value of its TypeAttr (nil: the SDK reads it).
	Target   *Target
	Lookup   func(typ string) *Target
	TypeAttr string
	// Keep names string attributes (keys) whose values are kept for each decoded item: see [Sink.Keys].
	// An item without them all, as strings, is left to the SDK.
	Keep []string
	// Peek names a number attribute of the items (a field's, such as a TTL) whose text is kept for each
	// item decoded here, for the caller to judge it as stored: see [Sink.Peeked]. "" keeps none.
	Peek  string
	Slots Slots

	decoded bool
	entries []Entry
	keys    []string // len(Keep) per entry
	peeks   []peeked // one per entry, when Peek is set
	verify  bool     // check X-Amz-Crc32 (the client's DisableValidateResponseChecksum is false)
	d       decoder
	// The body given to the SDK, built from the spans of the original it must still read.
	pass [][2]int // members passed through: "Name":value
	raws [][2]int // items left to the SDK
	raw  []int    // TransactGetItems: per response element, the index in raws or -1
	name [2]int   // BatchGetItem: the table name's token
	out  []byte   // the body given to the SDK, valid until the next attempt
	rd   bodyReader

	// First backing arrays, in the Sink's own allocation: a GetItem allocates nothing more.
	entArr  [1]Entry
	passArr [4][2]int
	outArr  [160]byte
}

// Decoded reports whether the last response was read here (else the SDK read all of it).
func (s *Sink) Decoded() bool { return s.decoded }

// Entries returns the items of the response, in order, when Decoded.
func (s *Sink) Entries() []Entry { return s.entries }

// Keys returns the values of Keep for the i-th entry, when it was decoded here.
func (s *Sink) Keys(i int) []string {
	k := len(s.Keep)
	return s.keys[i*k : (i+1)*k : (i+1)*k]
}

// peeked is the value of the Peek attribute of one item.
type peeked struct {
	n  string
	ok bool
}

// Peeked returns the text of the i-th entry's Peek attribute when it was decoded here and the attribute
// is a number ({"N": text}); ok is false when it is missing, of another type, or Peek is not set.
func (s *Sink) Peeked(i int) (n string, ok bool) {
	if s.Peek == "" || i >= len(s.peeks) {
		return "", false
	}
	p := s.peeks[i]
	return p.n, p.ok
}

func (s *Sink) reset() {
	s.decoded = false
	if s.entries == nil {
		s.entries, s.pass, s.out = s.entArr[:0], s.passArr[:0], s.outArr[:0]
	}
	s.entries = s.entries[:0]
	s.keys = s.keys[:0]
	s.peeks = s.peeks[:0]
	s.pass, s.raws, s.raw = s.pass[:0], s.raws[:0], s.raw[:0]
	s.name = [2]int{}
	if s.Slots != nil {
		s.Slots.Reset()
	}
}

// read decodes body, a successful response of s.Op, and returns what the SDK must still read. ok is
// false when the body is not as this package expects; s is then reset and the SDK reads the original.
func (s *Sink) read(body []byte) (repl []byte, ok bool) {
	s.reset()
	if s.Slots == nil || s.Op < GetItem || s.Op > TransactGetItems {
		return nil, false
	}
	s.d = decoder{scanner: scanner{b: body}, scratch: s.d.scratch[:0]}
	if err := s.top(); err != nil {
		s.reset()
		return nil, false
	}
	s.decoded = true
	return s.body(body), true
}

// top reads the response object.
func (s *Sink) top() error {
	d := &s.d
	if !d.expect('{') {
		return errSyntax
	}
	var seen uint8 // containers and members read, against repeats
	if d.ws() == '}' {
		d.i++
	} else {
		for {
			d.ws()
			at := d.i
			start, end, escaped, err := d.stringToken()
			if err != nil || escaped || !d.expect(':') {
				return errSyntax
			}
			bit, container, known := member(s.Op, string(d.b[start:end]))
			if !known || seen&bit != 0 {
				return errSyntax // an unknown member, or one given twice: the SDK's way
			}
			seen |= bit
			if container {
				if err := s.container(); err != nil {
					return err
				}
			} else {
				d.ws()
				v := d.i
				if err := d.skip(0); err != nil {
					return err
				}
				s.pass = append(s.pass, [2]int{at, d.i})
				if string(d.b[start:end]) == "Count" {
					// A hint for the slots, when the count comes before the items (as DynamoDB sends it).
					if n, err := strconv.Atoi(string(d.b[v:d.i])); err == nil && n > 0 && n <= 1<<16 {
						s.Slots.Hint(n)
					}
				}
			}
			switch d.ws() {
			case ',':
				d.i++
				continue
			case '}':
				d.i++
			default:
				return errSyntax
			}
			break
		}
	}
	if d.ws() != 0 {
		return errSyntax // trailing bytes
	}
	return nil
}

// member classifies a top-level member of op's output: a bit for repeats, whether it holds the items.
func member(op Op, name string) (bit uint8, container, known bool) {
	if name == "ConsumedCapacity" {
		return 1, false, true
	}
	switch op {
	case GetItem:
		if name == "Item" {
			return 2, true, true
		}
	case Query, Scan:
		switch name {
		case "Items":
			return 2, true, true
		case "Count":
			return 4, false, true
		case "ScannedCount":
			return 8, false, true
		case "LastEvaluatedKey":
			return 16, false, true
		}
	case BatchGetItem:
		switch name {
		case "Responses":
			return 2, true, true
		case "UnprocessedKeys":
			return 4, false, true
		}
	case TransactGetItems:
		if name == "Responses" {
			return 2, true, true
		}
	}
	return 0, false, false
}

// container reads the member that holds the items.
func (s *Sink) container() error {
	d := &s.d
	switch s.Op {
	case GetItem:
		if d.ws() != '{' {
			return errSyntax
		}
		return s.item()
	case Query, Scan:
		return s.items()
	case BatchGetItem:
		return s.batchResponses()
	case TransactGetItems:
		return s.transactResponses()
	}
	return errSyntax
}

// batchResponses reads BatchGetItem's Responses: the items of s.Table, the only table it may name.
func (s *Sink) batchResponses() error {
	d := &s.d
	if !d.expect('{') {
		return errSyntax
	}
	if d.ws() == '}' {
		d.i++
		return nil
	}
	for {
		at := d.i
		start, end, escaped, err := d.stringToken()
		if err != nil || escaped || string(d.b[start:end]) != s.Table {
			return errSyntax // another table (or an escaped name): the SDK's way
		}
		s.name = [2]int{at, d.i}
		if !d.expect(':') {
			return errSyntax
		}
		if err := s.items(); err != nil {
			return err
		}
		switch d.ws() {
		case ',':
			return errSyntax // a second table
		case '}':
			d.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// transactResponses reads TransactGetItems' Responses: per element, an item or none.
func (s *Sink) transactResponses() error {
	d := &s.d
	if !d.expect('[') {
		return errSyntax
	}
	if d.ws() == ']' {
		d.i++
		return nil
	}
	for {
		// {"Item": {...}} or {}.
		if !d.expect('{') {
			return errSyntax
		}
		if d.ws() == '}' {
			d.i++
			s.entries = append(s.entries, Entry{Raw: -1})
			s.keys = append(s.keys, make([]string, len(s.Keep))...)
			s.peek(peeked{})
			s.raw = append(s.raw, -1)
		} else {
			start, end, escaped, err := d.stringToken()
			if err != nil || escaped || string(d.b[start:end]) != "Item" || !d.expect(':') || d.ws() != '{' {
				return errSyntax
			}
			if err := s.item(); err != nil {
				return err
			}
			if !d.expect('}') {
				return errSyntax
			}
		}
		switch d.ws() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// items reads an array of items.
func (s *Sink) items() error {
	d := &s.d
	if !d.expect('[') {
		return errSyntax
	}
	if d.ws() == ']' {
		d.i++
		return nil
	}
	for {
		if d.ws() != '{' {
			return errSyntax
		}
		if err := s.item(); err != nil {
			return err
		}
		switch d.ws() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// item reads the item object at d.i: decoded when it can be, else left to the SDK.
func (s *Sink) item() error {
	d := &s.d
	start := d.i
	end := -1 // known once decoded, or checked
	// check checks the item's JSON (decoding it checks what it reads) and finds its end.
	check := func() error {
		if end >= 0 {
			return nil
		}
		d.i = start
		if err := d.skip(1); err != nil {
			return errSyntax
		}
		end = d.i
		return nil
	}
	t := s.Target
	if t == nil && s.Lookup != nil {
		if err := check(); err != nil {
			return err
		}
		if typ, ok := d.typeOf(start, end, s.TypeAttr); ok {
			t = s.Lookup(typ)
		}
	}
	k := len(s.Keep)
	base := len(s.keys)
	for range k {
		s.keys = append(s.keys, "")
	}
	if t != nil {
		p := s.Slots.Next(t)
		d.begin(start)
		sp := special{t: t, keepNames: s.Keep, keep: s.keys[base : base+k], peekName: s.Peek}
		err := d.object(t.Plan, p, &sp, 0)
		if err == nil && (end >= 0 && d.i != end || !sp.typ || t.SchemaAttr != "" && !sp.schem && t.Schema != 1 || sp.kept != k) {
			err = errItem
		}
		if err == nil {
			d.end()
			s.entries = append(s.entries, Entry{Target: t, Raw: -1})
			s.peek(sp.peeked)
			if s.Op == TransactGetItems {
				s.raw = append(s.raw, -1)
			}
			return nil
		}
		clear(s.keys[base:])
		s.Slots.Drop(t)
	}
	if err := check(); err != nil {
		return err
	}
	d.i = end
	raw := len(s.raws)
	if s.Op == TransactGetItems {
		raw = len(s.raw)
		s.raw = append(s.raw, len(s.raws))
	}
	s.entries = append(s.entries, Entry{Raw: raw})
	s.peek(peeked{})
	s.raws = append(s.raws, [2]int{start, end})
	return nil
}

// peek records the Peek attribute of the entry just added, when Peek is set.
func (s *Sink) peek(p peeked) {
	if s.Peek != "" {
		s.peeks = append(s.peeks, p)
	}
}

// typeOf returns the string value of attribute attr of the item at b[start:end] (checked JSON).
func (d *decoder) typeOf(start, end int, attr string) (string, bool) {
	at := d.i
	defer func() { d.i = at }()
	d.begin(start)
	if !d.expect('{') || d.ws() == '}' {
		return "", false
	}
	for {
		ns, ne, escaped, err := d.stringToken()
		if err != nil || !d.expect(':') {
			return "", false
		}
		if !escaped && string(d.b[ns:ne]) == attr {
			s, err := d.stringAV(tagS)
			return s, err == nil
		}
		if d.skip(0) != nil {
			return "", false
		}
		if d.ws() != ',' {
			return "", false
		}
		d.i++
	}
}

// body returns the body the SDK reads in place of the original: the members passed through and the
// items left to it.
func (s *Sink) body(orig []byte) []byte {
	n := 2
	for _, p := range s.pass {
		n += p[1] - p[0] + 1
	}
	for _, r := range s.raws {
		n += r[1] - r[0] + 12
	}
	n += s.name[1] - s.name[0] + 32
	out := s.out[:0]
	if cap(out) < n {
		out = make([]byte, 0, n)
	}
	out = append(out, '{')
	for i, p := range s.pass {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, orig[p[0]:p[1]]...)
	}
	if len(s.raws) > 0 {
		if len(s.pass) > 0 {
			out = append(out, ',')
		}
		switch s.Op {
		case GetItem:
			out = append(out, `"Item":`...)
			out = append(out, orig[s.raws[0][0]:s.raws[0][1]]...)
		case Query, Scan:
			out = append(out, `"Items":[`...)
			out = s.appendRaws(out, orig)
			out = append(out, ']')
		case BatchGetItem:
			out = append(out, `"Responses":{`...)
			out = append(out, orig[s.name[0]:s.name[1]]...)
			out = append(out, ":["...)
			out = s.appendRaws(out, orig)
			out = append(out, "]}"...)
		case TransactGetItems:
			out = append(out, `"Responses":[`...)
			for i, r := range s.raw {
				if i > 0 {
					out = append(out, ',')
				}
				if r < 0 {
					out = append(out, "{}"...)
					continue
				}
				out = append(out, `{"Item":`...)
				out = append(out, orig[s.raws[r][0]:s.raws[r][1]]...)
				out = append(out, '}')
			}
			out = append(out, ']')
		}
	}
	out = append(out, '}')
	s.out = out
	return out
}

func (s *Sink) appendRaws(out, orig []byte) []byte {
	for i, r := range s.raws {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, orig[r[0]:r[1]]...)
	}
	return out
}
