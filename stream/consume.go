// Package stream reads a table's DynamoDB Stream and hands every change to a
// handler, decoded into the entities registered on a [singletable.Table], in
// order per item and concurrently across items: one consumer, or a fleet of
// them in many processes that share the stream's shards by leases kept in
// DynamoDB ([TableStore]), as the Kinesis Client Library does. See [Consume].
//
// It needs only the singletable package's public surface: records are decoded
// by [singletable.Table.DecodeRecord] and handled on a [singletable.Railroad].
// Package streamlambda does the same in AWS Lambda.
package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/reserved"
	"github.com/singletable/singletable/internal/streamkey"
)

// Client is the part of the DynamoDB Streams API that [Consume] calls.
// *dynamodbstreams.Client satisfies it. For DynamoDB Local, build the client
// with BaseEndpoint set to the same URL as the DynamoDB client's.
type Client interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ Client = (*dynamodbstreams.Client)(nil)

// Start is where a shard with no checkpoint begins.
type Start uint8

const (
	// StartTrimHorizon begins at the oldest record the stream holds (up to 24
	// hours old). The default.
	StartTrimHorizon Start = iota
	// StartLatest begins with the records written from when the shard is first
	// read: its first reader pins it there ([LatestAt]).
	StartLatest
)

// errStreamEnded stops a consumer whose stream is disabled and read to its end.
var errStreamEnded = errors.New("singletable: stream: ended")

// finalSaveTimeout bounds the checkpoint and lease writes made while a
// consumer stops, after its context has ended.
const finalSaveTimeout = 30 * time.Second

// Consume reads the DynamoDB Stream of table t and calls handle for every
// record, until ctx ends or an error stops it. Any number of consumers, in one
// process or many, may consume one stream at once, each with its own [Worker]
// id and the same [Leases] store: they share its shards through leases, so that
// each shard is read by one consumer at a time. Without Leases a consumer
// keeps its leases in memory and reads every shard itself.
//
// # Reading
//
// Consume calls DescribeStream to find the shards (every
// [ShardRefresh], following pages), creates a lease for each shard that has
// none, then GetShardIterator and GetRecords on each shard whose lease it
// holds. A shard is read only once every parent shard is finished (read to its
// end and all its records handled), whoever held the parent, so an item's
// changes are handled in order across shard splits and across the fleet.
// Records are decoded with the entity types registered on t (call
// [singletable.Register] first; see [singletable.Table.DecodeRecord] for the
// rules and [OnUnknown]) and handled through a [singletable.Railroad] keyed by
// [RecordKey]: the records of one item run one at a time, in stream order;
// those of different items run concurrently, up to
// [singletable.RailroadOptions.Concurrency] ([Rails]). When handlers fall behind, the
// railroad's bounds pause the reading of shards, so memory stays bounded.
// Records of the library's own items (a [TableStore] in the same table) are
// passed over.
//
// # Leases
//
// Every [LeaseTiming] renewal interval a consumer lists the stream's leases
// (one Leases call), renews the ones it holds, and takes more: leases that are
// free (released, or never taken) or expired (their counter has not moved for
// a lease duration by the consumer's clock: their owner has stopped renewing),
// up to its fair share, the ready leases divided by the live workers and
// rounded up. When there are none to take and another worker holds at least
// two more than it does, it asks that worker to hand one over, one lease at a
// time; the owner sees the request at its next renewal, stops reading the
// shard, waits for the shard's records in flight, writes the checkpoint and
// hands the lease over, so that a shard never has two readers. Each lease
// held has a local term: a lease duration, less a twentieth, from when its
// last write that landed (a renewal, a take, a checkpoint) was sent, by the
// consumer's clock. When the term runs out (a lost connection, a hung lease
// store, a call that ignores its context) a timer stops the reading of the
// shard and ends the context of its handlers, whatever the consumer is blocked
// in, before another can take the lease; and no lease-store call about a lease
// outlives its term. A timer cannot do that for a process that does not run:
// one frozen past its lease (SIGSTOP, a long GC pause, a suspended VM) loses
// the lease to another consumer, and when it wakes its handlers may be in the
// middle of a write. [FenceWrites] makes such writes fail: every write a
// handler makes through the library is then conditional on the lease being
// still this consumer's, at the epoch its record was read under (the fencing
// token, [FencingTokenFrom]); writes elsewhere need a sink that is idempotent
// or versioned by that token. Every lease write is conditional on the lease's
// counter and owner: a consumer whose lease moved on can write nothing
// to it, not even a checkpoint; and every one is judged after a lost answer
// ([TableStore] reads the lease back), so that a write of its own that landed
// unanswered never passes for another worker's. When
// ctx ends the consumer stops reading, waits for the handlers running (their
// context has ended; it renews its leases meanwhile, so that a handler that
// ignores its context keeps its shard from others and cannot make the lease
// lapse before the checkpoint), writes its checkpoints (with the records after each
// whose handlers finished, for a [HandledStore], which the next reader passes
// over) and releases its leases, so others take them at once; a consumer that dies without releasing loses its
// leases after the lease duration, and another takes each shard within the
// lease duration plus one renewal interval, and resumes after its checkpoint.
//
// # Delivery
//
// Delivery is at least once. A shard's checkpoint is the sequence number of
// its last record such that it and every record before it in the shard have
// been handled; it is written every [CheckpointEvery], when the shard ends,
// when the lease is handed over, and when the consumer stops. Duplicates come
// from exactly these places: (1) a consumer that dies, or loses its lease,
// after handling records and before writing their checkpoint: the next holder
// handles them again, in their original order; (2) a handler that was running
// when its consumer stopped or lost the lease, whose context then ended: if it
// had done its work but returned an error, or had not returned, its record
// comes again, and so do the records after it on the same key (with a lease
// store that is no [HandledStore], every record after the checkpoint); (3) a
// handler that fails and is retried ([HandlerRetry]) after
// part of its work was done. A handler should be idempotent (compare a
// version, use a conditional write). Records older than 24 hours are gone from
// the stream: a consumer whose checkpoint is older than that resumes at the
// oldest record there is, and the records in between are lost.
//
// With [StartLatest], the first reader of a shard pins it, before it hands on
// any record, to the records written from then on ([LatestAt]); whoever reads
// the shard next (the same consumer run again, or the next holder after a
// crash) resumes from that pin, never from the stream's latest position: no
// record written after the pin is skipped. Until a record has moved the
// checkpoint past the pin, such a reader reads the shard from its oldest
// record and may also hand on records dated up to [LatestSlack] before the pin.
//
// handle runs with a context that ends when ctx ends, the consumer stops, or
// its shard's lease is lost, and that carries the lease's [FencingToken] (and,
// with [FenceWrites], its fence); a handler error matching [ErrLeaseLost]
// stops the shard's reading without retry, not the consumer. It may be called from many goroutines at once,
// never for two records with the same key. A handler that returns an error, or
// panics, is retried as [HandlerRetry] says; when its attempts are spent the
// consumer stops, and the record and those after it are left for the next
// holder.
//
// Consume returns ctx's error when ctx ends (joined with any error from
// releasing its leases), nil when the stream has been disabled and every shard
// finished, and otherwise the first error that stopped it: a handler's, a
// decoding error, the lease store's, or a Streams call's after the SDK's own
// retries. A lease listing, a DescribeStream or a periodic checkpoint that
// fails for a reason that may pass (it timed out, was throttled, met a server
// error or a lost connection, or a transaction in progress on the lease item)
// does not stop it: the leases held are renewed all the same, and the call is
// made again after a backoff, for as long as such failures last; a lease whose
// renewals fail too lapses at the end of its term, as above. Before it returns it stops reading, waits for the handlers running,
// writes the checkpoints, releases its leases and leaves no goroutine behind.
//
// Cost: per consumer, one DescribeStream call per 100 shards every
// ShardRefresh; one GetRecords call per batch or per poll per shard it holds
// (Streams reads are not billed as table reads; DynamoDB throttles a shard read
// by more than two readers, which the leases prevent); and, with a
// [TableStore], one consistent Query of the leases (1 RCU per 4 KB, about 13
// leases) plus one write (1 WCU) per held lease every renewal interval, one
// write per checkpoint, and a write per take, hand-over or release.
func Consume(ctx context.Context, t *singletable.Table, client Client, handle func(context.Context, singletable.StreamRecord) error, opts ...Option) error {
	c, err := newConsumer(t, client, handle, opts)
	if err != nil {
		return err
	}
	if c.arn == "" {
		if c.arn, err = latestStream(ctx, t); err != nil {
			return err
		}
	}
	return c.run(ctx)
}

// latestStream returns the ARN of the table's stream (DescribeTable).
func latestStream(ctx context.Context, t *singletable.Table) (string, error) {
	out, err := t.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name())})
	if err != nil {
		return "", fmt.Errorf("singletable: stream: DescribeTable %s: %w", t.Name(), err)
	}
	if out.Table == nil || aws.ToString(out.Table.LatestStreamArn) == "" {
		return "", fmt.Errorf("singletable: stream: table %s has no stream (create it with singletable.EnableStream): %w", t.Name(), singletable.ErrInvalidInput)
	}
	return *out.Table.LatestStreamArn, nil
}

// consumer is one run of Consume.
type consumer struct {
	t      *singletable.Table
	client Client
	handle func(context.Context, singletable.StreamRecord) error
	o      options
	arn    string
	rr     *singletable.Railroad[string]

	exited chan *held    // readers that have returned, for the leader
	gone   chan struct{} // closed when the leader stops listening on exited

	cancel context.CancelCauseFunc // ends the run's context; safe for concurrent use
	mu     sync.Mutex              // protects err
	err    error                   // the first error that stopped the run
}

func newConsumer(t *singletable.Table, client Client, handle func(context.Context, singletable.StreamRecord) error, opts []Option) (*consumer, error) {
	if t == nil || client == nil || handle == nil {
		return nil, fmt.Errorf("singletable: stream: nil table, client or handler: %w", singletable.ErrInvalidInput)
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.applyStream(&o); err != nil {
			return nil, fmt.Errorf("singletable: stream: %w", err)
		}
	}
	if o.leases == nil {
		o.leases = &MemoryStore{}
	}
	if _, ok := o.leases.(Fencer); o.fence && !ok {
		return nil, fmt.Errorf("singletable: stream: FenceWrites: the lease store, a %T, cannot fence writes to the table: use a TableStore: %w", o.leases, singletable.ErrInvalidInput)
	}
	if o.worker == "" {
		host, _ := os.Hostname()
		o.worker = fmt.Sprintf("%s-%016x", host, rand.Uint64())
	}
	if o.retry.MaxAttempts <= 0 {
		o.retry.MaxAttempts = 10 // Backoff's default
	}
	if o.key == nil {
		o.key = func(r singletable.StreamRecord) string { return streamkey.Of(r.Key) } // injective: two items never share a rail
	}
	return &consumer{t: t, client: client, handle: handle, o: o, arn: o.arn, exited: make(chan *held), gone: make(chan struct{})}, nil
}

// fail stops the run with err, unless it was stopped already.
func (c *consumer) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.cancel(err)
}

func (c *consumer) run(parent context.Context) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	c.cancel = cancel
	c.rr = singletable.NewRailroad[string](c.o.railroad)

	l := newLeader(c)
	if err := l.lead(ctx); err != nil {
		c.fail(err)
	}
	cancel(context.Canceled)
	releaseErr := l.stop()
	_ = c.rr.Close(ctx) // ctx has ended: drops what is left (nothing, normally) and waits for the workers

	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	switch {
	case errors.Is(err, errStreamEnded):
		return releaseErr
	case err == nil:
		err = parent.Err()
	}
	if releaseErr != nil {
		return errors.Join(err, releaseErr)
	}
	return err
}

// task returns the railroad task that handles r, with retries. A failure
// stops the run before the task returns, so the next task on r's rail sees its
// context ended and does not run.
//
// A handler error that matches ErrLeaseLost (a fenced write refused: the lease
// of h has moved on) is not retried and does not stop the run: it stops the
// shard's reading and its handlers, as a lost lease does.
func (c *consumer) task(h *held, r singletable.StreamRecord, key string) func(context.Context) error {
	return func(ctx context.Context) error {
		var err error
		for attempt := 1; ; attempt++ {
			err = c.call(ctx, r, key, attempt)
			if err == nil || ctx.Err() != nil || errors.Is(err, ErrLeaseLost) || attempt >= c.o.retry.MaxAttempts || c.o.retry.Wait(ctx, attempt) != nil {
				break
			}
		}
		if err != nil && ctx.Err() == nil && errors.Is(err, ErrLeaseLost) {
			h.stopTasks(ErrLeaseLost)
			h.stopRead(ErrLeaseLost)
			return err
		}
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("singletable: stream: handler failed on %s of %s (shard %s, sequence number %s): %w",
				r.Event, formatKey(r.Key), r.ShardID, r.SequenceNumber, err)
			c.fail(err)
		}
		return err
	}
}

// call runs the handler on r once, in a span of the table's Tracer (the
// attempt-th on its rail key); a panic becomes a *singletable.PanicError.
func (c *consumer) call(ctx context.Context, r singletable.StreamRecord, key string, attempt int) (err error) {
	ctx, end := c.t.StartSpan(ctx, singletable.Span{Kind: singletable.SpanHandler, Name: "StreamHandler", Key: key, Attempt: attempt})
	defer func() { end(singletable.SpanEnd{Err: err, Items: -1}) }()
	defer func() {
		if v := recover(); v != nil {
			err = &singletable.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return c.handle(ctx, r)
}

// formatKey renders a record's key for messages: its attributes in name order.
func formatKey(k map[string]string) string {
	if len(k) == 0 {
		return ""
	}
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(k)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", name, k[name])
	}
	return "{" + b.String() + "}"
}

// record turns a stream record into a StreamRecord; deliver is false for a
// record to pass over (UnknownSkip, or the library's own items: own).
func (c *consumer) record(shardID string, rec streamtypes.Record) (r singletable.StreamRecord, deliver, own bool, err error) {
	d := rec.Dynamodb
	if d == nil {
		return r, false, false, fmt.Errorf("singletable: stream: record %s of shard %s has no change", aws.ToString(rec.EventID), shardID)
	}
	r = singletable.StreamRecord{
		Event:          singletable.StreamEvent(rec.EventName),
		Key:            map[string]string{},
		OldImage:       fromStreamImage(d.OldImage),
		NewImage:       fromStreamImage(d.NewImage),
		ShardID:        shardID,
		SequenceNumber: aws.ToString(d.SequenceNumber),
	}
	if d.ApproximateCreationDateTime != nil {
		r.ApproximateTime = *d.ApproximateCreationDateTime
	}
	for name, av := range d.Keys {
		switch v := av.(type) {
		case *streamtypes.AttributeValueMemberS:
			r.Key[name] = v.Value
		case *streamtypes.AttributeValueMemberN:
			r.Key[name] = v.Value
		case *streamtypes.AttributeValueMemberB:
			r.Key[name] = string(v.Value)
		}
	}
	if id := rec.UserIdentity; id != nil {
		r.Expired = aws.ToString(id.Type) == "Service" && aws.ToString(id.PrincipalId) == "dynamodb.amazonaws.com"
	}
	r, deliver, err = c.t.DecodeRecord(r, singletable.OnUnknown(c.o.unknown))
	if err != nil {
		return r, false, false, fmt.Errorf("singletable: stream: record %s of shard %s: %w", r.SequenceNumber, shardID, err)
	}
	own = !deliver && strings.HasPrefix(r.Type, reserved.TypePrefix)
	return r, deliver, own, nil
}

// fromStreamImage converts an image from the Streams API's attribute values to
// DynamoDB's; nil or empty gives nil.
func fromStreamImage(m map[string]streamtypes.AttributeValue) singletable.RawItem {
	if len(m) == 0 {
		return nil
	}
	out := make(singletable.RawItem, len(m))
	for k, v := range m {
		out[k] = fromStreamAV(v)
	}
	return out
}

// fromStreamAV converts one attribute value of the Streams API into the same
// value of the DynamoDB API. The two packages declare identical but distinct
// types. Slices are shared, not copied.
func fromStreamAV(av streamtypes.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *streamtypes.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *streamtypes.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *streamtypes.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: v.Value}
	case *streamtypes.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *streamtypes.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: v.Value}
	case *streamtypes.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: v.Value}
	case *streamtypes.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = fromStreamAV(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *streamtypes.AttributeValueMemberM:
		m := make(map[string]types.AttributeValue, len(v.Value))
		for k, e := range v.Value {
			m[k] = fromStreamAV(e)
		}
		return &types.AttributeValueMemberM{Value: m}
	case *streamtypes.UnknownUnionMember:
		return &types.UnknownUnionMember{Tag: v.Tag, Value: v.Value}
	case nil:
		return nil
	}
	return &types.UnknownUnionMember{Tag: fmt.Sprintf("%T", av)}
}
