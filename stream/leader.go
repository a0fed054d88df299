package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/backoff"
	"github.com/singletable/singletable/internal/condwrite"
)

// leader is the goroutine of a consumer that lists shards and leases, creates,
// renews, takes, asks for and hands over leases, and starts and stops the
// readers of the shards it holds. Its fields are its own: no other goroutine
// touches them.
type leader struct {
	c            *consumer
	held         map[string]*held     // by shard id
	seen         map[string]leaseSeen // the last change seen to each lease, by shard id
	readers      sync.WaitGroup
	lastDescribe time.Time
	describeNow  bool
	disabled     bool   // the stream is disabled: no new records
	asked        string // the shard whose lease this worker asked for, if any
	askedAt      time.Time
}

// leaseSeen is a lease's counter and owner, and when they were first seen so.
// Others' leases expire a lease duration after their counter last moved.
type leaseSeen struct {
	counter int64
	owner   string
	at      time.Time
}

func newLeader(c *consumer) *leader {
	return &leader{c: c, held: map[string]*held{}, seen: map[string]leaseSeen{}, describeNow: true}
}

// lead runs rounds until ctx ends (nil) or an error stops the run: every
// renewal interval, when another worker's lease is due to expire, and when a
// reader ends.
//
// A round that fails for a reason that may pass (transient: a listing or a
// DescribeStream that timed out, was throttled, or met a server error or a
// lost connection past the SDK's retries) does not end the run: the leases
// held are renewed all the same (renewing needs no listing), and the round is
// run again after a backoff, for as long as the failures last. While they
// last no lease is taken; one held stays held as long as its renewals land.
func (l *leader) lead(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0 // rounds failed in a row, transiently
	for {
		select {
		case <-ctx.Done():
			return nil
		case h := <-l.c.exited:
			l.reap(ctx, h)
		case <-timer.C:
		}
		wait, err := l.round(ctx)
		switch {
		case err == nil:
			failures = 0
		case ctx.Err() != nil && !errors.Is(err, errStreamEnded):
			return nil
		case transient(err):
			failures++
			l.renew(ctx, l.c.o.now())
			wait = l.retryWait(failures)
		default:
			return err
		}
		timer.Reset(wait)
	}
}

// transient reports whether err, a store's or a Streams call's, may pass if
// the call is made again later: its context's deadline (a store or endpoint
// too slow for the lease timing, a loaded machine), a throttle, a server
// error or a lost connection that the SDK retries, past its retries, a lease
// write refused for a transaction in progress on the lease item (fenced
// writes check it) or a conflicting write in another Region, past the store's
// attempts, or an ambiguous write (judged again by the next round's listing). A refusal (a
// missing table or stream, a validation error, denied access) or an error of
// the store's own is not.
func transient(err error) bool {
	switch {
	case err == nil, errors.Is(err, errStreamEnded):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, singletable.ErrAmbiguous),
		condwrite.TxConflict(err), condwrite.ReplicatedConflict(err):
		return true
	}
	return backoff.Unprocessed(err)
}

// retryWait is the wait before the round after the n-th failed in a row: an
// eighth of the renewal interval, doubled at each failure up to the renewal
// interval, with jitter.
func (l *leader) retryWait(n int) time.Duration {
	d := l.c.o.renewInterval / 8
	for i := 1; i < n && d < l.c.o.renewInterval; i++ {
		d *= 2
	}
	d = min(d, l.c.o.renewInterval)
	return max(d/2+rand.N(d/2+1), 5*time.Millisecond)
}

// round is one pass of the leader: find shards, list leases, renew, take,
// balance, start readers. It returns how long to wait for the next.
func (l *leader) round(ctx context.Context) (time.Duration, error) {
	c := l.c
	if l.describeNow || c.o.now().Sub(l.lastDescribe) >= c.o.shardRefresh {
		if err := l.sync(ctx); err != nil {
			return 0, err
		}
		l.describeNow, l.lastDescribe = false, c.o.now()
	}
	leases, err := l.list(ctx)
	if err != nil {
		return 0, err
	}
	now := c.o.now()
	l.observe(leases, now)
	if l.disabled && len(l.held) == 0 && !slices.ContainsFunc(leases, func(x Lease) bool { return !x.Finished }) {
		return 0, errStreamEnded
	}
	l.renew(ctx, now)
	l.adopt(ctx, leases, now)
	l.balance(ctx, leases, now)
	l.startReaders()
	return l.nextWake(leases, c.o.now()), nil
}

// sync lists the stream's shards (DescribeStream) and creates a lease for
// each shard that has none, parents first.
func (l *leader) sync(ctx context.Context) error {
	c := l.c
	status, shards, err := c.describe(ctx)
	if err != nil {
		return err
	}
	l.disabled = status == streamtypes.StreamStatusDisabled
	existing, err := l.list(ctx)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, x := range existing {
		have[x.Shard] = true
	}
	listed := map[string]streamtypes.Shard{}
	for _, sh := range shards {
		if id := aws.ToString(sh.ShardId); id != "" {
			listed[id] = sh
		}
	}
	depth := map[string]int{}
	var depthOf func(id string, n int) int
	depthOf = func(id string, n int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		p := aws.ToString(listed[id].ParentShardId)
		d := 0
		if _, ok := listed[p]; ok && n < len(listed) {
			d = depthOf(p, n+1) + 1
		}
		depth[id] = d
		return d
	}
	ids := make([]string, 0, len(listed))
	for id := range listed {
		depthOf(id, 0)
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(depth[a], depth[b]), cmp.Compare(a, b)) })
	latest := len(existing) == 0 && c.o.start == StartLatest
	passed := map[string]bool{} // closed shards passed over under StartLatest
	for _, id := range ids {
		if have[id] {
			continue
		}
		sh := listed[id]
		x := Lease{Group: c.arn, Shard: id}
		p := aws.ToString(sh.ParentShardId)
		if p != "" {
			x.Parents = []string{p}
		}
		if _, known := listed[p]; latest && (!known || passed[p]) {
			if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
				x.Finished, passed[id] = true, true // nothing written from now on will be in a closed shard
			} else {
				x.Checkpoint = CheckpointLatest
			}
		}
		callCtx, cancel := l.call(ctx, time.Time{})
		err := c.o.leases.CreateLease(callCtx, x)
		cancel()
		if err != nil && !errors.Is(err, ErrLeaseExists) {
			return fmt.Errorf("singletable: stream: create lease of shard %s: %w", id, err)
		}
	}
	return nil
}

// list reads the stream's leases.
func (l *leader) list(ctx context.Context) ([]Lease, error) {
	ctx, cancel := l.call(ctx, time.Time{})
	defer cancel()
	leases, err := l.c.o.leases.Leases(ctx, l.c.arn)
	if err != nil {
		return nil, fmt.Errorf("singletable: stream: list leases: %w", err)
	}
	return leases, nil
}

// call returns a context for one store call of the leader's that is not about
// a lease it holds, sent at from (by the consumer's clock, now when zero): it
// ends a lease duration (less the margin) after from, for an answer later
// than that is of no use (a lease taken is ours for that long from when the
// take was sent). The calls about a lease held end with its term instead (see
// term.call).
func (l *leader) call(ctx context.Context, from time.Time) (context.Context, context.CancelFunc) {
	o := &l.c.o
	now := o.now()
	if from.IsZero() {
		from = now
	}
	return context.WithTimeout(ctx, from.Add(o.leaseDuration-leaseMargin(o.leaseDuration)).Sub(now))
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

// observe notes the leases whose counter or owner changed since the last round.
func (l *leader) observe(leases []Lease, now time.Time) {
	for _, x := range leases {
		if o, ok := l.seen[x.Shard]; !ok || o.counter != x.Counter || o.owner != x.Owner {
			l.seen[x.Shard] = leaseSeen{counter: x.Counter, owner: x.Owner, at: now}
		}
	}
}

// expired reports whether another worker's lease may be taken: it is free, or
// its counter has not moved for a lease duration.
func (l *leader) expired(x Lease, now time.Time) bool {
	return x.Owner == "" || now.Sub(l.seen[x.Shard].at) >= l.c.o.leaseDuration
}

// hold records a lease just taken, renewed or handed to us, by a write sent at
// sent.
func (l *leader) hold(ctx context.Context, x Lease, sent time.Time) {
	l.held[x.Shard] = newHeld(ctx, x, sent, &l.c.o)
	if l.asked == x.Shard {
		l.asked = ""
	}
}

// renew renews the leases held whose renewal is due, drops those lost or
// lapsed, and starts handing over those another worker asked for. A lease
// whose checkpoint is being written is not renewed this round: the
// checkpoint, if it lands, keeps it ours as a renewal does, and the leader
// never waits for a call of the reader's.
func (l *leader) renew(ctx context.Context, now time.Time) {
	c := l.c
	for _, h := range l.held {
		if h.dropped {
			continue
		}
		if now.Sub(h.renewedAt) >= c.o.renewInterval*3/4 && h.mu.TryLock() {
			_, err := h.write(ctx, c.o.leases, c.o.now, func(ctx context.Context, l Lease) (Lease, error) {
				return c.o.leases.RenewLease(ctx, l, now.Add(c.o.leaseDuration))
			})
			h.mu.Unlock()
			switch {
			case err == nil:
				h.renewedAt = now
			case errors.Is(err, ErrLeaseLost):
				l.drop(h)
				continue
			case ctx.Err() != nil:
				return
			}
		}
		if !h.valid(c.o.now()) {
			l.drop(h) // not renewed within a lease duration: another may take it now
			continue
		}
		if h.term.askedBy() != "" && !h.handingOver && h.reading {
			h.handingOver = true
			h.stopRead(errHandOff) // the reader drains, checkpoints and returns; reap hands over
		}
	}
}

// drop gives up a lease that is no longer ours: its reader stops at once and
// its handlers' context ends.
func (l *leader) drop(h *held) {
	h.dropped = true
	if !h.reading {
		h.term.close()
		delete(l.held, h.shard)
		return
	}
	h.stopTasks(ErrLeaseLost)
	h.stopRead(ErrLeaseLost)
}

// adopt takes up the leases that name this worker but that it does not hold:
// handed over to it, or held by an earlier run with the same worker id. It
// takes them (TakeLease), which moves the epoch on: the fence of an earlier run
// with the same id, frozen rather than dead, no longer holds.
func (l *leader) adopt(ctx context.Context, leases []Lease, now time.Time) {
	c := l.c
	for _, x := range leases {
		if x.Owner != c.o.worker || x.Finished {
			continue
		}
		if _, ok := l.held[x.Shard]; ok {
			continue
		}
		callCtx, cancel := l.call(ctx, now)
		y, err := c.o.leases.TakeLease(callCtx, x, c.o.worker, now.Add(c.o.leaseDuration))
		cancel()
		if err != nil {
			continue // moved on since it was listed, or a failed call: the next round sees
		}
		l.hold(ctx, y, now)
	}
}

// balance takes free and expired leases, up to this worker's share, and when
// there are none asks the busiest worker for one.
func (l *leader) balance(ctx context.Context, leases []Lease, now time.Time) {
	byShard, ready := readyLeases(leases)
	mine, free, counts := l.tally(ready, now)
	workers := len(counts) + 1
	target := (len(ready) + workers - 1) / workers
	switch {
	case mine >= target:
	case len(free) > 0:
		l.takeFree(ctx, free, mine, target, now)
	default:
		l.askBusiest(ctx, byShard, ready, counts, mine, now)
	}
}

// readyLeases indexes leases by shard and returns those that can be read now:
// unfinished, with every parent finished (or gone).
func readyLeases(leases []Lease) (map[string]Lease, []Lease) {
	byShard := make(map[string]Lease, len(leases))
	for _, x := range leases {
		byShard[x.Shard] = x
	}
	var ready []Lease
	for _, x := range leases {
		if x.Finished {
			continue
		}
		blocked := slices.ContainsFunc(x.Parents, func(p string) bool { pl, ok := byShard[p]; return ok && !pl.Finished })
		if !blocked {
			ready = append(ready, x)
		}
	}
	return byShard, ready
}

// tally counts the ready leases this worker holds, lists those free or
// expired, and counts the others by live owner.
func (l *leader) tally(ready []Lease, now time.Time) (mine int, free []Lease, counts map[string]int) {
	counts = map[string]int{}
	for _, x := range ready {
		if h, ok := l.held[x.Shard]; ok && !h.dropped {
			mine++
			continue
		}
		switch {
		case x.Owner == l.c.o.worker: // adopt's to take up
		case l.expired(x, now):
			free = append(free, x)
		default:
			counts[x.Owner]++
		}
	}
	return mine, free, counts
}

// takeFree takes free leases, then expired ones, in random order, until this
// worker holds target.
func (l *leader) takeFree(ctx context.Context, free []Lease, mine, target int, now time.Time) {
	c := l.c
	rand.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	slices.SortStableFunc(free, func(a, b Lease) int { return cmp.Compare(ownedRank(a), ownedRank(b)) }) // free before expired
	for _, x := range free {
		if mine >= target {
			break
		}
		if _, ok := l.held[x.Shard]; ok {
			continue // dropped, and its reader not yet done
		}
		callCtx, cancel := l.call(ctx, now)
		y, err := c.o.leases.TakeLease(callCtx, x, c.o.worker, now.Add(c.o.leaseDuration))
		cancel()
		if err != nil {
			continue // another worker took it first, or a failed call
		}
		l.hold(ctx, y, now)
		mine++
	}
}

// askBusiest asks the worker holding the most ready leases to hand one over,
// when that would make the shares more even and no ask is pending.
func (l *leader) askBusiest(ctx context.Context, byShard map[string]Lease, ready []Lease, counts map[string]int, mine int, now time.Time) {
	c := l.c
	me := c.o.worker
	if l.asked != "" {
		x, ok := byShard[l.asked]
		if ok && !x.Finished && x.HandOff == me && now.Sub(l.askedAt) < 2*c.o.leaseDuration {
			return // waiting for the owner to hand it over
		}
		l.asked = ""
	}
	victim, most := "", 0
	for w, n := range counts {
		if n > most || (n == most && w < victim) {
			victim, most = w, n
		}
	}
	if most-mine < 2 {
		return // a move would not make the shares more even
	}
	var cands []Lease
	for _, x := range ready {
		if x.Owner == victim && x.HandOff == "" {
			cands = append(cands, x)
		}
	}
	if len(cands) == 0 {
		return
	}
	x := cands[rand.IntN(len(cands))]
	callCtx, cancel := l.call(ctx, time.Time{})
	defer cancel()
	if err := c.o.leases.AskHandOff(callCtx, x, me); err == nil {
		l.asked, l.askedAt = x.Shard, now
	}
}

// startReaders starts a reader for each lease held that has none.
func (l *leader) startReaders() {
	for _, h := range l.held {
		if h.reading || h.dropped {
			continue
		}
		readCtx, stopRead := context.WithCancelCause(h.term.ctx)
		taskCtx, stopTasks := context.WithCancelCause(h.term.ctx)
		taskCtx, err := l.c.taskContext(taskCtx, h.lease()) // fence.go: the lease's fencing token, and its fence
		if err != nil {
			stopRead(err)
			stopTasks(err)
			l.c.fail(err)
			return
		}
		h.stopRead, h.stopTasks, h.done, h.reading = stopRead, stopTasks, make(chan struct{}), true
		l.readers.Go(func() {
			h.result = l.c.shard(readCtx, taskCtx, h)
			stopRead(nil)
			stopTasks(nil)
			close(h.done)
			select {
			case l.c.exited <- h:
			case <-l.c.gone:
			}
		})
	}
}

// reap deals with a reader that has returned: a finished shard lets its
// children start; a lease asked for is handed over.
func (l *leader) reap(ctx context.Context, h *held) {
	c := l.c
	switch {
	case h.result == shardFinished:
		l.describeNow = true // its children may not be listed yet
	case h.dropped || h.result == shardLost:
	case h.handingOver:
		h.mu.Lock()
		_, err := h.write(ctx, c.o.leases, c.o.now, func(ctx context.Context, l Lease) (Lease, error) {
			return c.o.leases.HandOver(ctx, l, c.o.now().Add(c.o.leaseDuration))
		})
		h.mu.Unlock()
		_ = err // refused: the asker gave up, or the lease moved on; a failed call: it expires
	default:
		return // stopped by the run's end: released by stop
	}
	h.term.close()
	delete(l.held, h.shard)
}

// nextWake is how long to wait for the next round: a renewal interval, or
// less when another worker's lease is due to expire sooner.
func (l *leader) nextWake(leases []Lease, now time.Time) time.Duration {
	wait := l.c.o.renewInterval
	for _, x := range leases {
		if x.Owner == "" || x.Owner == l.c.o.worker || x.Finished {
			continue
		}
		if d := l.seen[x.Shard].at.Add(l.c.o.leaseDuration).Sub(now); d > 0 && d < wait {
			wait = d + time.Millisecond
		}
	}
	return max(wait, 5*time.Millisecond)
}

// stop stops every reader (their handlers' context ends), waits for them to
// write their checkpoints (renewing the leases meanwhile), and releases the
// leases still held. It returns the errors of those writes, but for leases that
// had moved on.
func (l *leader) stop() error {
	close(l.c.gone)
	for _, h := range l.held {
		if h.reading {
			h.stopRead(context.Canceled)
			h.stopTasks(context.Canceled)
		}
	}
	l.waitReaders()
	ctx, cancel := context.WithTimeout(context.Background(), finalSaveTimeout)
	defer cancel()
	var errs []error
	var listed []Lease // read once, if a release is refused
	for _, h := range l.held {
		if h.dropped || h.result == shardFinished || h.result == shardLost {
			continue
		}
		// Released, even when another worker asked for it: that worker may be
		// stopping too, and a free lease is taken by the first worker to look.
		x := h.lease()
		err := l.c.o.leases.ReleaseLease(ctx, x)
		if errors.Is(err, ErrLeaseLost) {
			// A write cut short by the end of the run may have landed
			// unseen, moving the counter on: release what the store says is
			// still ours.
			if listed == nil {
				listed, _ = l.c.o.leases.Leases(ctx, l.c.arn)
			}
			for _, y := range listed {
				if y.Shard == x.Shard && y.Owner == l.c.o.worker && !y.Finished {
					err = l.c.o.leases.ReleaseLease(ctx, y)
				}
			}
		}
		if err != nil && !errors.Is(err, ErrLeaseLost) {
			errs = append(errs, fmt.Errorf("singletable: stream: release lease of shard %s: %w", h.shard, err))
		}
	}
	// A take cut short by the end of the run may have landed unseen: the lease
	// is ours in the store but not held here. Release those too (one read), so
	// that a graceful stop frees every lease at once rather than at expiry.
	if listed == nil {
		listed, _ = l.c.o.leases.Leases(ctx, l.c.arn)
	}
	for _, y := range listed {
		if h, ok := l.held[y.Shard]; (ok && !h.dropped && h.result != shardLost) || y.Owner != l.c.o.worker || y.Finished {
			continue
		}
		if err := l.c.o.leases.ReleaseLease(ctx, y); err != nil && !errors.Is(err, ErrLeaseLost) {
			errs = append(errs, fmt.Errorf("singletable: stream: release lease of shard %s: %w", y.Shard, err))
		}
	}
	for _, h := range l.held {
		h.term.close()
	}
	return errors.Join(errs...)
}

// waitReaders waits for the readers to stop and write their checkpoints,
// renewing the leases held meanwhile, as the rounds did: a handler that
// ignores its ended context, or a slow process or store, must not let a lease
// lapse before its reader's last checkpoint (and the records after it already
// handled) is written, or the next holder would repeat records whose handlers
// finished; nor may another worker take a shard whose handlers still run.
func (l *leader) waitReaders() {
	done := make(chan struct{})
	go func() {
		l.readers.Wait()
		close(done)
	}()
	tick := time.NewTicker(l.c.o.renewInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), l.c.o.leaseDuration)
			l.renew(ctx, l.c.o.now())
			cancel()
		}
	}
}

func ownedRank(x Lease) int {
	if x.Owner == "" {
		return 0
	}
	return 1
}
