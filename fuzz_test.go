package singletable

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
)

// Fuzz targets of the root package, beside keys_test.go's FuzzTemplate and
// FuzzKeyInjective; run each for a minute with `make fuzz`. Their seed corpora
// are under testdata/fuzz/<target>/.

// fuzzQueries are the prepared queries FuzzCursor resumes: an entity on the base
// table and on two indexes, a collection, and a sharded fan-out, on a table
// without a cursor secret (a forger knows the checksum key) and one with.
type fuzzQueries struct {
	plain, signed *Table
	orders        *Entity[tOrder]
	customers     *Entity[tCustomer]
	events        *Entity[sEvent]
	signedOrders  *Entity[tOrder]
}

func newFuzzQueries(tb testing.TB) *fuzzQueries {
	tb.Helper()
	q := &fuzzQueries{}
	var err error
	for _, p := range []**Table{&q.plain, &q.signed} {
		opts := []TableOption{testTableOptions}
		if p == &q.signed {
			opts = append(opts, WithCursorSecret([]byte("s3cret")))
		}
		*p, err = NewTable(offlineClient{}, "fuzz", opts...)
		require.NoError(tb, err)
	}
	q.customers = MustRegister[tCustomer](q.plain)
	q.orders = MustRegister[tOrder](q.plain)
	MustRegister[tLineItem](q.plain)
	q.events = MustRegister[sEvent](q.plain)
	q.signedOrders = MustRegister[tOrder](q.signed)
	return q
}

// offlineClient is a Client that must never be called: FuzzCursor only prepares
// queries.
type offlineClient struct{ Client }

// cursorCase is one query a cursor is tried on.
type cursorCase struct {
	name    string
	table   *Table
	prepare func(cursor string) (*preparedQuery, error)
}

func (q *fuzzQueries) cases() []cursorCase {
	key := tOrder{CustomerID: "c1"}
	entity := func(e *Entity[tOrder], opts ...QueryOption) func(string) (*preparedQuery, error) {
		return func(c string) (*preparedQuery, error) {
			k := key
			return e.core().prepareQuery(reflectValue(&k), append(opts, After(c)))
		}
	}
	return []cursorCase{
		{"base", q.plain, entity(q.orders)},
		{"base, descending, sort key condition", q.plain, entity(q.orders, Descending(), SKBetween("ORDER#a", "ORDER#z"))},
		{"GSI2", q.plain, entity(q.orders, On("GSI2"))},
		{"GSI3, no sort key", q.plain, func(c string) (*preparedQuery, error) {
			k := tCustomer{Email: "e@x"}
			return q.customers.core().prepareQuery(reflectValue(&k), []QueryOption{On("GSI3"), After(c)})
		}},
		{"collection", q.plain, func(c string) (*preparedQuery, error) {
			pq, _, err := q.plain.prepareCollection("CUST#c1", []CollectionOption{After(c)})
			return pq, err
		}},
		{"signed", q.signed, entity(q.signedOrders)},
	}
}

// forgeCursor signs payload as t would: with the fixed checksum key when t has no
// secret, which anyone who read this package's source can do.
func forgeCursor(t *Table, payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(payload[:len(payload):len(payload)], t.cursorMAC(payload)...))
}

// fuzzPayload builds a cursor payload from fuzz input. mode 0 uses it as is;
// 1 prefixes the version and the query's identity; 2 also frames the input as
// length-prefixed key values, split at 0xff bytes, to reach the key checks.
func fuzzPayload(version byte, identity []byte, raw []byte, mode uint8) []byte {
	switch mode % 3 {
	case 0:
		return raw
	case 1:
		return append(append([]byte{version}, identity...), raw...)
	}
	out := append([]byte{version}, identity...)
	for part := range strings.SplitSeq(string(raw), "\xff") {
		out = append(out, byte(len(part)))
		out = append(out, part...)
	}
	return out
}

// checkResume checks what a cursor did to a prepared query: nothing but set
// ExclusiveStartKey, to exactly the index's key attributes, as strings, with the
// query's own partition.
func checkResume(t *testing.T, tbl *Table, name, cursor string, base, pq *preparedQuery) {
	t.Helper()
	got := pq.in
	got.ExclusiveStartKey = nil
	if !reflect.DeepEqual(got, base.in) || pq.partition != base.partition || !reflect.DeepEqual(pq.index, base.index) {
		t.Fatalf("%s: cursor %q changed the query: %+v, want %+v", name, cursor, got, base.in)
	}
	start := pq.in.ExclusiveStartKey
	if cursor == "" {
		if start != nil {
			t.Fatalf("%s: empty cursor set a start key", name)
		}
		return
	}
	attrs := tbl.cursorAttrs(pq.index)
	if len(start) != len(attrs) {
		t.Fatalf("%s: cursor %q: start key %v, want attributes %v", name, cursor, start, attrs)
	}
	for _, a := range attrs {
		s, ok := start[a].(*types.AttributeValueMemberS)
		if !ok || s.Value == "" {
			t.Fatalf("%s: cursor %q: start key attribute %s is %#v", name, cursor, a, start[a])
		}
	}
	if p := start[pq.index.PartitionKey].(*types.AttributeValueMemberS).Value; p != pq.partition {
		t.Fatalf("%s: cursor %q resumes in partition %q, not the query's %q", name, cursor, p, pq.partition)
	}
}

// FuzzCursor hands arbitrary cursors to After, and cursors forged with the
// checksum key (as anyone can without a CursorSecret) to entity, index,
// collection and fan-out queries. None panics; each is refused with
// ErrInvalidCursor or resumes the same query in its own partition.
func FuzzCursor(f *testing.F) {
	q := newFuzzQueries(f)
	addCursorSeeds(f, q)
	cases := q.cases()
	bases := make([]*preparedQuery, len(cases))
	for i, c := range cases {
		var err error
		bases[i], err = c.prepare("")
		require.NoError(f, err)
	}
	eventKey := sEvent{Day: day0}
	fanBase, err := q.events.core().prepareFanout(reflect.ValueOf(eventKey), nil)
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, cursor string, raw []byte, mode uint8) {
		for i, c := range cases {
			id := sha256.Sum256(bases[i].identity)
			for _, cur := range []string{cursor, forgeCursor(q.plain, fuzzPayload(cursorVersion, id[:cursorIDLen], raw, mode))} {
				checkQueryCursor(t, q, c, cursor, cur, bases[i])
			}
		}
		// Fan-out cursors hold one start per shard.
		for _, cur := range []string{cursor, forgeCursor(q.plain, fuzzPayload(fanoutCursorVersion, fanBase.identity[:cursorIDLen], raw, mode))} {
			checkFanoutCursor(t, q, eventKey, cur)
		}
		// A sweep's checkpoint never panics, and reads back both key attributes,
		// non-empty, or is refused.
		scanID := q.plain.scanCursorID()
		for _, cur := range []string{cursor, forgeCursor(q.plain, fuzzPayload(scanCursorVersion, scanID[:], raw, mode))} {
			checkScanCursor(t, q, cur)
		}
		// Only the canonical encoding opens: whatever opened re-encodes to itself.
		if cursor != "" {
			if _, err := q.plain.openCursor(cursorVersion, cursorIDOf(bases[0].identity), cursor); err == nil {
				raw, _ := base64.RawURLEncoding.DecodeString(cursor)
				if base64.RawURLEncoding.EncodeToString(raw) != cursor {
					t.Fatalf("cursor %q opened but is not canonical", cursor)
				}
			}
		}
	})
}

// addCursorSeeds seeds FuzzCursor with real cursors of each query, their
// payloads, and a few hand-made ones.
func addCursorSeeds(f *testing.F, q *fuzzQueries) {
	for _, c := range q.cases() {
		pq, err := c.prepare("")
		require.NoError(f, err)
		last := map[string]types.AttributeValue{}
		for _, a := range c.table.cursorAttrs(pq.index) {
			last[a] = sAV("x")
		}
		last[pq.index.PartitionKey] = sAV(pq.partition)
		cur, err := c.table.encodeCursor(pq, last)
		require.NoError(f, err)
		f.Add(cur, []byte(nil), uint8(0))
		raw, _ := base64.RawURLEncoding.DecodeString(cur)
		f.Add("", raw[:len(raw)-cursorMACLen], uint8(0))
		f.Add("", raw[1+cursorIDLen:len(raw)-cursorMACLen], uint8(1))
	}
	f.Add("", []byte("CUST#c2\xffORDER#o1"), uint8(2))
	f.Add("", []byte("CUST#c1\xffORDER#o1\xffx"), uint8(2))
	f.Add("", []byte("\x02\x01\x01a\x01b\x00"), uint8(1))
	f.Add("not a cursor", []byte{}, uint8(0))
}

// checkQueryCursor prepares c's query after cur (the fuzzed cursor, or one
// forged from it): it is refused with ErrInvalidCursor, or, unless forged for
// the signed table, resumes the query base in its own partition.
func checkQueryCursor(t *testing.T, q *fuzzQueries, c cursorCase, fuzzed, cur string, base *preparedQuery) {
	t.Helper()
	pq, err := c.prepare(cur)
	if err != nil {
		if !errors.Is(err, ErrInvalidCursor) {
			t.Fatalf("%s: cursor %q: error %v is not ErrInvalidCursor", c.name, cur, err)
		}
		return
	}
	if c.table == q.signed && cur != "" && cur != fuzzed {
		t.Fatalf("%s: a cursor forged without the secret was accepted", c.name)
	}
	checkResume(t, c.table, c.name, cur, base, pq)
}

// checkFanoutCursor prepares a fan-out query of eventKey after cur: it is
// refused with ErrInvalidCursor, or each shard resumes in its own partition.
func checkFanoutCursor(t *testing.T, q *fuzzQueries, eventKey sEvent, cur string) {
	t.Helper()
	fq, err := q.events.core().prepareFanout(reflect.ValueOf(eventKey), []ShardQueryOption{After(cur)})
	if err != nil {
		if !errors.Is(err, ErrInvalidCursor) {
			t.Fatalf("fan-out: cursor %q: error %v is not ErrInvalidCursor", cur, err)
		}
		return
	}
	for i, s := range fq.Streams {
		if s.Start == nil {
			continue
		}
		if p, _ := s.Start[fq.index.PartitionKey].(*types.AttributeValueMemberS); p == nil || p.Value != fq.pqs[i].partition {
			t.Fatalf("fan-out: cursor %q resumes shard %q in %v", cur, fq.pqs[i].partition, s.Start)
		}
	}
}

// checkScanCursor decodes cur as a sweep's checkpoint: it reads back both key
// attributes, non-empty, or is refused with ErrInvalidCursor.
func checkScanCursor(t *testing.T, q *fuzzQueries, cur string) {
	t.Helper()
	if key, err := q.plain.decodeScanCursor(cur); err == nil {
		pk, _ := key["PK"].(*types.AttributeValueMemberS)
		sk, _ := key["SK"].(*types.AttributeValueMemberS)
		if len(key) != 2 || pk == nil || sk == nil || pk.Value == "" || sk.Value == "" {
			t.Fatalf("scan cursor %q: %v", cur, key)
		}
	} else if !errors.Is(err, ErrInvalidCursor) {
		t.Fatalf("scan cursor %q: %v", cur, err)
	}
}

// fzThing has a field of each kind the codec plans, a version, and a schema
// history whose steps rename and derive attributes.
type fzThing struct {
	_        struct{}          `Type:"Thing" PK:"TH#{id}" SK:"TH#{n:04}" GSI1PK:"THG#{group}" GSI1SK:"{at:time}#{id}"`
	ID       string            `dynamodbav:"id"`
	N        int               `dynamodbav:"n"`
	Group    string            `dynamodbav:"group,omitempty"`
	At       time.Time         `dynamodbav:"at"`
	Small    int8              `dynamodbav:"small"`
	Big      uint64            `dynamodbav:"big"`
	Ratio    float32           `dynamodbav:"ratio"`
	Flag     bool              `dynamodbav:"flag"`
	Raw      []byte            `dynamodbav:"raw"`
	Tags     []string          `dynamodbav:"tags,stringset,omitempty"`
	Scores   []int             `dynamodbav:"scores"`
	Attrs    map[string]string `dynamodbav:"attrs"`
	When     *time.Time        `dynamodbav:"when,unixtime"`
	AsString int64             `dynamodbav:"asString,string"`
	Inner    *fzInner          `dynamodbav:"inner"`
	Version  int64             `dynamodbav:"version" singletable:"version"`
}

type fzInner struct {
	Name  string   `dynamodbav:"name"`
	Items []string `dynamodbav:"items"`
}

// fzPlain is registered without migrations, on the same table.
type fzPlain struct {
	_     struct{} `Type:"Plain" PK:"PL#{id}" SK:"PL"`
	ID    string   `dynamodbav:"id"`
	Label string   `dynamodbav:"label"`
	Count uint16   `dynamodbav:"count"`
}

type fzCollection struct {
	Thing  *fzThing  `singletable:"Thing"`
	Plains []fzPlain `singletable:"Plain"`
	Other  []RawItem `singletable:",unknown"`
}

// fzDecoders is the table and entities FuzzDecodeItem decodes through.
type fzDecoders struct {
	tbl    *Table
	things *Entity[fzThing]
	plains *Entity[fzPlain]
	coll   *Collection[fzCollection]
}

func newFzDecoders(tb testing.TB) *fzDecoders {
	tb.Helper()
	tbl, err := NewTable(offlineClient{}, "fuzz", testTableOptions)
	require.NoError(tb, err)
	steps := Migrations(Migration[fzThing]{WriteBack: WriteBackOff, Steps: []Step[fzThing]{
		{Raw: func(item RawItem) error { // v1 -> v2: "label" became "group"
			if l, ok := item["label"]; ok {
				item["group"] = l
				delete(item, "label")
			}
			return nil
		}},
		{Typed: func(v *fzThing) error { // v2 -> v3: n counts from 1
			if v.N == 0 {
				v.N = 1
			}
			if v.Small < 0 {
				return errors.New("negative small")
			}
			return nil
		}},
	}})
	d := &fzDecoders{tbl: tbl}
	d.things, err = Register[fzThing](tbl, steps)
	require.NoError(tb, err)
	d.plains = MustRegister[fzPlain](tbl)
	d.coll, err = NewCollection[fzCollection](tbl)
	require.NoError(tb, err)
	return d
}

// itemGen builds attribute maps from fuzz bytes: names drawn from the
// entities' attributes, the table's reserved attributes and arbitrary text;
// values of every kind, nested, with awkward numbers and strings.
type itemGen struct{ b []byte }

func (g *itemGen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

var (
	fzNames = []string{"PK", "SK", "Type", "GSI1PK", "GSI1SK", "_schema", "_wr0", "_wr1", "version",
		"id", "n", "group", "at", "small", "big", "ratio", "flag", "raw", "tags", "scores", "attrs", "when",
		"asString", "inner", "name", "items", "label", "count", "unknown", ""}
	fzNumbers = []string{"0", "1", "-1", "2", "3", "1.5", "1e400", "-1e400", "127", "128", "-129", "255", "65536",
		"9223372036854775807", "9223372036854775808", "18446744073709551616", "NaN", "Inf", "-Inf", "0x10",
		"1700000000", "-62135596800", "253402300800", "3.4028235e39", "abc", "", " 1", "1_000", "01"}
	fzStrings = []string{"", "x", "Thing", "Plain", "Other", "TH#a", "TH#0001", "2024-03-09T14:05:07.123456789Z",
		"2024-03-09T14:05:07+05:30", "not a time", "12", "\xff", "a#b", "\x00"}
)

func (g *itemGen) str() string {
	c := g.byte()
	if c < 128 {
		return fzStrings[int(c)%len(fzStrings)]
	}
	n := min(int(c%16), len(g.b))
	s := string(g.b[:n])
	g.b = g.b[n:]
	return s
}

func (g *itemGen) num() string {
	c := g.byte()
	if c < 200 {
		return fzNumbers[int(c)%len(fzNumbers)]
	}
	return g.str()
}

func (g *itemGen) name() string {
	c := g.byte()
	if c >= 240 {
		return g.str()
	}
	return fzNames[int(c)%len(fzNames)]
}

func (g *itemGen) av(depth int) types.AttributeValue {
	kind := g.byte() % 11
	if depth > 3 && (kind == 5 || kind == 6) {
		kind = 0
	}
	switch kind {
	case 0:
		return &types.AttributeValueMemberS{Value: g.str()}
	case 1:
		return &types.AttributeValueMemberN{Value: g.num()}
	case 2:
		return &types.AttributeValueMemberB{Value: []byte(g.str())}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: g.byte()%2 == 0}
	case 4:
		return &types.AttributeValueMemberNULL{Value: true}
	case 5:
		l := make([]types.AttributeValue, g.byte()%4)
		for i := range l {
			l[i] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberL{Value: l}
	case 6:
		m := map[string]types.AttributeValue{}
		for range g.byte() % 4 {
			m[g.name()] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberM{Value: m}
	case 7:
		ss := make([]string, g.byte()%3)
		for i := range ss {
			ss[i] = g.str()
		}
		return &types.AttributeValueMemberSS{Value: ss}
	case 8:
		ns := make([]string, g.byte()%3)
		for i := range ns {
			ns[i] = g.num()
		}
		return &types.AttributeValueMemberNS{Value: ns}
	case 9:
		bs := make([][]byte, g.byte()%3)
		for i := range bs {
			bs[i] = []byte(g.str())
		}
		return &types.AttributeValueMemberBS{Value: bs}
	}
	return nil // a nil value in the map
}

// item builds a top-level item. Attribute names that are equal ignoring case
// are left out: which of two such attributes decodes last depends on map order,
// in attributevalue as here (see the codec's FuzzDecode). The type attribute is
// one of the registered discriminators most of the time.
func (g *itemGen) item() map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	seen := map[string]bool{}
	for range g.byte() % 20 {
		k := g.name()
		if seen[strings.ToUpper(k)] {
			continue
		}
		seen[strings.ToUpper(k)] = true
		m[k] = g.av(0)
	}
	switch c := g.byte(); {
	case c < 100:
		m["Type"] = sAV("Thing")
	case c < 160:
		m["Type"] = sAV("Plain")
	}
	return m
}

// FuzzDecodeItem decodes arbitrary attribute maps, the type, key, schema,
// version and receipt attributes included, through every read path: an
// entity's (with its migration steps), a collection query's, and a
// Collection's. None panics; every error names the package; an entity that
// decodes encodes back to an item that decodes to the same encoding.
func FuzzDecodeItem(f *testing.F) {
	d := newFzDecoders(f)
	f.Add([]byte{})
	f.Add([]byte{5, 0, 2, 1, 0, 12, 2, 1, 1, 0, 3, 1, 4, 8, 1, 6, 50})
	f.Add([]byte{8, 5, 1, 20, 6, 1, 2, 21, 7, 2, 2, 2, 24, 6, 3, 25, 0, 7, 10, 0, 1})
	f.Add([]byte("\x0a\x05\x01\x02\x06\x01\x04\x0d\x00\x05\x0e\x07\x02\x01\x02\x17\x06\x02\x1b\x00\x01\x1c\x05\x02\x00\x05\x00\x06"))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		item := (&itemGen{b: data}).item()
		snapshot := cloneItem(item)
		checkErr := func(path string, err error) {
			t.Helper()
			if err != nil && !strings.HasPrefix(err.Error(), "singletable: ") {
				t.Fatalf("%s: error without the package's prefix: %v", path, err)
			}
		}

		v, err := decodeAs(ctx, d.things, item, true)
		checkErr("Entity.decode", err)
		if err == nil {
			checkReencode(t, d.things.x.info.plan, v)
		}
		p, err := decodeAs(ctx, d.plains, item, true)
		checkErr("Entity.decode (plain)", err)
		if err == nil {
			checkReencode(t, d.plains.x.info.plan, p)
		}
		for _, mode := range []UnknownTypes{UnknownFail, UnknownSkip, UnknownCollect} {
			plan := readPlan{t: d.tbl, unknown: mode, whole: true}
			_, _, err := plan.readAny(ctx, item)
			checkErr("readPlan.readAny", err)
			var c fzCollection
			err = d.coll.decoder(ctx, &c, &plan).add([]map[string]types.AttributeValue{item, item})
			checkErr("Collection", err)
		}
		if !reflect.DeepEqual(item, snapshot) {
			t.Fatalf("decoding modified the item:\n%s\nwas\n%s", fmtItem(item), fmtItem(snapshot))
		}
	})
}

// checkReencode checks that a decoded value encodes (when it can) to attributes
// that decode again, and that encoding and decoding settle after one round: the
// format's own normalisations (an empty set stored as NULL, a NULL decoded as
// nil) apply once.
func checkReencode[T any](t *testing.T, plan *codec.Plan, v T) {
	t.Helper()
	round := func(x T) (map[string]types.AttributeValue, T, bool) {
		var back T
		m, err := plan.Encode(reflect.ValueOf(&x).Elem())
		if err != nil {
			return nil, back, false // a value the decoder accepts and the encoder refuses, as in attributevalue
		}
		if err := plan.Decode(m, reflect.ValueOf(&back).Elem()); err != nil {
			t.Fatalf("decoding the encoding %#v of %+v: %v", m, x, err)
		}
		return m, back, true
	}
	_, v2, ok := round(v)
	if !ok {
		return
	}
	second, v3, ok := round(v2)
	if !ok {
		t.Fatalf("re-encoding %+v failed", v2)
	}
	third, _, ok := round(v3)
	if !ok || !maps.EqualFunc(second, third, func(a, b types.AttributeValue) bool { return reflect.DeepEqual(a, b) }) {
		t.Fatalf("encoding does not settle:\n%#v\n%#v", second, third)
	}
}

// fmtItem prints an attribute map with its values, not their addresses.
func fmtItem(m map[string]types.AttributeValue) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%q: %#v\n", k, m[k])
	}
	return b.String()
}

// cloneItem deep-copies an attribute map.
func cloneItem(m map[string]types.AttributeValue) map[string]types.AttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = cloneAV(v)
	}
	return out
}

func cloneAV(av types.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: bytes.Clone(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberBS:
		bs := slices.Clone(v.Value)
		for i, b := range bs {
			bs[i] = bytes.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *types.AttributeValueMemberL:
		l := slices.Clone(v.Value)
		for i, e := range l {
			l[i] = cloneAV(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: cloneItem(v.Value)}
	}
	return av
}

// fzKeyed has a key of every placeholder format.
type fzKeyed struct {
	_      struct{}  `Type:"Keyed" PK:"K#{tenant}#{n:06}#{plain}" SK:"{at:time}#{day:date}#{sec:unix}#{ms:unixms}#{rev:rev}#{u}#{id}"`
	Tenant string    `dynamodbav:"tenant"`
	N      int64     `dynamodbav:"n"`
	Plain  int32     `dynamodbav:"plain"`
	At     time.Time `dynamodbav:"at"`
	Day    time.Time `dynamodbav:"day"`
	Sec    time.Time `dynamodbav:"sec"`
	Ms     time.Time `dynamodbav:"ms"`
	Rev    time.Time `dynamodbav:"rev"`
	U      uint8     `dynamodbav:"u"`
	ID     string    `dynamodbav:"id"`
}

// FuzzParseKey parses arbitrary keys with ParseKey, as a stream consumer does
// with the keys of records it did not write. None panics; a key that parses is
// one the templates render from the parsed value, byte for byte: no two keys
// parse to one value.
func FuzzParseKey(f *testing.F) {
	tbl, err := NewTable(offlineClient{}, "fuzz", testTableOptions)
	require.NoError(f, err)
	keyed := MustRegister[fzKeyed](tbl)
	orders := MustRegister[tOrder](tbl)
	at := time.Date(2024, 5, 1, 9, 30, 0, 123456700, time.UTC)
	good := fzKeyed{Tenant: "t", N: 42, Plain: -7, At: at, Day: at.Truncate(24 * time.Hour), Sec: at.Truncate(time.Second), Ms: at.Truncate(time.Millisecond), Rev: at, U: 200, ID: "x"}
	_, ks, err := keyed.x.info.primaryKey(reflectValue(&good))
	require.NoError(f, err)
	f.Add(ks["PK"], ks["SK"]) // more in testdata/fuzz/FuzzParseKey
	f.Add("CUST#", "ORDER#")
	f.Fuzz(func(t *testing.T, pk, sk string) {
		if len(pk) > MaxPartitionKeyBytes || len(sk) > MaxSortKeyBytes {
			return // DynamoDB holds no such key
		}
		check := func(name string, parse func() (reflect.Value, error), info *entityInfo) {
			v, err := parse()
			if err != nil {
				if !errors.Is(err, ErrInvalidKey) {
					t.Fatalf("%s: ParseKey(%q, %q): error %v is not ErrInvalidKey", name, pk, sk, err)
				}
				return
			}
			_, got, err := info.primaryKey(v)
			if err != nil {
				t.Fatalf("%s: ParseKey(%q, %q) = %+v, which renders no key: %v", name, pk, sk, v.Interface(), err)
			}
			if got["PK"] != pk || got["SK"] != sk {
				t.Fatalf("%s: ParseKey(%q, %q) = %+v, which renders (%q, %q)", name, pk, sk, v.Interface(), got["PK"], got["SK"])
			}
		}
		key := map[string]string{"PK": pk, "SK": sk}
		check("fzKeyed", func() (reflect.Value, error) {
			v, err := keyed.ParseKey(key)
			return reflect.ValueOf(&v).Elem(), err
		}, keyed.x.info)
		check("tOrder", func() (reflect.Value, error) {
			v, err := orders.ParseKey(key)
			return reflect.ValueOf(&v).Elem(), err
		}, orders.x.info)
	})
}

// decodeAs is the engine's decodeWith for a T.
func decodeAs[T any](ctx context.Context, e *Entity[T], item map[string]types.AttributeValue, writeBack bool) (T, error) {
	var v T
	err := e.core().decodeWith(ctx, item, writeBack, reflect.ValueOf(&v).Elem())
	return v, err
}
