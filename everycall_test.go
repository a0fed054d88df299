package singletable

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

// The walk of every public call: each call of the API that takes a context is
// listed once (everyCall), and TestEveryCallListed fails when a method taking a
// context is added to Entity, Projection, Ref, Collection or Table without being
// listed, so that the rules that every call must keep are tested on the next
// call too: an operation span (TestEveryCallSpan), a nil context refused
// (TestNilContextEveryCall), a client answering nothing (TestNilOutputEveryCall)
// and a context that ends while a client pages on forever (TestPagingEndsWithContext).

// ecTask is versioned, indexed and unique, with a migration, so that every call
// applies to it.
type ecTask struct {
	_       struct{} `Type:"EcTask" PK:"ECT#{id}" SK:"T" GSI1PK:"ECTS#{state}" GSI1SK:"{id}"`
	ID      string   `dynamodbav:"id"`
	State   string   `dynamodbav:"state,omitempty"`
	Email   string   `dynamodbav:"email,omitempty" singletable:"unique"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// ecEvent is sharded, for the fan-out calls.
type ecEvent struct {
	_     struct{} `Type:"EcEvent" PK:"ECE#{day}#{shard}" SK:"{id}" singletable:"shards=3"`
	Day   string   `dynamodbav:"day"`
	ID    string   `dynamodbav:"id"`
	Shard int      `dynamodbav:"shard" singletable:"shard"`
}

type ecColl struct {
	Tasks []ecTask `singletable:"EcTask"`
}

// everyOpts are the table options of the walks besides testTableOptions: a TTL
// attribute (EnableTTL) and a native index (a native-index Count).
var everyOpts = []TableOption{WithTTLAttribute("expires"), WithNativeIndex("ByState", NativeKey{Partition: []KeyAttribute{S("state")}})}

type everyModel struct {
	tbl    *Table
	tasks  *Entity[ecTask]
	events *Entity[ecEvent]
	coll   *Collection[ecColl]
}

func newEveryModel(t testing.TB, tbl *Table) everyModel {
	t.Helper()
	tasks, err := Register[ecTask](tbl, Migrations(Migration[ecTask]{Steps: []Step[ecTask]{{Typed: func(*ecTask) error { return nil }}}}))
	require.NoError(t, err)
	events, err := Register[ecEvent](tbl)
	require.NoError(t, err)
	coll, err := NewCollection[ecColl](tbl)
	require.NoError(t, err)
	return everyModel{tbl: tbl, tasks: tasks, events: events, coll: coll}
}

// publicCall is one call of the API: its name as TestEveryCallListed finds it
// (receiver type and method), the operation span it starts, whether it reads page
// after page, and the call itself.
type publicCall struct {
	name   string
	span   string
	paging bool
	call   func(ctx context.Context) error
}

func seqErr[V any](seq func(func(V, error) bool)) error {
	var last error
	for _, err := range seq {
		if err != nil {
			last = err
		}
	}
	return last
}

func everyCall(m everyModel) []publicCall {
	k := ecTask{ID: "a", State: "open", Version: 1}
	ev := ecEvent{Day: "d1", ID: "e1"}
	fast := RetryBackoff(Backoff{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: 2})
	e, p, tbl, coll := m.tasks, m.tasks.Project("id", "state"), m.tbl, m.coll
	native := On("ByState")
	return []publicCall{
		{"Entity.Get", "Get", false, func(ctx context.Context) error { _, err := e.Get(ctx, k); return err }},
		{"Entity.Put", "Put", false, func(ctx context.Context) error { _, err := e.Put(ctx, k); return err }},
		{"Entity.Create", "Create", false, func(ctx context.Context) error { _, err := e.Create(ctx, k); return err }},
		{"Entity.Update", "Update", false, func(ctx context.Context) error { _, err := e.Update(ctx, k, Set("state", "done")); return err }},
		{"Entity.Delete", "Delete", false, func(ctx context.Context) error { return e.Delete(ctx, k) }},
		{"Entity.Mutate", "Mutate", false, func(ctx context.Context) error {
			_, err := e.Mutate(ctx, k, func(*ecTask) error { return nil }, fast)
			return err
		}},
		{"Entity.Query", "Query", false, func(ctx context.Context) error { _, err := e.Query(ctx, k); return err }},
		{"Entity.All", "All", true, func(ctx context.Context) error { return seqErr(e.All(ctx, k)) }},
		{"Entity.Scan", "Scan", false, func(ctx context.Context) error { _, err := e.Scan(ctx); return err }},
		{"Entity.ScanAll", "ScanAll", true, func(ctx context.Context) error { return seqErr(e.ScanAll(ctx)) }},
		{"Entity.Count", "Count", true, func(ctx context.Context) error { _, err := e.Count(ctx, k); return err }},
		{"Entity.Count on a native index", "Count", true, func(ctx context.Context) error { _, err := e.Count(ctx, k, native); return err }},
		{"Entity.ScanCount", "ScanCount", true, func(ctx context.Context) error { _, err := e.ScanCount(ctx); return err }},
		{"Entity.QueryShards", "QueryShards", false, func(ctx context.Context) error { _, err := m.events.QueryShards(ctx, ev); return err }},
		{"Entity.AllShards", "AllShards", true, func(ctx context.Context) error { return seqErr(m.events.AllShards(ctx, ev)) }},
		{"Entity.BatchGet", "BatchGet", false, func(ctx context.Context) error { _, err := e.BatchGet(ctx, []ecTask{k}); return err }},
		{"Entity.BatchPut", "BatchPut", false, func(ctx context.Context) error {
			_, err := m.events.BatchPut(ctx, []ecEvent{ev})
			return err
		}},
		{"Entity.BatchDelete", "BatchDelete", false, func(ctx context.Context) error {
			_, err := m.events.BatchDelete(ctx, []ecEvent{{Day: "d1", ID: "e1", Shard: 1}})
			return err
		}},
		{"Entity.WaitIndexed", "WaitIndexed", false, func(ctx context.Context) error { _, _, err := e.WaitIndexed(ctx, "GSI1", k, fast); return err }},
		{"Entity.WaitUnindexed", "WaitUnindexed", false, func(ctx context.Context) error { _, err := e.WaitUnindexed(ctx, "GSI1", k, fast); return err }},
		{"Entity.WaitMoved", "WaitMoved", false, func(ctx context.Context) error {
			moved := k
			moved.State = "done"
			_, err := e.WaitMoved(ctx, "GSI1", k, moved, fast)
			return err
		}},
		{"Entity.Sweep", "Sweep", true, func(ctx context.Context) error { _, err := e.Sweep(ctx); return err }},
		{"Entity.SweepUnique", "SweepUnique", true, func(ctx context.Context) error { _, err := e.SweepUnique(ctx); return err }},
		{"Projection.Get", "Get", false, func(ctx context.Context) error { _, err := p.Get(ctx, k); return err }},
		{"Projection.Query", "Query", false, func(ctx context.Context) error { _, err := p.Query(ctx, k); return err }},
		{"Projection.All", "All", true, func(ctx context.Context) error { return seqErr(p.All(ctx, k)) }},
		{"Projection.Scan", "Scan", false, func(ctx context.Context) error { _, err := p.Scan(ctx); return err }},
		{"Projection.ScanAll", "ScanAll", true, func(ctx context.Context) error { return seqErr(p.ScanAll(ctx)) }},
		{"Projection.BatchGet", "BatchGet", false, func(ctx context.Context) error { _, err := p.BatchGet(ctx, []ecTask{k}); return err }},
		{"Collection.Query", "Query", false, func(ctx context.Context) error { _, err := coll.Query(ctx, k); return err }},
		{"Collection.Load", "Load", true, func(ctx context.Context) error { _, err := coll.Load(ctx, k); return err }},
		{"Table.Query", "Query", false, func(ctx context.Context) error { _, err := tbl.Query(ctx, k); return err }},
		{"Table.All", "All", true, func(ctx context.Context) error { return seqErr(tbl.All(ctx, k)) }},
		{"Table.Count", "Count", true, func(ctx context.Context) error { _, err := tbl.Count(ctx, k); return err }},
		{"Table.Scan", "Scan", false, func(ctx context.Context) error { _, err := tbl.Scan(ctx); return err }},
		{"Table.ScanAll", "ScanAll", true, func(ctx context.Context) error { return seqErr(tbl.ScanAll(ctx)) }},
		{"Table.ScanCount", "ScanCount", true, func(ctx context.Context) error { _, err := tbl.ScanCount(ctx); return err }},
		{"Table.BatchGet", "BatchGet", false, func(ctx context.Context) error { _, err := tbl.BatchGet(ctx, []ItemRef{e.Ref(k)}); return err }},
		{"Table.BatchWrite", "BatchWrite", false, func(ctx context.Context) error {
			_, err := tbl.BatchWrite(ctx, m.events.BatchPutItem(ev), m.events.BatchDeleteItem(ecEvent{Day: "d1", ID: "e2", Shard: 1}))
			return err
		}},
		{"Table.Transact", "Transact", false, func(ctx context.Context) error {
			return tbl.Transact(ctx, e.TxUpdate(k, Set("state", "x")), e.TxCheck(ecTask{ID: "b"}, expression.AttributeNotExists(expression.Name("id"))))
		}},
		{"Table.TransactWith", "Transact", false, func(ctx context.Context) error {
			return tbl.TransactWith(ctx, TxOptions{}, e.TxDelete(k))
		}},
		{"Table.TransactGet", "TransactGet", false, func(ctx context.Context) error { return tbl.TransactGet(ctx, e.Ref(k)) }},
		{"Table.CreateTable", "CreateTable", false, func(ctx context.Context) error { return tbl.CreateTable(ctx) }},
		{"Table.DeleteTable", "DeleteTable", false, func(ctx context.Context) error { return tbl.DeleteTable(ctx) }},
		{"Table.EnableTTL", "EnableTTL", false, func(ctx context.Context) error { return tbl.EnableTTL(ctx) }},
	}
}

// notCalls are the methods taking a context that make no call of the API of
// their own.
var notCalls = map[string]string{
	"Table.StartSpan": "starts a span for packages that build on a Table",
}

// TestEveryCallListed: every method of the API's types that takes a context is
// in everyCall (or notCalls), so that the walks below cover the next call too.
func TestEveryCallListed(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range everyCall(newEveryModel(t, offlineTable(t, everyOpts...))) {
		listed[strings.Fields(c.name)[0]] = true
	}
	ctxType := reflect.TypeFor[context.Context]()
	var missing []string
	for name, typ := range map[string]reflect.Type{
		"Entity":     reflect.TypeFor[*Entity[ecTask]](),
		"Projection": reflect.TypeFor[*Projection[ecTask]](),
		"Ref":        reflect.TypeFor[*Ref[ecTask]](),
		"Collection": reflect.TypeFor[*Collection[ecColl]](),
		"Table":      reflect.TypeFor[*Table](),
	} {
		for i := range typ.NumMethod() {
			mt := typ.Method(i)
			if mt.Type.NumIn() < 2 || mt.Type.In(1) != ctxType {
				continue
			}
			full := name + "." + mt.Name
			if !listed[full] && notCalls[full] == "" {
				missing = append(missing, full)
			}
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "calls taking a context that everyCall does not list")
}

// spanRecorder is a Tracer that keeps the spans started, in order.
type spanRecorder struct {
	mu    sync.Mutex
	spans []Span
}

func (r *spanRecorder) Start(ctx context.Context, s Span) (context.Context, func(SpanEnd)) {
	r.mu.Lock()
	r.spans = append(r.spans, s)
	r.mu.Unlock()
	return ctx, func(SpanEnd) {}
}

func (r *spanRecorder) Event(context.Context, SpanEvent) {}

func (r *spanRecorder) take() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.spans
	r.spans = nil
	return s
}

// TestEveryCallSpan: each public call is one operation span, started before any
// DynamoDB call it makes, named after the call (issue 37, scenario 16: Table.Query,
// Table.Count, Table.Scan, Collection.Query and Collection.Load had none, nor had
// SweepUnique and table management).
func TestEveryCallSpan(t *testing.T) {
	rec := &spanRecorder{}
	tbl, err := NewTable(local.Client(t), localtest.TableName(t), append([]TableOption{testTableOptions, WithTracer(rec)}, everyOpts...)...)
	require.NoError(t, err)
	createTestTable(t, tbl)
	m := newEveryModel(t, tbl)
	ctx := context.Background()
	calls := everyCall(m)
	// CreateTable and DeleteTable run last, on the table the test made.
	sort.SliceStable(calls, func(i, j int) bool {
		return !strings.HasSuffix(calls[i].name, "Table") && strings.HasSuffix(calls[j].name, "Table")
	})
	for _, c := range calls {
		rec.take()
		_ = c.call(ctx)
		spans := rec.take()
		if !assert.NotEmpty(t, spans, c.name) {
			continue
		}
		first := spans[0]
		assert.Equal(t, SpanOperation, first.Kind, "%s: its first span is the operation's: %+v", c.name, spans)
		assert.Equal(t, c.span, first.Name, c.name)
		assert.Equal(t, tbl.Name(), first.Table, c.name)
		for _, s := range spans[1:] {
			if s.Kind == SpanOperation { // only CreateTable and WaitMoved are made of other calls
				assert.Contains(t, map[string][]string{"CreateTable": {"EnableTTL"}, "WaitMoved": {"WaitIndexed", "WaitUnindexed"}}[c.span], s.Name, "%s: a second operation span", c.name)
			}
		}
	}
}

// TestNilContextEveryCall: a nil context is refused by every call with an error
// matching ErrInvalidInput that says so, never a panic (issue 37, scenario 14).
func TestNilContextEveryCall(t *testing.T) {
	m := newEveryModel(t, offlineTable(t, everyOpts...))
	for _, c := range everyCall(m) {
		var err error
		assert.NotPanics(t, func() { err = c.call(nil) }, c.name)
		if assert.ErrorIs(t, err, ErrInvalidInput, c.name) {
			assert.Contains(t, err.Error(), "the context is nil", c.name)
		}
	}
	//lint:ignore SA1012 the nil context is the point
	_, err := Explain(nil, func(context.Context) error { return nil })
	assert.ErrorIs(t, err, ErrInvalidInput)
	//lint:ignore SA1012 the nil context is the point
	_, _, err = WaitFor(nil, func(context.Context) (int, error) { return 0, nil }, func(int) bool { return true })
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// nilOutputClient answers every call with neither an output nor an error, as a
// careless stub or wrapper may.
type nilOutputClient struct{ calls atomic.Int64 }

func (c *nilOutputClient) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) TransactGetItems(context.Context, *dynamodb.TransactGetItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	c.calls.Add(1)
	return nil, nil
}
func (c *nilOutputClient) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	c.calls.Add(1)
	return nil, nil
}

// TestNilOutputEveryCall: a client that returns (nil, nil) gets an error naming
// the DynamoDB call from every call of the API, never a panic (issue 37,
// scenario 9); a write so answered is judged as after a lost answer.
func TestNilOutputEveryCall(t *testing.T) {
	for _, obs := range []bool{false, true} {
		client := &nilOutputClient{}
		opts := append([]TableOption{testTableOptions, WithBackoff(Backoff{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: 3})}, everyOpts...)
		if obs {
			opts = append(opts, WithObserver(func(Operation) {}), WithTracer(&spanRecorder{}))
		}
		tbl, err := NewTable(client, "nil-output", opts...)
		require.NoError(t, err)
		m := newEveryModel(t, tbl)
		ctx := context.Background()
		for _, c := range everyCall(m) {
			name := fmt.Sprintf("%s (observed %v)", c.name, obs)
			var err error
			began := time.Now()
			assert.NotPanics(t, func() { err = c.call(ctx) }, name)
			if d := time.Since(began); d > time.Second {
				t.Logf("%s took %v", name, d)
			}
			if assert.Error(t, err, name) {
				assert.Contains(t, err.Error(), "returned neither an output nor an error from ", name)
				assert.Contains(t, err.Error(), "*singletable.nilOutputClient", name)
			}
		}
		assert.NotZero(t, client.calls.Load())
	}
	// A write so answered is of unknown outcome: judged, and unproven.
	tbl, err := NewTable(&nilOutputClient{}, "nil-output", append([]TableOption{testTableOptions, WithBackoff(Backoff{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: 3})}, everyOpts...)...)
	require.NoError(t, err)
	m := newEveryModel(t, tbl)
	_, err = m.tasks.Update(context.Background(), ecTask{ID: "a", Version: 1}, Set("state", "x"))
	assert.ErrorIs(t, err, ErrAmbiguous)
	_, err = m.events.Put(context.Background(), ecEvent{Day: "d", ID: "e"})
	assert.ErrorIs(t, err, ErrAmbiguous)
}

// endlessClient ignores its context and always has another page: one item-less
// page after another, each with a LastEvaluatedKey. It ends ctx (cancel) after
// endAfter pages and counts the pages it served.
type endlessClient struct {
	nilOutputClient
	pages    atomic.Int64
	endAfter int64
	cancel   context.CancelFunc
}

// page counts a page and returns its LastEvaluatedKey: the table's keys and the
// index's.
func (c *endlessClient) page(index *string) map[string]types.AttributeValue {
	if c.pages.Add(1) == c.endAfter {
		c.cancel()
	}
	key := map[string]types.AttributeValue{"PK": sAV("x"), "SK": sAV("y")}
	switch aws.ToString(index) {
	case "GSI1":
		key["GSI1PK"], key["GSI1SK"] = sAV("x"), sAV("y")
	case "ByState":
		key["state"] = sAV("x")
	}
	return key
}

func (c *endlessClient) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return &dynamodb.QueryOutput{LastEvaluatedKey: c.page(in.IndexName)}, nil
}

func (c *endlessClient) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return &dynamodb.ScanOutput{LastEvaluatedKey: c.page(in.IndexName)}, nil
}

// TestPagingEndsWithContext: every call that reads page after page stops at the
// next page once its context ends, through a client that ignores the context and
// always has another page (issue 37, scenario 10: they spun forever).
func TestPagingEndsWithContext(t *testing.T) {
	for _, c := range everyCall(newEveryModel(t, offlineTable(t, everyOpts...))) {
		if !c.paging {
			continue
		}
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := &endlessClient{endAfter: 3, cancel: cancel}
			tbl, err := NewTable(client, "endless", append([]TableOption{testTableOptions}, everyOpts...)...)
			require.NoError(t, err)
			call := c
			for _, cc := range everyCall(newEveryModel(t, tbl)) {
				if cc.name == c.name {
					call = cc
				}
			}
			done := make(chan error, 1)
			go func() { done <- call.call(ctx) }()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.Canceled)
				// A fan-out reads its shards at once: each may have asked for one more page.
				assert.LessOrEqual(t, client.pages.Load(), int64(3+3), "pages read after the context ended")
			case <-time.After(10 * time.Second):
				t.Fatalf("%s pages on after its context ended (%d pages)", c.name, client.pages.Load())
			}
		})
	}
}
