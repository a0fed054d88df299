package singletable

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// daxLike is a client that treats optFns exactly as DAX's client does
// (aws/aws-dax-go-v2, dax/service.go requestOptions): it applies them to a fresh
// dynamodb.Options and refuses the call when they add any APIOptions
// (client.RejectCustomMiddleware). It has no table operations. Its calls go to
// DynamoDB through a *dynamodb.Client, without the caller's optFns, as DAX's
// go through its own cluster.
type daxLike struct {
	c       *dynamodb.Client
	refused atomic.Int64
}

var errDAXMiddleware = errors.New("custom middleware through APIOptions is not supported in DAX client")

func (d *daxLike) options(optFns []func(*dynamodb.Options)) error {
	var o dynamodb.Options
	for _, f := range optFns {
		f(&o)
	}
	if len(o.APIOptions) > 0 {
		d.refused.Add(1)
		return errDAXMiddleware
	}
	return nil
}

func daxCall[I, O any](d *daxLike, do func(context.Context, *I, ...func(*dynamodb.Options)) (*O, error), ctx context.Context, in *I, f []func(*dynamodb.Options)) (*O, error) {
	if err := d.options(f); err != nil {
		return nil, err
	}
	return do(ctx, in)
}

func (d *daxLike) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return daxCall(d, d.c.GetItem, ctx, in, f)
}

func (d *daxLike) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return daxCall(d, d.c.PutItem, ctx, in, f)
}

func (d *daxLike) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return daxCall(d, d.c.UpdateItem, ctx, in, f)
}

func (d *daxLike) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return daxCall(d, d.c.DeleteItem, ctx, in, f)
}

func (d *daxLike) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return daxCall(d, d.c.Query, ctx, in, f)
}

func (d *daxLike) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return daxCall(d, d.c.Scan, ctx, in, f)
}

func (d *daxLike) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return daxCall(d, d.c.BatchGetItem, ctx, in, f)
}

func (d *daxLike) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return daxCall(d, d.c.BatchWriteItem, ctx, in, f)
}

func (d *daxLike) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return daxCall(d, d.c.TransactWriteItems, ctx, in, f)
}

func (d *daxLike) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return daxCall(d, d.c.TransactGetItems, ctx, in, f)
}

// anyEntities are the entities every item operation below runs on.
type anyEntities struct {
	tbl       *Table
	customers *Entity[tCustomer]
	orders    *Entity[tOrder]
	lines     *Entity[tLineItem]
	counters  *Entity[vCounter]
	events    *Entity[sEvent]
	coll      *Collection[anyCustomerOrders]
}

type anyCustomerOrders struct {
	Customer *tCustomer `singletable:"Customer"`
	Orders   []tOrder   `singletable:"Order"`
}

func registerAny(t *testing.T, tbl *Table) anyEntities {
	t.Helper()
	c, o, l := registerAll(t, tbl)
	a := anyEntities{tbl: tbl, customers: c, orders: o, lines: l, counters: MustRegister[vCounter](tbl), events: MustRegister[sEvent](tbl)}
	var err error
	a.coll, err = NewCollection[anyCustomerOrders](tbl)
	require.NoError(t, err)
	return a
}

// anyResults is what every item operation returned, for comparing two clients.
type anyResults map[string]any

// runEveryItemOperation runs every item operation through a, under the
// customer id cust (so that two runs do not meet), and returns their results.
func runEveryItemOperation(t *testing.T, a anyEntities, cust string) anyResults {
	t.Helper()
	ctx := context.Background()
	r := anyResults{}
	must := func(name string, v any, err error) {
		t.Helper()
		require.NoError(t, err, name)
		r[name] = v
	}
	ord := func(n int) tOrder { o := order(cust, n); return o }

	v, err := a.orders.Put(ctx, ord(1))
	must("Put", v, err)
	c, err := a.customers.Create(ctx, tCustomer{CustomerID: cust, Name: "Ann", Email: cust + "@example.com"})
	must("Create", c, err)
	_, err = a.customers.Create(ctx, tCustomer{CustomerID: cust, Name: "Ann"})
	require.ErrorIs(t, err, ErrAlreadyExists, "a second Create is refused")
	got, err := a.orders.Get(ctx, tOrder{CustomerID: cust, OrderID: "o001"})
	must("Get", got, err)
	_, err = a.orders.Get(ctx, tOrder{CustomerID: cust, OrderID: "nope"})
	require.ErrorIs(t, err, ErrNotFound)
	left, err := a.orders.BatchPut(ctx, []tOrder{ord(2), ord(3), ord(4)})
	must("BatchPut", left, err)
	_, err = a.lines.BatchPut(ctx, []tLineItem{{CustomerID: cust, OrderID: "o001", Line: 1, SKU: "A"}, {CustomerID: cust, OrderID: "o001", Line: 2, SKU: "B"}})
	require.NoError(t, err)
	bg, err := a.orders.BatchGet(ctx, []tOrder{{CustomerID: cust, OrderID: "o002"}, {CustomerID: cust, OrderID: "o009"}})
	must("BatchGet", bg, err)
	page, err := a.orders.Query(ctx, tOrder{CustomerID: cust})
	must("Query", page.Items, err)
	page, err = a.orders.Query(ctx, tOrder{CustomerID: cust}, On("GSI2"))
	must("Query GSI2", page.Items, err)
	tp, err := a.tbl.Query(ctx, tCustomer{CustomerID: cust})
	must("Table.Query", tp.Items, err)
	up, err := a.orders.Update(ctx, tOrder{CustomerID: cust, OrderID: "o002"}, Set("note", "gift"))
	must("Update", up, err)
	_, err = a.counters.Put(ctx, vCounter{ID: cust, Name: "n"})
	require.NoError(t, err)
	m, err := a.counters.Mutate(ctx, vCounter{ID: cust}, func(c *vCounter) error { c.N += 5; return nil })
	must("Mutate", m, err)
	require.NoError(t, a.tbl.Transact(ctx, a.orders.TxPut(ord(5)), a.orders.TxUpdate(tOrder{CustomerID: cust, OrderID: "o003"}, Set("note", "tx"))))
	o3, err := a.orders.Get(ctx, tOrder{CustomerID: cust, OrderID: "o003"})
	must("Transact", o3, err)
	r1, r2, r3 := a.orders.Ref(tOrder{CustomerID: cust, OrderID: "o005"}), a.customers.Ref(tCustomer{CustomerID: cust}), a.counters.Ref(vCounter{ID: cust})
	require.NoError(t, a.tbl.TransactGet(ctx, r1, r2, r3))
	tg := []any{}
	for _, v := range []func() (any, error){
		func() (any, error) { return r1.Value() }, func() (any, error) { return r2.Value() }, func() (any, error) { return r3.Value() },
	} {
		x, err := v()
		require.NoError(t, err)
		tg = append(tg, x)
	}
	r["TransactGet"] = tg
	mixed := []ItemRef{a.orders.Ref(tOrder{CustomerID: cust, OrderID: "o004"}), a.lines.Ref(tLineItem{CustomerID: cust, OrderID: "o001", Line: 2})}
	_, err = a.tbl.BatchGet(ctx, mixed)
	require.NoError(t, err)
	mv := []any{}
	for _, ref := range mixed {
		switch ref := ref.(type) {
		case *Ref[tOrder]:
			x, err := ref.Value()
			require.NoError(t, err)
			mv = append(mv, x)
		case *Ref[tLineItem]:
			x, err := ref.Value()
			require.NoError(t, err)
			mv = append(mv, x)
		}
	}
	r["Table.BatchGet"] = mv
	_, err = a.tbl.BatchWrite(ctx, a.lines.BatchPutItem(tLineItem{CustomerID: cust, OrderID: "o002", Line: 1, SKU: "C"}), a.lines.BatchDeleteItem(tLineItem{CustomerID: cust, OrderID: "o001", Line: 1}))
	require.NoError(t, err)
	n, err := a.orders.Count(ctx, tOrder{CustomerID: cust})
	n.Capacity = 0
	must("Count", n, err)
	require.NoError(t, a.orders.Delete(ctx, tOrder{CustomerID: cust, OrderID: "o004"}))
	_, err = a.orders.Get(ctx, tOrder{CustomerID: cust, OrderID: "o004"})
	require.ErrorIs(t, err, ErrNotFound, "Delete")
	day := day0.AddDate(0, 0, 40)
	for i := range 6 {
		_, err := a.events.Put(ctx, sEvent{Day: day, At: day.Add(time.Duration(i) * time.Minute), EventID: cust + itoa(i), Kind: "k"})
		require.NoError(t, err)
	}
	sp, err := a.events.QueryShards(ctx, sEvent{Day: day})
	var evs []sEvent
	for _, ev := range sp.Items {
		if ev.EventID[:len(cust)] == cust { // the other run's events share the day
			ev.Shard = 0 // drawn at random
			evs = append(evs, ev)
		}
	}
	must("QueryShards", evs, err)
	co, err := a.coll.Load(ctx, tCustomer{CustomerID: cust})
	must("Collection", co, err)
	w, stats, err := WaitFor(ctx, func(ctx context.Context) (Page[tOrder], error) {
		return a.orders.Query(ctx, tOrder{CustomerID: cust}, On("GSI2"))
	}, func(p Page[tOrder]) bool { return len(p.Items) == 4 })
	must("WaitFor", w.Items, err)
	assert.Positive(t, stats.Attempts)
	var scanned []tOrder
	for v, err := range a.orders.ScanAll(ctx) {
		require.NoError(t, err)
		if v.CustomerID == cust {
			scanned = append(scanned, v)
		}
	}
	r["Scan"] = scanned
	return r
}

// observed records what an observer and a logger were told.
type observedOps struct {
	mu   sync.Mutex
	ops  []Operation
	logs bytes.Buffer
}

func (o *observedOps) options() []TableOption {
	return []TableOption{WithObserver(func(op Operation) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.ops = append(o.ops, op)
	}), WithLogger(slog.New(slog.NewTextHandler(&syncWriter{mu: &o.mu, w: &o.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})))}
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestDAXLikeClientEveryItemOperation runs every item operation through a client
// that treats optFns as DAX's does, with the defaults and with an observer and a
// logger: nothing is refused, and every value equals the one read through a
// *dynamodb.Client. The observer sees every call at the client boundary
// (operation, entity, latency, capacity), SDK attempts unknown (0).
func TestDAXLikeClientEveryItemOperation(t *testing.T) {
	base, _ := newTestTable(t)
	name := base.Name()
	for _, tc := range []struct {
		name    string
		observe bool
	}{{"defaults", false}, {"observer and logger", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var daxObs, sdkObs observedOps
			var daxOpts, sdkOpts []TableOption
			if tc.observe {
				daxOpts, sdkOpts = daxObs.options(), sdkObs.options()
			}
			dax := &daxLike{c: local.Client(t)}
			daxTbl, err := NewTable(dax, name, append([]TableOption{testTableOptions}, daxOpts...)...)
			require.NoError(t, err)
			assert.False(t, daxTbl.wireOn(), "no wire path through a client that declares nothing")
			sdkTbl, err := NewTable(local.Client(t), name, append([]TableOption{testTableOptions}, sdkOpts...)...)
			require.NoError(t, err)
			assert.Equal(t, defaultWireDecoding, sdkTbl.wireOn(), "the wire path stays on for *dynamodb.Client")

			got := runEveryItemOperation(t, registerAny(t, daxTbl), "dax-"+tc.name[:3])
			want := runEveryItemOperation(t, registerAny(t, sdkTbl), "sdk-"+tc.name[:3])
			assert.Zero(t, dax.refused.Load(), "no call was refused")
			require.Len(t, got, len(want))
			for op, w := range want {
				assert.Equal(t, rename(w, "sdk-", "dax-"), got[op], op)
			}
			if !tc.observe {
				return
			}
			daxObs.mu.Lock()
			defer daxObs.mu.Unlock()
			sdkObs.mu.Lock()
			defer sdkObs.mu.Unlock()
			require.Equal(t, len(sdkObs.ops), len(daxObs.ops), "the same calls observed")
			seen := map[string]bool{}
			for i, op := range daxObs.ops {
				assert.Equal(t, sdkObs.ops[i].Name, op.Name)
				assert.Equal(t, sdkObs.ops[i].Entity, op.Entity, op.Name)
				assert.Equal(t, name, op.Table)
				assert.Positive(t, op.Latency)
				assert.Zero(t, op.Attempts, "attempts are unknown without SDK middleware")
				assert.Equal(t, 1, sdkObs.ops[i].Attempts, "and counted through *dynamodb.Client")
				assert.Equal(t, sdkObs.ops[i].Err == nil, op.Err == nil, op.Name)
				if op.Name != "Scan" && op.Name != "Query" { // scans and the shards' partitions hold the other run's items too
					assert.Equal(t, sdkObs.ops[i].Capacity, op.Capacity, op.Name)
				}
				seen[op.Name] = true
				if (op.Name == "PutItem" || op.Name == "GetItem") && op.Err == nil {
					assert.Positive(t, op.Capacity, "capacity is asked for and reported: %s", op.Name)
				}
			}
			for _, api := range []string{"PutItem", "GetItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem", "TransactWriteItems", "TransactGetItems"} {
				assert.True(t, seen[api], "%s observed", api)
			}
			assert.Contains(t, daxObs.logs.String(), "op=TransactGetItems")
			assert.Contains(t, daxObs.logs.String(), "entity=tOrder")
		})
	}
}

// rename returns v with the customer ids of one run as those of the other.
func rename(v any, from, to string) any {
	switch v := v.(type) {
	case tOrder:
		v.CustomerID = swapPrefix(v.CustomerID, from, to)
		return v
	case tCustomer:
		v.CustomerID = swapPrefix(v.CustomerID, from, to)
		v.Email = swapPrefix(v.Email, from, to)
		return v
	case *tCustomer:
		if v == nil {
			return v
		}
		c := rename(*v, from, to).(tCustomer)
		return &c
	case tLineItem:
		v.CustomerID = swapPrefix(v.CustomerID, from, to)
		return v
	case vCounter:
		v.ID = swapPrefix(v.ID, from, to)
		return v
	case sEvent:
		v.EventID = swapPrefix(v.EventID, from, to)
		return v
	case []tOrder:
		return mapSlice(v, from, to)
	case []sEvent:
		return mapSlice(v, from, to)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = rename(x, from, to)
		}
		return out
	case BatchGetResult[tOrder]:
		v.Items = mapSlice(v.Items, from, to)
		v.Missing = mapSlice(v.Missing, from, to)
		v.Unprocessed = mapSlice(v.Unprocessed, from, to)
		return v
	case anyCustomerOrders:
		v.Customer = rename(v.Customer, from, to).(*tCustomer)
		v.Orders = mapSlice(v.Orders, from, to)
		return v
	}
	return v
}

func mapSlice[T any](vs []T, from, to string) []T {
	if vs == nil {
		return nil
	}
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = rename(v, from, to).(T)
	}
	return out
}

func swapPrefix(s, from, to string) string {
	if len(s) >= len(from) && s[:len(from)] == from {
		return to + s[len(from):]
	}
	return s
}

// TestDAXLikeClientTableCalls: a client without table operations serves every
// item operation (above); the table calls fail before anything is sent, naming
// the missing method, and so do those of Table.Client.
func TestDAXLikeClientTableCalls(t *testing.T) {
	dax := &daxLike{c: local.Client(t)}
	tbl, err := NewTable(dax, "no-such-table", testTableOptions, WithTTLAttribute("ttl"))
	require.NoError(t, err)
	ctx := context.Background()
	err = tbl.CreateTable(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "no CreateTable method")
	err = tbl.DeleteTable(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "no DeleteTable method")
	err = tbl.EnableTTL(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "UpdateTimeToLive")
	_, err = tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "no DescribeTable method")
	_, err = NewTable(dax, "no-such-table", WithWireDecoding(true))
	require.ErrorIs(t, err, ErrInvalidInput, "the wire path asked for through a client not known to allow it is refused")
	assert.ErrorContains(t, err, "WithClientTraits")

	// A client with DescribeTable but not CreateTable: CreateTable names the one missing.
	half, err := NewTable(describeOnly{dax, local.Client(t)}, "no-such-table")
	require.NoError(t, err)
	err = half.CreateTable(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "no CreateTable method")
}

type describeOnly struct {
	*daxLike
	c *dynamodb.Client
}

func (d describeOnly) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return d.c.DescribeTable(ctx, in, f...)
}

// TestDAXLikeClientRefusalKeepsKind: a client's refusal is never reported as
// unprocessed keys or items. The table is told (wrongly) that the DAX-like
// client accepts middleware, so that with an observer every call carries some and
// is refused: each batch call returns the refusal, not ErrUnprocessed.
func TestDAXLikeClientRefusalKeepsKind(t *testing.T) {
	base, _ := newTestTable(t)
	obs := &observedOps{}
	dax := &daxLike{c: local.Client(t)}
	tbl, err := NewTable(dax, base.Name(), append([]TableOption{testTableOptions, WithClientTraits(ClientTraits{APIOptions: true})}, obs.options()...)...)
	require.NoError(t, err)
	_, orders, lines := registerAll(t, tbl)
	ctx := context.Background()

	res, err := orders.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o1"}, {CustomerID: "c1", OrderID: "o2"}})
	require.ErrorIs(t, err, errDAXMiddleware)
	assert.NotErrorIs(t, err, ErrUnprocessed)
	assert.NotContains(t, err.Error(), "unprocessed")
	assert.Empty(t, res.Unprocessed)
	assert.Empty(t, res.Missing, "keys not read are not missing")

	left, err := orders.BatchPut(ctx, []tOrder{order("c1", 1), order("c1", 2)})
	require.ErrorIs(t, err, errDAXMiddleware)
	assert.NotErrorIs(t, err, ErrUnprocessed)
	assert.Len(t, left, 2, "the items not written")

	refs := []ItemRef{orders.Ref(tOrder{CustomerID: "c1", OrderID: "o1"}), lines.Ref(tLineItem{CustomerID: "c1", OrderID: "o1", Line: 1})}
	_, err = tbl.BatchGet(ctx, refs)
	require.ErrorIs(t, err, errDAXMiddleware)
	assert.NotErrorIs(t, err, ErrUnprocessed)
	_, verr := refs[0].(*Ref[tOrder]).Value()
	require.ErrorIs(t, verr, errDAXMiddleware, "the ref says why it was not read")
	assert.NotErrorIs(t, verr, ErrUnprocessed)

	_, err = tbl.BatchWrite(ctx, orders.BatchPutItem(order("c1", 3)))
	require.ErrorIs(t, err, errDAXMiddleware)
	assert.NotErrorIs(t, err, ErrUnprocessed)

	// A validation error (a table that does not exist) keeps its kind too.
	missing, err := NewTable(local.Client(t), base.Name()+"-missing", testTableOptions)
	require.NoError(t, err)
	morders := MustRegister[tOrder](missing)
	res, err = morders.BatchGet(ctx, []tOrder{{CustomerID: "c1", OrderID: "o1"}})
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	assert.NotErrorIs(t, err, ErrUnprocessed)
	assert.Empty(t, res.Unprocessed)
	_, err = morders.BatchPut(ctx, []tOrder{order("c1", 1)})
	require.ErrorAs(t, err, &nf)
	assert.NotErrorIs(t, err, ErrUnprocessed)
}

// hider is a wrapper that edits outputs: it passes optFns on to a
// *dynamodb.Client (so SDK middleware would run) and hides every item whose
// orderId is "o002" or whose eventId ends in "hide", as a cache or a test of
// index lag might. While queryBudget is positive it hides them from Query
// outputs only, one call at a time, then shows them. It declares nothing.
type hider struct {
	*dynamodb.Client
	queryBudget atomic.Int64 // > 0: hide only from that many more queries
}

func hidden(item map[string]types.AttributeValue) bool {
	if s, ok := item["orderId"].(*types.AttributeValueMemberS); ok && s.Value == "o002" {
		return true
	}
	s, ok := item["eventId"].(*types.AttributeValueMemberS)
	return ok && len(s.Value) >= 4 && s.Value[len(s.Value)-4:] == "hide"
}

func hide(items []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	out := items[:0:0]
	for _, it := range items {
		if !hidden(it) {
			out = append(out, it)
		}
	}
	return out
}

func (h *hider) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := h.Client.GetItem(ctx, in, f...)
	if err == nil && hidden(out.Item) {
		out.Item = nil
	}
	return out, err
}

func (h *hider) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := h.Client.BatchGetItem(ctx, in, f...)
	if err == nil {
		for name, items := range out.Responses {
			out.Responses[name] = hide(items)
		}
	}
	return out, err
}

func (h *hider) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := h.Client.Query(ctx, in, f...)
	if err == nil && h.queryBudget.Add(-1) >= 0 {
		out.Items = hide(out.Items)
		out.Count = int32(len(out.Items))
	}
	return out, err
}

func (h *hider) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := h.Client.Scan(ctx, in, f...)
	if err == nil {
		out.Items = hide(out.Items)
		out.Count = int32(len(out.Items))
	}
	return out, err
}

func (h *hider) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	out, err := h.Client.TransactGetItems(ctx, in, f...)
	if err == nil {
		for i := range out.Responses {
			if hidden(out.Responses[i].Item) {
				out.Responses[i].Item = nil
			}
		}
	}
	return out, err
}

// TestWrapperEditsSeen: what a wrapper that edits outputs returns is what every
// read path reads (Get, BatchGet, Query, Table.Query, Scan, Collection,
// QueryShards, TransactGet, Table.BatchGet, WaitFor), with the defaults: the
// wire path does not decode below it. A WaitFor over a query the wrapper hides an
// item from twice reads three times.
func TestWrapperEditsSeen(t *testing.T) {
	base, _ := newTestTable(t)
	h := &hider{Client: local.Client(t)}
	h.queryBudget.Store(1 << 30)
	tbl, err := NewTable(h, base.Name(), testTableOptions)
	require.NoError(t, err)
	a := registerAny(t, tbl)
	ctx := context.Background()
	_, err = a.customers.Put(ctx, tCustomer{CustomerID: "w1", Name: "W"})
	require.NoError(t, err)
	_, err = a.orders.BatchPut(ctx, []tOrder{order("w1", 1), order("w1", 2), order("w1", 3)})
	require.NoError(t, err)
	day := day0.AddDate(0, 0, 50)
	for _, id := range []string{"e1", "e2-hide", "e3"} {
		_, err := a.events.Put(ctx, sEvent{Day: day, At: day, EventID: id, Kind: "k"})
		require.NoError(t, err)
	}
	ids := func(os []tOrder) []string {
		var out []string
		for _, o := range os {
			out = append(out, o.OrderID)
		}
		return out
	}

	_, err = a.orders.Get(ctx, tOrder{CustomerID: "w1", OrderID: "o002"})
	assert.ErrorIs(t, err, ErrNotFound, "Get")
	bg, err := a.orders.BatchGet(ctx, []tOrder{{CustomerID: "w1", OrderID: "o001"}, {CustomerID: "w1", OrderID: "o002"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"o001"}, ids(bg.Items), "BatchGet")
	assert.Equal(t, []string{"o002"}, ids(bg.Missing), "BatchGet")
	page, err := a.orders.Query(ctx, tOrder{CustomerID: "w1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"o001", "o003"}, ids(page.Items), "Query")
	page, err = a.orders.Query(ctx, tOrder{CustomerID: "w1"}, On("GSI2"))
	require.NoError(t, err)
	assert.Equal(t, []string{"o003", "o001"}, ids(page.Items), "Query on an index")
	tp, err := a.tbl.Query(ctx, tCustomer{CustomerID: "w1"})
	require.NoError(t, err)
	assert.Len(t, tp.Items, 3, "Table.Query: the customer and two orders")
	var scanned []string
	for v, err := range a.orders.ScanAll(ctx) {
		require.NoError(t, err)
		if v.CustomerID == "w1" {
			scanned = append(scanned, v.OrderID)
		}
	}
	assert.ElementsMatch(t, []string{"o001", "o003"}, scanned, "Scan")
	co, err := a.coll.Load(ctx, tCustomer{CustomerID: "w1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"o001", "o003"}, ids(co.Orders), "Collection")
	sp, err := a.events.QueryShards(ctx, sEvent{Day: day})
	require.NoError(t, err)
	var evs []string
	for _, ev := range sp.Items {
		evs = append(evs, ev.EventID)
	}
	assert.ElementsMatch(t, []string{"e1", "e3"}, evs, "QueryShards")
	r1, r2 := a.orders.Ref(tOrder{CustomerID: "w1", OrderID: "o001"}), a.orders.Ref(tOrder{CustomerID: "w1", OrderID: "o002"})
	require.NoError(t, a.tbl.TransactGet(ctx, r1, r2))
	_, err = r1.Value()
	require.NoError(t, err)
	_, err = r2.Value()
	assert.ErrorIs(t, err, ErrNotFound, "TransactGet")
	r1, r2 = a.orders.Ref(tOrder{CustomerID: "w1", OrderID: "o001"}), a.orders.Ref(tOrder{CustomerID: "w1", OrderID: "o002"})
	_, err = a.tbl.BatchGet(ctx, []ItemRef{r1, r2})
	require.NoError(t, err)
	_, err = r2.Value()
	assert.ErrorIs(t, err, ErrNotFound, "Table.BatchGet")

	h.queryBudget.Store(2) // index lag: the item shows from the third query on
	w, stats, err := WaitFor(ctx, func(ctx context.Context) (Page[tOrder], error) {
		return a.orders.Query(ctx, tOrder{CustomerID: "w1"}, On("GSI2"))
	}, func(p Page[tOrder]) bool { return len(p.Items) == 3 }, RetryBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 20}))
	require.NoError(t, err)
	assert.Equal(t, []string{"o003", "o002", "o001"}, ids(w.Items))
	assert.Equal(t, 3, stats.Attempts, "WaitFor")
}
