// Package avtest holds helpers shared by the tests of internal/codec and
// internal/wire, which compare decoded Go values with attributevalue's. Only
// tests import it.
package avtest

import (
	"math"
	"reflect"
)

// SameValue is reflect.DeepEqual except that NaNs equal each other, floats
// compare their sign (0 and -0 differ) and funcs compare by nil-ness.
func SameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return sameFloat(a.Float(), b.Float())
	case reflect.Func:
		return a.IsNil() == b.IsNil()
	case reflect.Pointer:
		return samePointer(a, b)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return SameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		return sameFields(a, b)
	case reflect.Slice:
		return a.IsNil() == b.IsNil() && a.Len() == b.Len() && sameElems(a, b)
	case reflect.Array:
		return sameElems(a, b)
	case reflect.Map:
		return sameMap(a, b)
	}
	return sameScalar(a, b)
}

// sameFloat says whether x and y are equal with the same sign, or both NaN.
func sameFloat(x, y float64) bool {
	return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
}

// samePointer compares two pointers of one type by what they point to.
func samePointer(a, b reflect.Value) bool {
	if a.IsNil() || b.IsNil() {
		return a.IsNil() == b.IsNil()
	}
	if a.Pointer() == b.Pointer() {
		return true
	}
	return SameValue(a.Elem(), b.Elem())
}

// sameFields compares two structs of one type field by field.
func sameFields(a, b reflect.Value) bool {
	for i := 0; i < a.NumField(); i++ {
		if !SameValue(a.Field(i), b.Field(i)) {
			return false
		}
	}
	return true
}

// sameElems compares the elements of two slices or arrays of one length.
func sameElems(a, b reflect.Value) bool {
	for i := 0; i < a.Len(); i++ {
		if !SameValue(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

// sameMap compares two maps of one type entry by entry.
func sameMap(a, b reflect.Value) bool {
	if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
		return false
	}
	it := a.MapRange()
	for it.Next() {
		bv := b.MapIndex(it.Key())
		if !bv.IsValid() || !SameValue(it.Value(), bv) {
			return false
		}
	}
	return true
}

// sameScalar compares scalars, chans and unsafe pointers, which are
// comparable; unexported ones by their kind's accessor.
func sameScalar(a, b reflect.Value) bool {
	if a.CanInterface() {
		return a.Interface() == b.Interface()
	}
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	}
	return true
}
