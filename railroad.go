package singletable

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// PanicError is the error of a task that panicked. The railroad recovers the
// panic, so one failing task neither kills the process nor stops its rail.
type PanicError struct {
	Value any    // what the task passed to panic
	Stack []byte // the goroutine's stack where the task panicked, from debug.Stack
}

// Error gives the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("singletable: task panicked: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// errGoexit is the error of a task that called runtime.Goexit (t.FailNow in a
// test, for example) instead of returning.
var errGoexit = errors.New("singletable: task called runtime.Goexit")

// RailroadOptions configures a [Railroad]. A zero or negative field takes the
// default named in its comment.
type RailroadOptions struct {
	// Concurrency is the most tasks that run at once, across all keys: the
	// number of worker goroutines at the busiest. Default 64, for tasks that
	// mostly wait on the network; CPU-bound tasks want about GOMAXPROCS.
	Concurrency int
	// QueueSize is the most tasks one key may hold, running or waiting for
	// its turn. Default 64. One makes every submission to a busy key wait
	// until the key's task has finished.
	QueueSize int
	// MaxPending is the most tasks the railroad holds, running or waiting,
	// across all keys. It bounds the railroad's memory: a few hundred bytes
	// per task besides what the task's closure holds. Default 4096.
	MaxPending int
}

func (o RailroadOptions) withDefaults() RailroadOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 64
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 4096
	}
	return o
}

// Railroad is a per-key serial executor: every key has its own rail, a FIFO
// queue on which tasks run one after another in the order they were submitted,
// while the rails of different keys run side by side, at most
// [RailroadOptions.Concurrency] tasks at a time. It is what a stream consumer
// needs to apply the changes of one item in order while many items are in
// flight (package stream runs its handlers on one), and what a service needs to serialise the work
// on one key without holding a lock across calls.
//
// A rail costs nothing while its key is idle: it is made when a task for its
// key arrives and dropped as soon as its last task has finished, so memory
// follows the keys in flight (at most MaxPending, plus one per blocked
// submitter), not every key ever seen. Rails have no goroutine of their own: up to Concurrency
// worker goroutines, started on demand, take the ready rails in turn, one task
// at a time, so a key with a long queue does not starve the others. Two bounds
// give backpressure: QueueSize tasks per key and MaxPending tasks in all. A
// submitter that finds no room waits its turn, first come first served
// ([Railroad.Submit]), or is told at once ([Railroad.TrySubmit] returns
// [ErrQueueFull]).
//
// A Railroad is safe for concurrent use. Its zero value is not usable: create
// it with [NewRailroad], and end it with [Railroad.Close]. A Railroad that is
// idle holds no goroutine, so one that is dropped without Close leaks nothing
// once its tasks have finished.
type Railroad[K comparable] struct {
	opts RailroadOptions

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

// applyRailroad sets the fields of dst that o sets (non-zero).
func (o RailroadOptions) applyRailroad(dst *RailroadOptions) {
	if o.Concurrency != 0 {
		dst.Concurrency = o.Concurrency
	}
	if o.QueueSize != 0 {
		dst.QueueSize = o.QueueSize
	}
	if o.MaxPending != 0 {
		dst.MaxPending = o.MaxPending
	}
}

// NewRailroad returns an empty railroad for keys of type K, configured by
// opts (e.g. RailroadOptions{Concurrency: 8}; zero fields take the defaults).
// It starts no goroutine: workers start with the first task and end when there
// is nothing left to run.
func NewRailroad[K comparable](opts ...RailroadOption) *Railroad[K] {
	var o RailroadOptions
	for _, opt := range opts {
		opt.applyRailroad(&o)
	}
	return &Railroad[K]{opts: o.withDefaults(), rails: map[K]*rail[K]{}}
}

// Options returns the railroad's options, defaults filled in.
func (r *Railroad[K]) Options() RailroadOptions { return r.opts }

// Submit queues task on key's rail and returns a channel that receives the
// task's error (nil on success, a [*PanicError] if it panicked) once it has
// run. The channel is buffered, so a caller that does not care need not read
// it; it receives exactly one value and is never closed.
//
// The task runs after every task submitted earlier with the same key has
// returned; "earlier" is the order in which Submit calls took their place,
// which for one goroutine is program order. When the key already holds
// QueueSize tasks, or the railroad MaxPending, Submit blocks until there is
// room, first come first served, or until ctx ends, in which case it returns
// ctx's error and the task will not run.
//
// The task runs with a context derived from ctx: it carries ctx's values and
// ends when ctx ends, when Close gives up waiting, or when the task returns. A task whose ctx has
// ended before its turn does not run; its error is the context's. To run a
// task beyond the life of the caller's context, submit it with
// context.WithoutCancel(ctx).
//
// Submit returns [ErrRailroadClosed] after [Railroad.Close]. A task may submit
// to its own railroad, but not with a Submit that can wait forever: the room it
// waits for may be the room its own task holds. Use TrySubmit or a context that
// ends.
//
// Cost: about 240 bytes in four allocations per task (its result channel and
// context), a lock held for well under a microsecond, and a goroutine only
// when fewer than Concurrency workers are busy.
func (r *Railroad[K]) Submit(ctx context.Context, key K, task func(context.Context) error) (<-chan error, error) {
	return r.submit(ctx, key, task, true)
}

// TrySubmit is [Railroad.Submit] that never blocks: when there is no room for
// the task it returns [ErrQueueFull] at once. ctx is the parent of the task's
// context, as for Submit.
func (r *Railroad[K]) TrySubmit(ctx context.Context, key K, task func(context.Context) error) (<-chan error, error) {
	return r.submit(ctx, key, task, false)
}

// Do submits task as [Railroad.Submit] does and waits for its error. It returns
// early with ctx's error when ctx ends first; the task, whose context has then
// ended too, may still be running.
func (r *Railroad[K]) Do(ctx context.Context, key K, task func(context.Context) error) error {
	errc, err := r.Submit(ctx, key, task)
	if err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Railroad[K]) submit(ctx context.Context, key K, task func(context.Context) error, block bool) (<-chan error, error) {
	if task == nil {
		return nil, errors.New("singletable: railroad: nil task")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j := job{ctx: ctx, fn: task, errc: make(chan error, 1)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrRailroadClosed
	}
	rl := r.rails[key]
	if rl == nil {
		rl = r.newRail(key)
	}
	var w *waiter[K]
	if rl.held < r.opts.QueueSize && rl.waiters.len() == 0 {
		rl.held++
		if r.pending < r.opts.MaxPending && r.waiting.len() == 0 {
			r.admit(rl, j)
			r.mu.Unlock()
			return j.errc, nil
		}
		if !block {
			rl.held--
			r.reclaim(rl)
			r.mu.Unlock()
			return nil, ErrQueueFull
		}
		w = &waiter[K]{rail: rl, job: j, ready: make(chan error, 1), global: true}
		r.waiting.push(w)
	} else {
		if !block {
			r.mu.Unlock() // rl holds tasks, so it stays
			return nil, ErrQueueFull
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
	if r.workers < r.opts.Concurrency {
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
	for r.waiting.len() > 0 && r.pending < r.opts.MaxPending {
		w := r.waiting.pop()
		r.blocked--
		r.admit(w.rail, w.job)
		w.ready <- nil
	}
}

// admitRail gives the free slots of rl to its waiters, in arrival order. r.mu
// is held.
func (r *Railroad[K]) admitRail(rl *rail[K]) {
	for rl.waiters.len() > 0 && rl.held < r.opts.QueueSize {
		w := rl.waiters.pop()
		rl.held++
		if r.pending < r.opts.MaxPending && r.waiting.len() == 0 {
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
		cancel(errGoexit)
		r.mu.Lock()
		if next := r.finish(rl, j, errGoexit, true); next != nil {
			r.wg.Add(1)
			go r.work(next)
		}
		r.mu.Unlock()
	}()
	err := callTask(ctx, j.fn)
	returned = true
	cancel(nil)
	r.mu.Lock()
	return r.finish(rl, j, err, true)
}

// callTask calls fn, turning a panic into a [*PanicError].
func callTask(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
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

// Close stops the railroad: submissions from now on, and those blocked
// waiting for room, fail with [ErrRailroadClosed]. Close then drains: it waits
// until every task already accepted has run. If ctx ends first, Close cancels:
// it drops the tasks that have not started (their error is
// [ErrRailroadClosed]), cancels the context of those running, waits for them
// to return, and returns ctx's error. Either way, when Close returns no task
// is running and no goroutine of the railroad is left; a task that ignores its
// context holds Close up until it returns. Call Close with an ended context
// to cancel at once.
//
// Close may be called more than once, and concurrently; every call waits as
// the first one does. It must not be called from a task of the same railroad,
// which would wait for itself.
func (r *Railroad[K]) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.idle = make(chan struct{})
		for r.waiting.len() > 0 {
			w := r.waiting.pop()
			w.rail.held--
			w.ready <- ErrRailroadClosed
		}
		for _, rl := range r.rails {
			for rl.waiters.len() > 0 {
				rl.waiters.pop().ready <- ErrRailroadClosed
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
		err = fmt.Errorf("singletable: railroad close: %w", ctx.Err())
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
			j.errc <- ErrRailroadClosed
		}
		if rl.cancel != nil {
			rl.cancel(ErrRailroadClosed)
		}
		r.reclaim(rl)
	}
	r.checkIdle()
}

// RailroadStats is a snapshot of a railroad's load.
type RailroadStats struct {
	Rails   int // live rails: keys with a task running or queued, or a submitter waiting
	Running int // tasks running now
	Queued  int // tasks accepted and waiting for their turn
	Blocked int // Submit calls waiting for room
	Workers int // worker goroutines
}

// Stats returns the railroad's current load. It takes the railroad's lock for
// a moment; the numbers are consistent with one another.
func (r *Railroad[K]) Stats() RailroadStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RailroadStats{
		Rails:   len(r.rails),
		Running: r.running,
		Queued:  r.pending - r.running,
		Blocked: r.blocked,
		Workers: r.workers,
	}
}

// fifo is a first-in first-out queue on a ring buffer that grows as needed.
// The zero value is an empty queue.
type fifo[T any] struct {
	buf  []T
	head int // index of the oldest element
	n    int // number of elements
}

func (q *fifo[T]) len() int { return q.n }

func (q *fifo[T]) push(v T) {
	if q.n == len(q.buf) {
		buf := make([]T, max(4, 2*len(q.buf)))
		for i := range q.n {
			buf[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
}

// pop removes and returns the oldest element; the queue must not be empty.
func (q *fifo[T]) pop() T {
	var zero T
	v := q.buf[q.head]
	q.buf[q.head] = zero // let the garbage collector have it
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return v
}

// remove deletes the oldest element for which match is true, keeping the order
// of the rest. It costs O(n).
func (q *fifo[T]) remove(match func(T) bool) bool {
	for i := range q.n {
		if match(q.buf[(q.head+i)%len(q.buf)]) {
			for k := i; k < q.n-1; k++ {
				q.buf[(q.head+k)%len(q.buf)] = q.buf[(q.head+k+1)%len(q.buf)]
			}
			var zero T
			q.buf[(q.head+q.n-1)%len(q.buf)] = zero
			q.n--
			return true
		}
	}
	return false
}

// reset empties the queue and lets go of a buffer larger than 16 elements.
func (q *fifo[T]) reset() {
	if len(q.buf) > 16 {
		q.buf = nil
	} else {
		clear(q.buf)
	}
	q.head, q.n = 0, 0
}
