package singletable

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
)

// Counters. An integer field tagged `singletable:"counter"` counts the writes to
// an item after the one that created it: the write that creates the item stores
// 0 (Create, Put of a new item, an Update with Upsert that creates it) whatever
// the value holds, and every later Put, Update, Mutate, TxPut or TxUpdate adds 1
// on the server (SET n = if_not_exists(n, -1) + 1), so concurrent writers never
// lose a count. Put and Update return the count stored. A count at the largest
// value its field holds is never moved past it: the write is refused (its
// condition fails) with an error matching [ErrInvalidInput] naming the field. The library owns the
// field: Update refuses Set, Remove and Add on it, and it cannot feed a key. An
// Update with no change but the counter's is allowed: it counts a view, say.
//
// A counted write is not idempotent, so it carries a receipt (see [ErrAmbiguous]):
// an unversioned Put or Update of an entity with a counter is judged after a lost
// response as an Update with Add is, never sent twice. BatchPut, which cannot
// read the stored count, writes the value's count as it is; Delete counts nothing.

// compileCounter makes the struct field at index the counter.
func compileCounter(info *entityInfo, index []int, sf reflect.StructField) error {
	f, err := storedField(info, index, sf, "counter")
	if err != nil {
		return err
	}
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "counter (attribute " + f.Name + "): " + reason}
	}
	h := info.hooksOf()
	switch {
	case h.counter != nil:
		return fail("a second counter field (the first is " + h.counter.GoName + ")")
	case info.roleTaken(f) != "":
		return fail("the field is the " + info.roleTaken(f) + " field already")
	case !isIntegerKind(derefType(f.Type).Kind()) || f.AsString:
		return fail("a counter must be an integer stored as a number, not " + f.Type.String())
	}
	if attrs, _ := info.keyInputOf(f); len(attrs) > 0 {
		return fail("a counter changes on the server with every write, so it cannot be an input of a key (" + attrs[0] + ")")
	}
	h.counter = f
	return nil
}

// counterFeature is the counter's plan, compiled at Register.
type counterFeature struct {
	f *codec.Field
	noPart
}

func (c *counterFeature) owns(own func(*codec.Field, string)) { own(c.f, "counter") }

// plan stores 0 in the value of a Create, and has a Put or an Update move the
// count on the server (SET n = if_not_exists(n, -1) + 1) within the field's
// bound. BatchPut writes the value's count as it is; Delete counts nothing.
func (c *counterFeature) plan(p *writePlan) error {
	switch p.kind {
	case kindCreate:
		return c.setCount(p.info, p.sv, 0)
	case kindPut, kindUpdate:
		name := p.w.b.Name(c.f.Name)
		p.increment(c.f.Name, -1)
		// A count at the bound fails the condition, and explain says why:
		// nothing is written, so the item stays readable.
		p.guard("attribute_not_exists(" + name + ") OR " + name + " < " + p.w.b.Value(numberAV(counterMax(c.f))))
		p.repeats, p.counts = true, true
		if p.kind == kindPut {
			p.keeps, p.learns = true, true
		}
		p.stake(c)
	}
	return nil
}

// explain: a write whose count is at the largest value its field holds.
func (c *counterFeature) explain(w *writeRequest, cur map[string]types.AttributeValue) error {
	n, ok := cur[c.f.Name].(*types.AttributeValueMemberN)
	if !ok {
		return nil
	}
	if v, perr := strconv.ParseUint(n.Value, 10, 64); !strings.HasPrefix(n.Value, "-") && (perr != nil || v >= counterMax(c.f)) {
		return fmt.Errorf("%s: the stored count %s is the largest the field holds; counting this write would overflow it: %w", w.info.attrName(c.f), n.Value, ErrInvalidInput)
	}
	return nil
}

// settle sets the count stored in the value a Put wrote: from the item as
// stored, or, with [ReturnOld], the item replaced (plus one; 0 for a new item).
func (c *counterFeature) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	if !w.whole.IsValid() || w.kind != kindPut || w.update == "" {
		return attrs, nil
	}
	old := w.ret == types.ReturnValueAllOld
	n, known := storedCount(attrs, c.f.Name)
	switch {
	case old && attrs == nil:
		n = 0 // a new item
	case old:
		n++
	case !known:
		return attrs, nil
	}
	return attrs, c.setCount(w.info, w.whole, n)
}

// counterMax is the largest count the counter field holds.
func counterMax(f *codec.Field) uint64 {
	t := derefType(f.Type)
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return 1<<t.Bits() - 1
	}
	return 1<<(t.Bits()-1) - 1
}

// setCount stores n in the counter field of sv.
func (c *counterFeature) setCount(info *entityInfo, sv reflect.Value, n int64) error {
	fv, err := c.f.Settable(sv)
	if err != nil {
		return err
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch {
	case fv.CanInt() && !fv.OverflowInt(n):
		fv.SetInt(n)
	case fv.CanUint() && n >= 0 && !fv.OverflowUint(uint64(n)):
		fv.SetUint(uint64(n))
	default:
		return errorf("%s: the count %d does not fit %s: %w", info.attrName(c.f), n, fv.Type(), ErrInvalidInput)
	}
	return nil
}

// storedCount reads a count from an item; known is false when it is not there
// (the count then reads -1: the write that stores one stores 0).
func storedCount(item map[string]types.AttributeValue, attr string) (int64, bool) {
	n, ok := item[attr].(*types.AttributeValueMemberN)
	if !ok {
		return -1, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return -1, false
	}
	return v, true
}
