package singletable

import (
	"context"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/ttlexpiry"
)

// writeKind is what a planned write does; the pipeline tells writes apart by it.
type writeKind uint8

const (
	kindPut writeKind = iota + 1
	kindCreate
	kindUpdate
	kindDelete
	kindCheck     // a transaction's condition check
	kindWriteBack // a migrated item written back
	kindBatchPut  // a whole item of a batch, written without condition
)

var kindNames = [...]string{kindPut: "Put", kindCreate: "Create", kindUpdate: "Update", kindDelete: "Delete", kindCheck: "Check", kindWriteBack: "WriteBack", kindBatchPut: "BatchPut"}

func (k writeKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "write"
}

// writeRequest is a planned single-item write, before it becomes a PutItem,
// UpdateItem or DeleteItem input or a transaction item. The planner builds it
// (planner.go, and update.go for an Update; a migrated item's write-back is
// planned by the migration, migrate.go) and Table.execute runs it, judging every
// outcome the same way whatever the kind, with the parts the feature plans left
// with it.
type writeRequest struct {
	kind   writeKind
	info   *entityInfo
	key    map[string]types.AttributeValue
	keyStr map[string]string
	item   map[string]types.AttributeValue // PutItem
	update string                          // UpdateItem
	cond   string
	condP  *string // a shared pointer to cond's text, when it is a Fixed's
	b      expr.Builder
	// userCond is set when the caller added a condition, so a failed check is not
	// necessarily the library's guard.
	userCond bool
	pin      *pin          // the incarnation the write is for, when the library read it
	newInc   string        // the incarnation id the write sets if the item has none
	inputs   []storedInput // inputs of recomputed index keys the update did not change
	upsert   bool          // an Update that may create the item
	// receipted is set when the write stores a receipt that proves it landed.
	receipted bool
	// parts are the feature plans' stakes in the write (planner.go), in the
	// order of the plans; partBuf holds the first of them.
	parts   []writePart
	partBuf [4]writePart
	// whole is the value a Put, Create or Mutate writes, which the parts settle.
	whole reflect.Value
	// resendable is set for writes that may be sent again after a failure that may
	// have applied them without judging the item first: unversioned Puts, Deletes
	// and Updates without Add, which are idempotent.
	resendable bool
	// returnNew asks an UpdateItem for the item as stored afterwards.
	returnNew bool
	// ret, when set, is the ReturnValues the caller asked for, and wireRet what
	// the write asks of DynamoDB for it (returnvalues.go); wireRet takes the
	// place of returnNew.
	ret, wireRet types.ReturnValue
	// answerOnly is set when the answer carries what exists nowhere else (the
	// item before the write): a lost answer is then ErrAmbiguous.
	answerOnly bool
	// env is where the plan took its time and randomness from (planenv.go).
	env *planEnv
	// uniq is the write's part in its entity's unique values, when it stores,
	// changes or frees one (unique.go): it is then sent as a transaction.
	uniq *uniqueWrite
	// paths are the nested document paths an Update changes, lists its Appends
	// and Prepends, changed its changes, for messages (update_ops.go).
	paths   []docpath.Path
	lists   []*listOp
	changed []string
	// legacy adapts a write that stores a derived ttl with if_not_exists to an
	// item written before the ttl was declared (ttlderived.go).
	legacy *ttlexpiry.Legacy
}

// storedInput is an input of an index key that an Update recomputes without
// changing it: the key is rendered from the value the caller gave, on the
// condition that the stored value is the same.
type storedInput struct {
	field *codec.Field
	index string // the index whose keys it feeds
	av    types.AttributeValue
	// orAbsent: the stored value may also be missing (a createdAt that a Put
	// stores with if_not_exists).
	orAbsent bool
	// keys: the input is a createdAt whose index keys an Update writes with
	// if_not_exists (createdKeys): it disagrees only when the keys are missing
	// beside another createdAt, or stored without one.
	keys []string
}

// disagrees reports whether the stored item cur fails the input's condition.
func (in storedInput) disagrees(cur map[string]types.AttributeValue) bool {
	stored := cur[in.field.Name]
	if attrvalue.Equal(stored, in.av) {
		return false
	}
	if in.keys == nil {
		return stored != nil || !in.orAbsent
	}
	all, none := true, true
	for _, k := range in.keys {
		_, ok := cur[k]
		all, none = all && ok, none && !ok
	}
	if stored == nil {
		return !none
	}
	return !all
}

// condPtr returns the condition for a request input, nil if there is none.
func (w *writeRequest) condPtr() *string {
	if w.condP != nil && *w.condP == w.cond {
		return w.condP
	}
	return expr.Ptr(w.cond)
}

// keyStrings returns the key for messages; a Put planned without it takes it
// from its item.
func (w *writeRequest) keyStrings(t *Table) map[string]string {
	if w.keyStr == nil && w.item != nil {
		return t.keyStrings(w.item)
	}
	return w.keyStr
}

// ensureKey sets the key of a write planned without it (a plain Put) from its item.
func (w *writeRequest) ensureKey(t *Table) {
	if w.key == nil && w.item != nil {
		w.setKey(t, w.item)
	}
}

// call sends the write once as PutItem (item set), UpdateItem (update set) or
// DeleteItem, asking for the item when the condition fails. It returns what
// DynamoDB returned: the attributes of an UpdateItem with returnNew, those its
// ReturnValues (ret) asked for, and, on a failed condition, the item as stored (nil when the item is missing, or when the
// DynamoDB answering does not return items on failed conditions).
func (w *writeRequest) call(ctx context.Context, t *Table, optFns ...func(*dynamodb.Options)) (attrs map[string]types.AttributeValue, err error) {
	const failed = types.ReturnValuesOnConditionCheckFailureAllOld
	switch {
	case w.item != nil:
		out, err := t.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                           t.namePtr(),
			Item:                                w.item,
			ConditionExpression:                 w.condPtr(),
			ExpressionAttributeNames:            w.b.Names(),
			ExpressionAttributeValues:           w.b.Values(),
			ReturnValues:                        w.wireRet,
			ReturnValuesOnConditionCheckFailure: failed,
		}, optFns...)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	case w.update != "":
		in := &dynamodb.UpdateItemInput{
			TableName:                           t.namePtr(),
			Key:                                 w.key,
			UpdateExpression:                    aws.String(w.update),
			ConditionExpression:                 w.condPtr(),
			ExpressionAttributeNames:            w.b.Names(),
			ExpressionAttributeValues:           w.b.Values(),
			ReturnValuesOnConditionCheckFailure: failed,
		}
		if w.wireRet != "" {
			in.ReturnValues = w.wireRet
		} else if w.returnNew {
			in.ReturnValues = types.ReturnValueAllNew
		}
		out, err := t.client.UpdateItem(ctx, in, optFns...)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	default:
		out, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                           t.namePtr(),
			Key:                                 w.key,
			ConditionExpression:                 w.condPtr(),
			ExpressionAttributeNames:            w.b.Names(),
			ExpressionAttributeValues:           w.b.Values(),
			ReturnValues:                        w.wireRet,
			ReturnValuesOnConditionCheckFailure: failed,
		}, optFns...)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	}
}

// transactItem turns a planned write into a transaction action.
func (w *writeRequest) transactItem(table string) types.TransactWriteItem {
	names, values, cond := w.b.Names(), w.b.Values(), expr.Ptr(w.cond)
	const failed = types.ReturnValuesOnConditionCheckFailureAllOld
	switch {
	case w.kind == kindCheck:
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: w.key, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: failed}}
	case w.item != nil:
		return types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: w.item, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: failed}}
	case w.update != "":
		return types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: w.key, UpdateExpression: aws.String(w.update), ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: failed}}
	default:
		return types.TransactWriteItem{Delete: &types.Delete{TableName: &table, Key: w.key, ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: failed}}
	}
}
