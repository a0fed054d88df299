package singletable

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/uniqueguard"
)

// Sending the writes of unique values (unique.go): one TransactWriteItems of
// the item's action and its guards, under a ClientRequestToken made for it.
//
//   - Success: done; an Update (and a Put that learns what was stored) reads
//     the item back consistently for what it returns.
//   - Cancelled only by TransactionConflict: sent again after the backoff.
//   - A guard claimed that another item holds: a *UniqueError.
//   - The item's unique values no longer the ones read (another writer in
//     between), or a guard freed that another item holds: read again, planned
//     again, sent under a new token (bounded by Backoff.MaxAttempts).
//   - The item's own condition (type, version, existence, the caller's):
//     explained as any write's (pipeline.go).
//   - A lost answer (a reset, a timeout, a 5xx) or TransactionInProgress: sent
//     again under the same token, which DynamoDB applies at most once, answering
//     success if the first landed. When it cannot be sent again (the context
//     ended, the attempts ran out), the item read back judges it: its receipt, or
//     for a Delete the item and the guards it freed gone, proves it landed;
//     anything else is ErrAmbiguous.

// executeUnique runs a write that claims or frees unique values (w.uniq):
// uniqueguard.Send's loop over a uniqueRun.
func (t *Table) executeUnique(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	w.ensureKey(t)
	r := &uniqueRun{t: t, w: w, base: w.b.Clone(), baseCond: w.cond, notMine: map[string]bool{}}
	b := t.opts.Backoff.withDefaults()
	return uniqueguard.Send(ctx, r, uniqueguard.Policy{MaxAttempts: b.MaxAttempts, Wait: b.Wait, Lost: ambiguous, Conflicts: onlyConflicts, GaveUp: r.gaveUp})
}

// gaveUp is the error of a unique write that lost every attempt's race: it
// matches ErrConflict and ErrCondition, never ErrNotUnique or ErrAmbiguous.
func (r *uniqueRun) gaveUp(n int, conflicts bool, err error) error {
	why := "other writers' transactions on the item or its guards conflicted with each (TransactionConflict)"
	if !conflicts {
		why = "each read the item, and another write had changed its unique values (or what the write depends on) when its transaction ran"
		if r.why != "" {
			why += " (the last: " + r.why + ")"
		}
	}
	return r.t.itemErr(r.w, fmt.Errorf("nothing was written: gave up after %d attempts: %s: %w: %w: %w", n, why, ErrConflict, ErrCondition, err))
}

// uniqueRun is one executeUnique's write, its actions and token, and what the
// attempts so far learnt: the uniqueguard.Attempts of uniqueguard.Send.
type uniqueRun struct {
	t        *Table
	w        *writeRequest
	base     expr.Builder // the write's own expression, before any guard's part
	baseCond string
	notMine  map[string]bool // guards found held by another item
	stored   map[string]types.AttributeValue
	actions  []types.TransactWriteItem
	token    string
	why      string // what the last attempt found moved, for gaveUp
}

// Prepare reads the unique values stored (but for a Create), plans the
// write's guards against them, and draws a new token.
func (r *uniqueRun) Prepare(ctx context.Context) error {
	t, w := r.t, r.w
	if w.uniq.kind != kindCreate {
		cur, err := t.readBack(ctx, w.key)
		if err != nil {
			return t.itemErr(w, fmt.Errorf("reading the unique values stored: nothing written: %w", err))
		}
		r.stored = cur
	}
	guards, err := w.uniq.build(t, w, r.base, r.baseCond, r.stored, r.notMine)
	if err != nil {
		return t.itemErr(w, err)
	}
	r.actions = append(append(r.actions[:0], w.transactItem(t.name)), guards...)
	if len(r.actions) > maxTxActions {
		return t.itemErr(w, fmt.Errorf("the write and its %d unique-value guards come to %d actions, over the %d of a transaction: %w", len(guards), len(r.actions), maxTxActions, ErrInvalidInput))
	}
	return r.NewToken()
}

// Send sends the actions under the token.
func (r *uniqueRun) Send(ctx context.Context) error {
	// DefiniteRetries: a lost answer reaches uniqueguard.Send's judging rather
	// than hide behind a later throttle of the SDK's retries.
	_, err := r.t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: r.actions, ClientRequestToken: aws.String(r.token)}, condwrite.DefiniteRetries)
	return err
}

// NewToken draws a new token.
func (r *uniqueRun) NewToken() (err error) {
	r.token, err = newToken()
	return err
}

// Landed, Done, Failed, Refused, NotApplied and Unproven are the Table's
// judgements of the write (below, and pipeline.go's).
func (r *uniqueRun) Landed(ctx context.Context) bool { return r.t.uniqueLanded(ctx, r.w) }

func (r *uniqueRun) Done(ctx context.Context) (map[string]types.AttributeValue, error) {
	return r.t.uniqueDone(ctx, r.w)
}

func (r *uniqueRun) Failed(ctx context.Context, tce *types.TransactionCanceledException, err error) (bool, error) {
	adapt := func(cur map[string]types.AttributeValue) bool { // planned again on the adapted base
		return cur != nil && r.w.info.isType(cur) && r.w.legacy.Adapt(&r.base, r.w.update, &r.baseCond, cur)
	}
	again, why, ferr := r.t.uniqueFailed(ctx, r.w, r.stored, tce, err, r.notMine, adapt)
	r.why = why
	return again, ferr
}

func (r *uniqueRun) Refused(err error) error {
	return r.t.writeFailed(r.w, txHint([]*writeRequest{r.w}, err))
}

func (r *uniqueRun) NotApplied(err error) error { return r.t.itemErr(r.w, err) }

func (r *uniqueRun) Unproven(err error, why string) error { return r.t.unproven(r.w, err, why) }

// uniqueDone settles a unique write that landed: what DynamoDB would have
// returned of the item (an Update's item; what a Put learnt of the stored one)
// is read back, consistently. The write was acknowledged, so its outcome is
// known whatever the read finds: when another write changed the item in
// between (no receipt), the call returns the item as read, which holds that
// write too; when it deleted the item (or put another type's there), an Update
// returns the zero value and a Put the value as written.
func (t *Table) uniqueDone(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	if !w.returnNew {
		return t.settled(w, nil, false)
	}
	cur, err := t.readBack(ctx, w.key)
	switch {
	case err != nil:
		return nil, t.itemErr(w, fmt.Errorf("the write was applied, but reading the item back for what it returns failed: %w", err))
	case cur == nil || !w.info.isType(cur):
		if w.kind == kindUpdate {
			w.ret = types.ReturnValueNone // nothing to return: the zero value
		}
		return t.settled(w, nil, false)
	}
	return t.settled(w, cur, true)
}

// uniqueLanded judges, from the item read back, whether a unique write whose
// answer was lost landed: its receipt; for a Delete, the item and every guard it
// frees gone (or held by another).
func (t *Table) uniqueLanded(ctx context.Context, w *writeRequest) bool {
	cur, err := t.readBack(ctx, w.key)
	if err != nil {
		return false
	}
	if w.kind != kindDelete {
		return w.receipted && w.holdsReceipt(cur)
	}
	if cur != nil {
		return false
	}
	return w.uniq.Freed(uniqueguard.OwnerText(t.baseKeyAttrs(), w.key), func(key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
		return t.readBack(ctx, key)
	})
}

// uniqueFailed decides what becomes of a unique write whose transaction was
// cancelled for other reasons than conflicts: planned again (again: the item's
// unique values moved since they were read, or a guard it frees is another's),
// or the error that says why nothing was written.
func (t *Table) uniqueFailed(ctx context.Context, w *writeRequest, stored map[string]types.AttributeValue, tce *types.TransactionCanceledException, err error, notMine map[string]bool, adapt func(map[string]types.AttributeValue) bool) (again bool, why string, _ error) {
	uw := w.uniq
	reasons := tce.CancellationReasons
	failed := func(i int) bool { return i < len(reasons) && aws.ToString(reasons[i].Code) == "ConditionalCheckFailed" }
	if failed(0) {
		cur, known := t.failedTxItem(ctx, w, reasons[0].Item, nil)
		if known && adapt(cur) {
			return true, "the item was written before its derived ttl was declared", nil
		}
		if known && uw.kind != kindCreate {
			if why := uw.moved(stored, cur); why != "" {
				return true, why, nil
			}
		}
		return false, "", t.explain(w, cur, known, err)
	}
	claim, again := uw.Refused(reasons, 1, func(key map[string]types.AttributeValue) string { return guardID(t, key) }, notMine)
	if claim >= 0 {
		g := uw.Guards[claim]
		holder := reasons[claim+1].Item
		if holder == nil {
			holder, _ = t.readBack(ctx, g.Key)
		}
		return false, "", t.itemErr(w, uniqueError(t, w.info, g, holder, err))
	}
	if again {
		return true, "a guard the write frees was held by another item", nil
	}
	return false, "", t.writeFailed(w, txHint([]*writeRequest{w}, err))
}

// moved says which unique value the write touches differs between the item as
// read (stored) and as it stood when the write failed (cur); "" when none.
func (uw *uniqueWrite) moved(stored, cur map[string]types.AttributeValue) string {
	info := uw.u.info
	if stored != nil && !info.isType(stored) {
		stored = nil
	}
	if cur != nil && !info.isType(cur) {
		cur = nil
	}
	f, a, b := uniqueguard.Differs(uw.Touched, stored, cur)
	if f == nil && uw.TTLAttr != "" && !uw.ttl.set && !uw.ttl.unknown { // the ttl the claims carry
		if x, y := stored[uw.TTLAttr], cur[uw.TTLAttr]; (x == nil) != (y == nil) || x != nil && !attrvalue.Equal(x, y) {
			return uw.TTLAttr + " (the ttl its guards carry) read as " + valueText(x) + ", found " + valueText(y)
		}
	}
	if f == nil {
		return ""
	}
	return info.attrName(f) + " read as " + valueText(a) + ", found " + valueText(b)
}

// valueText is a stored value for messages ("none" when missing).
func valueText(av types.AttributeValue) string {
	if av == nil {
		return "none"
	}
	return strconv.Quote(uniqueguard.Text(av))
}

// ---- Transactions of the caller's (Transact, TransactWith).

// txUniqueGuards conditions the planned actions of a transaction on the unique
// values they take as stored, and returns the guard actions to append after
// them, in order. It refuses a transaction that would exceed DynamoDB's 100
// actions.
func (t *Table) txUniqueGuards(ws []*writeRequest) ([]types.TransactWriteItem, error) {
	var out []types.TransactWriteItem
	for i, w := range ws {
		uw := w.uniq
		if uw == nil {
			continue
		}
		guards, err := uw.build(t, w, w.b.Clone(), w.cond, uw.stored, nil)
		if err != nil {
			return nil, errorf("Transact: action %d (%s %s): %w", i, w.kind, w.info.name, err)
		}
		out = append(out, guards...)
	}
	if n := len(ws) + len(out); n > maxTxActions {
		return nil, errorf("Transact: %d actions and %d unique-value guards come to %d, over the %d of a transaction: %w", len(ws), len(out), n, maxTxActions, ErrInvalidInput)
	}
	return out, nil
}

// txGuardReason is the reason of the guard action j (after the caller's
// actions) of a cancelled transaction, at index i.
func (t *Table) txGuardReason(ws []*writeRequest, i, j int, r types.CancellationReason) (TxReason, bool) {
	for _, w := range ws {
		if w.uniq == nil {
			continue
		}
		if j >= len(w.uniq.Guards) {
			j -= len(w.uniq.Guards)
			continue
		}
		g := w.uniq.Guards[j]
		code := aws.ToString(r.Code)
		reason := TxReason{Index: i, Op: "Unique", Entity: w.info.name, Key: t.keyStrings(g.Key), Code: code, Message: aws.ToString(r.Message)}
		if code == "ConditionalCheckFailed" {
			if g.Claim {
				reason.Unique = uniqueError(t, w.info, g, r.Item, nil)
				reason.Message = reason.Unique.Error()
			} else {
				reason.Message = "the guard of " + g.Constraint + " " + strconv.Quote(uniqueguard.ValuesText(g.Values)) + " that " + w.kind.String() + " frees is held by another item: the key value's unique values are not the stored ones"
			}
		}
		return reason, true
	}
	return TxReason{}, false
}

// uniqueTxMessage says why a transaction's action of a unique entity failed its
// condition when the unique values it took as stored (from the key value, or
// TxPut's own) are not the item's (cur); "" otherwise.
func (uw *uniqueWrite) txMessage(cur map[string]types.AttributeValue) string {
	if uw == nil || !uw.tx || cur == nil || !uw.u.info.isType(cur) {
		return ""
	}
	f, a, b := uniqueguard.Differs(uw.Touched, uw.stored, cur)
	switch {
	case f == nil:
		return ""
	case uw.kind == kindPut:
		return uw.u.info.attrName(f) + ": TxPut writes " + attrvalue.Text(a) + " but the item holds " + attrvalue.Text(b) + ": a transaction does not read, so TxPut cannot move a unique value; use Put, or TxUpdate with the stored value in the key value"
	}
	return uw.u.info.attrName(f) + " in the key value (" + attrvalue.Text(a) + ") is not the stored one (" + attrvalue.Text(b) + "): Tx" + uw.kind.String() + " of a unique entity takes the stored unique values from the key value; pass the item as read"
}
