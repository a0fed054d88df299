package singletable

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Operation describes one DynamoDB call the library made, for
// [TableOptions.OnOperation] and [TableOptions.Logger].
type Operation struct {
	Name     string        // the DynamoDB API: "GetItem", "Query", "TransactWriteItems"...
	Table    string        // table name
	Entity   string        // Go type name of the entity the call was for; "" for table calls
	Latency  time.Duration // of the whole call, the SDK's retries included
	Attempts int           // SDK attempts (1 + retries), 0 when unknown
	Capacity float64       // capacity units consumed, as DynamoDB reported them
	Err      error         // the call's error, nil on success
}

// observed wraps a table's client to report every call. It asks DynamoDB for the
// consumed capacity of calls that can return it.
type observed struct {
	Client
	t *Table
}

type entityKey struct{}

// observe tags ctx with the entity a call is for, when the table reports calls.
func (e *Entity[T]) observe(ctx context.Context) context.Context {
	if e.table.observing() {
		return context.WithValue(ctx, entityKey{}, e.info.name)
	}
	return ctx
}

func (t *Table) observing() bool { return t.opts.OnOperation != nil || t.opts.Logger != nil }

func (o observed) report(ctx context.Context, name string, start time.Time, md middleware.Metadata, capacity float64, err error) {
	op := Operation{Name: name, Table: o.t.name, Latency: time.Since(start), Capacity: capacity, Err: err}
	op.Entity, _ = ctx.Value(entityKey{}).(string)
	if res, ok := retry.GetAttemptResults(md); ok {
		op.Attempts = len(res.Results)
	}
	if f := o.t.opts.OnOperation; f != nil {
		f(op)
	}
	if l := o.t.opts.Logger; l != nil {
		level := slog.LevelDebug
		attrs := []slog.Attr{slog.String("op", op.Name), slog.String("table", op.Table), slog.Duration("latency", op.Latency), slog.Float64("capacity", op.Capacity)}
		if op.Entity != "" {
			attrs = append(attrs, slog.String("entity", op.Entity))
		}
		if op.Attempts > 1 {
			attrs = append(attrs, slog.Int("attempts", op.Attempts))
		}
		if err != nil {
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		l.LogAttrs(ctx, level, "singletable: dynamodb call", attrs...)
	}
}

func units(cc *types.ConsumedCapacity) float64 {
	if cc == nil || cc.CapacityUnits == nil {
		return 0
	}
	return *cc.CapacityUnits
}

func sumUnits(ccs []types.ConsumedCapacity) float64 {
	n := 0.0
	for i := range ccs {
		n += units(&ccs[i])
	}
	return n
}

// call runs one client call and reports it.
func call[O any](ctx context.Context, o observed, name string, do func() (*O, error), meta func(*O) (middleware.Metadata, float64)) (*O, error) {
	start := time.Now()
	out, err := do()
	md, cu := middleware.Metadata{}, 0.0
	if out != nil {
		md, cu = meta(out)
	}
	o.report(ctx, name, start, md, cu, err)
	return out, err
}

// Each method asks for the consumed capacity on a copy of the input, so that the
// caller's input is never modified.

func (o observed) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "GetItem", func() (*dynamodb.GetItemOutput, error) { return o.Client.GetItem(ctx, &cp, f...) },
		func(out *dynamodb.GetItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "PutItem", func() (*dynamodb.PutItemOutput, error) { return o.Client.PutItem(ctx, &cp, f...) },
		func(out *dynamodb.PutItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "UpdateItem", func() (*dynamodb.UpdateItemOutput, error) { return o.Client.UpdateItem(ctx, &cp, f...) },
		func(out *dynamodb.UpdateItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "DeleteItem", func() (*dynamodb.DeleteItemOutput, error) { return o.Client.DeleteItem(ctx, &cp, f...) },
		func(out *dynamodb.DeleteItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "Query", func() (*dynamodb.QueryOutput, error) { return o.Client.Query(ctx, &cp, f...) },
		func(out *dynamodb.QueryOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "Scan", func() (*dynamodb.ScanOutput, error) { return o.Client.Scan(ctx, &cp, f...) },
		func(out *dynamodb.ScanOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, units(out.ConsumedCapacity)
		})
}

func (o observed) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "BatchGetItem", func() (*dynamodb.BatchGetItemOutput, error) { return o.Client.BatchGetItem(ctx, &cp, f...) },
		func(out *dynamodb.BatchGetItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, sumUnits(out.ConsumedCapacity)
		})
}

func (o observed) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "BatchWriteItem", func() (*dynamodb.BatchWriteItemOutput, error) { return o.Client.BatchWriteItem(ctx, &cp, f...) },
		func(out *dynamodb.BatchWriteItemOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, sumUnits(out.ConsumedCapacity)
		})
}

func (o observed) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	cp := *in
	if cp.ReturnConsumedCapacity == "" {
		cp.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return call(ctx, o, "TransactWriteItems", func() (*dynamodb.TransactWriteItemsOutput, error) { return o.Client.TransactWriteItems(ctx, &cp, f...) },
		func(out *dynamodb.TransactWriteItemsOutput) (middleware.Metadata, float64) {
			return out.ResultMetadata, sumUnits(out.ConsumedCapacity)
		})
}
