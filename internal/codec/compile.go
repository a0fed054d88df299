package codec

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrUnsupportedType is wrapped by the error for a field whose type attributevalue cannot encode or decode
// (chan, func, complex, unsafe.Pointer, uintptr, or a map whose key type is not a string, number, bool or
// text (un)marshaler) and which does not implement attributevalue.Marshaler itself.
var ErrUnsupportedType = errors.New("unsupported type")

// ErrInvalidTag is wrapped by the error for a `dynamodbav` tag with an unknown or empty option, or with
// options that contradict each other or cannot apply to the field's type.
var ErrInvalidTag = errors.New("invalid tag")

var (
	marshalerType       = reflect.TypeFor[attributevalue.Marshaler]()
	unmarshalerType     = reflect.TypeFor[attributevalue.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[numberer]()
	timeType            = reflect.TypeFor[time.Time]()
	byteSliceSliceType  = reflect.TypeFor[[][]byte]()
	stringMapType       = reflect.TypeFor[map[string]string]()
	stringSliceType     = reflect.TypeFor[[]string]()
)

// numberer is the method set by which attributevalue recognises a string type holding a number, such as
// attributevalue.Number or json.Number: it is encoded as N, not S.
type numberer interface {
	Float64() (float64, error)
	Int64() (int64, error)
	String() string
}

// encodeFunc encodes v, a value of the codec's type. addr reports whether attributevalue would see v as
// addressable (and so call a Marshaler with a pointer receiver); it implies v.CanAddr(), but v may be
// addressable when addr is false (a scratch copy of a map value). A nil result means "omit".
type encodeFunc func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error)

// decodeFunc decodes av into v, which is settable.
type decodeFunc func(av types.AttributeValue, v reflect.Value) error

// typeCodec encodes and decodes values of one type under one set of options. Codecs refer to each other
// through pointers so that recursive types compile: a codec's funcs are set after its children are built.
type typeCodec struct {
	typ  reflect.Type
	opts options
	enc  encodeFunc
	dec  decodeFunc
	fb   *fallback // attributevalue itself, for what is not compiled
	// dynamic is true when the codec is attributevalue itself because the type is an interface: a
	// container of such values falls back as a whole, which costs one round trip instead of one per element.
	dynamic bool
	// wire is how internal/wire decodes the type from JSON, set by finishWires.
	wire *Wire
}

type codecKey struct {
	t reflect.Type
	o options
}

// compiler compiles the plans and codecs reachable from one struct type. Nothing it builds is published
// until the whole compilation succeeds.
type compiler struct {
	codecs    map[codecKey]*typeCodec
	fallbacks map[codecKey]*fallback
	plans     map[reflect.Type]*Plan
}

func newCompiler() *compiler {
	return &compiler{
		codecs:    map[codecKey]*typeCodec{},
		fallbacks: map[codecKey]*fallback{},
		plans:     map[reflect.Type]*Plan{},
	}
}

func (c *compiler) fallback(t reflect.Type, o options) *fallback {
	k := codecKey{t, o}
	fb := c.fallbacks[k]
	if fb == nil {
		fb = &fallback{typ: t, opts: o}
		c.fallbacks[k] = fb
	}
	return fb
}

// codec returns the codec for values of type t with options o.
func (c *compiler) codec(t reflect.Type, o options) (*typeCodec, error) {
	k := codecKey{t, o}
	if tc := c.codecs[k]; tc != nil {
		return tc, nil // possibly still being built, when t is recursive
	}
	tc := &typeCodec{typ: t, opts: o, fb: c.fallback(t, o)}
	c.codecs[k] = tc
	if err := c.build(tc); err != nil {
		return nil, err
	}
	return tc, nil
}

func (tc *typeCodec) useFallback() {
	tc.enc = tc.fb.encode
	tc.dec = tc.fb.decode
}

func (c *compiler) build(tc *typeCodec) error {
	t, o := tc.typ, tc.opts
	switch t.Kind() {
	case reflect.Interface:
		// The dynamic type is known only at run time; attributevalue handles it.
		tc.dynamic = true
		tc.useFallback()
		return nil

	case reflect.Pointer:
		et := t.Elem()
		if et.Kind() == reflect.Pointer || et.Kind() == reflect.Interface {
			// A pointer to a pointer or to an interface: rare, and attributevalue's rules for them differ
			// from a single pointer (the zero check and omitempty apply again one level down). Check what
			// can be checked and let attributevalue do it.
			if _, err := c.codec(et, o); err != nil {
				return err
			}
			tc.useFallback()
			return nil
		}
		enc, dec, err := c.plain(et, o)
		if err != nil {
			return err
		}
		tc.enc = ptrEncoder(o, marshalerEncoder(et, enc))
		tc.dec = ptrDecoder(t, dec)
		return nil
	}

	enc, dec, err := c.plain(t, o)
	if err != nil {
		return err
	}
	tc.enc = zeroEncoder(t, o, marshalerEncoder(t, enc))
	tc.dec = unmarshalerDecoder(t, dec)
	return nil
}

// plain returns the encoder and decoder for a value of t, a type that is neither a pointer nor an interface,
// that apply after attributevalue's zero-value check and Marshaler/Unmarshaler lookup.
func (c *compiler) plain(t reflect.Type, o options) (encodeFunc, decodeFunc, error) {
	fb := c.fallback(t, o)
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool, decodeBool(fb), nil

	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		enc := encodeInt
		if o.asString {
			enc = encodeIntString
		}
		return enc, decodeInt(t, o.asString, fb), nil

	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		enc := encodeUint
		if o.asString {
			enc = encodeUintString
		}
		return enc, decodeUint(t, o.asString, fb), nil

	case reflect.Float32, reflect.Float64:
		return floatEncoder(t.Bits(), o.asString), decodeFloat(t, o.asString, fb), nil

	case reflect.String:
		enc := encodeString
		if t.Implements(numberType) && !o.asString {
			enc = encodeNumberString
		}
		return enc, decodeString(fb), nil

	case reflect.Struct:
		if t.ConvertibleTo(timeType) {
			return timeEncoder(t, o.unixTime), decodeTime(t, o.asString, fb), nil
		}
		p, err := c.plan(t)
		if err != nil {
			return nil, nil, err
		}
		return structEncoder(p), structDecoder(p, fb), nil

	case reflect.Map:
		return c.mapCodec(t, o, fb)

	case reflect.Slice, reflect.Array:
		return c.listCodec(t, o, fb)

	default: // Chan, Func, UnsafePointer, Complex64, Complex128, Uintptr
		if hasMarshaler(t) {
			// attributevalue encodes nothing for these kinds once the Marshaler declines (returns nil).
			return encodeOmit, decodeNullOr(fb), nil
		}
		return nil, nil, fmt.Errorf("%w %s", ErrUnsupportedType, t)
	}
}

func hasMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

func hasUnmarshaler(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// decodesWithUnmarshaler reports whether attributevalue decodes into an addressable value of t by calling
// (*t).UnmarshalDynamoDBAttributeValue: only for a named type (it takes the address of named types only).
func decodesWithUnmarshaler(t reflect.Type) bool {
	return t.Name() != "" && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		reflect.PointerTo(t).Implements(unmarshalerType)
}

func (c *compiler) mapCodec(t reflect.Type, o options, fb *fallback) (encodeFunc, decodeFunc, error) {
	kt := t.Key()
	if !mapKeyEncodes(kt) || !mapKeyDecodes(kt) {
		if hasMarshaler(t) || hasUnmarshaler(t) {
			return fb.encode, fb.decode, nil
		}
		return nil, nil, fmt.Errorf("%w %s: map keys must be strings, numbers, bools or implement both encoding.TextMarshaler and encoding.TextUnmarshaler", ErrUnsupportedType, t)
	}
	vc, err := c.codec(t.Elem(), o.elem())
	if err != nil {
		return nil, nil, err
	}
	// A string key type with no methods is used as is. Other keys go through fmt.Sprint or
	// MarshalText/UnmarshalText in attributevalue: rare, so let it do them.
	fastKey := kt.Kind() == reflect.String && kt.NumMethod() == 0 && reflect.PointerTo(kt).NumMethod() == 0
	if !fastKey || vc.dynamic {
		return fb.encode, fb.decode, nil
	}
	if t == stringMapType {
		return stringMapEncoder(o.elem()), stringMapDecoder(vc, fb), nil
	}
	return mapEncoder(vc), mapDecoder(t, vc, fb), nil
}

func mapKeyEncodes(kt reflect.Type) bool {
	if kt.Implements(textMarshalerType) {
		return true
	}
	return isScalarKind(kt.Kind())
}

func mapKeyDecodes(kt reflect.Type) bool {
	if kt.Implements(textUnmarshalerType) || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
		return true
	}
	return isScalarKind(kt.Kind())
}

func isScalarKind(k reflect.Kind) bool {
	return k == reflect.Bool || k == reflect.String || isNumberKind(k)
}

func isNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func (c *compiler) listCodec(t reflect.Type, o options, fb *fallback) (encodeFunc, decodeFunc, error) {
	et := t.Elem()
	if et.Kind() == reflect.Uint8 {
		// Binary (B), whatever the element type's methods; a byte array's decoding is attributevalue's
		// (it panics unless the lengths match).
		if t.Kind() == reflect.Array {
			return encodeByteArray, fb.decode, nil
		}
		return encodeBytes, decodeBytes(t, fb), nil
	}
	ec, err := c.codec(et, o.elem())
	if err != nil {
		return nil, nil, err
	}
	if ec.dynamic {
		return fb.encode, fb.decode, nil
	}
	isArray := t.Kind() == reflect.Array

	var enc encodeFunc
	switch {
	case o.binarySet || t == byteSliceSliceType:
		enc = binarySetEncoder(ec, isArray)
	case o.numberSet:
		enc = numberSetEncoder(ec, isArray)
	case o.stringSet:
		enc = stringSetEncoder(ec, isArray)
	default:
		enc = listEncoder(ec, isArray)
	}
	dec := listDecoder(t, ec, fb)
	if t == stringSliceType {
		dec = stringSliceDecoder(ec, dec)
	}
	return enc, dec, nil
}

// checkOptions rejects options that contradict each other or that attributevalue would silently ignore
// for a field of type t. Options on interfaces and on types with their own (un)marshalers are not checked:
// whether they apply depends on the value or on the marshaler.
func checkOptions(t reflect.Type, o options) error {
	sets, err := checkConflicts(o)
	if err != nil {
		return err
	}
	base := deref(t)
	if base.Kind() == reflect.Interface || hasMarshaler(base) || hasUnmarshaler(base) {
		return nil
	}
	k := base.Kind()
	list := (k == reflect.Slice || k == reflect.Array) && base.Elem().Kind() != reflect.Uint8
	switch {
	case o.asString && !isNumberKind(k) && k != reflect.String:
		return fmt.Errorf("%w: option string applies only to numbers, not %s", ErrInvalidTag, t)
	case o.unixTime && !(k == reflect.Struct && base.ConvertibleTo(timeType)):
		return fmt.Errorf("%w: option unixtime applies only to time.Time, not %s", ErrInvalidTag, t)
	case (o.omitEmptyElem || o.nullEmptyElem) && !list && k != reflect.Map:
		return fmt.Errorf("%w: options omitemptyelem and nullemptyelem apply only to slices, arrays and maps, not %s", ErrInvalidTag, t)
	case sets == 1 && !list:
		return fmt.Errorf("%w: set options apply only to slices and arrays, not %s", ErrInvalidTag, t)
	case sets == 1:
		return checkSetElem(base, o)
	}
	return nil
}

// checkConflicts rejects options that contradict each other, whatever the type; sets is how many set
// options are given.
func checkConflicts(o options) (sets int, err error) {
	if o.omitEmpty && o.nullEmpty {
		return 0, fmt.Errorf("%w: omitempty and nullempty together", ErrInvalidTag)
	}
	if o.omitEmptyElem && o.nullEmptyElem {
		return 0, fmt.Errorf("%w: omitemptyelem and nullemptyelem together", ErrInvalidTag)
	}
	for _, s := range []bool{o.binarySet, o.numberSet, o.stringSet} {
		if s {
			sets++
		}
	}
	if sets > 1 {
		return 0, fmt.Errorf("%w: more than one of binaryset, numberset and stringset", ErrInvalidTag)
	}
	return sets, nil
}

// checkSetElem rejects a set option (o has one) that does not match the elements of base, a slice or
// array type; elements that are interfaces or have a Marshaler are not checked.
func checkSetElem(base reflect.Type, o options) error {
	eb := deref(base.Elem())
	if eb.Kind() == reflect.Interface || hasMarshaler(eb) {
		return nil
	}
	ek := eb.Kind()
	var ok bool
	switch {
	case o.stringSet:
		ok = (ek == reflect.String && !eb.Implements(numberType)) || (ek == reflect.Struct && eb.ConvertibleTo(timeType))
	case o.numberSet:
		ok = isNumberKind(ek) || (ek == reflect.String && eb.Implements(numberType))
	case o.binarySet:
		ok = (ek == reflect.Slice || ek == reflect.Array) && eb.Elem().Kind() == reflect.Uint8
	}
	if !ok {
		return fmt.Errorf("%w: set option does not match element type %s", ErrInvalidTag, base.Elem())
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
