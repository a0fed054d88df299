package singletable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
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

// TestWaitsWithInjectedIndexLag puts DynamoDB's eventual consistency back in front
// of DynamoDB Local: new writes stay invisible to index reads for a while.
func TestWaitsWithInjectedIndexLag(t *testing.T) {
	tbl, inj := faultTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	fast := RetryBackoff(Backoff{Base: 5 * time.Millisecond, Cap: 50 * time.Millisecond, MaxAttempts: 100})

	for _, lag := range []fault.Lag{{Reads: 3}, {Duration: 800 * time.Millisecond}} {
		inj.SetGSILag(lag)
		o := order("c-lag", int(lag.Duration/time.Millisecond)+lag.Reads)
		_, err := orders.Put(ctx, o)
		require.NoError(t, err)
		page, err := orders.Query(ctx, tOrder{Status: o.Status}, On("GSI1"), SKEqual(tOrder{CreatedAt: o.CreatedAt, OrderID: o.OrderID}))
		require.NoError(t, err)
		assert.Empty(t, page.Items, "%+v: the index does not show the write yet", lag)

		got, stats, err := orders.WaitIndexed(ctx, "GSI1", o, fast)
		require.NoError(t, err, "%+v", lag)
		assert.Equal(t, o, got)
		assert.Greater(t, stats.Attempts, 1, "%+v", lag)
		t.Logf("lag %+v: visible after %d attempts in %v", lag, stats.Attempts, stats.Elapsed)

		// Move it to another status: the old entry stays visible for a while.
		moved := o
		moved.Status = "CANCELLED"
		_, err = orders.Update(ctx, o, Set("status", moved.Status))
		require.NoError(t, err)
		stats, err = orders.WaitMoved(ctx, "GSI1", o, moved, fast)
		require.NoError(t, err, "%+v", lag)
		assert.Greater(t, stats.Attempts, 2, "%+v", lag)

		// Delete it: the index forgets it only after the lag.
		require.NoError(t, orders.Delete(ctx, moved))
		stats, err = orders.WaitUnindexed(ctx, "GSI1", moved, fast)
		require.NoError(t, err, "%+v", lag)
		assert.Greater(t, stats.Attempts, 1, "%+v", lag)
	}

	// Never visible: the wait ends with ErrConsistencyTimeout at its deadline.
	inj.SetGSILag(fault.Lag{Duration: time.Hour})
	o := order("c-lag", 99)
	_, err := orders.Put(ctx, o)
	require.NoError(t, err)
	dctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
	defer cancel()
	deadline, _ := dctx.Deadline()
	_, stats, err := orders.WaitIndexed(dctx, "GSI1", o, RetryBackoff(Backoff{Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, MaxAttempts: 1000}))
	require.ErrorIs(t, err, ErrConsistencyTimeout)
	var te *ConsistencyTimeoutError
	require.ErrorAs(t, err, &te)
	// It ends at its deadline, not after MaxAttempts (1000 attempts would take
	// about 100 s) nor after a sleep that outlasts the deadline. The bound leaves
	// room for a loaded machine under -race, where the scheduler alone has held
	// the test 200 ms past the deadline (CI rehearsal, 2026-11-27).
	assert.Less(t, time.Since(deadline), time.Second, "ends at the deadline, not after MaxAttempts")
	assert.Greater(t, te.Attempts, 2)
	assert.Equal(t, stats.Attempts, te.Attempts)
	assert.Contains(t, err.Error(), "attempts")
}
