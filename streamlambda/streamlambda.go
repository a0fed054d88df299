// Package streamlambda runs a singletable stream handler in AWS Lambda: it takes
// the DynamoDB stream events Lambda delivers (github.com/aws/aws-lambda-go's
// events.DynamoDBEvent), decodes each record's images into the entity types
// registered on a [singletable.Table] by the rules stream.Consume (package stream)
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
//     its key. A record whose key attributes cannot be read (none, or one that
//     is not a string, number or binary), or whose [RecordKey] panics, is
//     reported, and no record after it in the batch runs, since none can be
//     shown to be of another item. When the invocation's context ends (its
//     deadline), the records that did not finish are reported too; a record
//     whose handler returned nil never is. Every problem with a record is
//     reported as that record's failure: Handle returns an error only when
//     called on a Handler not made by [New] (which would make Lambda retry the
//     whole batch).
//   - Retries go on until the record expires from the stream (24 hours) or the
//     mapping's MaximumRetryAttempts / MaximumRecordAgeInSeconds; with
//     BisectBatchOnFunctionError Lambda may split the batch, which keeps each
//     key's order since a batch comes from one shard.
//
// Lambda runs at most one invocation per shard at a time (ParallelizationFactor
// 1), and a child shard only after its parent is done, so keys stay in order
// across invocations as they do with stream.Consume. With a ParallelizationFactor
// above 1 Lambda keeps order per partition key only: use a [RecordKey] no finer
// than the partition key.
package streamlambda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/streamkey"
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
// entity, as [singletable.OnUnknown] does for stream.Consume: UnknownFail (the
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

// RecordKey names the rail a record runs on; default the item's primary key
// (every key attribute, by name and value), as for stream.Consume: the records
// of two different items never share a rail, whatever their key values hold.
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

// Retry retries a failed record within the invocation, on its rail, as b
// says, before it is reported: zero fields take [singletable.Backoff]'s
// defaults (10 attempts in all, the first included), and MaxElapsed, when set,
// also ends the retries once that long has passed since the first attempt (by
// b.Now). A negative field is refused. Without Retry a failed record is not
// retried within the invocation (MaxAttempts 1): Lambda's own retry of the
// batch is the retry. Retries end when the invocation's context ends.
func Retry(b singletable.Backoff) Option {
	return optionFunc(func(o *options) error {
		for _, f := range []struct {
			name string
			bad  bool
		}{
			{"Base", b.Base < 0}, {"Cap", b.Cap < 0}, {"MaxAttempts", b.MaxAttempts < 0}, {"MaxElapsed", b.MaxElapsed < 0},
		} {
			if f.bad {
				return fmt.Errorf("Retry: negative %s: %w", f.name, singletable.ErrInvalidInput)
			}
		}
		if b.MaxAttempts == 0 {
			b.MaxAttempts = defaultAttempts
		}
		if b.Now == nil {
			b.Now = time.Now
		}
		o.retry = b
		return nil
	})
}

// defaultAttempts is [singletable.Backoff]'s default MaxAttempts.
const defaultAttempts = 10

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
	o := options{retry: singletable.Backoff{MaxAttempts: 1, Now: time.Now}}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.apply(&o); err != nil {
			return nil, fmt.Errorf("singletable: streamlambda.New: %w", err)
		}
	}
	if o.key == nil {
		o.key = func(r singletable.StreamRecord) string { return streamkey.Of(r.Key) } // injective: two items never share a rail
	}
	return &Handler{t: t, handle: handle, o: o}, nil
}

// Handle handles the records of one event: see the package doc for what it
// runs, in what order, and what it reports. It sends nothing itself (the
// handler may). It returns when every record has run or been passed over, or,
// once ctx ends, when the handlers still running have returned (their context
// ends with ctx; a handler that ignores it holds Handle up). It reports the
// records that failed or did not finish, and only those: a record whose
// handler returned nil is never reported, even when ctx ended after it did.
// A Handler not made by [New] gives an error wrapping
// [singletable.ErrInvalidInput].
func (h *Handler) Handle(ctx context.Context, e events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	if h == nil || h.t == nil || h.handle == nil || h.o.key == nil {
		return events.DynamoDBEventResponse{}, fmt.Errorf("singletable: streamlambda: Handle on a Handler not made by New: %w", singletable.ErrInvalidInput)
	}
	entries := h.decode(e)
	rr := singletable.NewRailroad[string](h.o.rails)
	failed := &failedKeys{keys: map[string]bool{}}
	for i := range entries {
		en := &entries[i]
		if !en.keyed {
			// The record's key is unknown, so no later record can be shown to
			// be of another item: none of them runs before it.
			for j := i + 1; j < len(entries); j++ {
				entries[j].err = errBehindUnkeyed
			}
			break
		}
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
	// Close waits until every task has returned; or, once ctx ends, drops the
	// tasks not started and cancels those running, then waits for them. Either
	// way every submitted task has put its result in its channel when Close
	// returns, so what a record reports is what its task returned, never a
	// race between its result and the end of ctx.
	_ = rr.Close(ctx)
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for _, seq := range firstFailures(entries) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	}
	return resp, nil
}

// entry is one record of an event, as Handle runs it.
type entry struct {
	rec     singletable.StreamRecord
	key     string
	keyed   bool // key is known: the record's key attributes could be read
	deliver bool
	err     error // decoding, or not submitted
	errc    <-chan error
}

// decode converts and decodes the records of e, each with its key.
func (h *Handler) decode(e events.DynamoDBEvent) []entry {
	entries := make([]entry, len(e.Records))
	for i, er := range e.Records {
		en := &entries[i]
		r, keyed, err := record(er)
		if err == nil {
			r, en.deliver, err = h.t.DecodeRecord(r, singletable.OnUnknown(h.o.unknown))
		}
		en.rec, en.err, en.keyed = r, err, keyed
		if keyed {
			if en.key, err = keyOf(h.o.key, r); err != nil {
				en.err, en.keyed = err, false
			}
		}
	}
	return entries
}

// keyOf runs key (the RecordKey) on r, turning a panic into an error: the
// record's rail is then unknown.
func keyOf(key func(singletable.StreamRecord) string, r singletable.StreamRecord) (k string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("singletable: streamlambda: record %s: RecordKey panicked: %v", r.SequenceNumber, v)
		}
	}()
	return key(r), nil
}

// failedKeys are the keys with a failed record, whose later records do not run. It is safe for
// concurrent use.
type failedKeys struct {
	mu   sync.Mutex // protects keys
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
		start := retry.Now()
		var err error
		for attempt := 1; ; attempt++ {
			if err = h.call(ctx, r, key, attempt); err == nil || ctx.Err() != nil || attempt >= retry.MaxAttempts ||
				retry.MaxElapsed > 0 && retry.Now().Sub(start) >= retry.MaxElapsed || retry.Wait(ctx, attempt) != nil {
				break
			}
		}
		if err != nil {
			failed.add(key)
		}
		return err
	}
}

// firstFailures returns the sequence number of the first record of each key
// that failed or did not finish, in batch order; a record of unknown key counts
// as a key of its own. It is called once every task has put its result in its
// channel, and does not wait.
func firstFailures(entries []entry) []string {
	var firstFailed []string
	reported := map[string]bool{}
	for i := range entries {
		en := &entries[i]
		err := en.err
		if err == nil && en.errc != nil {
			select {
			case err = <-en.errc:
			default: // cannot happen: the railroad has closed, so every task has its result in
				err = errUnfinished
			}
		}
		if err == nil && en.deliver && en.errc == nil {
			err = errSkipped // a later record of a key that had failed
		}
		if err != nil && (!en.keyed || !reported[en.key]) {
			if en.keyed {
				reported[en.key] = true
			}
			firstFailed = append(firstFailed, en.rec.SequenceNumber)
		}
	}
	return firstFailed
}

var (
	// errSkipped is the error of a record not run because an earlier record of
	// its key failed.
	errSkipped = errors.New("singletable: streamlambda: an earlier record of the key failed")
	// errBehindUnkeyed is the error of a record not run because an earlier
	// record's key could not be read.
	errBehindUnkeyed = errors.New("singletable: streamlambda: an earlier record has no readable key")
	// errUnfinished is the error of a record whose task has no result.
	errUnfinished = errors.New("singletable: streamlambda: the record's handler did not finish")
)

// call runs the handler on r once, in a span of the table's Tracer (the
// attempt-th on its rail key), turning a panic into an error.
func (h *Handler) call(ctx context.Context, r singletable.StreamRecord, key string, attempt int) (err error) {
	ctx, end := h.t.StartSpan(ctx, singletable.Span{Kind: singletable.SpanHandler, Name: "StreamHandler", Key: key, Attempt: attempt})
	defer func() { end(singletable.SpanEnd{Err: err, Items: -1}) }()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("singletable: streamlambda: handler panicked: %v", v)
		}
	}()
	return h.handle(ctx, r)
}

// Record converts a Lambda stream record into a StreamRecord with its event,
// key, images, sequence number, time and TTL flag set, and its Type, Old and
// New not yet decoded (see [singletable.Table.DecodeRecord]). ShardID is empty:
// Lambda's records do not name their shard. A record without key attributes,
// or with one that is not a string, number or binary, is refused with an error
// naming the record and the attribute.
func Record(er events.DynamoDBEventRecord) (singletable.StreamRecord, error) {
	r, _, err := record(er)
	return r, err
}

// record is [Record]; keyed says whether r.Key holds the record's key, which it
// does even when an image could not be converted.
func record(er events.DynamoDBEventRecord) (r singletable.StreamRecord, keyed bool, err error) {
	d := er.Change
	r = singletable.StreamRecord{
		Event:           singletable.StreamEvent(er.EventName),
		Key:             map[string]string{},
		SequenceNumber:  d.SequenceNumber,
		ApproximateTime: d.ApproximateCreationDateTime.Time,
	}
	if d.ApproximateCreationDateTime.IsZero() {
		r.ApproximateTime = time.Time{}
	}
	if len(d.Keys) == 0 {
		return r, false, fmt.Errorf("singletable: streamlambda: record %s: no key attributes: %w", d.SequenceNumber, singletable.ErrInvalidInput)
	}
	for name, av := range d.Keys {
		v, err := AttributeValue(av)
		if err != nil {
			return r, false, fmt.Errorf("singletable: streamlambda: record %s: key %s: %w", d.SequenceNumber, name, err)
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			r.Key[name] = v.Value
		case *types.AttributeValueMemberN:
			r.Key[name] = v.Value
		case *types.AttributeValueMemberB:
			r.Key[name] = string(v.Value)
		default:
			return r, false, fmt.Errorf("singletable: streamlambda: record %s: key %s: a %v, not a string, number or binary: %w",
				d.SequenceNumber, name, av.DataType(), singletable.ErrInvalidInput)
		}
	}
	if id := er.UserIdentity; id != nil {
		r.Expired = id.Type == "Service" && id.PrincipalID == "dynamodb.amazonaws.com"
	}
	if r.OldImage, err = Image(d.OldImage); err != nil {
		return r, true, fmt.Errorf("singletable: streamlambda: record %s: old image: %w", d.SequenceNumber, err)
	}
	if r.NewImage, err = Image(d.NewImage); err != nil {
		return r, true, fmt.Errorf("singletable: streamlambda: record %s: new image: %w", d.SequenceNumber, err)
	}
	return r, true, nil
}

// Image converts a Lambda image into the SDK's attribute values; nil or empty
// gives nil, as stream.Consume gives for an absent image.
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
