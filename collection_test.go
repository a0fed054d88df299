package singletable

import (
	"context"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference 001: a customer "A record" and its "#ORDER#{date}" orders in one
// partition; "#" sorts before "A", so reading backwards gives the customer first,
// then the newest orders.
type cCustomer struct {
	_      struct{} `Type:"Customer" PK:"CUSTOMER#{id}" SK:"A" GSI1PK:"REGION#{region}" GSI1SK:"C#{id}"`
	ID     string   `dynamodbav:"id"`
	Name   string   `dynamodbav:"name"`
	Region string   `dynamodbav:"region,omitempty"`
}

type cOrder struct {
	_          struct{}  `Type:"Order" PK:"CUSTOMER#{customerId}" SK:"#ORDER#{date:date}" GSI1PK:"REGION#{region}" GSI1SK:"O#{date:date}#{customerId}"`
	CustomerID string    `dynamodbav:"customerId"`
	Date       time.Time `dynamodbav:"date"`
	Amount     int       `dynamodbav:"amount"`
	Region     string    `dynamodbav:"region,omitempty"`
}

type customerOrders struct {
	Customer *cCustomer `singletable:"Customer"`
	Orders   []cOrder   `singletable:"Order"`
}

type customerOrdersRaw struct {
	Customer cCustomer `singletable:"Customer"`
	Orders   []*cOrder `singletable:"Order"`
	Unknown  []RawItem `singletable:",unknown"`
	Note     string    // untagged fields are left alone
}

func day(d int) time.Time { return time.Date(2020, 11, 25, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }

func setupCustomerOrders(t *testing.T) (*Table, *countingClient, *Entity[cCustomer], *Entity[cOrder], []cOrder) {
	t.Helper()
	tbl, client := newTestTable(t)
	customers, err := Register[cCustomer](tbl)
	require.NoError(t, err)
	orders, err := Register[cOrder](tbl)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = customers.Put(ctx, cCustomer{ID: "123", Name: "Ann", Region: "eu"})
	require.NoError(t, err)
	_, err = customers.Put(ctx, cCustomer{ID: "456", Name: "Bob", Region: "eu"})
	require.NoError(t, err)
	var all []cOrder
	for i, d := range []int{0, 6, 11, 12, 20} {
		o := cOrder{CustomerID: "123", Date: day(d), Amount: 10 * (i + 1), Region: "eu"}
		all = append(all, o)
	}
	_, err = orders.BatchPut(ctx, append(all, cOrder{CustomerID: "456", Date: day(3), Amount: 99}))
	require.NoError(t, err)
	return tbl, client, customers, orders, all
}

func TestCollectionReference001Patterns(t *testing.T) {
	tbl, client, customers, orders, all := setupCustomerOrders(t)
	ctx := context.Background()
	coll, err := NewCollection[customerOrders](tbl)
	require.NoError(t, err)
	ann := &cCustomer{ID: "123", Name: "Ann", Region: "eu"}

	t.Run("customer by id", func(t *testing.T) {
		got, err := customers.Get(ctx, cCustomer{ID: "123"})
		require.NoError(t, err)
		assert.Equal(t, *ann, got)
	})
	t.Run("customer and all orders", func(t *testing.T) {
		before := client.count("Query")
		got, err := coll.Load(ctx, cCustomer{ID: "123"})
		require.NoError(t, err)
		assert.Equal(t, customerOrders{Customer: ann, Orders: all}, got)
		assert.Equal(t, before+1, client.count("Query"), "one request")
	})
	t.Run("customer and the 2 most recent orders", func(t *testing.T) {
		before := client.count("Query")
		page, err := coll.Query(ctx, cCustomer{ID: "123"}, Descending(), Limit(3))
		require.NoError(t, err)
		assert.Equal(t, customerOrders{Customer: ann, Orders: []cOrder{all[4], all[3]}}, page.Value)
		assert.NotEmpty(t, page.Cursor)
		assert.Equal(t, 3, page.Scanned)
		assert.Equal(t, before+1, client.count("Query"), "one request")
	})
	t.Run("only the orders", func(t *testing.T) {
		before := client.count("Query")
		page, err := coll.Query(ctx, "CUSTOMER#123", SKBeginsWith("#ORDER#"))
		require.NoError(t, err)
		assert.Equal(t, customerOrders{Orders: all}, page.Value)
		typed, err := orders.Query(ctx, cOrder{CustomerID: "123"})
		require.NoError(t, err)
		assert.Equal(t, all, typed.Items, "the typed query keeps to the template's prefix by itself")
		assert.Equal(t, before+2, client.count("Query"))
	})
	t.Run("stream of typed values", func(t *testing.T) {
		var seen []string
		for v, err := range tbl.All(ctx, cCustomer{ID: "123"}, Descending()) {
			require.NoError(t, err)
			switch x := v.(type) {
			case cCustomer:
				seen = append(seen, "customer "+x.Name)
			case cOrder:
				seen = append(seen, "order "+x.Date.Format("01-02"))
			default:
				t.Fatalf("unexpected %T", v)
			}
		}
		assert.Equal(t, []string{"customer Ann", "order 12-15", "order 12-07", "order 12-06", "order 12-01", "order 11-25"}, seen)
	})
}

func TestCollectionPagesFiltersAndIndexes(t *testing.T) {
	tbl, client, _, _, all := setupCustomerOrders(t)
	ctx := context.Background()
	coll, err := NewCollection[customerOrders](tbl)
	require.NoError(t, err)

	// Pages of 2 items of any type: the cursor resumes across types, no gaps.
	var merged customerOrders
	cursor := ""
	pages := 0
	for {
		page, err := coll.Query(ctx, cCustomer{ID: "123"}, Limit(2), After(cursor))
		require.NoError(t, err)
		pages++
		if page.Value.Customer != nil {
			merged.Customer = page.Value.Customer
		}
		merged.Orders = append(merged.Orders, page.Value.Orders...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, 4, pages, "three full pages, then the empty one DynamoDB owes after a page that ends at the limit")
	assert.Equal(t, all, merged.Orders)
	require.NotNil(t, merged.Customer)

	// A filter applies to every type.
	page, err := tbl.Query(ctx, cCustomer{ID: "123"}, Filter(expression.Name("amount").GreaterThanEqual(expression.Value(30))))
	require.NoError(t, err)
	assert.Equal(t, []any{all[2], all[3], all[4]}, page.Items)
	assert.Equal(t, 6, page.Scanned)

	// An index partition holding both types.
	before := client.count("Query")
	page, err = tbl.Query(ctx, cCustomer{Region: "eu"}, On("GSI1"))
	require.NoError(t, err)
	assert.Equal(t, before+1, client.count("Query"))
	var customers, orders int
	for _, v := range page.Items {
		switch v.(type) {
		case cCustomer:
			customers++
		case cOrder:
			orders++
		}
	}
	assert.Equal(t, 2, customers)
	assert.Equal(t, 5, orders, "the order without a region is not in the index")

	_, err = tbl.Query(ctx, 42)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = tbl.Query(ctx, "CUSTOMER#123", SKEqual(cOrder{}))
	assert.ErrorIs(t, err, ErrInvalidInput, "a raw partition takes raw sort key values")
}

func TestCollectionUnknownTypes(t *testing.T) {
	tbl, _, _, _, all := setupCustomerOrders(t)
	ctx := context.Background()
	for sk, typ := range map[string]*string{"#NOTE#1": aws.String("Note"), "#NOTE#2": nil} {
		item := map[string]types.AttributeValue{"PK": sAV("CUSTOMER#123"), "SK": sAV(sk)}
		if typ != nil {
			item["Type"] = sAV(*typ)
		}
		_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
		require.NoError(t, err)
	}
	coll, err := NewCollection[customerOrdersRaw](tbl)
	require.NoError(t, err)

	_, err = coll.Load(ctx, cCustomer{ID: "123"})
	require.ErrorIs(t, err, ErrUnknownType)
	var ue *UnknownTypeError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "Note", ue.Type)
	assert.Equal(t, "#NOTE#1", ue.Key["SK"])
	assert.Contains(t, err.Error(), `"Note"`)
	assert.Contains(t, err.Error(), "#NOTE#1")
	_, err = tbl.Query(ctx, cCustomer{ID: "123"}, SKGreaterThan("#NOTE#1"))
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "", ue.Type, "a missing type attribute")

	got, err := coll.Load(ctx, cCustomer{ID: "123"}, OnUnknown(UnknownSkip))
	require.NoError(t, err)
	assert.Len(t, got.Orders, 5)
	assert.Empty(t, got.Unknown)
	assert.Equal(t, "Ann", got.Customer.Name)

	got, err = coll.Load(ctx, cCustomer{ID: "123"}, OnUnknown(UnknownCollect))
	require.NoError(t, err)
	require.Len(t, got.Unknown, 2)
	assert.Equal(t, sAV("#NOTE#1"), got.Unknown[0]["SK"])
	assert.Equal(t, all[0], *got.Orders[0])

	page, err := tbl.Query(ctx, cCustomer{ID: "123"}, OnUnknown(UnknownCollect))
	require.NoError(t, err)
	raws := 0
	for _, v := range page.Items {
		if _, ok := v.(RawItem); ok {
			raws++
		}
	}
	assert.Equal(t, 2, raws)

	plain, err := NewCollection[customerOrders](tbl)
	require.NoError(t, err)
	_, err = plain.Load(ctx, cCustomer{ID: "123"}, OnUnknown(UnknownCollect))
	assert.ErrorIs(t, err, ErrInvalidInput, "collecting needs a field to collect into")
}

// Reference 002: an order root and its ORDER#{id}#ITEM# rows, in one query.
type aOrder struct {
	_          struct{} `Type:"AggOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Status     string   `dynamodbav:"status"`
}

type aItem struct {
	_          struct{} `Type:"AggItem" PK:"CUST#{customerId}" SK:"ORDER#{orderId}#ITEM#{itemId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	ItemID     string   `dynamodbav:"itemId"`
	Qty        int      `dynamodbav:"qty"`
}

type orderAggregate struct {
	Order *aOrder `singletable:"AggOrder"`
	Items []aItem `singletable:"AggItem"`
}

func TestCollectionOrderAggregate(t *testing.T) {
	tbl, client := newTestTable(t)
	orders := MustRegister[aOrder](tbl)
	items := MustRegister[aItem](tbl)
	ctx := context.Background()
	for _, id := range []string{"o1", "o10", "o1!"} {
		_, err := orders.Put(ctx, aOrder{CustomerID: "c1", OrderID: id, Status: "NEW"})
		require.NoError(t, err)
		for _, it := range []string{"i1", "i2"} {
			_, err := items.Put(ctx, aItem{CustomerID: "c1", OrderID: id, ItemID: it, Qty: len(id)})
			require.NoError(t, err)
		}
	}
	agg, err := NewCollection[orderAggregate](tbl)
	require.NoError(t, err)
	before := client.count("Query")
	got, err := agg.Load(ctx, aOrder{CustomerID: "c1"}, SKTree(aOrder{OrderID: "o1"}))
	require.NoError(t, err)
	assert.Equal(t, before+1, client.count("Query"), "one request")
	assert.Equal(t, orderAggregate{
		Order: &aOrder{CustomerID: "c1", OrderID: "o1", Status: "NEW"},
		Items: []aItem{{CustomerID: "c1", OrderID: "o1", ItemID: "i1", Qty: 2}, {CustomerID: "c1", OrderID: "o1", ItemID: "i2", Qty: 2}},
	}, got, "neither o10 nor o1! belongs to o1's aggregate")

	_, err = agg.Load(ctx, aOrder{CustomerID: "c1"}, SKBeginsWith("ORDER#o1"))
	assert.ErrorIs(t, err, ErrInvalidInput, "begins_with reads three orders into a one-order field")
}

func TestNewCollectionErrors(t *testing.T) {
	tbl := offlineTable(t)
	MustRegister[cCustomer](tbl)
	MustRegister[cOrder](tbl)
	type noFields struct{ X int }
	type unknownType struct {
		X []cOrder `singletable:"Invoice"`
	}
	type wrongGoType struct {
		X []cCustomer `singletable:"Order"`
	}
	type twice struct {
		A []cOrder `singletable:"Order"`
		B []cOrder `singletable:"Order"`
	}
	type badUnknown struct {
		A []cOrder `singletable:"Order"`
		U []string `singletable:",unknown"`
	}
	for name, f := range map[string]func() error{
		"no fields":    func() error { _, err := NewCollection[noFields](tbl); return err },
		"unknown type": func() error { _, err := NewCollection[unknownType](tbl); return err },
		"wrong type":   func() error { _, err := NewCollection[wrongGoType](tbl); return err },
		"twice":        func() error { _, err := NewCollection[twice](tbl); return err },
		"bad unknown":  func() error { _, err := NewCollection[badUnknown](tbl); return err },
		"not a struct": func() error { _, err := NewCollection[[]int](tbl); return err },
	} {
		err := f()
		assert.ErrorIs(t, err, ErrInvalidEntity, name)
	}
}

// mixedPage builds a query page of n items: one customer for every nine orders.
func mixedPage(b *testing.B, tbl *Table) []map[string]types.AttributeValue {
	customers, orders := MustRegister[cCustomer](tbl), MustRegister[cOrder](tbl)
	var items []map[string]types.AttributeValue
	for i := range 1000 {
		var v reflect.Value
		info := orders.x.info
		if i%10 == 0 {
			c := cCustomer{ID: "c" + itoa(i), Name: "Customer " + itoa(i), Region: "eu"}
			v, info = reflect.ValueOf(&c).Elem(), customers.x.info
		} else {
			o := cOrder{CustomerID: "c" + itoa(i/10*10), Date: day(i % 365), Amount: i, Region: "eu"}
			v = reflect.ValueOf(&o).Elem()
		}
		item, err := info.encodeItem(v)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, item)
	}
	return items
}

// BenchmarkCollectionDecode decodes a 1,000-item mixed page: the library's
// collection decoder against the hand-rolled alternative, attributevalue per item
// in a switch on the type attribute.
func BenchmarkCollectionDecode(b *testing.B) {
	tbl, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "bench", testTableOptions)
	if err != nil {
		b.Fatal(err)
	}
	items := mixedPage(b, tbl)
	type page struct {
		Customers []cCustomer `singletable:"Customer"`
		Orders    []cOrder    `singletable:"Order"`
	}
	coll, err := NewCollection[page](tbl)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("singletable", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v page
			if err := coll.decoder(context.Background(), &v, &readPlan{t: tbl, unknown: UnknownFail, whole: true}).add(items); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("attributevalue-switch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var cs []cCustomer
			var os []cOrder
			for _, item := range items {
				switch item["Type"].(*types.AttributeValueMemberS).Value {
				case "Customer":
					var c cCustomer
					if err := attributevalue.UnmarshalMap(item, &c); err != nil {
						b.Fatal(err)
					}
					cs = append(cs, c)
				case "Order":
					var o cOrder
					if err := attributevalue.UnmarshalMap(item, &o); err != nil {
						b.Fatal(err)
					}
					os = append(os, o)
				}
			}
			runtime.KeepAlive(cs)
			runtime.KeepAlive(os)
		}
	})
	b.Run("singletable-any", func(b *testing.B) {
		b.ReportAllocs()
		p := tbl.imagePlan(UnknownFail)
		for b.Loop() {
			for _, item := range items {
				if _, _, err := p.readAny(context.Background(), item); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
