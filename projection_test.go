package singletable

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProjectionEveryReadPath reads only some attributes on every read path
// (Get, BatchGet, Query, All, Scan, ScanAll): each value is a Partial holding
// the attributes asked for and the key inputs, nothing else.
func TestProjectionEveryReadPath(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(fmt.Sprintf("wire=%v", wire), func(t *testing.T) {
			tbl, _ := newTestTable(t, WithWireDecoding(wire))
			customers, orders, _ := registerAll(t, tbl)
			ctx := context.Background()
			_, err := customers.Put(ctx, tCustomer{CustomerID: "c1", Name: "Ada", Email: "ada@x"})
			require.NoError(t, err)
			var all []tOrder
			for i := range 5 {
				o := tOrder{CustomerID: "c1", OrderID: fmt.Sprintf("o%d", i), Status: "NEW", CreatedAt: t0, Total: int64(100 + i), Note: "secret", Tags: []string{"a"}}
				_, err := orders.Put(ctx, o)
				require.NoError(t, err)
				all = append(all, o)
			}
			want := func(o tOrder) Partial[tOrder] {
				return Partial[tOrder]{Value: tOrder{CustomerID: o.CustomerID, OrderID: o.OrderID, Total: o.Total}, Attributes: []string{"total"}}
			}
			p := orders.Project("total")

			got, err := p.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
			require.NoError(t, err)
			assert.Equal(t, want(all[1]), got, "Get")

			b, err := p.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o3"}, {CustomerID: "c1", OrderID: "o2"}, {CustomerID: "c1", OrderID: "nope"}})
			require.NoError(t, err)
			assert.Equal(t, []Partial[tOrder]{want(all[3]), want(all[2])}, b.Items, "BatchGet")
			assert.Equal(t, []tOrder{{CustomerID: "c1", OrderID: "nope"}}, b.Missing)

			page, err := p.Query(ctx, tOrder{CustomerID: "c1"}, Limit(2))
			require.NoError(t, err)
			assert.True(t, page.Partial)
			assert.Equal(t, []Partial[tOrder]{want(all[0]), want(all[1])}, page.Items, "Query")
			page, err = p.Query(ctx, tOrder{CustomerID: "c1"}, After(page.Cursor))
			require.NoError(t, err)
			assert.Equal(t, []Partial[tOrder]{want(all[2]), want(all[3]), want(all[4])}, page.Items, "Query, second page")

			var it []Partial[tOrder]
			for v, err := range p.All(ctx, tOrder{CustomerID: "c1"}, Descending()) {
				require.NoError(t, err)
				it = append(it, v)
			}
			assert.Equal(t, []Partial[tOrder]{want(all[4]), want(all[3]), want(all[2]), want(all[1]), want(all[0])}, it, "All")

			sp, err := p.Scan(ctx)
			require.NoError(t, err)
			assert.True(t, sp.Partial)
			assert.ElementsMatch(t, []Partial[tOrder]{want(all[0]), want(all[1]), want(all[2]), want(all[3]), want(all[4])}, sp.Items, "Scan: orders only")
			it = nil
			for v, err := range p.ScanAll(ctx, Limit(2)) {
				require.NoError(t, err)
				it = append(it, v)
			}
			assert.ElementsMatch(t, sp.Items, it, "ScanAll")

			// Through an index, with the index's keys and no more.
			page, err = orders.Project("status").Query(ctx, tOrder{Status: "NEW"}, On("GSI1"))
			require.NoError(t, err)
			require.Len(t, page.Items, 5)
			assert.Equal(t, tOrder{CustomerID: "c1", OrderID: "o0", Status: "NEW"}, page.Items[0].Value)

			// Project with no attribute reads the identity alone.
			id, err := orders.Project().Get(ctx, tOrder{CustomerID: "c1", OrderID: "o4"})
			require.NoError(t, err)
			assert.Equal(t, tOrder{CustomerID: "c1", OrderID: "o4"}, id.Value)
		})
	}
}

// TestProjectionBadAttributes: names are checked against the entity at the
// call, before anything is sent, and the error names the entity and suggests.
func TestProjectionBadAttributes(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	p := orders.Project("total", "stauts")
	_, err := p.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `"stauts" is not a stored attribute of tOrder (did you mean "status"?)`)
	_, err = p.Query(ctx, tOrder{CustomerID: "c1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = p.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o1"}})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = p.Scan(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	for _, err := range p.All(ctx, tOrder{CustomerID: "c1"}) {
		require.ErrorIs(t, err, ErrInvalidInput)
	}
	_, err = orders.Project("CreatedAt").Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `did you mean "createdAt"?`, "a Go field name points to its stored name")
	_, err = orders.Project("PK").Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
	require.ErrorIs(t, err, ErrInvalidInput, "key attributes are not T's fields: always read")
	// An attribute the index does not hold (GSI3 holds everything here, so use a
	// KEYS_ONLY table: see TestIndexProjections); on the base table, nothing sent.
	assert.Zero(t, client.count("GetItem")+client.count("Query")+client.count("BatchGetItem"), "nothing sent")
}

// TestProjectedReadsNeverWrite: an entity with a pending migration and
// write-back on is read through every projected path; not one write request
// reaches DynamoDB (counted at the HTTP layer), while a whole read writes back.
func TestProjectedReadsNeverWrite(t *testing.T) {
	tbl, inj := faultTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: WriteBackSync}))
	ctx := context.Background()
	for n := 1; n <= 5; n++ {
		putV1(t, tbl, n, "critical")
	}
	writes := func() int {
		st := inj.Stats()
		return st.Requests["PutItem"] + st.Requests["UpdateItem"] + st.Requests["DeleteItem"] + st.Requests["BatchWriteItem"] + st.Requests["TransactWriteItems"]
	}
	before := writes()
	p := issues.Project("title", "priority", "body")
	wantV := func(n int) mIssue {
		// Migrated in memory: priority from the (unread) labels is "low", body from desc is lost: what was read.
		return mIssue{Owner: "aws", Repo: "sdk", Number: n, Title: fmt.Sprintf("issue %d", n), Priority: "low", Migrations: 2}
	}
	g, err := p.Get(ctx, issueKey(1))
	require.NoError(t, err)
	assert.Equal(t, wantV(1), g.Value)
	_, err = p.BatchGet(ctx, []mIssue{issueKey(2), issueKey(3)})
	require.NoError(t, err)
	page, err := p.Query(ctx, mIssue{Owner: "aws", Repo: "sdk"})
	require.NoError(t, err)
	assert.Len(t, page.Items, 5)
	for _, err := range p.All(ctx, mIssue{Owner: "aws", Repo: "sdk"}) {
		require.NoError(t, err)
	}
	sp, err := p.Scan(ctx)
	require.NoError(t, err)
	assert.Len(t, sp.Items, 5)
	for _, err := range p.ScanAll(ctx, Segments(2), Segment(1)) {
		require.NoError(t, err)
	}
	assert.Equal(t, before, writes(), "no projected read wrote anything")
	assert.Equal(t, 0, int(issues.x.info.migration.written.Load()))

	// The same item read whole is written back: the count above would have seen it.
	_, err = issues.Get(ctx, issueKey(1))
	require.NoError(t, err)
	assert.Equal(t, before+1, writes(), "a whole read writes its migration back")
}

// TestPageFieldOrder holds the field order the engine fills a Page, a Partial and
// a PartialBatch by (query.go: pageItems...; projection.go).
func TestPageFieldOrder(t *testing.T) {
	var names []string
	for i := range reflect.TypeFor[Page[int]]().NumField() {
		names = append(names, reflect.TypeFor[Page[int]]().Field(i).Name)
	}
	want := make([]string, 5)
	want[pageItems], want[pageCursor], want[pageScanned], want[pageCapacity], want[pagePartial] = "Items", "Cursor", "Scanned", "Capacity", "Partial"
	assert.Equal(t, want, names)
	pt := reflect.TypeFor[Partial[int]]()
	assert.Equal(t, []string{"Value", "Attributes"}, []string{pt.Field(0).Name, pt.Field(1).Name})
	bt := reflect.TypeFor[PartialBatch[int]]()
	assert.Equal(t, []string{"Items", "Missing", "Unprocessed"}, []string{bt.Field(0).Name, bt.Field(1).Name, bt.Field(2).Name})
	rt := reflect.TypeFor[BatchGetResult[int]]()
	assert.Equal(t, []string{"Items", "Missing", "Unprocessed"}, []string{rt.Field(0).Name, rt.Field(1).Name, rt.Field(2).Name})
}
