package singletable

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
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
		return errorf("%s: %w: %w", info.attrName(s.f), ErrInvalidInput, err)
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
				return errorf("%s: %d does not fit %s: %w", info.attrName(s.f), n, fv.Type(), ErrInvalidInput)
			}
			fv.SetInt(n)
		} else {
			if n < 0 || fv.OverflowUint(uint64(n)) {
				return errorf("%s: %d does not fit %s: %w", info.attrName(s.f), n, fv.Type(), ErrInvalidInput)
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
		return errorf("%s: %w: %w", info.attrName(f), ErrInvalidInput, err)
	}
	if !keep {
		return nil
	}
	fv.Set(reflect.Zero(fv.Type()))
	return f.Decode(av, fv)
}

// stampsFeature is the plan of createdAt and updatedAt, compiled at Register.
type stampsFeature struct {
	createdAt, updatedAt *stampField
	noPart
}

func (s *stampsFeature) owns(own func(*codec.Field, string)) {
	if s.createdAt != nil {
		own(s.createdAt.f, "createdAt")
	}
	if s.updatedAt != nil {
		own(s.updatedAt.f, "updatedAt")
	}
}

// plan stamps a whole value (createdAt when it is zero, updatedAt always), and
// has a Put keep the stored createdAt (if_not_exists). An Update stores the
// clock's time in updatedAt (the index keys it feeds are recomputed) and
// createdAt where the item has none. Nothing else is stamped.
func (s *stampsFeature) plan(p *writePlan) error {
	if !p.whole() && p.kind != kindUpdate {
		return nil
	}
	info := p.info
	if p.env.replay && !p.env.atGiven {
		return fmt.Errorf("%s has timestamps: a transaction with a token needs TxOptions.At (kept with the token), so that a resend stamps the same time: %w", info.name, ErrInvalidInput)
	}
	now := p.env.now(info.table)
	if p.kind == kindUpdate {
		return s.planUpdate(p, now)
	}
	if c := s.createdAt; c != nil && c.isZero(p.sv) {
		if err := c.set(info, p.sv, now); err != nil {
			return err
		}
	}
	if u := s.updatedAt; u != nil {
		if err := u.set(info, p.sv, now); err != nil {
			return err
		}
	}
	if c := s.createdAt; c != nil && p.kind == kindPut {
		// A Put keeps the stored createdAt, and returns it.
		p.keeps, p.learns = true, true
		if av, ok := c.stamped(p.sv); ok {
			fv, _ := c.f.ValueOf(p.sv)
			p.setIfAbsent(c.f.Name, av, c.f, fv)
		} else {
			p.leave(c.f.Name)
		}
		p.stake(s)
	}
	return nil
}

// planUpdate stores the clock's time in updatedAt, and createdAt where the item
// has none: the key value's own createdAt when it holds one, else the clock's.
func (s *stampsFeature) planUpdate(p *writePlan, now time.Time) error {
	info := p.info
	if u := s.updatedAt; u != nil {
		tv := reflect.New(info.goType).Elem()
		if err := u.set(info, tv, now); err != nil {
			return err
		}
		if av, ok := u.stamped(tv); ok {
			fv, _ := u.f.ValueOf(tv)
			p.setField(u.f, av, fv)
		}
	}
	if c := s.createdAt; c != nil {
		src := p.sv
		if c.isZero(p.sv) {
			src = reflect.New(info.goType).Elem()
			if err := c.set(info, src, now); err != nil {
				return err
			}
		}
		if av, ok := c.stamped(src); ok {
			fv, _ := c.f.ValueOf(src)
			p.setIfAbsent(c.f.Name, av, c.f, fv)
		}
	}
	return nil
}

// settle sets in the value a Put wrote the createdAt stored: the value's own, or
// the one the item held already.
func (s *stampsFeature) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	c := s.createdAt
	if c == nil || !w.whole.IsValid() || w.kind != kindPut || w.update == "" {
		return attrs, nil
	}
	if av, ok := attrs[c.f.Name]; ok {
		fv, err := c.f.Settable(w.whole)
		if err != nil {
			return attrs, err
		}
		fv.Set(reflect.Zero(fv.Type()))
		if err := c.f.Decode(av, fv); err != nil {
			return attrs, err
		}
	}
	return attrs, nil
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
