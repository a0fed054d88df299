package singletable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// TxItem is one action of a write transaction, made by an entity's TxPut, TxCreate,
// TxUpdate, TxDelete or TxCheck and run by [Table.Transact]. An error found while
// building it is kept and reported by Transact, before anything is sent.
type TxItem struct {
	op     string
	entity string
	key    map[string]string
	item   types.TransactWriteItem
	err    error
}

// TxPut is [Entity.Put] as a transaction action.
func (e *Entity[T]) TxPut(v T, opts ...WriteOption) TxItem { return e.txPut(v, false, opts) }

// TxCreate is [Entity.Create] as a transaction action: the transaction fails if an
// item exists at v's key.
func (e *Entity[T]) TxCreate(v T, opts ...WriteOption) TxItem { return e.txPut(v, true, opts) }

func (e *Entity[T]) txPut(v T, create bool, opts []WriteOption) TxItem {
	var o writeOptions
	for _, opt := range opts {
		opt.applyWrite(&o)
	}
	w, err := e.info.planPut(reflect.ValueOf(&v).Elem(), create, o)
	if err != nil {
		return TxItem{op: opName(create, "Create", "Put"), entity: e.info.name, err: err}
	}
	return e.txItem(w, types.TransactWriteItem{Put: &types.Put{
		TableName:                 aws.String(e.table.name),
		Item:                      w.item,
		ConditionExpression:       expr.Ptr(w.cond),
		ExpressionAttributeNames:  w.b.Names(),
		ExpressionAttributeValues: w.b.Values(),
	}})
}

// TxUpdate is [Entity.Update] as a transaction action.
func (e *Entity[T]) TxUpdate(key T, opts ...UpdateOption) TxItem {
	w, err := e.info.planUpdate(reflect.ValueOf(&key).Elem(), opts)
	if err != nil {
		return TxItem{op: "Update", entity: e.info.name, err: err}
	}
	return e.txItem(w, types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(e.table.name),
		Key:                       w.key,
		UpdateExpression:          aws.String(w.update),
		ConditionExpression:       expr.Ptr(w.cond),
		ExpressionAttributeNames:  w.b.Names(),
		ExpressionAttributeValues: w.b.Values(),
	}})
}

// TxDelete is [Entity.Delete] as a transaction action.
func (e *Entity[T]) TxDelete(key T, opts ...WriteOption) TxItem {
	var o writeOptions
	for _, opt := range opts {
		opt.applyWrite(&o)
	}
	w, err := e.info.planDelete(reflect.ValueOf(&key).Elem(), o)
	if err != nil {
		return TxItem{op: "Delete", entity: e.info.name, err: err}
	}
	return e.txItem(w, types.TransactWriteItem{Delete: &types.Delete{
		TableName:                 aws.String(e.table.name),
		Key:                       w.key,
		ConditionExpression:       expr.Ptr(w.cond),
		ExpressionAttributeNames:  w.b.Names(),
		ExpressionAttributeValues: w.b.Values(),
	}})
}

// TxCheck makes the transaction depend on a condition on the item at key's primary
// key, without writing it (ConditionCheck).
func (e *Entity[T]) TxCheck(key T, cond expression.ConditionBuilder) TxItem {
	k, ks, err := e.info.primaryKey(reflect.ValueOf(&key).Elem())
	if err != nil {
		return TxItem{op: "Check", entity: e.info.name, err: err}
	}
	w := &writeRequest{op: "Check", key: k, keyStr: ks}
	c, err := w.b.Condition(cond)
	if err == nil && c == "" {
		err = errors.New("empty condition")
	}
	if err != nil {
		return TxItem{op: "Check", entity: e.info.name, key: ks, err: fmt.Errorf("singletable: condition: %w: %w", ErrInvalidInput, err)}
	}
	return e.txItem(w, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(e.table.name),
		Key:                       k,
		ConditionExpression:       aws.String(c),
		ExpressionAttributeNames:  w.b.Names(),
		ExpressionAttributeValues: w.b.Values(),
	}})
}

func (e *Entity[T]) txItem(w *writeRequest, item types.TransactWriteItem) TxItem {
	return TxItem{op: w.op, entity: e.info.name, key: w.keyStr, item: item}
}

func opName(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// TxReason is why one action of a cancelled transaction failed.
type TxReason struct {
	Index   int               // position of the action in the Transact call
	Op      string            // "Put", "Create", "Update", "Delete", "Check"
	Entity  string            // Go type name of the entity
	Key     map[string]string // rendered primary key
	Code    string            // DynamoDB's code: "ConditionalCheckFailed", "TransactionConflict", ...
	Message string
}

// TxError reports a cancelled transaction (TransactionCanceledException) with the
// reason of each action that failed. It matches [ErrCondition] when an action's
// condition failed, and [ErrAlreadyExists] when that action was a Create.
type TxError struct {
	Reasons []TxReason // only the actions that failed
	Err     error      // the AWS error
}

func (e *TxError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: transaction cancelled:")
	for i, r := range e.Reasons {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" action " + strconv.Itoa(r.Index) + " (" + r.Op + " " + r.Entity + formatKey(r.Key) + "): " + r.Code)
		if r.Message != "" {
			b.WriteString(" (" + r.Message + ")")
		}
	}
	return b.String()
}

// Unwrap returns the AWS error.
func (e *TxError) Unwrap() error { return e.Err }

// Is matches ErrCondition and ErrAlreadyExists by the failed actions' reasons.
func (e *TxError) Is(target error) bool {
	for _, r := range e.Reasons {
		if r.Code != "ConditionalCheckFailed" {
			continue
		}
		if target == ErrCondition || (target == ErrAlreadyExists && r.Op == "Create") {
			return true
		}
	}
	return false
}

// Transact runs write actions atomically (TransactWriteItems): all happen or none.
// It sets a ClientRequestToken so that the SDK's own retries of the same call are
// idempotent for ten minutes. Cost: 2 WCU per 1 KB per action. DynamoDB allows 100
// actions (25 on older DynamoDB Local) on distinct items. A cancelled transaction
// returns a [*TxError] naming each failed action.
func (t *Table) Transact(ctx context.Context, items ...TxItem) error {
	if len(items) == 0 {
		return fmt.Errorf("singletable: Transact: no actions: %w", ErrInvalidInput)
	}
	actions := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		if it.err != nil {
			return fmt.Errorf("singletable: Transact: action %d (%s %s): %w", i, it.op, it.entity, it.err)
		}
		actions[i] = it.item
	}
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
	if errors.As(err, &tce) {
		txe := &TxError{Err: err}
		for i, r := range tce.CancellationReasons {
			code := aws.ToString(r.Code)
			if code == "" || code == "None" || i >= len(items) {
				continue
			}
			txe.Reasons = append(txe.Reasons, TxReason{Index: i, Op: items[i].op, Entity: items[i].entity, Key: items[i].key, Code: code, Message: aws.ToString(r.Message)})
		}
		return txe
	}
	return fmt.Errorf("singletable: Transact: %w", err)
}

// newToken returns a random ClientRequestToken.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("singletable: random token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
