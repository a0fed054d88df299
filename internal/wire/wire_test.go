package wire

import (
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
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
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil }) })
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
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil }) })
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

