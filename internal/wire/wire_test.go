package wire

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

type order struct {
	CustomerID string            `dynamodbav:"customerId"`
	OrderID    string            `dynamodbav:"orderId"`
	Status     string            `dynamodbav:"status"`
	CreatedAt  time.Time         `dynamodbav:"createdAt"`
	Tags       []string          `dynamodbav:"tags"`
	Attrs      map[string]string `dynamodbav:"attrs"`
	Version    int64             `dynamodbav:"version"`
	Total      float64           `dynamodbav:"total"`
	Paid       bool              `dynamodbav:"paid"`
	Note       *string           `dynamodbav:"note"`
}

func sampleOrder(i int) order {
	note := "leave at the door"
	return order{
		CustomerID: "cust-1", OrderID: "ord-" + string(rune('a'+i%26)), Status: "SHIPPED",
		CreatedAt: time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.UTC),
		Tags:      []string{"gift", "express"}, Attrs: map[string]string{"channel": "web"},
		Version: int64(i), Total: 129.95, Paid: true, Note: &note,
	}
}

// stored is o as the library stores it: with keys, type and schema.
func stored(tb testing.TB, o order, typ string, schema int) map[string]types.AttributeValue {
	tb.Helper()
	m, err := attributevalue.MarshalMap(o)
	if err != nil {
		tb.Fatal(err)
	}
	m["PK"] = &types.AttributeValueMemberS{Value: "CUST#" + o.CustomerID}
	m["SK"] = &types.AttributeValueMemberS{Value: "ORDER#" + o.OrderID}
	m["Type"] = &types.AttributeValueMemberS{Value: typ}
	if schema > 0 {
		m["_schema"] = &types.AttributeValueMemberN{Value: strconv.Itoa(schema)}
	}
	return m
}

func orderTarget(tb testing.TB) *Target {
	tb.Helper()
	p := planOf[order](tb)
	t, err := NewTarget(p, p.Ignore("PK", "SK", "Type", "_schema"), "Type", "Order", "", 0, nil, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func queryBody(e *jsonEnc, items []map[string]types.AttributeValue, extra string) []byte {
	b := []byte(`{"Count":` + strconv.Itoa(len(items)) + `,"Items":[`)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.item(b, it)
	}
	b = append(b, `],"ScannedCount":`+strconv.Itoa(len(items))...)
	return append(append(b, extra...), '}')
}

func TestGetItem(t *testing.T) {
	e := &jsonEnc{plain: true}
	h := &canned{}
	c := client(h)
	want := sampleOrder(3)
	h.answer(append(append([]byte(`{"ConsumedCapacity":{"TableName":"tbl","CapacityUnits":0.5},"Item":`), e.item(nil, stored(t, want, "Order", 0))...), '}'))
	var sl slots[order]
	s := &Sink{Op: GetItem, Target: orderTarget(t), Slots: &sl}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tableName, Key: key}, s.Option())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Decoded() || len(s.Entries()) != 1 || s.Entries()[0].Target == nil || len(sl.items) != 1 {
		t.Fatalf("decoded %v, entries %+v, %d values", s.Decoded(), s.Entries(), len(sl.items))
	}
	if !reflect.DeepEqual(sl.items[0], want) {
		t.Errorf("got %+v\nwant %+v", sl.items[0], want)
	}
	if out.Item != nil || out.ConsumedCapacity == nil || *out.ConsumedCapacity.CapacityUnits != 0.5 {
		t.Errorf("the SDK's output: item %v, capacity %+v", out.Item, out.ConsumedCapacity)
	}
}

func TestQueryEntries(t *testing.T) {
	e := &jsonEnc{plain: true}
	h := &canned{}
	c := client(h)
	items := []map[string]types.AttributeValue{
		stored(t, sampleOrder(0), "Order", 0),
		stored(t, sampleOrder(1), "Customer", 0), // another type: the SDK's
		stored(t, sampleOrder(2), "Order", 0),
	}
	items[2]["version"] = &types.AttributeValueMemberS{Value: "x"} // a mismatch: the SDK's
	items = append(items, stored(t, sampleOrder(3), "Order", 0))
	h.answer(queryBody(e, items, `,"LastEvaluatedKey":{"PK":{"S":"CUST#cust-1"},"SK":{"S":"ORDER#d"}}`))
	var sl slots[order]
	s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl, Keep: []string{"SK"}}
	out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option())
	if err != nil {
		t.Fatal(err)
	}
	ents := s.Entries()
	if !s.Decoded() || len(ents) != 4 {
		t.Fatalf("decoded %v, entries %+v", s.Decoded(), ents)
	}
	want := []Entry{{Target: s.Target, Raw: -1}, {Raw: 0}, {Raw: 1}, {Target: s.Target, Raw: -1}}
	if !reflect.DeepEqual(ents, want) {
		t.Errorf("entries %+v, want %+v", ents, want)
	}
	if len(out.Items) != 2 || out.Count != 4 || out.ScannedCount != 4 || len(out.LastEvaluatedKey) != 2 {
		t.Errorf("SDK output: %d items, count %d/%d, last %v", len(out.Items), out.Count, out.ScannedCount, out.LastEvaluatedKey)
	}
	if got := s.Keys(3); len(got) != 1 || got[0] != "ORDER#ord-d" {
		t.Errorf("keys of entry 3: %q", got)
	}
	if !reflect.DeepEqual(sl.items, []order{sampleOrder(0), sampleOrder(3)}) {
		t.Errorf("values %+v", sl.items)
	}
}

func TestChecksum(t *testing.T) {
	e := &jsonEnc{plain: true}
	body := queryBody(e, []map[string]types.AttributeValue{stored(t, sampleOrder(0), "Order", 0)}, "")
	tgt := orderTarget(t)
	run := func(h *canned, opts ...func(*dynamodb.Options)) (*Sink, []order, error) {
		var sl slots[order]
		s := &Sink{Op: Query, Target: tgt, Slots: &sl}
		_, err := client(h, opts...).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option())
		return s, sl.items, err
	}
	t.Run("mismatch is retried, then fails", func(t *testing.T) {
		h := &canned{crc: "12345"}
		h.answer(body)
		_, _, err := run(h, func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		})
		var ce *ChecksumError
		if !errors.As(err, &ce) || h.calls != 3 {
			t.Fatalf("err %v after %d calls; want a ChecksumError after 3", err, h.calls)
		}
	})
	t.Run("mismatch once, then right", func(t *testing.T) {
		h := &canned{badCalls: 1}
		h.answer(body)
		s, items, err := run(h, func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		})
		if err != nil || !s.Decoded() || len(items) != 1 || h.calls != 2 {
			t.Fatalf("err %v, decoded %v, %d items after %d calls", err, s.Decoded(), len(items), h.calls)
		}
	})
	t.Run("gzip", func(t *testing.T) {
		h := &canned{gzip: true}
		h.answer(body)
		s, items, err := run(h, func(o *dynamodb.Options) { o.EnableAcceptEncodingGzip = true })
		if err != nil || !s.Decoded() || len(items) != 1 {
			t.Fatalf("err %v, decoded %v, %d items", err, s.Decoded(), len(items))
		}
	})
	t.Run("no header", func(t *testing.T) {
		h := &canned{crc: "-"}
		h.answer(body)
		s, items, err := run(h)
		if err != nil || !s.Decoded() || len(items) != 1 {
			t.Fatalf("err %v, decoded %v, %d items", err, s.Decoded(), len(items))
		}
	})
	t.Run("validation disabled", func(t *testing.T) {
		h := &canned{crc: "12345"}
		h.answer(body)
		s, items, err := run(h, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
		if err != nil || !s.Decoded() || len(items) != 1 {
			t.Fatalf("err %v, decoded %v, %d items", err, s.Decoded(), len(items))
		}
	})
}

func TestErrorsStayTheSDKs(t *testing.T) {
	h := &canned{status: 400}
	h.answer([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`))
	var sl slots[order]
	s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl}
	_, err := client(h).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option())
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) || s.Decoded() {
		t.Fatalf("err %v (%T), decoded %v", err, err, s.Decoded())
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("api error %v", ae)
	}
}

func TestCollectionLookup(t *testing.T) {
	e := &jsonEnc{plain: true}
	h := &canned{}
	kp := planOf[kitchen](t)
	kt, err := NewTarget(kp, kp.Ignore("PK", "SK", "Type"), "Type", "Kitchen", "", 0, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	ot := orderTarget(t)
	items := []map[string]types.AttributeValue{
		stored(t, sampleOrder(0), "Order", 0),
		{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "k"}, "Type": &types.AttributeValueMemberS{Value: "Kitchen"}, "s": &types.AttributeValueMemberS{Value: "kitchen"}},
		stored(t, sampleOrder(1), "Unknown", 0),
		{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "n"}},
	}
	h.answer(queryBody(e, items, ""))
	var sl anySlots
	s := &Sink{Op: Query, TypeAttr: "Type", Slots: &sl, Lookup: func(typ string) *Target {
		switch typ {
		case "Order":
			return ot
		case "Kitchen":
			return kt
		}
		return nil
	}}
	out, err := client(h).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option())
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Target: ot, Raw: -1}, {Target: kt, Raw: -1}, {Raw: 0}, {Raw: 1}}
	if !reflect.DeepEqual(s.Entries(), want) || len(out.Items) != 2 || len(sl.items) != 2 {
		t.Fatalf("entries %+v, %d raw items, %d values", s.Entries(), len(out.Items), len(sl.items))
	}
	if o := sl.items[0].Elem().Interface().(order); !reflect.DeepEqual(o, sampleOrder(0)) {
		t.Errorf("order %+v", o)
	}
	if k := sl.items[1].Elem().Interface().(kitchen); k.S != "kitchen" {
		t.Errorf("kitchen %+v", k)
	}
}

func TestSchema(t *testing.T) {
	e := &jsonEnc{plain: true}
	p := planOf[order](t)
	for _, c := range []struct {
		current int
		schema  []map[string]types.AttributeValue // the _schema attribute of each item; nil: none
		decoded []bool
	}{
		{2, []map[string]types.AttributeValue{{"_schema": &types.AttributeValueMemberN{Value: "2"}}, {"_schema": &types.AttributeValueMemberN{Value: "1"}}, nil, {"_schema": &types.AttributeValueMemberN{Value: "x"}}, {"_schema": &types.AttributeValueMemberS{Value: "2"}}, {"_schema": &types.AttributeValueMemberN{Value: "+2"}}}, []bool{true, false, false, false, false, true}},
		{1, []map[string]types.AttributeValue{nil, {"_schema": &types.AttributeValueMemberN{Value: "1"}}, {"_schema": &types.AttributeValueMemberN{Value: "0"}}}, []bool{true, true, false}},
	} {
		tg, err := NewTarget(p, p.Ignore("PK", "SK", "Type", "_schema"), "Type", "Order", "_schema", c.current, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var items []map[string]types.AttributeValue
		for i, sc := range c.schema {
			it := stored(t, sampleOrder(i), "Order", 0)
			for k, v := range sc {
				it[k] = v
			}
			items = append(items, it)
		}
		h := &canned{}
		h.answer(queryBody(e, items, ""))
		var sl slots[order]
		s := &Sink{Op: Query, Target: tg, Slots: &sl}
		if _, err := client(h).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option()); err != nil {
			t.Fatal(err)
		}
		for i, en := range s.Entries() {
			if (en.Target != nil) != c.decoded[i] {
				t.Errorf("schema %d, item %d (%v): decoded %v, want %v", c.current, i, c.schema[i], en.Target != nil, c.decoded[i])
			}
		}
	}
}

func TestNewTargetRefusesFieldsForOwnAttributes(t *testing.T) {
	p := planOf[order](t)
	for _, c := range [][3]string{{"status", "", ""}, {"Type", "STATUS", ""}, {"Type", "", "orderid"}} {
		if _, err := NewTarget(p, nil, c[0], "Order", c[1], 1, []string{c[2]}, 0); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
}

// failing is a body that fails after some bytes.
type failing struct{ r io.Reader }

func (f *failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset mid-body")
	}
	return n, err
}
func (f *failing) Close() error { return nil }

func TestReadErrorIsTheSDKs(t *testing.T) {
	body := queryBody(&jsonEnc{plain: true}, []map[string]types.AttributeValue{stored(t, sampleOrder(0), "Order", 0)}, "")
	breaker := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			// Below every Deserialize middleware: break the body as the transport hands it up.
			return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("break", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && err == nil {
					resp.Body = &failing{r: io.LimitReader(resp.Body, 20)}
				}
				return out, md, err
			}), middleware.After)
		})
	}
	run := func(wire bool) error {
		h := &canned{}
		h.answer(body)
		var sl slots[order]
		s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl}
		opts := []func(*dynamodb.Options){breaker, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }}
		if wire {
			opts = append(opts, s.Option())
		}
		_, err := client(h).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, opts...)
		return err
	}
	sdk, wire := run(false), run(true)
	if sdk == nil || wire == nil || sdk.Error() != wire.Error() {
		t.Fatalf("SDK: %v\nwire: %v", sdk, wire)
	}
}

// TestRetryStartsAfresh: an attempt decoded on the wire and then failed above it (here by a middleware
// that fails the first attempt after deserialization) leaves nothing in the sink for the next.
func TestRetryStartsAfresh(t *testing.T) {
	e := &jsonEnc{plain: true}
	h := &canned{}
	h.answer(queryBody(e, []map[string]types.AttributeValue{stored(t, sampleOrder(0), "Order", 0), stored(t, sampleOrder(1), "Order", 0)}, ""),
		queryBody(e, []map[string]types.AttributeValue{stored(t, sampleOrder(2), "Order", 0)}, ""))
	attempts := 0
	failFirst := func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Deserialize.Insert(middleware.DeserializeMiddlewareFunc("failFirst", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				if attempts++; attempts == 1 && err == nil {
					return out, md, &ChecksumError{Err: errors.New("injected")} // retryable
				}
				return out, md, err
			}), "OperationDeserializer", middleware.Before)
		})
	}
	var sl slots[order]
	s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl}
	if _, err := client(h).Query(ctx, &dynamodb.QueryInput{TableName: tableName}, failFirst, s.Option()); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || len(s.Entries()) != 1 || !reflect.DeepEqual(sl.items, []order{sampleOrder(2)}) {
		t.Fatalf("%d attempts, entries %+v, values %+v", attempts, s.Entries(), sl.items)
	}
}

// TestPeek: Sink.Peek keeps the text of a number attribute of each item decoded here (a field's or
// not), and says when it is missing or not a number, without changing what is decoded.
func TestPeek(t *testing.T) {
	e := &jsonEnc{plain: true}
	h := &canned{}
	c := client(h)
	items := []map[string]types.AttributeValue{
		stored(t, sampleOrder(0), "Order", 0), // version 0: a field
		stored(t, sampleOrder(1), "Order", 0),
		stored(t, sampleOrder(2), "Customer", 0), // another type: the SDK's, nothing kept
		stored(t, sampleOrder(3), "Order", 0),
		stored(t, sampleOrder(4), "Order", 0),
	}
	items[1]["version"] = &types.AttributeValueMemberN{Value: "-62135596800"}
	items[3]["expiresAt"] = &types.AttributeValueMemberN{Value: "1.7e9"} // not a field
	items[4]["expiresAt"] = &types.AttributeValueMemberS{Value: "1700000000"}
	for _, tc := range []struct {
		peek string
		want [][2]string // per entry: text, "ok" or ""
	}{
		{"version", [][2]string{{"0", "ok"}, {"-62135596800", "ok"}, {"", ""}, {"3", "ok"}, {"4", "ok"}}},
		{"expiresAt", [][2]string{{"", ""}, {"", ""}, {"", ""}, {"1.7e9", "ok"}, {"", ""}}},
	} {
		h.answer(queryBody(e, items, ""))
		var sl slots[order]
		s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl, Peek: tc.peek}
		if _, err := c.Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option()); err != nil {
			t.Fatal(err)
		}
		if !s.Decoded() || len(s.Entries()) != len(items) {
			t.Fatalf("%s: decoded %v, entries %+v", tc.peek, s.Decoded(), s.Entries())
		}
		for i, w := range tc.want {
			n, ok := s.Peeked(i)
			if n != w[0] || ok != (w[1] == "ok") {
				t.Errorf("%s: entry %d: peeked %q %v, want %q %v", tc.peek, i, n, ok, w[0], w[1] == "ok")
			}
		}
		if len(sl.items) != 4 || sl.items[1].Version != -62135596800 || sl.items[2].Version != 3 {
			t.Errorf("%s: values %+v", tc.peek, sl.items)
		}
	}
	h.answer(queryBody(e, items, ""))
	var sl slots[order]
	s := &Sink{Op: Query, Target: orderTarget(t), Slots: &sl}
	if _, err := c.Query(ctx, &dynamodb.QueryInput{TableName: tableName}, s.Option()); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Peeked(0); ok {
		t.Error("without Peek nothing is kept")
	}
}
