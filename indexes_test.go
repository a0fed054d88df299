package singletable

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iOrder is in a KEYS_ONLY index (KO), an INCLUDE index (INC) and a local index
// (LSI1, sorted by total).
type iOrder struct {
	_          struct{} `Type:"IOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" KEYSPK:"STATUS#{status}" KEYSSK:"{orderId}" INCLPK:"CUST#{customerId}" INCLSK:"{orderId}" LSI1SK:"TOTAL#{total:08}#{orderId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Status     string   `dynamodbav:"status"`
	Total      int      `dynamodbav:"total"`
	Note       string   `dynamodbav:"note,omitempty"`
	Migrated   bool     `dynamodbav:"migrated,omitempty"`
}

// iCustomer shares INC's partitions and holds only included fields.
type iCustomer struct {
	_          struct{} `Type:"ICustomer" PK:"CUST#{customerId}" SK:"PROFILE" INCLPK:"CUST#{customerId}" INCLSK:"#PROFILE"`
	CustomerID string   `dynamodbav:"customerId"`
	Status     string   `dynamodbav:"status"`
}

var indexTableOptions = []TableOption{
	WithIndex("KEYS", "KEYSPK", "KEYSSK", ProjectKeysOnly()),
	WithIndex("INCL", "INCLPK", "INCLSK", ProjectInclude("status", "total", "customerId", "orderId")),
	WithLocalIndex("LSI1", "LSI1SK"),
}

// TestIndexProjections: CreateTable makes a KEYS_ONLY and an INCLUDE index and a
// local index; reads through the first two are partial, decode what is there,
// parse key inputs from keys, and never write back (counted at the HTTP layer)
// though every item has a pending migration; the local index is queried with a
// sort key condition, consistently.
func TestIndexProjections(t *testing.T) {
	tbl, inj := faultTable(t, indexTableOptions...)
	ctx := context.Background()

	// The indexes as DynamoDB made them.
	desc, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	proj := map[string]*types.Projection{}
	for _, g := range desc.Table.GlobalSecondaryIndexes {
		proj[aws.ToString(g.IndexName)] = g.Projection
	}
	require.Len(t, desc.Table.LocalSecondaryIndexes, 1)
	lsi := desc.Table.LocalSecondaryIndexes[0]
	assert.Equal(t, "LSI1", aws.ToString(lsi.IndexName))
	assert.Equal(t, types.ProjectionTypeAll, lsi.Projection.ProjectionType)
	assert.Equal(t, types.ProjectionTypeKeysOnly, proj["KEYS"].ProjectionType)
	assert.Equal(t, types.ProjectionTypeInclude, proj["INCL"].ProjectionType)
	inc := slices.Clone(proj["INCL"].NonKeyAttributes)
	slices.Sort(inc)
	assert.Equal(t, []string{"Type", "_schema", "customerId", "orderId", "status", "total"}, inc, "the type and schema attributes are always included")

	// Items written by an older program (schema 1), then read by one with a migration.
	old, err := NewTable(tbl.Client(), tbl.Name(), append([]TableOption{testTableOptions}, indexTableOptions...)...)
	require.NoError(t, err)
	oldOrders := MustRegister[iOrder](old)
	for i := range 12 {
		o := iOrder{CustomerID: "c1", OrderID: fmt.Sprintf("o%02d", i), Status: []string{"NEW", "PAID"}[i%2], Total: 10 * i, Note: "n"}
		_, err := oldOrders.Put(ctx, o)
		require.NoError(t, err)
	}
	orders := MustRegister[iOrder](tbl, Migrations(Migration[iOrder]{Steps: []Step[iOrder]{{Typed: func(v *iOrder) error { v.Migrated = true; return nil }}}}))
	customers := MustRegister[iCustomer](tbl)
	_, err = customers.Put(ctx, iCustomer{CustomerID: "c1", Status: "GOLD"})
	require.NoError(t, err)
	writes := func() int {
		st := inj.Stats()
		return st.Requests["PutItem"] + st.Requests["UpdateItem"] + st.Requests["BatchWriteItem"] + st.Requests["TransactWriteItems"]
	}
	before := writes()

	// KEYS_ONLY: partial; key inputs parsed from the keys (status from KOPK).
	page, err := orders.Query(ctx, iOrder{Status: "NEW"}, On("KEYS"))
	require.NoError(t, err)
	assert.True(t, page.Partial)
	require.Len(t, page.Items, 6)
	assert.Equal(t, iOrder{CustomerID: "c1", OrderID: "o00", Status: "NEW"}, page.Items[0], "keys only: no total, no note, not migrated (schema unknown)")
	_, err = orders.Count(ctx, iOrder{Status: "NEW"}, On("KEYS"))
	require.ErrorIs(t, err, ErrInvalidInput, "a KEYS_ONLY index has no type to count by")
	for _, err := range orders.All(ctx, iOrder{Status: "NEW"}, On("KEYS")) {
		require.ErrorIs(t, err, ErrInvalidInput, "an iterator cannot say its values are partial")
		assert.Contains(t, err.Error(), "Project(...).All")
	}
	var ids []string
	for p, err := range orders.Project().All(ctx, iOrder{Status: "PAID"}, On("KEYS")) {
		require.NoError(t, err)
		ids = append(ids, p.Value.OrderID)
	}
	assert.Equal(t, []string{"o01", "o03", "o05", "o07", "o09", "o11"}, ids)
	_, err = orders.Project("note").Query(ctx, iOrder{Status: "NEW"}, On("KEYS"))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `index KEYS projects KEYS_ONLY, which does not hold "note"`)
	sp, err := orders.Scan(ctx, On("KEYS"))
	require.NoError(t, err)
	assert.True(t, sp.Partial)
	assert.Len(t, sp.Items, 12, "an entity scan of a KEYS_ONLY index tells its items by their keys")

	// INCLUDE: partial for IOrder (note is not included), migrated in memory.
	page, err = orders.Query(ctx, iOrder{CustomerID: "c1"}, On("INCL"))
	require.NoError(t, err)
	assert.True(t, page.Partial)
	require.Len(t, page.Items, 12)
	assert.Equal(t, iOrder{CustomerID: "c1", OrderID: "o03", Status: "PAID", Total: 30, Migrated: true}, page.Items[3])
	c, err := orders.Count(ctx, iOrder{CustomerID: "c1"}, On("INCL"))
	require.NoError(t, err)
	assert.Equal(t, 12, c.Items, "the type is included: counted by type")
	// ... but whole for ICustomer, whose fields are all included.
	cp, err := customers.Query(ctx, iCustomer{CustomerID: "c1"}, On("INCL"))
	require.NoError(t, err)
	assert.False(t, cp.Partial)
	assert.Equal(t, []iCustomer{{CustomerID: "c1", Status: "GOLD"}}, cp.Items)
	// A collection through it: partial, decoded by type.
	cpage, err := tbl.Query(ctx, "CUST#c1", On("INCL"))
	require.NoError(t, err)
	assert.True(t, cpage.Partial)
	require.Len(t, cpage.Items, 13)
	assert.Equal(t, iCustomer{CustomerID: "c1", Status: "GOLD"}, cpage.Items[0])
	// A collection through KEYS_ONLY: decoded by key.
	kpage, err := tbl.Query(ctx, "STATUS#NEW", On("KEYS"))
	require.NoError(t, err)
	assert.True(t, kpage.Partial)
	require.Len(t, kpage.Items, 6)
	assert.Equal(t, iOrder{CustomerID: "c1", OrderID: "o00", Status: "NEW"}, kpage.Items[0])

	assert.Equal(t, before, writes(), "nothing read through a KEYS_ONLY or INCLUDE index was written back")

	// The local index: the entity's own partition, sorted by total, with a sort key condition.
	lp, err := orders.Query(ctx, iOrder{CustomerID: "c1"}, On("LSI1"), SKBetween("TOTAL#00000030", "TOTAL#00000060~"), Descending(), Consistent())
	require.NoError(t, err)
	assert.False(t, lp.Partial)
	var totals []int
	for _, o := range lp.Items {
		totals = append(totals, o.Total)
		assert.True(t, o.Migrated)
	}
	assert.Equal(t, []int{60, 50, 40, 30}, totals)
	lp, err = orders.Query(ctx, iOrder{CustomerID: "c1"}, On("LSI1"), SK[iOrder]().GreaterThan(iOrder{Total: 100}), Limit(1))
	require.NoError(t, err)
	require.Len(t, lp.Items, 1)
	assert.Equal(t, 110, lp.Items[0].Total)
	lp, err = orders.Query(ctx, iOrder{CustomerID: "c1"}, On("LSI1"), SK[iOrder]().GreaterThan(iOrder{Total: 100}), Limit(1), After(lp.Cursor))

	require.NoError(t, err)
	assert.Empty(t, lp.Items)
	assert.Equal(t, before, writes(), "items read through an index are never written back, even whole ones")

	// A whole read of the base table writes the migration back.
	_, err = orders.Get(ctx, iOrder{CustomerID: "c1", OrderID: "o00"})
	require.NoError(t, err)
	assert.Equal(t, before+1, writes())
}

// TestIndexDeclarationsRefused: index declarations DynamoDB would refuse are
// refused by NewTable, naming the index.
func TestIndexDeclarationsRefused(t *testing.T) {
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	cases := []struct {
		name    string
		opts    []TableOption
		mention string
	}{
		{"local index without table sort key", []TableOption{WithKeys("id", ""), WithLocalIndex("LSI1", "at")}, "the table has no sort key"},
		{"local index by the table's sort key", []TableOption{WithLocalIndex("LSI1", "SK")}, "sorts by the table's sort key"},
		{"local index without sort key", []TableOption{WithLocalIndex("LSI1", "")}, "has no sort key"},
		{"six local indexes", []TableOption{WithLocalIndex("L1", "a"), WithLocalIndex("L2", "b"), WithLocalIndex("L3", "c"), WithLocalIndex("L4", "d"), WithLocalIndex("L5", "e"), WithLocalIndex("L6", "f")}, "6 local indexes"},
		{"include nothing", []TableOption{WithIndex("GSI", "P1", "S1", ProjectInclude())}, "name at least one attribute"},
		{"include a key", []TableOption{WithIndex("GSI", "P1", "S1", ProjectInclude("SK"))}, `ProjectInclude("SK"): a key attribute`},
		{"include twice", []TableOption{WithIndex("GSI", "P1", "S1", ProjectInclude("a", "a"))}, `names "a" twice`},
		{"nil index option", []TableOption{WithIndex("GSI", "P1", "S1", nil)}, "option 1 is nil"},
		{"unknown projection", []TableOption{tableOptionFunc(func(o *TableOptions) error {
			o.Indexes = append(o.Indexes, Index{Name: "GSI", PartitionKey: "P1", Projection: "SOME"})
			return nil
		})}, `unknown projection "SOME"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(c, "tbl", tc.opts...)
			require.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.mention)
		})
	}
	tbl, err := NewTable(c, "tbl", WithIndex("GSI", "P1", "S1", ProjectKeysOnly(), ProjectAll()), WithLocalIndex("LSI", "at", ProjectInclude("x")))
	require.NoError(t, err)
	o := tbl.Options()
	assert.Equal(t, []Index{{Name: "GSI", PartitionKey: "P1", SortKey: "S1", Projection: types.ProjectionTypeAll}, {Name: "LSI", PartitionKey: "PK", SortKey: "at", Local: true, Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x"}}}, o.Indexes)
}
