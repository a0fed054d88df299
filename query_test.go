package singletable

import (
	"context"
	"encoding/base64"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedOrders puts n orders for a customer, each with two line items, and returns
// the orders in sort key order.
func seedOrders(t *testing.T, orders *Entity[tOrder], items *Entity[tLineItem], cust string, n int) []tOrder {
	t.Helper()
	var all []tOrder
	var lines []tLineItem
	for i := range n {
		o := order(cust, i)
		all = append(all, o)
		for l := 1; l <= 2; l++ {
			lines = append(lines, tLineItem{CustomerID: cust, OrderID: o.OrderID, Line: l, SKU: "s"})
		}
	}
	ctx := context.Background()
	_, err := orders.BatchPut(ctx, all)
	require.NoError(t, err)
	_, err = items.BatchPut(ctx, lines)
	require.NoError(t, err)
	return all
}

func orderIDs(os []tOrder) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.OrderID
	}
	return out
}

func TestQuerySortKeyConditions(t *testing.T) {
	tbl, client := newTestTable(t)
	customers, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	_, err := customers.Put(ctx, tCustomer{CustomerID: "c1", Name: "Ann"})
	require.NoError(t, err)
	all := seedOrders(t, orders, items, "c1", 12)
	seedOrders(t, orders, items, "c2", 3)
	ids := orderIDs(all)
	key := tOrder{CustomerID: "c1"}

	cases := []struct {
		name string
		opts []QueryOption
		want []string
	}{
		{"whole partition, other types skipped", nil, ids},
		{"descending", []QueryOption{Descending()}, reversed(ids)},
		{"equal", []QueryOption{SKEqual(tOrder{CustomerID: "c1", OrderID: "o004"})}, []string{"o004"}},
		{"equal raw", []QueryOption{SKEqual("ORDER#o004")}, []string{"o004"}},
		{"less than", []QueryOption{SKLessThan(tOrder{OrderID: "o003"})}, ids[:3]},
		{"less or equal", []QueryOption{SKLessThanEqual(tOrder{OrderID: "o003"})}, ids[:4]},
		{"greater than", []QueryOption{SKGreaterThan(tOrder{OrderID: "o009"})}, ids[10:]},
		{"greater or equal", []QueryOption{SKGreaterThanEqual(tOrder{OrderID: "o009"})}, ids[9:]},
		{"between", []QueryOption{SKBetween(tOrder{OrderID: "o002"}, tOrder{OrderID: "o005"})}, ids[2:6]},
		{"begins with raw", []QueryOption{SKBeginsWith("ORDER#o01")}, ids[10:]},
		{"filter", []QueryOption{Filter(expression.Name("status").Equal(expression.Value("PENDING")))}, []string{"o000", "o002", "o004", "o006", "o008", "o010"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := client.count("Query")
			page, err := orders.Query(ctx, key, c.opts...)
			require.NoError(t, err)
			assert.Equal(t, c.want, orderIDs(page.Items))
			assert.Empty(t, page.Cursor)
			assert.Equal(t, before+1, client.count("Query"), "one request")
		})
	}

	// The line items of one order by sort key prefix, from a partly filled value.
	page, err := items.Query(ctx, tLineItem{CustomerID: "c1"}, SKBeginsWith(tLineItem{OrderID: "o003"}))
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	assert.Equal(t, []int{1, 2}, []int{page.Items[0].Line, page.Items[1].Line})
	assert.Equal(t, "o003", page.Items[1].OrderID)

	_, err = orders.Query(ctx, key, SKEqual(tOrder{}))
	assert.ErrorIs(t, err, ErrInvalidKey, "SKEqual needs a complete key")
	_, err = orders.Query(ctx, key, SKEqual(3))
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = orders.Query(ctx, key, SKEqual("a"), SKEqual("b"))
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = orders.Query(ctx, tOrder{})
	assert.ErrorIs(t, err, ErrInvalidKey, "the partition needs its inputs")
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestQueryIndexes(t *testing.T) {
	tbl, _ := newTestTable(t)
	customers, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	all := seedOrders(t, orders, items, "c1", 10)
	ids := orderIDs(all)

	// Newest first from the reverse-time index, without Descending.
	page, err := orders.Query(ctx, tOrder{CustomerID: "c1"}, On("GSI2"), Limit(3))
	require.NoError(t, err)
	assert.Equal(t, reversed(ids)[:3], orderIDs(page.Items))
	assert.NotEmpty(t, page.Cursor)

	// Status feed, oldest first, and a time range on it.
	page, err = orders.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"o001", "o003", "o005", "o007", "o009"}, orderIDs(page.Items))
	page, err = orders.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI1"), SKBetween(tOrder{CreatedAt: all[3].CreatedAt}, tOrder{CreatedAt: all[7].CreatedAt}))
	require.NoError(t, err)
	assert.Equal(t, []string{"o003", "o005", "o007"}, orderIDs(page.Items), "a partial upper bound includes its whole group")

	_, err = orders.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI1"), Consistent())
	assert.ErrorIs(t, err, ErrInvalidInput, "indexes have no consistent reads")
	_, err = orders.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI9"))
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = items.Query(ctx, tLineItem{}, On("GSI1"))
	assert.ErrorIs(t, err, ErrInvalidInput, "line items are not in GSI1")

	// A partition-only index.
	_, err = customers.Put(ctx, tCustomer{CustomerID: "c9", Name: "Zed", Email: "z@example.com"})
	require.NoError(t, err)
	cp, err := customers.Query(ctx, tCustomer{Email: "z@example.com"}, On("GSI3"))
	require.NoError(t, err)
	require.Len(t, cp.Items, 1)
	assert.Equal(t, "c9", cp.Items[0].CustomerID)
}

func TestQueryPagesWithCursor(t *testing.T) {
	tbl, client := newTestTable(t, WithCursorSecret([]byte("s3cret")))
	_, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	all := seedOrders(t, orders, items, "c1", 25)
	seedOrders(t, orders, items, "c2", 5)
	key := tOrder{CustomerID: "c1"}

	for _, desc := range []bool{false, true} {
		var got []string
		cursor := ""
		pages := 0
		for {
			opts := []QueryOption{On("GSI2"), Limit(4), After(cursor)}
			if desc {
				opts = append(opts, Descending())
			}
			page, err := orders.Query(ctx, key, opts...)
			require.NoError(t, err)
			got = append(got, orderIDs(page.Items)...)
			pages++
			if page.Cursor == "" {
				break
			}
			cursor = page.Cursor
		}
		want := reversed(orderIDs(all))
		if desc {
			want = orderIDs(all)
		}
		assert.Equal(t, want, got, "no gaps, no duplicates")
		assert.Equal(t, 7, pages)
	}

	// All walks every page.
	var viaAll []string
	for o, err := range orders.All(ctx, key, Limit(3)) {
		require.NoError(t, err)
		viaAll = append(viaAll, o.OrderID)
	}
	assert.Equal(t, orderIDs(all), viaAll)

	// Tampered and foreign cursors are refused before anything is sent.
	page, err := orders.Query(ctx, key, Limit(2))
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(page.Cursor)
	require.NoError(t, err)
	before := client.count("Query")
	for i := range raw {
		bad := slices.Clone(raw)
		bad[i] ^= 0x01
		_, err := orders.Query(ctx, key, Limit(2), After(base64.RawURLEncoding.EncodeToString(bad)))
		require.ErrorIs(t, err, ErrInvalidCursor, "byte %d flipped", i)
	}
	for name, c := range map[string]string{
		"garbage":         "not a cursor!",
		"truncated":       page.Cursor[:len(page.Cursor)-3],
		"other partition": page.Cursor,
		"other index":     page.Cursor,
		"other direction": page.Cursor,
		"other table key": mustCursor(t, offlineTable(t, WithCursorSecret([]byte("other"))), orders, key),
	} {
		opts := []QueryOption{Limit(2), After(c)}
		k := key
		switch name {
		case "other partition":
			k = tOrder{CustomerID: "c2"}
		case "other index":
			opts = append(opts, On("GSI2"))
		case "other direction":
			opts = append(opts, Descending())
		}
		_, err := orders.Query(ctx, k, opts...)
		assert.ErrorIs(t, err, ErrInvalidCursor, name)
	}
	assert.Equal(t, before, client.count("Query"), "no request was sent for a bad cursor")
}

// mustCursor makes a cursor for key's query as another table would sign it.
func mustCursor(t *testing.T, other *Table, orders *Entity[tOrder], key tOrder) string {
	t.Helper()
	_, o, _ := registerAll(t, other)
	pq, err := o.core().prepareQuery(reflectValue(&key), nil)
	require.NoError(t, err)
	c, err := other.encodeCursor(pq, map[string]typesAV{
		"PK": sAV("CUST#c1"), "SK": sAV("ORDER#o001"),
	})
	require.NoError(t, err)
	return c
}
