// Package backoff holds the computations behind the root package's Backoff and
// its batch calls' retries: the delay bound before a retry, a sleep that ends
// with its context, the pacing of the rounds of a batch call that DynamoDB
// answers in part, and which failures of such a call leave items unprocessed.
package backoff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkretry "github.com/aws/aws-sdk-go-v2/aws/retry"
)

// Bound is the upper bound of the delay before retry n (n >= 1, smaller counts
// as 1): min(limit, base·2^(n-1)), without overflow for large n.
func Bound(base, limit time.Duration, n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := base
	for i := 1; i < n; i++ {
		if d >= limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}

// Sleep waits d on a timer, returning early with the context's error; with no
// wait (d <= 0) it returns the context's error at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Unprocessed reports whether err, the error of one call of a batch, leaves
// what the call did not answer unprocessed in the root package's ErrUnprocessed
// sense: the context ended, or DynamoDB throttled or failed in a way the SDK
// retries (a 5xx, a lost connection) past the SDK's retries, so that asking
// again later may succeed. A client's refusal (DAX's of SDK middleware), a
// validation error or a missing table is not: the batch returns it with its own
// kind.
func Unprocessed(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return sdkretry.IsErrorRetryables(sdkretry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// Rounds paces the rounds of a batch call that DynamoDB answers in part.
type Rounds struct {
	MaxAttempts int                                    // rounds in a row without progress before giving up
	Wait        func(ctx context.Context, n int) error // waits before retry n
	// Event is told of each round that left items unprocessed (the root
	// package's trace event).
	Event            func(ctx context.Context, unprocessed, attempt int)
	attempt, stalled int
}

// After is called after each round that sent n requests and got unprocessed of
// them back. It waits before the next round when some were unprocessed, and
// returns an error when the loop must stop: the context ended, or MaxAttempts
// rounds in a row made no progress.
func (r *Rounds) After(ctx context.Context, n, unprocessed int) error {
	if unprocessed == 0 {
		r.attempt, r.stalled = 0, 0
		return nil
	}
	if unprocessed == n {
		r.stalled++
	} else {
		r.stalled = 0
	}
	r.attempt++
	r.Event(ctx, unprocessed, r.attempt)
	if r.stalled >= r.MaxAttempts {
		return fmt.Errorf("%d rounds in a row without progress", r.stalled)
	}
	return r.Wait(ctx, r.attempt)
}
