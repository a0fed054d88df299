package singletable

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countAudit records, for the Query and Scan calls that ask for COUNT, how many
// items their responses held (none, if nothing is decoded).
type countAudit struct {
	ItemClient
	mu           sync.Mutex // protects the fields below
	counts       int        // COUNT calls
	itemsInCount int        // items in their responses
}

func (a *countAudit) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := a.ItemClient.Query(ctx, in, o...)
	if err == nil && in.Select == types.SelectCount {
		a.mu.Lock()
		a.counts++
		a.itemsInCount += len(out.Items)
		a.mu.Unlock()
	}
	return out, err
}

func (a *countAudit) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := a.ItemClient.Scan(ctx, in, o...)
	if err == nil && in.Select == types.SelectCount {
		a.mu.Lock()
		a.counts++
		a.itemsInCount += len(out.Items)
		a.mu.Unlock()
	}
	return out, err
}

// TestCount2000ItemPartition: the count of a 2,000-item partition equals the
// items a Query returns, over several pages, with no item in any response; an
// entity's count skips the other types; filters and trees are counted as read.
func TestCount2000ItemPartition(t *testing.T) {
	tbl, _ := newTestTable(t)
	audit := &countAudit{ItemClient: tbl.client}
	tbl.client = audit
	customers, orders, lines := registerAll(t, tbl)
	ctx := context.Background()
	_, err := customers.Put(ctx, tCustomer{CustomerID: "big", Name: "Big"})
	require.NoError(t, err)
	note := string(make([]byte, 1000)) // 1 KB items: 2 MB, at least 2 pages
	var os []tOrder
	for i := range 1500 {
		os = append(os, tOrder{CustomerID: "big", OrderID: fmt.Sprintf("o%04d", i), CreatedAt: t0, Total: int64(i), Note: note})
	}
	var ls []tLineItem
	for i := range 499 {
		ls = append(ls, tLineItem{CustomerID: "big", OrderID: "o0007", Line: i + 1, SKU: "s"})
	}
	_, err = orders.BatchPut(ctx, os)
	require.NoError(t, err)
	_, err = lines.BatchPut(ctx, ls)
	require.NoError(t, err)

	n := 0
	for _, err := range tbl.All(ctx, "CUST#big") {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 2000, n)
	c, err := tbl.Count(ctx, "CUST#big", ReturnCapacity())
	require.NoError(t, err)
	assert.Equal(t, 2000, c.Items, "the collection's count equals what the query returns")
	assert.Equal(t, 2000, c.Scanned)
	assert.Greater(t, c.Pages, 1, "paged until done")
	assert.Positive(t, c.Capacity)

	n = 0
	for _, err := range orders.All(ctx, tOrder{CustomerID: "big"}) {
		require.NoError(t, err)
		n++
	}
	oc, err := orders.Count(ctx, tOrder{CustomerID: "big"})
	require.NoError(t, err)
	assert.Equal(t, n, oc.Items)
	assert.Equal(t, 1500, oc.Items, "orders only")

	// The entity's partition, without the ORDER# prefix: the type filter.
	oc, err = orders.Count(ctx, tOrder{CustomerID: "big"}, SKBeginsWith("ORDER#o000"))
	require.NoError(t, err)
	assert.Equal(t, 10, oc.Items)

	fc, err := orders.Count(ctx, tOrder{CustomerID: "big"}, Filter(expression.Name("total").GreaterThanEqual(expression.Value(1000))))
	require.NoError(t, err)
	assert.Equal(t, 500, fc.Items)
	assert.Equal(t, 1999, fc.Scanned, "a filter saves nothing: every order was read, and the line items under ORDER#")

	tc, err := tbl.Count(ctx, tOrder{CustomerID: "big", OrderID: "o0007"}) // the order and its 499 lines
	require.NoError(t, err)
	assert.Equal(t, 500, tc.Items)

	sc, err := tbl.ScanCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2000, sc.Items)
	ec, err := lines.ScanCount(ctx, Segments(2), Segment(0))
	require.NoError(t, err)
	ec2, err := lines.ScanCount(ctx, Segments(2), Segment(1))
	require.NoError(t, err)
	assert.Equal(t, 499, ec.Items+ec2.Items)

	audit.mu.Lock()
	defer audit.mu.Unlock()
	assert.Positive(t, audit.counts)
	assert.Zero(t, audit.itemsInCount, "no count response held an item: nothing to decode")
}
