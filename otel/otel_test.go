package otel_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/singletable/singletable/internal/localtest"
	stotel "github.com/singletable/singletable/otel"
	"github.com/singletable/singletable/streamlambda"
)

// local is the one DynamoDB Local of this test binary, started on first use.
var local localtest.Shared

// TestMain runs the tests, stops DynamoDB Local, then fails the run if any
// goroutine is left behind (see internal/leakcheck).
func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }

// Order is a versioned entity: Mutate and the read back of a lost answer.
type Order struct {
	_        struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	Customer string   `dynamodbav:"customerId"`
	ID       string   `dynamodbav:"orderId"`
	Total    int      `dynamodbav:"total"`
	Version  int64    `dynamodbav:"version" singletable:"version"`
}

// Reading is sharded at random over 4 partitions a day: QueryShards.
type Reading struct {
	_      struct{}  `Type:"Reading" PK:"READ#{day:date}#S{shard}" SK:"{at:time}#{id}" singletable:"shards=4"`
	Day    time.Time `dynamodbav:"day"`
	At     time.Time `dynamodbav:"at"`
	ID     string    `dynamodbav:"id"`
	Shard  int       `dynamodbav:"shard" singletable:"shard"`
	Degree int       `dynamodbav:"degree"`
}

// rig is a table on DynamoDB Local traced into an in-memory exporter and a
// manual metric reader.
type rig struct {
	table   *singletable.Table
	spans   *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader
	inj     *fault.Injector
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewInMemoryExporter(), metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.metrics))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tr, err := stotel.New(stotel.WithTracerProvider(tp), stotel.WithMeterProvider(mp))
	require.NoError(t, err)
	var client *dynamodb.Client
	client, r.inj = fault.NewClient(local.Get(t))
	r.table, err = singletable.NewTable(client, localtest.TableName(t), singletable.WithTracer(tr))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, r.table.CreateTable(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.table.DeleteTable(ctx); err != nil {
			t.Errorf("delete table: %v", err)
		}
	})
	r.spans.Reset() // CreateTable's span
	return r
}

// tree renders the finished spans as an indented tree of names (spanTree).
func (r *rig) tree() string { return spanTree(r.spans.GetSpans(), "") }

// named returns the finished spans called name, in the order they started.
func (r *rig) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range r.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func events_(s tracetest.SpanStub) []string {
	var out []string
	for _, e := range s.Events {
		desc := e.Name
		for _, kv := range e.Attributes {
			if kv.Key == stotel.HowKey || kv.Key == stotel.OutcomeKey || kv.Key == stotel.ShardsKey {
				desc += " " + kv.Value.String()
			}
		}
		out = append(out, desc)
	}
	return out
}

// TestPutSpans: a Put is one operation span with one client span for its
// UpdateItem (a versioned Put), carrying the database semantic conventions' attributes.
func TestPutSpans(t *testing.T) {
	r := newRig(t)
	orders := singletable.MustRegister[Order](r.table)
	ctx := context.Background()
	_, err := orders.Put(ctx, Order{Customer: "c1", ID: "o1", Total: 10})
	require.NoError(t, err)
	name := r.table.Name()
	assert.Equal(t, "Put Order\n  UpdateItem "+name+"\n", r.tree())

	put := r.named("Put Order")[0]
	assert.Equal(t, trace.SpanKindInternal, put.SpanKind)
	assert.Equal(t, "aws.dynamodb", attr(put, "db.system.name").AsString())
	assert.Equal(t, "Put", attr(put, "db.operation.name").AsString())
	assert.Equal(t, "Order", attr(put, stotel.EntityKey).AsString())
	call := r.named("UpdateItem " + name)[0]
	assert.Equal(t, trace.SpanKindClient, call.SpanKind)
	assert.Equal(t, put.SpanContext.SpanID(), call.Parent.SpanID())
	assert.Equal(t, "UpdateItem", attr(call, "db.operation.name").AsString())
	assert.Equal(t, name, attr(call, "db.collection.name").AsString())
	assert.Equal(t, []string{name}, attr(call, "aws.dynamodb.table_names").AsStringSlice())
	assert.Equal(t, "Order", attr(call, stotel.EntityKey).AsString())
	assert.Positive(t, attr(call, stotel.CapacityKey).AsFloat64(), "consumed capacity asked for and reported")
	assert.Len(t, attr(call, "aws.dynamodb.consumed_capacity").AsStringSlice(), 1)
	assert.Equal(t, codes.Unset, call.Status.Code)

	// A Get that finds nothing: the error's kind on the operation span, and
	// the count of items on the call's.
	_, err = orders.Get(ctx, Order{Customer: "c1", ID: "none"})
	require.ErrorIs(t, err, singletable.ErrNotFound)
	get := r.named("Get Order")[0]
	assert.Equal(t, codes.Error, get.Status.Code)
	assert.Equal(t, "not_found", attr(get, "error.type").AsString())
	assert.Equal(t, int64(0), attr(r.named("GetItem " + name)[0], "db.response.returned_rows").AsInt64())
}

// TestIteratorSpans: every iterator is one operation span, as every call is,
// lasting while the caller iterates, with the DynamoDB calls of its pages
// under it; an iterator that yields an error ends its span with it.
func TestIteratorSpans(t *testing.T) {
	r := newRig(t)
	orders := singletable.MustRegister[Order](r.table)
	ctx := context.Background()
	for i := range 3 {
		_, err := orders.Put(ctx, Order{Customer: "c1", ID: fmt.Sprint(i), Total: i})
		require.NoError(t, err)
	}
	name := r.table.Name()
	drain := func(seq iter.Seq2[Order, error]) int {
		n := 0
		for _, err := range seq {
			require.NoError(t, err)
			n++
		}
		return n
	}
	drainAny := func(seq iter.Seq2[any, error]) int {
		n := 0
		for _, err := range seq {
			require.NoError(t, err)
			n++
		}
		return n
	}
	proj := orders.Project("total")
	cases := []struct {
		name string
		run  func() int
		tree string
	}{
		{"All", func() int { return drain(orders.All(ctx, Order{Customer: "c1"})) }, "All Order\n  Query " + name + "\n"},
		{"ScanAll", func() int { return drain(orders.ScanAll(ctx)) }, "ScanAll Order\n  Scan " + name + "\n"},
		{"Projection.All", func() int {
			n := 0
			for _, err := range proj.All(ctx, Order{Customer: "c1"}) {
				require.NoError(t, err)
				n++
			}
			return n
		}, "All Order\n  Query " + name + "\n"},
		{"Projection.ScanAll", func() int {
			n := 0
			for _, err := range proj.ScanAll(ctx) {
				require.NoError(t, err)
				n++
			}
			return n
		}, "ScanAll Order\n  Scan " + name + "\n"},
		{"Table.All", func() int { return drainAny(r.table.All(ctx, Order{Customer: "c1"})) }, "All " + name + "\n  Query " + name + "\n"},
		{"Table.ScanAll", func() int { return drainAny(r.table.ScanAll(ctx)) }, "ScanAll " + name + "\n  Scan " + name + "\n"},
	}
	for _, c := range cases {
		r.spans.Reset()
		assert.Equal(t, 3, c.run(), c.name)
		assert.Equal(t, c.tree, r.tree(), c.name)
	}

	// An iterator that stops at an error ends its span with it.
	r.spans.Reset()
	for _, err := range orders.All(ctx, Order{Customer: "c1"}, singletable.After("not a cursor")) {
		require.ErrorIs(t, err, singletable.ErrInvalidCursor)
	}
	all := r.named("All Order")
	require.Len(t, all, 1)
	assert.Equal(t, codes.Error, all[0].Status.Code)
}

// TestMutateConflictSpans: a second writer between a Mutate's read and its
// write makes its first attempt lose; the span shows two attempts, the first
// one a conflict, each with its read and its write, and the conflict counted.
func TestMutateConflictSpans(t *testing.T) {
	r := newRig(t)
	orders := singletable.MustRegister[Order](r.table)
	ctx := context.Background()
	_, err := orders.Put(ctx, Order{Customer: "c1", ID: "o1", Total: 10})
	require.NoError(t, err)
	r.spans.Reset()

	calls := 0
	got, err := orders.Mutate(ctx, Order{Customer: "c1", ID: "o1"}, func(o *Order) error {
		if calls++; calls == 1 { // another writer wins in between
			other, err := orders.Get(context.Background(), Order{Customer: "c1", ID: "o1"})
			if err != nil {
				return err
			}
			other.Total = 99
			if _, err := orders.Put(context.Background(), other); err != nil {
				return err
			}
		}
		o.Total++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 100, got.Total)

	name := r.table.Name()
	mutates := r.named("Mutate Order")
	require.Len(t, mutates, 1)
	attempts := r.named("Mutate attempt")
	require.Len(t, attempts, 2)
	for i, a := range attempts {
		assert.Equal(t, mutates[0].SpanContext.SpanID(), a.Parent.SpanID())
		assert.Equal(t, int64(i+1), attr(a, stotel.AttemptKey).AsInt64())
	}
	assert.True(t, attr(attempts[0], stotel.ConflictKey).AsBool(), "the first attempt lost")
	assert.Equal(t, "conflict", attr(attempts[0], "error.type").AsString())
	assert.Equal(t, codes.Unset, attempts[1].Status.Code)
	assert.Equal(t, codes.Unset, mutates[0].Status.Code)
	// Each attempt: its consistent read and its conditional write (a Put pinned to what it read).
	for _, a := range attempts {
		var children []string
		for _, s := range r.spans.GetSpans() {
			if s.Parent.SpanID() == a.SpanContext.SpanID() && s.SpanKind == trace.SpanKindClient {
				children = append(children, s.Name)
			}
		}
		assert.ElementsMatch(t, []string{"GetItem " + name, "UpdateItem " + name}, children)
	}

	conflicts := sumOf(t, r, "singletable.mutate.conflicts")
	assert.Equal(t, int64(1), conflicts)
}

// TestAmbiguousSpans: a versioned Put whose response is lost is read back and
// judged to have landed: the operation span carries the events, the read back
// is a GetItem below it, and the ambiguous write is counted.
func TestAmbiguousSpans(t *testing.T) {
	r := newRig(t)
	orders := singletable.MustRegister[Order](r.table)
	ctx := context.Background()
	defer r.inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Times: 1})()
	v, err := orders.Put(ctx, Order{Customer: "c1", ID: "o1", Total: 10})
	require.NoError(t, err)
	assert.Equal(t, int64(1), v.Version)

	name := r.table.Name()
	assert.Equal(t, "Put Order\n  UpdateItem "+name+"\n  GetItem "+name+"\n", r.tree())
	put := r.named("Put Order")[0]
	assert.Equal(t, []string{"ambiguous read back", "resolved landed"}, events_(put))
	assert.Equal(t, codes.Unset, put.Status.Code)
	assert.Equal(t, codes.Error, r.named("UpdateItem " + name)[0].Status.Code, "the call whose answer was lost")
	assert.Equal(t, int64(1), sumOf(t, r, "singletable.ambiguous"))
}

// TestQueryShardsSpans: a fan-out is one span with its shard count and one
// span per partition read, each with its Query.
func TestQueryShardsSpans(t *testing.T) {
	r := newRig(t)
	readings := singletable.MustRegister[Reading](r.table)
	ctx := context.Background()
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for i := range 8 {
		_, err := readings.Put(ctx, Reading{Day: day, At: day.Add(time.Duration(i) * time.Minute), ID: fmt.Sprint(i), Shard: i % 4, Degree: i})
		require.NoError(t, err)
	}
	r.spans.Reset()
	page, err := readings.QueryShards(ctx, Reading{Day: day})
	require.NoError(t, err)
	require.Len(t, page.Items, 8)

	fan := r.named("QueryShards Reading")
	require.Len(t, fan, 1)
	assert.Equal(t, int64(4), attr(fan[0], stotel.ShardsKey).AsInt64())
	assert.Equal(t, []string{"fanout 4"}, events_(fan[0]))
	shards := r.named("QueryShards shard")
	require.Len(t, shards, 4)
	var partitions []string
	total := int64(0)
	for _, s := range shards {
		assert.Equal(t, fan[0].SpanContext.SpanID(), s.Parent.SpanID())
		partitions = append(partitions, attr(s, stotel.PartitionKey).AsString())
		queries := 0
		for _, c := range r.named("Query " + r.table.Name()) {
			if c.Parent.SpanID() == s.SpanContext.SpanID() {
				queries++
				total += attr(c, "aws.dynamodb.count").AsInt64()
			}
		}
		assert.Equal(t, 1, queries)
	}
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(partitions))), 4, "one span per partition")
	assert.Equal(t, int64(8), total, "the partitions' counts add up")
}

// TestStreamHandlerSpans: a Lambda handler's run on each record is a span
// with its rail key, and a failing run is an error.
func TestStreamHandlerSpans(t *testing.T) {
	r := newRig(t)
	singletable.MustRegister[Order](r.table)
	var mu sync.Mutex
	var seen []int
	h, err := streamlambda.New(r.table, func(ctx context.Context, rec singletable.StreamRecord) error {
		o := rec.New.(Order)
		if o.Total == 2 {
			return errors.New("total 2 fails")
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, o.Total)
		return nil
	}, streamlambda.Retry(singletable.Backoff{MaxAttempts: 1}))
	require.NoError(t, err)
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		change(1, "a", 1), change(2, "b", 2),
	}})
	require.NoError(t, err)
	assert.Len(t, resp.BatchItemFailures, 1)
	runs := r.named("StreamHandler")
	require.Len(t, runs, 2)
	byKey := map[string]tracetest.SpanStub{}
	for _, s := range runs {
		byKey[attr(s, stotel.RailKey).AsString()] = s
		assert.Equal(t, int64(1), attr(s, stotel.AttemptKey).AsInt64())
	}
	require.Len(t, byKey, 2)
	failed := 0
	for _, s := range byKey {
		if s.Status.Code == codes.Error {
			failed++
		}
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, []int{1}, seen)
}

// change is a Lambda stream record of order c/o1 with total n.
func change(seq int, c string, n int) events.DynamoDBEventRecord {
	img := map[string]events.DynamoDBAttributeValue{
		"PK": events.NewStringAttribute("CUST#" + c), "SK": events.NewStringAttribute("ORDER#o1"), "Type": events.NewStringAttribute("Order"),
		"customerId": events.NewStringAttribute(c), "orderId": events.NewStringAttribute("o1"),
		"total": events.NewNumberAttribute(fmt.Sprint(n)), "version": events.NewNumberAttribute("1"),
	}
	return events.DynamoDBEventRecord{
		EventName: "INSERT", EventSource: "aws:dynamodb",
		Change: events.DynamoDBStreamRecord{
			Keys:           map[string]events.DynamoDBAttributeValue{"PK": img["PK"], "SK": img["SK"]},
			NewImage:       img,
			SequenceNumber: fmt.Sprintf("%021d", seq),
			StreamViewType: "NEW_AND_OLD_IMAGES",
		},
	}
}

// TestMetrics: the operation and call duration histograms record each Put
// and UpdateItem (a versioned Put).
func TestMetrics(t *testing.T) {
	r := newRig(t)
	orders := singletable.MustRegister[Order](r.table)
	ctx := context.Background()
	for i := range 3 {
		_, err := orders.Put(ctx, Order{Customer: "c1", ID: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.metrics.Collect(ctx, &rm))
	ops := histogram(t, rm, "singletable.operation.duration")
	calls := histogram(t, rm, "db.client.operation.duration")
	assert.Equal(t, uint64(3), count(ops, "Put"))
	assert.Equal(t, uint64(3), count(calls, "UpdateItem"))
	for _, dp := range calls.DataPoints {
		v, _ := dp.Attributes.Value("db.system.name")
		assert.Equal(t, "aws.dynamodb", v.AsString())
	}
}

func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Histogram[float64] {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data.(metricdata.Histogram[float64])
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Histogram[float64]{}
}

func count(h metricdata.Histogram[float64], op string) uint64 {
	var n uint64
	for _, dp := range h.DataPoints {
		if v, _ := dp.Attributes.Value("db.operation.name"); v.AsString() == op {
			n += dp.Count
		}
	}
	return n
}

// sumOf is the total of the counter name.
func sumOf(t *testing.T, r *rig, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.metrics.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				n := int64(0)
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
				}
				return n
			}
		}
	}
	return 0
}

// TestRootModuleFreeOfOpenTelemetry: the library's module graph holds no
// OpenTelemetry module; only this module brings it.
func TestRootModuleFreeOfOpenTelemetry(t *testing.T) {
	cmd := exec.Command("go", "mod", "graph")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err)
	require.NotEmpty(t, out)
	assert.NotContains(t, string(out), "go.opentelemetry.io", "the root module's graph")
}
