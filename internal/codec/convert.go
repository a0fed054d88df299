package codec

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Convert turns a value given to an update (Set, Add, a path's value) into a
// reflect.Value of type t, refusing conversions that change its meaning (int to
// string) or lose information (300 into an int8).
func Convert(v any, t reflect.Type) (reflect.Value, error) {
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return reflect.Zero(t), nil
		}
		return reflect.Value{}, fmt.Errorf("nil for a field of type %s", t)
	}
	rv := reflect.ValueOf(v)
	if rv.Type().AssignableTo(t) {
		out := reflect.New(t).Elem()
		out.Set(rv)
		return out, nil
	}
	if t.Kind() == reflect.Pointer {
		inner, err := Convert(v, t.Elem())
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(inner)
		return p, nil
	}
	from, to := rv.Kind(), t.Kind()
	switch {
	case from == reflect.String && to == reflect.String,
		from == reflect.Bool && to == reflect.Bool:
		return rv.Convert(t), nil
	case rv.CanInt() || rv.CanUint() || rv.CanFloat():
		if out, err := convertNumber(rv, t); err != nil || out.IsValid() {
			return out, err
		}
	case from == reflect.Slice && to == reflect.Slice && rv.Type().ConvertibleTo(t):
		return rv.Convert(t), nil
	}
	return reflect.Value{}, fmt.Errorf("a %s cannot be stored in a field of type %s", rv.Type(), t)
}

// convertNumber converts the number rv to the numeric type t, refusing what does
// not fit; the zero Value (and no error) when t is not numeric.
func convertNumber(rv reflect.Value, t reflect.Type) (reflect.Value, error) {
	out := reflect.New(t).Elem()
	switch {
	case out.CanInt():
		var n int64
		switch {
		case rv.CanInt():
			n = rv.Int()
		case rv.CanUint() && rv.Uint() <= 1<<63-1:
			n = int64(rv.Uint())
		case rv.CanFloat() && rv.Float() == float64(int64(rv.Float())):
			n = int64(rv.Float())
		default:
			return reflect.Value{}, fmt.Errorf("%v does not fit %s", rv, t)
		}
		if out.OverflowInt(n) {
			return reflect.Value{}, fmt.Errorf("%d overflows %s", n, t)
		}
		out.SetInt(n)
		return out, nil
	case out.CanUint():
		var n uint64
		switch {
		case rv.CanUint():
			n = rv.Uint()
		case rv.CanInt() && rv.Int() >= 0:
			n = uint64(rv.Int())
		default:
			return reflect.Value{}, fmt.Errorf("%v does not fit %s", rv, t)
		}
		if out.OverflowUint(n) {
			return reflect.Value{}, fmt.Errorf("%d overflows %s", n, t)
		}
		out.SetUint(n)
		return out, nil
	case out.CanFloat():
		switch {
		case rv.CanFloat():
			out.SetFloat(rv.Float())
		case rv.CanInt():
			out.SetFloat(float64(rv.Int()))
		default:
			out.SetFloat(float64(rv.Uint()))
		}
		return out, nil
	}
	return reflect.Value{}, nil
}

// Elems makes a slice of type lt from values, each converted to its element type
// by [Convert].
func Elems(lt reflect.Type, values []any) (reflect.Value, error) {
	out := reflect.MakeSlice(lt, len(values), len(values))
	for i, v := range values {
		ev, err := Convert(v, lt.Elem())
		if err != nil {
			return out, fmt.Errorf("element %d: %w", i, err)
		}
		out.Index(i).Set(ev)
	}
	return out, nil
}

// ParseDefault parses text, a field's default= option, as a value of type t:
// strings as they are, numbers and booleans as strconv parses them, times in
// RFC 3339, and any type whose pointer implements encoding.TextUnmarshaler by
// that.
func ParseDefault(t reflect.Type, text string) (reflect.Value, error) {
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

// SetThrough stores v in fv (a settable value of v's type, or of a pointer to
// it: a new pointer to v then).
func SetThrough(fv reflect.Value, v reflect.Value) {
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		p.Elem().Set(v)
		fv.Set(p)
		return
	}
	fv.Set(v)
}
