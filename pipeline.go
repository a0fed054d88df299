package singletable

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The write pipeline. Every single-item write (Put, Create, Update, Delete, and
// the write-back of a migrated item) is planned into a writeRequest and run by
// Table.execute: send, and on failure read back and judge. One loop, one judgement,
// whatever the kind:
//
//   - Success: done.
//   - A failure that applied nothing (a validation error, throttling, which the SDK
//     retries itself): returned.
//   - A failed condition on the first attempt: nothing was applied. The item as it
//     stood (returned with the failure where DynamoDB supports
//     ReturnValuesOnConditionCheckFailure, else read back) explains why: another
//     entity's item ([ErrTypeMismatch]), a version conflict ([*ConflictError]), a
//     missing item ([ErrNotFound]), an existing one ([ErrAlreadyExists]), a stale
//     index key input ([*KeyError]), or the caller's own condition ([ErrCondition]).
//   - A failure that may have applied the write (a lost response, a reset, a 5xx):
//     idempotent writes (unversioned Puts, Deletes, and Updates without Add) are
//     sent again; any other is judged from the item read back (consistently): its
//     receipt proves it landed; for a write pinned to the incarnation it was read
//     from, the same incarnation at the same version proves it did not (sent again)
//     and a moved version that another writer won (a conflict); anything else
//     cannot be proven either way and is [ErrAmbiguous]. Nothing is sent twice
//     unless it provably did not land.

// verdict is what reading an item back says of a write whose answer was lost.
type verdict uint8

const (
	unproven  verdict = iota // ErrAmbiguous
	landed                   // the write was applied
	notLanded                // the write was not applied and may be sent again
	lost                     // the write was not applied: another write won
)

// execute runs a planned write. It returns the attributes DynamoDB returned (an
// Update's item as stored) or, when the outcome was read back, the item as read.
func (t *Table) execute(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	b := t.opts.Backoff.withDefaults()
	maybeSent := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		attrs, err := w.call(ctx, t, definiteRetries)
		if err == nil {
			return attrs, nil
		}
		ccf := isConditionFailed(err)
		if !ccf && !ambiguous(err) {
			return nil, t.writeFailed(w, err)
		}
		w.ensureKey(t)
		if ccf && !maybeSent {
			cur, known := t.failedItem(ctx, w, err)
			return nil, t.explain(w, cur, known, err)
		}
		maybeSent = true
		if ctx.Err() != nil {
			return nil, t.unproven(w, err, "the context ended before the item could be read back")
		}
		var v verdict
		var cur map[string]types.AttributeValue
		if w.resendable && !ccf {
			v = notLanded // idempotent: the SDK would have sent it again too
		} else {
			var rerr error
			if cur, rerr = t.readBack(ctx, w.key); rerr != nil {
				return nil, t.unproven(w, err, "reading the item back also failed: "+rerr.Error())
			}
			v = t.judge(w, cur)
		}
		switch v {
		case landed:
			if w.wantsOld() { // returnvalues.go: the item it replaced was in the lost response
				return nil, t.unproven(w, err, "the write landed, but the item it replaced, asked for with its ReturnValues, was lost with its response")
			}
			return cur, nil
		case lost:
			return nil, t.explain(w, cur, true, err)
		case notLanded:
			if ccf { // the state allows the write, yet its condition failed: the caller's own
				return nil, t.explain(w, cur, true, err)
			}
		default:
			return nil, t.unproven(w, err, t.whyUnproven(w, cur))
		}
		if attempt >= b.MaxAttempts {
			return nil, t.itemErr(w, fmt.Errorf("not applied after %d attempts: %w", attempt, err))
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return nil, t.itemErr(w, fmt.Errorf("not applied: %w: %w", err, werr))
		}
	}
}

// judge tells from the item as read back (nil if missing) what became of a write
// whose answer was lost.
func (t *Table) judge(w *writeRequest, cur map[string]types.AttributeValue) verdict {
	if w.receipt.found(cur) {
		return landed
	}
	if w.kind == kindDelete && cur == nil {
		return landed // gone, as asked: whoever deleted it, nothing else was touched
	}
	p := w.pin
	if p == nil || !p.same(t, cur, w.newInc) || !w.info.isType(cur) {
		return unproven
	}
	// The incarnation the write was for is still there, so the write did not land
	// and was not overtaken by a delete: it landed nowhere.
	if w.version == nil {
		return notLanded
	}
	v, known := storedVersion(cur, w.version.attr)
	switch {
	case !known:
		return unproven
	case v == w.version.expected:
		return notLanded
	case v > w.version.expected && (w.kind == kindDelete || v-w.version.next < uint64(t.opts.Receipts)):
		return lost // the slot of version next holds the receipt of whoever wrote it
	}
	return unproven
}

// whyUnproven says, for an ErrAmbiguous, what the item read back showed.
func (t *Table) whyUnproven(w *writeRequest, cur map[string]types.AttributeValue) string {
	switch {
	case cur == nil:
		return "the item is missing: the write may have landed before it was deleted"
	case !w.info.isType(cur):
		return "an item of another type is at the key"
	case w.kind == kindDelete:
		return "an item is at the key: the delete may have landed and the item been created again since"
	case w.pin != nil && !w.pin.same(t, cur, w.newInc):
		return "the item was deleted and created again since it was read"
	case w.version != nil:
		v, _ := storedVersion(cur, w.version.attr)
		if v > w.version.next && v-w.version.next >= uint64(t.opts.Receipts) {
			return fmt.Sprintf("the item is at version %d, past the %d receipts kept", v, t.opts.Receipts)
		}
		return fmt.Sprintf("the item is at version %d without this write's receipt, and it may have been deleted and created again in between (Mutate tells these apart)", v)
	}
	return "the item does not hold this write's receipt, and it may have been replaced in between"
}

// failedItem returns the item as it stood when the write's condition failed, from
// the failure itself when DynamoDB returned it, else read back. known is false
// when it could not be learnt.
func (t *Table) failedItem(ctx context.Context, w *writeRequest, err error) (cur map[string]types.AttributeValue, known bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && ccf.Item != nil {
		t.failedItems.Store(1)
		return ccf.Item, true
	}
	if t.failedItems.Load() == 1 {
		return nil, true // this DynamoDB returns the item when there is one
	}
	cur, rerr := t.readBack(ctx, w.key)
	if rerr != nil {
		return nil, false
	}
	if cur != nil {
		t.failedItems.Store(-1)
	}
	return cur, true
}

// explain maps a failed condition, given the item as it stood (cur; nil when
// missing; known=false when unknown), to the error that says why nothing was
// written.
func (t *Table) explain(w *writeRequest, cur map[string]types.AttributeValue, known bool, err error) error {
	info := w.info
	switch {
	case !known:
		return t.writeFailed(w, err)
	case cur != nil && !info.isType(cur):
		got, _ := cur[t.opts.TypeAttribute].(*types.AttributeValueMemberS)
		typ := "no type"
		if got != nil {
			typ = t.opts.TypeAttribute + " " + got.Value
		}
		return t.itemErr(w, fmt.Errorf("the item at the key has %s, not %s: %w: %w: %w", typ, info.discriminator, ErrTypeMismatch, ErrCondition, err))
	}
	if ce := t.conflictOf(w, cur); ce != nil {
		ce.Err = err
		return ce
	}
	if berr := boundErr(w, cur); berr != nil {
		return t.itemErr(w, fmt.Errorf("%w: %w", berr, err))
	}
	switch {
	case w.kind == kindCreate && cur != nil:
		return t.itemErr(w, fmt.Errorf("%w: %w: %w", ErrAlreadyExists, ErrCondition, err))
	case w.kind == kindUpdate && !w.upsert && cur == nil:
		return t.itemErr(w, fmt.Errorf("%w: %w", ErrNotFound, err))
	}
	if cur != nil {
		for _, in := range w.inputs {
			if stored := cur[in.field.Name]; in.disagrees(cur) {
				return t.itemErr(w, &KeyError{Entity: info.name, Attribute: in.index, Field: in.field.GoName,
					Reason: info.attrName(in.field) + " in the key value (" + avText(in.av) + ") is not the stored one (" + avText(stored) + "): index keys are rendered only from stored values; pass the item as read, or Set the field too"})
			}
		}
	}
	return t.itemErr(w, fmt.Errorf("%w: %w", ErrCondition, err))
}

// boundErr explains a failed condition of a write that would have moved a number
// the library keeps past the largest its field holds: the version of a clobbering
// write, or the count of a counted one (nil otherwise).
func boundErr(w *writeRequest, cur map[string]types.AttributeValue) error {
	if cur == nil || w.kind == kindDelete || w.kind == kindCheck {
		return nil
	}
	info := w.info
	if vp := w.version; vp != nil && vp.clobber {
		if v, _ := storedVersion(cur, vp.attr); v >= vp.max {
			return fmt.Errorf("%s.%s: the stored version %d is the largest the field holds; a write would overflow it: %w", info.name, info.version.GoName, v, ErrInvalidInput)
		}
	}
	if h := info.hooks; h != nil && h.counter != nil && w.update != "" {
		if n, ok := cur[h.counter.Name].(*types.AttributeValueMemberN); ok {
			if v, perr := strconv.ParseUint(n.Value, 10, 64); !strings.HasPrefix(n.Value, "-") && (perr != nil || v >= counterMax(h.counter)) {
				return fmt.Errorf("%s: the stored count %s is the largest the field holds; counting this write would overflow it: %w", info.attrName(h.counter), n.Value, ErrInvalidInput)
			}
		}
	}
	return nil
}

// conflictOf returns the version conflict that the item as it stood shows for a
// versioned write, or nil when the version held.
func (t *Table) conflictOf(w *writeRequest, cur map[string]types.AttributeValue) *ConflictError {
	vp := w.version
	if vp == nil || vp.clobber || w.kind == kindCheck {
		return nil
	}
	ce := &ConflictError{Op: w.kind.String(), Entity: w.info.name, Key: w.keyStrings(t), Expected: vp.expected}
	if cur == nil {
		if w.kind == kindCreate || w.upsert || vp.expected == 0 && w.kind != kindUpdate {
			return nil // a missing item was allowed: the caller's condition failed
		}
		ce.Missing = true
		return ce
	}
	ce.Current, ce.CurrentKnown = storedVersion(cur, vp.attr)
	if ce.CurrentKnown && ce.Current == vp.expected && w.kind != kindCreate {
		if p := w.pin; p == nil || p.same(t, cur, w.newInc) {
			return nil
		}
	}
	return ce
}

// writeFailed wraps a failed write's error: a failed condition matches
// ErrCondition, and for Create also ErrAlreadyExists.
func (t *Table) writeFailed(w *writeRequest, err error) error {
	if isConditionFailed(err) {
		if w.kind == kindCreate {
			err = fmt.Errorf("%w: %w: %w", ErrAlreadyExists, ErrCondition, err)
		} else {
			err = fmt.Errorf("%w: %w", ErrCondition, err)
		}
	}
	return t.itemErr(w, w.pathHint(err)) // update_ops.go
}

// unproven is the ErrAmbiguous of a write whose outcome cannot be proven.
func (t *Table) unproven(w *writeRequest, err error, why string) error {
	return t.itemErr(w, fmt.Errorf("%w: %s: %w", ErrAmbiguous, why, err))
}

func (t *Table) itemErr(w *writeRequest, err error) error {
	return &ItemError{Op: w.kind.String(), Entity: w.info.name, Key: w.keyStrings(t), Err: err}
}

// ambiguous reports whether a failed call may have been applied: the request may
// have reached DynamoDB but no answer came back, or the answer was a 5xx. A
// connection that could not be opened sent nothing.
func ambiguous(err error) bool {
	var send *smithyhttp.RequestSendError
	var de *smithy.DeserializationError
	var ce *smithy.CanceledError
	var re *smithyhttp.ResponseError
	var op *net.OpError
	switch {
	case errors.As(err, &send) && errors.As(err, &op) && op.Op == "dial":
		return false
	case errors.As(err, &send), errors.As(err, &de), errors.As(err, &ce):
		return true
	case errors.As(err, &re):
		return re.HTTPStatusCode() >= 500
	}
	return false
}

// definiteRetryer lets the SDK retry only failures that certainly applied nothing
// (throttling, for one), leaving ambiguous ones to the pipeline.
type definiteRetryer struct{ aws.RetryerV2 }

func (r definiteRetryer) IsErrorRetryable(err error) bool {
	return !ambiguous(err) && r.RetryerV2.IsErrorRetryable(err)
}

func definiteRetries(o *dynamodb.Options) {
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

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// readBack reads an item consistently after a failed write, retrying failed reads
// by the table's Backoff. It returns nil for a missing item.
func (t *Table) readBack(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	b := t.opts.Backoff.withDefaults()
	for attempt := 1; ; attempt++ {
		out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: t.namePtr(), Key: key, ConsistentRead: aws.Bool(true)})
		if err == nil {
			return out.Item, nil
		}
		if attempt >= b.MaxAttempts || ctx.Err() != nil {
			return nil, err
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}
