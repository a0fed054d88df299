package singletable

import (
	"reflect"
	"strconv"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
)

// Defaults. `singletable:"default=TEXT"` gives a field the value it takes when it
// is zero ("", 0, false, a zero time, a nil pointer) in a whole item about to be
// written: Put, Create, BatchPut, TxPut, TxCreate and Mutate's result. Defaults
// are applied first, before timestamps, validation and the rendering of keys, so
// a defaulted key input renders its default. TEXT is parsed once, at [Register],
// for the field's type: strings as they are, numbers and booleans as strconv
// parses them, times in RFC 3339, and any type whose pointer implements
// encoding.TextUnmarshaler by that; a TEXT that does not parse is a registration
// error naming Type.Field and the attribute. Update and reads apply no default:
// they render keys from the value as given, and Update changes only what it is
// told. A zero the caller means (a 0 that is a real count) needs a pointer field.

// fieldDefault is one field's default, parsed.
type fieldDefault struct {
	f     *codec.Field
	value reflect.Value // of the field's type with the pointer removed
}

// compileDefault parses the default of the struct field at index.
func compileDefault(info *entityInfo, index []int, sf reflect.StructField, text string) error {
	f, err := storedField(info, index, sf, "defaulted")
	if err != nil {
		return err
	}
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "default " + strconv.Quote(text) + " for attribute " + f.Name + ": " + reason}
	}
	base := derefType(f.Type)
	v, err := codec.ParseDefault(base, text)
	if err != nil {
		return fail(err.Error())
	}
	// The default must be a value DynamoDB can store.
	probe := reflect.New(info.goType).Elem()
	fv, err := f.Settable(probe)
	if err != nil {
		return fail(err.Error())
	}
	codec.SetThrough(fv, v)
	if av, keep, err := f.Encode(fv); err != nil {
		return fail(err.Error())
	} else if keep {
		if _, p := attrvalue.Check(av); p != nil {
			return fail(p.What)
		}
	}
	h := info.hooksOf()
	h.defaults = append(h.defaults, fieldDefault{f: f, value: v})
	return nil
}

// defaultsFeature is the plan of an entity's defaults, compiled at Register.
type defaultsFeature struct {
	defaults []fieldDefault
	noOwner
}

// plan gives each zero defaulted field of a whole value its default.
func (d *defaultsFeature) plan(p *writePlan) error {
	if !p.whole() {
		return nil
	}
	for _, def := range d.defaults {
		fv, ok := def.f.ValueOf(p.sv)
		if ok && !fv.IsZero() {
			continue
		}
		fv, err := def.f.Settable(p.sv)
		if err != nil {
			return err
		}
		codec.SetThrough(fv, def.value)
	}
	return nil
}
