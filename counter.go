package singletable

import (
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
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

// counterIncrement is the SET clause that counts a write: 0 for an item the
// write creates, one more otherwise.
func counterIncrement(b *expr.Builder, f *codec.Field) string {
	name := b.Name(f.Name)
	return name + " = if_not_exists(" + name + ", " + b.Value(&types.AttributeValueMemberN{Value: "-1"}) + ") + " + b.Value(numberAV(1))
}

// counterMax is the largest count the counter field holds.
func counterMax(f *codec.Field) uint64 {
	t := derefType(f.Type)
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return 1<<t.Bits() - 1
	}
	return 1<<(t.Bits()-1) - 1
}

// counterGuard is the condition of a counted write that keeps the count within
// its field: none stored yet, or below the largest the field holds. A count at
// the bound fails it, and the write is explained by boundErr; nothing is
// written, so the item stays readable.
func (h *writeHooks) counterGuard(b *expr.Builder) string {
	if h == nil || h.counter == nil {
		return ""
	}
	name := b.Name(h.counter.Name)
	return "attribute_not_exists(" + name + ") OR " + name + " < " + b.Value(numberAV(counterMax(h.counter)))
}

// setCounter stores n in the counter field of sv.
func (h *writeHooks) setCounter(info *entityInfo, sv reflect.Value, n int64) error {
	if h == nil || h.counter == nil {
		return nil
	}
	fv, err := h.counter.Settable(sv)
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
		return fmt.Errorf("singletable: %s: the count %d does not fit %s: %w", info.attrName(h.counter), n, fv.Type(), ErrInvalidInput)
	}
	return nil
}
