// Package otel reports the logical operations of a [singletable.Table] to
// OpenTelemetry: it implements [singletable.Tracer] with a tracer and a meter.
//
//	tr, err := otel.New(otel.WithTracerProvider(tp), otel.WithMeterProvider(mp))
//	table, err := singletable.NewTable(client, "orders", singletable.WithTracer(tr))
//
// Each call of the library's API is a span ("Put Order", "Mutate Order",
// "QueryShards Order", "Transact orders"), with a span below it for each Mutate
// attempt ("Mutate attempt"), each partition read of a fan-out ("QueryShards
// shard") and each stream handler run ("StreamHandler"), and a client span for
// each DynamoDB call ("GetItem orders"), after OpenTelemetry's database semantic
// conventions: db.system.name "aws.dynamodb", db.operation.name,
// db.collection.name, aws.dynamodb.table_names, aws.dynamodb.index_name,
// aws.dynamodb.consumed_capacity, aws.dynamodb.count, db.response.returned_rows,
// error.type. A write whose answer was lost carries the events "ambiguous" (how
// it was settled: "resend" or "read back") and "resolved" (what the read back
// proved); a batch, "unprocessed" for each call that left items unprocessed; a
// fan-out, the attribute singletable.shards.
//
// Metrics: the histograms singletable.operation.duration (each API call) and
// db.client.operation.duration (each DynamoDB call), in seconds; the counters
// singletable.mutate.conflicts (Mutate attempts that lost to another writer),
// singletable.ambiguous (writes whose answer was lost, by how they were settled)
// and singletable.batch.unprocessed (items a batch call left unprocessed).
//
// The spans come from the library itself, at the boundary of the table's
// client, so they work with any client: DAX's, a wrapper. otelaws
// (go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws)
// instead adds SDK middleware (APIOptions), which DAX's client refuses; on a
// *dynamodb.Client the two combine: otelaws' spans of the SDK's requests nest
// below this package's call spans.
//
// The root module does not depend on OpenTelemetry: this package is a module of
// its own.
package otel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	otelglobal "go.opentelemetry.io/otel"

	"github.com/singletable/singletable"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/singletable/singletable/otel"

// Attribute keys of this package's own.
const (
	KindKey      = attribute.Key("singletable.kind")      // "operation", "attempt", "shard", "call", "handler"
	EntityKey    = attribute.Key("singletable.entity")    // the entity's Go type name
	AttemptKey   = attribute.Key("singletable.attempt")   // a Mutate attempt or handler run: 1, 2...
	PartitionKey = attribute.Key("singletable.partition") // a fan-out's partition
	RailKey      = attribute.Key("singletable.key")       // a stream handler's rail key
	ShardsKey    = attribute.Key("singletable.shards")    // how many partitions a fan-out reads
	ConflictKey  = attribute.Key("singletable.conflict")  // a Mutate attempt lost to another writer
	HowKey       = attribute.Key("singletable.resolution")
	OutcomeKey   = attribute.Key("singletable.outcome")
	ItemsKey     = attribute.Key("singletable.items")
	CapacityKey  = attribute.Key("singletable.capacity_units")
)

// Option configures [New].
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider records spans with tp; default: OpenTelemetry's global
// provider, as it is when New is called.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider records metrics with mp; default: OpenTelemetry's global
// provider, as it is when New is called.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// Tracer is a [singletable.Tracer] that records OpenTelemetry spans and
// metrics. It is safe for concurrent use; one may serve several tables.
type Tracer struct {
	tracer    trace.Tracer
	opDur     metric.Float64Histogram
	callDur   metric.Float64Histogram
	conflicts metric.Int64Counter
	ambiguous metric.Int64Counter
	unproc    metric.Int64Counter
}

var _ singletable.Tracer = (*Tracer)(nil)

// New returns a Tracer; it fails only when the meter refuses an instrument.
func New(opts ...Option) (*Tracer, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otelglobal.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otelglobal.GetMeterProvider()
	}
	m := c.mp.Meter(ScopeName)
	t := &Tracer{tracer: c.tp.Tracer(ScopeName)}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	buckets := metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
	t.opDur, err = m.Float64Histogram("singletable.operation.duration", metric.WithUnit("s"), buckets,
		metric.WithDescription("Duration of the library's logical operations (Put, Mutate, QueryShards...), retries included."))
	add(err)
	t.callDur, err = m.Float64Histogram("db.client.operation.duration", metric.WithUnit("s"), buckets,
		metric.WithDescription("Duration of database client operations."))
	add(err)
	t.conflicts, err = m.Int64Counter("singletable.mutate.conflicts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Mutate attempts that lost to another writer and were retried from a fresh read."))
	add(err)
	t.ambiguous, err = m.Int64Counter("singletable.ambiguous", metric.WithUnit("{write}"),
		metric.WithDescription("Writes whose answer was lost, by how their outcome was settled."))
	add(err)
	t.unproc, err = m.Int64Counter("singletable.batch.unprocessed", metric.WithUnit("{item}"),
		metric.WithDescription("Items a batch call left unprocessed, sent again."))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("singletable: otel.New: %w", err)
	}
	return t, nil
}

// Start starts the span s stands for; see [singletable.Tracer].
func (t *Tracer) Start(ctx context.Context, s singletable.Span) (context.Context, func(singletable.SpanEnd)) {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.DBSystemNameAWSDynamoDB, KindKey.String(s.Kind.String()))
	if s.Table != "" {
		attrs = append(attrs, semconv.DBCollectionName(s.Table), semconv.AWSDynamoDBTableNames(s.Table))
	}
	if s.Entity != "" {
		attrs = append(attrs, EntityKey.String(s.Entity))
	}
	kind := trace.SpanKindInternal
	target := s.Entity
	if target == "" {
		target = s.Table
	}
	name := s.Name + " " + target
	switch s.Kind {
	case singletable.SpanOperation:
		attrs = append(attrs, semconv.DBOperationName(s.Name))
	case singletable.SpanAttempt:
		name = s.Name + " attempt"
		attrs = append(attrs, AttemptKey.Int(s.Attempt))
	case singletable.SpanShard:
		name = s.Name + " shard"
		attrs = append(attrs, PartitionKey.String(s.Key))
	case singletable.SpanCall:
		kind = trace.SpanKindClient
		name = s.Name + " " + s.Table
		attrs = append(attrs, semconv.DBOperationName(s.Name))
		if s.Index != "" {
			attrs = append(attrs, semconv.AWSDynamoDBIndexName(s.Index))
		}
	case singletable.SpanHandler:
		name = s.Name
		attrs = append(attrs, RailKey.String(s.Key), AttemptKey.Int(s.Attempt))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	start := time.Now()
	return ctx, func(e singletable.SpanEnd) {
		elapsed := time.Since(start).Seconds()
		var end []attribute.KeyValue
		if s.Kind == singletable.SpanCall {
			if e.Capacity > 0 {
				end = append(end, CapacityKey.Float64(e.Capacity),
					semconv.AWSDynamoDBConsumedCapacity(`{"TableName":`+strconv.Quote(s.Table)+`,"CapacityUnits":`+strconv.FormatFloat(e.Capacity, 'g', -1, 64)+`}`))
			}
			if e.Items >= 0 {
				end = append(end, semconv.DBResponseReturnedRows(e.Items))
				if s.Name == "Query" || s.Name == "Scan" {
					end = append(end, semconv.AWSDynamoDBCount(e.Items))
				}
			}
		}
		var errType attribute.KeyValue
		if e.Err != nil {
			errType = errorType(e.Err)
			end = append(end, errType)
			span.RecordError(e.Err)
			span.SetStatus(codes.Error, e.Err.Error())
			if s.Kind == singletable.SpanAttempt && errors.Is(e.Err, singletable.ErrConflict) {
				end = append(end, ConflictKey.Bool(true))
				t.conflicts.Add(ctx, 1, metric.WithAttributes(semconv.DBCollectionName(s.Table), EntityKey.String(s.Entity)))
			}
		}
		span.SetAttributes(end...)
		span.End()
		var m []attribute.KeyValue
		switch s.Kind {
		case singletable.SpanOperation:
			m = []attribute.KeyValue{semconv.DBSystemNameAWSDynamoDB, semconv.DBOperationName(s.Name), semconv.DBCollectionName(s.Table), EntityKey.String(s.Entity)}
			if e.Err != nil {
				m = append(m, errType)
			}
			t.opDur.Record(ctx, elapsed, metric.WithAttributes(m...))
		case singletable.SpanCall:
			m = []attribute.KeyValue{semconv.DBSystemNameAWSDynamoDB, semconv.DBOperationName(s.Name), semconv.DBCollectionName(s.Table)}
			if e.Err != nil {
				m = append(m, errType)
			}
			t.callDur.Record(ctx, elapsed, metric.WithAttributes(m...))
		}
	}
}

// Event adds e to the span current in ctx; see [singletable.Tracer].
func (t *Tracer) Event(ctx context.Context, e singletable.SpanEvent) {
	span := trace.SpanFromContext(ctx)
	var attrs []attribute.KeyValue
	switch e.Name {
	case singletable.EventAmbiguous:
		attrs = append(attrs, HowKey.String(e.How))
		if e.Err != nil {
			attrs = append(attrs, errorType(e.Err), attribute.String("exception.message", e.Err.Error()))
		}
		t.ambiguous.Add(ctx, 1, metric.WithAttributes(HowKey.String(e.How)))
	case singletable.EventResolved:
		attrs = append(attrs, OutcomeKey.String(e.Outcome))
	case singletable.EventUnprocessed:
		attrs = append(attrs, ItemsKey.Int(e.Items), AttemptKey.Int(e.Attempt))
		t.unproc.Add(ctx, int64(e.Items))
	case singletable.EventFanout:
		attrs = append(attrs, ShardsKey.Int(e.Items))
		span.SetAttributes(ShardsKey.Int(e.Items))
	}
	span.AddEvent(e.Name, trace.WithAttributes(attrs...))
}

// errorType is error.type for err: the library's sentinel it matches
// ("conflict", "ambiguous", "not_found", "condition", "already_exists",
// "unprocessed", "invalid_input"...), else the error's Go type.
func errorType(err error) attribute.KeyValue {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return semconv.ErrorTypeKey.String(s.name)
		}
	}
	return semconv.ErrorType(err)
}

var sentinels = []struct {
	err  error
	name string
}{
	{singletable.ErrAmbiguous, "ambiguous"},
	{singletable.ErrConflict, "conflict"},
	{singletable.ErrAlreadyExists, "already_exists"},
	{singletable.ErrNotFound, "not_found"},
	{singletable.ErrCondition, "condition"},
	{singletable.ErrUnprocessed, "unprocessed"},
	{singletable.ErrInvalidInput, "invalid_input"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
}
