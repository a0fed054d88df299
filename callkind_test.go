package singletable

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optionsOf returns the option type of a call: its variadic parameter's element.
func optionsOf(t *testing.T, call any) reflect.Type {
	t.Helper()
	ft := reflect.TypeOf(call)
	require.True(t, ft.IsVariadic(), "%s", ft)
	return ft.In(ft.NumIn() - 1).Elem()
}

// TestOptionsByCallKind shows, without compiling anything that must not compile,
// that each query option is accepted exactly by the calls it applies to: the
// result type of its constructor implements the option type of those calls and of
// no other. Passing Parallel, AllowPartial, Days or OnUnknown to Entity.Query, or
// Days to Table.Query, is a compile error.
func TestOptionsByCallKind(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	coll, err := NewCollection[struct {
		Orders []tOrder `singletable:"Order"`
	}](tbl)
	require.NoError(t, err)

	type kind int
	const (
		entity kind = iota
		shards
		collection
	)
	calls := []struct {
		name string
		kind kind
		opts reflect.Type
	}{
		{"Entity.Query", entity, optionsOf(t, orders.Query)},
		{"Entity.All", entity, optionsOf(t, orders.All)},
		{"Entity.QueryShards", shards, optionsOf(t, orders.QueryShards)},
		{"Entity.AllShards", shards, optionsOf(t, orders.AllShards)},
		{"Table.Query", collection, optionsOf(t, tbl.Query)},
		{"Table.All", collection, optionsOf(t, tbl.All)},
		{"Collection.Query", collection, optionsOf(t, coll.Query)},
		{"Collection.Load", collection, optionsOf(t, coll.Load)},
	}
	every := []kind{entity, shards, collection}
	constructors := []struct {
		name    string
		fn      any // the constructor: its result type is what a call sees
		value   any // a value it returns
		applies []kind
	}{
		{"On", On, On("GSI1"), every},
		{"Limit", Limit, Limit(1), every},
		{"Descending", Descending, Descending(), every},
		{"After", After, After(""), every},
		{"Filter", Filter, Filter(expression.Name("a").Equal(expression.Value(1))), every},
		{"Partition", Partition, Partition("p"), every}, // refused at run time by fan-out queries: see below
		{"ReturnCapacity", ReturnCapacity, ReturnCapacity(), every},
		{"Consistent", Consistent, Consistent(), every},
		{"SKEqual", SKEqual, SKEqual("x"), every},
		{"SKBetween", SKBetween, SKBetween("a", "b"), every},
		{"SKTree", SKTree, SKTree("x"), every},
		{"SK[T].Between", SK[tOrder]().Between, SK[tOrder]().Between(tOrder{}, tOrder{}), every},
		{"Days", Days, Days("day", day0, day0), []kind{shards}},
		{"Parallel", Parallel, Parallel(2), []kind{shards}},
		{"AllowPartial", AllowPartial, AllowPartial(), []kind{shards}},
		{"OnUnknown", OnUnknown, OnUnknown(UnknownSkip), []kind{collection}},
	}
	for _, c := range constructors {
		static := reflect.TypeOf(c.fn).Out(0)
		dynamic := reflect.TypeOf(c.value)
		for _, call := range calls {
			want := false
			for _, k := range c.applies {
				want = want || k == call.kind
			}
			assert.Equal(t, want, static.Implements(call.opts), "%s's result type %s passed to %s", c.name, static, call.name)
			assert.Equal(t, want, dynamic.Implements(call.opts), "%s's value passed to %s", c.name, call.name)
		}
	}

	// The option types of other calls are of other families altogether.
	retry := reflect.TypeOf(RetryBackoff(Backoff{}))
	table := reflect.TypeOf(WithIndex("G", "P", "S"))
	for _, call := range calls {
		assert.False(t, retry.Implements(call.opts), "RetryBackoff passed to %s", call.name)
		assert.False(t, table.Implements(call.opts), "WithIndex passed to %s", call.name)
	}
	assert.False(t, reflect.TypeOf(Limit(1)).Implements(reflect.TypeFor[TableOption]()))
	assert.False(t, reflect.TypeOf(Limit(1)).Implements(reflect.TypeFor[RetryOption]()))
	assert.True(t, reflect.TypeFor[QueryOption]().Implements(reflect.TypeFor[ShardQueryOption]()))
	assert.True(t, reflect.TypeFor[QueryOption]().Implements(reflect.TypeFor[CollectionOption]()))
	assert.False(t, reflect.TypeFor[ShardQueryOption]().Implements(reflect.TypeFor[QueryOption]()))
	assert.False(t, reflect.TypeFor[CollectionOption]().Implements(reflect.TypeFor[QueryOption]()))
	assert.False(t, reflect.TypeFor[ShardQueryOption]().Implements(reflect.TypeFor[CollectionOption]()))
}

// TestOptionsRefusedWhereTheyDoNotApply: what the types cannot rule out is refused
// before anything is sent, naming the option and the call.
func TestOptionsRefusedWhereTheyDoNotApply(t *testing.T) {
	tbl := offlineTable(t)
	customers := MustRegister[tCustomer](tbl)
	orders := MustRegister[tOrder](tbl)
	events := MustRegister[sEvent](tbl)
	okey := tOrder{CustomerID: "c1"}

	refused := func(t *testing.T, err error, mentions ...string) {
		t.Helper()
		require.ErrorIs(t, err, ErrInvalidInput)
		for _, m := range mentions {
			assert.Contains(t, err.Error(), m)
		}
	}
	t.Run("Partition in a fan-out query", func(t *testing.T) {
		_, err := events.core().prepareFanout(reflect.ValueOf(sEvent{Day: day0}), []ShardQueryOption{Partition("EVENTS#x")})
		refused(t, err, "Partition", "QueryShards")
	})
	t.Run("Partition beside a partition given as the key", func(t *testing.T) {
		_, _, err := tbl.prepareCollection("CUST#c1", []CollectionOption{Partition("CUST#c2")})
		refused(t, err, "Partition")
		_, _, err = tbl.prepareCollection("CUST#c1", []CollectionOption{Partition("CUST#c1")})
		assert.NoError(t, err, "the same partition twice is not a conflict")
	})
	t.Run("a sort key condition on an index without a sort key", func(t *testing.T) {
		k := tCustomer{Email: "a@b"}
		_, err := customers.core().prepareQuery(reflectValue(&k), []QueryOption{On("GSI3"), SKEqual("x")})
		refused(t, err, "GSI3", "SKEqual")
	})
	t.Run("Consistent on an index", func(t *testing.T) {
		_, err := orders.core().prepareQuery(reflectValue(&okey), []QueryOption{On("GSI2"), Consistent()})
		refused(t, err, "Consistent")
	})
	t.Run("Days on a partition key without that placeholder", func(t *testing.T) {
		_, err := events.core().prepareFanout(reflect.ValueOf(sEvent{}), []ShardQueryOption{Days("dya", day0, day0)})
		refused(t, err, `Days("dya")`, `did you mean "day"?`)
		_, err = events.core().prepareFanout(reflect.ValueOf(sEvent{}), []ShardQueryOption{Days("shard", day0, day0)})
		refused(t, err, "shard (sEvent.Shard)", "not a time")
	})
	t.Run("QueryShards of an entity without shards", func(t *testing.T) {
		_, err := orders.core().prepareFanout(reflect.ValueOf(okey), nil)
		refused(t, err, "QueryShards")
	})
	t.Run("an unknown index, with the closest name", func(t *testing.T) {
		_, err := orders.core().prepareQuery(reflectValue(&okey), []QueryOption{On("GIS1")})
		refused(t, err, `On("GIS1")`, `did you mean "GSI1"?`, "GSI1, GSI2, GSI3")
		_, err = orders.core().prepareQuery(reflectValue(&okey), []QueryOption{On("GSI3")})
		refused(t, err, `On("GSI3")`, "GSI1, GSI2")
	})
	t.Run("nil options", func(t *testing.T) {
		_, err := orders.core().prepareQuery(reflectValue(&okey), []QueryOption{Limit(1), nil})
		refused(t, err, "option 2 is nil")
		_, err = events.core().prepareFanout(reflect.ValueOf(sEvent{}), []ShardQueryOption{nil})
		refused(t, err)
		_, _, err = tbl.prepareCollection("CUST#c1", []CollectionOption{nil})
		refused(t, err)
		_, err = NewTable(offlineClient{}, "nil-option", nil)
		refused(t, err)
		_, _, err = WaitFor(context.Background(), func(context.Context) (int, error) { return 0, nil }, func(int) bool { return true }, nil)
		refused(t, err)
	})
	t.Run("bad option values", func(t *testing.T) {
		_, err := orders.core().prepareQuery(reflectValue(&okey), []QueryOption{Limit(0)})
		refused(t, err, "Limit(0)")
		_, err = events.core().prepareFanout(reflect.ValueOf(sEvent{}), []ShardQueryOption{Parallel(0)})
		refused(t, err, "Parallel(0)")
		_, err = events.core().prepareFanout(reflect.ValueOf(sEvent{}), []ShardQueryOption{Days("day", day0.Add(48*time.Hour), day0)})
		refused(t, err, "Days")
		_, _, err = tbl.prepareCollection("CUST#c1", []CollectionOption{OnUnknown(9)})
		refused(t, err, "OnUnknown(9)")
		_, err = NewTable(offlineClient{}, "receipts", WithReceipts(0))
		refused(t, err, "WithReceipts(0)")
	})
}

// TestTableOptions: each WithX sets the TableOptions field of its name.
func TestTableOptions(t *testing.T) {
	var seen []Operation
	observer := func(op Operation) { seen = append(seen, op) }
	b := Backoff{Base: time.Millisecond, MaxAttempts: 3}
	tbl, err := NewTable(offlineClient{}, "opts",
		WithIndex("G1", "G1PK", "G1SK"), WithKeys("pk", "sk"), WithTypeAttribute("kind"), WithDelimiter('|'),
		WithCursorSecret([]byte("s")), WithBackoff(b), WithObserver(observer), WithReceipts(7),
		WithReceiptAttribute("_r"), WithSchemaAttribute("_v"), WithRandom(func() uint64 { return 3 }))
	require.NoError(t, err)
	o := tbl.Options()
	assert.Equal(t, []Index{{Name: "G1", PartitionKey: "G1PK", SortKey: "G1SK"}}, o.Indexes)
	assert.Equal(t, "pk", o.PartitionKey)
	assert.Equal(t, "sk", o.SortKey)
	assert.Equal(t, "kind", o.TypeAttribute)
	assert.Equal(t, byte('|'), o.Delimiter)
	assert.Equal(t, []byte("s"), o.CursorSecret)
	assert.Equal(t, b, o.Backoff)
	assert.NotNil(t, o.Observer)
	assert.Equal(t, 7, o.Receipts)
	assert.Equal(t, "_r", o.ReceiptAttribute)
	assert.Equal(t, "_v", o.SchemaAttribute)
	assert.Equal(t, uint64(3), o.Random())
	assert.Equal(t, Client(offlineClient{}), tbl.Client(), "Client returns the client given, not the observing wrapper")
}

// TestScanOptionsByCallKind: scan options are accepted by the scans they apply
// to and by nothing else; query-only options do not compile in a scan, and
// scan-only ones (Segments, Segment) not in a query; OnUnknown only in a table
// scan. Projections are a method (Entity.Project), not an option, so no write or
// query can be given one.
func TestScanOptionsByCallKind(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	p := orders.Project("total")
	entityScan := []reflect.Type{optionsOf(t, orders.Scan), optionsOf(t, orders.ScanAll), optionsOf(t, orders.ScanCount), optionsOf(t, p.Scan), optionsOf(t, p.ScanAll)}
	tableScan := []reflect.Type{optionsOf(t, tbl.Scan), optionsOf(t, tbl.ScanAll), optionsOf(t, tbl.ScanCount)}
	queries := []reflect.Type{optionsOf(t, orders.Query), optionsOf(t, orders.All), optionsOf(t, orders.Count), optionsOf(t, tbl.Query), optionsOf(t, tbl.Count), optionsOf(t, orders.QueryShards), optionsOf(t, p.Query)}
	writes := []reflect.Type{optionsOf(t, orders.Put), optionsOf(t, orders.Delete), optionsOf(t, orders.Update), reflect.TypeFor[GetOption](), reflect.TypeFor[SweepOption](), reflect.TypeFor[TableOption]()}

	cases := []struct {
		name               string
		value              any
		entity, table, qry bool
	}{
		{"On", On("GSI1"), true, true, true},
		{"Limit", Limit(1), true, true, true},
		{"After", After(""), true, true, true},
		{"Filter", Filter(expression.Name("a").Equal(expression.Value(1))), true, true, true},
		{"ReturnCapacity", ReturnCapacity(), true, true, true},
		{"Consistent", Consistent(), true, true, true},
		{"Segments", Segments(4), true, true, false},
		{"Segment", Segment(1), true, true, false},
		{"OnUnknown", OnUnknown(UnknownSkip), false, true, false},
		{"Descending", Descending(), false, false, true},
		{"SKEqual", SKEqual("x"), false, false, true},
		{"Partition", Partition("p"), false, false, true},
		{"SegmentRange", SegmentRange(0, 1), false, false, false},
		{"Days", Days("day", day0, day0), false, false, false},
		{"ProjectKeysOnly", ProjectKeysOnly(), false, false, false},
	}
	for _, c := range cases {
		vt := reflect.TypeOf(c.value)
		for _, call := range entityScan {
			assert.Equal(t, c.entity, vt.Implements(call), "%s in an entity scan (%s)", c.name, call)
		}
		for _, call := range tableScan {
			assert.Equal(t, c.table, vt.Implements(call), "%s in a table scan (%s)", c.name, call)
		}
		for _, call := range queries[:1] {
			assert.Equal(t, c.qry, vt.Implements(call), "%s in a query (%s)", c.name, call)
		}
		for _, call := range writes[:3] {
			assert.False(t, vt.Implements(call), "%s in a write (%s)", c.name, call)
		}
	}
	// Segments and Segment stay sweep options; no scan option is a write, get or table option.
	assert.True(t, reflect.TypeOf(Segments(2)).Implements(reflect.TypeFor[SweepOption]()))
	assert.True(t, reflect.TypeOf(Segment(1)).Implements(reflect.TypeFor[SweepOption]()))
	for _, w := range writes {
		assert.False(t, reflect.TypeFor[ScanOption]().Implements(w), "ScanOption is not %s", w)
	}
	assert.True(t, reflect.TypeOf(ProjectInclude("a")).Implements(reflect.TypeFor[IndexOption]()))
	assert.False(t, reflect.TypeOf(ProjectInclude("a")).Implements(reflect.TypeFor[TableOption]()))
	// The Count calls refuse at run time what compiles but does not apply.
	_ = queries
}
