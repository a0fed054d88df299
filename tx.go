package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TxItem is one action of a write transaction, made by an entity's TxPut, TxCreate,
// TxUpdate, TxDelete or TxCheck and run by [Table.Transact]. An error found while
// building it is kept and reported by Transact, before anything is sent. The
// version rules of [Entity.Put], [Entity.Update] and [Entity.Delete] apply to every
// action of a versioned entity.
type TxItem struct {
	w    *writeRequest
	info *entityInfo
	kind writeKind
	item types.TransactWriteItem
	err  error
}

// TxPut is [Entity.Put] as a transaction action.
func (e *Entity[T]) TxPut(v T, opts ...WriteOption) TxItem { return e.txPut(v, kindPut, opts) }

// TxCreate is [Entity.Create] as a transaction action: the transaction fails if an
// item exists at v's key.
func (e *Entity[T]) TxCreate(v T, opts ...WriteOption) TxItem { return e.txPut(v, kindCreate, opts) }

func (e *Entity[T]) txPut(v T, kind writeKind, opts []WriteOption) TxItem {
	o := collectWriteOptions(opts)
	sv := reflect.ValueOf(&v).Elem()
	if err := e.info.refuseRandomCreate(kind); err != nil {
		return e.txItem(kind, nil, err)
	}
	if _, err := e.info.fillShard(sv, true); err != nil {
		return e.txItem(kind, nil, err)
	}
	w, err := e.info.planPut(sv, kind, o, nil)
	if err == nil && w.key == nil {
		w.setKey(e.table, w.item) // transactions judge every action by its key
	}
	return e.txItem(kind, w, err)
}

// TxUpdate is [Entity.Update] as a transaction action.
func (e *Entity[T]) TxUpdate(key T, opts ...UpdateOption) TxItem {
	sv := reflect.ValueOf(&key).Elem()
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindUpdate, nil, err)
	}
	w, err := e.info.planUpdate(sv, opts)
	if w != nil {
		w.returnNew = false // transactions return nothing
	}
	return e.txItem(kindUpdate, w, err)
}

// TxDelete is [Entity.Delete] as a transaction action.
func (e *Entity[T]) TxDelete(key T, opts ...WriteOption) TxItem {
	o := collectWriteOptions(opts)
	sv := reflect.ValueOf(&key).Elem()
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindDelete, nil, err)
	}
	w, err := e.info.planDelete(sv, o, nil)
	return e.txItem(kindDelete, w, err)
}

// TxCheck makes the transaction depend on a condition on the item at key's primary
// key, without writing it (ConditionCheck).
func (e *Entity[T]) TxCheck(key T, cond expression.ConditionBuilder) TxItem {
	sv := reflect.ValueOf(&key).Elem()
	if _, err := e.info.fillShard(sv, false); err != nil {
		return e.txItem(kindCheck, nil, err)
	}
	k, ks, err := e.info.primaryKey(sv)
	if err != nil {
		return e.txItem(kindCheck, nil, err)
	}
	w := &writeRequest{kind: kindCheck, info: e.info, key: k, keyStr: ks}
	c, err := w.b.Condition(cond)
	if err == nil && c == "" {
		err = errors.New("empty condition")
	}
	if err != nil {
		return e.txItem(kindCheck, nil, fmt.Errorf("singletable: condition: %w: %w", ErrInvalidInput, err))
	}
	w.cond = c
	return e.txItem(kindCheck, w, nil)
}

func (e *Entity[T]) txItem(kind writeKind, w *writeRequest, err error) TxItem {
	it := TxItem{kind: kind, info: e.info, w: w, err: err}
	if err == nil {
		it.item = w.transactItem(e.table.name)
	}
	return it
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
}

// TxError reports a cancelled transaction (TransactionCanceledException) with the
// reason of each action that failed. It matches [ErrCondition] when an action's
// condition failed, [ErrConflict] when that was a version condition, and
// [ErrAlreadyExists] when that action was a Create.
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
			target == ErrAlreadyExists && r.Op == "Create",
			target == ErrConflict && r.Conflict != nil,
			target == ErrTypeMismatch && r.TypeMismatch:
			return true
		}
	}
	return false
}

// Transact runs write actions atomically (TransactWriteItems): all happen or none.
// It sets a ClientRequestToken so that the SDK's own retries of the same call are
// idempotent on DynamoDB for ten minutes; where that does not hold (older DynamoDB
// Local), the receipts of versioned actions tell a transaction that landed from one
// that did not. A cancellation caused only by TransactionConflict (another
// transaction on the same items) is retried with a new token, by the table's
// Backoff. Cost: 2 WCU per 1 KB per action. DynamoDB allows 100 actions (25 on
// DynamoDB Local 1.x) on distinct items. A cancelled transaction returns a
// [*TxError] naming each failed action; version conditions are explained by
// reading the item back.
func (t *Table) Transact(ctx context.Context, items ...TxItem) error {
	if len(items) == 0 {
		return fmt.Errorf("singletable: Transact: no actions: %w", ErrInvalidInput)
	}
	actions := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		if it.err != nil {
			return fmt.Errorf("singletable: Transact: action %d (%s %s): %w", i, it.kind, it.info.name, it.err)
		}
		if it.kind == 0 || it.info == nil {
			return fmt.Errorf("singletable: Transact: action %d is a zero TxItem; make actions with an entity's TxPut, TxCreate, TxUpdate, TxDelete or TxCheck: %w", i, ErrInvalidInput)
		}
		actions[i] = it.item
	}
	b := t.opts.Backoff.withDefaults()
	for attempt := 1; ; attempt++ {
		token, err := newToken()
		if err != nil {
			return err
		}
		_, err = t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems:      actions,
			ClientRequestToken: aws.String(token),
		})
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		switch {
		case errors.As(err, &tce):
			if onlyConflicts(tce) && attempt < b.MaxAttempts {
				if werr := b.Wait(ctx, attempt); werr != nil {
					return fmt.Errorf("singletable: Transact: %w (last: %w)", werr, err)
				}
				continue
			}
			if t.txLanded(ctx, items) {
				return nil
			}
			return t.txError(ctx, items, tce, err)
		case ambiguous(err):
			if ctx.Err() == nil && t.txLanded(ctx, items) {
				return nil
			}
			return fmt.Errorf("singletable: Transact: %w: %w", ErrAmbiguous, err)
		}
		return fmt.Errorf("singletable: Transact: %w", err)
	}
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
// (versioned writes and Creates carry one) proves it; one consistent read. A
// transaction without receipts cannot be told apart, and reports false.
func (t *Table) txLanded(ctx context.Context, items []TxItem) bool {
	for _, it := range items {
		if it.w == nil || it.w.receipt == nil {
			continue
		}
		cur, err := t.readBack(ctx, it.w.key)
		return err == nil && it.w.receipt.found(cur)
	}
	return false
}

// txError builds the TxError of a cancelled transaction, explaining failed version
// conditions by reading the items back.
func (t *Table) txError(ctx context.Context, items []TxItem, tce *types.TransactionCanceledException, err error) error {
	txe := &TxError{Err: err}
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" || code == "None" || i >= len(items) {
			continue
		}
		it := items[i]
		reason := TxReason{Index: i, Op: it.kind.String(), Entity: it.info.name, Code: code, Message: aws.ToString(r.Message)}
		if it.w != nil {
			reason.Key = it.w.keyStrings(t)
		}
		if code == "ConditionalCheckFailed" && it.w != nil {
			cur, known := r.Item, r.Item != nil
			if !known && it.w.version != nil {
				var rerr error
				cur, rerr = t.readBack(ctx, it.w.key)
				known = rerr == nil
			}
			if known {
				reason.Conflict = t.conflictOf(it.w, cur)
				reason.TypeMismatch = cur != nil && !it.info.isType(cur)
			}
		}
		txe.Reasons = append(txe.Reasons, reason)
	}
	return txe
}
