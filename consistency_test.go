package singletable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock and sleeper that only moves when slept on.
type fakeClock struct {
	mu    sync.Mutex // protects now and slept
	now   time.Time
	slept []time.Duration
	rand  []float64
	drawn int
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) Rand() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rand[c.drawn%len(c.rand)]
	c.drawn++
	return r
}

func TestBackoffScheduleFollowsFormula(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0), rand: []float64{0.999, 0.5, 0.25, 0, 0.75}}
	b := Backoff{Base: 10 * time.Millisecond, Cap: 300 * time.Millisecond, MaxAttempts: 9, Rand: clock.Rand, Sleep: clock.Sleep, Now: clock.Now}
	reads := 0
	_, stats, err := WaitFor(context.Background(), func(context.Context) (int, error) {
		reads++
		return reads, nil
	}, func(int) bool { return false }, RetryBackoff(b))
	require.ErrorIs(t, err, ErrConsistencyTimeout)
	var te *ConsistencyTimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 9, te.Attempts)
	assert.Equal(t, 9, reads)
	assert.Equal(t, 9, stats.Attempts)

	// Before retry n the sleep is rand · min(cap, base · 2^(n-1)).
	require.Len(t, clock.slept, 8)
	var total time.Duration
	for i, d := range clock.slept {
		n := i + 1
		bound := min(b.Cap, b.Base<<(n-1))
		want := time.Duration(clock.rand[i%len(clock.rand)] * float64(bound))
		assert.Equal(t, want, d, "sleep before retry %d", n)
		assert.Equal(t, bound, b.Bound(n))
		total += d
	}
	assert.Equal(t, total, te.Elapsed, "elapsed time is measured on the injected clock")
	assert.Equal(t, b.Cap, b.Bound(100), "no overflow for large attempts")
}

func TestWaitForSucceedsAndReportsAttempts(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0), rand: []float64{0.5}}
	b := Backoff{Rand: clock.Rand, Sleep: clock.Sleep, Now: clock.Now}
	n := 0
	got, stats, err := WaitFor(context.Background(), func(context.Context) (int, error) {
		n++
		if n == 2 {
			return 0, errors.New("throttled") // transient errors are retried
		}
		return n, nil
	}, func(v int) bool { return v >= 4 }, RetryBackoff(b))
	require.NoError(t, err)
	assert.Equal(t, 4, got)
	assert.Equal(t, 4, stats.Attempts)

	_, stats, err = WaitFor(context.Background(), func(context.Context) (int, error) {
		return 0, ErrInvalidKey
	}, func(int) bool { return true }, RetryBackoff(b))
	assert.ErrorIs(t, err, ErrInvalidKey, "errors no retry can fix end the wait at once")
	assert.Equal(t, 1, stats.Attempts)
}

func TestWaitForStopsAtDeadlineAndCancel(t *testing.T) {
	never := func(context.Context) (bool, error) { return false, nil }
	done := func(v bool) bool { return v }
	b := Backoff{Base: 5 * time.Millisecond, Cap: 40 * time.Millisecond, MaxAttempts: 1 << 20}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_, stats, err := WaitFor(ctx, never, done, RetryBackoff(b))
	late := time.Since(deadline)
	require.ErrorIs(t, err, ErrConsistencyTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, late, 50*time.Millisecond, "ends within 50 ms of the deadline")
	assert.Greater(t, stats.Attempts, 3)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, _, err = WaitFor(ctx, never, done, RetryBackoff(Backoff{Base: time.Second, Cap: 5 * time.Second, MaxAttempts: 100}))
	stopped := time.Since(start) - 100*time.Millisecond
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrConsistencyTimeout)
	assert.Less(t, stopped, 50*time.Millisecond, "a cancel stops the wait within 50 ms, mid-sleep")
}
