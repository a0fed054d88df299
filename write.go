package singletable

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// writeRequest is a planned single-item write, before it becomes a PutItem,
// UpdateItem or DeleteItem input or a transaction item.
type writeRequest struct {
	op     string
	key    map[string]types.AttributeValue
	keyStr map[string]string
	item   map[string]types.AttributeValue // Put and Create
	update string                          // Update
	cond   string
	condP  *string // a shared pointer to cond's text, when it is a Fixed's
	b      expr.Builder
	// userCond is set when the caller added a condition, so a failed check is not
	// necessarily a missing item.
	userCond bool
	version  *versionPlan // for versioned entities
	// receipt, for a Create of an unversioned entity: a random token stored in
	// receiptAttr, which tells after a lost response whether the item read back
	// is this write's.
	receipt, receiptAttr string
	check                bool // a transaction's condition check
	// returnNew asks an UpdateItem for the item as stored afterwards.
	returnNew bool
}

// setCondition joins the library's guard with the caller's condition, if any.
func (w *writeRequest) setCondition(guard string, cond expression.ConditionBuilder) error {
	user, err := w.b.Condition(cond)
	if err != nil {
		return fmt.Errorf("singletable: condition: %w: %w", ErrInvalidInput, err)
	}
	w.userCond = user != ""
	w.cond = expr.And(guard, user)
	return nil
}

// setFixedCondition is setCondition for a guard built once (f), with w's builder
// still unused.
func (w *writeRequest) setFixedCondition(f *expr.Fixed, cond expression.ConditionBuilder) error {
	guard := w.b.Use(f)
	if !cond.IsSet() {
		w.cond, w.condP, w.userCond = guard, f.TextPtr(), false
		return nil
	}
	return w.setCondition(guard, cond)
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

// call sends the write as PutItem (item set), UpdateItem (update set) or DeleteItem.
func (w *writeRequest) call(ctx context.Context, t *Table, optFns ...func(*dynamodb.Options)) (map[string]types.AttributeValue, error) {
	switch {
	case w.item != nil:
		_, err := t.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 t.namePtr(),
			Item:                      w.item,
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}, optFns...)
		return nil, err
	case w.update != "":
		in := &dynamodb.UpdateItemInput{
			TableName:                 t.namePtr(),
			Key:                       w.key,
			UpdateExpression:          aws.String(w.update),
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}
		if w.returnNew {
			in.ReturnValues = types.ReturnValueAllNew
		}
		out, err := t.client.UpdateItem(ctx, in, optFns...)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	default:
		_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 t.namePtr(),
			Key:                       w.key,
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}, optFns...)
		return nil, err
	}
}

// typeGuard is the condition that keeps a write from touching an item of another
// entity type at the same key: the item is absent or of this type.
func (info *entityInfo) typeGuard(b *expr.Builder) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR " + b.Name(info.table.opts.TypeAttribute) + " = " + b.S(info.discriminator)
}

func (info *entityInfo) planPut(sv reflect.Value, create bool, o writeOptions) (*writeRequest, error) {
	return info.planPutKeys(sv, create, o, true)
}

// planPutKeys is planPut; without keys, a plain Put (unversioned, not a Create,
// which alone are sent once and never read back) is planned without its key and
// key strings, which writeRequest.keyStrings then takes from the item.
func (info *entityInfo) planPutKeys(sv reflect.Value, create bool, o writeOptions, keys bool) (*writeRequest, error) {
	var vp *versionPlan
	if info.version != nil {
		var err error
		if create {
			vp, err = info.planVersion(reflect.Zero(sv.Type()), false) // a create always stores version 1
		} else {
			vp, err = info.planVersion(sv, o.clobber)
		}
		if err != nil {
			return nil, err
		}
		if !create {
			return info.planVersionedPut(sv, o, vp)
		}
	}
	item, err := info.encodeItem(sv)
	if err != nil {
		return nil, err
	}
	tk := info.table.opts
	w := &writeRequest{op: "Put", item: item, version: vp}
	switch {
	case vp != nil:
		item[vp.attr] = numberAV(vp.next)
		item[vp.slot] = &types.AttributeValueMemberS{Value: vp.token}
	case create:
		// A receipt, as a versioned create stores, so that a Create whose response
		// is lost is not reported as ErrAlreadyExists because of itself.
		token, err := newToken()
		if err != nil {
			return nil, err
		}
		w.receipt, w.receiptAttr = token, info.table.receiptAttr(1)
		item[w.receiptAttr] = &types.AttributeValueMemberS{Value: token}
	}
	if vp != nil || create {
		// The version and receipt added here count too.
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
	}
	if keys || vp != nil || create {
		w.key = map[string]types.AttributeValue{tk.PartitionKey: item[tk.PartitionKey], tk.SortKey: item[tk.SortKey]}
		w.keyStr = map[string]string{tk.PartitionKey: item[tk.PartitionKey].(*types.AttributeValueMemberS).Value, tk.SortKey: item[tk.SortKey].(*types.AttributeValueMemberS).Value}
	}
	guard := info.putGuard
	if create {
		w.op = "Create"
		guard = info.createGuard
	}
	if err := w.setFixedCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}

func (info *entityInfo) planDelete(sv reflect.Value, o writeOptions) (*writeRequest, error) {
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	w := &writeRequest{op: "Delete", key: k, keyStr: ks}
	var guard string
	if info.version != nil {
		vp, err := info.planVersion(sv, o.clobber)
		if err != nil {
			return nil, err
		}
		if !vp.clobber {
			if vp.expected == 0 {
				return nil, fmt.Errorf("singletable: Delete %s: version 0: read the item first to learn its version, or pass Clobber(): %w", info.name, ErrInvalidInput)
			}
			guard = w.b.Name(vp.attr) + " = " + w.b.Value(numberAV(vp.expected)) + " AND " + w.b.Name(info.table.opts.TypeAttribute) + " = " + w.b.S(info.discriminator)
			w.version = vp
		}
	}
	if guard == "" {
		if err := w.setFixedCondition(info.putGuard, o.cond); err != nil {
			return nil, err
		}
		return w, nil
	}
	if err := w.setCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}
