package singletable

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// Timestamps. A field tagged `singletable:"createdAt"` holds when the item was
// created; one tagged `singletable:"updatedAt"` when it was last written. Both are
// time.Time (or *time.Time), stored as the field's dynamodbav tag says (RFC 3339
// text, or Unix seconds with unixtime), or integers of Unix seconds
// (`singletable:"createdAt,unixms"`: milliseconds). The time is the table's clock
// ([WithClock]), read once per write, rounded to what the field stores, so a key
// rendered from it renders what is stored.
//
//   - createdAt: a write that creates the item stores the value's createdAt if it
//     holds one, else the clock's time. A write to an existing item never changes
//     it: Put (then an UpdateItem) and Update set it with if_not_exists, and return
//     the stored one. Where createdAt feeds an index key, Put renders that key from
//     the value's createdAt (the clock's time when zero) on the condition that the
//     stored one is the same or missing, so an index key is never rendered from a
//     createdAt that is not stored ([*KeyError] otherwise: pass the item as read).
//     An Update that stores createdAt with if_not_exists (an [Upsert] creating the
//     item, or an item written before the field existed) also writes, with
//     if_not_exists, the keys of each index createdAt feeds whose other inputs are
//     the primary key's, rendered from the createdAt it stores, on the condition
//     that the stored createdAt is that one, or the keys are stored already, or
//     neither is: an item whose keys are missing beside another createdAt fails
//     with a [*KeyError] naming the field (pass the stored createdAt).
//     BatchPut, which has no conditions, replaces items whole and so writes the
//     value's createdAt, or the clock's time when it is zero.
//   - updatedAt: every Put, Create, Update, Mutate, BatchPut and transaction write
//     (TxPut, TxCreate, TxUpdate) stores the clock's time; Delete, TxDelete and
//     TxCheck store nothing. An index key fed by updatedAt is recomputed by every
//     Update (its other inputs must then be in the key value). updatedAt cannot feed
//     the primary key, which would move with every write.
//   - Migration write-back (a migrated item written back on read, or by a sweep)
//     stamps nothing: it writes only what the migration changed.
//   - Update refuses Set, Remove and Add on either field: the library owns them.

// stampField is a createdAt or updatedAt field.
type stampField struct {
	f    *codec.Field
	role string
	ms   bool // an integer of Unix milliseconds (else seconds)
	// indexed lists the index key attributes the field feeds; base is set when it
	// feeds the primary key.
	indexed []string
	base    bool
}

// compileStamp makes the struct field at index the createdAt or updatedAt field.
func compileStamp(info *entityInfo, index []int, sf reflect.StructField, role string, ms bool) error {
	f, err := storedField(info, index, sf, role)
	if err != nil {
		return err
	}
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: role + " (attribute " + f.Name + "): " + reason}
	}
	if r := info.roleTaken(f); r != "" {
		return fail("the field is the " + r + " field already")
	}
	base := derefType(f.Type)
	switch {
	case base == timeType && ms:
		return fail("unixms is for integer fields; a time.Time is stored as its dynamodbav tag says (unixtime: Unix seconds)")
	case base != timeType && !isIntegerKind(base.Kind()):
		return fail("a timestamp must be a time.Time, a *time.Time or an integer of Unix seconds (milliseconds with unixms), not " + f.Type.String())
	}
	h := info.hooksOf()
	st := &stampField{f: f, role: role, ms: ms}
	for _, kt := range info.all {
		for _, kf := range kt.fields {
			if kf != f {
				continue
			}
			if kt.index == "" {
				st.base = true
			} else {
				st.indexed = append(st.indexed, kt.attr)
			}
		}
	}
	if role == "updatedAt" && st.base {
		return fail("updatedAt changes with every write, so it cannot be an input of the primary key")
	}
	if role == "createdAt" {
		if h.createdAt != nil {
			return fail("a second createdAt field (the first is " + h.createdAt.f.GoName + ")")
		}
		h.createdAt = st
	} else {
		if h.updatedAt != nil {
			return fail("a second updatedAt field (the first is " + h.updatedAt.f.GoName + ")")
		}
		h.updatedAt = st
	}
	return nil
}

// now reads the table's clock.
func (t *Table) now() time.Time { return t.opts.Clock() }

// isZero reports whether the field holds no time: a zero time.Time, a nil
// pointer, 0.
func (s *stampField) isZero(sv reflect.Value) bool {
	fv, ok := s.f.ValueOf(sv)
	if !ok {
		return true
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return true
		}
		fv = fv.Elem()
	}
	return fv.IsZero()
}

// set stores now in the field, rounded to what the field stores: the value is
// encoded and decoded again, so that it is exactly what a read will give.
func (s *stampField) set(info *entityInfo, sv reflect.Value, now time.Time) error {
	fv, err := s.f.Settable(sv)
	if err != nil {
		return fmt.Errorf("singletable: %s: %w: %w", info.attrName(s.f), ErrInvalidInput, err)
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	if fv.Type() == timeType {
		fv.Set(reflect.ValueOf(now.Round(0)))
	} else {
		n := now.Unix()
		if s.ms {
			n = now.UnixMilli()
		}
		if fv.CanInt() {
			if fv.OverflowInt(n) {
				return fmt.Errorf("singletable: %s: %d does not fit %s: %w", info.attrName(s.f), n, fv.Type(), ErrInvalidInput)
			}
			fv.SetInt(n)
		} else {
			if n < 0 || fv.OverflowUint(uint64(n)) {
				return fmt.Errorf("singletable: %s: %d does not fit %s: %w", info.attrName(s.f), n, fv.Type(), ErrInvalidInput)
			}
			fv.SetUint(uint64(n))
		}
	}
	return roundTrip(info, s.f, sv)
}

// roundTrip sets a field to its value as stored: encoded, then decoded.
func roundTrip(info *entityInfo, f *codec.Field, sv reflect.Value) error {
	fv, err := f.Settable(sv)
	if err != nil {
		return err
	}
	av, keep, err := f.Encode(fv)
	if err != nil {
		return fmt.Errorf("singletable: %s: %w: %w", info.attrName(f), ErrInvalidInput, err)
	}
	if !keep {
		return nil
	}
	fv.Set(reflect.Zero(fv.Type()))
	return f.Decode(av, fv)
}

// stampWhole stamps a whole value about to be written: createdAt when it is zero,
// updatedAt always.
func (h *writeHooks) stampWhole(info *entityInfo, sv reflect.Value, now time.Time) error {
	if h == nil {
		return nil
	}
	if c := h.createdAt; c != nil && c.isZero(sv) {
		if err := c.set(info, sv, now); err != nil {
			return err
		}
	}
	if u := h.updatedAt; u != nil {
		if err := u.set(info, sv, now); err != nil {
			return err
		}
	}
	return nil
}

// stamped returns the field's encoded value in sv.
func (s *stampField) stamped(sv reflect.Value) (types.AttributeValue, bool) {
	fv, ok := s.f.ValueOf(sv)
	if !ok {
		return nil, false
	}
	av, keep, err := s.f.Encode(fv)
	return av, err == nil && keep
}

// library reports whether attr is a field the library writes itself on every
// write (createdAt, updatedAt, the counter), which Update may not change.
func (h *writeHooks) library(f *codec.Field) string {
	switch {
	case h == nil:
		return ""
	case h.createdAt != nil && h.createdAt.f == f:
		return "createdAt"
	case h.updatedAt != nil && h.updatedAt.f == f:
		return "updatedAt"
	case h.counter == f:
		return "counter"
	}
	return ""
}

// touchUpdated is the Update phase that stores the clock's time in updatedAt and
// lets the index keys it feeds be recomputed (it runs before indexKeys).
func (p *updatePlan) touchUpdated() error {
	h := p.info.hooks
	if h == nil || h.updatedAt == nil {
		return nil
	}
	u := h.updatedAt
	now := p.w.env.now(p.info.table)
	tv := reflect.New(p.info.goType).Elem()
	if err := u.set(p.info, tv, now); err != nil {
		return err
	}
	av, ok := u.stamped(tv)
	if !ok {
		return nil
	}
	fv, _ := u.f.ValueOf(tv)
	p.sets = append(p.sets, p.w.b.Name(u.f.Name)+" = "+p.w.b.Value(av))
	p.newValues[u.f.Name] = &fv
	return nil
}

// keepCreated is the Update phase that stores createdAt on an item that has none
// (if_not_exists: an upsert creating the item, or an item written before the
// field existed) and moves the counter. It runs after upsert, which may store
// createdAt as an input of a key.
func (p *updatePlan) keepCreated() error {
	h := p.info.hooks
	if h == nil {
		return nil
	}
	if c := h.createdAt; c != nil && !p.stored[c.f.Name] {
		// The value's own createdAt when it holds one, else the clock's.
		src := p.sv
		if c.isZero(p.sv) {
			src = reflect.New(p.info.goType).Elem()
			if err := c.set(p.info, src, p.w.env.now(p.info.table)); err != nil {
				return err
			}
		}
		if av, ok := c.stamped(src); ok {
			name := p.w.b.Name(c.f.Name)
			p.sets = append(p.sets, name+" = if_not_exists("+name+", "+p.w.b.Value(av)+")")
			if err := p.createdKeys(c, src, av); err != nil {
				return err
			}
		}
	}
	if h.counter != nil {
		p.sets = append(p.sets, counterIncrement(&p.w.b, h.counter))
		p.conds = append(p.conds, h.counterGuard(&p.w.b))
		p.nonIdempotent = true
	}
	return nil
}

// createdKeys writes, beside a createdAt the update stores with if_not_exists
// (an upsert creating the item, or an item written before the field existed),
// the keys of every index it feeds whose other inputs are the primary key's
// (stored by every write) and that no change of this update recomputes: each
// key with if_not_exists, rendered from av, the createdAt stored when there is
// none. Without them an upserted item would hold every input of those keys but
// not the keys: it would be missing from the index for good. The update is
// conditioned on the result agreeing with the stored createdAt: no createdAt
// and no keys (both written), createdAt equal to av, or both stored already;
// an item whose keys are missing beside a createdAt that is not av fails with
// a *KeyError naming the field (pass the stored createdAt in the key value).
func (p *updatePlan) createdKeys(c *stampField, src reflect.Value, av types.AttributeValue) error {
	info, w := p.info, p.w
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
				if f == c.f {
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
			return kt.renderWith(info, func(i int) keyValue {
				if f := kt.fields[i]; f != c.f {
					return keyValueOfField(f, p.sv)
				}
				return keyValueOfField(c.f, src)
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
		cn := w.b.Name(c.f.Name)
		p.conds = append(p.conds, "("+expr.And(append([]string{"attribute_not_exists(" + cn + ")"}, absent...)...)+") OR "+
			cn+" = "+w.b.Value(av)+" OR ("+expr.And(append([]string{"attribute_exists(" + cn + ")"}, exist...)...)+")")
		w.inputs = append(w.inputs, storedInput{field: c.f, index: ix.Name, av: av, orAbsent: true, keys: keys})
	}
	return nil
}

// onlyStamped reports whether the only input of an index's keys that an Update
// touched is updatedAt, which every Update stamps.
func (p *updatePlan) onlyStamped(pair [2]*keyTemplate) bool {
	h := p.info.hooks
	if h == nil || h.updatedAt == nil {
		return false
	}
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.fields {
			if _, touched := p.newValues[f.Name]; touched && f != h.updatedAt.f {
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
	w := p.w
	f := missing[0]
	w.inputs = append(w.inputs, storedInput{field: f, index: index})
	p.conds = append(p.conds, "attribute_not_exists("+w.b.Name(f.Name)+")")
	for _, kt := range pair {
		if kt != nil {
			p.removes = append(p.removes, w.b.Name(kt.attr))
		}
	}
	return nil
}
