package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// fixture is one table seen through the library and through the bare SDK client.
type fixture struct {
	client singletable.Client
	table  string
	orders *singletable.Entity[Order]
	order  Order
	// sdkOrders is orders on a table that decodes the SDK's way
	// (WithWireDecoding(false)): the library as it was before the wire path.
	sdkOrders *singletable.Entity[Order]
	// floor, when set, is a client whose GetItem finds nothing and whose Query
	// returns an empty page: the SDK's own cost of a call.
	floor singletable.Client
}

func newFixture(tb testing.TB, client singletable.Client, table string) *fixture {
	tb.Helper()
	register := func(opts ...singletable.TableOption) *singletable.Entity[Order] {
		t, err := singletable.NewTable(client, table, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		orders, err := singletable.Register[Order](t)
		if err != nil {
			tb.Fatal(err)
		}
		return orders
	}
	return &fixture{client: client, table: table, orders: register(), sdkOrders: register(singletable.WithWireDecoding(false)), order: sampleOrder()}
}

// The variants of each operation, the library's last. "floor" (through the canned
// transport only) is the same call answered with nothing: the SDK's own cost of a
// call. "raw" is the SDK call alone,
// with keys and expressions written by hand; "raw+hand" adds the hand-written codec;
// "raw+av" adds attributevalue instead, which is what a user of the bare SDK writes;
// "+guard" is a PutItem with the condition the library adds to every Put (the item is
// absent or of this type), which the SDK must serialise and DynamoDB evaluate against
// the stored item; "singletable" is the library, which renders the keys, adds that
// condition, checks the type of what it reads, and decodes it (on the wire path, from
// the response's JSON); "singletable-sdk" is the library decoding the SDK's attribute
// values instead (WithWireDecoding(false)).

func (f *fixture) getVariants(ctx context.Context) []variant {
	key := Order{CustomerID: f.order.CustomerID, OrderID: f.order.OrderID, CreatedAt: f.order.CreatedAt}
	vs := []variant{
		{"raw", func() (int, error) {
			_, err := f.getItem(ctx)
			return 1, err
		}},
		{"raw+hand", func() (int, error) {
			out, err := f.getItem(ctx)
			if err != nil {
				return 0, err
			}
			var o Order
			return 1, handDecode(out.Item, &o)
		}},
		{"raw+av", func() (int, error) {
			out, err := f.getItem(ctx)
			if err != nil {
				return 0, err
			}
			var o Order
			return 1, attributevalue.UnmarshalMap(out.Item, &o)
		}},
		{"singletable-sdk", func() (int, error) {
			_, err := f.sdkOrders.Get(ctx, key)
			return 1, err
		}},
		{"singletable", func() (int, error) {
			_, err := f.orders.Get(ctx, key)
			return 1, err
		}},
	}
	if f.floor != nil {
		vs = append([]variant{{"floor", func() (int, error) {
			out, err := f.floor.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: rawKey(&f.order)})
			if err == nil && out.Item != nil {
				err = fmt.Errorf("floor GetItem found an item")
			}
			return 1, err
		}}}, vs...)
	}
	return vs
}

func (f *fixture) putVariants(ctx context.Context) []variant {
	return []variant{
		{"raw+hand", func() (int, error) {
			item := handEncode(&f.order)
			addKeys(item, &f.order)
			return 1, f.putItem(ctx, item)
		}},
		{"raw+av", func() (int, error) {
			item, err := attributevalue.MarshalMap(&f.order)
			if err != nil {
				return 0, err
			}
			addKeys(item, &f.order)
			return 1, f.putItem(ctx, item)
		}},
		{"raw+hand+guard", func() (int, error) {
			item := handEncode(&f.order)
			addKeys(item, &f.order)
			return 1, f.putGuarded(ctx, item)
		}},
		{"raw+av+guard", func() (int, error) {
			item, err := attributevalue.MarshalMap(&f.order)
			if err != nil {
				return 0, err
			}
			addKeys(item, &f.order)
			return 1, f.putGuarded(ctx, item)
		}},
		{"singletable", func() (int, error) {
			_, err := f.orders.Put(ctx, f.order)
			return 1, err
		}},
	}
}

func (f *fixture) queryVariants(ctx context.Context) []variant {
	partition := Order{CustomerID: f.order.CustomerID}
	vs := []variant{
		{"raw", func() (int, error) {
			out, err := f.query(ctx)
			if err != nil {
				return 0, err
			}
			return len(out.Items), nil
		}},
		{"raw+hand", func() (int, error) {
			out, err := f.query(ctx)
			if err != nil {
				return 0, err
			}
			items := make([]Order, len(out.Items))
			for i, m := range out.Items {
				if err := handDecode(m, &items[i]); err != nil {
					return 0, err
				}
			}
			return len(items), nil
		}},
		{"raw+av", func() (int, error) {
			out, err := f.query(ctx)
			if err != nil {
				return 0, err
			}
			var items []Order
			err = attributevalue.UnmarshalListOfMaps(out.Items, &items)
			return len(items), err
		}},
		{"singletable-sdk", func() (int, error) {
			page, err := f.sdkOrders.Query(ctx, partition)
			return len(page.Items), err
		}},
		{"singletable", func() (int, error) {
			page, err := f.orders.Query(ctx, partition)
			return len(page.Items), err
		}},
	}
	if f.floor != nil {
		vs = append([]variant{{"floor", func() (int, error) {
			out, err := f.floor.Query(ctx, f.queryInput())
			if err == nil && len(out.Items) != 0 {
				err = fmt.Errorf("floor Query found items")
			}
			return queryItems, err // per item of the page it stands for
		}}}, vs...)
	}
	return vs
}

func (f *fixture) getItem(ctx context.Context) (*dynamodb.GetItemOutput, error) {
	out, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: rawKey(&f.order)})
	if err == nil && out.Item == nil {
		err = fmt.Errorf("GetItem %s: no item", f.table)
	}
	return out, err
}

func (f *fixture) putItem(ctx context.Context, item map[string]types.AttributeValue) error {
	_, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: item})
	return err
}

// putGuarded is a PutItem with the library's condition: the item is absent or of
// this type.
func (f *fixture) putGuarded(ctx context.Context, item map[string]types.AttributeValue) error {
	_, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(f.table),
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #type = :type"),
		ExpressionAttributeNames:  map[string]string{"#pk": tablePK, "#type": tableType},
		ExpressionAttributeValues: map[string]types.AttributeValue{":type": &types.AttributeValueMemberS{Value: "Order"}},
	})
	return err
}

func (f *fixture) query(ctx context.Context) (*dynamodb.QueryOutput, error) {
	return f.client.Query(ctx, f.queryInput())
}

// queryInput is the Query of the partition of f.order, written by hand.
func (f *fixture) queryInput() *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                aws.String(f.table),
		KeyConditionExpression:   aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
		ExpressionAttributeNames: map[string]string{"#pk": tablePK, "#sk": tableSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: rawPK(&f.order)},
			":sk": &types.AttributeValueMemberS{Value: "ORDER#"},
		},
	}
}

func cannedFixture(tb testing.TB) (*fixture, *cannedHTTP) {
	h := newCannedHTTP(cannedResponses(tb))
	f := newFixture(tb, cannedClient(h), "orders")
	f.floor = cannedClient(newCannedHTTP(floorResponses()))
	return f, h
}

// stubClient answers GetItem, PutItem and Query with fixed outputs, without the SDK:
// through it the library's own cost is all that is measured, with nothing of the SDK's
// around it to blur it.
type stubClient struct {
	singletable.Client // nil: the benchmarks call only the methods below
	item               map[string]types.AttributeValue
	page               []map[string]types.AttributeValue
}

func (s *stubClient) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: s.item}, nil
}

func (s *stubClient) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}

func (s *stubClient) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return &dynamodb.QueryOutput{Items: s.page, Count: int32(len(s.page)), ScannedCount: int32(len(s.page))}, nil
}

func stubFixture(tb testing.TB) *fixture {
	item := storedItem(tb)
	page := make([]map[string]types.AttributeValue, queryItems)
	for i := range page {
		page[i] = item
	}
	return newFixture(tb, &stubClient{item: item, page: page}, "orders")
}

// BenchmarkStub runs the variants against stubClient: the library's own CPU cost and
// allocations per call, with no SDK at all. It is what to profile when the library's
// overhead over the SDK is too high.
func BenchmarkStub(b *testing.B) {
	f := stubFixture(b)
	ctx := context.Background()
	b.Run("Get", func(b *testing.B) { standard(b, f.getVariants(ctx)) })
	b.Run("Put", func(b *testing.B) { standard(b, f.putVariants(ctx)) })
	b.Run("Query100", func(b *testing.B) { standard(b, f.queryVariants(ctx)) })
}

// BenchmarkSDK runs each variant of Get, Put and a Query of a 100-item page through
// the canned HTTP client, one sub-benchmark per variant: the allocation counts of the
// benchmark table come from here (Query's per call; the table divides by 100).
func BenchmarkSDK(b *testing.B) {
	f, _ := cannedFixture(b)
	ctx := context.Background()
	b.Run("Get", func(b *testing.B) { standard(b, f.getVariants(ctx)) })
	b.Run("Put", func(b *testing.B) { standard(b, f.putVariants(ctx)) })
	b.Run("Query100", func(b *testing.B) { standard(b, f.queryVariants(ctx)) })
}

// BenchmarkSDKTime times the same variants interleaved call by call (see
// [interleaved]): the library's own time per call, or per item of Query, is its time
// less a baseline's on the same line.
func BenchmarkSDKTime(b *testing.B) {
	f, _ := cannedFixture(b)
	ctx := context.Background()
	b.Run("Get", func(b *testing.B) { interleaved(b, f.getVariants(ctx), 1, 1, "op") })
	b.Run("Put", func(b *testing.B) { interleaved(b, f.putVariants(ctx), 1, 1, "op") })
	b.Run("Query100", func(b *testing.B) { interleaved(b, f.queryVariants(ctx), 1, queryItems, "item") })
}

// TestSameWork checks that the variants compared do the same work: the same key read,
// the same item written, every item of the page decoded.
func TestSameWork(t *testing.T) {
	f, h := cannedFixture(t)
	h.rec = true
	ctx := context.Background()
	request := func(op, field string, v variant) any {
		t.Helper()
		if _, err := v.run(); err != nil {
			t.Fatalf("%s %s: %v", op, v.name, err)
		}
		var in map[string]any
		if err := json.Unmarshal(h.lastRequest(op), &in); err != nil {
			t.Fatal(err)
		}
		return in[field]
	}
	same := func(op, field string, vs []variant) {
		t.Helper()
		want := request(op, field, vs[0])
		for _, v := range vs[1:] {
			if got := request(op, field, v); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s sends %s\n%v\n%s sends\n%v", op, v.name, field, got, vs[0].name, want)
			}
		}
	}
	f.floor = nil // the floor answers from another transport, with nothing
	same("GetItem", "Key", f.getVariants(ctx))
	same("PutItem", "Item", f.putVariants(ctx))
	// The same condition on the guarded Puts, and the same key condition on Query,
	// whatever the placeholders.
	expr := func(op, field string, v variant) string {
		t.Helper()
		if _, err := v.run(); err != nil {
			t.Fatalf("%s %s: %v", op, v.name, err)
		}
		return resolved(t, h.lastRequest(op), field)
	}
	puts := pick(f.putVariants(ctx), "raw+hand+guard", "raw+av+guard", "singletable")
	want := expr("PutItem", "ConditionExpression", puts[0])
	for _, v := range puts[1:] {
		if got := expr("PutItem", "ConditionExpression", v); got != want {
			t.Errorf("PutItem: %s's condition is %s, %s's %s", v.name, got, puts[0].name, want)
		}
	}
	queries := f.queryVariants(ctx)
	want = expr("Query", "KeyConditionExpression", queries[0])
	for _, v := range queries[1:] {
		if got := expr("Query", "KeyConditionExpression", v); got != want {
			t.Errorf("Query: %s's key condition is %s, %s's %s", v.name, got, queries[0].name, want)
		}
	}
	for _, v := range f.queryVariants(ctx) {
		if n, err := v.run(); err != nil || n != queryItems {
			t.Errorf("Query %s: %d items, %v; want %d", v.name, n, err, queryItems)
		}
	}
	got, err := f.orders.Get(ctx, f.order)
	if err != nil || !sameOrder(got, f.order) {
		t.Errorf("Get = %+v, %v; want %+v", got, err, f.order)
	}
}

// resolved returns the expression in field of a recorded request body with its
// placeholders replaced by the names and values they stand for.
func resolved(t *testing.T, body []byte, field string) string {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	e, _ := in[field].(string)
	if e == "" {
		t.Fatalf("no %s in %s", field, body)
	}
	type sub struct{ placeholder, value string }
	var subs []sub
	for _, k := range []string{"ExpressionAttributeNames", "ExpressionAttributeValues"} {
		m, _ := in[k].(map[string]any)
		for p, v := range m {
			subs = append(subs, sub{p, fmt.Sprint(v)})
		}
	}
	// Longest placeholder first, so that #n1 does not take the start of #n10.
	slices.SortFunc(subs, func(a, b sub) int { return len(b.placeholder) - len(a.placeholder) })
	var pairs []string
	for _, x := range subs {
		pairs = append(pairs, x.placeholder, x.value)
	}
	return strings.NewReplacer(pairs...).Replace(e)
}
