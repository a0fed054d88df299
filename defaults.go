package singletable

import (
	"encoding"
	"reflect"
	"strconv"
	"time"

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

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

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
	v, err := parseDefault(base, text)
	if err != nil {
		return fail(err.Error())
	}
	// The default must be a value DynamoDB can store.
	probe := reflect.New(info.goType).Elem()
	fv, err := f.Settable(probe)
	if err != nil {
		return fail(err.Error())
	}
	setDefault(fv, v)
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

// parseDefault parses text as a value of type t.
func parseDefault(t reflect.Type, text string) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	if reflect.PointerTo(t).Implements(textUnmarshalerType) && t != timeType {
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
			return v, err
		}
		return v, nil
	}
	var err error
	switch {
	case t == timeType:
		var tm time.Time
		if tm, err = time.Parse(time.RFC3339Nano, text); err == nil {
			v.Set(reflect.ValueOf(tm))
		}
	case t.Kind() == reflect.String:
		v.SetString(text)
	case t.Kind() == reflect.Bool:
		var b bool
		if b, err = strconv.ParseBool(text); err == nil {
			v.SetBool(b)
		}
	case v.CanInt():
		var n int64
		if n, err = strconv.ParseInt(text, 10, t.Bits()); err == nil {
			v.SetInt(n)
		}
	case v.CanUint():
		var n uint64
		if n, err = strconv.ParseUint(text, 10, t.Bits()); err == nil {
			v.SetUint(n)
		}
	case v.CanFloat():
		var x float64
		if x, err = strconv.ParseFloat(text, t.Bits()); err == nil {
			v.SetFloat(x)
		}
	default:
		return v, &unsupportedDefault{t}
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return v, &badDefault{t: t, err: err}
	}
	return v, nil
}

type unsupportedDefault struct{ t reflect.Type }

func (e *unsupportedDefault) Error() string {
	return "a default is text, parsed for strings, numbers, booleans, times or encoding.TextUnmarshaler types, not " + e.t.String()
}

type badDefault struct {
	t   reflect.Type
	err error
}

func (e *badDefault) Error() string {
	return "does not parse as " + e.t.String() + ": " + e.err.Error()
}

// setDefault stores a parsed default in fv (a settable field value).
func setDefault(fv reflect.Value, v reflect.Value) {
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		p.Elem().Set(v)
		fv.Set(p)
		return
	}
	fv.Set(v)
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
		setDefault(fv, def.value)
	}
	return nil
}
