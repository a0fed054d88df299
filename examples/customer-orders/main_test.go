package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/examples/exampleenv"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it. Under CI=true a missing one fails the tests instead of
// skipping them.
var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

// countingClient counts the read requests on the way to DynamoDB Local.
type countingClient struct {
	singletable.Client
	gets, queries atomic.Int64
}

func (c *countingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.gets.Add(1)
	return c.Client.GetItem(ctx, in, opts...)
}

func (c *countingClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries.Add(1)
	return c.Client.Query(ctx, in, opts...)
}

// requests is how many GetItem and Query calls a counting client has seen.
type requests struct{ Gets, Queries int64 }

func (c *countingClient) count() requests {
	return requests{Gets: c.gets.Load(), Queries: c.queries.Load()}
}

// requestsOf runs read and returns the GetItem and Query calls it made.
func requestsOf(c *countingClient, read func()) requests {
	before := c.count()
	read()
	after := c.count()
	return requests{Gets: after.Gets - before.Gets, Queries: after.Queries - before.Queries}
}

var oneQuery = requests{Queries: 1}

// newStore creates an empty table of the model, deleted when the test ends.
func newStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	client := &countingClient{Client: local.Client(t)}
	s, err := NewStore(client, exampleenv.TableName(t))
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	return s, client
}

// seededStore is newStore with the sample data of the example:
//
//	ann: o1001 (2022-01-05) ... o1024 (2023-12-05), one a month
//	bob: o2001 (2023-03-14), o2002 and o2003 (both 2023-06-01 12:00)
//	cy:  no orders
func seededStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	s, c := newStore(t)
	require.NoError(t, seed(t.Context(), s))
	return s, c
}

func sampleCustomer(t *testing.T, id string) *Customer {
	t.Helper()
	for _, c := range sampleCustomers() {
		if c.CustomerID == id {
			return &c
		}
	}
	t.Fatalf("no sample customer %s", id)
	return nil
}

// sampleOrdersOf returns a customer's sample orders, oldest first (ties by id).
func sampleOrdersOf(id string) []Order {
	var out []Order
	for _, o := range sampleOrders() {
		if o.CustomerID == id {
			out = append(out, o)
		}
	}
	return out
}

func newestFirst(orders []Order) []Order {
	out := slices.Clone(orders)
	slices.Reverse(out)
	return out
}

func ids(orders []Order) []string {
	out := []string{}
	for _, o := range orders {
		out = append(out, o.OrderID)
	}
	return out
}

func TestRun(t *testing.T) {
	t.Parallel()
	client := local.Client(t)
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), client, table, &out), out.String())
	got := out.String()
	for _, want := range []string{
		"created table " + table,
		"seeded 3 customers and 27 orders: ann 24, bob 3, cy 0",
		"#ORDER#2022-01-05T10:00:00.000000000Z#o1001 ... #ORDER#2023-12-05T10:00:00.000000000Z#o1024, then A",
		"1. Customer by id", "ann: Ann Lee <ann@example.com>, customer since 2021-11-02", "cost: 1 request (GetItem), 0.5 RCU",
		"zoe: not found",
		"2. Customer and all orders", "ann: Ann Lee, 24 orders, oldest first: o1001 (2022-01-05) ... o1024 (2023-12-05)",
		"3. Customer and the 3 most recent orders in one request", "Limit=4",
		"o1024  2023-12-05  PLACED", "o1023  2023-11-05  SHIPPED", "o1022  2023-10-05  DELIVERED",
		"cost: 1 request (Query), 0.5 RCU (CollectionPage.Capacity; the meter agrees)",
		"the next 3 (the same Query resumed after the page's cursor): o1021 o1020 o1019",
		"bob: Bob Ray; o2003 o2002 o2001", "cy: Cy Moss; no orders",
		"4. Only the orders", "24 orders, oldest first", "items read: 24",
		"(Page.Capacity; the meter agrees)",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "no consumed capacity reported", "DynamoDB Local 1.11.478 reports consumed capacity")
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

func TestPartitionOrder(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	// An order placed in the last representable instant still sorts before the
	// A record: '#' < 'A' whatever follows.
	late := Order{CustomerID: "bob", OrderID: "o2999", PlacedAt: time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), Status: "PLACED"}
	require.NoError(t, s.PlaceOrder(t.Context(), late))

	var rows []string
	for v, err := range s.Table.All(t.Context(), "CUSTOMER#bob") {
		require.NoError(t, err)
		switch x := v.(type) {
		case Customer:
			rows = append(rows, "A:"+x.CustomerID)
		case Order:
			rows = append(rows, x.OrderID)
		default:
			t.Fatalf("unexpected %T", v)
		}
	}
	assert.Equal(t, []string{"o2001", "o2002", "o2003", "o2999", "A:bob"}, rows, "orders oldest first (ties by id), then the A record")
}

func TestGetCustomer(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	for _, id := range []string{"ann", "bob", "cy"} {
		t.Run(id, func(t *testing.T) {
			var got Customer
			var err error
			reqs := requestsOf(client, func() { got, err = s.GetCustomer(t.Context(), id) })
			require.NoError(t, err)
			assert.Equal(t, *sampleCustomer(t, id), got)
			assert.Equal(t, requests{Gets: 1}, reqs, "one GetItem")
		})
	}
	t.Run("missing", func(t *testing.T) {
		var err error
		reqs := requestsOf(client, func() { _, err = s.GetCustomer(t.Context(), "zoe") })
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		assert.Equal(t, requests{Gets: 1}, reqs)
	})
}

func TestCustomerWithOrders(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	// An order without an A record: its partition is not a customer.
	require.NoError(t, s.PlaceOrder(t.Context(), Order{CustomerID: "ghost", OrderID: "o9001", PlacedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Status: "PLACED"}))

	for _, id := range []string{"ann", "bob", "cy"} {
		t.Run(id, func(t *testing.T) {
			var got CustomerOrders
			var err error
			reqs := requestsOf(client, func() { got, err = s.CustomerWithOrders(t.Context(), id) })
			require.NoError(t, err)
			assert.Equal(t, CustomerOrders{Customer: sampleCustomer(t, id), Orders: sampleOrdersOf(id)}, got, "the A record and every order, oldest first")
			assert.Equal(t, oneQuery, reqs, "one Query for the whole collection")
		})
	}
	for _, id := range []string{"zoe", "ghost"} {
		t.Run(id, func(t *testing.T) {
			var err error
			reqs := requestsOf(client, func() { _, err = s.CustomerWithOrders(t.Context(), id) })
			assert.ErrorIs(t, err, singletable.ErrNotFound)
			assert.Equal(t, oneQuery, reqs)
		})
	}
}

func TestCustomerWithRecentOrders(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	ann, bob := newestFirst(sampleOrdersOf("ann")), newestFirst(sampleOrdersOf("bob"))
	tests := []struct {
		customer string
		n        int
		want     []Order
	}{
		{"ann", 3, ann[:3]},
		{"ann", 1, ann[:1]},
		{"ann", 0, nil}, // the customer alone
		{"ann", 24, ann},
		{"ann", 50, ann},
		{"bob", 3, bob}, // o2003 before o2002: same instant, ids descending
		{"bob", 2, bob[:2]},
		{"cy", 3, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.customer, tt.n), func(t *testing.T) {
			var page singletable.CollectionPage[CustomerOrders]
			var err error
			reqs := requestsOf(client, func() { page, err = s.CustomerWithRecentOrders(t.Context(), tt.customer, tt.n) })
			require.NoError(t, err)
			assert.Equal(t, CustomerOrders{Customer: sampleCustomer(t, tt.customer), Orders: tt.want}, page.Value)
			assert.Equal(t, oneQuery, reqs, "the customer and the orders in one request")
			assert.Equal(t, 1+len(tt.want), page.Scanned, "the query read the A record and the N orders, nothing more")
			assert.Positive(t, page.Capacity, "ReturnCapacity: DynamoDB Local reports consumed capacity")
		})
	}
	t.Run("missing", func(t *testing.T) {
		var err error
		reqs := requestsOf(client, func() { _, err = s.CustomerWithRecentOrders(t.Context(), "zoe", 3) })
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		assert.Equal(t, oneQuery, reqs)
	})
	t.Run("negative", func(t *testing.T) {
		var err error
		reqs := requestsOf(client, func() { _, err = s.CustomerWithRecentOrders(t.Context(), "ann", -1) })
		assert.ErrorIs(t, err, singletable.ErrInvalidInput)
		assert.Equal(t, requests{}, reqs, "refused before sending")
	})
}

func TestOlderOrdersContinueTheRecentOnes(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	ctx := t.Context()
	page, err := s.CustomerWithRecentOrders(ctx, "ann", 5)
	require.NoError(t, err)
	got := ids(page.Value.Orders)
	var pages int
	reqs := requestsOf(client, func() {
		for cursor := page.Cursor; cursor != ""; pages++ {
			older, err := s.OlderOrders(ctx, "ann", 5, cursor)
			require.NoError(t, err)
			assert.Nil(t, older.Value.Customer, "the A record was on the first page only")
			got = append(got, ids(older.Value.Orders)...)
			cursor = older.Cursor
		}
	})
	assert.Equal(t, ids(newestFirst(sampleOrdersOf("ann"))), got, "every order once, newest first")
	assert.Equal(t, 4, pages, "19 older orders, 5 a page")
	assert.Equal(t, requests{Queries: int64(pages)}, reqs)

	_, err = s.OlderOrders(ctx, "bob", 5, page.Cursor)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "ann's cursor cannot read bob's partition")
}

func TestOrdersOf(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	for _, id := range []string{"ann", "bob", "cy", "zoe"} {
		t.Run(id, func(t *testing.T) {
			var page singletable.Page[Order]
			var err error
			reqs := requestsOf(client, func() { page, err = s.OrdersOf(t.Context(), id, 100, "") })
			require.NoError(t, err)
			want := sampleOrdersOf(id)
			if want == nil {
				want = []Order{}
			}
			assert.Equal(t, want, page.Items, "the orders alone, oldest first")
			assert.Equal(t, len(want), page.Scanned, "the A record is not read")
			assert.Empty(t, page.Cursor)
			assert.Equal(t, oneQuery, reqs)
			if len(want) > 0 {
				assert.Positive(t, page.Capacity)
			} else {
				// DynamoDB charges 0.5 RCU for a query that reads nothing;
				// DynamoDB Local 1.x reports 0.
				assert.GreaterOrEqual(t, page.Capacity, 0.0)
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		var got [][]string
		cursor := ""
		for {
			page, err := s.OrdersOf(t.Context(), "ann", 10, cursor)
			require.NoError(t, err)
			got = append(got, ids(page.Items))
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
		want := ids(sampleOrdersOf("ann"))
		assert.Equal(t, [][]string{want[:10], want[10:20], want[20:]}, got)
	})
}

// TestMeter checks the capacity the example prints: the meter sees what the
// library reports where the library reports it, asks for it where the
// library cannot, and leaves the caller's input alone.
func TestMeter(t *testing.T) {
	t.Parallel()
	counting := &countingClient{Client: local.Client(t)}
	m := newMeter(counting)
	s, err := NewStore(m, exampleenv.TableName(t))
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	require.NoError(t, seed(t.Context(), s))
	ctx := t.Context()

	before := m.Snapshot()
	_, err = s.GetCustomer(ctx, "ann")
	require.NoError(t, err)
	u := m.Snapshot().Sub(before)
	assert.Equal(t, map[string]int{"GetItem": 1}, u.Requests)
	assert.Equal(t, 1, u.Reports)
	assert.InDelta(t, 0.5, u.Capacity, 0, "a GetItem of an item under 4 KB, eventually consistent")

	before = m.Snapshot()
	page, err := s.OrdersOf(ctx, "ann", 100, "")
	require.NoError(t, err)
	u = m.Snapshot().Sub(before)
	assert.Equal(t, map[string]int{"Query": 1}, u.Requests)
	assert.InDelta(t, page.Capacity, u.Capacity, 0, "the meter agrees with Page.Capacity")
	assert.Greater(t, u.Capacity, 0.5, "24 orders are more than 4 KB")

	in := &dynamodb.GetItemInput{
		TableName: aws.String(s.Table.Name()),
		Key:       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#ann"}, "SK": &types.AttributeValueMemberS{Value: "A"}},
	}
	out, err := m.GetItem(ctx, in)
	require.NoError(t, err)
	assert.NotNil(t, out.ConsumedCapacity)
	assert.Empty(t, in.ReturnConsumedCapacity, "the meter asks on a copy of the input")
}
