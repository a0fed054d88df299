package railroad

// White-box tests of the scheduler: its rails map, its queue and the race
// between Close and a worker's first turn. The behaviour through the public
// API is tested in the root package (railroad_test.go).

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(m.Run())) }

var (
	errClosed    = errors.New("closed")
	errQueueFull = errors.New("queue full")
)

// newRailroad returns a railroad with these bounds (zero: 64, 64, 4096).
func newRailroad[K comparable](concurrency, queue, pending int) *Railroad[K] {
	orDefault := func(n, d int) int {
		if n <= 0 {
			return d
		}
		return n
	}
	return New[K](Config{
		Concurrency: orDefault(concurrency, 64),
		QueueSize:   orDefault(queue, 64),
		MaxPending:  orDefault(pending, 4096),
		Closed:      errClosed,
		QueueFull:   errQueueFull,
		Panic:       func(v any, _ []byte) error { return errors.New("panic") },
	})
}

// noLeaks fails t if a goroutine started during the test outlives it.
func noLeaks(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent()}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
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

// TestRailroadReclaimsIdleRails: once their tasks are done, rails and workers
// are gone, without Close.
func TestRailroadReclaimsIdleRails(t *testing.T) {
	noLeaks(t)
	r := newRailroad[int](8, 0, 0)
	var errcs []<-chan error
	for round := range 3 {
		for k := range 1000 {
			errc, err := r.Submit(t.Context(), k+1000*round, func(context.Context) error { return nil }, true)
			require.NoError(t, err)
			errcs = append(errcs, errc)
		}
	}
	for _, errc := range errcs {
		require.NoError(t, recv(t, errc))
	}
	assert.Equal(t, Stats{}, r.Stats(), "no rail, task or worker left")
	r.mu.Lock()
	assert.Empty(t, r.rails)
	// The map is remade whenever it empties after holding more than 64 rails,
	// so what is left is a map that never grew past 64 since (workers may have
	// emptied it between submissions, and a small map is kept).
	assert.LessOrEqual(t, r.peak, 64, "the map that held up to 1,000 rails was let go")
	r.mu.Unlock()
}

func TestRailroadFIFO(t *testing.T) {
	var q fifo[int]
	for i := range 10 {
		q.push(i)
	}
	for i := range 5 {
		assert.Equal(t, i, q.pop())
	}
	for i := 10; i < 20; i++ {
		q.push(i) // wraps around, then grows
	}
	assert.True(t, q.remove(func(v int) bool { return v == 12 }))
	assert.False(t, q.remove(func(v int) bool { return v == 99 }))
	var got []int
	for q.len() > 0 {
		got = append(got, q.pop())
	}
	assert.Equal(t, []int{5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19}, got)
}

// TestRailroadCloseCancelsBeforeWorkerStarts: Close gives up, and drops the
// queued tasks, between a worker's start for a new rail and its first turn
// at the lock. The worker then finds its rail empty; it must hand on, not run
// a task that is no longer there (this panicked once, on a nil context).
func TestRailroadCloseCancelsBeforeWorkerStarts(t *testing.T) {
	noLeaks(t)
	r := newRailroad[int](4, 0, 0)
	errc := make(chan error, 1)
	ran := false
	r.mu.Lock() // the worker admit starts waits for this lock
	rl := r.newRail(1)
	rl.held++
	r.admit(rl, job{ctx: t.Context(), fn: func(context.Context) error { ran = true; return nil }, errc: errc})
	r.closed = true
	r.idle = make(chan struct{})
	r.dropAll() // what Close does when its context ends
	r.mu.Unlock()
	r.wg.Wait()

	assert.ErrorIs(t, recv(t, errc), errClosed)
	assert.False(t, ran)
	assert.Equal(t, Stats{}, r.Stats())
	assert.NoError(t, r.Close(t.Context()))
}
