// Package condwrite sends conditional writes of one item and judges them after a
// lost answer, by the rule the entity pipeline keeps (pipeline.go in the root
// package): the SDK's retryer resends only failures that certainly applied
// nothing; after a failure that may have applied the write (a lost response, a
// reset, a 5xx, an ended context), the item is read back consistently and a
// judge says from it whether the write landed, did not (it is sent again) or was
// overtaken by another write (refused, as a failed condition). Nothing is sent
// twice unless it provably did not land, and what cannot be proven is
// [ErrUnproven].
//
// The lease and sweep-progress stores use it for every write they make.
package condwrite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Verdict is what the item read back says of a write whose answer was lost.
type Verdict uint8

// The verdicts.
const (
	Unproven  Verdict = iota // neither landed nor not landed can be shown
	Landed                   // the write was applied
	NotLanded                // the write was not applied; it may be sent again
	Overtaken                // the write was not applied, or was undone: another write won
)

// ErrUnproven marks a write whose outcome could not be learnt: the item could not
// be read back, or did not show either way. Callers wrap it in their own
// ambiguity sentinel.
var ErrUnproven = errors.New("outcome unknown")

// Item is an item as DynamoDB returns it; nil for a missing item.
type Item = map[string]types.AttributeValue

// Write is one conditional write to judge.
type Write struct {
	// Send sends the write once, passing optFn on to the client call: it keeps
	// the SDK's retryer from resending a failure that may have applied the
	// write. It returns the attributes DynamoDB returned.
	Send func(ctx context.Context, optFn func(*dynamodb.Options)) (Item, error)
	// ReadBack reads the item consistently (nil when missing).
	ReadBack func(ctx context.Context) (Item, error)
	// Judge says what the item as read back shows of the write.
	Judge func(cur Item) Verdict
	// Attempts bounds the sends, the first included (at least 1), and Wait
	// pauses before the next (attempt is 1 before the second send).
	Attempts int
	Wait     func(ctx context.Context, attempt int) error
	// TrustRefusals takes a failed condition on a send that followed no
	// ambiguous failure as refused without reading the item back: for writes
	// whose result another writer can make too, so that the item cannot show
	// whose it is (a create of a given item).
	TrustRefusals bool
}

// Do sends w and judges it. It returns the attributes DynamoDB returned, or the
// item as read back when a failure was judged to have landed. refused is true,
// with DynamoDB's error, when the write's condition failed or another write
// overtook it; any other error is a failure that applied nothing, or one
// matching [ErrUnproven].
//
// A failed condition is judged too: it may be the write's own earlier landing,
// resent by a retryer that ignored DefiniteRetries (a wrapper's, DAX's) or
// after a lost answer. That costs one read per refusal.
func (w Write) Do(ctx context.Context) (attrs Item, refused bool, err error) {
	maybeSent := false // an earlier send may have been applied
	for attempt := 1; ; attempt++ {
		attrs, err := w.Send(ctx, DefiniteRetries)
		if err == nil {
			return attrs, false, nil
		}
		if (ReplicatedConflict(err) || TxConflict(err)) && attempt < max(w.Attempts, 1) {
			// Refused, applied nothing: sent again, its condition judged afresh.
			if werr := w.Wait(ctx, attempt); werr != nil {
				return nil, false, fmt.Errorf("not applied: %w: %w", err, werr)
			}
			continue
		}
		ccf := IsConditionFailed(err)
		if !ccf && !Ambiguous(err) {
			if maybeSent {
				// This send applied nothing, but an earlier one, its answer
				// lost, may have: the item read back says.
				if cur, rerr := w.readBack(ctx); rerr == nil {
					switch w.Judge(cur) {
					case Landed:
						return cur, false, nil
					case Overtaken:
						return nil, true, err
					case NotLanded:
						return nil, false, err
					}
				}
				return nil, false, fmt.Errorf("%w: an earlier send's answer was lost, and its resend failed: %w", ErrUnproven, err)
			}
			return nil, false, err
		}
		maybeSent = maybeSent || !ccf
		if ccf && !maybeSent && w.TrustRefusals {
			return nil, true, err
		}
		cur, rerr := w.readBack(ctx)
		switch {
		case rerr != nil && ccf && !maybeSent:
			return nil, true, err // the condition failed on the only send: nothing landed, as far as can be known
		case rerr != nil:
			return nil, false, fmt.Errorf("%w: reading the item back failed (%v): %w", ErrUnproven, rerr, err)
		}
		switch w.Judge(cur) {
		case Landed:
			return cur, false, nil
		case Overtaken:
			return nil, true, err
		case NotLanded:
			if ccf { // the item allows the write, yet its condition failed: not this write's to judge
				return nil, true, err
			}
		default:
			if ccf && !maybeSent {
				return nil, true, err
			}
			return nil, false, fmt.Errorf("%w: the item read back shows neither that the write landed nor that it did not: %w", ErrUnproven, err)
		}
		if attempt >= max(w.Attempts, 1) {
			return nil, false, fmt.Errorf("not applied after %d attempts: %w", attempt, err)
		}
		if werr := w.Wait(ctx, attempt); werr != nil {
			return nil, false, fmt.Errorf("not applied: %w: %w", err, werr)
		}
	}
}

// readBack is w.ReadBack, refused once ctx has ended.
func (w Write) readBack(ctx context.Context) (Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("the context ended before the item could be read back: %w", err)
	}
	return w.ReadBack(ctx)
}

// ReadBack reads the item at key of table consistently with get (GetItem),
// retrying failed reads up to attempts times in all, pausing with wait.
func ReadBack(ctx context.Context, get func(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error),
	table string, key Item, attempts int, wait func(context.Context, int) error) (Item, error) {
	for attempt := 1; ; attempt++ {
		out, err := get(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
		if err == nil {
			return out.Item, nil
		}
		if attempt >= attempts || ctx.Err() != nil {
			return nil, err
		}
		if werr := wait(ctx, attempt); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}

// NotSentError is a call that was not sent because its context had ended
// before it (the table's client boundary refuses such calls): it applied
// nothing. Err is the context's cause.
type NotSentError struct {
	API string
	Err error
}

// Error says which call was not sent, and why.
// The cause's own "singletable: " is left out: the error wrapping this one
// says it.
func (e *NotSentError) Error() string {
	return e.API + " not sent: " + strings.TrimPrefix(e.Err.Error(), "singletable: ")
}

// Unwrap returns the context's cause.
func (e *NotSentError) Unwrap() error { return e.Err }

// NoOutputError is a call whose client returned neither an output nor an error
// (a stub or wrapper that returns nil, nil): nothing says whether a write was
// applied, so it is judged like a lost answer.
type NoOutputError struct {
	API    string
	Client string // the client's Go type
}

// Error names the client and the call, and what the client must do.
func (e *NoOutputError) Error() string {
	return "the client (" + e.Client + ") returned neither an output nor an error from " + e.API +
		" (a wrapper or stub must return the call's output, or an error)"
}

// Ambiguous reports whether a failed call may have been applied: the request may
// have reached DynamoDB but no answer came back (or the context ended while it
// was out), or the answer was a 5xx, or the client answered nothing at all
// ([NoOutputError]). A connection that could not be opened sent nothing, nor did
// a call refused before sending ([NotSentError]).
func Ambiguous(err error) bool { return ambiguous(err, true) }

// AmbiguousSent is [Ambiguous] for callers whose client is the SDK's or one that
// wraps a send cut short by its context as the SDK does (a CanceledError): a bare
// context error then sent nothing, and does not count.
func AmbiguousSent(err error) bool { return ambiguous(err, false) }

// ambiguous is Ambiguous; bareContext says whether a bare context error counts.
func ambiguous(err error, bareContext bool) bool {
	var send *smithyhttp.RequestSendError
	var de *smithy.DeserializationError
	var ce *smithy.CanceledError
	var re *smithyhttp.ResponseError
	var op *net.OpError
	var ns *NotSentError
	var no *NoOutputError
	switch {
	case errors.As(err, &ns):
		return false
	case errors.As(err, &no):
		return true
	case errors.As(err, &send) && errors.As(err, &op) && op.Op == "dial":
		return false
	case errors.As(err, &send), errors.As(err, &de), errors.As(err, &ce):
		return true
	case errors.As(err, &re):
		return re.HTTPStatusCode() >= 500
	case bareContext && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		return true // a client that is not the SDK's may return the context's error as it is
	}
	return false
}

// IsConditionFailed reports whether err is DynamoDB's failed condition.
func IsConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// definiteRetryer lets the SDK retry only failures that certainly applied
// nothing (throttling, for one), leaving ambiguous ones to the caller.
type definiteRetryer struct{ aws.RetryerV2 }

func (r definiteRetryer) IsErrorRetryable(err error) bool {
	return !Ambiguous(err) && r.RetryerV2.IsErrorRetryable(err)
}

// ReplicatedConflict reports whether err is a ReplicatedWriteConflictException:
// a write to a global table with multi-Region strong consistency refused, having
// applied nothing, because a request in another Region was modifying the item.
// Do sends such a write again; after its last attempt it returns the error as it
// is, not as refused.
func ReplicatedConflict(err error) bool {
	var rc *types.ReplicatedWriteConflictException
	return errors.As(err, &rc)
}

// TxConflict reports whether err is a TransactionConflictException: a
// PutItem, UpdateItem or DeleteItem refused, having applied nothing, because
// the item is part of a transaction in progress (a lease item whose fence a
// handler's write is checking, say). The SDK does not retry it. Do sends such
// a write again, as a ReplicatedConflict.
func TxConflict(err error) bool {
	var tc *types.TransactionConflictException
	return errors.As(err, &tc)
}

// DefiniteRetries is a per-call option that keeps the SDK's retryer from
// resending a failure that may have applied the write. It changes only the
// call's copy of the options; a client that ignores options (a wrapper, DAX)
// loses nothing but this protection, which the judging also covers: a resent
// write that lands twice fails its condition on the second landing, and the
// item read back shows the first.
func DefiniteRetries(o *dynamodb.Options) {
	switch r := o.Retryer.(type) {
	case nil:
	case aws.RetryerV2:
		o.Retryer = definiteRetryer{r}
	default:
		o.Retryer = definiteRetryer{retryerV2{r}}
	}
}

// retryerV2 adapts a plain Retryer.
type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}
