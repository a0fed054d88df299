package singletable

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// Observation is one SDK middleware. When the table has an observer or a logger,
// every call it makes carries one more optFn, which adds the middleware to that
// call's stack (at the front of the Initialize step, so it sees the whole call,
// retries included): whatever the call, table management and calls added later
// included, it is reported once, after it ends.

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
	if e.table.observing() {
		return context.WithValue(ctx, entityKey{}, e.info.name)
	}
	return ctx
}

func (t *Table) observing() bool { return t.opts.Observer != nil || t.opts.Logger != nil }

// observeCall is the optFn that adds the observer to one call.
func (t *Table) observeCall(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, observer{t}.add)
}

// observer is the middleware that reports each call.
type observer struct{ t *Table }

func (ob observer) add(stack *middleware.Stack) error {
	return stack.Initialize.Add(ob, middleware.Before)
}

// ID names the middleware in the stack.
func (observer) ID() string { return "singletable.Observer" }

// HandleInitialize asks for the consumed capacity (on a copy of the input), runs
// the call and reports it.
func (ob observer) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	start := time.Now()
	in.Parameters = askCapacity(in.Parameters)
	out, md, err := next.HandleInitialize(ctx, in)
	op := Operation{Name: middleware.GetOperationName(ctx), Table: ob.t.name, Latency: time.Since(start), Capacity: consumed(out.Result)}
	op.Entity, _ = ctx.Value(entityKey{}).(string)
	if res, ok := retry.GetAttemptResults(md); ok {
		op.Attempts = len(res.Results)
	}
	if err != nil {
		// As the caller will see it: the SDK wraps the stack's error so.
		op.Err = &smithy.OperationError{ServiceID: middleware.GetServiceID(ctx), OperationName: op.Name, Err: err}
	}
	ob.t.report(ctx, op)
	return out, md, err
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

// withOptFns is a Client that adds the table's optFns to every call before the
// caller's. Each method is the one generic line withOpts. It does not embed the
// client, so that a method added to Client without one here does not compile,
// rather than go unobserved.
type withOptFns struct {
	c      Client
	optFns []func(*dynamodb.Options)
}

var _ Client = withOptFns{}

// withOpts calls do with the table's optFns, then the call's own.
func withOpts[I, O any](ctx context.Context, do func(context.Context, *I, ...func(*dynamodb.Options)) (*O, error), in *I, table, own []func(*dynamodb.Options)) (*O, error) {
	return do(ctx, in, append(table[:len(table):len(table)], own...)...)
}

func (c withOptFns) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return withOpts(ctx, c.c.GetItem, in, c.optFns, f)
}

func (c withOptFns) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return withOpts(ctx, c.c.PutItem, in, c.optFns, f)
}

func (c withOptFns) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return withOpts(ctx, c.c.UpdateItem, in, c.optFns, f)
}

func (c withOptFns) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return withOpts(ctx, c.c.DeleteItem, in, c.optFns, f)
}

func (c withOptFns) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return withOpts(ctx, c.c.Query, in, c.optFns, f)
}

func (c withOptFns) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return withOpts(ctx, c.c.Scan, in, c.optFns, f)
}

func (c withOptFns) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return withOpts(ctx, c.c.BatchGetItem, in, c.optFns, f)
}

func (c withOptFns) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return withOpts(ctx, c.c.BatchWriteItem, in, c.optFns, f)
}

func (c withOptFns) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return withOpts(ctx, c.c.TransactWriteItems, in, c.optFns, f)
}

func (c withOptFns) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return withOpts(ctx, c.c.TransactGetItems, in, c.optFns, f)
}

func (c withOptFns) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, f ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return withOpts(ctx, c.c.CreateTable, in, c.optFns, f)
}

func (c withOptFns) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return withOpts(ctx, c.c.DeleteTable, in, c.optFns, f)
}

func (c withOptFns) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return withOpts(ctx, c.c.DescribeTable, in, c.optFns, f)
}
