package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

type changeOp uint8

const (
	opSet changeOp = iota
	opRemove
	opAdd
)

type change struct {
	op     changeOp
	attr   string
	value  any
	values []any // list and set operations (update_ops.go)
}

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
	return changeOption{op: opSet, attr: attr, value: value}
}

// Remove removes fields, named by their stored attribute names, or parts of them
// named by document paths: "address.zip", or "tags[2]" to remove a list element
// by its index (not idempotent: see [Append]).
func Remove(attrs ...string) UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		for _, a := range attrs {
			o.changes = append(o.changes, change{op: opRemove, attr: a})
		}
		return nil
	})
}

// Add adds value to a number field, or its elements to a set field (DynamoDB's ADD).
// ADD is not idempotent: an Update that is retried after its response was lost may
// add twice. Guard it with a condition when that matters.
func Add(attr string, value any) UpdateOption {
	return changeOption{op: opAdd, attr: attr, value: value}
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
// The item must exist and be of this type, or the error matches [ErrNotFound] or
// [ErrTypeMismatch] (see [Upsert]). A failed [If] condition matches [ErrCondition].
// key is not modified.
func (e *Entity[T]) Update(ctx context.Context, key T, opts ...UpdateOption) (_ T, err error) {
	var zero T
	if e == nil {
		return zero, errNilEntity[T]("Update")
	}
	ctx, done := e.begin(ctx, "Update")
	defer done(&err)
	sv := reflect.ValueOf(&key).Elem()
	if err := e.resolveShard(ctx, sv, true); errors.Is(err, ErrNotFound) {
		return zero, e.itemErr("Update", nil, e.info.errNoRandomCreate("Update", err))
	} else if err != nil {
		return zero, e.itemErr("Update", nil, err)
	}
	w, err := e.info.planUpdate(sv, opts, nil)
	if err != nil {
		return zero, e.itemErr("Update", nil, err)
	}
	attrs, err := e.table.execute(ctx, w)
	if err != nil {
		return zero, err
	}
	v, err := e.updateResult(ctx, w, attrs) // returnvalues.go
	if err != nil {
		return zero, e.itemErr("Update", w.keyStr, err)
	}
	return v, nil
}

// updatePlan is an Update being planned, phase by phase (see planUpdate), on
// top of the writePlan the feature plans contribute to.
type updatePlan struct {
	writePlan
	o updateOptions

	sets, removes, adds []string
	deletes             []string        // DELETE clauses (update_ops.go)
	stored              map[string]bool // attributes an upsert sets to the key value's inputs
	// newValues holds the Go value each Set gives a field, for index key rendering;
	// a nil entry means the field was emptied or removed.
	newValues map[string]*reflect.Value
	added     map[string]bool
	// library holds the fields the plans set (updatedAt): an index key they alone
	// touch needs no other input (leaveIndex).
	library map[string]bool
	sent    int            // bytes of the values set or added
	paths   []docpath.Path // the paths changed, to refuse overlaps (update_ops.go)
	lists   []*listOp      // the Appends and Prepends, which depend on the stored list's type (update_ops.go)
}

// planUpdate validates the changes and builds the update and condition
// expressions, in phases: the changes (encoded; list, set and nested operations
// in update_ops.go), the feature plans (the version, updatedAt, createdAt, the
// count, validation, return values, the receipt), the index keys recomputed, the
// upsert's key inputs, what is stored only where the item holds none, the guard.
// env is nil but for a transaction with a caller's token (planenv.go).
func (info *entityInfo) planUpdate(sv reflect.Value, opts []UpdateOption, env *planEnv) (*writeRequest, error) {
	p := &updatePlan{newValues: map[string]*reflect.Value{}, added: map[string]bool{}, stored: map[string]bool{}}
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
	w := &p.w
	w.key, w.keyStr, w.returnNew, w.upsert = k, ks, true, p.o.upsert
	if err := p.changes(); err != nil {
		return nil, err
	}
	p.edits = p.o.changes
	if err := p.run(); err != nil { // planner.go: the feature plans
		return nil, err
	}
	if len(p.o.changes) == 0 && !p.o.upsert && !p.counts {
		return nil, fmt.Errorf("no changes: %w", ErrInvalidInput)
	}
	p.libraryValues()
	for _, phase := range []func() error{p.indexKeys, p.upsertInputs, p.ifAbsent} {
		if err := phase(); err != nil {
			return nil, err
		}
	}
	w.update = expr.Update(p.sets, p.removes, p.adds, p.deletes)
	w.paths, w.lists = p.paths, p.lists
	w.resendable = p.resendable()
	return w, p.condition(p.o.cond)
}

// libraryValues sets what the plans store as given and the numbers they move,
// and the type; a field they set (updatedAt) counts as changed for the index
// keys it feeds.
func (p *updatePlan) libraryValues() {
	w := &p.w
	p.sets = append(p.sets, w.b.Name(p.info.table.opts.TypeAttribute)+" = "+w.b.S(p.info.discriminator))
	for i := range p.attrs {
		if a := &p.attrs[i]; a.f != nil {
			p.newValues[a.name] = &a.fv
			if p.library == nil {
				p.library = map[string]bool{}
			}
			p.library[a.name] = true
		}
	}
	for _, n := range p.incs {
		w.changed = append(w.changed, "the count of "+strconv.Quote(n.name))
	}
	p.sets = p.setClauses(p.sets)
}

// changes validates and encodes each change, and records the values given whole
// fields for their checks (validation).
func (p *updatePlan) changes() error {
	info, w := p.info, &p.w
	for _, c := range p.o.changes {
		f, ok := info.plan.Field(c.attr)
		if !ok || c.op > opAdd {
			if err := p.pathChange(c); err != nil { // update_ops.go
				return err
			}
			continue
		}
		if _, dup := p.newValues[c.attr]; dup || p.added[c.attr] || p.pathTouched(c.attr) {
			return fmt.Errorf("%s: changed twice in one update: %w", info.attrName(f), ErrInvalidInput)
		}
		if err := info.refuseOwned(f, ""); err != nil {
			return err
		}
		if info.baseInputs[c.attr] {
			return fmt.Errorf("%s: feeds the primary key, which cannot change: %w", info.attrName(f), ErrInvalidInput)
		}
		w.changed = append(w.changed, opNames[c.op]+" "+info.attrName(f))
		name := w.b.Name(c.attr)
		if c.op == opRemove {
			p.removes = append(p.removes, name)
			p.newValues[c.attr] = nil
			// Checked as a Set of the field's zero value is.
			p.checks = append(p.checks, fieldValue{f: f, fv: reflect.Zero(f.Type), removed: true})
			continue
		}
		fv, av, keep, err := p.encode(f, c.value)
		if err != nil {
			return err
		}
		if c.op == opSet {
			p.checks = append(p.checks, fieldValue{f: f, fv: fv})
		}
		switch {
		case c.op == opAdd:
			switch av.(type) {
			case *types.AttributeValueMemberN, *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
			default:
				return fmt.Errorf("%s: ADD needs a number or a set field: %w", info.attrName(f), ErrInvalidInput)
			}
			p.adds = append(p.adds, name+" "+w.b.Value(av))
			p.added[c.attr] = true
			p.repeats = true // a second attempt would add again
		case !keep:
			p.removes = append(p.removes, name)
			p.newValues[c.attr] = nil
		default:
			p.sets = append(p.sets, name+" = "+w.b.Value(av))
			if keytmpl.ValueOfReflect(fv).Kind == keytmpl.KindMissing {
				p.newValues[c.attr] = nil
			} else {
				p.newValues[c.attr] = &fv
			}
		}
	}
	return nil
}

// refuseOwned refuses a change to a field a feature owns (the version, createdAt,
// updatedAt, the counter); label names the change ("" for the field alone).
func (info *entityInfo) refuseOwned(f *codec.Field, label string) error {
	role := info.owned[f]
	if role == "" {
		return nil
	}
	if label == "" {
		label = info.attrName(f)
	}
	if role == "version" {
		return fmt.Errorf("%s: the version changes by itself: %w", label, ErrInvalidInput)
	}
	return fmt.Errorf("%s: the %s field is set by the library on every write: %w", label, role, ErrInvalidInput)
}

// encode converts and encodes a value given to Set or Add, checking it as a whole
// item's values are checked; keep is false for a value omitempty leaves out.
func (p *updatePlan) encode(f *codec.Field, value any) (reflect.Value, types.AttributeValue, bool, error) {
	info := p.info
	fv, err := codec.Convert(value, f.Type)
	if err != nil {
		return fv, nil, false, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
	}
	av, keep, err := f.Encode(fv)
	if err != nil {
		return fv, nil, false, fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
	}
	if keep {
		size, err := info.checkValue(f, av)
		if err != nil {
			return fv, nil, false, err
		}
		// What an update sends must fit in one item, whatever the item holds already.
		if p.sent += size; p.sent > MaxItemBytes {
			return fv, nil, false, fmt.Errorf("%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", info.attrName(f), p.sent, MaxItemBytes, ErrInvalidInput)
		}
	}
	return fv, av, keep, nil
}

// indexKeys recomputes the keys of every index an input of which changed.
func (p *updatePlan) indexKeys() error {
	for _, ix := range p.info.table.opts.Indexes {
		if pair, ok := p.info.indexes[ix.Name]; ok {
			if err := p.indexKey(ix.Name, pair); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexKey recomputes one index's keys, if a change touched an input. An emptied
// input removes them; otherwise the untouched inputs come from the key value, on
// the condition that they are stored as given (and, for an upsert, are stored).
func (p *updatePlan) indexKey(index string, pair [2]*keyTemplate) error {
	info, w := p.info, &p.w
	touched, emptied := false, false
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.fields {
			if p.added[f.Name] {
				return fmt.Errorf("ADD to %s, an input of %s, cannot recompute it: %w", info.attrName(f), kt.attr, ErrInvalidInput)
			}
			if nv, ok := p.newValues[f.Name]; ok {
				touched = true
				emptied = emptied || nv == nil
			}
		}
	}
	switch {
	case !touched:
		return nil
	case emptied: // the item leaves the index; nothing needs rendering
		for _, kt := range pair {
			if kt != nil {
				p.removes = append(p.removes, w.b.Name(kt.attr))
			}
		}
		return nil
	}
	var needed []string
	var missing []*codec.Field
	untouched := map[*codec.Field]bool{}
	vals, complete, err := info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) {
		return kt.renderWith(info, func(i int) keytmpl.Value {
			f := kt.fields[i]
			if nv, changed := p.newValues[f.Name]; changed {
				return keytmpl.ValueOfReflect(*nv)
			}
			v := keytmpl.ValueOfField(f, p.sv)
			if v.Kind == keytmpl.KindMissing {
				needed = append(needed, info.attrName(f))
				missing = append(missing, f)
			} else {
				untouched[f] = true
			}
			return v
		}, true)
	})
	if err != nil {
		return err
	}
	if !complete {
		if p.onlyLibrary(pair) { // an updatedAt needs no other input of a sparse index
			return p.leaveIndex(index, pair, missing)
		}
		return fmt.Errorf("recomputing %s's keys needs %s; set them in the key value: %w", index, strings.Join(needed, ", "), ErrInvalidKey)
	}
	for j, kt := range pair {
		if kt != nil {
			p.sets = append(p.sets, w.b.Name(kt.attr)+" = "+w.b.Value(info.table.keyAV(kt.attr, vals[j])))
		}
	}
	for _, f := range sortedFields(untouched) {
		fv, _ := f.ValueOf(p.sv)
		av, keep, err := f.Encode(fv)
		if err != nil || !keep {
			return fmt.Errorf("%s: cannot be stored as an input of %s: %w", info.attrName(f), index, ErrInvalidInput)
		}
		w.inputs = append(w.inputs, storedInput{field: f, index: index, av: av})
		name, value := w.b.Name(f.Name), w.b.Value(av)
		p.guard(name + " = " + value)
		if p.o.upsert && !p.stored[f.Name] {
			p.stored[f.Name] = true
			p.sets = append(p.sets, name+" = "+value) // every input of a key is stored
		}
	}
	return nil
}

// sortedFields orders a set of fields by attribute name, for stable expressions.
func sortedFields(set map[*codec.Field]bool) []*codec.Field {
	out := make([]*codec.Field, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *codec.Field) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// upsertInputs makes an item an upsert creates hold the inputs of its own key.
func (p *updatePlan) upsertInputs() error {
	if !p.o.upsert {
		return nil
	}
	info, w := p.info, &p.w
	for _, kt := range info.baseTemplates() {
		for _, f := range kt.fields {
			fv, _ := f.ValueOf(p.sv)
			av, keep, err := f.Encode(fv)
			if err != nil {
				return fmt.Errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
			}
			if keep && !p.stored[f.Name] {
				p.stored[f.Name] = true
				p.sets = append(p.sets, w.b.Name(f.Name)+" = "+w.b.Value(av))
			}
		}
	}
	return nil
}

// ifAbsent stores what the plans store only where the item holds none (the
// incarnation of an item an upsert creates; createdAt, but where the upsert
// stores it as an input of a key) and, beside a field so stored, the keys of the
// indexes it feeds (absentKeys).
func (p *updatePlan) ifAbsent() error {
	w := &p.w
	for _, a := range p.absent {
		if a.f != nil && p.stored[a.name] {
			continue
		}
		name := w.b.Name(a.name)
		p.sets = append(p.sets, name+" = if_not_exists("+name+", "+w.b.Value(a.av)+")")
		if a.f != nil {
			if err := p.absentKeys(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// absentKeys writes, beside a field the update stores with if_not_exists (a
// createdAt: an upsert creating the item, or an item written before the field
// existed), the keys of every index it feeds whose other inputs are the primary
// key's (stored by every write) and that no change of this update recomputes:
// each key with if_not_exists, rendered from a.fv, the value stored when there is
// none. Without them an upserted item would hold every input of those keys but
// not the keys: it would be missing from the index for good. The update is
// conditioned on the result agreeing with the stored field: neither the field nor
// the keys stored (both written), the field equal to a.av, or both stored
// already; an item whose keys are missing beside another value fails with a
// *KeyError naming the field (pass the stored value in the key value).
func (p *updatePlan) absentKeys(a attrSet) error {
	info, w := p.info, &p.w
	for _, ix := range info.table.opts.Indexes {
		pair, ok := info.indexes[ix.Name]
		if !ok {
			continue
		}
		feeds, eligible := false, true
		for _, kt := range pair {
			if kt == nil {
				continue
			}
			for _, f := range kt.fields {
				if f == a.f {
					feeds = true
					continue
				}
				if _, touched := p.newValues[f.Name]; touched || !info.baseInputs[f.Name] {
					eligible = false
				}
			}
		}
		if !feeds || !eligible {
			continue
		}
		vals, complete, err := info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) {
			return kt.renderWith(info, func(i int) keytmpl.Value {
				if f := kt.fields[i]; f != a.f {
					return keytmpl.ValueOfField(f, p.sv)
				}
				if a.f.OmitEmpty && a.f.IsZero(a.fv) {
					return keytmpl.Value{}
				}
				return keytmpl.ValueOfReflect(a.fv)
			}, true)
		})
		if err != nil {
			return err
		}
		if !complete {
			continue
		}
		var keys, exist, absent []string
		for j, kt := range pair {
			if kt == nil {
				continue
			}
			name := w.b.Name(kt.attr)
			p.sets = append(p.sets, name+" = if_not_exists("+name+", "+w.b.Value(info.table.keyAV(kt.attr, vals[j]))+")")
			keys = append(keys, kt.attr)
			exist = append(exist, "attribute_exists("+name+")")
			absent = append(absent, "attribute_not_exists("+name+")")
		}
		cn := w.b.Name(a.name)
		p.guard("(" + expr.And(append([]string{"attribute_not_exists(" + cn + ")"}, absent...)...) + ") OR " +
			cn + " = " + w.b.Value(a.av) + " OR (" + expr.And(append([]string{"attribute_exists(" + cn + ")"}, exist...)...) + ")")
		w.inputs = append(w.inputs, storedInput{field: a.f, index: ix.Name, av: a.av, orAbsent: true, keys: keys})
	}
	return nil
}

// onlyLibrary reports whether the only inputs of an index's keys that an Update
// touched are fields the plans set (updatedAt, which every Update stamps).
func (p *updatePlan) onlyLibrary(pair [2]*keyTemplate) bool {
	if len(p.library) == 0 {
		return false
	}
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.fields {
			if _, touched := p.newValues[f.Name]; touched && !p.library[f.Name] {
				return false
			}
		}
	}
	return true
}

// leaveIndex handles an index that updatedAt feeds when the key value lacks
// another of its inputs (missing, in order): rather than ask for it, the update
// keeps the item out of the index on the condition that the first missing input
// is not stored either (so the item is in no index to move). When it is stored,
// the condition fails with a [*KeyError] that asks for it.
func (p *updatePlan) leaveIndex(index string, pair [2]*keyTemplate, missing []*codec.Field) error {
	w := &p.w
	f := missing[0]
	w.inputs = append(w.inputs, storedInput{field: f, index: index})
	p.guard("attribute_not_exists(" + w.b.Name(f.Name) + ")")
	for _, kt := range pair {
		if kt != nil {
			p.removes = append(p.removes, w.b.Name(kt.attr))
		}
	}
	return nil
}
