package singletable

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
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
)

var kindNames = [...]string{kindPut: "Put", kindCreate: "Create", kindUpdate: "Update", kindDelete: "Delete", kindCheck: "Check", kindWriteBack: "WriteBack"}

func (k writeKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "write"
}

// writeRequest is a planned single-item write, before it becomes a PutItem,
// UpdateItem or DeleteItem input or a transaction item. Plans are built by the
// plan functions (planPut, planDelete, planUpdate, planWriteBack) and run by
// Table.execute, which judges every outcome the same way whatever the kind.
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
	version  *versionPlan  // versioned entities
	receipt  *receiptPlan  // the write's receipt, if it stores one
	pin      *pin          // the incarnation the write is for, when the library read it
	newInc   string        // the incarnation id the write sets if the item has none
	inputs   []storedInput // inputs of recomputed index keys the update did not change
	upsert   bool          // an Update that may create the item
	// resendable is set for writes that may be sent again after a failure that may
	// have applied them without judging the item first: unversioned Puts, Deletes
	// and Updates without Add, which are idempotent.
	resendable bool
	// returnNew asks an UpdateItem for the item as stored afterwards.
	returnNew bool
	// ret, when set, is the ReturnValues the caller asked for (returnvalues.go);
	// it takes the place of returnNew.
	ret types.ReturnValue
	// env is where the plan took its time and randomness from (planenv.go).
	env *planEnv
	// paths are the nested document paths an Update changes (update_ops.go).
	paths []docPath
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
	if avEqual(stored, in.av) {
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

// ensureKey sets the key of a write planned without it (a plain Put) from its item.
func (w *writeRequest) ensureKey(t *Table) {
	if w.key == nil && w.item != nil {
		w.setKey(t, w.item)
	}
}

// setKey sets the write's key and key strings from a whole item.
func (w *writeRequest) setKey(t *Table, item map[string]types.AttributeValue) {
	w.key = t.keyOf(item)
	w.keyStr = t.keyStrings(item)
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
			ReturnValues:                        w.ret,
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
		if w.ret != "" {
			in.ReturnValues = w.ret
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
			ReturnValues:                        w.ret,
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

// pinGuard conditions a write on the incarnation it was read from: the item as
// read is still there (or still missing).
func (w *writeRequest) pinGuard(t *Table) string {
	p := w.pin
	if p == nil {
		return ""
	}
	switch {
	case !p.exists:
		return "attribute_not_exists(" + w.b.Name(t.opts.PartitionKey) + ")"
	case p.inc == "":
		return "attribute_exists(" + w.b.Name(t.opts.PartitionKey) + ") AND attribute_not_exists(" + w.b.Name(t.opts.IncarnationAttribute) + ")"
	default:
		return w.b.Name(t.opts.IncarnationAttribute) + " = " + w.b.S(p.inc)
	}
}

// keepIncarnation returns the SET clause that gives an item of a versioned entity
// an incarnation id if it has none (w.newInc), for writes that may create it.
func (w *writeRequest) keepIncarnation(t *Table) (string, error) {
	if w.info.version == nil {
		return "", nil
	}
	id, err := w.env.token()
	if err != nil {
		return "", err
	}
	w.newInc = id
	inc := w.b.Name(t.opts.IncarnationAttribute)
	return inc + " = if_not_exists(" + inc + ", " + w.b.S(id) + ")", nil
}

// typeGuard is the condition that keeps a write from touching an item of another
// entity type at the same key: the item is absent or of this type.
func (info *entityInfo) typeGuard(b *expr.Builder) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR " + b.Name(info.table.opts.TypeAttribute) + " = " + b.S(info.discriminator)
}

// typeAndVersion is the guard of a write to an existing item of a versioned
// entity: of this type, at the version held.
func (info *entityInfo) typeAndVersion(b *expr.Builder, vp *versionPlan) string {
	return expr.And(b.Name(info.table.opts.TypeAttribute)+" = "+b.S(info.discriminator), vp.guard(b))
}

// absentOr is the guard of a write that may create the item: none at the key, or
// the guard cond on the one there.
func (info *entityInfo) absentOr(b *expr.Builder, cond string) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR (" + cond + ")"
}

// planPut plans a Put or a Create of the value sv (whose shard is set; a copy the
// library owns, which the whole-item phases change), for the incarnation p when the
// caller read it (nil otherwise). An unversioned Put is a PutItem; a versioned Put,
// and the Put of an entity with a createdAt or counter field, an UpdateItem (so
// that the receipts of earlier writes, the incarnation, the stored createdAt and
// count, and attributes T does not know are kept); a Create a PutItem on the
// condition that no item exists.
func (info *entityInfo) planPut(sv reflect.Value, kind writeKind, o writeOptions, p *pin) (*writeRequest, error) {
	if o.env == nil {
		o.env = &planEnv{} // one clock reading for the whole write
	}
	if err := info.prepareWhole(sv, kind, o.env); err != nil { // wholeitem.go
		return nil, err
	}
	var vp *versionPlan
	var err error
	if kind == kindCreate {
		vp = info.newVersionPlan()
	} else if vp, err = info.planVersion(sv, o.clobber); err != nil {
		return nil, err
	}
	if kind == kindPut && (vp != nil || info.hooks.keepsStored()) {
		return info.planUpdatePut(sv, o, vp, p)
	}
	item, err := info.encodeItem(sv)
	if err != nil {
		return nil, err
	}
	t := info.table
	w := &writeRequest{kind: kind, info: info, item: item, version: vp, pin: p, env: o.env}
	if err := w.askOld(o); err != nil { // returnvalues.go
		return nil, err
	}
	if kind == kindCreate {
		// A receipt, so that a Create whose response is lost is not reported as
		// ErrAlreadyExists because of itself; and a new incarnation.
		slot := t.writeReceiptAttr()
		if vp != nil {
			item[vp.attr] = numberAV(vp.next)
			slot = t.receiptAttr(vp.next)
			id, err := o.env.token()
			if err != nil {
				return nil, err
			}
			item[t.opts.IncarnationAttribute] = &types.AttributeValueMemberS{Value: id}
		}
		if w.receipt, err = t.newReceiptPlan(o.env, slot); err != nil {
			return nil, err
		}
		item[slot] = w.receipt.av()
		// The version, receipt and incarnation added here count too.
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
		w.setKey(t, item)
		return w, w.setFixedCondition(info.createGuard, o.cond)
	}
	if o.cond.IsSet() {
		// The caller's condition makes the Put depend on the item (If
		// attribute_not_exists makes it a create): sent again after a lost
		// response, it could land on an item created or deleted since. It carries
		// a receipt instead, and is judged.
		if w.receipt, err = t.newReceiptPlan(o.env, t.writeReceiptAttr()); err != nil {
			return nil, err
		}
		item[w.receipt.attr] = w.receipt.av()
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
	} else {
		// A plain Put is idempotent and needs no key until something fails.
		w.resendable = w.ret == ""
	}
	return w, w.setFixedCondition(info.putGuard, o.cond)
}

// planUpdatePut plans a Put as an UpdateItem that sets every stored attribute and
// removes every empty one, so that the receipts of earlier writes, the
// incarnation, attributes T does not know, the stored createdAt (if_not_exists)
// and the count (moved on the server) are kept. vp is nil for an unversioned
// entity.
func (info *entityInfo) planUpdatePut(sv reflect.Value, o writeOptions, vp *versionPlan, p *pin) (*writeRequest, error) {
	item, err := info.encodeItem(sv)
	if err != nil {
		return nil, err
	}
	o.base.keepUnchanged(info, item) // Mutate: what its function left alone stays as stored
	t := info.table
	tk := t.opts
	h := info.hooks
	counted := h != nil && h.counter != nil
	// The stored item also holds the version, the incarnation and the receipts.
	extra := 0
	if vp != nil {
		extra = len(vp.attr) + 20 + (tk.Receipts+1)*(len(tk.ReceiptAttribute)+len(strconv.Itoa(tk.Receipts-1))+receiptLen) + len(tk.IncarnationAttribute) + tokenLen
	} else if counted || o.cond.IsSet() {
		extra = len(t.writeReceiptAttr()) + receiptLen
	}
	if err := info.checkSize(item, extra); err != nil {
		return nil, err
	}
	w := &writeRequest{kind: kindPut, info: info, version: vp, pin: p, env: o.env,
		returnNew: vp != nil && vp.clobber || h.keepsStored()}
	if err := w.askOld(o); err != nil {
		return nil, err
	}
	w.setKey(t, item)
	sets, removes := w.putClauses(item)
	stored, err := w.keepStored(sv, item) // createdAt, the counter
	if err != nil {
		return nil, err
	}
	sets = append(sets, stored...)
	sets = append(sets, vp.sets(&w.b)...)
	if vp != nil || counted || o.cond.IsSet() {
		slot := t.writeReceiptAttr()
		if vp != nil {
			slot = vp.receiptSlot(t)
		}
		if w.receipt, err = t.newReceiptPlan(o.env, slot); err != nil {
			return nil, err
		}
		sets = append(sets, w.b.Name(w.receipt.attr)+" = "+w.b.Value(w.receipt.av()))
	}
	inc, err := w.keepIncarnation(t)
	if err != nil {
		return nil, err
	}
	if inc != "" {
		sets = append(sets, inc)
	}
	w.update = joinUpdate(sets, removes, nil)
	if vp == nil {
		// Idempotent unless it counts, depends on the item by the caller's
		// condition, or asks for the item it replaces.
		w.resendable = !counted && !o.cond.IsSet() && w.ret == ""
	}
	return w, w.setCondition(expr.And(w.putGuard(), w.createdGuard(), h.counterGuard(&w.b)), o.cond)
}

// putClauses returns the SET clauses of every attribute of item and the REMOVE
// clauses of every field and key attribute it lacks, but for those set by clauses
// of their own (the key, the version, createdAt, the counter).
func (w *writeRequest) putClauses(item map[string]types.AttributeValue) (sets, removes []string) {
	info, tk, vp := w.info, w.info.table.opts, w.version
	own := func(name string) bool {
		return name == tk.PartitionKey || name == tk.SortKey || vp != nil && name == vp.attr || info.hooks.ownsStored(name)
	}
	for _, name := range sortedKeys(item) {
		if !own(name) {
			sets = append(sets, w.b.Name(name)+" = "+w.b.Value(item[name]))
		}
	}
	for _, f := range info.plan.Fields() {
		if _, ok := item[f.Name]; !ok && !own(f.Name) {
			removes = append(removes, w.b.Name(f.Name))
		}
	}
	for _, kt := range info.all {
		if _, ok := item[kt.attr]; !ok {
			removes = append(removes, w.b.Name(kt.attr))
		}
	}
	return sets, removes
}

// putGuard is the condition of a Put planned as an UpdateItem: of this type (or
// absent), at the version held, pinned to the incarnation read.
func (w *writeRequest) putGuard() string {
	info, vp, p := w.info, w.version, w.pin
	t := info.table
	switch {
	case vp == nil:
		return info.typeGuard(&w.b)
	case p != nil:
		guard := w.pinGuard(t)
		if p.exists {
			guard = expr.And(guard, info.typeAndVersion(&w.b, vp))
		}
		return guard
	case vp.clobber:
		return expr.And(info.typeGuard(&w.b), vp.guard(&w.b))
	case vp.expected == 0:
		return info.absentOr(&w.b, info.typeAndVersion(&w.b, vp))
	}
	return info.typeAndVersion(&w.b, vp)
}

// planDelete plans a Delete of the item at sv's key, for the incarnation p when
// the caller read it (nil otherwise).
func (info *entityInfo) planDelete(sv reflect.Value, o writeOptions, p *pin) (*writeRequest, error) {
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	w := &writeRequest{kind: kindDelete, info: info, key: k, keyStr: ks, pin: p, env: o.env}
	if w.version, err = info.planVersion(sv, o.clobber); err != nil {
		return nil, err
	}
	vp := w.version
	if vp == nil || vp.clobber {
		w.version = nil // a clobbering Delete stores nothing to judge
		// An unversioned Delete is sent again after a lost response, as the SDK
		// would. A clobbering one is judged as a versioned Delete is: done when
		// the item is gone, ErrAmbiguous when one is there (it may have been
		// created since), never sent again to delete an item it did not see. A
		// caller's condition makes any Delete depend on the item, so it is not
		// sent again either.
		w.resendable = vp == nil && !o.cond.IsSet()
		if err := w.askOld(o); err != nil { // not resendable when it asks for the item
			return nil, err
		}
		return w, w.setFixedCondition(info.putGuard, o.cond)
	}
	if err := w.askOld(o); err != nil {
		return nil, err
	}
	guard := info.typeAndVersion(&w.b, vp)
	if vp.expected == 0 {
		guard = info.absentOr(&w.b, guard)
	}
	return w, w.setCondition(expr.And(w.pinGuard(info.table), guard), o.cond)
}

// joinUpdate joins SET, REMOVE, ADD and DELETE clauses into an update expression.
func joinUpdate(sets, removes, adds []string) string {
	var upd strings.Builder
	if len(sets) > 0 {
		upd.WriteString("SET ")
		upd.WriteString(strings.Join(sets, ", "))
	}
	if len(removes) > 0 {
		upd.WriteString(" REMOVE ")
		upd.WriteString(strings.Join(removes, ", "))
	}
	if len(adds) > 0 {
		upd.WriteString(" ADD ")
		upd.WriteString(strings.Join(adds, ", "))
	}
	return strings.TrimSpace(upd.String())
}
