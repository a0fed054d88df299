package codec

import (
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Fast paths for the commonest fields: a string, bool, integer or float kind, or exactly time.Time, with
// no (un)marshaler, reached from the struct without passing through a pointer. They read and write the
// field through a typed pointer at its offset instead of building a reflect.Value for it.
//
// Invariants that keep this safe: the pointer is the address of an addressable struct value of the plan's
// type plus the field's offset, so it stays inside that object; every access has the field's own layout
// (the kind's Go type, or time.Time), so the compiler emits the write barriers and the race detector sees
// ordinary accesses. A fast decoder reports "not handled" for anything but the plain cases (a type
// mismatch, a parse error, an overflow), and the field's reflect decoder, which follows attributevalue,
// then runs on the unchanged field.

// fastEncodeFunc encodes the field at p; nil means omit.
type fastEncodeFunc func(e *encState, p unsafe.Pointer) types.AttributeValue

// fastDecodeFunc decodes av into the field at p, or reports that it did not.
type fastDecodeFunc func(av types.AttributeValue, p unsafe.Pointer) bool

// fastOffset returns the offset of the field at index in t when no pointer is on the way.
func fastOffset(t reflect.Type, index []int) (uintptr, bool) {
	var off uintptr
	for i, x := range index {
		if i > 0 && t.Kind() != reflect.Struct {
			return 0, false // an embedded pointer
		}
		sf := t.Field(x)
		off += sf.Offset
		t = sf.Type
	}
	return off, true
}

// fastCodecs returns the fast encoder and decoder for a field of type t with options o, or nils.
func fastCodecs(t reflect.Type, o options) (fastEncodeFunc, fastDecodeFunc) {
	if hasMarshaler(t) || hasUnmarshaler(t) {
		return nil, nil
	}
	if t == timeType {
		return fastTime(o)
	}
	switch t.Kind() {
	case reflect.String:
		return fastString(t, o)
	case reflect.Bool:
		return fastBool(o)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fastInt(t, o)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fastUint(t, o)
	case reflect.Float64:
		return fastFloat64(o)
	}
	return nil, nil
}

// fastZero returns what a zero value encodes to under o: nothing (omitempty), NULL (nullempty), or else
// the value.
func fastZero(o options) func(e *encState, enc func() types.AttributeValue) types.AttributeValue {
	omit, null := o.omitEmpty, o.nullEmpty
	return func(e *encState, enc func() types.AttributeValue) types.AttributeValue {
		switch {
		case omit:
			return nil
		case null:
			return e.newNull()
		}
		return enc()
	}
}

// fastTime is fastCodecs for exactly time.Time. Its codecs are functions, not closures: fastTime is
// small enough to be inlined, and a closure copied by inlining was compiled without inlining its own
// calls (timeInRange, time.Time.Unix).
func fastTime(o options) (fastEncodeFunc, fastDecodeFunc) {
	if o.asString {
		return nil, nil
	}
	if o.unixTime {
		return encodeTimeUnixFast, decodeTimeFast
	}
	return encodeTimeFast, decodeTimeFast
}

// encodeTimeFast encodes the time.Time at p as an RFC 3339 string.
func encodeTimeFast(e *encState, p unsafe.Pointer) types.AttributeValue {
	tm := (*time.Time)(p)
	if !timeInRange(*tm) {
		e.err = errTimeRange
		return nil
	}
	return e.newS(e.formatTime(*tm))
}

// encodeTimeUnixFast encodes the time.Time at p as Unix seconds (the unixtime option).
func encodeTimeUnixFast(e *encState, p unsafe.Pointer) types.AttributeValue {
	tm := (*time.Time)(p)
	return e.newN(e.formatInt(tm.Unix()))
}

// decodeTimeFast decodes S (RFC 3339), N (Unix seconds) or NULL into the time.Time at p.
func decodeTimeFast(av types.AttributeValue, p unsafe.Pointer) bool {
	var tm time.Time
	var err error
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		if a == nil {
			return false
		}
		tm, err = time.Parse(time.RFC3339, a.Value)
	case *types.AttributeValueMemberN:
		if a == nil {
			return false
		}
		var s int64
		s, err = strconv.ParseInt(a.Value, 10, 64)
		tm = time.Unix(s, 0)
	case *types.AttributeValueMemberNULL:
		tm = time.Time{}
	default:
		return false
	}
	if err != nil {
		return false
	}
	*(*time.Time)(p) = tm
	return true
}

// fastString is fastCodecs for a string kind.
func fastString(t reflect.Type, o options) (fastEncodeFunc, fastDecodeFunc) {
	omit, null := o.omitEmpty, o.nullEmpty
	zero := fastZero(o)
	number := t.Implements(numberType) && !o.asString
	enc := func(e *encState, p unsafe.Pointer) types.AttributeValue {
		s := *(*string)(p)
		if s == "" && (omit || null) {
			return zero(e, nil)
		}
		if number {
			return e.newN(s)
		}
		return e.newS(s)
	}
	dec := func(av types.AttributeValue, p unsafe.Pointer) bool {
		switch a := av.(type) {
		case *types.AttributeValueMemberS:
			if a != nil {
				*(*string)(p) = a.Value
				return true
			}
		case *types.AttributeValueMemberN:
			if a != nil {
				*(*string)(p) = a.Value
				return true
			}
		case *types.AttributeValueMemberNULL:
			*(*string)(p) = ""
			return true
		}
		return false
	}
	return enc, dec
}

// fastBool is fastCodecs for a bool kind.
func fastBool(o options) (fastEncodeFunc, fastDecodeFunc) {
	omit, null := o.omitEmpty, o.nullEmpty
	zero := fastZero(o)
	enc := func(e *encState, p unsafe.Pointer) types.AttributeValue {
		b := *(*bool)(p)
		if !b && (omit || null) {
			return zero(e, nil)
		}
		return e.newBool(b)
	}
	dec := func(av types.AttributeValue, p unsafe.Pointer) bool {
		switch a := av.(type) {
		case *types.AttributeValueMemberBOOL:
			if a != nil {
				*(*bool)(p) = a.Value
				return true
			}
		case *types.AttributeValueMemberNULL:
			*(*bool)(p) = false
			return true
		}
		return false
	}
	return enc, dec
}

// fastInt is fastCodecs for a signed integer kind.
func fastInt(t reflect.Type, o options) (fastEncodeFunc, fastDecodeFunc) {
	omit, null := o.omitEmpty, o.nullEmpty
	zero := fastZero(o)
	load, store := intAccess(t.Size())
	bits := uint(t.Size() * 8)
	asString := o.asString
	enc := func(e *encState, p unsafe.Pointer) types.AttributeValue {
		i := load(p)
		if i == 0 && (omit || null) {
			return zero(e, nil)
		}
		if asString {
			return e.newS(e.formatInt(i))
		}
		return e.newN(e.formatInt(i))
	}
	dec := func(av types.AttributeValue, p unsafe.Pointer) bool {
		if isNULL(av) {
			store(p, 0)
			return true
		}
		n, ok := numberText(av, asString)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil || bits < 64 && (i < -1<<(bits-1) || i > 1<<(bits-1)-1) {
			return false
		}
		store(p, i)
		return true
	}
	return enc, dec
}

// fastUint is fastCodecs for an unsigned integer kind.
func fastUint(t reflect.Type, o options) (fastEncodeFunc, fastDecodeFunc) {
	omit, null := o.omitEmpty, o.nullEmpty
	zero := fastZero(o)
	load, store := uintAccess(t.Size())
	bits := uint(t.Size() * 8)
	asString := o.asString
	enc := func(e *encState, p unsafe.Pointer) types.AttributeValue {
		u := load(p)
		if u == 0 && (omit || null) {
			return zero(e, nil)
		}
		if asString {
			return e.newS(e.formatUint(u))
		}
		return e.newN(e.formatUint(u))
	}
	dec := func(av types.AttributeValue, p unsafe.Pointer) bool {
		if isNULL(av) {
			store(p, 0)
			return true
		}
		n, ok := numberText(av, asString)
		if !ok {
			return false
		}
		u, err := strconv.ParseUint(n, 10, 64)
		if err != nil || bits < 64 && u > 1<<bits-1 {
			return false
		}
		store(p, u)
		return true
	}
	return enc, dec
}

// fastFloat64 is fastCodecs for float64.
func fastFloat64(o options) (fastEncodeFunc, fastDecodeFunc) {
	omit, null := o.omitEmpty, o.nullEmpty
	zero := fastZero(o)
	asString := o.asString
	enc := func(e *encState, p unsafe.Pointer) types.AttributeValue {
		f := *(*float64)(p)
		if f == 0 && (omit || null) {
			return zero(e, nil)
		}
		if asString {
			return e.newS(e.formatFloat(f, 64))
		}
		return e.newN(e.formatFloat(f, 64))
	}
	dec := func(av types.AttributeValue, p unsafe.Pointer) bool {
		if isNULL(av) {
			*(*float64)(p) = 0
			return true
		}
		n, ok := numberText(av, asString)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return false
		}
		*(*float64)(p) = f
		return true
	}
	return enc, dec
}

func isNULL(av types.AttributeValue) bool {
	a, ok := av.(*types.AttributeValueMemberNULL)
	return ok && a != nil
}

func intAccess(size uintptr) (func(unsafe.Pointer) int64, func(unsafe.Pointer, int64)) {
	switch size {
	case 1:
		return func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }, func(p unsafe.Pointer, i int64) { *(*int8)(p) = int8(i) }
	case 2:
		return func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }, func(p unsafe.Pointer, i int64) { *(*int16)(p) = int16(i) }
	case 4:
		return func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }, func(p unsafe.Pointer, i int64) { *(*int32)(p) = int32(i) }
	default:
		return func(p unsafe.Pointer) int64 { return *(*int64)(p) }, func(p unsafe.Pointer, i int64) { *(*int64)(p) = i }
	}
}

func uintAccess(size uintptr) (func(unsafe.Pointer) uint64, func(unsafe.Pointer, uint64)) {
	switch size {
	case 1:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint8)(p)) }, func(p unsafe.Pointer, u uint64) { *(*uint8)(p) = uint8(u) }
	case 2:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(p)) }, func(p unsafe.Pointer, u uint64) { *(*uint16)(p) = uint16(u) }
	case 4:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint32)(p)) }, func(p unsafe.Pointer, u uint64) { *(*uint32)(p) = uint32(u) }
	default:
		return func(p unsafe.Pointer) uint64 { return *(*uint64)(p) }, func(p unsafe.Pointer, u uint64) { *(*uint64)(p) = u }
	}
}
