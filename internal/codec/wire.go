package codec

import (
	"reflect"
)

// What internal/wire needs to decode DynamoDB's JSON straight into Go values, without an attribute value
// in between: for every field, a [Wire] that says which JSON shapes its value accepts and where they go,
// following exactly the decoders of this package (decode.go, fast.go). A value the Wire does not cover (an
// Unmarshaler, an interface, a type mismatch, a parse error, an overflow) is not decoded on the wire at
// all: internal/wire then hands the whole item to the attribute-value path (Plan.Decode), so the result or
// the error is this package's, and attributevalue's where it falls back to it.

// WireKind is how a value of one Go type, under one set of `dynamodbav` options, is set from an attribute
// value read from JSON. Every kind but WireNone also accepts NULL, which sets the zero value (nil for a
// pointer, slice or map).
type WireKind uint8

const (
	// WireNone values are not decoded from JSON: interfaces, (un)marshalers, byte arrays, arrays, pointers
	// to pointers, maps whose keys are not plain strings, types convertible to time.Time, time.Time with the
	// string option. Their items take the attribute-value path.
	WireNone WireKind = iota
	// WireString is a string kind: S or N sets it.
	WireString
	// WireBool is a bool kind: BOOL sets it.
	WireBool
	// WireInt is a signed integer kind of Size bytes: N (and S with AsString) parsed by
	// strconv.ParseInt(s, 10, 64); a value that does not parse or does not fit is not decoded here.
	WireInt
	// WireUint is an unsigned integer kind of Size bytes, as WireInt with strconv.ParseUint.
	WireUint
	// WireFloat is a float kind of Size bytes: N (and S with AsString) parsed by strconv.ParseFloat(s,
	// 64); a float32 that overflows is not decoded here.
	WireFloat
	// WireTime is exactly time.Time: S parsed by time.Parse(time.RFC3339, s), N by time.Unix(n, 0).
	WireTime
	// WireBytes is a slice of a byte kind: B sets it to a new slice of the decoded bytes.
	WireBytes
	// WireStruct is a struct decoded from M through Plan, as Plan.Decode does: each attribute to the field
	// of that name, else to the field equal to it ignoring case; others ignored.
	WireStruct
	// WirePointer is a pointer: anything but NULL allocates a new Elem and decodes into it.
	WirePointer
	// WireSlice is a slice: L sets it to a new slice of its elements, each decoded as Elem; the sets that
	// Sets names set it element by element (strings, numbers, bytes).
	WireSlice
	// WireMap is a map whose key is a string kind without methods: M sets it to a new map of its entries,
	// each value decoded as Elem into a new zero value.
	WireMap
)

// WireSets says which set types a WireSlice accepts besides L.
type WireSets uint8

// The set types of [WireSets].
const (
	WireSS WireSets = 1 << iota // SS: each string sets a string element
	WireNS                      // NS: each number sets a number (or string) element, as WireInt/WireUint/WireFloat/WireString
	WireBS                      // BS: each binary value sets a byte slice element
)

// Wire describes how internal/wire decodes one value; see [WireKind]. Wires are immutable and safe for
// concurrent use.
type Wire struct {
	Kind     WireKind
	Type     reflect.Type // the Go type decoded into
	Size     uintptr      // WireInt, WireUint, WireFloat: the kind's size in bytes
	AsString bool         // WireInt, WireUint, WireFloat: S is a number too (the string option)
	Elem     *Wire        // WirePointer: the pointee; WireSlice: the elements; WireMap: the values
	Plan     *Plan        // WireStruct
	Sets     WireSets     // WireSlice
	Exact    bool         // the type is exactly string, []string or map[string]string (no reflect needed)
}

var noWire = &Wire{Kind: WireNone}

// Wire returns how the field's value is decoded from JSON. It is never nil; Kind is WireNone when the field
// is decoded only through attribute values.
func (f *Field) Wire() *Wire {
	if f.codec == nil || f.codec.wire == nil {
		return noWire
	}
	return f.codec.wire
}

// Pos returns the field's position in [Plan.Fields].
func (f *Field) Pos() int { return f.pos }

// LookupFold returns the field that decoding gives attribute name attr when no field has exactly that
// name: the first field whose name is equal to it ignoring case (strings.EqualFold), as attributevalue
// does. It does not allocate for ASCII names of up to 64 bytes.
func (p *Plan) LookupFold(attr string) (*Field, bool) { return p.lookupFold(attr) }

// Has reports whether name is in the set.
func (ig *Ignored) Has(name string) bool {
	for _, n := range ig.names {
		if n == name {
			return true
		}
	}
	return false
}

// Plan returns the plan the set was made for.
func (ig *Ignored) Plan() *Plan { return ig.plan }

// finishWires computes the Wires of one compilation once every codec of it is built (so that recursive
// types, a slice of a struct holding that slice, refer to Wires that exist) and before its plans are
// published; they are never written again.
func (c *compiler) finishWires() {
	for _, tc := range c.codecs {
		if tc.wire == nil {
			tc.wire = &Wire{}
		}
	}
	for _, tc := range c.codecs {
		*tc.wire = *c.codecWire(tc)
	}
}

// codecWire mirrors build: the Wire of a typeCodec.
func (c *compiler) codecWire(tc *typeCodec) *Wire {
	t, o := tc.typ, tc.opts
	switch t.Kind() {
	case reflect.Interface:
		return noWire
	case reflect.Pointer:
		et := t.Elem()
		if et.Kind() == reflect.Pointer || et.Kind() == reflect.Interface || t.Implements(unmarshalerType) {
			return noWire
		}
		elem := c.plainWire(et, o)
		if elem.Kind == WireNone {
			return noWire
		}
		return &Wire{Kind: WirePointer, Type: t, Elem: elem}
	}
	if decodesWithUnmarshaler(t) {
		return noWire
	}
	return c.plainWire(t, o)
}

// plainWire mirrors plain: the Wire of a type that is neither a pointer nor an interface, after the
// Unmarshaler check.
func (c *compiler) plainWire(t reflect.Type, o options) *Wire {
	w := &Wire{Type: t}
	switch t.Kind() {
	case reflect.Bool:
		w.Kind = WireBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.Kind, w.Size, w.AsString = WireInt, t.Size(), o.asString
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.Kind, w.Size, w.AsString = WireUint, t.Size(), o.asString
	case reflect.Float32, reflect.Float64:
		w.Kind, w.Size, w.AsString = WireFloat, t.Size(), o.asString
	case reflect.String:
		w.Kind, w.Exact = WireString, t == reflect.TypeFor[string]()
	case reflect.Struct:
		return c.structWire(w, o)
	case reflect.Map:
		return c.mapWire(w, o)
	case reflect.Slice:
		return c.sliceWire(w, o)
	default:
		return noWire
	}
	return w
}

// structWire completes w for its struct type: time.Time, or a struct with a plan.
func (c *compiler) structWire(w *Wire, o options) *Wire {
	t := w.Type
	if t.ConvertibleTo(timeType) {
		if t != timeType || o.asString {
			return noWire
		}
		w.Kind = WireTime
		return w
	}
	p := c.plans[t]
	if p == nil {
		if cached, ok := plans.Load(t); ok {
			p = cached.(*Plan)
		}
	}
	if p == nil {
		return noWire
	}
	w.Kind, w.Plan = WireStruct, p
	return w
}

// mapWire completes w for its map type: plain string keys, values with a Wire.
func (c *compiler) mapWire(w *Wire, o options) *Wire {
	t := w.Type
	kt := t.Key()
	if !mapKeyEncodes(kt) || !mapKeyDecodes(kt) {
		return noWire
	}
	if kt.Kind() != reflect.String || kt.NumMethod() != 0 || reflect.PointerTo(kt).NumMethod() != 0 {
		return noWire
	}
	vc := c.codecs[codecKey{t.Elem(), o.elem()}]
	if vc == nil || vc.dynamic || vc.wire == nil {
		return noWire
	}
	w.Kind, w.Elem, w.Exact = WireMap, vc.wire, t == stringMapType
	return w
}

// sliceWire completes w for its slice type: bytes, or elements with a Wire, and the sets they take.
func (c *compiler) sliceWire(w *Wire, o options) *Wire {
	t := w.Type
	et := t.Elem()
	if et.Kind() == reflect.Uint8 {
		w.Kind = WireBytes
		return w
	}
	ec := c.codecs[codecKey{et, o.elem()}]
	if ec == nil || ec.dynamic || ec.wire == nil {
		return noWire
	}
	w.Kind, w.Elem, w.Exact = WireSlice, ec.wire, t == stringSliceType
	// The sets listDecoder decodes element by element: plain elements of these kinds.
	if et.Kind() != reflect.Pointer && et.Kind() != reflect.Interface && !decodesWithUnmarshaler(et) {
		switch et.Kind() {
		case reflect.String:
			w.Sets = WireSS | WireNS
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			w.Sets = WireNS
		case reflect.Slice:
			if et.Elem().Kind() == reflect.Uint8 {
				w.Sets = WireBS
			}
		}
	}
	return w
}
