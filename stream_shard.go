package singletable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// errHandOff stops the reading of a shard whose lease another worker asked for.
var errHandOff = errors.New("singletable: stream: lease handed over")

// held is a lease this consumer holds, and the reader of its shard.
type held struct {
	// mu protects l, and is held across each store call that writes the
	// lease, so the renewals and checkpoints of one lease are sent one at a
	// time, each with the counter the one before returned.
	mu sync.Mutex
	l  Lease
	// unsure is set (under mu) when a write of l failed other than by
	// ErrLeaseLost: cut short by a cancelled context or a failed call, it may
	// have landed unseen and moved the stored counter on. The next write reads
	// the lease back first (see write).
	unsure bool

	validUntil atomic.Int64 // unix nanoseconds, by the consumer's clock: the lease is ours until then

	// Set by the leader only.
	renewedAt   time.Time
	reading     bool // a reader was started
	handingOver bool // the owner asked for it; the reader is draining
	dropped     bool // lost or expired: the reader was stopped, the lease is not ours

	stopRead  context.CancelCauseFunc // stops the reading of new records
	stopTasks context.CancelCauseFunc // ends the context of the shard's handlers
	done      chan struct{}           // closed when the reader has returned
	result    shardResult             // the reader's result; read after done
}

// shardResult is how a reader ended.
type shardResult uint8

const (
	shardStopped  shardResult = iota // the run is stopping, or the lease is being handed over
	shardFinished                    // read to its end, every record handled, the lease marked finished
	shardLost                        // a lease write was refused: another worker has the lease
)

// lease returns a copy of the lease as last written.
func (h *held) lease() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.l
}

// valid reports whether the lease is still ours at now.
func (h *held) valid(now time.Time) bool { return now.UnixNano() < h.validUntil.Load() }

// write sends one write of h's lease (fn, given the lease as last written) and
// keeps what it returns; the caller holds h.mu. After a write whose outcome is
// unknown (h.unsure), it first reads the lease back: still owned by this worker,
// unfinished, at the counter or past it, the stored lease is what this worker
// last wrote (only the owner's writes keep the owner), so the write goes on from
// it; otherwise the lease has moved on and the write fails with ErrLeaseLost.
func (h *held) write(ctx context.Context, store LeaseStore, fn func(Lease) (Lease, error)) (Lease, error) {
	if h.unsure {
		leases, err := store.Leases(ctx, h.l.Group)
		if err != nil {
			return Lease{}, err
		}
		i := slices.IndexFunc(leases, func(x Lease) bool { return x.Shard == h.l.Shard })
		if i < 0 || leases[i].Owner != h.l.Owner || leases[i].Finished || leases[i].Counter < h.l.Counter {
			return Lease{}, fmt.Errorf("singletable: stream: lease of shard %s moved on after a write that may have landed: %w", h.l.Shard, ErrLeaseLost)
		}
		h.l, h.unsure = leases[i], false
	}
	x, err := fn(h.l)
	switch {
	case err == nil:
		h.l = x
	case !errors.Is(err, ErrLeaseLost):
		h.unsure = true
	}
	return x, err
}

// checkpoint writes the shard's checkpoint (finished: and marks it finished).
func (c *consumer) checkpoint(ctx context.Context, h *held, seq string, finished bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.write(ctx, c.o.leases, func(l Lease) (Lease, error) { return c.o.leases.Checkpoint(ctx, l, seq, finished) })
	if err != nil {
		return fmt.Errorf("singletable: stream: checkpoint %s of shard %s: %w", seq, h.l.Shard, err)
	}
	return nil
}

// position is where reading a shard begins: after a sequence number when one
// is set, else at typ.
type position struct {
	typ   streamtypes.ShardIteratorType
	after string
}

func positionOf(checkpoint string) position {
	switch checkpoint {
	case "":
		return position{typ: streamtypes.ShardIteratorTypeTrimHorizon}
	case CheckpointLatest:
		return position{typ: streamtypes.ShardIteratorTypeLatest}
	}
	return position{after: checkpoint}
}

// inflight is a record handed to the railroad; errc is nil for a record passed
// over.
type inflight struct {
	seq  string
	errc <-chan error
}

// shard reads the shard of h's lease from its checkpoint to its end, or until
// reading stops (readCtx) or its handlers are cancelled (taskCtx: lease lost,
// run stopping), checkpointing as its records are handled. Once reading stops it
// waits for the records in flight (whose context ends with taskCtx) and writes
// the checkpoint. A handler's failure stops the run.
func (c *consumer) shard(readCtx, taskCtx context.Context, h *held) shardResult {
	l := h.lease()
	pending := make(chan inflight, c.o.batchSize)
	readErr := make(chan error, 1)
	go func() {
		defer close(pending)
		readErr <- c.read(readCtx, taskCtx, h, positionOf(l.Checkpoint), pending)
	}()
	r := &shardRun{c: c, h: h, taskCtx: taskCtx, saved: l.Checkpoint, done: l.Checkpoint, tick: time.NewTicker(c.o.checkpointInterval)}
	defer r.tick.Stop()
	failed := r.handle(pending)
	if failed != nil && taskCtx.Err() == nil {
		c.fail(failed) // a task error has stopped the run already; a save error has not
	}
	if failed != nil {
		h.stopRead(context.Canceled)
		for range pending { // the reader stops once readCtx has ended
		}
	}
	return r.finish(readCtx, failed, <-readErr)
}

// shardRun is the checkpointing state of one reading of a shard.
type shardRun struct {
	c       *consumer
	h       *held
	taskCtx context.Context
	tick    *time.Ticker
	// done is the checkpoint: the sequence number of the last record such that
	// it and every record before it have been handled; saved is the one written.
	saved, done string
	lost        bool // a lease write was refused
}

// save writes seq as the checkpoint (finished: and marks the shard finished).
// A refused write stops the shard (lost) and is not an error.
func (r *shardRun) save(ctx context.Context, seq string, finished bool) error {
	err := r.c.checkpoint(ctx, r.h, seq, finished)
	if errors.Is(err, ErrLeaseLost) {
		r.lost = true
		r.h.stopTasks(ErrLeaseLost)
		r.h.stopRead(ErrLeaseLost)
		return nil
	}
	if err == nil {
		r.saved = seq
	}
	return err
}

// maybeSave writes the checkpoint if it moved on; an error only while the
// shard is not stopping (then the final save retries).
func (r *shardRun) maybeSave() error {
	if r.done == r.saved || r.lost {
		return nil
	}
	if err := r.save(r.taskCtx, r.done, false); err != nil && r.taskCtx.Err() == nil {
		return err
	}
	return nil
}

// handle waits for the records in pending to be handled, in order, moving
// the checkpoint on and saving it at each tick, until pending closes or
// handling fails; it returns why it stopped early.
func (r *shardRun) handle(pending <-chan inflight) error {
	for {
		select {
		case in, ok := <-pending:
			if !ok {
				return nil
			}
			if err := r.await(in); err != nil {
				return err
			}
			r.done = in.seq
		case <-r.tick.C:
			if err := r.maybeSave(); err != nil {
				return err
			}
		}
	}
}

// await waits for in's handler, saving the checkpoint at each tick meanwhile.
func (r *shardRun) await(in inflight) error {
	for in.errc != nil {
		select {
		case err := <-in.errc:
			if err != nil {
				return err // the handler stopped the run, or the shard was stopping
			}
			in.errc = nil
		case <-r.tick.C:
			if err := r.maybeSave(); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish writes the last checkpoint once reading has stopped (rerr is the
// reader's error) and, when the shard was read to its end, marks it finished.
func (r *shardRun) finish(readCtx context.Context, failed, rerr error) shardResult {
	c := r.c
	if r.lost || errors.Is(rerr, ErrLeaseLost) || errors.Is(context.Cause(r.taskCtx), ErrLeaseLost) {
		return shardLost // nothing more can be written to the lease
	}
	final, cancel := context.WithTimeout(context.WithoutCancel(r.taskCtx), finalSaveTimeout)
	defer cancel()
	if r.done != r.saved {
		if err := r.save(final, r.done, false); err != nil {
			c.fail(err)
			return shardStopped
		}
		if r.lost {
			return shardLost
		}
	}
	if failed != nil || rerr != nil {
		if rerr != nil && readCtx.Err() == nil {
			c.fail(rerr)
		}
		return shardStopped
	}
	if err := r.save(final, r.done, true); err != nil {
		c.fail(err)
		return shardStopped
	}
	if r.lost {
		return shardLost
	}
	return shardFinished
}

// read reads one shard from pos and hands its records to the railroad, in
// order, and to pending for checkpointing. It returns nil when the shard has
// been read to its end, and readCtx's error when reading was stopped.
func (c *consumer) read(readCtx, taskCtx context.Context, h *held, pos position, pending chan<- inflight) error {
	id := h.lease().Shard
	iter, err := c.iterator(readCtx, id, pos)
	if err != nil || iter == nil {
		return err
	}
	wait := c.o.poll
	for {
		out, err := c.client.GetRecords(readCtx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(int32(c.o.batchSize))})
		if err != nil {
			if readCtx.Err() != nil {
				return readCtx.Err()
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
			if iter, err = c.iterator(readCtx, id, pos); err != nil || iter == nil {
				return err
			}
			continue
		}
		for _, rec := range out.Records {
			if !h.valid(c.o.now()) {
				h.stopTasks(ErrLeaseLost)
				return fmt.Errorf("singletable: stream: lease of shard %s expired: %w", id, ErrLeaseLost)
			}
			if readCtx.Err() != nil {
				return readCtx.Err()
			}
			r, deliver, own, err := c.record(id, rec)
			if err != nil {
				return err
			}
			if own {
				continue // the library's own items: not handled, and not worth a checkpoint
			}
			in := inflight{seq: r.SequenceNumber}
			if deliver {
				if in.errc, err = c.rr.Submit(taskCtx, c.o.key(r), c.task(r)); err != nil {
					return err
				}
			}
			select {
			case pending <- in:
			case <-readCtx.Done():
				// The record was submitted: let it be waited for, so that it
				// is handled (or cancelled) before the checkpoint is written.
				pending <- in
				return readCtx.Err()
			}
			pos = position{after: r.SequenceNumber}
		}
		if iter = out.NextShardIterator; iter == nil {
			return nil // the shard is closed and read to its end
		}
		if len(out.Records) > 0 {
			wait = c.o.poll
			continue
		}
		if err := sleepContext(readCtx, wait); err != nil {
			return err
		}
		wait = min(2*wait, c.o.maxPoll)
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
