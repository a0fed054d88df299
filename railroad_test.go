package singletable

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// noLeaks fails t if a goroutine started during the test outlives it. The
// package's TestMain is shared with the DynamoDB Local tests, so the check is
// per test, against the goroutines that ran before it. The keep-alive connections
// of the shared HTTP client (persistConn's read and write loops) are the client's
// pool, not the test's: a test that dials DynamoDB Local may leave one idle.
func noLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	opts = append(opts, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

func railroadOpts(concurrency, queue, pending int) RailroadOptions {
	return RailroadOptions{Concurrency: concurrency, QueueSize: queue, MaxPending: pending}
}

// eventually waits up to five seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv returns the value errc receives within five seconds.
func recv(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no result within 5s")
		return nil
	}
}

// TestRailroadOrder10kKeys runs 20 tasks on each of 10,000 keys from four
// submitters, with queues small enough that submitters block: every key's tasks
// run in submission order and never overlap, several keys run at once, and never
// more than the limit.
func TestRailroadOrder10kKeys(t *testing.T) {
	noLeaks(t)
	const keys, perKey, limit = 10_000, 20, 8
	r := NewRailroad[int](railroadOpts(limit, 4, 512))
	last := make([]int, keys)          // per key, the last round run; touched only by the key's tasks
	busy := make([]atomic.Int32, keys) // per key, tasks running now
	var active, maxActive, ran atomic.Int64
	var bad atomic.Value

	task := func(k, round int) func(context.Context) error {
		return func(context.Context) error {
			if busy[k].Add(1) != 1 {
				bad.CompareAndSwap(nil, fmt.Sprintf("key %d: two tasks at once", k))
			}
			n := active.Add(1)
			for m := maxActive.Load(); n > m && !maxActive.CompareAndSwap(m, n); m = maxActive.Load() {
			}
			if last[k] != round-1 {
				bad.CompareAndSwap(nil, fmt.Sprintf("key %d: round %d ran after round %d", k, round, last[k]))
			}
			last[k] = round
			runtime.Gosched() // give other workers a chance to overlap
			active.Add(-1)
			busy[k].Add(-1)
			ran.Add(1)
			return nil
		}
	}
	for k := range last {
		last[k] = -1
	}
	const submitters = 4
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Go(func() {
			for round := range perKey {
				for k := g; k < keys; k += submitters {
					if _, err := r.Submit(t.Context(), k, task(k, round)); err != nil {
						bad.CompareAndSwap(nil, err.Error())
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, r.Close(t.Context()))
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	assert.Equal(t, int64(keys*perKey), ran.Load())
	for k, round := range last {
		if round != perKey-1 {
			t.Fatalf("key %d: last round %d, want %d", k, round, perKey-1)
		}
	}
	m := maxActive.Load()
	t.Logf("%d tasks; at most %d at once (limit %d)", ran.Load(), m, limit)
	assert.Greater(t, m, int64(1), "keys never ran concurrently")
	assert.LessOrEqual(t, m, int64(limit))
	assert.Equal(t, RailroadStats{}, r.Stats())
}

// TestRailroadConcurrencyLimit blocks tasks of distinct keys: exactly the limit
// run, the rest wait, and they all run when released.
func TestRailroadConcurrencyLimit(t *testing.T) {
	noLeaks(t)
	const limit = 3
	r := NewRailroad[string](railroadOpts(limit, 0, 0))
	gate := make(chan struct{})
	var running, maxRunning atomic.Int32
	var errcs []<-chan error
	for i := range 10 {
		errc, err := r.Submit(t.Context(), fmt.Sprint("k", i), func(context.Context) error {
			n := running.Add(1)
			for m := maxRunning.Load(); n > m && !maxRunning.CompareAndSwap(m, n); m = maxRunning.Load() {
			}
			<-gate
			running.Add(-1)
			return nil
		})
		require.NoError(t, err)
		errcs = append(errcs, errc)
	}
	eventually(t, "three tasks running", func() bool { return running.Load() == limit })
	time.Sleep(20 * time.Millisecond) // a fourth would have started by now
	s := r.Stats()
	assert.Equal(t, RailroadStats{Rails: 10, Running: limit, Queued: 10 - limit, Workers: limit}, s)
	close(gate)
	for _, errc := range errcs {
		require.NoError(t, recv(t, errc))
	}
	assert.Equal(t, int32(limit), maxRunning.Load())
	require.NoError(t, r.Close(t.Context()))
}

func TestRailroadTrySubmitQueueFull(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[string](railroadOpts(4, 2, 3))
	gate := make(chan struct{})
	wait := func(context.Context) error { <-gate; return nil }
	a1, err := r.TrySubmit(t.Context(), "a", wait)
	require.NoError(t, err)
	a2, err := r.TrySubmit(t.Context(), "a", wait)
	require.NoError(t, err)
	_, err = r.TrySubmit(t.Context(), "a", wait)
	require.ErrorIs(t, err, ErrQueueFull, "a third task on a key with QueueSize 2")
	b1, err := r.TrySubmit(t.Context(), "b", wait)
	require.NoError(t, err)
	_, err = r.TrySubmit(t.Context(), "c", wait)
	require.ErrorIs(t, err, ErrQueueFull, "a fourth task with MaxPending 3")
	assert.Equal(t, 2, r.Stats().Rails, "a refused key leaves no rail behind")
	close(gate)
	for _, errc := range []<-chan error{a1, a2, b1} {
		require.NoError(t, recv(t, errc))
	}
	c, err := r.TrySubmit(t.Context(), "c", wait)
	require.NoError(t, err, "room again once the tasks are done")
	require.NoError(t, recv(t, c))
	require.NoError(t, r.Close(t.Context()))
}

// TestRailroadSubmitBlocks: a submitter without room waits, in arrival order,
// until there is room or its context ends; one that gives up leaves no trace.
func TestRailroadSubmitBlocks(t *testing.T) {
	for _, bound := range []string{"per key", "global"} {
		t.Run(bound, func(t *testing.T) {
			noLeaks(t)
			opts := railroadOpts(4, 1, 0)
			key := func(int) string { return "k" }
			if bound == "global" {
				opts = railroadOpts(4, 0, 1)
				key = func(i int) string { return fmt.Sprint("k", i) }
			}
			r := NewRailroad[string](opts)
			gate := make(chan struct{})
			var mu sync.Mutex
			var order []int
			task := func(i int) func(context.Context) error {
				return func(context.Context) error {
					if i == 0 {
						<-gate
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					return nil
				}
			}
			first, err := r.Submit(t.Context(), key(0), task(0))
			require.NoError(t, err)

			// A submitter whose context ends while it waits gets the context's error.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
			defer cancel()
			_, err = r.Submit(ctx, key(99), task(99))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 0, r.Stats().Blocked)

			// Blocked submitters get in first come, first served.
			results := make([]<-chan error, 4)
			var wg sync.WaitGroup
			for i := 1; i <= 3; i++ {
				wg.Go(func() {
					errc, err := r.Submit(t.Context(), key(i), task(i))
					assert.NoError(t, err)
					results[i] = errc
				})
				eventually(t, "submitter blocked", func() bool { return r.Stats().Blocked == i })
			}
			close(gate)
			wg.Wait()
			require.NoError(t, recv(t, first))
			for i := 1; i <= 3; i++ {
				require.NoError(t, recv(t, results[i]))
			}
			assert.Equal(t, []int{0, 1, 2, 3}, order, "task 99 never ran; the others in arrival order")
			require.NoError(t, r.Close(t.Context()))
		})
	}
}

func TestRailroadPanic(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[string]()
	errc, err := r.Submit(t.Context(), "k", func(context.Context) error { panic("boom") })
	require.NoError(t, err)
	cause := errors.New("cause")
	errc2, err := r.Submit(t.Context(), "k", func(context.Context) error { panic(cause) })
	require.NoError(t, err)
	after, err := r.Submit(t.Context(), "k", func(context.Context) error { return nil })
	require.NoError(t, err)

	err = recv(t, errc)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Contains(t, err.Error(), "singletable: task panicked: boom")
	assert.Contains(t, string(pe.Stack), "railroad_test.go", "the stack shows where")
	assert.ErrorIs(t, recv(t, errc2), cause, "a panic with an error unwraps to it")
	assert.NoError(t, recv(t, after), "the rail goes on after a panic")
	require.NoError(t, r.Close(t.Context()))
}

func TestRailroadGoexit(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[string](railroadOpts(1, 0, 0))
	errc, err := r.Submit(t.Context(), "k", func(context.Context) error { runtime.Goexit(); return nil })
	require.NoError(t, err)
	other, err := r.Submit(t.Context(), "other", func(context.Context) error { return nil })
	require.NoError(t, err)
	after, err := r.Submit(t.Context(), "k", func(context.Context) error { return nil })
	require.NoError(t, err)
	assert.ErrorIs(t, recv(t, errc), errGoexit)
	assert.NoError(t, recv(t, other))
	assert.NoError(t, recv(t, after))
	require.NoError(t, r.Close(t.Context()))
}

// TestRailroadContexts: the task's context carries the submitter's values and
// ends with it; a task whose context ended before its turn does not run.
func TestRailroadContexts(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[string]()
	type ctxKey struct{}
	gate := make(chan struct{})
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	first, err := r.Submit(ctx, "k", func(ctx context.Context) error {
		if ctx.Value(ctxKey{}) != "v" {
			return errors.New("value lost")
		}
		<-gate
		<-ctx.Done()
		return ctx.Err()
	})
	require.NoError(t, err)
	ran := false
	second, err := r.Submit(ctx, "k", func(context.Context) error { ran = true; return nil })
	require.NoError(t, err)
	cancel()
	close(gate)
	assert.ErrorIs(t, recv(t, first), context.Canceled)
	assert.ErrorIs(t, recv(t, second), context.Canceled)
	assert.False(t, ran)
	_, err = r.Submit(ctx, "k", func(context.Context) error { return nil })
	assert.ErrorIs(t, err, context.Canceled, "an ended context submits nothing")

	assert.NoError(t, r.Do(t.Context(), "k", func(context.Context) error { return nil }))
	want := errors.New("task error")
	assert.Equal(t, want, r.Do(t.Context(), "k", func(context.Context) error { return want }))
	require.NoError(t, r.Close(t.Context()))
}

func TestRailroadCloseDrains(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[int](railroadOpts(2, 2, 4))
	gate := make(chan struct{})
	var ran atomic.Int32
	var errcs []<-chan error
	for i := range 4 {
		errc, err := r.Submit(t.Context(), i%2, func(context.Context) error {
			<-gate
			ran.Add(1)
			return nil
		})
		require.NoError(t, err)
		errcs = append(errcs, errc)
	}
	blocked := make(chan error)
	go func() {
		_, err := r.Submit(t.Context(), 5, func(context.Context) error { return nil })
		blocked <- err
	}()
	eventually(t, "submitter blocked", func() bool { return r.Stats().Blocked == 1 })

	closed := make(chan error)
	go func() { closed <- r.Close(context.Background()) }()
	assert.ErrorIs(t, <-blocked, ErrRailroadClosed, "a blocked submitter is refused")
	eventually(t, "Close to begin", func() bool {
		_, err := r.TrySubmit(t.Context(), 9, func(context.Context) error { return nil })
		return errors.Is(err, ErrRailroadClosed)
	})
	select {
	case <-closed:
		t.Fatal("Close returned before the tasks ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(gate)
	require.NoError(t, <-closed)
	assert.Equal(t, int32(4), ran.Load(), "Close drained every accepted task")
	for _, errc := range errcs {
		assert.NoError(t, recv(t, errc))
	}
	assert.NoError(t, r.Close(t.Context()), "Close again")
}

func TestRailroadCloseCancels(t *testing.T) {
	noLeaks(t)
	r := NewRailroad[int](railroadOpts(1, 0, 0))
	started := make(chan struct{})
	running, err := r.Submit(t.Context(), 1, func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return context.Cause(ctx)
	})
	require.NoError(t, err)
	ran := false
	queued, err := r.Submit(t.Context(), 2, func(context.Context) error { ran = true; return nil })
	require.NoError(t, err)
	<-started

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = r.Close(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, strings.HasPrefix(err.Error(), "singletable: "))
	assert.ErrorIs(t, recv(t, running), ErrRailroadClosed, "the running task is canceled with ErrRailroadClosed as the cause")
	assert.ErrorIs(t, recv(t, queued), ErrRailroadClosed, "the queued task is dropped")
	assert.False(t, ran)
	assert.Equal(t, RailroadStats{}, r.Stats())
	_, err = r.Submit(t.Context(), 1, func(context.Context) error { return nil })
	assert.ErrorIs(t, err, ErrRailroadClosed)
}

// TestRailroadSlowConsumer floods a railroad whose tasks are slow from eight
// submitters, two of them on one hot key: the bounds hold throughout (tasks held per key and in all,
// workers, goroutines), and every task runs.
func TestRailroadSlowConsumer(t *testing.T) {
	noLeaks(t)
	const workers, queue, pending, submitters, perSubmitter, keys = 4, 8, 64, 8, 300, 50
	r := NewRailroad[int](railroadOpts(workers, queue, pending))
	var inFlight atomic.Int64 // submitted (Submit returned) and not finished
	var perKey [keys]atomic.Int64
	var maxInFlight, maxKey, maxGoroutines atomic.Int64
	record := func(v *atomic.Int64, n int64) {
		for m := v.Load(); n > m && !v.CompareAndSwap(m, n); m = v.Load() {
		}
	}
	base := int64(runtime.NumGoroutine())
	var done atomic.Int64
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Go(func() {
			for i := range perSubmitter {
				k := (g*7 + i*13) % keys
				if g < 2 {
					k = 0 // a hot key, held to QueueSize
				}
				payload := make([]byte, 1024) // what a record would hold
				_, err := r.Submit(t.Context(), k, func(context.Context) error {
					time.Sleep(100 * time.Microsecond)
					payload[0]++
					perKey[k].Add(-1)
					inFlight.Add(-1)
					done.Add(1)
					return nil
				})
				if !assert.NoError(t, err) {
					return
				}
				record(&maxInFlight, inFlight.Add(1))
				record(&maxKey, perKey[k].Add(1))
				record(&maxGoroutines, int64(runtime.NumGoroutine())-base)
				s := r.Stats()
				assert.LessOrEqual(t, s.Queued+s.Running, pending)
				assert.LessOrEqual(t, s.Workers, workers)
				assert.LessOrEqual(t, s.Rails, keys)
			}
		})
	}
	wg.Wait()
	require.NoError(t, r.Close(t.Context()))
	assert.Equal(t, int64(submitters*perSubmitter), done.Load())
	t.Logf("at most %d tasks held (bound %d), %d on one key (bound %d), %d goroutines over the %d submitters",
		maxInFlight.Load(), pending, maxKey.Load(), queue, maxGoroutines.Load(), submitters)
	assert.LessOrEqual(t, maxInFlight.Load(), int64(pending))
	assert.LessOrEqual(t, maxKey.Load(), int64(queue))
	assert.Greater(t, maxKey.Load(), int64(queue/2), "the hot key filled its queue")
	assert.Greater(t, maxInFlight.Load(), int64(pending/2), "the submitters filled the railroad")
	assert.LessOrEqual(t, maxGoroutines.Load(), int64(submitters+workers+2))
}

func TestRailroadOptions(t *testing.T) {
	assert.Equal(t, RailroadOptions{Concurrency: 64, QueueSize: 64, MaxPending: 4096}, NewRailroad[int]().Options())
	assert.Equal(t, RailroadOptions{Concurrency: 2, QueueSize: 3, MaxPending: 4}, NewRailroad[int](railroadOpts(2, 3, 4)).Options())
	_, err := NewRailroad[int]().Submit(t.Context(), 1, nil)
	assert.Error(t, err)
}

// BenchmarkRailroad runs no-op tasks on 1,000 keys, ten per key per operation,
// through a Railroad and through the obvious alternative: a goroutine per task
// that locks its key's mutex. The mutex baseline neither keeps order nor
// bounds its goroutines; it is what the railroad must not be much slower than.
func BenchmarkRailroad(b *testing.B) {
	const keys, perKey = 1000, 10
	noop := func(context.Context) error { return nil }
	ctx := context.Background()
	b.Run("railroad", func(b *testing.B) {
		r := NewRailroad[int]()
		defer r.Close(ctx)
		var wg sync.WaitGroup
		task := func(ctx context.Context) error { err := noop(ctx); wg.Done(); return err }
		b.ReportAllocs()
		for b.Loop() {
			wg.Add(keys * perKey)
			for i := range perKey * keys {
				if _, err := r.Submit(ctx, i%keys, task); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys*perKey), "ns/task")
	})
	b.Run("mutex-per-key", func(b *testing.B) {
		var locks sync.Map // key -> *sync.Mutex
		var wg sync.WaitGroup
		b.ReportAllocs()
		for b.Loop() {
			wg.Add(keys * perKey)
			for i := range perKey * keys {
				go func(k int) {
					defer wg.Done()
					mu, ok := locks.Load(k)
					if !ok {
						mu, _ = locks.LoadOrStore(k, new(sync.Mutex))
					}
					mu.(*sync.Mutex).Lock()
					_ = noop(ctx)
					mu.(*sync.Mutex).Unlock()
				}(i % keys)
			}
			wg.Wait()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys*perKey), "ns/task")
	})
}

// TestRailroadCloseCancelsUnderLoad is the same race, reached through the
// API: tasks submitted on fresh keys, then Close with an ended context at
// once, many times over. Every task ends with nil or ErrRailroadClosed.
func TestRailroadCloseCancelsUnderLoad(t *testing.T) {
	noLeaks(t)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	for range 300 {
		r := NewRailroad[int](railroadOpts(8, 0, 0))
		var errcs []<-chan error
		for k := range 16 {
			errc, err := r.Submit(t.Context(), k, func(context.Context) error { return nil })
			require.NoError(t, err)
			errcs = append(errcs, errc)
		}
		_ = r.Close(ended)
		for _, errc := range errcs {
			if err := recv(t, errc); err != nil {
				require.ErrorIs(t, err, ErrRailroadClosed)
			}
		}
		require.Equal(t, RailroadStats{}, r.Stats())
	}
}
