package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/avtest"
	"github.com/singletable/singletable/internal/codec"
)

// The differential tests run one response body through the SDK's path (its deserializer, then the codec's
// Plan.DecodeIgnoring on each item of the entity's type) and through the wire path (a Sink, the codec
// for the items it leaves to the SDK), and require identical Go values, identical errors and identical
// rest of the output.

// itemResult is what a caller gets for one item.
type itemResult struct {
	state string // "decoded", "skipped" (another type), "missing" (TransactGetItems without an item)
	v     kitchen
	err   string
	wire  bool // decoded on the wire
	// det: decoding the attribute values gives the same result every time. It does not when Go's map
	// order decides (two attributes for one field, one matching only ignoring case; which of two bad
	// attributes fails first): those items the wire path must leave to the SDK.
	det bool
}

type result struct {
	err   string
	items []itemResult
	rest  any // the output's other members
	wire  int // items decoded on the wire
}

type harness struct {
	c       *dynamodb.Client
	h       *canned
	plan    *codec.Plan
	ignored *codec.Ignored
	target  *Target
}

func newHarness(tb testing.TB) *harness {
	p := planOf[kitchen](tb)
	ig := p.Ignore("PK", "SK", "Type", "_schema")
	tg, err := NewTarget(p, ig, "Type", "Kitchen", "", 0, nil, 1)
	if err != nil {
		tb.Fatal(err)
	}
	h := &canned{}
	return &harness{c: client(h), h: h, plan: p, ignored: ig, target: tg}
}

// decodeRaw is the attribute-value path for one item.
func (x *harness) decodeRaw(item map[string]types.AttributeValue) itemResult {
	if s, ok := item["Type"].(*types.AttributeValueMemberS); !ok || s.Value != "Kitchen" {
		return itemResult{state: "skipped"}
	}
	once := func() itemResult {
		var k kitchen
		err := x.plan.DecodeIgnoring(item, reflect.ValueOf(&k).Elem(), x.ignored)
		r := itemResult{state: "decoded", v: k}
		if err != nil {
			r.err = err.Error()
		}
		return r
	}
	r := once()
	r.det = true
	for range 24 {
		if again := once(); again.err != r.err || !avtest.SameValue(reflect.ValueOf(again.v), reflect.ValueOf(r.v)) {
			r.det = false
		}
	}
	return r
}

// run calls op with body as its response, with the wire path or not. A panic (the SDK's deserializer
// panics on some malformed bodies, and the wire path leaves malformed bodies to it) is the result's
// error.
func (x *harness) run(op Op, body []byte, wire bool) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{err: fmt.Sprint("panic: ", r)}
		}
	}()
	x.h.answer(body)
	var sl slots[kitchen]
	s := &Sink{Op: op, Table: "tbl", Target: x.target, Slots: &sl, Keep: []string{"SK"}}
	var opts []func(*dynamodb.Options)
	if wire {
		opts = append(opts, s.Option())
	}
	var raws []map[string]types.AttributeValue
	var err error
	var missing []bool // TransactGetItems
	switch op {
	case GetItem:
		var out *dynamodb.GetItemOutput
		out, err = x.c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tableName, Key: key}, opts...)
		if err == nil {
			if out.Item != nil {
				raws = append(raws, out.Item)
			}
			res.rest = out.ConsumedCapacity
		}
	case Query:
		var out *dynamodb.QueryOutput
		out, err = x.c.Query(ctx, &dynamodb.QueryInput{TableName: tableName}, opts...)
		if err == nil {
			raws = out.Items
			res.rest = []any{out.Count, out.ScannedCount, out.LastEvaluatedKey, out.ConsumedCapacity}
		}
	case BatchGetItem:
		var out *dynamodb.BatchGetItemOutput
		out, err = x.c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"tbl": {Keys: []map[string]types.AttributeValue{key}}}}, opts...)
		if err == nil {
			raws = out.Responses["tbl"]
			res.rest = []any{len(out.Responses), out.UnprocessedKeys, out.ConsumedCapacity}
		}
	case TransactGetItems:
		var out *dynamodb.TransactGetItemsOutput
		out, err = x.c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: tableName, Key: key}}}}, opts...)
		if err == nil {
			for _, r := range out.Responses {
				raws = append(raws, r.Item)
				missing = append(missing, r.Item == nil)
			}
			res.rest = out.ConsumedCapacity
		}
	}
	if err != nil {
		res.err = err.Error()
		return res
	}
	if wire && s.Decoded() {
		if op == BatchGetItem {
			res.rest.([]any)[0] = 1 // the wire body names the table only when items are left to the SDK
		}
		k := 0
		for _, e := range s.Entries() {
			switch {
			case e.Target != nil:
				res.items = append(res.items, itemResult{state: "decoded", v: sl.items[k], wire: true})
				k++
				res.wire++
			case e.Raw < 0:
				res.items = append(res.items, itemResult{state: "missing"})
			default:
				res.items = append(res.items, x.decodeRaw(raws[e.Raw]))
			}
		}
		return res
	}
	if op == BatchGetItem {
		res.rest.([]any)[0] = 1
	}
	for i, item := range raws {
		if missing != nil && missing[i] {
			res.items = append(res.items, itemResult{state: "missing"})
			continue
		}
		res.items = append(res.items, x.decodeRaw(item))
	}
	return res
}

// compare runs body both ways and reports any difference.
func (x *harness) compare(tb testing.TB, op Op, body []byte) result {
	tb.Helper()
	want := x.run(op, body, false)
	got := x.run(op, body, true)
	if got.err != want.err {
		tb.Fatalf("%s: error\n wire: %s\n  SDK: %s\nbody: %s", op, got.err, want.err, body)
	}
	if !reflect.DeepEqual(got.rest, want.rest) {
		tb.Fatalf("%s: rest of the output\n wire: %#v\n  SDK: %#v\nbody: %s", op, got.rest, want.rest, body)
	}
	if len(got.items) != len(want.items) {
		tb.Fatalf("%s: %d items on the wire, %d through the SDK\nbody: %s", op, len(got.items), len(want.items), body)
	}
	for i := range got.items {
		g, w := got.items[i], want.items[i]
		if g.wire && !w.det {
			tb.Fatalf("%s: item %d decoded on the wire, but the SDK's path decodes it differently from run to run\nbody: %s", op, i, body)
		}
		if !g.wire && (!w.det || !g.det) {
			// Both the SDK's path, which leaves the result to Go's map order. Either run may look
			// deterministic by chance: a small map's iteration order is skewed (it starts at one of 8
			// slots), so 25 runs of one order are not rare. Only when both look so are they compared.
			continue
		}
		if w.err != "" {
			// On an error the value is partly decoded, in an order that is Go's map order.
			w.v, g.v = kitchen{}, kitchen{}
		}
		if g.state != w.state || g.err != w.err || !avtest.SameValue(reflect.ValueOf(g.v), reflect.ValueOf(w.v)) {
			tb.Fatalf("%s: item %d\n wire: %s %q %+v\n  SDK: %s %q %+v\nbody: %s", op, i, g.state, g.err, g.v, w.state, w.err, w.v, body)
		}
	}
	return got
}

// bodyFor wraps items in op's response, with the other members DynamoDB sends.
func bodyFor(e *jsonEnc, op Op, items []map[string]types.AttributeValue) []byte {
	var b bytes.Buffer
	list := func() {
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(e.item(nil, it))
		}
		b.WriteByte(']')
	}
	switch op {
	case GetItem:
		b.WriteString(`{"ConsumedCapacity":{"CapacityUnits":0.5,"TableName":"tbl"}`)
		if len(items) > 0 {
			b.WriteString(`,"Item":`)
			b.Write(e.item(nil, items[0]))
		}
		b.WriteByte('}')
	case Query:
		fmt.Fprintf(&b, `{"Count":%d,"Items":`, len(items))
		list()
		fmt.Fprintf(&b, `,"LastEvaluatedKey":{"PK":{"S":"p\u00e9"},"SK":{"S":"s"}},"ScannedCount":%d}`, len(items)+3)
	case BatchGetItem:
		b.WriteString(`{"Responses":{"tbl":`)
		list()
		b.WriteString(`},"UnprocessedKeys":{"tbl":{"Keys":[{"PK":{"S":"a"},"SK":{"S":"b"}}]}},"ConsumedCapacity":[{"CapacityUnits":1,"TableName":"tbl"}]}`)
	case TransactGetItems:
		b.WriteString(`{"Responses":[`)
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			if i%3 == 2 {
				b.WriteString(`{}`)
				continue
			}
			b.WriteString(`{"Item":`)
			b.Write(e.item(nil, it))
			b.WriteByte('}')
		}
		b.WriteString(`]}`)
	}
	return b.Bytes()
}

var ops = []Op{GetItem, Query, BatchGetItem, TransactGetItems}

// TestDifferential: random kitchen items, some of them mutated (attributes of unexpected types, numbers
// at DynamoDB's limits and beyond what fields hold, names matching fields ignoring case, times that do
// not parse), some of another type, written with random whitespace, escapes and member order, through
// every operation.
func TestDifferential(t *testing.T) {
	x := newHarness(t)
	iterations := 1000
	if testing.Short() {
		iterations = 150
	}
	decoded, total := 0, 0
	for i := range iterations {
		r := rand.New(rand.NewPCG(uint64(i), 20))
		g := &gen{r: r}
		e := &jsonEnc{r: r, plain: r.IntN(4) == 0, names: r.IntN(8) != 0}
		items := make([]map[string]types.AttributeValue, 1+r.IntN(4))
		for j := range items {
			items[j] = g.kitchenItem(r.IntN(2) == 0)
			if r.IntN(10) == 0 {
				items[j]["Type"] = &types.AttributeValueMemberS{Value: "Other"}
			}
		}
		op := ops[i%len(ops)]
		res := x.compare(t, op, bodyFor(e, op, items))
		decoded += res.wire
		total += len(res.items)
	}
	t.Logf("%d of %d items decoded on the wire", decoded, total)
	if decoded < total/4 {
		t.Errorf("only %d of %d items decoded on the wire: the test proves little", decoded, total)
	}
}

// TestDifferentialPlain: unmutated items of plain types decode on the wire, every one.
func TestDifferentialPlain(t *testing.T) {
	x := newHarness(t)
	for i := range 300 {
		r := rand.New(rand.NewPCG(uint64(i), 21))
		g := &gen{r: r}
		item := g.kitchenItem(false)
		for _, a := range avOnly {
			delete(item, a)
		}
		op := ops[i%len(ops)]
		res := x.compare(t, op, bodyFor(&jsonEnc{r: r, names: true}, op, []map[string]types.AttributeValue{item}))
		if res.wire != 1 && !hasOdd(item) {
			t.Fatalf("%s: item %d left to the SDK: %s", op, i, bodyFor(&jsonEnc{plain: true}, op, []map[string]types.AttributeValue{item}))
		}
	}
}

// hasOdd reports values the wire path leaves to the SDK by design even in unmutated items: numbers
// that do not fit (a float32 beyond its range).
func hasOdd(item map[string]types.AttributeValue) bool {
	if n, ok := item["f32"].(*types.AttributeValueMemberN); ok {
		if f, err := strconv.ParseFloat(n.Value, 64); err != nil || f > 3.4028234663852886e38 || f < -3.4028234663852886e38 {
			return true
		}
	}
	return false
}

// TestDifferentialOddities: attribute values and response shapes that the SDK reads in its own ways,
// spliced into a plain item: each must give what the SDK's path gives.
func TestDifferentialOddities(t *testing.T) {
	x := newHarness(t)
	base := `"PK":{"S":"p"},"SK":{"S":"s"},"Type":{"S":"Kitchen"},"s":{"S":"x"},"i":{"N":"1"}`
	attrs := []string{
		`"s":{"S":"dup"}`,       // a field twice
		`"S":{"S":"case"}`,      // a field by another case, beside its own name
		`"CASEFIELD":{"S":"c"}`, // a field only by another case
		`"casefield":{"S":"c"},"CaseField":{"S":"d"}`,
		`"i8":{"N":"128"}`, `"u8":{"N":"-1"}`, `"f32":{"N":"1e39"}`, `"i":{"N":"1.5"}`, `"i":{"S":"1"}`, `"is":{"S":"12"}`, `"is":{"N":"12"}`,
		`"i64":{"N":"99999999999999999999999999999999999999"}`, `"f64":{"N":"1E-130"}`, `"f64":{"N":"9.9999999999999999999999999999999999999E+125"}`,
		`"f64":{"N":"NaN"}`, `"f64":{"N":"Infinity"}`, `"u64":{"N":"18446744073709551615"}`,
		`"t":{"N":"1700000000"}`, `"t":{"S":"2024-03-09T14:05:07+01:00"}`, `"t":{"S":"yesterday"}`, `"tp":{"NULL":true}`, `"tu":{"S":"2024-03-09T14:05:07Z"}`,
		`"s":{"N":"12"}`, `"s":{"B":"AAEC"}`, `"s":{"NULL":true}`, `"s":{"NULL":false}`, `"s":{"BOOL":true}`,
		`"s":{"S":null}`, `"s":{"S":null,"N":"1"}`, `"s":{"S":"a","N":"1"}`, `"s":{"X":"1"}`, `"s":{}`, `"s":null`, `"s":{"S":1}`, `"s":{"\u0053":"esc"}`,
		`"s":{"S":"\ud800 lone"}`, `"s":{"S":"\ud83d\ude00 pair"}`, `"s":{"S":"\u00e9\/\b\f\n\r\t"}`, `"s":{"S":"raw \xff byte"}`,
		`"\u0073":{"S":"escaped name"}`, `"other":{"X":"unknown member in a skipped attribute"}`, `"other":{"S":"a","N":"1"}`,
		`"other":{"L":[null]}`, `"other":{"L":[{"S":"x"},{"NULL":true}]}`, `"other":{"B":"!!"}`, `"other":{"M":{"a":{"S":1}}}`, `"other":{"SS":["a",null]}`,
		`"bytes":{"B":"AAEC"}`, `"bytes":{"B":""}`, `"bytes":{"B":"AA=="}`, `"bytes":{"B":"A\nAEC"}`, `"bytes":{"B":"!"}`, `"bytes":{"S":"AAEC"}`,
		`"bs":{"BS":["AA==",""]}`, `"bs":{"L":[{"B":"AA=="}]}`, `"strs":{"L":[]}`, `"strs":{"SS":["a","b"]}`, `"strs":{"NS":["1","2"]}`, `"strs":{"L":[{"N":"1"},{"NULL":true},{"S":"x"}]}`,
		`"strs":{"L":[{"BOOL":true}]}`, `"ns":{"NS":["1","x"]}`, `"ns":{"NS":["1","2"]}`, `"ns":{"SS":["1"]}`, `"ns":{"L":[{"N":"3"}]}`, `"u8s":{"NS":["65536"]}`, `"fns":{"NS":["1e39","2"]}`,
		`"m":{"M":{}}`, `"m":{"M":{"a":{"S":"1"},"a":{"S":"2"}}}`, `"m":{"M":{"a":{"N":"1"},"b":{"NULL":true}}}`, `"m":{"M":{"a":{"BOOL":true}}}`, `"m":{"L":[]}`,
		`"mi":{"M":{"a":{"N":"1"},"b":{"N":"x"}}}`, `"mp":{"M":{"a":{"NULL":true},"b":{"N":"2"}}}`, `"ms":{"M":{"OPEN":{"N":"1"}}}`, `"msl":{"M":{"l":{"L":[{"S":"a"}]},"n":{"NULL":true}}}`,
		`"inner":{"M":{"x":{"S":"a"},"X":{"S":"b"}}}`, `"inner":{"M":{"CASE":{"S":"c"}}}`, `"inner":{"M":{"p":{"M":{"x":{"S":"deep"}}},"l":{"L":[{"M":{"y":{"N":"2"}}}]}}}`,
		`"inner":{"NULL":true}`, `"innerP":{"M":{}}`, `"innerP":{"NULL":true}`, `"innerPs":{"L":[{"NULL":true},{"M":{"x":{"S":"y"}}}]}`, `"innerMap":{"M":{"k":{"M":{"x":{"S":"v"}}}}}`,
		`"id":{"S":"embedded"}`, `"note":{"S":"behind a nil embedded pointer"}`, `"note":{"NULL":true}`,
		`"um":{"S":"u"}`, `"ump":{"NULL":true}`, `"any":{"L":[]}`, `"arr":{"L":[{"N":"1"}]}`, `"ums":{"L":[]}`, `"ums":{"NULL":true}`,
		`"Type":{"S":"Kitchen"}`, `"Type":{"S":"Other"}`, `"Type":{"N":"1"}`, `"SK":{"S":"again"}`, `"SK":{"N":"1"}`,
		`"matrix":{"L":[{"L":[{"N":"1"}]},{"NULL":true},{"L":[]}]}`, `"times":{"L":[{"S":"2024-03-09T14:05:07Z"},{"N":"0"}]}`, `"bools":{"L":[{"BOOL":false}]}`,
		`"ptrStrs":{"L":[{"S":"a"},{"NULL":true}]}`, `"bp":{"BOOL":false}`, `"sp":{"S":""}`, `"ip":{"N":"-0"}`, `"status":{"N":"5"}`, `"num":{"N":"1.50"}`,
		` "s" : { "S" : "spaced" } `,
	}
	items := map[string]string{}
	for _, a := range attrs {
		items[a] = "{" + base + "," + a + "}"
		items[a+" first"] = "{" + a + "," + base + "}"
	}
	for name, item := range items {
		for _, op := range ops {
			var body string
			switch op {
			case GetItem:
				body = `{"Item":` + item + `}`
			case Query:
				body = `{"Count":2,"Items":[` + item + `,{` + base + `}],"ScannedCount":2}`
			case BatchGetItem:
				body = `{"Responses":{"tbl":[{` + base + `},` + item + `]},"UnprocessedKeys":{}}`
			case TransactGetItems:
				body = `{"Responses":[{"Item":` + item + `},{}]}`
			}
			t.Run(name, func(t *testing.T) { x.compare(t, op, []byte(body)) })
		}
	}
}

// TestDifferentialResponses: response shapes the wire path leaves to the SDK, or reads.
func TestDifferentialResponses(t *testing.T) {
	x := newHarness(t)
	item := `{"PK":{"S":"p"},"SK":{"S":"s"},"Type":{"S":"Kitchen"},"s":{"S":"x"}}`
	bodies := map[Op][]string{
		GetItem: {``, `{}`, `null`, `{"Item":null}`, `{"Item":{}}`, `{"Item":` + item + `} trailing`, `{"Item":` + item + `,"Item":` + item + `}`,
			`{"Item":` + item + `,"Unknown":1}`, `{"Unknown":null,"Item":` + item + `}`, `{"Item":[` + item + `]}`, `{"\u0049tem":` + item + `}`,
			`{"Item":` + item + `,"ConsumedCapacity":null}`, `{"ConsumedCapacity":{"CapacityUnits":"x"},"Item":` + item + `}`, `{"Item":` + item,
			`{"Item":` + item + `}` + "\n", ` {"Item":` + item + `} `, `{"Item":{"s":{"S":"x"}}}`, `{"Item":{"Type":{"S":"Kitchen"},"SK":{"S":"s"},"z":` + deep(200) + `}}`,
			`{"Item":{"Type":{"S":"Kitchen"},"SK":{"S":"s"},"z":` + deep(30) + `}}`},
		Query: {`{"Items":[]}`, `{"Items":null}`, `{"Items":[null]}`, `{"Items":[1]}`, `{"Count":"2","Items":[` + item + `]}`, `{"Count":1.5,"Items":[` + item + `]}`,
			`{"Count":2,"Items":[` + item + `,` + item + `],"ScannedCount":2,"LastEvaluatedKey":null}`, `{"Items":[` + item + `],"LastEvaluatedKey":{"PK":{"S":"a"},"X":{"N":"1"}}}`,
			`{"Items":[` + item + `],"Items":[]}`, `{"Items":[` + item + `,]}`, `{"Items":[` + item + `] "Count":1}`},
		BatchGetItem: {`{"Responses":{}}`, `{"Responses":{"other":[` + item + `]}}`, `{"Responses":{"tbl":[` + item + `],"other":[]}}`, `{"Responses":{"tbl":null}}`,
			`{"Responses":{"tbl":[` + item + `]},"UnprocessedKeys":{"tbl":{"Keys":[{"PK":{"S":"a"}}],"ConsistentRead":true}}}`, `{"Responses":{"t\u0062l":[` + item + `]}}`},
		TransactGetItems: {`{"Responses":[]}`, `{"Responses":[{}]}`, `{"Responses":[null]}`, `{"Responses":[{"Item":null}]}`, `{"Responses":[{"Item":` + item + `,"Other":1}]}`,
			`{"Responses":[{"Item":` + item + `},{"Item":` + item + `}],"ConsumedCapacity":[{"CapacityUnits":2}]}`},
	}
	for op, bs := range bodies {
		for _, b := range bs {
			t.Run(op.String()+" "+b, func(t *testing.T) { x.compare(t, op, []byte(b)) })
		}
	}
}

// deep returns an attribute value nested n levels deep.
func deep(n int) string {
	var b bytes.Buffer
	for range n {
		b.WriteString(`{"L":[`)
	}
	b.WriteString(`{"S":"x"}`)
	for range n {
		b.WriteString(`]}`)
	}
	return b.String()
}
