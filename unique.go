package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"

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
//     transaction: the write was acknowledged, so it succeeds even when another
//     write changed the item before that read (the item returned holds that
//     write too) or deleted it (the zero value is returned). With [Upsert] it
//     also claims the constraints that include an input of the primary key (the
//     item it may create holds them; a constraint of key inputs alone is claimed
//     by every upsert). Add, SetIfNotExists and list operations on a unique
//     attribute are refused. One that touches no unique attribute (nor the
//     ttl, which guards carry: below) is a single UpdateItem, as for any entity.
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
// A write whose transaction is cancelled because the item's unique values
// changed since it read them reads them again and is planned again; when every
// attempt (Backoff.MaxAttempts) loses that race, or is cancelled by other
// writers' transactions alone, it gives up with nothing written: its error
// says so, names the value that moved, and matches [ErrConflict] and
// [ErrCondition].
//
// Every unique transaction carries a ClientRequestToken made once per call: a
// lost answer is sent again under the same token, which DynamoDB applies at most
// once; when it cannot be sent again, the item read back judges it (its receipt;
// for a Delete, item and freed guards gone) or the error matches [ErrAmbiguous].
// A guard carries its owner's expiry under the table's TTL attribute, for an
// entity with a ttl field, so that DynamoDB deletes the guard with its owner:
// every claim stores the ttl the owner holds after the write (Create, Put and
// TxPut: the value's; an Update: the one it Sets, else the one read, on the
// condition that the item still holds it), and an Update or TxUpdate that
// changes the ttl (Set, Remove, Add; a derived ttl that slides) claims every
// value the item holds again, carrying the new one: such an Update is a
// transaction too. Where the write cannot know the expiry (Add, a transaction's
// action that leaves a stored ttl as it is), the guard carries none and never
// expires before its owner; SweepUnique frees it once the owner is gone. A
// migration written back that changes the ttl is not written back (OnError
// gets ErrInvalidInput). DynamoDB deletes expired items each at its own
// moment: between a guard's deletion and its owner's, another item can claim
// the value while the expired owner is still stored.
//
// Writers outside the library (the SDK, DynamoDB's TTL deleting an owner whose
// guard carries no expiry) can leave a guard without its owner, or an owner
// without its guard: [Entity.SweepUnique] reports them and, when asked,
// repairs them (a guard restored carries its owner's ttl).
//
// Register refuses a unique field that is not a string, number, []byte or
// time.Time, one with another role, a constraint that includes every input of
// the primary key (unique already), an attribute named twice, and a table whose
// base keys are not strings.

// A guard item (its type, attributes and action) is internal/uniqueguard's.

// maxTxActions is the number of actions DynamoDB takes in one TransactWriteItems.
const maxTxActions = 100

// uniqueConstraint is one set of attributes whose values together are unique
// among the entity's items (internal/uniqueguard).
type uniqueConstraint = uniqueguard.Set

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
	return uniqueguard.SplitOptions(opts)
}

// compileUniqueField makes the struct field at index unique on its own.
func compileUniqueField(info *entityInfo, index []int, sf reflect.StructField) error {
	f, err := storedField(info, index, sf, "unique")
	if err != nil {
		return err
	}
	u := info.uniqueOf()
	u.cons = append(u.cons, &uniqueConstraint{Name: f.Name, Fields: []*codec.Field{f}})
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
	fail := func(r *uniqueguard.Refusal) error {
		return &EntityError{Entity: info.name, Field: r.Field, Reason: r.Reason}
	}
	cons, r := uniqueguard.Parse(opts, info.plan.Field, info.suggestAttr)
	if r != nil {
		return fail(r)
	}
	if len(cons) > 0 {
		info.uniqueOf().cons = append(info.uniqueOf().cons, cons...)
	}
	u := info.unique
	if u == nil {
		return nil
	}
	t := info.table
	for _, a := range t.baseKeyAttrs() {
		if typ, ok := t.opts.KeyTypes[a]; ok && typ != types.ScalarAttributeTypeS {
			return fail(&uniqueguard.Refusal{Field: a, Reason: "unique values keep guard items under string keys, and the table's key attribute " + strconv.Quote(a) + " is of type " + string(typ)})
		}
	}
	u.attrs, r = uniqueguard.Check(u.cons, info.baseInputs, func(f *codec.Field) *uniqueguard.Refusal {
		if err := uniqueFieldType(info, f); err != nil {
			return &uniqueguard.Refusal{Field: err.Field, Reason: err.Reason}
		}
		return nil
	})
	if r != nil {
		return fail(r)
	}
	return nil
}

// uniqueFieldType refuses a unique field of a type whose values are not one
// string, number or binary, or that has another role.
func uniqueFieldType(info *entityInfo, f *codec.Field) *EntityError {
	fail := func(reason string) *EntityError {
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
	if reason := uniqueguard.TypeReason(f.Type); reason != "" {
		return fail(reason)
	}
	return nil
}

// describe adds the constraints to an entity's design.
func (u *uniqueFeature) describe(e *design.Entity) {
	if u == nil {
		return
	}
	for _, c := range u.cons {
		names := make([]string, len(c.Fields))
		for i, f := range c.Fields {
			names[i] = f.Name
		}
		e.Unique = append(e.Unique, names)
	}
}

// holds reports whether attr is an attribute of a constraint.
func (u *uniqueFeature) holds(attr string) bool { return slices.Contains(u.attrs, attr) }

// ---- Planning a write.

// uniqueWrite is a write's part in its entity's unique values: what
// internal/uniqueguard plans (the constraints touched, the values stored, the
// guards), and what a transaction takes as stored.
type uniqueWrite struct {
	uniqueguard.Write
	u    *uniqueFeature
	kind writeKind
	// tx: a transaction's action, which reads nothing: stored is what the item
	// is taken to hold (the key value's values, or for TxPut the new ones).
	tx     bool
	stored map[string]types.AttributeValue
	// ttl is what the write does to the owner's expiry, which its claims carry.
	ttl ownerTTL
}

// ownerTTL is what a write does to its item's ttl (uniqueguard.Expiry): sets
// it to av (nil: removes it), moves it by an amount (unknown), stores av only
// where the item holds none (ifAbsent), or leaves it.
type ownerTTL struct {
	set, unknown, ifAbsent bool
	av                     types.AttributeValue
}

// plan makes a write that stores, changes or frees a unique value a
// transaction with its guards; refuses the writes that cannot carry one.
func (u *uniqueFeature) plan(p *writePlan) error {
	w := &uniqueWrite{u: u, kind: p.kind, tx: p.env != nil && p.env.tx}
	w.Attrs = u.attrs
	switch p.kind {
	case kindBatchPut:
		return u.refuseBatch()
	case kindCreate, kindPut:
		if err := u.planWhole(w, p); err != nil {
			return err
		}
		if err := u.planTTL(w, p); err != nil {
			return err
		}
		p.receipt = true
	case kindDelete:
		w.Op, w.Touched = uniqueguard.Delete, u.cons
		if err := u.txStored(w, p); err != nil {
			return err
		}
	case kindUpdate:
		next, err := u.updateValues(p)
		if err != nil {
			return err
		}
		w.Op, w.Next, w.Touched = uniqueguard.Update, next, uniqueguard.Touched(u.cons, next)
		if p.upsert { // a created item holds the key's inputs, and claims their constraints
			keys, err := u.keyValues(p.sv)
			if err != nil {
				return err
			}
			w.Upsert(u.cons, func(a string) bool { return u.info.baseInputs[a] }, keys)
		}
		if err := u.planTTL(w, p); err != nil {
			return err
		}
		if w.ttl.set || w.ttl.unknown { // the guards carry the ttl: each claimed again
			w.Touched = u.cons
		}
		if len(w.Touched) == 0 {
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
	next, err := u.keyValues(p.sv)
	if err != nil {
		return err
	}
	w.Op, w.Touched, w.Next = uniqueguard.Put, u.cons, next
	if p.kind == kindCreate {
		w.Op = uniqueguard.Create
	}
	if w.tx && p.kind == kindPut {
		w.stored = w.Next // TxPut: the stored values must be these, or no item
	}
	return nil
}

// planTTL learns what the write does to the item's ttl (none for an entity
// without a ttl field): the plans' clauses (a derived ttl), the caller's
// changes of the field (Update), else a whole item's value.
func (u *uniqueFeature) planTTL(w *uniqueWrite, p *writePlan) error {
	f := u.ttlField()
	if f == nil {
		return nil
	}
	t := &w.ttl
	for _, a := range p.attrs {
		if a.name == f.Name {
			t.set, t.av = true, a.av
		}
	}
	for _, a := range p.absent {
		if a.name == f.Name {
			t.ifAbsent, t.av = true, a.av
		}
	}
	for _, c := range p.edits {
		if c.Attr != f.Name {
			continue
		}
		switch c.Op {
		case opSet:
			av, err := uniqueguard.SetValue(f, c.Value)
			if err != nil {
				return fmt.Errorf("%s: %w: %w", u.info.attrName(f), ErrInvalidInput, err)
			}
			t.set, t.av = true, av
		case opRemove:
			t.set, t.av = true, nil
		default:
			t.unknown = true
		}
	}
	if p.whole() && !t.set && !t.ifAbsent {
		av, err := u.keyValues(p.sv, f.Name)
		if err != nil {
			return err
		}
		t.set, t.av = true, av[f.Name]
	}
	return nil
}

// ttlField is the entity's ttl field, nil when it has none.
func (u *uniqueFeature) ttlField() *codec.Field {
	if h := u.info.hooks; h != nil {
		return h.ttl
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
			av, err := uniqueguard.SetValue(f, c.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
			}
			next[c.Attr] = av
		default:
			return nil, fmt.Errorf("%s: %s of a unique value is not supported (the value a guard holds must be known before the write): use Set or Remove: %w", info.attrName(f), opNames[c.Op], ErrInvalidInput)
		}
	}
	return next, nil
}

// refuseBatch is the error of a batch write of an entity with unique values.
func (u *uniqueFeature) refuseBatch() error {
	return fmt.Errorf("%s has unique values (%s), whose guards only a transaction keeps, and a batch has no conditions and no transactions: use Put, Create, Delete or Transact: %w", u.info.name, uniqueguard.Names(u.cons), ErrInvalidInput)
}

// keyValues encodes the unique attributes the value sv holds: a whole item's,
// or those a transaction's TxUpdate or TxDelete takes as the stored ones from
// its key value.
func (u *uniqueFeature) keyValues(sv reflect.Value, attrs ...string) (map[string]types.AttributeValue, error) {
	if attrs == nil {
		attrs = u.attrs
	}
	out, f, err := uniqueguard.Encode(attrs, u.info.plan.Field, sv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", u.info.attrName(f), ErrInvalidInput, err)
	}
	return out, nil
}

// guardKey is the key of the guard of a constraint's values (uniqueguard.Key).
func (u *uniqueFeature) guardKey(c *uniqueConstraint, values []types.AttributeValue) map[string]types.AttributeValue {
	t := u.info.table
	sk := t.opts.SortKey
	if t.opts.NoSortKey {
		sk = ""
	}
	return uniqueguard.Key(t.reservedPrefix(), string(t.opts.Delimiter), u.info.discriminator, c.Name, values, t.opts.PartitionKey, sk)
}

// build conditions the write's item action on the unique values stored being
// those of stored (the item as read; nil: none), and returns the guard actions
// (internal/uniqueguard's Build): a claim of each value the write stores, a
// free of each it gives up (but those of notMine, owned by another item). It
// builds on base, w's expression as planned, so that it can build again.
func (uw *uniqueWrite) build(t *Table, w *writeRequest, base expr.Builder, baseCond string, stored map[string]types.AttributeValue, notMine map[string]bool) ([]types.TransactWriteItem, error) {
	info := uw.u.info
	if stored != nil && !uw.tx && !info.isType(stored) {
		stored = nil // another type's item: the type guard fails the write
	}
	w.b, w.cond, w.condP = base.Clone(), baseCond, nil
	var conds []string
	if f := uw.u.ttlField(); f != nil {
		// The claims carry the owner's expiry after the write; one taken from
		// the item as read holds only if the item's ttl is still the one read.
		tt := uw.ttl
		uw.TTLAttr = f.Name
		uw.TTL = uniqueguard.Expiry(f.Name, tt.set, tt.unknown, tt.ifAbsent, tt.av, stored, !uw.tx, w.legacy.Stored)
		if !uw.tx && !tt.set && !tt.unknown && uw.kind != kindCreate && uw.kind != kindDelete {
			conds = append(conds, "attribute_not_exists("+w.b.Name(t.opts.PartitionKey)+") OR "+expr.Same(&w.b, f.Name, stored))
		}
	}
	conds = append(conds, uw.Build(&w.b, t.opts.PartitionKey, info.discriminator, stored, uw.u.guardKey,
		func(key map[string]types.AttributeValue) bool { return notMine[guardID(t, key)] })...)
	if uw.kind != kindCreate {
		w.cond = expr.And(append([]string{w.cond}, conds...)...)
	}
	return uw.Actions(t.name, t.opts.PartitionKey, t.opts.TypeAttribute, uniqueguard.OwnerText(t.baseKeyAttrs(), w.key)), nil
}

// guardID is a guard's partition key, which names it.
func guardID(t *Table, key map[string]types.AttributeValue) string {
	return attrvalue.Text(key[t.opts.PartitionKey])
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
	owner := ""
	if e.Owner != nil {
		owner = formatKey(e.Owner)
	}
	return uniqueguard.ErrorText(e.Entity, e.Fields, e.Constraint, e.Values, owner, ErrNotUnique.Error())
}

// Unwrap returns the AWS error.
func (e *UniqueError) Unwrap() error { return e.Err }

// Is matches ErrNotUnique, ErrAlreadyExists and ErrCondition.
func (e *UniqueError) Is(target error) bool {
	return target == ErrNotUnique || target == ErrAlreadyExists || target == ErrCondition
}

// uniqueError is the error of a claim refused, g: holder is the guard as it
// stood (nil: unknown).
func uniqueError(t *Table, info *entityInfo, g uniqueguard.Guard, holder map[string]types.AttributeValue, err error) *UniqueError {
	ue := &UniqueError{Entity: info.name, Constraint: g.Constraint, Err: err}
	for i, f := range g.Of.Fields {
		ue.Fields = append(ue.Fields, f.GoName)
		ue.Attributes = append(ue.Attributes, f.Name)
		ue.Values = append(ue.Values, uniqueguard.Text(g.Values[i]))
	}
	if key, ok := uniqueguard.Holder(t.baseKeyAttrs(), holder); ok {
		ue.Owner = t.keyStrings(key)
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
		a, okA := c.ValuesOf(stored)
		b, okB := c.ValuesOf(want)
		if okA != okB || okA && !uniqueguard.Same(a, b) {
			return errorf("write-back of %s%s: the migration changes the unique value %s, whose guard only a transaction moves: not written back (write the item with Put): %w", u.info.name, formatKey(t.keyStrings(stored)), c.Name, ErrInvalidInput)
		}
	}
	if f := u.ttlField(); f != nil && !attrvalue.Equal(stored[f.Name], want[f.Name]) {
		return errorf("write-back of %s%s: the migration changes the ttl %s, which the guards of its unique values carry and only a transaction moves: not written back (write the item with Put): %w", u.info.name, formatKey(t.keyStrings(stored)), f.Name, ErrInvalidInput)
	}
	return nil
}
