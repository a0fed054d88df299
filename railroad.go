package singletable

import (
	"context"
	"errors"
	"fmt"

	"github.com/singletable/singletable/internal/railroad"
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
var errGoexit = railroad.ErrGoexit

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
	rr   *railroad.Railroad[K] // the scheduler: rails, queues and workers (internal/railroad)
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
	o = o.withDefaults()
	return &Railroad[K]{opts: o, rr: railroad.New[K](railroad.Config{
		Concurrency: o.Concurrency,
		QueueSize:   o.QueueSize,
		MaxPending:  o.MaxPending,
		Closed:      ErrRailroadClosed,
		QueueFull:   ErrQueueFull,
		Panic:       func(v any, stack []byte) error { return &PanicError{Value: v, Stack: stack} },
	})}
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
	return r.rr.Submit(ctx, key, task, block)
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
	if err := r.rr.Close(ctx); err != nil {
		return errorf("railroad close: %w", err)
	}
	return nil
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
	s := r.rr.Stats()
	return RailroadStats{Rails: s.Rails, Running: s.Running, Queued: s.Queued, Blocked: s.Blocked, Workers: s.Workers}
}
