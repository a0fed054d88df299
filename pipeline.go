package singletable

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/condwrite"
)

// The write pipeline. Every single-item write (Put, Create, Update, Delete, and
// the write-back of a migrated item) is planned into a writeRequest and run by
// Table.execute: send, and on failure read back and judge. One loop, one judgement,
// whatever the kind:
//
//   - Success: done.
//   - A failure that applied nothing (a validation error, throttling, which the SDK
//     retries itself): returned.
//   - A ReplicatedWriteConflictException (a global table with multi-Region strong
//     consistency: another Region was writing the item): the write applied
//     nothing, so it is sent again, with [Backoff], its condition judged afresh;
//     after Backoff.MaxAttempts it is returned as it is, never as a failed
//     condition or a version conflict.
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
	abstain                  // a part of the write that cannot tell (writePart.judge)
)

// rank orders verdicts by how much they hold back: one part that cannot prove a
// write did not land makes it unproven, whatever the others say.
var rank = [...]int{abstain: 0, notLanded: 1, lost: 2, unproven: 3}

// execute runs a planned write. It returns what the call returns of what
// DynamoDB returned (an Update's item as stored, the item a Put replaced) or,
// when the outcome was read back, of the item as read; the write's parts have
// settled the value written.
func (t *Table) execute(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	if f, err := fenceOf(ctx, w.kind.String()); err != nil || (f != nil && w.kind != kindWriteBack) {
		if err != nil {
			return nil, t.itemErr(w, err)
		}
		return t.executeFenced(ctx, w, f) // fence.go: a transaction with the fence's check
	}
	if w.uniq != nil {
		return t.executeUnique(ctx, w) // unique.go: a transaction with the guards
	}
	b := t.opts.Backoff.withDefaults()
	maybeSent := false // an earlier attempt may have been applied
	blind := false     // and it was sent again without reading the item (resendable)
	for attempt := 1; ; attempt++ {
		attrs, err := w.call(ctx, t, condwrite.DefiniteRetries)
		if err == nil {
			return t.settled(w, attrs, false)
		}
		if blind && !isConditionFailed(err) && !ambiguous(err) {
			// Sent again after a lost answer without judging it: this failure
			// says nothing of the earlier attempt, which may have landed.
			return nil, t.unproven(w, err, fmt.Sprintf("the answer to attempt %d was lost and the write was sent again, which failed", attempt-1))
		}
		if replicatedConflict(err) && attempt < b.MaxAttempts {
			// Refused, applied nothing: sent again after the backoff, its
			// condition judged afresh. After the last attempt it is returned
			// as it is, never as a failed condition or a version conflict.
			if werr := b.Wait(ctx, attempt); werr != nil {
				return nil, t.itemErr(w, fmt.Errorf("not applied: %w: %w", err, werr))
			}
			continue
		}
		ccf := isConditionFailed(err)
		if !ccf && !ambiguous(err) {
			return nil, t.writeFailed(w, err)
		}
		w.ensureKey(t)
		if ccf && !maybeSent {
			cur, known := t.failedItem(ctx, w, err)
			if known && attempt < b.MaxAttempts && w.adapt(cur) { // update_ops.go: a list stored as NULL
				continue
			}
			return nil, t.explain(w, cur, known, err)
		}
		maybeSent = true
		if ctx.Err() != nil {
			return nil, t.unproven(w, err, "the context ended before the item could be read back")
		}
		var v verdict
		var why string
		var cur map[string]types.AttributeValue
		blind = w.resendable && !ccf
		if blind {
			v = notLanded // idempotent: the SDK would have sent it again too
			t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "resend", Err: err})
		} else {
			t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "read back", Err: err}) // trace.go
			var rerr error
			if cur, rerr = t.readBack(ctx, w.key); rerr != nil {
				return nil, t.unproven(w, err, "reading the item back also failed: "+rerr.Error())
			}
			v, why = t.judge(w, cur)
			t.event(ctx, SpanEvent{Name: EventResolved, Outcome: v.String()})
		}
		switch v {
		case landed:
			if w.answerOnly { // the item it replaced was in the lost answer
				return nil, t.unproven(w, err, "the write landed, but the item it replaced, asked for with its ReturnValues, was lost with its response")
			}
			return t.settled(w, cur, true)
		case lost:
			return nil, t.explain(w, cur, true, err)
		case notLanded:
			if ccf { // the state allows the write, yet its condition failed: the caller's own
				return nil, t.explain(w, cur, true, err)
			}
		default:
			return nil, t.unproven(w, err, why)
		}
		if blind && attempt >= b.MaxAttempts {
			return nil, t.unproven(w, err, fmt.Sprintf("sent %d times (it is idempotent), and every answer was lost", attempt))
		}
		if attempt >= b.MaxAttempts {
			return nil, t.itemErr(w, fmt.Errorf("not applied after %d attempts: %w", attempt, err))
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			if blind {
				return nil, t.unproven(w, err, "its answer was lost, and the wait to send it again ended: "+werr.Error())
			}
			return nil, t.itemErr(w, fmt.Errorf("not applied: %w: %w", err, werr))
		}
	}
}

// settled lets the write's parts settle what it stored (attrs: what DynamoDB
// returned, or the item read back when lost is set).
func (t *Table) settled(w *writeRequest, attrs map[string]types.AttributeValue, lost bool) (map[string]types.AttributeValue, error) {
	out, err := w.settle(attrs, lost) // planner.go
	if err != nil {
		return nil, t.itemErr(w, err)
	}
	return out, nil
}

// judge tells from the item as read back (nil if missing) what became of a write
// whose answer was lost, and for an unproven one, why: the write's parts say
// whether its receipt is there and, for a write pinned to the incarnation it was
// read from, whether the version moved.
func (t *Table) judge(w *writeRequest, cur map[string]types.AttributeValue) (verdict, string) {
	if w.kind == kindDelete && cur == nil {
		return landed, "" // gone, as asked: whoever deleted it, nothing else was touched
	}
	v, why := abstain, ""
	for _, part := range w.parts {
		pv, reason := part.judge(w, cur)
		if pv == landed {
			return landed, ""
		}
		if rank[pv] > rank[v] {
			v = pv
		}
		if why == "" {
			why = reason
		}
	}
	if why == "" {
		why = "the item does not hold this write's receipt, and it may have been replaced in between"
	}
	switch {
	case cur == nil:
		return unproven, "the item is missing: the write may have landed before it was deleted"
	case !w.info.isType(cur):
		return unproven, "an item of another type is at the key"
	case w.kind == kindDelete:
		return unproven, "an item is at the key: the delete may have landed and the item been created again since"
	case w.pin == nil:
		return unproven, why // a write not pinned to what it read cannot be proven not to have landed
	case !w.pin.same(t, cur, w.newInc):
		return unproven, "the item was deleted and created again since it was read"
	case v == abstain:
		// The incarnation the write was for is still there, so the write did not
		// land and was not overtaken by a delete: it landed nowhere.
		return notLanded, ""
	}
	return v, why
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
	if ce, perr := w.explainParts(cur); ce != nil {
		ce.Err = err
		return ce
	} else if perr != nil {
		return t.itemErr(w, fmt.Errorf("%w: %w", perr, err))
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
					Reason: info.attrName(in.field) + " in the key value (" + attrvalue.Text(in.av) + ") is not the stored one (" + attrvalue.Text(stored) + "): index keys are rendered only from stored values; pass the item as read, or Set the field too"})
			}
		}
	}
	return t.itemErr(w, fmt.Errorf("%w: %w", ErrCondition, err))
}

// holdsReceipt reports whether the item read back (cur) holds the write's
// receipt: a part of the write judges that it landed.
func (w *writeRequest) holdsReceipt(cur map[string]types.AttributeValue) bool {
	for _, part := range w.parts {
		if v, _ := part.judge(w, cur); v == landed {
			return true
		}
	}
	return false
}

// explainParts asks the write's parts why its condition failed, given the item
// as it stood: a version conflict first, else the first other reason (a version
// or count at its field's bound); nil and nil when none is theirs.
func (w *writeRequest) explainParts(cur map[string]types.AttributeValue) (*ConflictError, error) {
	var first error
	for _, part := range w.parts {
		err := part.explain(w, cur)
		if ce, ok := err.(*ConflictError); ok {
			return ce, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
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
	return t.itemErr(w, w.hint(err)) // update_ops.go
}

// unproven is the ErrAmbiguous of a write whose outcome cannot be proven.
func (t *Table) unproven(w *writeRequest, err error, why string) error {
	return t.itemErr(w, fmt.Errorf("%w: %s: %w", ErrAmbiguous, why, err))
}

func (t *Table) itemErr(w *writeRequest, err error) error {
	return &ItemError{Op: w.kind.String(), Entity: w.info.name, Key: w.keyStrings(t), Err: err}
}

// ambiguous reports whether a failed call may have been applied: the request may
// have reached DynamoDB but no answer came back, or the answer was a 5xx, or the
// client answered nothing at all. A connection that could not be opened sent
// nothing, nor did a call refused before sending (its context had ended).
func ambiguous(err error) bool { return condwrite.AmbiguousSent(err) }

// replicatedConflict reports whether err is a ReplicatedWriteConflictException:
// a write to a global table with multi-Region strong consistency refused, having
// applied nothing, because a request in another Region was modifying the item.
// The SDK does not retry it.
func replicatedConflict(err error) bool { return condwrite.ReplicatedConflict(err) }

func isConditionFailed(err error) bool { return condwrite.IsConditionFailed(err) }

// readBack reads an item consistently after a failed write, retrying failed reads
// by the table's Backoff. It returns nil for a missing item.
func (t *Table) readBack(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	b := t.opts.Backoff.withDefaults()
	return condwrite.ReadBack(ctx, t.client.GetItem, t.name, key, b.MaxAttempts, b.Wait)
}
