package singletable

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireSpy counts the Query pages with items, and those whose items came back decoded
// on the wire: the SDK's output then holds fewer items than DynamoDB counted.
type wireSpy struct {
	Client
	wired, pages atomic.Int64
}

// ClientTraits declares the wrapped client's traits: the spy passes optFns and
// outputs through unchanged.
func (c *wireSpy) ClientTraits() ClientTraits { return traitsOf(c.Client) }

func (c *wireSpy) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, o...)
	if err == nil && out.Count > 0 {
		c.pages.Add(1)
		if int(out.Count) > len(out.Items) {
			c.wired.Add(1)
		}
	}
	return out, err
}

// wMigrated has a schema history, so that items of an older schema take the
// migration path (attribute values) while current ones take the wire path.
type wMigrated struct {
	_     struct{}          `Type:"WMigrated" PK:"CUST#{customerId}" SK:"MIG#{id}"`
	CID   string            `dynamodbav:"customerId"`
	ID    string            `dynamodbav:"id"`
	Label string            `dynamodbav:"label"`
	Extra map[string]string `dynamodbav:"extra"`
}

// wireTables are two tables over one DynamoDB Local table, one reading on the wire
// path and one the SDK's way, with the same entities registered on both.
type wireTables struct {
	on, off *Table
	spy     *wireSpy
}

func newWireTables(t *testing.T) *wireTables {
	t.Helper()
	base, client := newTestTable(t)
	spy := &wireSpy{Client: client}
	w := &wireTables{spy: spy}
	var err error
	w.on, err = NewTable(spy, base.Name(), testTableOptions, WithWireDecoding(true))
	require.NoError(t, err)
	w.off, err = NewTable(client, base.Name(), testTableOptions, WithWireDecoding(false))
	require.NoError(t, err)
	return w
}

func migratedSteps() RegisterOption {
	return Migrations(Migration[wMigrated]{WriteBack: WriteBackOff, Steps: []Step[wMigrated]{
		{Raw: func(item RawItem) error { // v1 -> v2: "name" became "label"
			if n, ok := item["name"]; ok {
				item["label"] = n
				delete(item, "name")
			}
			return nil
		}},
	}})
}

// TestWireDecodingSameResults writes a mixed partition (customers, orders, line
// items, items of an older schema, items of an unknown type, an item with a value
// its field cannot hold) and reads it through every read path of both tables: the
// same values and the same errors, with the wire path taken.
func TestWireDecodingSameResults(t *testing.T) {
	w := newWireTables(t)
	ctx := context.Background()
	type entities struct {
		cust  *Entity[tCustomer]
		ord   *Entity[tOrder]
		lines *Entity[tLineItem]
		mig   *Entity[wMigrated]
	}
	reg := func(tbl *Table) entities {
		c, o, l := registerAll(t, tbl)
		m, err := Register[wMigrated](tbl, migratedSteps())
		require.NoError(t, err)
		return entities{c, o, l, m}
	}
	on, off := reg(w.on), reg(w.off)

	_, err := on.cust.Put(ctx, tCustomer{CustomerID: "c1", Name: "Ann \u00e9 \"quoted\" \\ 😀", Email: "ann@example.com"})
	require.NoError(t, err)
	for n := 1; n <= 25; n++ {
		o := order("c1", n)
		o.Tags = []string{"t" + strconv.Itoa(n), "x"}
		o.Note = fmt.Sprintf("note %d\twith\nescapes \u2028", n)
		_, err := on.ord.Put(ctx, o)
		require.NoError(t, err)
		for l := 1; l <= n%3; l++ {
			_, err := on.lines.Put(ctx, tLineItem{CustomerID: "c1", OrderID: o.OrderID, Line: l, SKU: "sku-" + strconv.Itoa(l)})
			require.NoError(t, err)
		}
	}
	_, err = on.mig.Put(ctx, wMigrated{CID: "c1", ID: "current", Label: "now", Extra: map[string]string{"a": "b"}})
	require.NoError(t, err)
	raw := func(item map[string]types.AttributeValue) {
		_, err := w.on.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(w.on.Name()), Item: item})
		require.NoError(t, err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	raw(map[string]types.AttributeValue{"PK": s("CUST#c1"), "SK": s("MIG#old"), "Type": s("WMigrated"), "customerId": s("c1"), "id": s("old"), "name": s("then")})
	raw(map[string]types.AttributeValue{"PK": s("CUST#c1"), "SK": s("GHOST#1"), "Type": s("Ghost"), "boo": s("!")})
	raw(map[string]types.AttributeValue{"PK": s("CUST#c1"), "SK": s("ORDER#o900"), "Type": s("Order"), "customerId": s("c1"), "orderId": s("o900"),
		"total": &types.AttributeValueMemberN{Value: "1e30"}, "createdAt": s("2024-05-01T09:00:00Z")}) // total cannot hold it

	same := func(what string, run func(e entities) (any, error)) {
		t.Helper()
		wantV, wantErr := run(off)
		gotV, gotErr := run(on)
		if wantErr != nil || gotErr != nil {
			require.Error(t, gotErr, what)
			require.Error(t, wantErr, what)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), what)
		}
		assert.Equal(t, wantV, gotV, what)
	}
	same("Get customer", func(e entities) (any, error) { return e.cust.Get(ctx, tCustomer{CustomerID: "c1"}) })
	same("Get order", func(e entities) (any, error) {
		return e.ord.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o007"}, Consistent())
	})
	same("Get missing", func(e entities) (any, error) { return e.ord.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o999"}) })
	same("Get too large", func(e entities) (any, error) { return e.ord.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o900"}) })
	same("Get migrated", func(e entities) (any, error) { return e.mig.Get(ctx, wMigrated{CID: "c1", ID: "old"}) })
	same("Get current", func(e entities) (any, error) { return e.mig.Get(ctx, wMigrated{CID: "c1", ID: "current"}) })
	same("Get another type", func(e entities) (any, error) {
		return e.lines.Get(ctx, tLineItem{CustomerID: "c1", OrderID: "o001", Line: 1})
	})
	for _, lim := range []int{0, 3, 7} {
		opts := func() []QueryOption {
			if lim == 0 {
				return nil
			}
			return []QueryOption{Limit(lim)}
		}
		same("Query orders "+strconv.Itoa(lim), func(e entities) (any, error) {
			var all []tOrder
			cursor := ""
			for {
				p, err := e.ord.Query(ctx, tOrder{CustomerID: "c1"}, append(opts(), After(cursor))...)
				if err != nil {
					return all, err
				}
				all = append(all, p.Items...)
				if cursor = p.Cursor; cursor == "" {
					return all, nil
				}
			}
		})
	}
	same("Query GSI1", func(e entities) (any, error) {
		return e.ord.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI1"), Descending())
	})
	same("All GSI2", func(e entities) (any, error) {
		var all []tOrder
		for v, err := range e.ord.All(ctx, tOrder{CustomerID: "c1"}, On("GSI2"), Limit(4)) {
			if err != nil {
				return all, err
			}
			all = append(all, v)
		}
		return all, nil
	})
	same("Query tree", func(e entities) (any, error) {
		return w.tableOf(e.ord).Query(ctx, tOrder{CustomerID: "c1"}, SKTree(tOrder{CustomerID: "c1", OrderID: "o005"}))
	})
	same("Query lines", func(e entities) (any, error) {
		return e.lines.Query(ctx, tLineItem{CustomerID: "c1"}, SKBeginsWith("ORDER#o00"))
	})
	same("Query migrated", func(e entities) (any, error) { return e.mig.Query(ctx, wMigrated{CID: "c1"}) })
	for _, mode := range []UnknownTypes{UnknownSkip, UnknownCollect, UnknownFail} {
		same("collection "+strconv.Itoa(int(mode)), func(e entities) (any, error) {
			return w.tableOf(e.ord).Query(ctx, "CUST#c1", OnUnknown(mode))
		})
		same("collection All "+strconv.Itoa(int(mode)), func(e entities) (any, error) {
			var all []any
			for v, err := range w.tableOf(e.ord).All(ctx, tCustomer{CustomerID: "c1"}, OnUnknown(mode), Limit(5)) {
				if err != nil {
					return all, err
				}
				all = append(all, v)
			}
			return all, nil
		})
	}
	for _, mode := range []UnknownTypes{UnknownSkip, UnknownCollect, UnknownFail} {
		same("Collection.Load "+strconv.Itoa(int(mode)), func(e entities) (any, error) {
			c, err := NewCollection[wCollection](w.tableOf(e.ord))
			require.NoError(t, err)
			return c.Load(ctx, "CUST#c1", OnUnknown(mode), Limit(6))
		})
		same("Collection.Query tree "+strconv.Itoa(int(mode)), func(e entities) (any, error) {
			c, err := NewCollection[wCollection](w.tableOf(e.ord))
			require.NoError(t, err)
			return c.Query(ctx, tOrder{CustomerID: "c1"}, OnUnknown(mode), SKTree(tOrder{CustomerID: "c1", OrderID: "o008"}))
		})
	}
	keys := []tOrder{{CustomerID: "c1", OrderID: "o003"}, {CustomerID: "c1", OrderID: "o404"}, {CustomerID: "c1", OrderID: "o011"}}
	same("BatchGet", func(e entities) (any, error) { return e.ord.BatchGet(ctx, keys) })
	same("BatchGet twice", func(e entities) (any, error) { return e.ord.BatchGet(ctx, append(keys, keys[0])) })
	same("BatchGet too large", func(e entities) (any, error) {
		return e.ord.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o900"}, keys[0]})
	})
	many := make([]tOrder, 0, 25)
	for n := 1; n <= 25; n++ {
		many = append(many, tOrder{CustomerID: "c1", OrderID: "o" + pad3(n)})
	}
	same("BatchGet many", func(e entities) (any, error) { return e.ord.BatchGet(ctx, many, Consistent()) })

	require.Positive(t, w.spy.pages.Load())
	// Every page but those holding only items the wire path leaves to the SDK (the
	// last page of a Limit 3 query holds only the order whose total does not fit).
	assert.GreaterOrEqual(t, w.spy.wired.Load(), w.spy.pages.Load()*9/10, "pages decoded on the wire, of %d", w.spy.pages.Load())
}

func (w *wireTables) tableOf(e *Entity[tOrder]) *Table { return e.Table() }

// wCollection holds a customer's partition.
type wCollection struct {
	Customer *tCustomer   `singletable:"Customer"`
	Orders   []tOrder     `singletable:"Order"`
	Lines    []*tLineItem `singletable:"LineItem"`
	Migrated []wMigrated  `singletable:"WMigrated"`
	Other    []RawItem    `singletable:",unknown"`
}

// TestWireDecodingOption: the default is on (unless built with the tag
// singletable_sdkdecoding), the option turns it off, and Options reports it
// without sharing it.
func TestWireDecodingOption(t *testing.T) {
	tbl := offlineTable(t)
	assert.Equal(t, defaultWireDecoding, tbl.wireOn())
	off := offlineTable(t, WithWireDecoding(false))
	assert.False(t, off.wireOn())
	o := off.Options()
	require.NotNil(t, o.WireDecoding)
	*o.WireDecoding = true
	assert.False(t, off.wireOn(), "Options returns a copy")
	on := offlineTable(t, WithWireDecoding(true))
	assert.True(t, on.wireOn())
	_, orders, _ := registerAll(t, on)
	assert.NotNil(t, orders.x.info.wireTarget())
	_, orders, _ = registerAll(t, off)
	assert.Nil(t, orders.x.info.wireTarget())
}

// TestWireDecodingThroughWrappers: a Client that does not pass the call's options on
// to the SDK (a stub), although it is declared to, still gets every item decoded,
// from the SDK's output.
func TestWireDecodingThroughWrappers(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	for n := 1; n <= 3; n++ {
		_, err := orders.Put(ctx, order("c1", n))
		require.NoError(t, err)
	}
	stub, err := NewTable(dropOptions{tbl.Client()}, tbl.Name(), testTableOptions, WithWireDecoding(true),
		WithClientTraits(ClientTraits{APIOptions: true, UnchangedOutputs: true}))
	require.NoError(t, err)
	_, sorders, _ := registerAll(t, stub)
	got, err := sorders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o002"})
	require.NoError(t, err)
	assert.Equal(t, order("c1", 2), got)
	page, err := sorders.Query(ctx, tOrder{CustomerID: "c1"})
	require.NoError(t, err)
	assert.Equal(t, []tOrder{order("c1", 1), order("c1", 2), order("c1", 3)}, page.Items)
	res, err := sorders.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o003"}})
	require.NoError(t, err)
	assert.Equal(t, []tOrder{order("c1", 3)}, res.Items)
}

// dropOptions passes calls on without their options.
type dropOptions struct{ Client }

func (c dropOptions) GetItem(ctx context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return c.Client.GetItem(ctx, in)
}

func (c dropOptions) Query(ctx context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return c.Client.Query(ctx, in)
}

func (c dropOptions) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return c.Client.BatchGetItem(ctx, in)
}
