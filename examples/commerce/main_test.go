package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
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

// countingClient counts the Query calls on the way to DynamoDB Local.
type countingClient struct {
	singletable.Client
	queries atomic.Int64
}

func (c *countingClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries.Add(1)
	return c.Client.Query(ctx, in, opts...)
}

// newStore creates an empty table of the commerce model, deleted when the test ends.
func newStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	client := &countingClient{Client: local.Client(t)}
	s, err := NewStore(client, exampleenv.TableName(t))
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	return s, client
}

// seededStore is newStore with the sample customers and orders of the example:
//
//	ann: o1 DELIVERED (1 May), o2 SHIPPED (2 May), o3 SHIPPED (3 May), o4 PLACED (4 May), o5 PLACED (5 May)
//	bob: o6 SHIPPED (2 May, 15:00), o7 PLACED (6 May)
func seededStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	s, c := newStore(t)
	require.NoError(t, seed(t.Context(), s))
	return s, c
}

// sampleOrderByID returns a sample order as stored after seeding: at version 1.
func sampleOrderByID(t *testing.T, id string) Order {
	t.Helper()
	for _, so := range sampleOrders() {
		if so.Order.OrderID == id {
			o := so.Order
			o.Version = 1
			return o
		}
	}
	t.Fatalf("no sample order %s", id)
	return Order{}
}

func ids(orders []Order) []string {
	out := []string{}
	for _, o := range orders {
		out = append(out, o.OrderID)
	}
	return out
}

func lineNumbers(items []OrderItem) []int {
	out := []int{}
	for _, it := range items {
		out = append(out, it.Line)
	}
	return out
}

// pagesOf reads every page of a feed and returns the order ids of each page.
func pagesOf(t *testing.T, read func(cursor string) (singletable.Page[Order], error)) [][]string {
	t.Helper()
	pages, err := collect(read)
	require.NoError(t, err)
	out := make([][]string, len(pages))
	for i, pg := range pages {
		out[i] = ids(pg.Items)
		if i < len(pages)-1 {
			assert.NotEmpty(t, pg.Cursor, "page %d of %d has a cursor", i+1, len(pages))
		} else {
			assert.Empty(t, pg.Cursor, "the last page has no cursor")
		}
	}
	return out
}

// feed reads a whole status feed: the global one when customer is "".
func feed(t *testing.T, s *Store, customer string, status OrderStatus) []string {
	t.Helper()
	var all []string
	for _, page := range pagesOf(t, func(cursor string) (singletable.Page[Order], error) {
		if customer == "" {
			return s.OrdersByStatus(t.Context(), status, 100, cursor)
		}
		return s.CustomerOrdersByStatus(t.Context(), customer, status, 100, cursor)
	}) {
		all = append(all, page...)
	}
	if all == nil {
		all = []string{}
	}
	return all
}

// rowCount counts every row of the table (Scan, consistent).
func rowCount(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	pages := dynamodb.NewScanPaginator(s.Table.Client(), &dynamodb.ScanInput{
		TableName:      aws.String(s.Table.Name()),
		Select:         types.SelectCount,
		ConsistentRead: aws.Bool(true),
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(t.Context())
		require.NoError(t, err)
		n += int(out.Count)
	}
	return n
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
		"1. Create customers", "ann  created=true", "ann again (a retried sign-up): already exists, treated as success",
		"2. Place orders", "o5  ann  2024-05-05 09:00  PLACED     3 item(s)  $37.50",
		"3. Point reads", "item o5 #2:    notebook x3 at $4.50, PENDING", "order o99:     not found",
		"4. Line items of o5", "#3 ink",
		"5. Order aggregate of o5 in one Query", "total $37.50",
		"6. Ann's timeline", "page 1: o5 o4 o3", "page 2: o2 o1",
		"7. Status feeds", "o2 o6 o3\n",
		"8. Partial fulfilment", "o4 #1 desk   SHIPPED", "o4 #2 chair  PENDING",
		"9. Ship o4", "o4 is now SHIPPED, version 1 -> 2; history row ORDER_STATUS_EVT#o4#V#00000001",
		"waited until GSI2 and GSI3 show the move", "o2 o6 o3 o4   (o4 joined)", "o5   (o4 left)",
		"shipping o4 again from the stale copy (version 1): refused (errors.Is(err, singletable.ErrConflict))",
		"action 0 (Update Order SK=ORDER): ConditionalCheckFailed: version conflict, expected 1, found 2",
		"action 1 (Create OrderStatusEvent SK=ORDER_STATUS_EVT#o4#V#00000001): ConditionalCheckFailed",
		"10. Delete o5 line 2", "o5 now has lines 1 (pen), 3 (ink), total $24.00",
		"11. Atomic create that rolls back", "action 0 (Create Order PK=ORDER#o3 SK=ORDER): ConditionalCheckFailed",
		"nothing of it is visible: o3 is still ann's with lines 1 (lamp); Bob's timeline is still o7 o6",
		"12. Status history of o4", "o4 is now DELIVERED, version 3", "clerk 1 marks o4 RETURNED (from version 3): done, version 4",
		"clerk 2 cancels o4 from the same version 3: refused", "expected 3, found 4",
		"V#00000003  DELIVERED -> RETURNED   2024-05-10 12:00\n     V#00000002  SHIPPED   -> DELIVERED  2024-05-10 11:00\n     V#00000001  PLACED    -> SHIPPED    2024-05-10 09:00\n",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

func TestCreateCustomerIsIdempotent(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	ann := Customer{CustomerID: "ann", Name: "Ann Lee", Email: "ann@example.com"}

	created, err := s.CreateCustomer(ctx, ann)
	require.NoError(t, err)
	assert.True(t, created)

	created, err = s.CreateCustomer(ctx, Customer{CustomerID: "ann", Name: "Impostor", Email: "x@example.com"})
	require.NoError(t, err, "an existing customer is success")
	assert.False(t, created)

	got, err := s.GetCustomer(ctx, "ann")
	require.NoError(t, err)
	assert.Equal(t, ann, got, "the second create changed nothing")
	assert.Equal(t, 1, rowCount(t, s))

	_, err = s.GetCustomer(ctx, "zoe")
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestPointReads(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()

	bob, err := s.GetCustomer(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, Customer{CustomerID: "bob", Name: "Bob Ray", Email: "bob@example.com"}, bob)

	for _, id := range []string{"o1", "o4", "o7"} {
		o, err := s.GetOrder(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, sampleOrderByID(t, id), o)
	}
	_, err = s.GetOrder(ctx, "o99")
	assert.ErrorIs(t, err, singletable.ErrNotFound)

	it, err := s.GetItem(ctx, "o5", 2)
	require.NoError(t, err)
	assert.Equal(t, OrderItem{OrderID: "o5", Line: 2, SKU: "notebook", Quantity: 3, PriceCents: 450, Status: ItemPending}, it)
	_, err = s.GetItem(ctx, "o5", 4)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestOrderItemsByPrefix(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	// o10's partition must not leak into o1's (the reference's begins_with(SK,
	// "ORDER#o1") would match it).
	_, err := s.PlaceOrder(t.Context(), Order{OrderID: "o10", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 9)},
		[]OrderItem{{SKU: "hat", Quantity: 1, PriceCents: 100}})
	require.NoError(t, err)

	tests := []struct {
		order string
		lines []int
		skus  []string
	}{
		{"o5", []int{1, 2, 3}, []string{"pen", "notebook", "ink"}},
		{"o4", []int{1, 2}, []string{"desk", "chair"}},
		{"o1", []int{1}, []string{"book"}},
		{"o10", []int{1}, []string{"hat"}},
		{"o99", []int{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.order, func(t *testing.T) {
			items, err := s.OrderItems(t.Context(), tt.order)
			require.NoError(t, err)
			assert.Equal(t, tt.lines, lineNumbers(items))
			skus := []string{}
			for _, it := range items {
				skus = append(skus, it.SKU)
				assert.Equal(t, tt.order, it.OrderID)
				assert.Equal(t, ItemPending, it.Status)
			}
			assert.Equal(t, tt.skus, skus)
		})
	}
}

func TestOrderAggregateIsOneQuery(t *testing.T) {
	t.Parallel()
	s, client := seededStore(t)
	_, err := s.PlaceOrder(t.Context(), Order{OrderID: "o10", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 9)},
		[]OrderItem{{SKU: "hat", Quantity: 1, PriceCents: 100}})
	require.NoError(t, err)

	tests := []struct {
		order string
		lines []int
		total int64
	}{
		{"o5", []int{1, 2, 3}, 10*120 + 3*450 + 2*600},
		{"o2", []int{1, 2}, 2*1250 + 800},
		{"o1", []int{1}, 3900}, // not o10's hat
	}
	for _, tt := range tests {
		t.Run(tt.order, func(t *testing.T) {
			before := client.queries.Load()
			agg, err := s.OrderAggregate(t.Context(), tt.order)
			require.NoError(t, err)
			assert.Equal(t, int64(1), client.queries.Load()-before, "one Query")
			assert.Equal(t, sampleOrderByID(t, tt.order), agg.Order)
			assert.Equal(t, tt.lines, lineNumbers(agg.Items))
			for _, it := range agg.Items {
				assert.Equal(t, tt.order, it.OrderID)
			}
			assert.Equal(t, tt.total, agg.Total())
		})
	}
	_, err = s.OrderAggregate(t.Context(), "o99")
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = s.OrderAggregate(t.Context(), "o#1")
	assert.ErrorIs(t, err, singletable.ErrInvalidKey, "an id holding the delimiter is refused")
}

func TestCustomerTimelinePages(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	tests := []struct {
		name     string
		customer string
		limit    int
		want     [][]string
	}{
		{"ann by 3", "ann", 3, [][]string{{"o5", "o4", "o3"}, {"o2", "o1"}}},
		{"ann by 2", "ann", 2, [][]string{{"o5", "o4"}, {"o3", "o2"}, {"o1"}}},
		{"ann by 1", "ann", 1, [][]string{{"o5"}, {"o4"}, {"o3"}, {"o2"}, {"o1"}, {}}},
		// A page that ends exactly at the last order still has a cursor
		// (DynamoDB cannot know there is no more); the next page is empty.
		{"ann by 5", "ann", 5, [][]string{{"o5", "o4", "o3", "o2", "o1"}, {}}},
		{"ann by 10", "ann", 10, [][]string{{"o5", "o4", "o3", "o2", "o1"}}},
		{"bob by 3", "bob", 3, [][]string{{"o7", "o6"}}},
		{"nobody", "zoe", 3, [][]string{{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pagesOf(t, func(cursor string) (singletable.Page[Order], error) {
				return s.CustomerTimeline(t.Context(), tt.customer, tt.limit, cursor)
			})
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStatusFeeds(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	tests := []struct {
		name     string
		customer string // "" for the global feed (GSI2), oldest first
		status   OrderStatus
		limit    int
		want     [][]string
	}{
		{"SHIPPED, oldest first across customers", "", StatusShipped, 10, [][]string{{"o2", "o6", "o3"}}},
		{"SHIPPED by 2", "", StatusShipped, 2, [][]string{{"o2", "o6"}, {"o3"}}},
		{"PLACED", "", StatusPlaced, 10, [][]string{{"o4", "o5", "o7"}}},
		{"DELIVERED", "", StatusDelivered, 10, [][]string{{"o1"}}},
		{"ann PLACED, newest first", "ann", StatusPlaced, 10, [][]string{{"o5", "o4"}}},
		{"ann SHIPPED by 1", "ann", StatusShipped, 1, [][]string{{"o3"}, {"o2"}, {}}},
		{"bob SHIPPED", "bob", StatusShipped, 10, [][]string{{"o6"}}},
		{"bob DELIVERED", "bob", StatusDelivered, 10, [][]string{{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pagesOf(t, func(cursor string) (singletable.Page[Order], error) {
				if tt.customer == "" {
					return s.OrdersByStatus(t.Context(), tt.status, tt.limit, cursor)
				}
				return s.CustomerOrdersByStatus(t.Context(), tt.customer, tt.status, tt.limit, cursor)
			})
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestChangeOrderStatusMovesFeeds(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()
	o4, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)

	got, err := s.ChangeOrderStatus(ctx, o4, StatusShipped)
	require.NoError(t, err)
	want := o4
	want.Status, want.Version = StatusShipped, 2
	assert.Equal(t, want, got, "the status changed and the version moved on")
	stored, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, want, stored, "what ChangeOrderStatus returns is what is stored")

	feeds := func() map[string][]string {
		return map[string][]string{
			"SHIPPED":     feed(t, s, "", StatusShipped),
			"PLACED":      feed(t, s, "", StatusPlaced),
			"ann PLACED":  feed(t, s, "ann", StatusPlaced),
			"ann SHIPPED": feed(t, s, "ann", StatusShipped),
		}
	}
	wantFeeds := map[string][]string{
		"SHIPPED":     {"o2", "o6", "o3", "o4"}, // joined, in creation order
		"PLACED":      {"o5", "o7"},             // left
		"ann PLACED":  {"o5"},                   // left
		"ann SHIPPED": {"o4", "o3", "o2"},       // joined, newest first
	}
	assert.Equal(t, wantFeeds, feeds())
	timeline := pagesOf(t, func(cursor string) (singletable.Page[Order], error) {
		return s.CustomerTimeline(ctx, "ann", 10, cursor)
	})
	assert.Equal(t, [][]string{{"o5", "o4", "o3", "o2", "o1"}}, timeline, "the timeline does not depend on the status")

	// A transition from a stale copy fails and changes nothing.
	_, err = s.ChangeOrderStatus(ctx, o4, StatusDelivered)
	assert.ErrorIs(t, err, singletable.ErrCondition)
	assert.ErrorIs(t, err, singletable.ErrConflict)
	stored, err = s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, StatusShipped, stored.Status)
	assert.Equal(t, wantFeeds, feeds())
	assert.Equal(t, []string{"o1"}, feed(t, s, "", StatusDelivered), "o4 did not become DELIVERED")
}

func TestChangeItemStatus(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()

	got, err := s.ChangeItemStatus(ctx, "o4", 1, ItemShipped)
	require.NoError(t, err)
	assert.Equal(t, OrderItem{OrderID: "o4", Line: 1, SKU: "desk", Quantity: 1, PriceCents: 25000, Status: ItemShipped}, got)

	items, err := s.OrderItems(ctx, "o4")
	require.NoError(t, err)
	statuses := []ItemStatus{}
	for _, it := range items {
		statuses = append(statuses, it.Status)
	}
	assert.Equal(t, []ItemStatus{ItemShipped, ItemPending}, statuses, "only line 1 changed")
	o4, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, StatusPlaced, o4.Status, "the order's status is its own")

	_, err = s.ChangeItemStatus(ctx, "o4", 9, ItemShipped)
	assert.ErrorIs(t, err, singletable.ErrNotFound, "no line 9: nothing is created")
	_, err = s.GetItem(ctx, "o4", 9)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestDeleteItem(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()
	rows := rowCount(t, s)

	require.NoError(t, s.DeleteItem(ctx, "o5", 2))
	_, err := s.GetItem(ctx, "o5", 2)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	agg, err := s.OrderAggregate(ctx, "o5")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3}, lineNumbers(agg.Items))
	assert.Equal(t, int64(10*120+2*600), agg.Total())
	assert.Equal(t, rows-1, rowCount(t, s))

	require.NoError(t, s.DeleteItem(ctx, "o5", 2), "deleting a missing line succeeds")
	assert.Equal(t, rows-1, rowCount(t, s))
}

func TestPlaceOrder(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()
	rows := rowCount(t, s)

	placed, err := s.PlaceOrder(ctx, Order{OrderID: "o8", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 7)},
		[]OrderItem{{SKU: "a", Quantity: 1, PriceCents: 100}, {SKU: "b", Quantity: 2, PriceCents: 200}, {SKU: "c", Quantity: 3, PriceCents: 300}})
	require.NoError(t, err)
	agg, err := s.OrderAggregate(ctx, "o8")
	require.NoError(t, err)
	assert.Equal(t, placed, agg, "what PlaceOrder returns is what is stored")
	assert.Equal(t, StatusPlaced, agg.Order.Status)
	assert.Equal(t, []int{1, 2, 3}, lineNumbers(agg.Items))
	assert.Equal(t, int64(100+400+900), agg.Total())
	assert.Equal(t, rows+4, rowCount(t, s))
	assert.Equal(t, [][]string{{"o8", "o7", "o6"}}, pagesOf(t, func(cursor string) (singletable.Page[Order], error) {
		return s.CustomerTimeline(ctx, "bob", 10, cursor)
	}))
}

func TestPlaceOrderRollsBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// plant writes a row that the transaction will collide with.
		plant   func(t *testing.T, s *Store)
		order   Order
		items   []OrderItem
		reasons []singletable.TxReason
	}{
		{
			name:  "order id taken",
			plant: func(*testing.T, *Store) {}, // ann's o3 exists with line 1
			order: Order{OrderID: "o3", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 7)},
			items: []OrderItem{{SKU: "hat", Quantity: 1, PriceCents: 2000}, {SKU: "scarf", Quantity: 1, PriceCents: 3000}},
			reasons: []singletable.TxReason{
				// Order is versioned: the library reads it back and explains the
				// failed create as a conflict with the version it found.
				{Index: 0, Op: "Create", Entity: "Order", Key: map[string]string{"PK": "ORDER#o3", "SK": "ORDER"}, Code: "ConditionalCheckFailed",
					Conflict: &singletable.ConflictError{Op: "Create", Entity: "Order", Key: map[string]string{"PK": "ORDER#o3", "SK": "ORDER"}, Current: 1, CurrentKnown: true}},
				{Index: 1, Op: "Create", Entity: "OrderItem", Key: map[string]string{"PK": "ORDER#o3", "SK": "ITEM#0001"}, Code: "ConditionalCheckFailed"},
			},
		},
		{
			name: "last line exists",
			plant: func(t *testing.T, s *Store) {
				_, err := s.Items.Put(t.Context(), OrderItem{OrderID: "o9", Line: 3, SKU: "stray", Quantity: 1, PriceCents: 1, Status: ItemPending})
				require.NoError(t, err)
			},
			order: Order{OrderID: "o9", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 7)},
			items: []OrderItem{{SKU: "a", Quantity: 1, PriceCents: 100}, {SKU: "b", Quantity: 1, PriceCents: 100}, {SKU: "c", Quantity: 1, PriceCents: 100}},
			reasons: []singletable.TxReason{
				{Index: 3, Op: "Create", Entity: "OrderItem", Key: map[string]string{"PK": "ORDER#o9", "SK": "ITEM#0003"}, Code: "ConditionalCheckFailed"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := seededStore(t)
			ctx := t.Context()
			tt.plant(t, s)
			rows := rowCount(t, s)
			itemsBefore, err := s.OrderItems(ctx, tt.order.OrderID)
			require.NoError(t, err)
			bobBefore := feed(t, s, "bob", StatusPlaced)

			_, err = s.PlaceOrder(ctx, tt.order, tt.items)
			require.Error(t, err)
			assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
			var txErr *singletable.TxError
			require.ErrorAs(t, err, &txErr)
			for i := range txErr.Reasons {
				txErr.Reasons[i].Message = "" // DynamoDB's wording is not ours to test
			}
			assert.Equal(t, tt.reasons, txErr.Reasons)

			assert.Equal(t, rows, rowCount(t, s), "the failed transaction left zero rows")
			itemsAfter, err := s.OrderItems(ctx, tt.order.OrderID)
			require.NoError(t, err)
			assert.Equal(t, itemsBefore, itemsAfter, "no line item was written or changed")
			assert.Equal(t, bobBefore, feed(t, s, "bob", StatusPlaced), "the order joined no feed")
			if o, err := s.GetOrder(ctx, tt.order.OrderID); err == nil {
				assert.NotEqual(t, tt.order.CustomerID, o.CustomerID, "the existing order is not Bob's")
			} else {
				assert.True(t, errors.Is(err, singletable.ErrNotFound), "the order root was not written: %v", err)
			}
		})
	}
}

// TestStatusHistory makes three status changes to o4 and reads its history:
// newest first, one row per change, numbered by the version each change was
// made on, with the statuses it went from and to.
func TestStatusHistory(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()
	at := t0.AddDate(0, 0, 9)
	s.Now = clock(at, time.Hour)
	rows := rowCount(t, s)

	o4, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	history, err := s.OrderHistory(ctx, "o4")
	require.NoError(t, err)
	assert.Empty(t, history, "a placed order has no history yet")

	o := o4
	for _, to := range []OrderStatus{StatusShipped, StatusDelivered, StatusReturned} {
		o, err = s.ChangeOrderStatus(ctx, o, to)
		require.NoError(t, err)
	}
	want := o4
	want.Status, want.Version = StatusReturned, 4
	assert.Equal(t, want, o)
	stored, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, want, stored)

	history, err = s.OrderHistory(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, []OrderStatusEvent{
		{OrderID: "o4", OrderVersion: 3, From: StatusDelivered, To: StatusReturned, At: at.Add(2 * time.Hour)},
		{OrderID: "o4", OrderVersion: 2, From: StatusShipped, To: StatusDelivered, At: at.Add(time.Hour)},
		{OrderID: "o4", OrderVersion: 1, From: StatusPlaced, To: StatusShipped, At: at},
	}, history, "V3, V2, V1: newest first")
	assert.Equal(t, rows+3, rowCount(t, s), "one history row per change, nothing else")

	// The history rows stay out of everything else in the partition and of
	// the feeds.
	agg, err := s.OrderAggregate(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, want, agg.Order)
	assert.Equal(t, []int{1, 2}, lineNumbers(agg.Items))
	items, err := s.OrderItems(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, lineNumbers(items))
	assert.Equal(t, []string{"o4"}, feed(t, s, "", StatusReturned))
	assert.Equal(t, []string{"o4"}, feed(t, s, "ann", StatusReturned))
	assert.Equal(t, []string{"o2", "o6", "o3"}, feed(t, s, "", StatusShipped), "o4 passed through SHIPPED and left")
	assert.Equal(t, []string{"o1"}, feed(t, s, "", StatusDelivered))

	other, err := s.OrderHistory(ctx, "o5")
	require.NoError(t, err)
	assert.Empty(t, other, "history is per order")
}

// TestStaleStatusChangeIsRejected: a writer holding an old version of the
// order is refused as a whole: neither the order nor its history changes.
func TestStaleStatusChangeIsRejected(t *testing.T) {
	t.Parallel()
	orderKey := map[string]string{"PK": "ORDER#o4", "SK": "ORDER"}
	tests := []struct {
		name string
		// overtake changes the order after the stale writer read it, and
		// returns the history rows it wrote.
		overtake func(t *testing.T, s *Store, read Order) []OrderStatusEvent
		reasons  []singletable.TxReason
	}{
		{
			name: "another writer changed the status",
			overtake: func(t *testing.T, s *Store, read Order) []OrderStatusEvent {
				_, err := s.ChangeOrderStatus(t.Context(), read, StatusShipped)
				require.NoError(t, err)
				return []OrderStatusEvent{{OrderID: "o4", OrderVersion: 1, From: StatusPlaced, To: StatusShipped, At: t0.AddDate(0, 0, 9)}}
			},
			reasons: []singletable.TxReason{
				{Index: 0, Op: "Update", Entity: "Order", Key: orderKey, Code: "ConditionalCheckFailed",
					Conflict: &singletable.ConflictError{Op: "Update", Entity: "Order", Key: orderKey, Expected: 1, Current: 2, CurrentKnown: true}},
				// The winner's history row holds the key the stale writer's would have had.
				{Index: 1, Op: "Create", Entity: "OrderStatusEvent", Key: map[string]string{"PK": "ORDER#o4", "SK": "ORDER_STATUS_EVT#o4#V#00000001"}, Code: "ConditionalCheckFailed"},
			},
		},
		{
			name: "the order was rewritten without a status change",
			overtake: func(t *testing.T, s *Store, read Order) []OrderStatusEvent {
				_, err := s.Orders.Put(t.Context(), read) // same content, version 1 -> 2, no history
				require.NoError(t, err)
				return []OrderStatusEvent{}
			},
			reasons: []singletable.TxReason{
				// Only the version check failed; the history row alone could
				// have been written, and was not.
				{Index: 0, Op: "Update", Entity: "Order", Key: orderKey, Code: "ConditionalCheckFailed",
					Conflict: &singletable.ConflictError{Op: "Update", Entity: "Order", Key: orderKey, Expected: 1, Current: 2, CurrentKnown: true}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := seededStore(t)
			s.Now = clock(t0.AddDate(0, 0, 9), time.Hour)
			ctx := t.Context()
			stale, err := s.GetOrder(ctx, "o4")
			require.NoError(t, err)
			wantHistory := tt.overtake(t, s, stale)
			before, err := s.GetOrder(ctx, "o4")
			require.NoError(t, err)
			rows := rowCount(t, s)

			_, err = s.ChangeOrderStatus(ctx, stale, StatusCancelled)
			require.Error(t, err)
			assert.ErrorIs(t, err, singletable.ErrConflict)
			var txErr *singletable.TxError
			require.ErrorAs(t, err, &txErr)
			for i := range txErr.Reasons {
				txErr.Reasons[i].Message = "" // DynamoDB's wording is not ours to test
			}
			assert.Equal(t, tt.reasons, txErr.Reasons)

			after, err := s.GetOrder(ctx, "o4")
			require.NoError(t, err)
			assert.Equal(t, before, after, "the order did not change")
			history, err := s.OrderHistory(ctx, "o4")
			require.NoError(t, err)
			assert.Equal(t, wantHistory, history, "no history row was added")
			assert.Equal(t, rows, rowCount(t, s))
			assert.Empty(t, feed(t, s, "", StatusCancelled), "o4 joined no CANCELLED feed")
		})
	}
}

// TestConcurrentStatusChanges: writers racing from the same version; exactly
// one wins and writes the one history row.
func TestConcurrentStatusChanges(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	ctx := t.Context()
	o4, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)

	targets := []OrderStatus{StatusShipped, StatusCancelled, StatusDelivered, StatusReturned, StatusShipped, StatusCancelled, StatusDelivered, StatusReturned}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, to := range targets {
		wg.Go(func() { _, errs[i] = s.ChangeOrderStatus(ctx, o4, to) })
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			assert.Equal(t, -1, won, "only one writer wins")
			won = i
			continue
		}
		assert.ErrorIs(t, err, singletable.ErrConflict, "writer %d", i)
	}
	require.NotEqual(t, -1, won, "one writer wins")

	stored, err := s.GetOrder(ctx, "o4")
	require.NoError(t, err)
	assert.Equal(t, targets[won], stored.Status)
	assert.Equal(t, int64(2), stored.Version)
	history, err := s.OrderHistory(ctx, "o4")
	require.NoError(t, err)
	require.Len(t, history, 1)
	assert.Equal(t, OrderStatusEvent{OrderID: "o4", OrderVersion: 1, From: StatusPlaced, To: targets[won], At: history[0].At}, history[0])
}

func TestChangeOrderStatusNeedsTheVersion(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	rows := rowCount(t, s)
	unread := sampleOrderByID(t, "o4")
	unread.Version = 0 // built, not read
	_, err := s.ChangeOrderStatus(t.Context(), unread, StatusShipped)
	assert.ErrorIs(t, err, singletable.ErrConflict, "version 0 is an order without a version; the stored one has one")
	assert.Equal(t, rows, rowCount(t, s))
}
