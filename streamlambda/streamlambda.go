// Package streamlambda runs a singletable stream handler in AWS Lambda: it takes
// the DynamoDB stream events Lambda delivers (github.com/aws/aws-lambda-go's
// events.DynamoDBEvent), decodes each record's images into the entity types
// registered on a [singletable.Table] by the rules [singletable.ConsumeStream]
// uses ([singletable.Table.DecodeRecord]), runs the handler on per-key rails (a
// [singletable.Railroad]: one key's records one at a time, in order; different
// keys concurrently), and answers with the batch item failures Lambda needs to
// retry from the first failed record of each key.
//
// It is its own package so that the core library does not import the Lambda
// library.
//
// # Lambda's checkpointing, and where duplicates come from
//
// Turn on ReportBatchItemFailures (FunctionResponseTypes) on the event source
// mapping. Lambda reads a batch from one shard; with the response of
// [Handler.Handle] it checkpoints the shard before the failed record with the
// lowest sequence number among batchItemFailures, and invokes the function
// again with the records from that one on. An empty list means the whole batch
// succeeded. So:
//
//   - On a key whose record fails, the records after it in the batch are not
//     run (they would be handled out of order); the failed record and those
//     after it come again.
//   - Records of other keys are run whatever happens to the failed key. Those
//     before the lowest failed record are checkpointed; those after it that
//     succeeded come again in the retried batch: duplicates, so make the
//     handler idempotent (a version check, a conditional write).
//   - Handle reports the first failed record of every key that failed (Lambda
//     uses the lowest); a record that cannot be decoded counts as a failure of
//     its key. It returns an error only for a batch it cannot read at all,
//     which makes Lambda retry the whole batch.
//   - Retries go on until the record expires from the stream (24 hours) or the
//     mapping's MaximumRetryAttempts / MaximumRecordAgeInSeconds; with
//     BisectBatchOnFunctionError Lambda may split the batch, which keeps each
//     key's order since a batch comes from one shard.
//
// Lambda runs at most one invocation per shard at a time (ParallelizationFactor
// 1), and a child shard only after its parent is done, so keys stay in order
// across invocations as they do with ConsumeStream. With a ParallelizationFactor
// above 1 Lambda keeps order per partition key only: use a [RecordKey] no finer
// than the partition key.
package streamlambda

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// Option configures [New].
type Option interface {
	apply(*options) error
}

type optionFunc func(*options) error

func (f optionFunc) apply(o *options) error { return f(o) }

type options struct {
	unknown singletable.UnknownTypes
	key     func(singletable.StreamRecord) string
	rails   singletable.RailroadOptions
	retry   singletable.Backoff
}

// OnUnknown says what to do with a record whose images name no registered
// entity, as [singletable.OnUnknown] does for ConsumeStream: UnknownFail (the
// default) reports it as a failure of its key; UnknownSkip passes over it (it
// succeeds); UnknownCollect hands it over with its images as RawItems.
func OnUnknown(m singletable.UnknownTypes) Option {
	return optionFunc(func(o *options) error {
		if m > singletable.UnknownCollect {
			return fmt.Errorf("OnUnknown(%d): %w", m, singletable.ErrInvalidInput)
		}
		o.unknown = m
		return nil
	})
}

// RecordKey names the rail a record runs on; default the item's primary key,
// as for ConsumeStream.
func RecordKey(key func(singletable.StreamRecord) string) Option {
	return optionFunc(func(o *options) error {
		if key == nil {
			return fmt.Errorf("RecordKey(nil): %w", singletable.ErrInvalidInput)
		}
		o.key = key
		return nil
	})
}

// Rails configures the railroad: how many handlers run at once
// (Concurrency, default 64).
func Rails(r singletable.RailroadOptions) Option {
	return optionFunc(func(o *options) error {
		o.rails = r
		return nil
	})
}

// Retry retries a failed record within the invocation, as Backoff says,
// before it is reported; default no retry (MaxAttempts 1): Lambda's own retry
// of the batch is the retry.
func Retry(b singletable.Backoff) Option {
	return optionFunc(func(o *options) error {
		o.retry = b
		return nil
	})
}

// Handler is a Lambda handler for DynamoDB stream events; pass its
// [Handler.Handle] to lambda.Start. It is safe for concurrent use (Lambda
// calls it once at a time per execution environment).
type Handler struct {
	t      *singletable.Table
	handle func(context.Context, singletable.StreamRecord) error
	o      options
}

// New returns a Handler that decodes records with the entities registered on
// t (register them first) and calls handle for each. It sends nothing.
func New(t *singletable.Table, handle func(context.Context, singletable.StreamRecord) error, opts ...Option) (*Handler, error) {
	if t == nil || handle == nil {
		return nil, fmt.Errorf("singletable: streamlambda.New: nil table or handler: %w", singletable.ErrInvalidInput)
	}
	o := options{retry: singletable.Backoff{MaxAttempts: 1}}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.apply(&o); err != nil {
			return nil, fmt.Errorf("singletable: streamlambda.New: %w", err)
		}
	}
	if o.key == nil {
		pk, sk := t.Options().PartitionKey, t.Options().SortKey
		o.key = func(r singletable.StreamRecord) string { return r.Key[pk] + "\x00" + r.Key[sk] }
	}
	return &Handler{t: t, handle: handle, o: o}, nil
}

// Handle handles the records of one event: see the package doc for what it
// runs, in what order, and what it reports. It sends nothing itself (the
// handler may). It returns when every record has run or been passed over, or
// when ctx ends, in which case the records that did not finish are reported
// failed. The handler's context ends with ctx.
func (h *Handler) Handle(ctx context.Context, e events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	entries := h.decode(e)
	rr := singletable.NewRailroad[string](h.o.rails)
	failed := &failedKeys{keys: map[string]bool{}}
	for i := range entries {
		en := &entries[i]
		if en.err != nil {
			failed.add(en.key)
			continue
		}
		if !en.deliver || failed.has(en.key) {
			continue
		}
		errc, err := rr.Submit(ctx, en.key, h.task(en.rec, en.key, failed))
		if err != nil {
			en.err = err // ctx ended while the railroad was full
			failed.add(en.key)
			continue
		}
		en.errc = errc
	}
	firstFailed := firstFailures(ctx, entries)
	_ = rr.Close(ctx) // every task has returned; or ctx has ended, and Close cancels what is left and waits
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for _, seq := range firstFailed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	}
	return resp, nil
}

// entry is one record of an event, as Handle runs it.
type entry struct {
	rec     singletable.StreamRecord
	key     string
	deliver bool
	err     error // decoding
	errc    <-chan error
}

// decode converts and decodes the records of e, each with its key.
func (h *Handler) decode(e events.DynamoDBEvent) []entry {
	entries := make([]entry, len(e.Records))
	for i, er := range e.Records {
		r, err := Record(er)
		if err == nil {
			r, entries[i].deliver, err = h.t.DecodeRecord(r, singletable.OnUnknown(h.o.unknown))
		}
		entries[i].rec, entries[i].err = r, err
		entries[i].key = h.o.key(r)
	}
	return entries
}

// failedKeys are the keys with a failed record, whose later records do not run. It is safe for
// concurrent use.
type failedKeys struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (f *failedKeys) add(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[key] = true
}

func (f *failedKeys) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys[key]
}

// task returns the railroad task that runs the handler on r, a record of key, retrying as configured;
// it does not run when a record of the key has failed, and a failure marks the key failed.
func (h *Handler) task(r singletable.StreamRecord, key string, failed *failedKeys) func(context.Context) error {
	retry := h.o.retry
	return func(ctx context.Context) error {
		if failed.has(key) {
			return errSkipped
		}
		var err error
		for attempt := 1; ; attempt++ {
			if err = call(ctx, h.handle, r); err == nil || ctx.Err() != nil || attempt >= max(retry.MaxAttempts, 1) || retry.Wait(ctx, attempt) != nil {
				break
			}
		}
		if err != nil {
			failed.add(key)
		}
		return err
	}
}

// firstFailures waits for the tasks of entries, or for ctx to end, and returns the sequence number of
// the first failed record of each key with one, in order.
func firstFailures(ctx context.Context, entries []entry) []string {
	var firstFailed []string
	reported := map[string]bool{}
	for i := range entries {
		en := &entries[i]
		err := en.err
		if err == nil && en.errc != nil {
			select {
			case err = <-en.errc:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		if err == nil && en.deliver && en.errc == nil {
			err = errSkipped // a later record of a key that had failed
		}
		if err != nil && !reported[en.key] {
			reported[en.key] = true
			firstFailed = append(firstFailed, en.rec.SequenceNumber)
		}
	}
	return firstFailed
}

// errSkipped is the error of a record not run because an earlier record of
// its key failed.
var errSkipped = fmt.Errorf("singletable: streamlambda: an earlier record of the key failed")

// call runs handle, turning a panic into an error.
func call(ctx context.Context, handle func(context.Context, singletable.StreamRecord) error, r singletable.StreamRecord) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("singletable: streamlambda: handler panicked: %v", v)
		}
	}()
	return handle(ctx, r)
}

// Record converts a Lambda stream record into a StreamRecord with its event,
// key, images, sequence number, time and TTL flag set, and its Type, Old and
// New not yet decoded (see [singletable.Table.DecodeRecord]). ShardID is empty:
// Lambda's records do not name their shard.
func Record(er events.DynamoDBEventRecord) (singletable.StreamRecord, error) {
	d := er.Change
	r := singletable.StreamRecord{
		Event:           singletable.StreamEvent(er.EventName),
		Key:             map[string]string{},
		SequenceNumber:  d.SequenceNumber,
		ApproximateTime: d.ApproximateCreationDateTime.Time,
	}
	if d.ApproximateCreationDateTime.IsZero() {
		r.ApproximateTime = time.Time{}
	}
	var err error
	if r.OldImage, err = Image(d.OldImage); err != nil {
		return r, fmt.Errorf("singletable: streamlambda: record %s: old image: %w", d.SequenceNumber, err)
	}
	if r.NewImage, err = Image(d.NewImage); err != nil {
		return r, fmt.Errorf("singletable: streamlambda: record %s: new image: %w", d.SequenceNumber, err)
	}
	for name, av := range d.Keys {
		v, err := AttributeValue(av)
		if err != nil {
			return r, fmt.Errorf("singletable: streamlambda: record %s: key %s: %w", d.SequenceNumber, name, err)
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			r.Key[name] = v.Value
		case *types.AttributeValueMemberN:
			r.Key[name] = v.Value
		case *types.AttributeValueMemberB:
			r.Key[name] = string(v.Value)
		}
	}
	if id := er.UserIdentity; id != nil {
		r.Expired = id.Type == "Service" && id.PrincipalID == "dynamodb.amazonaws.com"
	}
	return r, nil
}

// Image converts a Lambda image into the SDK's attribute values; nil or empty
// gives nil, as ConsumeStream gives for an absent image.
func Image(m map[string]events.DynamoDBAttributeValue) (singletable.RawItem, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(singletable.RawItem, len(m))
	for k, v := range m {
		av, err := AttributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// AttributeValue converts one Lambda attribute value into the same value of
// the SDK's DynamoDB types: S, N, B, SS, NS, BS, M, L, NULL and BOOL, lists
// and maps recursively. Slices are copied. The zero events.DynamoDBAttributeValue
// (which the Lambda library reports as an empty Binary) gives an empty B.
func AttributeValue(av events.DynamoDBAttributeValue) (v types.AttributeValue, err error) {
	defer func() {
		if p := recover(); p != nil { // the Lambda library's accessors panic on a mismatch
			v, err = nil, fmt.Errorf("attribute value of type %v: %v", av.DataType(), p)
		}
	}()
	switch av.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: av.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: av.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: binaryOf(av)}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: av.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: slices.Clone(av.StringSet())}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: slices.Clone(av.NumberSet())}, nil
	case events.DataTypeBinarySet:
		bs := av.BinarySet()
		out := make([][]byte, len(bs))
		for i, b := range bs {
			out[i] = slices.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: out}, nil
	case events.DataTypeList:
		l := av.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			if out[i], err = AttributeValue(e); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m := av.Map()
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			if out[k], err = AttributeValue(e); err != nil {
				return nil, fmt.Errorf(".%s: %w", k, err)
			}
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return nil, fmt.Errorf("unknown attribute value type %v: %w", av.DataType(), singletable.ErrInvalidInput)
}

// binaryOf returns a copy of a Binary value; the zero attribute value, whose
// accessor panics, gives an empty slice.
func binaryOf(av events.DynamoDBAttributeValue) (b []byte) {
	defer func() {
		if recover() != nil {
			b = []byte{}
		}
	}()
	return slices.Clone(av.Binary())
}
