package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// errHandOff stops the reading of a shard whose lease another worker asked for.
var errHandOff = errors.New("singletable: stream: lease handed over")

// errLapsed ends the context of a lease that was not renewed in time.
var errLapsed = fmt.Errorf("singletable: stream: lease lapsed: not renewed within the lease duration: %w", ErrLeaseLost)

// held is a lease this consumer holds, and the reader of its shard.
//
// A held lease has a term: it is ours until a lease duration after the last
// write of it that landed was sent (a renewal, a take, or a checkpoint, which
// also moves the counter on), less a safety margin, by the consumer's own
// clock. Others may take it only once its counter has not moved for a lease
// duration by their clock, which begins no earlier than that write landed. A
// timer ends the lease's context (ctx, the parent of its reader's and its
// handlers' contexts) when the term runs out: nothing the leader or the reader
// is blocked in can hold that up.
type held struct {
	shard string // the lease's shard id

	// mu protects l and unsure, and is held across each store call that writes
	// the lease, so the renewals and checkpoints of one lease are sent one at a
	// time, each with the counter the one before returned.
	mu sync.Mutex
	l  Lease
	// unsure is set (under mu) when a write of l failed other than by
	// ErrLeaseLost: cut short by a cancelled context or a failed call, it may
	// have landed unseen and moved the stored counter on. The next write reads
	// the lease back first (see write).
	unsure bool

	term term

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
	shardLost                        // a lease write was refused, or the term ran out: the lease may be another's
)

// term is the local term of a held lease. Its methods are safe for concurrent
// use, and never wait for a call.
type term struct {
	ctx context.Context // ends when the term runs out (cause errLapsed) or the run stops
	now func() time.Time
	d   time.Duration // how long a write keeps the lease ours: the lease duration less the margin

	mu      sync.Mutex  // protects the fields below
	until   time.Time   // the lease is ours until then, by now
	lapsed  bool        // the term ran out; it is not extended again
	handOff string      // the HandOff of the lease as last written
	timer   *time.Timer // runs expire at until
	end     context.CancelCauseFunc
}

// leaseMargin is how long before a lease duration has passed since its last
// write was sent that a consumer gives the lease up: a twentieth of it, against
// clocks that run at slightly different rates and timers that fire late.
func leaseMargin(d time.Duration) time.Duration { return d / 20 }

func newHeld(parent context.Context, x Lease, sent time.Time, o *options) *held {
	h := &held{shard: x.Shard, l: x, renewedAt: sent}
	tm := &h.term
	tm.now, tm.d = o.now, o.leaseDuration-leaseMargin(o.leaseDuration)
	tm.ctx, tm.end = context.WithCancelCause(parent)
	tm.until, tm.handOff = sent.Add(tm.d), x.HandOff
	tm.timer = time.AfterFunc(tm.until.Sub(tm.now()), tm.expire)
	return h
}

// expire ends the term once until has passed, unless it was extended meanwhile.
func (tm *term) expire() {
	tm.mu.Lock()
	if left := tm.until.Sub(tm.now()); left > 0 && !tm.lapsed {
		tm.timer.Reset(left)
		tm.mu.Unlock()
		return
	}
	tm.lapsed = true
	tm.mu.Unlock()
	tm.end(errLapsed)
}

// extend makes the lease ours until a lease duration (less the margin) after
// sent, when a write of it sent then has landed; x is the lease it returned. It
// reports false when the term had already run out: the lease was given up,
// and stays so.
func (tm *term) extend(sent time.Time, x Lease) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.lapsed {
		return false
	}
	tm.handOff = x.HandOff
	if until := sent.Add(tm.d); until.After(tm.until) {
		tm.until = until
		tm.timer.Reset(until.Sub(tm.now()))
	}
	return true
}

// valid reports whether the lease is still ours at now.
func (tm *term) valid(now time.Time) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return !tm.lapsed && now.Before(tm.until)
}

// askedBy returns the worker that asked for the lease, as its last write showed.
func (tm *term) askedBy() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.handOff
}

// call returns a context for one store call about the lease: it ends with
// parent, and when the term runs out, since no write after that could keep the
// lease ours. ok is false when the term has run out already.
func (tm *term) call(parent context.Context) (ctx context.Context, cancel context.CancelFunc, ok bool) {
	tm.mu.Lock()
	until, lapsed := tm.until, tm.lapsed
	tm.mu.Unlock()
	left := until.Sub(tm.now())
	if lapsed || left <= 0 {
		return parent, func() {}, false
	}
	ctx, cancel = context.WithTimeout(parent, left)
	return ctx, cancel, true
}

// close stops the timer and ends the lease's context: the lease is no longer held.
func (tm *term) close() {
	tm.timer.Stop()
	tm.end(context.Canceled)
}

// lease returns a copy of the lease as last written.
func (h *held) lease() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.l
}

// valid reports whether the lease is still ours at now.
func (h *held) valid(now time.Time) bool { return h.term.valid(now) }

// write sends one write of h's lease (fn, given the lease as last written and a
// context that ends with the lease's term) and keeps what it returns; the
// caller holds h.mu. A write that lands extends the term from when it was sent.
// After a write whose outcome is unknown (h.unsure), it first reads the lease
// back: still owned by this worker, unfinished, at the counter or past it, the
// stored lease is what this worker last wrote (only the owner's writes keep the
// owner), so the write goes on from it; otherwise the lease has moved on and
// the write fails with ErrLeaseLost. Once the term has run out nothing is
// sent, and the write fails with ErrLeaseLost; so does a write that failed
// while the term ran out (its outcome unknown, the lease may be another's).
func (h *held) write(ctx context.Context, store LeaseStore, now func() time.Time, fn func(context.Context, Lease) (Lease, error)) (Lease, error) {
	sent := now()
	ctx, cancel, ok := h.term.call(ctx)
	defer cancel()
	if !ok {
		return Lease{}, fmt.Errorf("singletable: stream: lease of shard %s: %w", h.shard, errLapsed)
	}
	if h.unsure {
		cur, err := h.reread(ctx, store)
		if err != nil {
			return Lease{}, err
		}
		if cur.Owner != h.l.Owner || cur.Finished || cur.Counter < h.l.Counter {
			return Lease{}, fmt.Errorf("singletable: stream: lease of shard %s moved on after a write that may have landed: %w", h.l.Shard, ErrLeaseLost)
		}
		h.l, h.unsure = cur, false
	}
	owner := h.l.Owner
	x, err := fn(ctx, h.l)
	// A write of ours whose context ended while it was out (a stop, a call's
	// timeout) may still be on its way, and land after this one was sent,
	// even after the read above: the counter moves on under this write, which
	// is refused. The lease is then still ours, at the same epoch (a change
	// of hands moves the epoch on), a write or more later: read it and send
	// again. Otherwise a graceful stop's last checkpoint, refused so, would
	// be lost with the records after it already handled.
	for range 3 {
		if !errors.Is(err, ErrLeaseLost) || ctx.Err() != nil {
			break
		}
		cur, rerr := h.reread(ctx, store)
		if rerr != nil || cur.Owner != h.l.Owner || cur.Epoch != h.l.Epoch || cur.Finished || cur.Counter <= h.l.Counter {
			break
		}
		h.l = cur
		x, err = fn(ctx, h.l)
	}
	switch {
	case err == nil:
		h.l = x
		if x.Owner == owner && !x.Finished {
			h.term.extend(sent, x)
		}
	case !errors.Is(err, ErrLeaseLost):
		h.unsure = true
		if !h.term.valid(now()) { // the term ran out while the write was out: the lease is no longer surely ours
			return x, fmt.Errorf("singletable: stream: lease of shard %s: %w (a write was cut short: %w)", h.shard, errLapsed, err)
		}
	}
	return x, err
}

// reread reads h's lease as stored.
func (h *held) reread(ctx context.Context, store LeaseStore) (Lease, error) {
	leases, err := store.Leases(ctx, h.l.Group)
	if err != nil {
		return Lease{}, err
	}
	i := slices.IndexFunc(leases, func(x Lease) bool { return x.Shard == h.l.Shard })
	if i < 0 {
		return Lease{}, fmt.Errorf("singletable: stream: lease of shard %s is gone: %w", h.l.Shard, ErrLeaseLost)
	}
	return leases[i], nil
}

// checkpoint writes the shard's checkpoint (finished: and marks it finished).
func (c *consumer) checkpoint(ctx context.Context, h *held, seq string, finished bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.write(ctx, c.o.leases, c.o.now, func(ctx context.Context, l Lease) (Lease, error) { return c.o.leases.Checkpoint(ctx, l, seq, finished) })
	if err != nil {
		return fmt.Errorf("singletable: stream: checkpoint %s of shard %s: %w", seq, h.shard, err)
	}
	return nil
}

// checkpointHandled writes the shard's checkpoint and the records after it
// handled (HandledStore).
func (c *consumer) checkpointHandled(ctx context.Context, h *held, hs HandledStore, seq string, handled []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.write(ctx, c.o.leases, c.o.now, func(ctx context.Context, l Lease) (Lease, error) {
		return hs.CheckpointHandled(ctx, l, seq, handled)
	})
	if err != nil {
		return fmt.Errorf("singletable: stream: checkpoint %s of shard %s, %d records after it handled: %w", seq, h.shard, len(handled), err)
	}
	return nil
}

// position is where reading a shard begins: after a sequence number when one
// is set, else at typ. Records dated before notBefore (when set) are passed
// over, as handled, until the first that is not: the reading of a shard
// pinned by [LatestAt].
type position struct {
	typ       streamtypes.ShardIteratorType
	after     string
	notBefore time.Time
	handled   map[string]bool // records after the checkpoint handled already (Lease.Handled): passed over
}

func positionOf(checkpoint string) position {
	switch checkpoint {
	case "":
		return position{typ: streamtypes.ShardIteratorTypeTrimHorizon}
	case CheckpointLatest:
		return position{typ: streamtypes.ShardIteratorTypeLatest}
	}
	if at, ok := latestPin(checkpoint); ok {
		return position{typ: streamtypes.ShardIteratorTypeTrimHorizon, notBefore: at.Add(-LatestSlack)}
	}
	return position{after: checkpoint}
}

// before reports whether rec is to be passed over as older than pos's pin. A
// record without a date is not.
func (pos position) before(rec streamtypes.Record) bool {
	if pos.notBefore.IsZero() || rec.Dynamodb == nil || rec.Dynamodb.ApproximateCreationDateTime == nil {
		return false
	}
	return rec.Dynamodb.ApproximateCreationDateTime.Before(pos.notBefore)
}

// inflight is a record handed to the railroad; errc is nil for a record passed
// over. key is its rail key; handled is set for a record passed over as
// handled already (Lease.Handled).
type inflight struct {
	seq     string
	errc    <-chan error
	key     string
	handled bool
}

// shard reads the shard of h's lease from its checkpoint to its end, or until
// reading stops (readCtx) or its handlers are cancelled (taskCtx: lease lost,
// run stopping), checkpointing as its records are handled. Once reading stops it
// waits for the records in flight (whose context ends with taskCtx) and writes
// the checkpoint. A handler's failure stops the run.
func (c *consumer) shard(readCtx, taskCtx context.Context, h *held) shardResult {
	l := h.lease()
	r := &shardRun{c: c, h: h, taskCtx: taskCtx, saved: l.Checkpoint, done: l.Checkpoint, tick: time.NewTicker(c.o.checkpointInterval)}
	defer r.tick.Stop()
	pos := positionOf(l.Checkpoint)
	for _, seq := range l.Handled {
		if compareSeq(seq, l.Checkpoint) > 0 {
			if pos.handled == nil {
				pos.handled = map[string]bool{}
			}
			pos.handled[seq] = true
		}
	}
	var iter *string
	if pos.typ == streamtypes.ShardIteratorTypeLatest {
		var err error
		if iter, pos, err = r.pin(readCtx); err != nil || iter == nil || r.lost {
			return r.finish(readCtx, nil, err)
		}
	}
	pending := make(chan inflight, c.o.batchSize)
	readErr := make(chan error, 1)
	go func() {
		defer close(pending)
		readErr <- c.read(readCtx, taskCtx, h, pos, iter, pending)
	}()
	failed := r.handle(pending)
	if failed != nil && taskCtx.Err() == nil {
		c.fail(failed) // a task error has stopped the run already; a save error has not
	}
	if failed != nil {
		h.stopRead(context.Canceled)
		for in := range pending { // the reader stops once readCtx has ended
			r.drain(in)
		}
	}
	return r.finish(readCtx, failed, <-readErr)
}

// pin pins a [StartLatest] shard that nobody has read yet to the records
// written from now on, before any is read: it asks for the shard's latest
// position, then writes the [LatestAt] checkpoint of the time it asked. It
// returns the iterator to read from (nil when the shard is gone) and the
// position a reader resumes from, which passes over what came before the pin.
func (r *shardRun) pin(ctx context.Context) (*string, position, error) {
	c := r.c
	at := c.o.now()
	iter, err := c.iterator(ctx, r.h.shard, position{typ: streamtypes.ShardIteratorTypeLatest})
	if err != nil || iter == nil {
		return nil, position{}, err
	}
	cp := LatestAt(at)
	if err := r.save(ctx, cp, false); err != nil || r.lost {
		return nil, position{}, err
	}
	r.done = cp
	return iter, positionOf(cp), nil
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
	// after are the records after done once handling stopped early (the
	// first of them was cut short, or failed), in order, and whether each
	// finished: those a stop records as handled (see handledAfter).
	after []afterDone
}

type afterDone struct {
	in       inflight
	finished bool
}

// drain waits for the outcome of a record after the one handling stopped at
// (its handler's context has ended, or it never runs) and notes it.
func (r *shardRun) drain(in inflight) {
	ok := true
	if in.errc != nil {
		ok = <-in.errc == nil
	}
	r.after = append(r.after, afterDone{in: in, finished: ok})
}

// handledAfter returns the sequence numbers of the records after the
// checkpoint whose handlers finished, but for those of a key an earlier record
// of which did not (the next reader handles them again, in order), and of the
// records passed over without a handler (the next reader passes over them too).
func (r *shardRun) handledAfter() []string {
	var out []string
	cut := map[string]bool{}
	for _, a := range r.after {
		switch {
		case !a.finished:
			cut[a.in.key] = true
		case (a.in.errc != nil || a.in.handled) && !cut[a.in.key]:
			out = append(out, a.in.seq)
		}
	}
	return out
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
// shard is not stopping (then the final save retries), and not one that may
// pass (transient: a write timed out, throttled, lost): the next tick writes
// the checkpoint again, and a lease whose writes keep failing lapses at the
// end of its term.
func (r *shardRun) maybeSave() error {
	if r.done == r.saved || r.lost {
		return nil
	}
	if err := r.save(r.taskCtx, r.done, false); err != nil && r.taskCtx.Err() == nil && !transient(err) {
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
				r.after = append(r.after, afterDone{in: in})
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
	if handled := r.handledAfter(); len(handled) > 0 {
		if hs, ok := c.o.leases.(HandledStore); ok {
			// A stop, or a hand-over: the records after the checkpoint that
			// finished are written beside it, for the next reader to pass over.
			err := c.checkpointHandled(final, r.h, hs, r.done, handled)
			if errors.Is(err, ErrLeaseLost) {
				r.lost = true
				return shardLost
			}
			if err != nil {
				c.fail(err)
				return shardStopped
			}
			r.saved = r.done
		}
	}
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

// read reads one shard from pos (from iter, when set) and hands its records to
// the railroad, in order, and to pending for checkpointing. It returns nil when
// the shard has been read to its end, and readCtx's error when reading was
// stopped.
func (c *consumer) read(readCtx, taskCtx context.Context, h *held, pos position, iter *string, pending chan<- inflight) error {
	id := h.shard
	var err error
	if iter == nil {
		if iter, err = c.iterator(readCtx, id, pos); err != nil || iter == nil {
			return err
		}
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
				pos = position{typ: streamtypes.ShardIteratorTypeTrimHorizon, notBefore: pos.notBefore}
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
				h.stopTasks(errLapsed)
				return fmt.Errorf("singletable: stream: lease of shard %s: %w", id, errLapsed)
			}
			if readCtx.Err() != nil {
				return readCtx.Err()
			}
			in, err := c.submit(taskCtx, h, rec, &pos)
			if err != nil {
				return err
			}
			if in.seq == "" {
				continue // the library's own items: not handled, and not worth a checkpoint
			}
			select {
			case pending <- in:
			case <-readCtx.Done():
				// The record was submitted: let it be waited for, so that it
				// is handled (or cancelled) before the checkpoint is written.
				pending <- in
				return readCtx.Err()
			}
			pos.after = in.seq
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

// submit hands one record of the shard to the railroad; the inflight returned
// has no seq for a record not worth a checkpoint (the library's own items) and
// no errc for one passed over (before pos's pin, UnknownSkip). The first
// record not before pos's pin ends the passing over.
func (c *consumer) submit(taskCtx context.Context, h *held, rec streamtypes.Record, pos *position) (inflight, error) {
	shard := h.shard
	if pos.before(rec) {
		return inflight{seq: aws.ToString(rec.Dynamodb.SequenceNumber)}, nil
	}
	if rec.Dynamodb != nil && pos.handled[aws.ToString(rec.Dynamodb.SequenceNumber)] {
		return inflight{seq: aws.ToString(rec.Dynamodb.SequenceNumber), handled: true}, nil // handled before a stop
	}
	pos.notBefore = time.Time{}
	r, deliver, own, err := c.record(shard, rec)
	if err != nil || own {
		return inflight{}, err
	}
	in := inflight{seq: r.SequenceNumber}
	if deliver {
		key := c.o.key(r)
		in.key = key
		if in.errc, err = c.rr.Submit(taskCtx, key, c.task(h, r, key)); err != nil {
			return inflight{}, err
		}
	}
	return in, nil
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
			pos = position{typ: streamtypes.ShardIteratorTypeTrimHorizon, notBefore: pos.notBefore} // the checkpoint is older than the stream
			continue
		case errors.As(err, &gone):
			return nil, nil // trimmed away whole: nothing left to read
		}
		return nil, fmt.Errorf("singletable: stream: GetShardIterator on shard %s: %w", id, err)
	}
}

// sleepContext waits d, or until ctx ends (its error).
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
