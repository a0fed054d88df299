package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
	"github.com/singletable/singletable/internal/updateplan"
)

// change is one change an Update's options give (internal/updateplan).
type change = updateplan.Change

const (
	opSet    = updateplan.Set
	opRemove = updateplan.Remove
)

type updateOptions struct {
	changes []change
	cond    expression.ConditionBuilder
	upsert  bool
	clobber bool
	ret     types.ReturnValue // Returning (returnvalues.go); "": ALL_NEW
}

type changeOption change

func (c changeOption) applyUpdate(o *updateOptions) error {
	o.changes = append(o.changes, change(c))
	return nil
}

// Set sets a field, named by its stored attribute name, to value. The value must be
// of the field's type or convert to it without loss (5 for an int64 field, "x" for
// a named string type). Setting an omitempty field to its zero value removes it.
// attr may be a document path into a map, struct or list ("address.city",
// "lines[2].qty"), checked against T's types (see update_ops.go); the value is
// then of the type at the path.
func Set(attr string, value any) UpdateOption {
	return changeOption{Op: opSet, Attr: attr, Value: value}
}

// Remove removes fields, named by their stored attribute names, or parts of them
// named by document paths: "address.zip", or "tags[2]" to remove a list element
// by its index (not idempotent: see [Append]).
func Remove(attrs ...string) UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		for _, a := range attrs {
			o.changes = append(o.changes, change{Op: opRemove, Attr: a})
		}
		return nil
	})
}

// Add adds value to a number field, or its elements to a set field (DynamoDB's ADD).
// ADD is not idempotent: an Update that is retried after its response was lost may
// add twice. Guard it with a condition when that matters.
func Add(attr string, value any) UpdateOption {
	return changeOption{Op: updateplan.Add, Attr: attr, Value: value}
}

type updateFunc func(*updateOptions) error

func (f updateFunc) applyUpdate(o *updateOptions) error { return f(o) }

// Upsert lets [Entity.Update] create the item when it does not exist; the created
// item holds the key's inputs, the changes, the type attribute, createdAt (the
// key value's, else the clock's) and the keys of the indexes createdAt feeds
// beside the primary key's inputs (see the timestamps notes). Without it,
// updating a missing item fails with [ErrNotFound].
func Upsert() UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		o.upsert = true
		return nil
	})
}

// Update changes some attributes of the item at key's primary key (one UpdateItem)
// and returns the whole item as stored afterwards (ReturnValues ALL_NEW; see
// [Returning] for the item before, or only what changed). Cost: 1 WCU per 1 KB of
// the item. It stamps updatedAt, keeps createdAt and moves the counter of an
// entity with such fields, and checks the value each Set, SetIfNotExists or
// Remove (its zero value) gives a whole field with the field's [FieldValidator]
// (see the notes on validation for what is not checked, and why).
//
// Index keys whose inputs a change touches are recomputed in the same request. Their
// other inputs are taken from key, so set them there (the error says which are
// missing), and the update is conditioned on the stored values being the same: an
// index key is never written from a value that is not the item's own (a stale copy
// fails with a [*KeyError] naming the field, and nothing is written). When a change
// empties an input of an index key (Remove, Set to "" or, for an omitempty field,
// to its zero value), the index key attributes are removed and the item leaves that
// sparse index; no other input is needed. Inputs of the primary key cannot change:
// delete and put instead.
//
// For an entity with [Migrations], an item older than the schema is updated as
// stored and returned migrated in memory; it is written back on a later read.
//
// For a versioned entity the version checked is the one in key's version field:
// the update succeeds only if the stored version is that one, and stores it plus
// one. 0 means "no version yet": it matches only an item whose version is
// missing, NULL or 0 (or, with [Upsert], no item), so an update of an item that
// has a version needs the version read (pass the value Get returned as key), or
// [Clobber] to skip the check. A stale version fails with a [*ConflictError].
//
// The item must exist and be of this type, or the error matches [ErrNotFound] or
// [ErrTypeMismatch] (see [Upsert]). A failed [If] condition matches [ErrCondition].
// key is not modified.
//
//go:noinline
func (e *Entity[T]) Update(ctx context.Context, key T, opts ...UpdateOption) (_ T, err error) {
	var v T
	err = e.core().update(ctx, elem(&key), elem(&v), opts)
	return v, err
}

// update is Update: the item as returned is decoded into out (left zero on an
// error).
func (e *entity) update(ctx context.Context, sv, out reflect.Value, opts []UpdateOption) (err error) {
	if err := e.refused("Update"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Update")
	defer done(&err)
	defer zeroOnError(&err, out)
	if err := e.resolveShard(ctx, sv, true); errors.Is(err, ErrNotFound) {
		return e.itemErr("Update", nil, e.info.errNoRandomCreate("Update", err))
	} else if err != nil {
		return e.itemErr("Update", nil, err)
	}
	w, err := e.info.planUpdate(sv, opts, explainEnv(ctx)) // explain.go: nil but under Explain
	if err != nil {
		return e.itemErr("Update", nil, err)
	}
	attrs, err := e.table.execute(ctx, w)
	if err != nil {
		return err
	}
	if err := e.updateResult(ctx, w, attrs, out); err != nil { // returnvalues.go
		return e.itemErr("Update", w.keyStr, err)
	}
	return nil
}

// updatePlan is an Update being planned, phase by phase (see planUpdate), on
// top of the writePlan the feature plans contribute to: u plans the changes and
// the index keys (internal/updateplan).
type updatePlan struct {
	writePlan
	o updateOptions
	u updateplan.Plan
}

// planUpdate validates the changes and builds the update and condition
// expressions, in phases: the changes (checked and encoded by
// internal/updateplan, list, set and nested operations too), the feature plans
// (the version, updatedAt, createdAt, the count, validation, return values, the
// receipt), the index keys recomputed, the upsert's key inputs, what is stored
// only where the item holds none, the guard.
// env is nil but for a transaction with a caller's token (planenv.go).
func (info *entityInfo) planUpdate(sv reflect.Value, opts []UpdateOption, env *planEnv) (*writeRequest, error) {
	p := &updatePlan{}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("a nil option: %w", ErrInvalidInput)
		}
		if err := opt.applyUpdate(&p.o); err != nil {
			return nil, err
		}
	}
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	p.start(info, kindUpdate, sv, env, nil)
	p.clobber, p.upsert, p.cond, p.ret = p.o.clobber, p.o.upsert, p.o.cond.IsSet(), p.o.ret
	w, u := &p.w, &p.u
	w.key, w.keyStr, w.returnNew, w.upsert = k, ks, true, p.o.upsert
	*u = updateplan.Plan{E: updateEntity{info}, K: updateEntity{info}, B: &w.b, Invalid: ErrInvalidInput, InvalidKey: ErrInvalidKey,
		Limit: MaxItemBytes, SV: sv, Upsert: p.o.upsert, NewValues: map[string]*reflect.Value{}, Added: map[string]bool{}, Stored: map[string]bool{}}
	if err := p.phase(u.Changes(p.o.changes)); err != nil {
		return nil, err
	}
	for _, c := range u.Checks { // for the field's checks (validation)
		p.checks = append(p.checks, fieldValue{f: c.F, fv: c.FV, removed: c.Removed})
	}
	w.changed, p.repeats = u.Changed, p.repeats || u.Repeats
	p.edits = p.o.changes
	if err := p.run(); err != nil { // planner.go: the feature plans
		return nil, err
	}
	if len(p.o.changes) == 0 && !p.o.upsert && !p.counts {
		return nil, fmt.Errorf("no changes: %w", ErrInvalidInput)
	}
	p.libraryValues()
	for _, phase := range []func() error{u.IndexKeys, u.UpsertInputs, p.ifAbsent} {
		if err := p.phase(phase()); err != nil {
			return nil, err
		}
	}
	w.update = expr.Update(u.Sets, u.Removes, u.Adds, u.Deletes)
	w.paths, w.lists = u.Paths, u.Lists
	w.resendable = p.resendable()
	return w, p.condition(p.o.cond)
}

// phase takes what a phase of the changes' plan guards and the stored inputs it
// conditions on, in order, once it ran without error.
func (p *updatePlan) phase(err error) error {
	if err != nil {
		return err
	}
	for _, g := range p.u.Guards {
		p.guard(g)
	}
	for _, in := range p.u.Inputs {
		p.w.inputs = append(p.w.inputs, storedInput{field: in.Field, index: in.Index, av: in.AV, orAbsent: in.OrAbsent, keys: in.Keys})
	}
	p.u.Guards, p.u.Inputs = p.u.Guards[:0], p.u.Inputs[:0]
	return nil
}

// libraryValues sets what the plans store as given and the numbers they move,
// and the type; a field they set (updatedAt) counts as changed for the index
// keys it feeds.
func (p *updatePlan) libraryValues() {
	w, u := &p.w, &p.u
	u.Sets = append(u.Sets, w.b.Name(p.info.table.opts.TypeAttribute)+" = "+w.b.S(p.info.discriminator))
	for i := range p.attrs {
		if a := &p.attrs[i]; a.f != nil {
			u.NewValues[a.name] = &a.fv
			if u.Library == nil {
				u.Library = map[string]bool{}
			}
			u.Library[a.name] = true
		}
	}
	for _, n := range p.incs {
		w.changed = append(w.changed, "the count of "+strconv.Quote(n.name))
	}
	u.Sets = p.setClauses(u.Sets)
}

// ifAbsent stores what the plans store only where the item holds none (the
// incarnation of an item an upsert creates; createdAt, but where the upsert
// stores it as an input of a key) and, beside a field so stored, the keys of the
// indexes it feeds (updateplan's AbsentKeys: a *KeyError names the field when
// an item's keys are missing beside another value).
func (p *updatePlan) ifAbsent() error {
	for _, a := range p.absent {
		if err := p.u.IfAbsent(a.name, a.av, a.f, a.fv); err != nil {
			return err
		}
	}
	return nil
}

// updateEntity is what internal/updateplan knows of an entity.
type updateEntity struct{ info *entityInfo }

func (e updateEntity) Field(attr string) (*codec.Field, bool) { return e.info.plan.Field(attr) }
func (e updateEntity) Label(f *codec.Field) string            { return e.info.attrName(f) }
func (e updateEntity) Owned(f *codec.Field) string            { return e.info.owned[f] }
func (e updateEntity) BaseInput(attr string) bool             { return e.info.baseInputs[attr] }
func (e updateEntity) CheckValue(f *codec.Field, av types.AttributeValue) (int, error) {
	return e.info.checkValue(f, av)
}
func (e updateEntity) Resolve(p docpath.Path) (*docpath.Resolved, error) {
	return e.info.resolvePath(p)
}
func (e updateEntity) KeyInputs(f *codec.Field) []string {
	attrs, _ := e.info.keyInputOf(f)
	return attrs
}

// Indexes yields the entity's indexes with their key templates.
func (e updateEntity) Indexes(yield func(string, [2]updateplan.Key) bool) {
	for _, ix := range e.info.table.opts.Indexes {
		if pair, ok := e.info.indexes[ix.Name]; ok {
			var keys [2]updateplan.Key
			for j, kt := range pair {
				if kt != nil {
					keys[j] = kt
				}
			}
			if !yield(ix.Name, keys) {
				return
			}
		}
	}
}

// Base returns the primary key's templates.
func (e updateEntity) Base() []updateplan.Key {
	base := e.info.baseTemplates()
	keys := make([]updateplan.Key, len(base))
	for i, kt := range base {
		keys[i] = kt
	}
	return keys
}

// RenderKeys renders an index's keys (renderIndex) as stored (keyAV).
func (e updateEntity) RenderKeys(keys [2]updateplan.Key, get func(updateplan.Key, int) keytmpl.Value) ([2]types.AttributeValue, bool, error) {
	var pair [2]*keyTemplate
	for j, k := range keys {
		if k != nil {
			pair[j] = k.(*keyTemplate)
		}
	}
	var avs [2]types.AttributeValue
	vals, complete, err := e.info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) {
		return kt.renderWith(e.info, func(i int) keytmpl.Value { return get(kt, i) }, true)
	})
	if err != nil || !complete {
		return avs, complete, err
	}
	for j, kt := range pair {
		if kt != nil {
			avs[j] = e.info.table.keyAV(kt.attr, vals[j])
		}
	}
	return avs, true, nil
}

// Attr and Inputs make a keyTemplate an updateplan.Key.
func (kt *keyTemplate) Attr() string           { return kt.attr }
func (kt *keyTemplate) Inputs() []*codec.Field { return kt.fields }
