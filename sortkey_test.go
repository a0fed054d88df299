package singletable

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lineKeys(items []tLineItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.OrderID + "/" + itoa(it.Line)
	}
	return out
}

// TestPartialKeyNarrowsSortKey: a key value that fills the leading placeholders of
// the sort key template narrows the query to them, without matching o10 for o1.
func TestPartialKeyNarrowsSortKey(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	var os []tOrder
	var lines []tLineItem
	for i, id := range []string{"o1", "o10", "o2"} {
		o := order("c1", i)
		o.OrderID = id
		os = append(os, o)
		for l := 1; l <= 2; l++ {
			lines = append(lines, tLineItem{CustomerID: "c1", OrderID: id, Line: l, SKU: "s"})
		}
	}
	_, err := orders.BatchPut(ctx, os)
	require.NoError(t, err)
	_, err = items.BatchPut(ctx, lines)
	require.NoError(t, err)

	query := func(t *testing.T, key tLineItem, opts ...QueryOption) []string {
		t.Helper()
		before := client.count("Query")
		page, err := items.Query(ctx, key, opts...)
		require.NoError(t, err)
		assert.Equal(t, before+1, client.count("Query"), "one request")
		return lineKeys(page.Items)
	}
	t.Run("partition only: every line item", func(t *testing.T) {
		assert.Equal(t, []string{"o1/1", "o1/2", "o10/1", "o10/2", "o2/1", "o2/2"}, query(t, tLineItem{CustomerID: "c1"}))
	})
	t.Run("order id narrows to that order, not o10", func(t *testing.T) {
		assert.Equal(t, []string{"o1/1", "o1/2"}, query(t, tLineItem{CustomerID: "c1", OrderID: "o1"}))
		assert.Equal(t, []string{"o10/1", "o10/2"}, query(t, tLineItem{CustomerID: "c1", OrderID: "o10"}))
	})
	t.Run("a complete key is matched exactly", func(t *testing.T) {
		assert.Equal(t, []string{"o1/2"}, query(t, tLineItem{CustomerID: "c1", OrderID: "o1", Line: 2}))
	})
	t.Run("a later input without the ones before it narrows nothing", func(t *testing.T) {
		assert.Len(t, query(t, tLineItem{CustomerID: "c1", Line: 2}), 6)
	})
	t.Run("an explicit condition wins", func(t *testing.T) {
		got := query(t, tLineItem{CustomerID: "c1", OrderID: "o2"}, SKBeginsWith("ORDER#o1"))
		assert.Equal(t, []string{"o1/1", "o1/2", "o10/1", "o10/2"}, got)
	})
	t.Run("pages of a narrowed query resume it", func(t *testing.T) {
		var got []string
		for it, err := range items.All(ctx, tLineItem{CustomerID: "c1", OrderID: "o1"}, Limit(1)) {
			require.NoError(t, err)
			got = append(got, it.OrderID+"/"+itoa(it.Line))
		}
		assert.Equal(t, []string{"o1/1", "o1/2"}, got)
	})

	t.Run("index: the leading time narrows the status feed", func(t *testing.T) {
		// GSI1: STATUS#{status} / {createdAt:time}#{orderId}; o1 and o2 are PENDING.
		page, err := orders.Query(ctx, tOrder{Status: "PENDING", CreatedAt: os[2].CreatedAt}, On("GSI1"))
		require.NoError(t, err)
		assert.Equal(t, []string{"o2"}, orderIDs(page.Items))
		page, err = orders.Query(ctx, tOrder{Status: "PENDING", OrderID: "o2"}, On("GSI1"))
		require.NoError(t, err)
		assert.Equal(t, []string{"o1", "o2"}, orderIDs(page.Items), "orderId follows the unset createdAt: no narrowing")
	})

	t.Run("collection: a complete key reads the item and the items under it", func(t *testing.T) {
		page, err := tbl.Query(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
		require.NoError(t, err)
		var got []string
		for _, v := range page.Items {
			switch x := v.(type) {
			case tOrder:
				got = append(got, x.OrderID)
			case tLineItem:
				got = append(got, x.OrderID+"/"+itoa(x.Line))
			}
		}
		assert.Equal(t, []string{"o1", "o1/1", "o1/2"}, got, "not o10")

		page, err = tbl.Query(ctx, tLineItem{CustomerID: "c1", OrderID: "o10"})
		require.NoError(t, err)
		assert.Len(t, page.Items, 2, "o10's line items only")

		page, err = tbl.Query(ctx, tOrder{CustomerID: "c1"})
		require.NoError(t, err)
		assert.Len(t, page.Items, 9, "the partition's inputs alone read it whole")
	})
}

func TestPartialKeyNarrowsFanout(t *testing.T) {
	tbl, _ := newTestTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	at := day0.Add(time.Hour)
	all := []sEvent{
		{Day: day0, At: at, EventID: "e1", Kind: "k"},
		{Day: day0, At: at, EventID: "e10", Kind: "k"},
		{Day: day0, At: at.Add(time.Second), EventID: "e2", Kind: "k"},
	}
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)
	page, err := events.QueryShards(ctx, sEvent{Day: day0, At: at})
	require.NoError(t, err)
	assert.Equal(t, eventKeys(all[:2]), eventKeys(page.Items), "the events at that instant, from every shard")
	page, err = events.QueryShards(ctx, sEvent{Day: day0, At: at, EventID: "e1"})
	require.NoError(t, err)
	assert.Equal(t, eventKeys(all[:1]), eventKeys(page.Items), "e1, not e10")
}

// TestTypedSortKeyConditions: SK[T] conditions take values of T; values of other
// types, and text the entity's template could not render, are refused before
// anything is sent, naming the placeholders' fields.
func TestTypedSortKeyConditions(t *testing.T) {
	tbl := offlineTable(t)
	customers := MustRegister[tCustomer](tbl)
	orders := MustRegister[tOrder](tbl)
	MustRegister[tLineItem](tbl)
	key := tOrder{CustomerID: "c1"}
	prepare := func(opts ...QueryOption) (*preparedQuery, error) {
		return orders.core().prepareQuery(reflectValue(&key), opts)
	}

	typed, err := prepare(SK[tOrder]().Between(tOrder{OrderID: "o002"}, tOrder{OrderID: "o005"}))
	require.NoError(t, err)
	untyped, err := prepare(SKBetween(tOrder{OrderID: "o002"}, tOrder{OrderID: "o005"}))
	require.NoError(t, err)
	assert.Equal(t, untyped.in.ExpressionAttributeValues, typed.in.ExpressionAttributeValues, "the typed form renders as the untyped one")
	for _, opt := range []QueryOption{
		SK[tOrder]().Equal(tOrder{OrderID: "o1"}), SK[tOrder]().LessThan(tOrder{OrderID: "o1"}),
		SK[tOrder]().LessThanEqual(tOrder{OrderID: "o1"}), SK[tOrder]().GreaterThan(tOrder{OrderID: "o1"}),
		SK[tOrder]().GreaterThanEqual(tOrder{OrderID: "o1"}), SK[tOrder]().BeginsWith(tOrder{OrderID: "o"}),
		SK[tOrder]().Tree(tOrder{OrderID: "o1"}),
	} {
		_, err := prepare(opt)
		assert.NoError(t, err)
	}

	cases := []struct {
		name     string
		opt      QueryOption
		sentinel error
		mentions []string
	}{
		{"a number for a string template", SKEqual(42), ErrInvalidInput, []string{"orderId (tOrder.OrderID)", "SKEqual(42)", "string"}},
		{"another entity's typed condition", SK[tCustomer]().Equal(tCustomer{CustomerID: "c1"}), ErrInvalidInput, []string{"tCustomer", "tOrder"}},
		{"SKEqual of an incomplete value names the unset input", SKEqual(tOrder{}), ErrInvalidKey, []string{"orderId (tOrder.OrderID)"}},
		{"SKEqual of text the template cannot render", SKEqual("o1"), ErrInvalidKey, []string{`"ORDER#{orderId}"`}},
		{"SKTree of text the template cannot render", SKTree("ITEM#1"), ErrInvalidKey, []string{"SKTree"}},
		{"SKBeginsWith of text no key begins with", SKBeginsWith("CUSTOMER#"), ErrInvalidKey, []string{`"ORDER#"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := prepare(c.opt)
			require.ErrorIs(t, err, c.sentinel)
			for _, m := range c.mentions {
				assert.Contains(t, err.Error(), m)
			}
		})
	}

	// Text that the template can render, or begin, is accepted as it is.
	for _, opt := range []QueryOption{SKEqual("ORDER#o1"), SKBeginsWith("ORD"), SKBeginsWith("ORDER#o1"), SKLessThan("A")} {
		_, err := prepare(opt)
		assert.NoError(t, err)
	}
	// A collection query takes any text: it reads every type.
	_, _, err = tbl.prepareCollection(tCustomer{CustomerID: "c1"}, []CollectionOption{SKBeginsWith("ORDER#")})
	assert.NoError(t, err)
	_, _, err = tbl.prepareCollection(tCustomer{CustomerID: "c1"}, []CollectionOption{SKEqual(7)})
	assert.ErrorIs(t, err, ErrInvalidInput)
	_ = customers
}

// TestTypedSortKeyConditionIgnoredFields: a condition value whose fields the sort
// key would not render (none of its inputs set, other fields set; or an input set
// after an unset one) is refused before sending, naming the field and the key's
// inputs, on the table's sort key and an index's, for every call that takes a
// condition; a whole value (its inputs set) and a key value's partition inputs
// pass (issue 37, scenario 13).
func TestTypedSortKeyConditionIgnoredFields(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	key := tOrder{CustomerID: "c1"}
	ctx := context.Background()
	var sent []string
	for name, opt := range map[string]QueryOption{
		"SK[T].Between of fields that are not inputs":   SK[tOrder]().Between(tOrder{Note: "a"}, tOrder{Note: "z"}),
		"SKGreaterThan of a field that is not an input": SKGreaterThan(tOrder{Total: 5}),
		"SK[T].BeginsWith": SK[tOrder]().BeginsWith(tOrder{Status: "open"}),
	} {
		_, err := orders.core().prepareQuery(reflectValue(&key), []QueryOption{opt})
		require.ErrorIs(t, err, ErrInvalidInput, name)
		assert.Contains(t, err.Error(), "which is not an input of the sort key", name)
		assert.Contains(t, err.Error(), "orderId (tOrder.OrderID)", name)
		assert.Contains(t, err.Error(), `"ORDER#{orderId}"`, name)
		sent = append(sent, name)
	}
	// On GSI1, whose sort key is {createdAt:time}#{orderId}: orderId without createdAt.
	gsiKey := tOrder{Status: "open"}
	_, err := orders.core().prepareQuery(reflectValue(&gsiKey), []QueryOption{On("GSI1"), SK[tOrder]().GreaterThan(tOrder{OrderID: "o1"})})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "but createdAt (tOrder.CreatedAt) before it is unset")
	// Every call that takes a condition refuses it, before sending (the table is offline).
	bad := SK[tOrder]().Between(tOrder{Note: "a"}, tOrder{Note: "z"})
	_, err = orders.Query(ctx, key, bad)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = orders.Count(ctx, key, bad)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = orders.Project("orderId").Query(ctx, key, bad)
	assert.ErrorIs(t, err, ErrInvalidInput)
	for _, err := range orders.All(ctx, key, bad) {
		assert.ErrorIs(t, err, ErrInvalidInput)
	}

	// A whole value (its inputs set, other fields too), a zero value (the
	// template's prefix) and a partition input alone are accepted.
	for _, opt := range []QueryOption{
		SK[tOrder]().GreaterThan(tOrder{CustomerID: "c1", OrderID: "o1", Note: "n", Total: 3}),
		SK[tOrder]().BeginsWith(tOrder{}),
		SK[tOrder]().BeginsWith(tOrder{CustomerID: "c1"}),
	} {
		_, err := orders.core().prepareQuery(reflectValue(&key), []QueryOption{opt})
		assert.NoError(t, err)
	}
	assert.Len(t, sent, 3)
}
