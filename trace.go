package singletable

import (
	"context"
	"iter"

	"github.com/singletable/singletable/internal/wrap"
)

// Tracing marks the boundaries of the library's logical operations for a
// [Tracer] (the module github.com/singletable/singletable/otel implements one
// with OpenTelemetry; this package depends on no tracing library). Each public
// operation starts a span, a Mutate attempt, a shard read of a fan-out and a
// stream handler run start spans below it, and every DynamoDB call the table
// makes starts one below whichever is current: that is done at the client
// boundary (observe.go), so it works with any client and needs no SDK middleware.
// What happens inside a span that is not a span of its own (a lost answer and how
// it was resolved, batch items left unprocessed, a fan-out's shard count) is an
// event. Without a Tracer nothing is allocated.

// Tracer receives the library's spans and events, for [TableOptions.Tracer]. It
// must be safe for concurrent use: a fan-out starts its shards' spans from
// several goroutines.
type Tracer interface {
	// Start is called as a span begins. The context it returns is the one the
	// span's work goes on with, so that spans started within it (and any tracing
	// of the client's own, such as otelaws) nest below it; end is called once, as
	// the span ends.
	Start(ctx context.Context, s Span) (_ context.Context, end func(SpanEnd))
	// Event is called for something that happened within the span current in
	// ctx.
	Event(ctx context.Context, e SpanEvent)
}

// SpanKind says what a [Span] stands for.
type SpanKind uint8

const (
	// SpanOperation is one call of the library's API: Name is the method
	// ("Put", "Mutate", "QueryShards", "Transact", "BatchPut"...).
	SpanOperation SpanKind = iota + 1
	// SpanAttempt is one attempt of a Mutate (a consistent read, the function and
	// a conditional write); Attempt counts from 1. An attempt that lost to another
	// writer ends with an error that matches [ErrConflict].
	SpanAttempt
	// SpanShard is one read of one partition of a fan-out (QueryShards,
	// AllShards); Key names the partition.
	SpanShard
	// SpanCall is one DynamoDB call: Name is the API ("GetItem", "Query",
	// "TransactWriteItems"...), Index the index a Query or Scan reads.
	SpanCall
	// SpanHandler is one run of a stream handler on one record (packages stream
	// and streamlambda); Key is the record's rail key, Name "StreamHandler".
	SpanHandler
)

// String names the kind: "operation", "attempt", "shard", "call", "handler".
func (k SpanKind) String() string {
	switch k {
	case SpanOperation:
		return "operation"
	case SpanAttempt:
		return "attempt"
	case SpanShard:
		return "shard"
	case SpanCall:
		return "call"
	case SpanHandler:
		return "handler"
	}
	return "unknown"
}

// Span describes a span as it starts.
type Span struct {
	Kind    SpanKind
	Name    string // the operation, the DynamoDB API or "StreamHandler"
	Table   string // the table's name
	Entity  string // Go type name of the entity; "" when none or several
	Index   string // SpanCall: the index a Query or Scan reads; "" for the table
	Key     string // SpanShard: the partition; SpanHandler: the rail key
	Attempt int    // SpanAttempt, SpanHandler (its retries): 1, 2...
}

// SpanEnd is what is known of a span as it ends.
type SpanEnd struct {
	Err      error   // nil on success
	Capacity float64 // SpanCall: the capacity units DynamoDB reported
	// Items is, for a SpanCall that reads items, how many it returned (Query and
	// Scan: the response's Count; GetItem: 0 or 1; BatchGetItem: all tables'
	// responses); -1 for calls that return none.
	Items int
}

// Event names, for [SpanEvent.Name].
const (
	// EventAmbiguous: a write's answer was lost (or was a 5xx), so it may have
	// been applied. How says how its outcome is settled: "resend" (the request
	// is idempotent, or carries a transaction token: sent again), "read back" (the
	// item is read consistently and judged).
	EventAmbiguous = "ambiguous"
	// EventResolved: what the read back proved of a write whose answer was lost;
	// Outcome is "landed", "not landed" (it is sent again), "lost" (another
	// write won) or "unproven" (the call returns [ErrAmbiguous]).
	EventResolved = "resolved"
	// EventUnprocessed: a batch call left Items items unprocessed, which are sent
	// again after a backoff (or, past the table's Backoff, returned with
	// [ErrUnprocessed]); Attempt counts such calls in a row: 1, 2...
	EventUnprocessed = "unprocessed"
	// EventFanout: a fan-out reads Items partitions.
	EventFanout = "fanout"
)

// SpanEvent is something that happened within a span.
type SpanEvent struct {
	Name    string // one of the Event constants
	How     string // EventAmbiguous: "resend" or "read back"
	Outcome string // EventResolved
	Items   int    // EventUnprocessed, EventFanout
	Attempt int    // EventUnprocessed
	Err     error  // EventAmbiguous: the error whose answer was lost
}

// StartSpan starts a span with the table's [Tracer] (its Table field is set to
// the table's name) and returns the context to go on with and the function that
// ends it. Without a Tracer it returns ctx and a function that does nothing. It is
// for packages that build on a Table, such as stream and streamlambda, whose
// handler runs it reports.
func (t *Table) StartSpan(ctx context.Context, s Span) (context.Context, func(SpanEnd)) {
	if t == nil || t.opts.Tracer == nil {
		return ctx, noEnd
	}
	s.Table = t.name
	if s.Entity == "" {
		s.Entity, _ = ctx.Value(entityKey{}).(string)
	}
	return t.opts.Tracer.Start(ctx, s)
}

func noEnd(SpanEnd) {}

// event reports e within the span current in ctx.
func (t *Table) event(ctx context.Context, e SpanEvent) {
	if t.opts.Tracer != nil {
		t.opts.Tracer.Event(ctx, e)
	}
}

// begin starts the span of one of the entity's operations and tags ctx with the
// entity for the calls it makes. The caller defers the returned function with
// the address of its error result.
func (e *entity) begin(ctx context.Context, op string) (context.Context, func(*error)) {
	ctx = usable(ctx, op)
	ctx = e.observe(ctx)
	if e.table.opts.Tracer == nil {
		return ctx, noDone
	}
	ctx, end := e.table.StartSpan(ctx, Span{Kind: SpanOperation, Name: op, Entity: e.info.name})
	return ctx, func(err *error) { end(SpanEnd{Err: *err, Items: -1}) }
}

// begin starts the span of one of the table's operations; see Entity.begin.
func (t *Table) begin(ctx context.Context, op string) (context.Context, func(*error)) {
	ctx = usable(ctx, op)
	if t == nil || t.opts.Tracer == nil {
		return ctx, noDone
	}
	ctx, end := t.StartSpan(ctx, Span{Kind: SpanOperation, Name: op})
	return ctx, func(err *error) { end(SpanEnd{Err: *err, Items: -1}) }
}

func noDone(*error) {}

// usable returns ctx, or for a nil one (a caller's mistake) a context that has
// already ended, its cause an error matching ErrInvalidInput that names op:
// every call begins here (begin), and the client boundary sends nothing on an
// ended context (sendItem), so a nil context fails the call with that error
// instead of a panic.
func usable(ctx context.Context, op string) context.Context {
	if ctx != nil {
		return ctx
	}
	ended, cancel := context.WithCancelCause(context.Background())
	cancel(errorf("%s: the context is nil; pass context.Background(), context.TODO() or the request's context: %w", op, ErrInvalidInput))
	return ended
}

// spanned is an iterator whose body runs in the span of operation op, started
// by begin (Entity.begin or Table.begin) when the caller starts iterating and
// ended when the iteration ends, with the error the body yielded, if any: every
// iterator of the library is one operation span, as every call is.
func spanned[V any](ctx context.Context, begin func(context.Context, string) (context.Context, func(*error)), op string, body func(ctx context.Context, yield func(V, error) bool)) iter.Seq2[V, error] {
	return func(yield func(V, error) bool) {
		ctx, done := begin(ctx, op)
		var err error
		defer func() { done(&err) }()
		body(ctx, func(v V, e error) bool {
			if e != nil {
				err = e
			}
			return yield(v, e)
		})
	}
}

// startCall starts the span of one DynamoDB call (observed, observe.go).
func (t *Table) startCall(ctx context.Context, name string, in any) (context.Context, func(out any, err error, capacity float64)) {
	if t.opts.Tracer == nil {
		return ctx, noCallEnd
	}
	ctx, end := t.StartSpan(ctx, Span{Kind: SpanCall, Name: name, Index: wrap.Index(in)})
	return ctx, func(out any, err error, capacity float64) {
		end(SpanEnd{Err: err, Capacity: capacity, Items: wrap.Returned(out)})
	}
}

func noCallEnd(any, error, float64) {}

// String names the verdict for EventResolved (pipeline.go).
func (v verdict) String() string {
	return [...]string{unproven: "unproven", landed: "landed", notLanded: "not landed", lost: "lost", abstain: "abstain"}[v]
}
