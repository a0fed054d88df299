package singletable

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Observation happens at the client boundary. When the table has an observer or
// a logger, NewTable wraps its client in observedClient: every call the table
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
func (e *Entity[T]) observe(ctx context.Context) context.Context {
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
// counts its attempts when the client accepts middleware.
func observed[I, O any](ctx context.Context, t *Table, name string, do func(context.Context, *I, ...func(*dynamodb.Options)) (*O, error), in *I, f []func(*dynamodb.Options)) (*O, error) {
	if p, ok := askCapacity(in).(*I); ok {
		in = p
	}
	if explaining(ctx) != nil { // explain.go: recorded below, not sent: nothing to report
		return do(ctx, in, f...)
	}
	var a *attempts
	if t.traits.APIOptions {
		a = &attempts{}
		f = append(f[:len(f):len(f)], a.option)
	}
	ctx, end := t.startCall(ctx, name, in) // trace.go
	start := time.Now()
	out, err := do(ctx, in, f...)
	op := Operation{Name: name, Table: t.name, Latency: time.Since(start), Capacity: consumed(out), Err: err}
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

var (
	capacityRequestType = reflect.TypeFor[types.ReturnConsumedCapacity]()
	capacityType        = reflect.TypeFor[*types.ConsumedCapacity]()
	capacitiesType      = reflect.TypeFor[[]types.ConsumedCapacity]()
)

// askCapacity returns the input of a call that can report its consumed capacity
// and does not ask for it yet as a copy that asks for it (TOTAL); any other input
// as it is. The caller's input is never modified.
func askCapacity(params any) any {
	pv := reflect.ValueOf(params)
	if pv.Kind() != reflect.Pointer || pv.IsNil() || pv.Elem().Kind() != reflect.Struct {
		return params
	}
	f := pv.Elem().FieldByName("ReturnConsumedCapacity")
	if !f.IsValid() || f.Type() != capacityRequestType || f.String() != "" {
		return params
	}
	cp := reflect.New(pv.Elem().Type())
	cp.Elem().Set(pv.Elem())
	cp.Elem().FieldByName("ReturnConsumedCapacity").SetString(string(types.ReturnConsumedCapacityTotal))
	return cp.Interface()
}

// consumed sums the capacity units an output reports (ConsumedCapacity, one or a
// list); 0 for outputs without.
func consumed(result any) float64 {
	rv := reflect.ValueOf(result)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return 0
	}
	f := rv.Elem().FieldByName("ConsumedCapacity")
	switch {
	case !f.IsValid():
		return 0
	case f.Type() == capacityType:
		return units(f.Interface().(*types.ConsumedCapacity))
	case f.Type() == capacitiesType:
		n := 0.0
		for _, cc := range f.Interface().([]types.ConsumedCapacity) {
			n += units(&cc)
		}
		return n
	}
	return 0
}

func units(cc *types.ConsumedCapacity) float64 {
	if cc == nil || cc.CapacityUnits == nil {
		return 0
	}
	return *cc.CapacityUnits
}

// observedClient is the table's client with every call observed. Each method is
// the one generic line observed. It does not embed the client, so that a method
// added to ItemClient without one here does not compile, rather than go
// unobserved.
type observedClient struct {
	c ItemClient
	t *Table
}

var _ ItemClient = observedClient{}

func (c observedClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return observed(ctx, c.t, "GetItem", c.c.GetItem, in, f)
}

func (c observedClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return observed(ctx, c.t, "PutItem", c.c.PutItem, in, f)
}

func (c observedClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return observed(ctx, c.t, "UpdateItem", c.c.UpdateItem, in, f)
}

func (c observedClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return observed(ctx, c.t, "DeleteItem", c.c.DeleteItem, in, f)
}

func (c observedClient) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return observed(ctx, c.t, "Query", c.c.Query, in, f)
}

func (c observedClient) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return observed(ctx, c.t, "Scan", c.c.Scan, in, f)
}

func (c observedClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return observed(ctx, c.t, "BatchGetItem", c.c.BatchGetItem, in, f)
}

func (c observedClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return observed(ctx, c.t, "BatchWriteItem", c.c.BatchWriteItem, in, f)
}

func (c observedClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return observed(ctx, c.t, "TransactWriteItems", c.c.TransactWriteItems, in, f)
}

func (c observedClient) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return observed(ctx, c.t, "TransactGetItems", c.c.TransactGetItems, in, f)
}

// observedTables is observedClient for table management.
type observedTables struct {
	c TableClient
	t *Table
}

// observeTable returns c observed when the table reports calls.
func (t *Table) observeTable(c TableClient) TableClient {
	if !t.observing() {
		return c
	}
	return observedTables{c: c, t: t}
}

func (c observedTables) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, f ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return observed(ctx, c.t, "CreateTable", c.c.CreateTable, in, f)
}

func (c observedTables) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return observed(ctx, c.t, "DeleteTable", c.c.DeleteTable, in, f)
}

func (c observedTables) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return observed(ctx, c.t, "DescribeTable", c.c.DescribeTable, in, f)
}
