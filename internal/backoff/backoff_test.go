package backoff

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBound doubles from base up to the limit, for any count.
func TestBound(t *testing.T) {
	ms := time.Millisecond
	for n, want := range map[int]time.Duration{-1: 25 * ms, 0: 25 * ms, 1: 25 * ms, 2: 50 * ms, 3: 100 * ms, 7: 1600 * ms, 8: 2000 * ms, 1 << 30: 2000 * ms} {
		assert.Equal(t, want, Bound(25*ms, 2*time.Second, n), "n=%d", n)
	}
	assert.Equal(t, 50*ms, Bound(30*ms, 50*ms, 2), "min(limit, 60ms)")
	assert.Equal(t, 30*ms, Bound(30*ms, 50*ms, 1))
	assert.Equal(t, time.Duration(1<<62), Bound(1, 1<<62, 1000), "no overflow")
}

// TestSleep ends with its timer or its context.
func TestSleep(t *testing.T) {
	require.NoError(t, Sleep(context.Background(), time.Millisecond))
	require.NoError(t, Sleep(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, Sleep(ctx, 0), context.Canceled, "no wait: the context's error at once")
	start := time.Now()
	assert.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
	assert.Less(t, time.Since(start), time.Minute)
}

// TestUnprocessed: what a batch call's failure leaves unprocessed.
func TestUnprocessed(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}
	server := &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 500}}, Err: errors.New("boom")}
	for _, err := range []error{context.Canceled, fmt.Errorf("x: %w", context.DeadlineExceeded), throttled, server} {
		assert.True(t, Unprocessed(err), "%v", err)
	}
	for _, err := range []error{errors.New("refused"), &smithy.GenericAPIError{Code: "ValidationException"}, &smithy.GenericAPIError{Code: "ResourceNotFoundException"}} {
		assert.False(t, Unprocessed(err), "%v", err)
	}
}

// TestRounds waits after a partial round, resets after a full one, and stops
// after MaxAttempts rounds in a row without progress.
func TestRounds(t *testing.T) {
	var waits []int
	type ev struct{ unprocessed, attempt int }
	var events []ev
	r := &Rounds{MaxAttempts: 3,
		Wait:  func(_ context.Context, n int) error { waits = append(waits, n); return nil },
		Event: func(_ context.Context, u, a int) { events = append(events, ev{u, a}) }}
	ctx := context.Background()
	require.NoError(t, r.After(ctx, 10, 0))
	require.NoError(t, r.After(ctx, 10, 4)) // progress
	require.NoError(t, r.After(ctx, 4, 4))  // stalled 1
	require.NoError(t, r.After(ctx, 4, 4))  // stalled 2
	require.NoError(t, r.After(ctx, 4, 2))  // progress: the stall count starts again
	require.NoError(t, r.After(ctx, 2, 0))  // done: the attempts start again
	require.NoError(t, r.After(ctx, 5, 5))  // stalled 1
	require.NoError(t, r.After(ctx, 5, 5))  // stalled 2
	err := r.After(ctx, 5, 5)               // stalled 3
	require.EqualError(t, err, "3 rounds in a row without progress")
	assert.Equal(t, []int{1, 2, 3, 4, 1, 2}, waits, "no wait after the last")
	assert.Equal(t, []ev{{4, 1}, {4, 2}, {4, 3}, {2, 4}, {5, 1}, {5, 2}, {5, 3}}, events)

	stop := errors.New("context over")
	r = &Rounds{MaxAttempts: 10, Wait: func(context.Context, int) error { return stop }, Event: func(context.Context, int, int) {}}
	assert.ErrorIs(t, r.After(ctx, 3, 1), stop, "the wait's error ends the loop")
}
