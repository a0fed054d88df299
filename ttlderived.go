package singletable

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/ttlexpiry"
)

// Derived TTL. `singletable:"ttl,from=createdAt,after=720h"` on the ttl field (or
// the [DeriveTTL] option) makes the item's expiry a function of another field:
// ttl = from + after, in Unix seconds (rounded down). from names a stored
// attribute: a time.Time field (stored any way) or an integer field of Unix
// seconds (milliseconds for a createdAt or updatedAt tagged unixms); after is a
// time.ParseDuration text or a count of days ("30d"), more than zero.
//
// The library owns the field, as it owns updatedAt: every whole-item write (Put,
// Create, BatchPut, TxPut, TxCreate, Mutate's write) computes it after the
// timestamps are stamped and replaces what the value held (a value read earlier
// may carry a ttl derived from a base no longer stored); a zero base leaves the
// ttl out (the item does not expire). An Update that Sets the base stores the new
// ttl in the same request; one that stamps the base (from=updatedAt) too, so the
// expiry slides with every write. from=createdAt: a Put, an Upsert or an Update
// stores the ttl with if_not_exists beside createdAt, so an existing item keeps
// both; an item written before the ttl was declared (its createdAt stored, no
// ttl) gets its stored createdAt + after, never now + after: the write is
// conditioned on the item holding its ttl or no createdAt, and when it does
// not, sent again with the ttl derived from the createdAt it holds (one more
// request, once per such item; a transaction's action, which cannot be sent
// again alone, stores the ttl its own createdAt gives). An Update may not Set
// or Remove the ttl field, nor Remove the base (the ttl would outlive it: Put
// the item instead), nor Add to it, SetIfNotExists it or change it as a list
// (the ttl could not move with it: Set it instead); each is refused before
// sending. Delete and TxCheck store nothing; migration
// write-back writes only what the migration changed. Reads judge expiry with
// [SkipExpired] from the ttl stored, as for any ttl field. Cost: none beyond the
// attribute.

// derivedTTL is an entity's derived ttl.
type derivedTTL struct {
	ttl   *codec.Field
	from  string // the base's stored attribute name
	after time.Duration
	// given by the tag (else by DeriveTTL), for messages.
	tag bool
}

// DeriveTTL derives the entity's ttl field from the time field stored as from
// plus after, as the tag `singletable:"ttl,from=...,after=..."` does (see the
// notes on derived TTL). The entity needs a ttl field, without from= in its tag.
func DeriveTTL(from string, after time.Duration) RegisterOption {
	return deriveTTLOption{from: from, after: after}
}

type deriveTTLOption struct {
	from  string
	after time.Duration
}

func (o deriveTTLOption) apply(_ *Table, info *entityInfo) error {
	h := info.hooks
	if h == nil || h.ttl == nil {
		return &EntityError{Entity: info.name, Reason: "DeriveTTL(" + strconv.Quote(o.from) + ", " + o.after.String() + "): the entity has no field tagged singletable:\"ttl\""}
	}
	if h.derivedTTL != nil {
		return &EntityError{Entity: info.name, Field: h.ttl.GoName, Reason: "DeriveTTL given, and the ttl field's tag derives it already (from=" + h.derivedTTL.from + "): give one"}
	}
	d := &derivedTTL{ttl: h.ttl, from: o.from, after: o.after}
	if err := d.check(info); err != nil {
		return err
	}
	h.derivedTTL = d
	return nil
}

// compileTTLTag compiles a ttl tag with options (from=, after=).
func compileTTLTag(info *entityInfo, index []int, sf reflect.StructField, mods []string) error {
	fail := func(reason string) error { return &EntityError{Entity: info.name, Field: sf.Name, Reason: reason} }
	from, after, reason := ttlexpiry.ParseTag(mods)
	if reason != "" {
		return fail(reason)
	}
	d := &derivedTTL{tag: true, from: from, after: after}
	if err := compileTTL(info, index, sf); err != nil {
		return err
	}
	d.ttl = info.hooks.ttl
	if err := d.check(info); err != nil {
		return err
	}
	info.hooks.derivedTTL = d
	return nil
}

// check refuses a base that is no time, a duration that is not positive.
func (d *derivedTTL) check(info *entityInfo) error {
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: d.ttl.GoName, Reason: "ttl derived from " + strconv.Quote(d.from) + ": " + reason}
	}
	if d.after <= 0 {
		return fail("after must be more than zero, not " + d.after.String())
	}
	f, ok := info.plan.Field(d.from)
	if !ok {
		return fail("no stored attribute " + strconv.Quote(d.from) + info.suggestAttr(d.from))
	}
	if f == d.ttl {
		return fail("the ttl cannot be derived from itself")
	}
	if problem := ttlexpiry.BaseProblem(f); problem != "" {
		return fail(problem)
	}
	return nil
}

// derivedTTLFeature is the plan of a derived ttl, compiled at Register.
type derivedTTLFeature struct {
	d    *derivedTTL
	from *codec.Field
	ms   bool // the base is an integer of Unix milliseconds (createdAt,unixms)
	// created: the base is createdAt, which a Put keeps as stored.
	created bool
}

func newDerivedTTLFeature(info *entityInfo) *derivedTTLFeature {
	d := info.hooks.derivedTTL
	f, _ := info.plan.Field(d.from)
	df := &derivedTTLFeature{d: d, from: f}
	for _, st := range []*stampField{info.hooks.createdAt, info.hooks.updatedAt} {
		if st != nil && st.f == f {
			df.ms = st.ms
			df.created = st.role == "createdAt"
		}
	}
	return df
}

func (d *derivedTTLFeature) owns(own func(*codec.Field, string)) { own(d.d.ttl, "ttl (derived)") }

// expiry returns the ttl derived from the base's value fv (false: no base).
func (d *derivedTTLFeature) expiry(fv reflect.Value) (int64, bool) {
	return ttlexpiry.Expiry(fv, d.d.after, d.ms)
}

// setTTL stores sec (ok false: none) in the ttl field of sv.
func (d *derivedTTLFeature) setTTL(info *entityInfo, sv reflect.Value, sec int64, ok bool) error {
	fv, err := d.d.ttl.Settable(sv)
	if err != nil {
		return err
	}
	if err := ttlexpiry.Store(fv, sec, ok, info.attrName(d.d.ttl), ErrInvalidInput); err != nil || !ok {
		return err
	}
	return roundTrip(info, d.d.ttl, sv)
}

// plan derives the ttl of a whole value from its base, and has an Update that
// changes or stamps the base store the ttl derived from the new one.
func (d *derivedTTLFeature) plan(p *writePlan) error {
	info := p.info
	ttl := d.d.ttl
	if p.whole() {
		fv, _ := d.from.ValueOf(p.sv)
		sec, ok := d.expiry(fv)
		if err := d.setTTL(info, p.sv, sec, ok); err != nil {
			return err
		}
		if p.kind == kindPut && d.created && ok {
			// A Put keeps the stored createdAt, and the ttl stored with it.
			p.keeps, p.learns = true, true
			tv, _ := ttl.ValueOf(p.sv)
			av, keep, err := ttl.Encode(tv)
			if err != nil {
				return err
			}
			if keep {
				p.setIfAbsent(ttl.Name, av, nil, reflect.Value{})
				p.stake(&derivedTTLPart{f: ttl})
				d.guardLegacy(p)
			}
		}
		return nil
	}
	if p.kind != kindUpdate {
		return nil
	}
	for _, c := range p.edits {
		if c.Attr == d.from.Name && c.Op != opSet && c.Op != opRemove {
			return fmt.Errorf("%s: %s of the base of the derived ttl %s is not supported (the ttl must move with the value the base takes, which the update cannot know): use Set: %w", info.attrName(d.from), opNames[c.Op], ttl.Name, ErrInvalidInput)
		}
	}
	for _, c := range p.checks {
		if c.f != d.from {
			continue
		}
		sec, ok := d.expiry(c.fv)
		if !ok {
			return fmt.Errorf("%s: the ttl %s is derived from it: removing it would leave the ttl; Put the item instead: %w", info.attrName(d.from), ttl.Name, ErrInvalidInput)
		}
		return d.store(p, sec, false)
	}
	stamped := func(list []attrSet) (attrSet, bool) {
		for _, a := range list {
			if a.name == d.from.Name && a.fv.IsValid() {
				return a, true
			}
		}
		return attrSet{}, false
	}
	if a, ok := stamped(p.attrs); ok { // updatedAt
		if sec, ok := d.expiry(a.fv); ok {
			return d.store(p, sec, false)
		}
	}
	if a, ok := stamped(p.absent); ok { // createdAt, stored where the item has none
		if sec, ok := d.expiry(a.fv); ok {
			if err := d.store(p, sec, true); err != nil {
				return err
			}
			d.guardLegacy(p)
		}
	}
	return nil
}

// guardLegacy guards a write that stores the ttl with if_not_exists beside the
// createdAt it keeps against an item written before the ttl was declared (its
// createdAt stored, no ttl): such an item gets its stored createdAt + after
// (ttlexpiry.Legacy: the write is adapted and sent again). A transaction's
// action, which cannot be sent again alone, is left as planned.
func (d *derivedTTLFeature) guardLegacy(p *writePlan) {
	if p.env != nil && p.env.tx {
		return
	}
	info := p.info
	l, guard := ttlexpiry.NewLegacy(&p.w.b, d.d.ttl.Name, d.from.Name, func(base types.AttributeValue) (types.AttributeValue, bool) {
		return d.derive(info, base)
	})
	p.w.legacy = l
	p.guard(guard)
}

// derive is the ttl derived from a stored base; false when it holds no time.
func (d *derivedTTLFeature) derive(info *entityInfo, base types.AttributeValue) (types.AttributeValue, bool) {
	v := reflect.New(info.goType).Elem()
	fv, err := d.from.Settable(v)
	if err != nil || d.from.Decode(base, fv) != nil {
		return nil, false
	}
	sec, ok := d.expiry(fv)
	if !ok {
		return nil, false
	}
	av, err := d.ttlAV(info, sec)
	return av, err == nil && av != nil
}

// ttlAV is the ttl sec as the ttl field stores it (nil: not stored).
func (d *derivedTTLFeature) ttlAV(info *entityInfo, sec int64) (types.AttributeValue, error) {
	tv := reflect.New(info.goType).Elem()
	if err := d.setTTL(info, tv, sec, true); err != nil {
		return nil, err
	}
	fv, _ := d.d.ttl.ValueOf(tv)
	av, keep, err := d.d.ttl.Encode(fv)
	if err != nil || !keep {
		return nil, err
	}
	return av, nil
}

// store has an Update store the ttl sec (ifAbsent: where the item has none).
func (d *derivedTTLFeature) store(p *writePlan, sec int64, ifAbsent bool) error {
	av, err := d.ttlAV(p.info, sec)
	if err != nil || av == nil {
		return err
	}
	if ifAbsent {
		p.setIfAbsent(d.d.ttl.Name, av, nil, reflect.Value{})
	} else {
		p.set(d.d.ttl.Name, av)
	}
	return nil
}

// derivedTTLPart sets in the value a Put wrote the ttl stored: derived from the
// value's createdAt, or kept with the stored one.
type derivedTTLPart struct {
	f *codec.Field
	noPart
}

func (d *derivedTTLPart) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	av, ok := attrs[d.f.Name]
	if !ok || !w.whole.IsValid() {
		return attrs, nil
	}
	fv, err := d.f.Settable(w.whole)
	if err != nil {
		return attrs, err
	}
	fv.Set(reflect.Zero(fv.Type()))
	return attrs, d.f.Decode(av, fv)
}
