package singletable

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/singletable/singletable/internal/wrap"
)

// Observation happens at the client boundary. When the table has an observer or
// a logger, NewTable wraps its client in t.observed (internal/wrap): every call the table
// makes, table management included, is timed there and reported once, after it
// ends, with its output's consumed capacity (the input asks for it, on a copy).
// That works whatever the client (DAX's, a wrapper). Only the count of SDK
// attempts needs the SDK: to a client known to accept middleware (client.go) the
// call carries one more optFn, whose middleware (at the front of the Initialize
// step, so it sees the retries) counts them.

// Operation describes one DynamoDB call the library made, for
// [TableOptions.Observer] and [TableOptions.Logger].
type Operation struct {
	Name     string        // the DynamoDB API: "GetItem", "Query", "TransactWriteItems", "CreateTable"...
	Table    string        // table name
	Entity   string        // Go type name of the entity the call was for; "" for table calls
	Latency  time.Duration // of the whole call, the SDK's retries included
	Attempts int           // SDK attempts (1 + retries), 0 when unknown
	Capacity float64       // capacity units consumed, as DynamoDB reported them
	Err      error         // the call's error, as the SDK returns it; nil on success
}

type entityKey struct{}

// observe tags ctx with the entity a call is for, when the table reports calls.
func (e *entity) observe(ctx context.Context) context.Context {
	if e.table.observing() || explaining(ctx) != nil { // explain.go names it too
		return context.WithValue(ctx, entityKey{}, e.info.name)
	}
	return ctx
}

func (t *Table) observing() bool {
	return t.opts.Observer != nil || t.opts.Logger != nil || t.opts.Tracer != nil
}

// attempts is the middleware that counts one call's SDK attempts.
type attempts struct{ n int }

func (a *attempts) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, a.add)
}

func (a *attempts) add(stack *middleware.Stack) error {
	return stack.Initialize.Add(a, middleware.Before)
}

// ID names the middleware in the stack.
func (*attempts) ID() string { return "singletable.Attempts" }

// HandleInitialize runs the call and counts its attempts.
func (a *attempts) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleInitialize(ctx, in)
	if res, ok := retry.GetAttemptResults(md); ok {
		a.n = len(res.Results)
	}
	return out, md, err
}

// observed makes one call of the table's and reports it: the input asks for
// the consumed capacity (a copy; the caller's is not modified), and the call
// counts its attempts when the client accepts middleware. It is the Around of
// the table's observed clients (internal/wrap): items, tables and TTL.
func (t *Table) observed(ctx context.Context, name string, in any, f []func(*dynamodb.Options), send wrap.Send) (any, error) {
	in = wrap.AskCapacity(in)
	if explaining(ctx) != nil { // explain.go: recorded below, not sent: nothing to report
		return send(ctx, in, f)
	}
	var a *attempts
	if t.traits.APIOptions {
		a = &attempts{}
		f = append(f[:len(f):len(f)], a.option)
	}
	ctx, end := t.startCall(ctx, name, in) // trace.go
	start := time.Now()
	out, err := send(ctx, in, f)
	op := Operation{Name: name, Table: t.name, Latency: time.Since(start), Capacity: wrap.Consumed(out), Err: err}
	end(out, err, op.Capacity)
	op.Entity, _ = ctx.Value(entityKey{}).(string)
	if a != nil {
		op.Attempts = a.n
	}
	t.report(ctx, op)
	return out, err
}

// report hands op to the observer and the logger.
func (t *Table) report(ctx context.Context, op Operation) {
	if f := t.opts.Observer; f != nil {
		f(op)
	}
	l := t.opts.Logger
	if l == nil {
		return
	}
	level := slog.LevelDebug
	attrs := []slog.Attr{slog.String("op", op.Name), slog.String("table", op.Table), slog.Duration("latency", op.Latency), slog.Float64("capacity", op.Capacity)}
	if op.Entity != "" {
		attrs = append(attrs, slog.String("entity", op.Entity))
	}
	if op.Attempts > 1 {
		attrs = append(attrs, slog.Int("attempts", op.Attempts))
	}
	if op.Err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", op.Err.Error()))
	}
	l.LogAttrs(ctx, level, "singletable: dynamodb call", attrs...)
}

// observeTable returns c observed when the table reports calls.
func (t *Table) observeTable(c TableClient) TableClient {
	if !t.observing() {
		return c
	}
	return wrap.Tables{C: c, Around: t.observed}
}
