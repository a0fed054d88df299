package uniqueguard

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attempts is what [Send] asks of a guarded write: one TransactWriteItems of
// the item's action and its guards, under a ClientRequestToken.
type Attempts interface {
	// Prepare reads the unique values stored (but for a Create), plans the
	// actions against them and draws a new token.
	Prepare(ctx context.Context) error
	// Send sends the actions as one transaction under the token.
	Send(ctx context.Context) error
	// NewToken draws a new token for the same actions.
	NewToken() error
	// Landed judges, from the item read back, whether an attempt landed.
	Landed(ctx context.Context) bool
	// Done settles a write that landed: what it returns.
	Done(ctx context.Context) (map[string]types.AttributeValue, error)
	// Failed judges a cancellation not by conflicts alone: again, to plan the
	// write afresh (the unique values stored moved, or a guard it frees is
	// another's), or the error that says why nothing was written.
	Failed(ctx context.Context, tce *types.TransactionCanceledException, err error) (again bool, _ error)
	// Refused is the error of a transaction neither cancelled nor lost.
	Refused(err error) error
	// NotApplied is the error of the write, not applied for the reason err.
	NotApplied(err error) error
	// Unproven is the error of a write whose outcome the item read back does
	// not prove, err the last answer, why the reason.
	Unproven(err error, why string) error
}

// Policy is how [Send] sends again.
type Policy struct {
	MaxAttempts int
	Wait        func(ctx context.Context, attempt int) error   // the backoff before attempt+1
	Lost        func(error) bool                               // an answer lost: the transaction may have landed
	Conflicts   func(*types.TransactionCanceledException) bool // cancelled by conflicts alone
	// GaveUp is the error of a write not applied after attempts, each
	// cancelled: by other writers' transactions alone (conflicts), or because
	// the unique values stored kept changing; err is the last cancellation.
	GaveUp func(attempts int, conflicts bool, err error) error
}

// Send runs a guarded write to its end:
//
//   - Success: done.
//   - Cancelled only by conflicts: sent again after the backoff, under the same
//     token when an earlier attempt may have landed, else a new one; after
//     MaxAttempts, GaveUp.
//   - Cancelled otherwise: judged by Failed: an error, or planned again from a
//     new read and sent under a new token; after MaxAttempts, GaveUp.
//   - A lost answer (or a transaction in progress): sent again under the same
//     token, which DynamoDB applies at most once, answering success if the
//     first landed. When it cannot be sent again (the context ended, the
//     attempts ran out), Landed judges it, else it is Unproven.
//   - Anything else: Refused.
//
// An attempt cancelled after one that may have landed is judged by Landed
// first: under the same token, a landed one would have been answered with
// success, so a cancellation means none did unless the item says so.
func Send(ctx context.Context, a Attempts, p Policy) (map[string]types.AttributeValue, error) {
	fresh, maybeSent := true, false
	for attempt := 1; ; attempt++ {
		if fresh {
			if err := a.Prepare(ctx); err != nil {
				return nil, err
			}
			fresh = false
		}
		err := a.Send(ctx)
		if err == nil {
			return a.Done(ctx)
		}
		var tce *types.TransactionCanceledException
		var tip *types.TransactionInProgressException
		switch {
		case errors.As(err, &tce):
			if maybeSent && a.Landed(ctx) {
				return a.Done(ctx)
			}
			if p.Conflicts(tce) && attempt >= p.MaxAttempts {
				return nil, p.GaveUp(attempt, true, err)
			}
			if p.Conflicts(tce) {
				if werr := p.Wait(ctx, attempt); werr != nil {
					return nil, a.NotApplied(fmt.Errorf("not applied: %w: %w", err, werr))
				}
				if !maybeSent { // no earlier attempt landed: a token of its own
					if err := a.NewToken(); err != nil {
						return nil, err
					}
				}
				continue
			}
			// Under the same token, an earlier attempt that landed would have
			// been answered with success: none did.
			again, ferr := a.Failed(ctx, tce, err)
			if ferr != nil {
				return nil, ferr
			}
			if !again || attempt >= p.MaxAttempts {
				return nil, p.GaveUp(attempt, false, err)
			}
			fresh, maybeSent = true, false
		case errors.As(err, &tip) || p.Lost(err):
			maybeSent = true
			if ctx.Err() == nil && attempt < p.MaxAttempts {
				if werr := p.Wait(ctx, attempt); werr == nil {
					continue // the same actions under the same token
				}
			}
			if ctx.Err() != nil {
				return nil, a.Unproven(err, "the context ended before the transaction could be sent again or the item read back")
			}
			if a.Landed(ctx) {
				return a.Done(ctx)
			}
			return nil, a.Unproven(err, "the transaction's answer was lost, and the item read back does not prove it landed")
		case maybeSent:
			// Resent under the same token after a lost answer, and refused this
			// time (throttled past the SDK's retries, say): the refusal says
			// nothing of the earlier attempt. Landed, or unknown.
			if ctx.Err() == nil && a.Landed(ctx) {
				return a.Done(ctx)
			}
			return nil, a.Unproven(err, "an earlier attempt's answer was lost, and its resend under the same token failed")
		default:
			return nil, a.Refused(err)
		}
	}
}
