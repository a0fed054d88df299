package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/singletable/singletable/internal/condwrite"
)

// TxItem is one action of a write transaction, made by an entity's TxPut, TxCreate,
// TxUpdate, TxDelete or TxCheck and run by [Table.Transact] or [Table.TransactWith].
// It is planned when the transaction runs: defaults, timestamps and validation
// apply then, and an error is reported by Transact, before anything is sent. The
// version rules of [Entity.Put], [Entity.Update] and [Entity.Delete] apply to every
// action of a versioned entity. A TxItem may be run again (it is planned afresh).
type TxItem struct {
	info *entityInfo
	kind writeKind
	plan func(env *planEnv) (*writeRequest, error)
	err  error
}

// TxPut is [Entity.Put] as a transaction action.
//
//go:noinline
func (e *Entity[T]) TxPut(v T, opts ...WriteOption) TxItem {
	return e.core().txPut(elem(&v), kindPut, opts)
}

// TxCreate is [Entity.Create] as a transaction action: the transaction fails if an
// item exists at v's key.
//
//go:noinline
func (e *Entity[T]) TxCreate(v T, opts ...WriteOption) TxItem {
	return e.core().txPut(elem(&v), kindCreate, opts)
}

// txPut is TxPut and TxCreate of sv, the caller's copy of the value.
func (e *entity) txPut(sv reflect.Value, kind writeKind, opts []WriteOption) TxItem {
	if err := e.refused("Tx" + kind.String()); err != nil {
		return TxItem{kind: kind, err: err}
	}
	o := collectWriteOptions(opts)
	// A random shard is drawn once, here: the action keeps it however often it
	// is planned (the planner's checks know it was drawn, not chosen).
	drawn, err := e.info.drawShard(sv)
	if err != nil {
		return e.txItem(kind, nil, err)
	}
	o.shardDrawn = drawn
	return e.txItem(kind, func(env *planEnv) (*writeRequest, error) {
		v := reflect.New(e.info.goType).Elem() // a copy per plan: the whole-item phases change it
		v.Set(sv)
		o := o
		o.env = env
		w, err := e.info.planPut(v, kind, o, nil)
		if err == nil && w.key == nil {
			w.setKey(e.table, w.item) // transactions judge every action by its key
		}
		return w, err
	}, nil)
}

// TxUpdate is [Entity.Update] as a transaction action.
//
//go:noinline
func (e *Entity[T]) TxUpdate(key T, opts ...UpdateOption) TxItem {
	return e.core().txUpdate(elem(&key), opts)
}

func (e *entity) txUpdate(sv reflect.Value, opts []UpdateOption) TxItem {
	if err := e.refused("TxUpdate"); err != nil {
		return TxItem{kind: kindUpdate, err: err}
	}
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindUpdate, nil, err)
	}
	opts = slices.Clone(opts)
	return e.txItem(kindUpdate, func(env *planEnv) (*writeRequest, error) {
		w, err := e.info.planUpdate(sv, opts, env)
		if err != nil {
			return nil, err
		}
		w.returnNew = false // transactions return nothing
		return w, nil
	}, nil)
}

// TxDelete is [Entity.Delete] as a transaction action.
//
//go:noinline
func (e *Entity[T]) TxDelete(key T, opts ...WriteOption) TxItem {
	return e.core().txDelete(elem(&key), opts)
}

func (e *entity) txDelete(sv reflect.Value, opts []WriteOption) TxItem {
	if err := e.refused("TxDelete"); err != nil {
		return TxItem{kind: kindDelete, err: err}
	}
	o := collectWriteOptions(opts)
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindDelete, nil, err)
	}
	return e.txItem(kindDelete, func(env *planEnv) (*writeRequest, error) {
		o := o
		o.env = env
		return e.info.planDelete(sv, o, nil)
	}, nil)
}

// TxCheck makes the transaction depend on a condition on the item at key's primary
// key, without writing it (ConditionCheck). A zero cond is refused
// ([ErrInvalidInput]).
//
//go:noinline
func (e *Entity[T]) TxCheck(key T, cond expression.ConditionBuilder) TxItem {
	return e.core().txCheck(elem(&key), cond)
}

func (e *entity) txCheck(sv reflect.Value, cond expression.ConditionBuilder) TxItem {
	if err := e.refused("TxCheck"); err != nil {
		return TxItem{kind: kindCheck, err: err}
	}
	if err := checkCondition("TxCheck", cond); err != nil { // options.go
		return e.txItem(kindCheck, nil, err)
	}
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindCheck, nil, err)
	}
	k, ks, err := e.info.primaryKey(sv)
	if err != nil {
		return e.txItem(kindCheck, nil, err)
	}
	return e.txItem(kindCheck, func(*planEnv) (*writeRequest, error) {
		w := &writeRequest{kind: kindCheck, info: e.info, key: k, keyStr: ks}
		c, err := w.b.Condition(cond)
		if err == nil && c == "" {
			err = errors.New("empty condition")
		}
		if err != nil {
			return nil, errorf("condition: %w: %w", ErrInvalidInput, err)
		}
		w.cond = c
		return w, nil
	}, nil)
}

func (e *entity) txItem(kind writeKind, plan func(*planEnv) (*writeRequest, error), err error) TxItem {
	return TxItem{kind: kind, info: e.info, plan: plan, err: err}
}

// TxReason is why one action of a cancelled transaction failed.
type TxReason struct {
	Index   int               // position of the action in the Transact call
	Op      string            // "Put", "Create", "Update", "Delete", "Check"
	Entity  string            // Go type name of the entity
	Key     map[string]string // rendered primary key
	Code    string            // DynamoDB's code: "ConditionalCheckFailed", "TransactionConflict", ...
	Message string
	// Conflict explains a failed version condition; nil for other reasons.
	Conflict *ConflictError
	// TypeMismatch is set when the action's item is of another entity type.
	TypeMismatch bool
	// Unique is set when the action (Op "Unique": a guard the library added for
	// a unique value) claimed a value another item holds.
	Unique *UniqueError
	// invalid is set when the action would have moved a version or count past
	// the largest its field holds (Message says which): ErrInvalidInput.
	invalid bool
}

// TxError reports a cancelled transaction (TransactionCanceledException) with the
// reason of each action that failed. It matches [ErrCondition] when an action's
// condition failed, [ErrConflict] when that was a version condition, and
// [ErrAlreadyExists] when that action was a Create or a unique value's guard,
// [ErrNotUnique] when a unique value is held by another item, [ErrTypeMismatch] when its item
// is of another entity type, and [ErrInvalidInput] when it would have moved a
// version (Clobber) or a count past the largest its field holds.
type TxError struct {
	Reasons []TxReason // only the actions that failed
	Err     error      // the AWS error
}

// Error names each failed action and its reason.
func (e *TxError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: transaction cancelled:")
	for i, r := range e.Reasons {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" action " + strconv.Itoa(r.Index) + " (" + r.Op + " " + r.Entity + formatKey(r.Key) + "): " + r.Code)
		if r.Conflict != nil {
			b.WriteString(" (" + strings.TrimPrefix(r.Conflict.Error(), "singletable: ") + ")")
		} else if r.Message != "" {
			b.WriteString(" (" + r.Message + ")")
		}
	}
	return b.String()
}

// Unwrap returns the AWS error.
func (e *TxError) Unwrap() error { return e.Err }

// Is matches ErrCondition, ErrConflict and ErrAlreadyExists by the failed actions' reasons.
func (e *TxError) Is(target error) bool {
	for _, r := range e.Reasons {
		if r.Code != "ConditionalCheckFailed" {
			continue
		}
		switch {
		case target == ErrCondition,
			target == ErrAlreadyExists && (r.Op == "Create" || r.Unique != nil),
			target == ErrNotUnique && r.Unique != nil,
			target == ErrConflict && r.Conflict != nil,
			target == ErrTypeMismatch && r.TypeMismatch,
			target == ErrInvalidInput && r.invalid:
			return true
		}
	}
	return false
}

// Transact runs write actions atomically (TransactWriteItems): all happen or none.
// It sets a ClientRequestToken of its own: a lost answer is resent under it, by the
// table's Backoff, which DynamoDB applies at most once in ten minutes; after the
// last attempt, or a resend refused for good, the items read back (the receipts of
// versioned actions) tell a transaction that landed, else [ErrAmbiguous]. A
// cancellation caused only by TransactionConflict (another transaction on the
// same items) applied nothing, and is retried with a new token, by the table's
// Backoff. Cost: 2 WCU per 1 KB per action. DynamoDB allows 100 actions (25 on
// DynamoDB Local 1.x) on distinct items. A cancelled transaction returns a
// [*TxError] naming each failed action; failed conditions are explained from the
// items DynamoDB returns with the cancellation, or by reading them back where it
// returns none. The actions are planned here, at one clock reading for all; see
// [Table.TransactWith] for a token of the caller's, which survives a restart.
func (t *Table) Transact(ctx context.Context, items ...TxItem) error {
	if err := t.refused("Table.Transact"); err != nil {
		return err
	}
	return t.TransactWith(ctx, TxOptions{}, items...)
}

// TxOptions configures [Table.TransactWith]. The zero TxOptions is [Table.Transact].
type TxOptions struct {
	// Token is the transaction's idempotency token (ClientRequestToken), 1 to 36
	// characters, chosen by the caller and kept with the work it does, say an
	// order id and a step. For ten minutes after a transaction under a token
	// succeeds, DynamoDB applies a transaction sent again under it no more: it
	// answers success. So a process that crashed, or lost the response, can build
	// the same actions again and resend them under the same token without applying
	// them twice. A different transaction under a token used in the last ten
	// minutes fails with [ErrTokenMismatch]. Empty: a new random token per call
	// (and per retry of a conflict).
	//
	// With a Token, the actions are planned deterministically: their receipts and
	// incarnation ids come from the token, so the same actions give the same
	// request. The same must hold for the caller's part: the same values in the
	// same order, and the same At. Entities sharded at random, which draw a shard
	// per TxPut, are refused.
	Token string
	// At is the time createdAt and updatedAt fields of the actions take. With a
	// Token and an action of an entity with such fields it is required (keep it
	// with the token); otherwise zero means the table's clock.
	At time.Time
}

// maxTokenLen is DynamoDB's limit on a ClientRequestToken.
const maxTokenLen = 36

// TransactWith is [Table.Transact] with options: an idempotency token of the
// caller's, which makes a transaction safe to resend after a crash (see
// [TxOptions]). With a token, a response lost or a conflict is retried with that
// same token by the table's Backoff, which DynamoDB applies at most once.
func (t *Table) TransactWith(ctx context.Context, o TxOptions, items ...TxItem) (err error) {
	if err := t.refused("Table.TransactWith"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "Transact")
	defer done(&err)
	ws, err := t.planTx(o, items, explainEnv(ctx))
	if err != nil {
		return err
	}
	guards, err := t.txUniqueGuards(ws) // unique.go: before the actions, which it conditions
	if err != nil {
		return err
	}
	actions := make([]types.TransactWriteItem, len(ws), len(ws)+len(guards))
	for i, w := range ws {
		actions[i] = w.transactItem(t.name)
	}
	actions = append(actions, guards...)
	actions, fence, err := t.fenceTx(ctx, actions) // fence.go: the context's fence, last
	if err != nil {
		return err
	}
	b := t.opts.Backoff.withDefaults()
	lost := false // an attempt's answer was lost: it may have been applied
	// The token: the caller's, else one of the call's own, kept while an attempt
	// may have landed, so that a resend is applied at most once.
	token := o.Token
	for attempt := 1; ; attempt++ {
		if token == "" {
			if token, err = txToken(ctx); err != nil { // explain.go
				return err
			}
		}
		// DefiniteRetries: the SDK's retryer resends only failures that applied
		// nothing, so that a lost answer reaches the judging below rather than
		// hide behind a later throttle.
		_, err = t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems:      actions,
			ClientRequestToken: aws.String(token),
		}, condwrite.DefiniteRetries)
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		var ipm *types.IdempotentParameterMismatchException
		switch {
		case errors.As(err, &ipm):
			return errorf("Transact: token %q was used in the last ten minutes for a different transaction (other actions, values, or times: a resend must be planned from the same values and TxOptions.At); nothing was applied: %w: %w", o.Token, ErrTokenMismatch, err)
		case errors.As(err, &tce) && fence.refused(tce, len(actions)-1):
			if !lost {
				return errorf("Transact: %w", fence.error(err))
			}
			// An earlier attempt's answer was lost: it may have landed while
			// the fence held, before it moved. Landed, or unknown.
			t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "read back", Err: err})
			if ctx.Err() == nil && t.txLanded(ctx, ws, nil, nil) {
				t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "landed"})
				return nil
			}
			t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "unproven"})
			return errorf("Transact: %w: an earlier attempt's answer was lost, and the fence (%s) no longer holds: the transaction may have landed before it moved: %w", ErrAmbiguous, fence.What, err)
		case errors.As(err, &tce):
			again, err := t.cancelled(ctx, o, items, ws, actions, tce, err, attempt)
			if again {
				if o.Token == "" && !lost { // nothing applied: the next attempt is a transaction of its own
					token = ""
				}
				continue
			}
			return err
		case ambiguous(err):
			lost = true
			if ctx.Err() == nil && attempt < b.MaxAttempts {
				// The same token (the caller's or the call's own): DynamoDB
				// applies the transaction at most once.
				t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "resend", Err: err}) // trace.go
				if werr := b.Wait(ctx, attempt); werr != nil {
					return errorf("Transact: %w: %w (last: %w)", ErrAmbiguous, werr, err)
				}
				continue
			}
			t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "read back", Err: err})
			if ctx.Err() == nil && t.txLanded(ctx, ws, nil, nil) {
				t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "landed"})
				return nil
			}
			t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "unproven"})
			return errorf("Transact: %w: %w", ErrAmbiguous, err)
		case lost:
			// Resent under the same token after a lost answer, and refused this
			// time (throttled past the SDK's retries, say): the refusal says
			// nothing of the lost attempt. Landed, or unknown.
			t.event(ctx, SpanEvent{Name: EventAmbiguous, How: "read back", Err: err})
			if ctx.Err() == nil && t.txLanded(ctx, ws, nil, nil) {
				t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "landed"})
				return nil
			}
			t.event(ctx, SpanEvent{Name: EventResolved, Outcome: "unproven"})
			return errorf("Transact: %w: the answer to an earlier attempt was lost, and its resend under the same token (%q) failed; send it again with that token within ten minutes to apply it at most once: %w", ErrAmbiguous, token, txHint(ws, err))
		}
		return errorf("Transact: %w", txHint(ws, err))
	}
}

// cancelled decides what becomes of a cancelled transaction (tce, the
// attempt's error err): sent again (after a wait, when only conflicts cancelled
// it; at once, when an Append or Prepend met a list stored as NULL and the
// actions now fit the items), a success (an earlier attempt, whose answer was
// lost, landed), or the error naming each failed action.
func (t *Table) cancelled(ctx context.Context, o TxOptions, items []TxItem, ws []*writeRequest, actions []types.TransactWriteItem, tce *types.TransactionCanceledException, err error, attempt int) (again bool, _ error) {
	b := t.opts.Backoff.withDefaults()
	if onlyConflicts(tce) && attempt < b.MaxAttempts {
		if werr := b.Wait(ctx, attempt); werr != nil {
			return false, errorf("Transact: %w (last: %w)", werr, err)
		}
		return true, nil
	}
	if o.Token == "" && attempt < b.MaxAttempts && t.txAdapt(ctx, ws, tce) {
		// Nothing was applied, and the actions now fit the items as they stood.
		for i, w := range ws {
			actions[i] = w.transactItem(t.name)
		}
		return true, nil
	}
	seen := txReads{}
	if t.txLanded(ctx, ws, tce, seen) {
		return false, nil
	}
	return false, t.txError(ctx, items, ws, tce, err, seen)
}

// planTx checks a transaction's actions and options and plans every action,
// before anything is sent.
func (t *Table) planTx(o TxOptions, items []TxItem, explained *planEnv) ([]*writeRequest, error) {
	if len(items) == 0 {
		return nil, errorf("Transact: no actions: %w", ErrInvalidInput)
	}
	if o.Token != "" && (len(o.Token) > maxTokenLen || !utf8.ValidString(o.Token)) {
		return nil, errorf("Transact: token %q: DynamoDB takes 1 to %d characters of UTF-8: %w", o.Token, maxTokenLen, ErrInvalidInput)
	}
	at := o.At
	if at.IsZero() {
		at = t.now() // one instant for every action
	}
	ws := make([]*writeRequest, len(items))
	for i, it := range items {
		if it.info == nil && it.err != nil {
			return nil, errorf("Transact: action %d (%s): %w", i, it.kind, it.err)
		}
		if it.kind == 0 || it.info == nil {
			return nil, errorf("Transact: action %d is a zero TxItem; make actions with an entity's TxPut, TxCreate, TxUpdate, TxDelete or TxCheck: %w", i, ErrInvalidInput)
		}
		fail := func(err error) error {
			return errorf("Transact: action %d (%s %s): %w", i, it.kind, it.info.name, err)
		}
		if it.err != nil {
			return nil, fail(it.err)
		}
		env := &planEnv{at: at, atGiven: !o.At.IsZero(), tx: true}
		if explained != nil {
			env.rand = explained.rand // Explain's stream; a token's derived one below
		}
		if o.Token != "" {
			// Planned again after a restart, the action must be the same: the
			// plans refuse what they cannot plan the same way twice.
			env.replay = true
			env.rand = newDerivedStream(o.Token, "singletable/tx/"+strconv.Itoa(i))
		}
		w, err := it.plan(env)
		if err != nil {
			return nil, fail(err)
		}
		ws[i] = w
	}
	return ws, nil
}

// onlyConflicts reports whether every failed action failed for TransactionConflict.
func onlyConflicts(tce *types.TransactionCanceledException) bool {
	n := 0
	for _, r := range tce.CancellationReasons {
		switch code := aws.ToString(r.Code); code {
		case "", "None":
		case "TransactionConflict":
			n++
		default:
			return false
		}
	}
	return n > 0
}

// txLanded reports whether an earlier attempt of the transaction, whose answer was
// lost, was applied: transactions are atomic, so the receipt of any one action
// (versioned writes and Creates carry one) proves it. An action's item returned
// with a cancellation (ReturnValuesOnConditionCheckFailure) tells without a read;
// otherwise one consistent read. A transaction without receipts cannot be told
// apart, and reports false.
func (t *Table) txLanded(ctx context.Context, ws []*writeRequest, tce *types.TransactionCanceledException, seen txReads) bool {
	if tce != nil {
		for i, r := range tce.CancellationReasons {
			if i < len(ws) && ws[i].receipted && r.Item != nil {
				return ws[i].holdsReceipt(r.Item)
			}
		}
	}
	for _, w := range ws {
		if w == nil || !w.receipted {
			continue
		}
		cur, err := t.readBack(ctx, w.key)
		if err == nil && seen != nil {
			seen[w] = cur
		}
		return err == nil && w.holdsReceipt(cur)
	}
	return false
}

// txAdapt fits the actions of a cancelled transaction whose Appends or Prepends
// met a list stored as NULL to the items as they stood (update_ops.go: adapt),
// reporting whether any changed. A failed condition cancels the transaction
// before anything is applied.
func (t *Table) txAdapt(ctx context.Context, ws []*writeRequest, tce *types.TransactionCanceledException) bool {
	changed := false
	for i, r := range tce.CancellationReasons {
		if i >= len(ws) || len(ws[i].lists) == 0 || aws.ToString(r.Code) != "ConditionalCheckFailed" {
			continue
		}
		cur, known := t.failedTxItem(ctx, ws[i], r.Item, nil)
		if known && ws[i].adapt(cur) {
			changed = true
		}
	}
	return changed
}

// txHint names, in DynamoDB's refusal of a transaction (a ValidationException),
// the actions and their changes, as a single write's error does.
func txHint(ws []*writeRequest, err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
		return err
	}
	var acts []string
	for i, w := range ws {
		a := "action " + strconv.Itoa(i) + " (" + w.kind.String() + " " + w.info.name + formatKey(w.keyStr)
		if len(w.changed) > 0 {
			a += ": " + strings.Join(w.changed, ", ")
		}
		acts = append(acts, a+")")
	}
	return fmt.Errorf("DynamoDB refused the transaction of %s; nothing was applied: %w", strings.Join(acts, "; "), err)
}

// txReads are the items a cancelled transaction's actions read back, by action.
type txReads map[*writeRequest]map[string]types.AttributeValue

// txError builds the TxError of a cancelled transaction, explaining failed
// conditions from the items DynamoDB returned with them
// (ReturnValuesOnConditionCheckFailure), or by reading them back where it returns
// none.
func (t *Table) txError(ctx context.Context, items []TxItem, ws []*writeRequest, tce *types.TransactionCanceledException, err error, seen txReads) error {
	txe := &TxError{Err: err}
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" || code == "None" {
			continue
		}
		if i >= len(items) {
			if reason, ok := t.txGuardReason(ws, i, i-len(items), r); ok { // unique.go
				txe.Reasons = append(txe.Reasons, reason)
			}
			continue
		}
		it, w := items[i], ws[i]
		reason := TxReason{Index: i, Op: it.kind.String(), Entity: it.info.name, Code: code, Message: aws.ToString(r.Message)}
		reason.Key = w.keyStrings(t)
		if code == "ConditionalCheckFailed" {
			if cur, known := t.failedTxItem(ctx, w, r.Item, seen); known {
				var berr error
				reason.Conflict, berr = w.explainParts(cur) // pipeline.go
				reason.TypeMismatch = cur != nil && !it.info.isType(cur)
				if berr != nil && reason.Conflict == nil && !reason.TypeMismatch {
					reason.Message, reason.invalid = strings.TrimSuffix(berr.Error(), ": "+ErrInvalidInput.Error()), true
				} else if m := w.uniq.txMessage(cur); m != "" && reason.Conflict == nil { // unique.go
					reason.Message = m
				}
			}
		}
		txe.Reasons = append(txe.Reasons, reason)
	}
	return txe
}

// failedTxItem is failedItem for a transaction action: the item returned with its
// cancellation reason, else (where DynamoDB returns none) read back.
func (t *Table) failedTxItem(ctx context.Context, w *writeRequest, item map[string]types.AttributeValue, seen txReads) (map[string]types.AttributeValue, bool) {
	switch {
	case item != nil:
		t.failedItems.Store(1)
		return item, true
	case t.failedItems.Load() == 1:
		return nil, true // this DynamoDB returns the item when there is one
	}
	if cur, ok := seen[w]; ok { // read back already, to judge the transaction
		return cur, true
	}
	cur, err := t.readBack(ctx, w.key)
	if err != nil {
		return nil, false
	}
	if cur != nil {
		t.failedItems.Store(-1)
	}
	return cur, true
}
