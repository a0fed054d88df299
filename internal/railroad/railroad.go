// Package railroad is the scheduler behind singletable.Railroad, a per-key
// serial executor: every key has a rail, a FIFO queue on which tasks run one
// after another, while up to Concurrency worker goroutines, started on demand,
// take the ready rails in turn, one task at a time. Rails are made when a task
// for their key arrives and dropped when their last task has finished; two
// bounds (tasks per key, tasks in all) give backpressure.
//
// The package knows nothing of the public package: the bounds and the errors
// it hands out (closed, queue full, a task's panic) come in through [Config].
// The behaviour, and its documentation for users, is singletable.Railroad's.
package railroad

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
)

// ErrGoexit is the error of a task that called runtime.Goexit (t.FailNow in a
// test, for example) instead of returning.
var ErrGoexit = errors.New("singletable: task called runtime.Goexit")

// Config is what a [Railroad] is made with: its bounds, which must be
// positive (the caller fills in the defaults), and the errors it hands out.
type Config struct {
	Concurrency int // the most tasks running at once, across all keys
	QueueSize   int // the most tasks one key holds, running or waiting
	MaxPending  int // the most tasks held in all, running or waiting

	Closed    error                               // of a submission after Close, and of each task Close drops
	QueueFull error                               // of a submission that finds no room and may not wait
	Panic     func(value any, stack []byte) error // the error of a task that panicked
}

// Railroad runs tasks one at a time per key, keys side by side. It is safe for
// concurrent use; make it with [New].
type Railroad[K comparable] struct {
	cfg Config

	wg    sync.WaitGroup // counts worker goroutines, for Close
	spare sync.Pool      // of *rail[K]: emptied rails, for reuse; the garbage collector empties it when idle

	mu       sync.Mutex       // protects every field below, and every rail and waiter
	rails    map[K]*rail[K]   // live rails: keys holding a task, a reserved slot or a waiter
	ready    fifo[*rail[K]]   // rails with a task to run and no worker, oldest first
	waiting  fifo[*waiter[K]] // submitters with a slot on their rail, waiting for room under MaxPending
	pending  int              // tasks admitted and not finished, running or queued: <= MaxPending
	running  int              // tasks running now: <= workers
	workers  int              // worker goroutines: <= Concurrency
	blocked  int              // submitters waiting for room, on a rail or in waiting
	peak     int              // most rails since rails was last made, to let a large map go
	closed   bool             // Close was called: no more submissions
	idle     chan struct{}    // made by Close, closed when pending reaches 0
	idleDone bool             // idle is closed
}

// rail is one key's queue. Its fields are protected by Railroad.mu.
type rail[K comparable] struct {
	key       K
	queue     fifo[job]               // admitted tasks not yet started, in submission order
	held      int                     // queued + running tasks + slots reserved by waiters: <= QueueSize
	scheduled bool                    // the rail is in Railroad.ready or a worker holds it
	cancel    context.CancelCauseFunc // cancels the running task's context; nil when none runs
	waiters   fifo[*waiter[K]]        // submitters waiting for a slot on this rail, oldest first
}

// job is one submitted task.
type job struct {
	ctx  context.Context             // the submitter's context, parent of the task's
	fn   func(context.Context) error // the task
	errc chan error                  // buffered 1; receives the task's error, exactly once
}

// waiter is a blocked submitter. Its fields are protected by Railroad.mu.
type waiter[K comparable] struct {
	rail   *rail[K]
	job    job
	ready  chan error // buffered 1; nil when the job was admitted, else why not
	global bool       // holds a slot on its rail and waits in Railroad.waiting
}

// New returns an empty railroad configured by cfg. It starts no goroutine.
func New[K comparable](cfg Config) *Railroad[K] {
	return &Railroad[K]{cfg: cfg, rails: map[K]*rail[K]{}}
}

// Submit queues task, which must not be nil, on key's rail and returns the
// channel that receives its error once it has run. When there is no room it
// waits, first come first served, if block is set, until ctx ends; else it
// returns cfg.QueueFull. After Close it returns cfg.Closed.
func (r *Railroad[K]) Submit(ctx context.Context, key K, task func(context.Context) error, block bool) (<-chan error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j := job{ctx: ctx, fn: task, errc: make(chan error, 1)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, r.cfg.Closed
	}
	rl := r.rails[key]
	if rl == nil {
		rl = r.newRail(key)
	}
	var w *waiter[K]
	if rl.held < r.cfg.QueueSize && rl.waiters.len() == 0 {
		rl.held++
		if r.pending < r.cfg.MaxPending && r.waiting.len() == 0 {
			r.admit(rl, j)
			r.mu.Unlock()
			return j.errc, nil
		}
		if !block {
			rl.held--
			r.reclaim(rl)
			r.mu.Unlock()
			return nil, r.cfg.QueueFull
		}
		w = &waiter[K]{rail: rl, job: j, ready: make(chan error, 1), global: true}
		r.waiting.push(w)
	} else {
		if !block {
			r.mu.Unlock() // rl holds tasks, so it stays
			return nil, r.cfg.QueueFull
		}
		w = &waiter[K]{rail: rl, job: j, ready: make(chan error, 1)}
		rl.waiters.push(w)
	}
	r.blocked++
	r.mu.Unlock()

	select {
	case err := <-w.ready:
		if err != nil {
			return nil, err
		}
		return j.errc, nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case err := <-w.ready: // admitted or refused while ctx was ending
		if err != nil {
			return nil, err
		}
		return j.errc, nil
	default:
	}
	r.blocked--
	if w.global {
		r.waiting.remove(func(x *waiter[K]) bool { return x == w })
		rl.held--
		r.admitRail(rl)
	} else {
		rl.waiters.remove(func(x *waiter[K]) bool { return x == w })
	}
	r.reclaim(rl)
	return nil, ctx.Err()
}

// newRail returns an empty rail for key, registered in r.rails. r.mu is held.
func (r *Railroad[K]) newRail(key K) *rail[K] {
	rl, _ := r.spare.Get().(*rail[K])
	if rl == nil {
		rl = &rail[K]{}
	}
	rl.key = key
	r.rails[key] = rl
	r.peak = max(r.peak, len(r.rails))
	return rl
}

// reclaim drops rl when it holds nothing: no task, no reserved slot, no waiter.
// r.mu is held.
func (r *Railroad[K]) reclaim(rl *rail[K]) {
	if rl.held > 0 || rl.waiters.len() > 0 || rl.scheduled {
		return
	}
	delete(r.rails, rl.key)
	var zero K
	rl.key = zero
	rl.queue.reset()
	rl.waiters.reset()
	r.spare.Put(rl)
	if len(r.rails) == 0 && r.peak > 64 {
		// Go maps never shrink: after a burst of many keys, let the big one go.
		// With no rail left, ready and waiting are empty too.
		r.rails, r.peak = map[K]*rail[K]{}, 0
		r.ready.reset()
		r.waiting.reset()
	}
}

// admit queues j on rl, whose slot j already holds, and makes sure a worker
// will run it. r.mu is held.
func (r *Railroad[K]) admit(rl *rail[K], j job) {
	rl.queue.push(j)
	r.pending++
	if rl.scheduled {
		return
	}
	rl.scheduled = true
	if r.workers < r.cfg.Concurrency {
		r.workers++
		r.wg.Add(1)
		go r.work(rl)
		return
	}
	r.ready.push(rl)
}

// admitWaiting admits the submitters waiting for room under MaxPending, in
// arrival order, while there is room. r.mu is held.
func (r *Railroad[K]) admitWaiting() {
	for r.waiting.len() > 0 && r.pending < r.cfg.MaxPending {
		w := r.waiting.pop()
		r.blocked--
		r.admit(w.rail, w.job)
		w.ready <- nil
	}
}

// admitRail gives the free slots of rl to its waiters, in arrival order. r.mu
// is held.
func (r *Railroad[K]) admitRail(rl *rail[K]) {
	for rl.waiters.len() > 0 && rl.held < r.cfg.QueueSize {
		w := rl.waiters.pop()
		rl.held++
		if r.pending < r.cfg.MaxPending && r.waiting.len() == 0 {
			r.blocked--
			r.admit(rl, w.job)
			w.ready <- nil
			continue
		}
		w.global = true
		r.waiting.push(w)
	}
}

// work is a worker goroutine: it runs the tasks of rl, and of the rails that
// become ready after it, until none is left.
func (r *Railroad[K]) work(rl *rail[K]) {
	defer r.wg.Done()
	r.mu.Lock()
	for rl != nil {
		rl = r.step(rl)
	}
	r.mu.Unlock()
}

// step runs the next task of rl, which holds one, and returns the rail to run
// next, or nil when the worker is to end. It is called, and returns, with r.mu
// held, which it lets go while the task runs.
func (r *Railroad[K]) step(rl *rail[K]) *rail[K] {
	if rl.queue.len() == 0 {
		// Close's cancel dropped the task this worker was started for
		// before the worker got the lock: nothing to run here.
		return r.handOn(rl)
	}
	j := rl.queue.pop()
	if j.ctx.Err() != nil {
		return r.finish(rl, j, context.Cause(j.ctx), false) // its submitter gave up
	}
	ctx, cancel := context.WithCancelCause(j.ctx)
	rl.cancel = cancel
	r.running++
	r.mu.Unlock()

	returned := false
	defer func() {
		if returned {
			return
		}
		// The task called runtime.Goexit, which ends this goroutine whatever
		// we do: finish the task, and hand on the rail to a new worker.
		cancel(ErrGoexit)
		r.mu.Lock()
		if next := r.finish(rl, j, ErrGoexit, true); next != nil {
			r.wg.Add(1)
			go r.work(next)
		}
		r.mu.Unlock()
	}()
	err := r.call(ctx, j.fn)
	returned = true
	cancel(nil)
	r.mu.Lock()
	return r.finish(rl, j, err, true)
}

// call calls fn, turning a panic into the error cfg.Panic makes of it.
func (r *Railroad[K]) call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = r.cfg.Panic(v, debug.Stack())
		}
	}()
	return fn(ctx)
}

// finish records that j, the task rl ran (or skipped), ended with err, lets
// waiting submitters in, and returns the rail the worker is to run next (see
// handOn). r.mu is held.
func (r *Railroad[K]) finish(rl *rail[K], j job, err error, ran bool) *rail[K] {
	if ran {
		r.running--
	}
	rl.cancel = nil
	r.pending--
	rl.held--
	r.admitWaiting()
	r.admitRail(rl)
	j.errc <- err // never blocks: buffered, and sent to once
	return r.handOn(rl)
}

// handOn returns the rail the worker that ran rl is to run next: rl again when
// it has more and no other rail is waiting for a worker, else the oldest ready
// rail, else nil, in which case the worker is counted out. r.mu is held.
func (r *Railroad[K]) handOn(rl *rail[K]) *rail[K] {
	var next *rail[K]
	switch {
	case rl.queue.len() > 0 && r.ready.len() > 0:
		r.ready.push(rl) // take turns with the rails waiting for a worker
		next = r.ready.pop()
	case rl.queue.len() > 0:
		next = rl
	default:
		rl.scheduled = false
		r.reclaim(rl)
		if r.ready.len() > 0 {
			next = r.ready.pop()
		}
	}
	if next == nil {
		r.workers--
	}
	r.checkIdle()
	return next
}

// checkIdle closes r.idle once Close was called and no task is left. r.mu is held.
func (r *Railroad[K]) checkIdle() {
	if r.closed && r.pending == 0 && !r.idleDone {
		r.idleDone = true
		close(r.idle)
	}
}

// Close refuses submissions from now on, and those waiting for room, with
// cfg.Closed, then waits until every accepted task has run. If ctx ends first
// it drops the tasks not started (their error is cfg.Closed), cancels the
// running ones, waits for them and returns ctx's error. Either way no task or
// goroutine of the railroad is left when it returns.
func (r *Railroad[K]) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.idle = make(chan struct{})
		for r.waiting.len() > 0 {
			w := r.waiting.pop()
			w.rail.held--
			w.ready <- r.cfg.Closed
		}
		for _, rl := range r.rails {
			for rl.waiters.len() > 0 {
				rl.waiters.pop().ready <- r.cfg.Closed
			}
			r.reclaim(rl) // deleting during range is allowed
		}
		r.blocked = 0
		r.checkIdle()
	}
	idle := r.idle
	r.mu.Unlock()

	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
		r.cancelAll()
		<-idle
	}
	r.wg.Wait()
	return err
}

// cancelAll drops every queued task and cancels the running ones.
func (r *Railroad[K]) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropAll()
}

// dropAll drops every queued task and cancels the running ones. A worker
// started for a rail whose task is dropped here may not have run yet; it finds
// the queue empty and hands on (see step). r.mu is held.
func (r *Railroad[K]) dropAll() {
	for r.ready.len() > 0 {
		r.ready.pop().scheduled = false // its queue is emptied below
	}
	for _, rl := range r.rails {
		for rl.queue.len() > 0 {
			j := rl.queue.pop()
			r.pending--
			rl.held--
			j.errc <- r.cfg.Closed
		}
		if rl.cancel != nil {
			rl.cancel(r.cfg.Closed)
		}
		r.reclaim(rl)
	}
	r.checkIdle()
}

// Stats is a snapshot of a railroad's load; see singletable.RailroadStats.
type Stats struct {
	Rails, Running, Queued, Blocked, Workers int
}

// Stats returns the railroad's current load, consistent under its lock.
func (r *Railroad[K]) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Rails:   len(r.rails),
		Running: r.running,
		Queued:  r.pending - r.running,
		Blocked: r.blocked,
		Workers: r.workers,
	}
}
