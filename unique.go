package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/design"
	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/uniqueguard"
)

// Unique values. A field tagged `singletable:"unique"` holds a value that at most
// one item of the entity holds; `singletable:"unique=orgId+slug"` on the blank
// field makes a combination of stored attributes unique together (the option may
// repeat, comma-separated). A constraint holds a value only when every one of its
// attributes holds a non-zero value (not missing, not NULL, not "", not 0, not
// empty bytes): items without one claim nothing.
//
// The library keeps one guard item per value held, in its reserved namespace:
// partition key "#singletable#unique#<Type>#<constraint>#<sha256>" (the digest of
// the entity type, the constraint and the values, so the key never holds a raw
// value), sort key "unique", type attribute "_singletable.Unique", and the owner's
// primary key in "_owner". Every write that stores, changes or frees a value is one
// TransactWriteItems: the item's own action, conditioned on the unique values
// being those it read (so the guard it frees is the item's), plus a Put of each
// guard it claims (on the condition that no guard exists or the item owns it)
// and a Delete of each guard it frees (on the condition that it owns it). Two
// writers claiming one value: DynamoDB commits one transaction; the other fails
// with a [*UniqueError] ([ErrNotUnique]).
//
//   - Create: no read; item + a claim per value.
//   - Put, Mutate's write: a consistent read of the item (to learn the values it
//     frees), then item + claims + frees. A value kept is claimed again, which
//     also restores a guard a writer outside the library removed.
//   - Update: one that Sets or Removes a unique attribute reads the item, then is
//     a transaction as Put; it returns the item read (consistently) after the
//     transaction. Add, SetIfNotExists and list operations on a unique attribute
//     are refused. One that does not touch a unique attribute is a single
//     UpdateItem, as for any entity.
//   - Delete: a consistent read, then item + frees.
//   - TxCreate, TxPut, TxUpdate, TxDelete: the guards join the caller's
//     transaction. A transaction does not read, so TxUpdate and TxDelete take the
//     stored values from the key value (conditioned on them: a stale or missing
//     one fails the transaction) and TxPut requires the stored values to be the
//     ones it writes (or no item).
//   - BatchPut, BatchDelete, BatchPutItem, BatchDeleteItem carry no condition and
//     no transaction: refused for such entities, before anything is sent.
//   - A migration written back (on read, or by Sweep) that changes a unique value
//     is not written back: OnError gets an error matching [ErrInvalidInput].
//
// Every unique transaction carries a ClientRequestToken made once per call: a
// lost answer is sent again under the same token, which DynamoDB applies at most
// once; when it cannot be sent again, the item read back judges it (its receipt;
// for a Delete, item and freed guards gone) or the error matches [ErrAmbiguous].
// Writers outside the library (the SDK, DynamoDB's TTL deleting an owner) can
// leave a guard without its owner, or an owner without its guard:
// [Entity.SweepUnique] reports them and, when asked, repairs them.
//
// Register refuses a unique field that is not a string, number, []byte or
// time.Time, one with another role, a constraint that includes every input of
// the primary key (unique already), an attribute named twice, and a table whose
// base keys are not strings.

// A guard item (its type, attributes and action) is internal/uniqueguard's.

// maxUniqueConstraints bounds an entity's constraints: a write that changes every
// value is 1 + 2 per constraint actions of the 100 a transaction takes.
const maxUniqueConstraints = 16

// maxTxActions is the number of actions DynamoDB takes in one TransactWriteItems.
const maxTxActions = 100

// uniqueConstraint is one set of attributes whose values together are unique
// among the entity's items.
type uniqueConstraint struct {
	name   string // the attributes joined by "+"
	fields []*codec.Field
}

// uniqueFeature is the plan of an entity's unique values, compiled at Register.
type uniqueFeature struct {
	info  *entityInfo
	cons  []*uniqueConstraint
	attrs []string // every attribute of a constraint, sorted
	noOwner
}

// splitUniqueOptions takes the unique= options out of the blank field's
// singletable tag, leaving the others.
func splitUniqueOptions(opts string) (unique []string, rest string) {
	if opts == "" {
		return nil, ""
	}
	var others []string
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(o), "unique="); ok {
			unique = append(unique, v)
			continue
		}
		others = append(others, o)
	}
	return unique, strings.Join(others, ",")
}

// compileUniqueField makes the struct field at index unique on its own.
func compileUniqueField(info *entityInfo, index []int, sf reflect.StructField) error {
	f, err := storedField(info, index, sf, "unique")
	if err != nil {
		return err
	}
	u := info.uniqueOf()
	u.cons = append(u.cons, &uniqueConstraint{name: f.Name, fields: []*codec.Field{f}})
	return nil
}

func (info *entityInfo) uniqueOf() *uniqueFeature {
	if info.unique == nil {
		info.unique = &uniqueFeature{info: info}
	}
	return info.unique
}

// compileUnique adds the entity's unique= options and checks every constraint.
func compileUnique(info *entityInfo, opts []string) error {
	fail := func(field, reason string) error {
		return &EntityError{Entity: info.name, Field: field, Reason: reason}
	}
	for _, o := range opts {
		if o == "" {
			return fail("singletable", "unique= needs stored attribute names, joined by + (unique=orgId+slug)")
		}
		c := &uniqueConstraint{name: o}
		for _, name := range strings.Split(o, "+") {
			f, ok := info.plan.Field(name)
			if !ok {
				return fail("singletable", "unique="+o+": no stored attribute "+strconv.Quote(name)+info.suggestAttr(name))
			}
			if slices.Contains(c.fields, f) {
				return fail(f.GoName, "unique="+o+": attribute "+strconv.Quote(name)+" named twice")
			}
			c.fields = append(c.fields, f)
		}
		info.uniqueOf().cons = append(info.uniqueOf().cons, c)
	}
	u := info.unique
	if u == nil {
		return nil
	}
	t := info.table
	for _, a := range t.baseKeyAttrs() {
		if typ, ok := t.opts.KeyTypes[a]; ok && typ != types.ScalarAttributeTypeS {
			return fail(a, "unique values keep guard items under string keys, and the table's key attribute "+strconv.Quote(a)+" is of type "+string(typ))
		}
	}
	if len(u.cons) > maxUniqueConstraints {
		return fail("singletable", "more than "+strconv.Itoa(maxUniqueConstraints)+" unique constraints: a write that changes them all would not fit in one transaction")
	}
	seen := map[string]bool{}
	for _, c := range u.cons {
		names := make([]string, len(c.fields))
		allBase := true
		for i, f := range c.fields {
			names[i] = f.Name
			allBase = allBase && info.baseInputs[f.Name]
			if err := uniqueFieldType(info, f); err != nil {
				return err
			}
			if !slices.Contains(u.attrs, f.Name) {
				u.attrs = append(u.attrs, f.Name)
			}
		}
		canon := strings.Join(slices.Sorted(slices.Values(names)), "+")
		if seen[canon] {
			return fail(c.fields[0].GoName, "unique constraint "+strconv.Quote(c.name)+" is declared twice")
		}
		seen[canon] = true
		if allBase && len(info.baseInputs) == len(c.fields) {
			return fail(c.fields[0].GoName, "unique constraint "+strconv.Quote(c.name)+" is the whole primary key, which is unique already")
		}
	}
	slices.Sort(u.attrs)
	return nil
}

// uniqueFieldType refuses a unique field of a type whose values are not one
// string, number or binary, or that has another role.
func uniqueFieldType(info *entityInfo, f *codec.Field) error {
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "unique (attribute " + f.Name + "): " + reason}
	}
	if role := info.roleTaken(f); role != "" {
		return fail("the field is the " + role + " field; a field has one role")
	}
	if h := info.hooks; h != nil {
		for _, g := range h.generated {
			if g.f == f {
				return fail("the field's id is generated; a field has one role")
			}
		}
	}
	t := derefType(f.Type)
	switch {
	case t == timeType:
	case t.Kind() == reflect.String, isIntegerKind(t.Kind()), t.Kind() == reflect.Float32, t.Kind() == reflect.Float64:
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
	default:
		return fail("a unique value is a string, a number, bytes or a time, not " + f.Type.String())
	}
	return nil
}

// describe adds the constraints to an entity's design.
func (u *uniqueFeature) describe(e *design.Entity) {
	if u == nil {
		return
	}
	for _, c := range u.cons {
		names := make([]string, len(c.fields))
		for i, f := range c.fields {
			names[i] = f.Name
		}
		e.Unique = append(e.Unique, names)
	}
}

// holds reports whether attr is an attribute of a constraint.
func (u *uniqueFeature) holds(attr string) bool { return slices.Contains(u.attrs, attr) }

// ---- Planning a write.

// uniqueWrite is a write's part in its entity's unique values.
type uniqueWrite struct {
	u       *uniqueFeature
	kind    writeKind
	touched []*uniqueConstraint
	// next holds the unique attributes the write stores (nil entries: none):
	// a whole item's (Put, Create), an Update's Sets and Removes.
	next map[string]types.AttributeValue
	// tx: a transaction's action, which reads nothing: stored is what the item
	// is taken to hold (the key value's values, or for TxPut the new ones).
	tx     bool
	stored map[string]types.AttributeValue
	// guards are the guard actions of the last build, in order.
	guards []guardAction
}

// guardAction is one claim (Put) or free (Delete) of a guard.
type guardAction struct {
	c      *uniqueConstraint
	values []types.AttributeValue
	key    map[string]types.AttributeValue
	claim  bool
}

// plan makes a write that stores, changes or frees a unique value a
// transaction with its guards; refuses the writes that cannot carry one.
func (u *uniqueFeature) plan(p *writePlan) error {
	w := &uniqueWrite{u: u, kind: p.kind, tx: p.env != nil && p.env.tx}
	switch p.kind {
	case kindBatchPut:
		return u.refuseBatch()
	case kindCreate, kindPut:
		if err := u.planWhole(w, p); err != nil {
			return err
		}
		p.receipt = true
	case kindDelete:
		w.touched = u.cons
		if err := u.txStored(w, p); err != nil {
			return err
		}
	case kindUpdate:
		next, err := u.updateValues(p)
		if err != nil {
			return err
		}
		w.next = next
		w.touched = u.touchedBy(next)
		if len(w.touched) == 0 {
			return nil // a plain UpdateItem
		}
		if err := u.txStored(w, p); err != nil {
			return err
		}
		p.receipt = true
	default:
		return nil
	}
	if !w.tx && (p.ret != "" || p.old != nil) {
		return fmt.Errorf("%s: a write of unique values is a transaction, which returns no item as it was: Returning and ReturnOld do not apply: %w", p.info.name, ErrInvalidInput)
	}
	p.w.uniq = w
	return nil
}

// planWhole plans a whole item's write (Put, Create): it touches every
// constraint and stores the item's unique values; a TxPut takes them as the
// stored ones too.
func (u *uniqueFeature) planWhole(w *uniqueWrite, p *writePlan) error {
	info := p.info
	w.touched = u.cons
	w.next = map[string]types.AttributeValue{}
	for _, name := range u.attrs {
		f, _ := info.plan.Field(name)
		av, err := encodeFieldOf(info, f, p.sv)
		if err != nil {
			return err
		}
		w.next[name] = av
	}
	if w.tx && p.kind == kindPut {
		w.stored = w.next // TxPut: the stored values must be these, or no item
	}
	return nil
}

// txStored takes, for a transaction's action (which reads nothing), the
// unique values the key value holds as the stored ones.
func (u *uniqueFeature) txStored(w *uniqueWrite, p *writePlan) error {
	if !w.tx {
		return nil
	}
	stored, err := u.keyValues(p.sv)
	if err != nil {
		return err
	}
	w.stored = stored
	return nil
}

// updateValues returns the unique attributes an Update's edits store: a Set's
// value encoded (nil when it stores nothing), nil for a Remove. Any other
// edit of a unique attribute is refused.
func (u *uniqueFeature) updateValues(p *writePlan) (map[string]types.AttributeValue, error) {
	info := p.info
	next := map[string]types.AttributeValue{}
	for _, c := range p.edits {
		if !u.holds(c.Attr) {
			continue
		}
		f, _ := info.plan.Field(c.Attr)
		switch c.Op {
		case opRemove:
			next[c.Attr] = nil
		case opSet:
			fv, err := codec.Convert(c.Value, f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
			}
			av, keep, err := f.Encode(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
			}
			if !keep {
				av = nil
			}
			next[c.Attr] = av
		default:
			return nil, fmt.Errorf("%s: %s of a unique value is not supported (the value a guard holds must be known before the write): use Set or Remove: %w", info.attrName(f), opNames[c.Op], ErrInvalidInput)
		}
	}
	return next, nil
}

// touchedBy returns the constraints with an attribute in next, in order.
func (u *uniqueFeature) touchedBy(next map[string]types.AttributeValue) []*uniqueConstraint {
	var touched []*uniqueConstraint
	for _, c := range u.cons {
		for _, f := range c.fields {
			if _, ok := next[f.Name]; ok {
				touched = append(touched, c)
				break
			}
		}
	}
	return touched
}

// refuseBatch is the error of a batch write of an entity with unique values.
func (u *uniqueFeature) refuseBatch() error {
	return fmt.Errorf("%s has unique values (%s), whose guards only a transaction keeps, and a batch has no conditions and no transactions: use Put, Create, Delete or Transact: %w", u.info.name, u.names(), ErrInvalidInput)
}

// names lists the constraints for messages.
func (u *uniqueFeature) names() string {
	var out []string
	for _, c := range u.cons {
		out = append(out, c.name)
	}
	return strings.Join(out, ", ")
}

// keyValues encodes the unique attributes a key value holds (a transaction's
// TxUpdate or TxDelete takes them as the stored ones).
func (u *uniqueFeature) keyValues(sv reflect.Value) (map[string]types.AttributeValue, error) {
	out := map[string]types.AttributeValue{}
	for _, name := range u.attrs {
		f, _ := u.info.plan.Field(name)
		av, err := encodeFieldOf(u.info, f, sv)
		if err != nil {
			return nil, err
		}
		out[name] = av
	}
	return out, nil
}

// encodeFieldOf encodes f of the value sv; nil when it stores nothing.
func encodeFieldOf(info *entityInfo, f *codec.Field, sv reflect.Value) (types.AttributeValue, error) {
	fv, ok := f.ValueOf(sv)
	if !ok {
		return nil, nil
	}
	av, keep, err := f.Encode(fv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
	}
	if !keep {
		return nil, nil
	}
	return av, nil
}

// valuesOf returns the constraint's values in item, and whether it holds one
// (every attribute non-zero).
func (c *uniqueConstraint) valuesOf(item map[string]types.AttributeValue) ([]types.AttributeValue, bool) {
	out := make([]types.AttributeValue, len(c.fields))
	for i, f := range c.fields {
		av := item[f.Name]
		if uniqueguard.Zero(av) {
			return nil, false
		}
		out[i] = av
	}
	return out, true
}

// guardKey is the key of the guard of a constraint's values: the digest of the
// entity type, the constraint and the values (length-prefixed), under the
// reserved prefix.
func (u *uniqueFeature) guardKey(c *uniqueConstraint, values []types.AttributeValue) map[string]types.AttributeValue {
	t := u.info.table
	d := string(t.opts.Delimiter)
	pk := t.reservedPrefix() + "unique" + d + u.info.discriminator + d + c.name + d + uniqueguard.Digest(u.info.discriminator, c.name, values)
	key := map[string]types.AttributeValue{t.opts.PartitionKey: &types.AttributeValueMemberS{Value: pk}}
	if t.opts.SortKey != "" && !t.opts.NoSortKey {
		key[t.opts.SortKey] = &types.AttributeValueMemberS{Value: "unique"}
	}
	return key
}

// build conditions the write's item action on the unique values stored being
// those of stored (the item as read; nil: none), and returns the guard actions:
// a claim of each value the write stores, a free of each it gives up (but those
// of notMine, owned by another item). It builds on base, w's expression as
// planned, so that it can build again.
func (uw *uniqueWrite) build(t *Table, w *writeRequest, base expr.Builder, baseCond string, stored map[string]types.AttributeValue, notMine map[string]bool) ([]types.TransactWriteItem, error) {
	u, info := uw.u, uw.u.info
	if stored != nil && !uw.tx && !info.isType(stored) {
		stored = nil // another type's item: the type guard fails the write
	}
	w.b, w.cond, w.condP = base.Clone(), baseCond, nil
	if uw.kind != kindCreate {
		var conds []string
		done := map[string]bool{}
		for _, c := range uw.touched {
			for _, f := range c.fields {
				if done[f.Name] {
					continue
				}
				done[f.Name] = true
				name := w.b.Name(f.Name)
				if av := stored[f.Name]; av == nil {
					conds = append(conds, "attribute_not_exists("+name+")")
				} else {
					conds = append(conds, "attribute_not_exists("+w.b.Name(t.opts.PartitionKey)+") OR "+name+" = "+w.b.Value(av))
				}
			}
		}
		w.cond = expr.And(append([]string{w.cond}, conds...)...)
	}
	after := map[string]types.AttributeValue{}
	if uw.kind == kindUpdate {
		for _, a := range u.attrs {
			after[a] = stored[a]
		}
	}
	for a, av := range uw.next {
		after[a] = av
	}
	uw.guards = uw.guards[:0]
	for _, c := range uw.touched {
		var old, next []types.AttributeValue
		var hasOld, hasNext bool
		if stored != nil {
			old, hasOld = c.valuesOf(stored)
		}
		if uw.kind != kindDelete {
			next, hasNext = c.valuesOf(after)
		}
		if hasOld && !(hasNext && uniqueguard.Same(old, next)) {
			key := u.guardKey(c, old)
			if !notMine[guardID(t, key)] {
				uw.guards = append(uw.guards, guardAction{c: c, values: old, key: key})
			}
		}
		if hasNext {
			uw.guards = append(uw.guards, guardAction{c: c, values: next, key: u.guardKey(c, next), claim: true})
		}
	}
	me := uniqueguard.OwnerText(t.baseKeyAttrs(), w.key)
	acts := make([]types.TransactWriteItem, 0, len(uw.guards))
	for _, g := range uw.guards {
		acts = append(acts, g.action(t, info, me))
	}
	return acts, nil
}

// guardID is a guard's partition key, which names it.
func guardID(t *Table, key map[string]types.AttributeValue) string {
	return attrvalue.Text(key[t.opts.PartitionKey])
}

// action is the guard's transaction action (uniqueguard's), me its owner (an
// OwnerText).
func (g guardAction) action(t *Table, info *entityInfo, me string) types.TransactWriteItem {
	ug := uniqueguard.Guard{Key: g.key, Claim: g.claim, OwnerType: info.discriminator, Constraint: g.c.name, Values: g.values}
	return ug.Action(t.name, t.opts.PartitionKey, t.opts.TypeAttribute, me)
}

// ---- Errors.

// UniqueError reports a write refused because another item holds a unique
// value. It matches [ErrNotUnique], [ErrAlreadyExists] (a value already exists)
// and [ErrCondition]; use ErrNotUnique (or errors.As) to tell it from an item
// already at a Create's key.
type UniqueError struct {
	Entity     string            // Go type name of the entity
	Constraint string            // the constraint: its attributes joined by "+" ("email", "orgId+slug")
	Fields     []string          // Go field names of the constraint
	Attributes []string          // their stored attribute names
	Values     []string          // the values, as text
	Owner      map[string]string // the holder's primary key, when DynamoDB returned the guard; nil otherwise
	Err        error
}

// Error names the entity, the fields, the values and, when known, the holder.
func (e *UniqueError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: ")
	b.WriteString(e.Entity)
	b.WriteString(".")
	b.WriteString(strings.Join(e.Fields, "+"))
	b.WriteString(" (unique ")
	b.WriteString(e.Constraint)
	b.WriteString("): value ")
	b.WriteString(strings.Join(uniqueguard.QuoteAll(e.Values), ", "))
	b.WriteString(" is held by another item")
	if e.Owner != nil {
		b.WriteString(formatKey(e.Owner))
	}
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(ErrNotUnique.Error(), "singletable: "))
	return b.String()
}

// Unwrap returns the AWS error.
func (e *UniqueError) Unwrap() error { return e.Err }

// Is matches ErrNotUnique, ErrAlreadyExists and ErrCondition.
func (e *UniqueError) Is(target error) bool {
	return target == ErrNotUnique || target == ErrAlreadyExists || target == ErrCondition
}

// uniqueError is the error of a claim refused: holder is the guard as it stood
// (nil: unknown).
func (g guardAction) uniqueError(t *Table, info *entityInfo, holder map[string]types.AttributeValue, err error) *UniqueError {
	ue := &UniqueError{Entity: info.name, Constraint: g.c.name, Err: err}
	for i, f := range g.c.fields {
		ue.Fields = append(ue.Fields, f.GoName)
		ue.Attributes = append(ue.Attributes, f.Name)
		ue.Values = append(ue.Values, uniqueguard.Text(g.values[i]))
	}
	if o, ok := holder[uniqueguard.Owner].(*types.AttributeValueMemberS); ok {
		if key, ok := uniqueguard.OwnerKey(t.baseKeyAttrs(), o.Value); ok {
			ue.Owner = t.keyStrings(key)
		}
	}
	return ue
}

// checkWriteBack refuses a migration's write-back that changes a unique value:
// it would need its guards moved, which a write-back does not do.
func (u *uniqueFeature) checkWriteBack(stored, want map[string]types.AttributeValue) error {
	if u == nil {
		return nil
	}
	t := u.info.table
	for _, c := range u.cons {
		a, okA := c.valuesOf(stored)
		b, okB := c.valuesOf(want)
		if okA != okB || okA && !uniqueguard.Same(a, b) {
			return fmt.Errorf("singletable: write-back of %s%s: the migration changes the unique value %s, whose guard only a transaction moves: not written back (write the item with Put): %w", u.info.name, formatKey(t.keyStrings(stored)), c.name, ErrInvalidInput)
		}
	}
	return nil
}
