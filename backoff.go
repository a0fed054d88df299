package singletable

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/singletable/singletable/internal/backoff"
)

// Backoff is the retry schedule shared by every retry loop in the package: batch
// retries of unprocessed items and consistency waits ([WaitFor]). Delays
// grow exponentially with full jitter: before retry n (n = 1, 2, ...) it sleeps a
// random duration in [0, min(Cap, Base·2^(n-1))).
//
// The zero value is usable: each zero field takes the default named in its comment.
// A Backoff is a value; copy it freely. It is safe for concurrent use when Rand and
// Sleep are.
type Backoff struct {
	Base        time.Duration // first delay bound; default 25ms
	Cap         time.Duration // largest delay bound; default 2s
	MaxAttempts int           // attempts in all, the first included; default 10
	// MaxElapsed, when set, also ends the retries of loops that honour it (Mutate)
	// once this long has passed since their first attempt.
	MaxElapsed time.Duration
	Rand       func() float64                                   // uniform in [0,1); default math/rand/v2.Float64
	Sleep      func(ctx context.Context, d time.Duration) error // default: a timer that returns ctx.Err() early
	Now        func() time.Time                                 // the clock waits are measured by; default time.Now
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 25 * time.Millisecond
	}
	if b.Cap <= 0 {
		b.Cap = 2 * time.Second
	}
	if b.MaxAttempts <= 0 {
		b.MaxAttempts = 10
	}
	if b.Rand == nil {
		b.Rand = rand.Float64
	}
	if b.Sleep == nil {
		b.Sleep = sleepContext
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	return b
}

// Bound returns the upper bound of the delay before retry n (n >= 1):
// min(Cap, Base·2^(n-1)).
func (b Backoff) Bound(n int) time.Duration {
	b = b.withDefaults()
	return backoff.Bound(b.Base, b.Cap, n)
}

// Delay returns the jittered delay before retry n (n >= 1).
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	return time.Duration(b.Rand() * float64(b.Bound(n)))
}

// Wait sleeps for Delay(n), returning early with the context's error.
// Under [Explain] it does not wait: the call stops there.
func (b Backoff) Wait(ctx context.Context, n int) error {
	if err := explainWait(ctx); err != nil { // explain.go
		return err
	}
	b = b.withDefaults()
	return b.Sleep(ctx, b.Delay(n))
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if err := explainWait(ctx); err != nil { // explain.go
		return err
	}
	return backoff.Sleep(ctx, d)
}
