package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamClient is the part of the DynamoDB Streams API that [ConsumeStream]
// calls. *dynamodbstreams.Client satisfies it. For DynamoDB Local, build the
// client with BaseEndpoint set to the same URL as the DynamoDB client's.
type StreamClient interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ StreamClient = (*dynamodbstreams.Client)(nil)

// EnableStream is an edit for [Table.CreateTable] that turns on the table's
// stream with both images of every change (NEW_AND_OLD_IMAGES), which
// [ConsumeStream] decodes into [StreamRecord.Old] and [StreamRecord.New].
func EnableStream() func(*dynamodb.CreateTableInput) {
	return func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		}
	}
}

// StreamEvent is what happened to an item.
type StreamEvent string

// The events of a stream record.
const (
	StreamInsert StreamEvent = "INSERT" // the item was created; New holds it
	StreamModify StreamEvent = "MODIFY" // the item was changed; Old and New hold it before and after
	StreamRemove StreamEvent = "REMOVE" // the item was deleted; Old holds it
)

// StreamRecord is one change to one item, as [ConsumeStream] hands it to its
// handler. Old and New hold values of the entity types registered on the table
// (an Order, not an *Order), for a type switch or [Images]; they are nil when
// the stream does not carry that image (an INSERT has no old image, a REMOVE no
// new one, a KEYS_ONLY stream neither). The handler may keep the record; the
// consumer does not touch it afterwards.
type StreamRecord struct {
	Event StreamEvent
	// Type is the item's type attribute, from the new image, else the old; ""
	// when neither image carries one.
	Type string
	// Key is the item's primary key, such as {"PK": "CUST#c1", "SK": "ORDER#o1"}.
	Key map[string]string
	// Old and New are the decoded images; with OnUnknown UnknownCollect, an
	// image of an unregistered type is a RawItem.
	Old, New any
	// OldImage and NewImage are the images as the stream carried them.
	OldImage, NewImage RawItem
	// Expired is true for a REMOVE made by DynamoDB's time to live.
	Expired bool
	// ShardID and SequenceNumber place the record in the stream. Sequence
	// numbers grow within a shard; compare them as numbers, not strings.
	ShardID        string
	SequenceNumber string
	// ApproximateTime is when the change was made, to the second or coarser.
	ApproximateTime time.Time
}

// Images returns the record's old and new values when they are of type T; ok
// reports whether either is. An image that is absent or of another type gives
// T's zero value.
func Images[T any](r StreamRecord) (before, after T, ok bool) {
	before, okBefore := r.Old.(T)
	after, okAfter := r.New.(T)
	return before, after, okBefore || okAfter
}

// ShardEnd is the checkpoint of a shard that has been read to its end and all
// of whose records have been handled. [ConsumeStream] never reads such a shard
// again, and starts its children.
const ShardEnd = "SHARD_END"

// CheckpointStore keeps, for each shard of a stream, the sequence number of the
// last record handled, so that a consumer that restarts goes on from there.
// Shard ids are unique within a stream: give each stream its own store (or
// prefix the ids). Implementations must be safe for concurrent use: shards are
// saved from their own goroutines.
type CheckpointStore interface {
	// Load returns the shard's checkpoint: "" when it has none, [ShardEnd]
	// when the shard is done, else a sequence number.
	Load(ctx context.Context, shardID string) (seq string, err error)
	// Save records the shard's checkpoint.
	Save(ctx context.Context, shardID, seq string) error
}

// MemoryCheckpoints is a [CheckpointStore] in memory, for tests and for
// consumers that may start over when their process does. The zero value is an
// empty store; it is safe for concurrent use.
type MemoryCheckpoints struct {
	mu sync.Mutex        // protects m
	m  map[string]string // shard id -> checkpoint
}

var _ CheckpointStore = (*MemoryCheckpoints)(nil)

// Load returns the shard's checkpoint, or "".
func (m *MemoryCheckpoints) Load(_ context.Context, shardID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[shardID], nil
}

// Save sets the shard's checkpoint.
func (m *MemoryCheckpoints) Save(_ context.Context, shardID, seq string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[shardID] = seq
	return nil
}

// All returns a copy of every checkpoint, by shard id.
func (m *MemoryCheckpoints) All() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.m)
}

// StreamStart is where a shard with no checkpoint begins.
type StreamStart uint8

const (
	// StartTrimHorizon begins at the oldest record the stream holds (up to 24
	// hours old). The default.
	StartTrimHorizon StreamStart = iota
	// StartLatest begins with the records written after the consumer starts.
	StartLatest
)

// StreamOptions configures [ConsumeStream]. A zero field takes the default
// named in its comment.
type StreamOptions struct {
	// StreamARN is the stream to read. Default: the table's latest stream,
	// which ConsumeStream reads with one DescribeTable call.
	StreamARN string
	// Start is where the shards the consumer finds when it starts begin, if
	// they have no checkpoint. Shards that appear later, and the children of
	// shards read here, always begin at their oldest record, so that no
	// record between a parent and its children is missed. With StartLatest,
	// closed shards without a checkpoint are not read at all.
	Start StreamStart
	// Checkpoints keeps each shard's position. Default: a new
	// [MemoryCheckpoints], so a consumer that runs again begins again at Start.
	Checkpoints CheckpointStore
	// CheckpointInterval is the least time between two saves of one shard's
	// checkpoint while records flow; default 1s. A shard's checkpoint is also
	// saved when the shard ends and when the consumer stops.
	CheckpointInterval time.Duration
	// Key names the rail a record is handled on: records with equal keys are
	// handled one at a time, in stream order. Default: the item's primary
	// key, so the changes to one item are handled in order. A coarser key
	// (the partition key, a customer id) orders more, and runs less at once.
	Key func(StreamRecord) string
	// Unknown says what to do with a record whose image names no entity
	// registered on the table: UnknownFail (the default) stops the consumer
	// with an [*UnknownTypeError], UnknownSkip passes over the record (it
	// counts as handled), UnknownCollect hands it over with the image as a
	// [RawItem] in Old or New. A record with one image of a registered type
	// is handed over, the other image decoded as this option says.
	Unknown UnknownTypes
	// Retry is how often, and after what pause, a record whose handler fails
	// is tried again, on its rail, so the records after it on the same key
	// wait. Zero fields take [Backoff]'s defaults: 10 attempts in all;
	// MaxAttempts 1 means no retry. When the attempts are spent the consumer
	// stops and returns the handler's error.
	Retry Backoff
	// PollInterval is the pause after a read of an open shard that found no
	// new record; it doubles while reads stay empty, up to MaxPollInterval.
	// Defaults 250ms and 2s. A read that finds records is followed at once by
	// the next.
	PollInterval, MaxPollInterval time.Duration
	// ShardRefresh is how often DescribeStream is called to find new shards;
	// default 30s. A shard that ends triggers a call at once.
	ShardRefresh time.Duration
	// BatchSize is the most records one GetRecords call returns; default and
	// maximum 1000. It also bounds the records of one shard in flight.
	BatchSize int
	// Railroad configures the railroad records are handled on: how many
	// handlers run at once (Concurrency) and how many records are held, per
	// key and in all, before reading pauses. See [RailroadOptions].
	Railroad RailroadOptions
}

// errStreamEnded stops a consumer whose stream is disabled and read to its end.
var errStreamEnded = errors.New("singletable: stream ended")

// finalSaveTimeout bounds the checkpoint saves made while a consumer stops,
// after its context has ended.
const finalSaveTimeout = 30 * time.Second

// ConsumeStream reads the DynamoDB Stream of table t and calls handle for every
// record, until ctx ends or an error stops it. It calls DescribeStream to find
// the shards (every ShardRefresh, following pages), then GetShardIterator and
// GetRecords on each open shard, parents before children: a child shard is
// read only once its parent has been read to its end and all of the parent's
// records have been handled, so an item's changes are handled in order across
// shard splits. Records are decoded with the entity types registered on t
// (call [Register] first) and handled through a [Railroad] keyed by
// [StreamOptions.Key]: the records of one item run one at a time, in stream
// order; those of different items run concurrently, up to
// [RailroadOptions.Concurrency]. When handlers fall behind, the railroad's
// bounds pause the reading of shards, so memory stays bounded.
//
// Delivery is at least once. A shard's checkpoint is the sequence number of
// its last record such that it and every record before it in the shard have
// been handled; it is saved every CheckpointInterval, when the shard ends and
// when the consumer stops. A consumer that stops or crashes and runs again with
// the same [CheckpointStore] resumes after each shard's checkpoint: records
// handled after the last save come again, in their original order. Make the
// handler idempotent (compare a version, use a conditional write) so that a
// repeat is harmless. Records older than 24 hours are gone from the stream: a
// consumer whose checkpoint is older than that resumes at the oldest record
// there is, and the records in between are lost.
//
// handle runs with a context that ends when ctx ends or the consumer stops; it
// may be called from many goroutines at once, never for two records with the
// same key. A handler that returns an error, or panics, is retried as
// [StreamOptions.Retry] says; when its attempts are spent the consumer stops,
// and the record and those after it are left for the next run.
//
// ConsumeStream returns ctx's error when ctx ends, nil when the stream has
// been disabled and every shard read to its end, and otherwise the first error
// that stopped it: a handler's, a decoding error (see [StreamOptions.Unknown]),
// a checkpoint store's, or a Streams call's after the SDK's own retries. Before
// it returns it stops reading, waits for the handlers running (their context has
// ended), saves the checkpoints, and leaves no goroutine behind.
//
// Cost: one DescribeStream call per 100 shards every ShardRefresh, one
// GetRecords call per batch or per poll per open shard (Streams reads are not
// billed as table reads), and the checkpoint store's writes.
func ConsumeStream(ctx context.Context, t *Table, client StreamClient, handle func(context.Context, StreamRecord) error, opts ...func(*StreamOptions)) error {
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
func latestStream(ctx context.Context, t *Table) (string, error) {
	out, err := t.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
	if err != nil {
		return "", fmt.Errorf("singletable: ConsumeStream: DescribeTable %s: %w", t.name, err)
	}
	if out.Table == nil || aws.ToString(out.Table.LatestStreamArn) == "" {
		return "", fmt.Errorf("singletable: ConsumeStream: table %s has no stream (create it with EnableStream): %w", t.name, ErrInvalidInput)
	}
	return *out.Table.LatestStreamArn, nil
}

// consumer is one run of ConsumeStream.
type consumer struct {
	t      *Table
	client StreamClient
	handle func(context.Context, StreamRecord) error
	o      StreamOptions
	arn    string
	rr     *Railroad[string]

	cancel context.CancelCauseFunc // ends the run's context; safe for concurrent use
	mu     sync.Mutex              // protects err
	err    error                   // the first error that stopped the run
}

func newConsumer(t *Table, client StreamClient, handle func(context.Context, StreamRecord) error, opts []func(*StreamOptions)) (*consumer, error) {
	var o StreamOptions
	for _, f := range opts {
		f(&o)
	}
	switch {
	case t == nil || client == nil || handle == nil:
		return nil, fmt.Errorf("singletable: ConsumeStream: nil table, client or handler: %w", ErrInvalidInput)
	case o.BatchSize < 0 || o.BatchSize > 1000:
		return nil, fmt.Errorf("singletable: ConsumeStream: BatchSize %d is not in 1-1000: %w", o.BatchSize, ErrInvalidInput)
	case o.Unknown > UnknownCollect:
		return nil, fmt.Errorf("singletable: ConsumeStream: Unknown %d: %w", o.Unknown, ErrInvalidInput)
	case o.Start > StartLatest:
		return nil, fmt.Errorf("singletable: ConsumeStream: Start %d: %w", o.Start, ErrInvalidInput)
	}
	if o.Checkpoints == nil {
		o.Checkpoints = &MemoryCheckpoints{}
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.MaxPollInterval <= 0 {
		o.MaxPollInterval = 2 * time.Second
	}
	o.MaxPollInterval = max(o.MaxPollInterval, o.PollInterval)
	if o.ShardRefresh <= 0 {
		o.ShardRefresh = 30 * time.Second
	}
	if o.BatchSize == 0 {
		o.BatchSize = 1000
	}
	o.Retry = o.Retry.withDefaults()
	o.Railroad = o.Railroad.withDefaults()
	c := &consumer{t: t, client: client, handle: handle, o: o, arn: o.StreamARN}
	if c.o.Key == nil {
		pk, sk := t.opts.PartitionKey, t.opts.SortKey
		// Length-prefixed, so that two different keys never share a rail.
		c.o.Key = func(r StreamRecord) string { p := r.Key[pk]; return strconv.Itoa(len(p)) + ":" + p + r.Key[sk] }
	}
	return c, nil
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
	c.rr = NewRailroad[string](func(o *RailroadOptions) { *o = c.o.Railroad })

	var wg sync.WaitGroup // the shard goroutines
	if err := c.coordinate(ctx, &wg); err != nil {
		c.fail(err)
	}
	cancel(context.Canceled)
	wg.Wait()
	_ = c.rr.Close(ctx) // ctx has ended: drops what is left (nothing, normally) and waits for the workers

	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	switch {
	case errors.Is(err, errStreamEnded):
		return nil
	case err != nil:
		return err
	}
	return parent.Err()
}

// shardState is what the coordinator knows of one shard.
type shardState struct {
	id, parent string
	closed     bool   // the shard has an ending sequence number: it gets no new records
	checkpoint string // as loaded when the shard was found
	late       bool   // found after the first listing
	started    bool
	done       bool // read to its end and every record handled, or passed over
	passed     bool // passed over: closed, and the consumer starts at StartLatest
}

// coordinate lists the shards and starts each when its parent is done, until
// ctx ends or an error. It returns errStreamEnded when the stream is disabled
// and every shard done.
func (c *consumer) coordinate(ctx context.Context, wg *sync.WaitGroup) error {
	shards := map[string]*shardState{}
	ended := make(chan string) // ids of shards read to their end
	first := true
	refresh := time.NewTimer(0)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case id := <-ended:
			shards[id].done = true
			c.startReady(ctx, wg, shards, ended)
			refresh.Reset(0) // its children may not be listed yet
			continue
		case <-refresh.C:
		}
		status, listed, err := c.describe(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		ids := make(map[string]bool, len(listed))
		for _, sh := range listed {
			id := aws.ToString(sh.ShardId)
			ids[id] = true
			if _, ok := shards[id]; ok || id == "" {
				continue
			}
			cp, err := c.o.Checkpoints.Load(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("singletable: stream: load checkpoint of shard %s: %w", id, err)
			}
			s := &shardState{id: id, parent: aws.ToString(sh.ParentShardId), checkpoint: cp, late: !first, done: cp == ShardEnd}
			s.closed = sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil
			shards[id] = s
		}
		for id, s := range shards {
			if s.done && !ids[id] {
				delete(shards, id) // trimmed from the stream; its children take it as done
			}
		}
		first = false
		c.startReady(ctx, wg, shards, ended)
		if status == streamtypes.StreamStatusDisabled && allDone(shards) {
			return errStreamEnded
		}
		refresh.Reset(c.o.ShardRefresh)
	}
}

func allDone(shards map[string]*shardState) bool {
	for _, s := range shards {
		if !s.done {
			return false
		}
	}
	return true
}

// describe lists every shard of the stream (DescribeStream, page by page).
func (c *consumer) describe(ctx context.Context) (streamtypes.StreamStatus, []streamtypes.Shard, error) {
	var shards []streamtypes.Shard
	var status streamtypes.StreamStatus
	var start *string
	for {
		out, err := c.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(c.arn), ExclusiveStartShardId: start})
		if err != nil {
			return "", nil, fmt.Errorf("singletable: stream: DescribeStream %s: %w", c.arn, err)
		}
		d := out.StreamDescription
		if d == nil {
			return "", nil, fmt.Errorf("singletable: stream: DescribeStream %s: no description", c.arn)
		}
		status = d.StreamStatus
		shards = append(shards, d.Shards...)
		if start = d.LastEvaluatedShardId; start == nil {
			return status, shards, nil
		}
	}
}

// startReady starts every shard not started whose parent is done, or unknown
// (trimmed from the stream): in id order, again until no more can start, since
// a shard passed over under StartLatest lets its children start.
func (c *consumer) startReady(ctx context.Context, wg *sync.WaitGroup, shards map[string]*shardState, ended chan<- string) {
	ids := slices.Sorted(maps.Keys(shards))
	for progress := true; progress; {
		progress = false
		for _, id := range ids {
			s := shards[id]
			p, known := shards[s.parent]
			if s.started || s.done || (known && !p.done) {
				continue
			}
			progress = true
			pos := position{typ: streamtypes.ShardIteratorTypeTrimHorizon, after: s.checkpoint}
			if s.checkpoint == "" && !s.late && (!known || p.passed) && c.o.Start == StartLatest {
				if s.closed {
					s.done, s.passed = true, true // nothing written from now on will be in a closed shard
					continue
				}
				pos.typ = streamtypes.ShardIteratorTypeLatest
			}
			s.started = true
			wg.Go(func() {
				if c.shard(ctx, s.id, pos) {
					select {
					case ended <- s.id:
					case <-ctx.Done():
					}
				}
			})
		}
	}
}

// position is where reading a shard begins: after a sequence number when one
// is set, else at typ.
type position struct {
	typ   streamtypes.ShardIteratorType
	after string
}

// inflight is a record handed to the railroad; errc is nil for a record passed
// over.
type inflight struct {
	seq  string
	errc <-chan error
}

// shard reads one shard to its end, or until the run stops, checkpointing as
// its records are handled. It reports whether the shard was read to its end
// and every record handled, with ShardEnd saved; on an error it stops the run.
func (c *consumer) shard(ctx context.Context, id string, pos position) bool {
	pending := make(chan inflight, c.o.BatchSize)
	readErr := make(chan error, 1)
	go func() {
		defer close(pending)
		readErr <- c.read(ctx, id, pos, pending)
	}()

	// done is the checkpoint: the sequence number of the last record such that
	// it and every record before it have been handled.
	saved, done := pos.after, pos.after
	save := func(ctx context.Context, seq string) error {
		if err := c.o.Checkpoints.Save(ctx, id, seq); err != nil {
			return fmt.Errorf("singletable: stream: save checkpoint %s of shard %s: %w", seq, id, err)
		}
		saved = seq
		return nil
	}
	tick := time.NewTicker(c.o.CheckpointInterval)
	defer tick.Stop()
	maybeSave := func() error {
		if done == saved {
			return nil
		}
		if err := save(ctx, done); err != nil && ctx.Err() == nil {
			return err
		}
		return nil // when the run is stopping, the final save below retries
	}

	var failed error // why handling stopped before the reader did
loop:
	for failed == nil {
		select {
		case in, ok := <-pending:
			if !ok {
				break loop
			}
			for in.errc != nil && failed == nil {
				select {
				case err := <-in.errc:
					if err != nil {
						failed = err // the handler stopped the run, or the run was stopping
						continue loop
					}
					in.errc = nil
				case <-tick.C:
					failed = maybeSave()
				}
			}
			if failed == nil {
				done = in.seq
			}
		case <-tick.C:
			failed = maybeSave()
		}
	}
	if failed != nil && ctx.Err() == nil {
		c.fail(failed) // a task error has stopped the run already; a save error has not
	}
	rerr := <-readErr // once the run stops, the reader does too
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalSaveTimeout)
	defer cancel()
	if done != saved {
		if err := save(final, done); err != nil {
			c.fail(err)
			return false
		}
	}
	switch {
	case failed != nil:
		return false
	case rerr != nil:
		if ctx.Err() == nil {
			c.fail(rerr)
		}
		return false
	}
	if err := save(final, ShardEnd); err != nil {
		c.fail(err)
		return false
	}
	return true
}

// read reads one shard from pos and hands its records to the railroad, in
// order, and to pending for checkpointing. It returns nil when the shard has
// been read to its end.
func (c *consumer) read(ctx context.Context, id string, pos position, pending chan<- inflight) error {
	iter, err := c.iterator(ctx, id, pos)
	if err != nil || iter == nil {
		return err
	}
	wait := c.o.PollInterval
	for {
		out, err := c.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(int32(c.o.BatchSize))})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var expired *streamtypes.ExpiredIteratorException
			var trimmed *streamtypes.TrimmedDataAccessException
			switch {
			case errors.As(err, &expired): // iterators last 15 minutes: get a new one where we are
			case errors.As(err, &trimmed): // what we were to read is gone: go on with what is left
				pos = position{typ: streamtypes.ShardIteratorTypeTrimHorizon}
			default:
				return fmt.Errorf("singletable: stream: GetRecords on shard %s: %w", id, err)
			}
			if iter, err = c.iterator(ctx, id, pos); err != nil || iter == nil {
				return err
			}
			continue
		}
		for _, rec := range out.Records {
			r, deliver, err := c.record(id, rec)
			if err != nil {
				return err
			}
			in := inflight{seq: r.SequenceNumber}
			if deliver {
				if in.errc, err = c.rr.Submit(ctx, c.o.Key(r), c.task(r)); err != nil {
					return err
				}
			}
			select {
			case pending <- in:
			case <-ctx.Done():
				return ctx.Err()
			}
			pos = position{after: r.SequenceNumber}
		}
		if iter = out.NextShardIterator; iter == nil {
			return nil // the shard is closed and read to its end
		}
		if len(out.Records) > 0 {
			wait = c.o.PollInterval
			continue
		}
		if err := sleepContext(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, c.o.MaxPollInterval)
	}
}

// iterator returns a shard iterator at pos (GetShardIterator), or nil when the
// shard no longer exists.
func (c *consumer) iterator(ctx context.Context, id string, pos position) (*string, error) {
	for {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(c.arn), ShardId: aws.String(id), ShardIteratorType: pos.typ}
		if pos.after != "" {
			in.ShardIteratorType = streamtypes.ShardIteratorTypeAfterSequenceNumber
			in.SequenceNumber = aws.String(pos.after)
		}
		out, err := c.client.GetShardIterator(ctx, in)
		if err == nil {
			return out.ShardIterator, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var trimmed *streamtypes.TrimmedDataAccessException
		var gone *streamtypes.ResourceNotFoundException
		switch {
		case errors.As(err, &trimmed) && pos.after != "":
			pos = position{typ: streamtypes.ShardIteratorTypeTrimHorizon} // the checkpoint is older than the stream
			continue
		case errors.As(err, &gone):
			return nil, nil // trimmed away whole: nothing left to read
		}
		return nil, fmt.Errorf("singletable: stream: GetShardIterator on shard %s: %w", id, err)
	}
}

// task returns the railroad task that handles r, with retries. A failure
// stops the run before the task returns, so the next task on r's rail sees its
// context ended and does not run.
func (c *consumer) task(r StreamRecord) func(context.Context) error {
	return func(ctx context.Context) error {
		var err error
		for attempt := 1; ; attempt++ {
			err = callTask(ctx, func(ctx context.Context) error { return c.handle(ctx, r) })
			if err == nil || ctx.Err() != nil || attempt >= c.o.Retry.MaxAttempts || c.o.Retry.Wait(ctx, attempt) != nil {
				break
			}
		}
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("singletable: stream: handler failed on %s of %s (shard %s, sequence number %s): %w",
				r.Event, formatKey(r.Key), r.ShardID, r.SequenceNumber, err)
			c.fail(err)
		}
		return err
	}
}

// record turns a stream record into a StreamRecord; deliver is false for a
// record to pass over (UnknownSkip).
func (c *consumer) record(shardID string, rec streamtypes.Record) (r StreamRecord, deliver bool, err error) {
	d := rec.Dynamodb
	if d == nil {
		return r, false, fmt.Errorf("singletable: stream: record %s of shard %s has no change", aws.ToString(rec.EventID), shardID)
	}
	r = StreamRecord{
		Event:          StreamEvent(rec.EventName),
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
	present, skipped := 0, 0
	for _, img := range []struct {
		item RawItem
		dst  *any
	}{{r.OldImage, &r.Old}, {r.NewImage, &r.New}} {
		if img.item == nil {
			continue
		}
		present++
		if s, ok := img.item[c.t.opts.TypeAttribute].(*types.AttributeValueMemberS); ok {
			r.Type = s.Value // the new image's, when both have one
		}
		v, ok, err := c.t.decodeAny(img.item, c.o.Unknown)
		if err != nil {
			return r, false, fmt.Errorf("singletable: stream: record %s of shard %s: %w", r.SequenceNumber, shardID, err)
		}
		if !ok {
			skipped++
			continue
		}
		*img.dst = v
	}
	return r, present == 0 || skipped < present, nil
}

// fromStreamImage converts an image from the Streams API's attribute values to
// DynamoDB's; nil or empty gives nil.
func fromStreamImage(m map[string]streamtypes.AttributeValue) RawItem {
	if len(m) == 0 {
		return nil
	}
	out := make(RawItem, len(m))
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
