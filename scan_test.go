package singletable

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanFixture writes 2,000 items of three entity types: 200 customers, 1,000
// orders and 800 line items over 200 partitions.
func scanFixture(t *testing.T, tbl *Table) (customers []tCustomer, orders []tOrder, lines []tLineItem) {
	t.Helper()
	ce, oe, le := registerAll(t, tbl)
	ctx := context.Background()
	for c := range 200 {
		cid := fmt.Sprintf("c%03d", c)
		customers = append(customers, tCustomer{CustomerID: cid, Name: "n" + cid})
		for o := range 5 {
			oid := fmt.Sprintf("o%d", o)
			orders = append(orders, tOrder{CustomerID: cid, OrderID: oid, Status: "NEW", CreatedAt: t0, Total: int64(c*10 + o)})
			if o < 4 {
				lines = append(lines, tLineItem{CustomerID: cid, OrderID: oid, Line: 1, SKU: "sku-" + cid + oid})
			}
		}
	}
	_, err := ce.BatchPut(ctx, customers)
	require.NoError(t, err)
	_, err = oe.BatchPut(ctx, orders)
	require.NoError(t, err)
	_, err = le.BatchPut(ctx, lines)
	require.NoError(t, err)
	return customers, orders, lines
}

// TestScan2000ThreeTypes scans 2,000 items of 3 entity types: an entity scan
// yields exactly its type's items, a table scan all of them decoded by type, a
// 4-segment parallel scan each item exactly once, and paging with cursors across
// calls has no gap or repeat.
func TestScan2000ThreeTypes(t *testing.T) {
	tbl, _ := newTestTable(t)
	customers, orders, lines := scanFixture(t, tbl)
	oe := MustEntity[tOrder](t, tbl)
	ctx := context.Background()

	// Entity.ScanAll: the orders, and only them.
	var gotOrders []tOrder
	for o, err := range oe.ScanAll(ctx) {
		require.NoError(t, err)
		gotOrders = append(gotOrders, o)
	}
	assert.ElementsMatch(t, orders, gotOrders, "Entity.ScanAll yields exactly the orders")

	// Table.ScanAll: every item, decoded by type.
	var gc []tCustomer
	var gl []tLineItem
	gotOrders = nil
	for v, err := range tbl.ScanAll(ctx) {
		require.NoError(t, err)
		switch x := v.(type) {
		case tCustomer:
			gc = append(gc, x)
		case tOrder:
			gotOrders = append(gotOrders, x)
		case tLineItem:
			gl = append(gl, x)
		default:
			t.Fatalf("unexpected %T", v)
		}
	}
	assert.ElementsMatch(t, customers, gc)
	assert.ElementsMatch(t, orders, gotOrders)
	assert.ElementsMatch(t, lines, gl)

	// A 4-segment parallel scan across goroutines: each item exactly once.
	var mu sync.Mutex
	seen := map[string]int{}
	perSegment := make([]int, 4)
	var wg sync.WaitGroup
	for seg := range 4 {
		wg.Go(func() {
			for v, err := range tbl.ScanAll(ctx, Segments(4), Segment(seg), Limit(50)) {
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				seen[fmt.Sprintf("%T %+v", v, v)]++
				perSegment[seg]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, 2000, "every item")
	for k, n := range seen {
		require.Equal(t, 1, n, "item %s seen more than once", k)
	}
	t.Logf("items per segment: %v", perSegment)

	// Paging with cursors across calls, per segment: no gap, no repeat.
	var paged []tOrder
	pages := 0
	for seg := range 4 {
		cursor := ""
		for {
			page, err := oe.Scan(ctx, Segments(4), Segment(seg), Limit(97), After(cursor), ReturnCapacity())
			require.NoError(t, err)
			pages++
			assert.Positive(t, page.Capacity)
			assert.LessOrEqual(t, page.Scanned, 97)
			paged = append(paged, page.Items...)
			if page.Cursor == "" {
				break
			}
			cursor = page.Cursor
		}
	}
	assert.ElementsMatch(t, orders, paged, "pages over the 4 segments hold every order once")
	assert.Greater(t, pages, 20)

	// And a whole scan page by page, with a Filter.
	var filtered []tOrder
	cursor := ""
	for {
		page, err := oe.Scan(ctx, Limit(300), After(cursor), Filter(expression.Name("total").LessThan(expression.Value(50))))
		require.NoError(t, err)
		filtered = append(filtered, page.Items...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	var want []tOrder
	for _, o := range orders {
		if o.Total < 50 {
			want = append(want, o)
		}
	}
	assert.ElementsMatch(t, want, filtered)

	// A cursor resumes its own scan only.
	p0, err := oe.Scan(ctx, Segments(4), Segment(0), Limit(5))
	require.NoError(t, err)
	require.NotEmpty(t, p0.Cursor)
	_, err = oe.Scan(ctx, Segments(4), Segment(1), After(p0.Cursor))
	require.ErrorIs(t, err, ErrInvalidCursor, "another segment's cursor")
	_, err = tbl.Scan(ctx, Segments(4), Segment(0), After(p0.Cursor))
	require.ErrorIs(t, err, ErrInvalidCursor, "an entity scan's cursor in a table scan")
	q, err := oe.Query(ctx, tOrder{CustomerID: "c001"}, Limit(1))
	require.NoError(t, err)
	_, err = oe.Scan(ctx, After(q.Cursor))
	require.ErrorIs(t, err, ErrInvalidCursor, "a query's cursor")
}

// MustEntity returns the entity of T registered on tbl, registering it once.
func MustEntity[T any](t *testing.T, tbl *Table) *Entity[T] {
	t.Helper()
	tbl.mu.RLock()
	info := tbl.byGoType[typeOf[T]()]
	tbl.mu.RUnlock()
	if info != nil {
		return &Entity[T]{entity{table: tbl, info: info}}
	}
	return MustRegister[T](tbl)
}

// TestScanOptionsRefused: what the types cannot rule out is refused before
// sending, naming the option.
func TestScanOptionsRefused(t *testing.T) {
	tbl := offlineTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	refused := func(err error, mention string) {
		t.Helper()
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), mention)
	}
	_, err := orders.Scan(ctx, Segments(4))
	refused(err, "Segments(4) needs Segment(i)")
	_, err = orders.Scan(ctx, Segment(1))
	refused(err, "Segment(1) needs Segments(total)")
	_, err = orders.Scan(ctx, Segments(4), Segment(4))
	refused(err, "Segment(4) is outside Segments(4)")
	_, err = orders.Scan(ctx, Segments(0), Segment(0))
	refused(err, "Segments(0)")
	_, err = tbl.Scan(ctx, Segment(-1), Segments(2))
	refused(err, "Segment(-1)")
	_, err = orders.Scan(ctx, On("GSI1"), Consistent())
	refused(err, "consistent")
	_, err = orders.Scan(ctx, On("GSI9"))
	refused(err, `no index "GSI9"`)
	_, err = MustEntity[tCustomer](t, tbl).Scan(ctx, On("GSI1"))
	refused(err, "no key templates for index GSI1")
	_, err = orders.Scan(ctx, nil)
	refused(err, "option 1 is nil")
	_, err = orders.ScanCount(ctx, Limit(5))
	refused(err, "Limit(5) does not apply to a count")
	_, err = tbl.ScanCount(ctx, OnUnknown(UnknownSkip))
	refused(err, "OnUnknown does not apply to a count")
	_, err = tbl.Count(ctx, "CUST#c1", OnUnknown(UnknownFail))
	refused(err, "OnUnknown does not apply to a count")
	_, err = orders.Count(ctx, tOrder{CustomerID: "c1"}, Limit(1))
	refused(err, "Limit(1) does not apply to a count")
}

func typeOf[T any]() reflectType { return reflect.TypeFor[T]() }

type reflectType = reflect.Type
