package codec

import (
	"errors"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// encState holds what one Encode call allocates from: slabs of attribute value members, a slab of
// interface slots for lists, and a text arena for formatted numbers and times. Everything it hands out
// is owned by the result; nothing is reused across calls.
type encState struct {
	s    []types.AttributeValueMemberS
	n    []types.AttributeValueMemberN
	b    []types.AttributeValueMemberBOOL
	null []types.AttributeValueMemberNULL
	l    []types.AttributeValueMemberL
	m    []types.AttributeValueMemberM
	avs  []types.AttributeValue
	// text is append-only: a string handed out aliases bytes that are never written again (a reallocation
	// leaves them in the old array), as in strings.Builder.
	text []byte

	used  slabCounts
	hints *slabHints // nil: no history

	// err is set by a fast-path encoder that cannot encode its field (which has no error result); the
	// caller checks it after each fast field.
	err error

	// depth is the level of the map being filled: 1 for the item, one more inside each map or list. A map
	// or list is refused when it would be level MaxDepth+1.
	depth int

	// First slabs for the kinds an item holds few of, in the state's own allocation (the result keeps the
	// state alive, a few hundred bytes).
	bArr    [2]types.AttributeValueMemberBOOL
	nullArr [2]types.AttributeValueMemberNULL
	lArr    [1]types.AttributeValueMemberL
	mArr    [1]types.AttributeValueMemberM
	avArr   [4]types.AttributeValue
}

func newEncState(hints *slabHints) *encState {
	e := &encState{hints: hints, depth: 1}
	e.b = e.bArr[:0]
	e.null = e.nullArr[:0]
	e.l = e.lArr[:0]
	e.m = e.mArr[:0]
	e.avs = e.avArr[:0]
	return e
}

type slabCounts struct{ s, n, b, null, l, m, avs, text int32 }

// slabHints remembers how much recent Encode calls of one Plan used, to size the next call's slabs. It is
// only a performance hint: lost updates between goroutines are harmless.
type slabHints struct{ s, n, b, null, l, m, avs, text atomic.Int32 }

func (h *slabHints) observe(u *slabCounts) {
	for _, p := range []struct {
		h *atomic.Int32
		u int32
	}{{&h.s, u.s}, {&h.n, u.n}, {&h.b, u.b}, {&h.null, u.null}, {&h.l, u.l}, {&h.m, u.m}, {&h.avs, u.avs}, {&h.text, u.text}} {
		old := p.h.Load()
		switch {
		case p.u > old:
			p.h.Store(min(p.u, maxHint))
		case p.u < old:
			// Come down by half the difference, so that one large item sizes only the next few calls.
			p.h.Store(old - (old-p.u+1)/2)
		}
	}
}

const (
	maxHint = 1 << 12
	maxSlab = 1 << 10 // elements in one slab; a larger item takes several
)

// slabSize is the capacity of a new slab when used elements are already taken and the plan's recent calls
// took hint in total: the rest of the hint, or as many again as used (doubling), at least floor.
func slabSize(used int32, h *atomic.Int32, floor int32) int {
	n := used
	if h != nil {
		n = max(n, h.Load()-used)
	}
	return int(min(max(n, floor), maxSlab))
}

func (e *encState) hint(pick func(*slabHints) *atomic.Int32) *atomic.Int32 {
	if e.hints == nil {
		return nil
	}
	return pick(e.hints)
}

func (e *encState) newS(v string) *types.AttributeValueMemberS {
	if len(e.s) == cap(e.s) {
		e.s = make([]types.AttributeValueMemberS, 0, slabSize(e.used.s, e.hint(func(h *slabHints) *atomic.Int32 { return &h.s }), 4))
	}
	e.used.s++
	e.s = append(e.s, types.AttributeValueMemberS{Value: v})
	return &e.s[len(e.s)-1]
}

func (e *encState) newN(v string) *types.AttributeValueMemberN {
	if len(e.n) == cap(e.n) {
		e.n = make([]types.AttributeValueMemberN, 0, slabSize(e.used.n, e.hint(func(h *slabHints) *atomic.Int32 { return &h.n }), 4))
	}
	e.used.n++
	e.n = append(e.n, types.AttributeValueMemberN{Value: v})
	return &e.n[len(e.n)-1]
}

func (e *encState) newBool(v bool) *types.AttributeValueMemberBOOL {
	if len(e.b) == cap(e.b) {
		e.b = make([]types.AttributeValueMemberBOOL, 0, slabSize(e.used.b, e.hint(func(h *slabHints) *atomic.Int32 { return &h.b }), 1))
	}
	e.used.b++
	e.b = append(e.b, types.AttributeValueMemberBOOL{Value: v})
	return &e.b[len(e.b)-1]
}

func (e *encState) newNull() *types.AttributeValueMemberNULL {
	if len(e.null) == cap(e.null) {
		e.null = make([]types.AttributeValueMemberNULL, 0, slabSize(e.used.null, e.hint(func(h *slabHints) *atomic.Int32 { return &h.null }), 1))
	}
	e.used.null++
	e.null = append(e.null, types.AttributeValueMemberNULL{Value: true})
	return &e.null[len(e.null)-1]
}

func (e *encState) newL(v []types.AttributeValue) *types.AttributeValueMemberL {
	if len(e.l) == cap(e.l) {
		e.l = make([]types.AttributeValueMemberL, 0, slabSize(e.used.l, e.hint(func(h *slabHints) *atomic.Int32 { return &h.l }), 1))
	}
	e.used.l++
	e.l = append(e.l, types.AttributeValueMemberL{Value: v})
	return &e.l[len(e.l)-1]
}

func (e *encState) newM(v map[string]types.AttributeValue) *types.AttributeValueMemberM {
	if len(e.m) == cap(e.m) {
		e.m = make([]types.AttributeValueMemberM, 0, slabSize(e.used.m, e.hint(func(h *slabHints) *atomic.Int32 { return &h.m }), 1))
	}
	e.used.m++
	e.m = append(e.m, types.AttributeValueMemberM{Value: v})
	return &e.m[len(e.m)-1]
}

// list returns an empty, non-nil slice with capacity n for a list's elements. Its capacity is exact, so
// that appending to a returned list reallocates instead of overwriting a neighbour.
func (e *encState) list(n int) []types.AttributeValue {
	if n == 0 {
		return []types.AttributeValue{}
	}
	if cap(e.avs)-len(e.avs) < n {
		e.avs = make([]types.AttributeValue, 0, max(n, slabSize(e.used.avs, e.hint(func(h *slabHints) *atomic.Int32 { return &h.avs }), 8)))
	}
	e.used.avs += int32(n)
	start := len(e.avs)
	e.avs = e.avs[:start+n]
	return e.avs[start : start : start+n]
}

// reserve makes room for n more bytes of text without moving the text already handed out. The hint
// counts reservations, not bytes used, so that a call sized by it needs one buffer.
func (e *encState) reserve(n int) {
	if cap(e.text)-len(e.text) < n {
		e.text = make([]byte, 0, max(n, slabSize(e.used.text, e.hint(func(h *slabHints) *atomic.Int32 { return &h.text }), 64)))
	}
	e.used.text += int32(n)
}

// since returns the text appended from start as a string that shares the arena's memory.
func (e *encState) since(start int) string {
	b := e.text[start:]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (e *encState) formatInt(i int64) string {
	e.reserve(20)
	start := len(e.text)
	e.text = strconv.AppendInt(e.text, i, 10)
	return e.since(start)
}

func (e *encState) formatUint(u uint64) string {
	e.reserve(20)
	start := len(e.text)
	e.text = strconv.AppendUint(e.text, u, 10)
	return e.since(start)
}

func (e *encState) formatFloat(f float64, bits int) string {
	e.reserve(32)
	start := len(e.text)
	e.text = strconv.AppendFloat(e.text, f, 'f', -1, bits)
	return e.since(start)
}

// errTimeRange refuses a time that RFC 3339 text cannot carry: decoding would fail on the stored text.
var errTimeRange = errors.New("the year is outside 0-9999, which RFC 3339 text cannot carry; store it with the unixtime option")

func timeInRange(t time.Time) bool { y := t.Year(); return 0 <= y && y <= 9999 }

func (e *encState) formatTime(t time.Time) string {
	e.reserve(len(time.RFC3339Nano) + 6)
	start := len(e.text)
	e.text = t.AppendFormat(e.text, time.RFC3339Nano)
	return e.since(start)
}

// --- scalars (after the zero check; v is never a pointer or interface) ---

func encodeOmit(*encState, reflect.Value, bool) (types.AttributeValue, error) { return nil, nil }

func encodeBool(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newBool(v.Bool()), nil
}

func encodeString(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newS(v.String()), nil
}

// encodeNumberString encodes a string type with the numberer methods (attributevalue.Number) as N.
func encodeNumberString(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newN(v.String()), nil
}

func encodeInt(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newN(e.formatInt(v.Int())), nil
}

func encodeIntString(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newS(e.formatInt(v.Int())), nil
}

func encodeUint(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newN(e.formatUint(v.Uint())), nil
}

func encodeUintString(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return e.newS(e.formatUint(v.Uint())), nil
}

// floatEncoder formats like attributevalue: strconv 'f' format, shortest representation. NaN and ±Inf
// become "NaN", "+Inf" and "-Inf", which attributevalue produces too and DynamoDB rejects.
func floatEncoder(bits int, asString bool) encodeFunc {
	if asString {
		return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
			return e.newS(e.formatFloat(v.Float(), bits)), nil
		}
	}
	return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
		return e.newN(e.formatFloat(v.Float(), bits)), nil
	}
}

// timeEncoder encodes a time.Time (or a struct type convertible to it) as RFC 3339 with nanoseconds in S,
// or as Unix seconds in N with the unixtime option.
func timeEncoder(t reflect.Type, unix bool) encodeFunc {
	exact := t == timeType
	return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
		var tm time.Time
		switch {
		case exact && v.CanAddr():
			tm = *v.Addr().Interface().(*time.Time)
		case exact:
			tm = v.Interface().(time.Time)
		default:
			tm = v.Convert(timeType).Interface().(time.Time)
		}
		if unix {
			return e.newN(e.formatInt(tm.Unix())), nil
		}
		if !timeInRange(tm) {
			return nil, errTimeRange
		}
		return e.newS(e.formatTime(tm)), nil
	}
}

// encodeBytes encodes a slice of a byte kind as B, copying it.
func encodeBytes(_ *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	return &types.AttributeValueMemberB{Value: append([]byte{}, v.Bytes()...)}, nil
}

func encodeByteArray(_ *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
	if v.CanAddr() {
		return &types.AttributeValueMemberB{Value: append([]byte{}, v.Bytes()...)}, nil
	}
	b := make([]byte, v.Len())
	reflect.Copy(reflect.ValueOf(b), v)
	return &types.AttributeValueMemberB{Value: b}, nil
}

// --- wrappers that apply attributevalue's order of checks ---

// zeroEncoder applies attributevalue's zero-value check ahead of enc: a zero value is omitted with
// omitempty, encoded as NULL with nullempty or when it is a nil map or slice, and otherwise encoded.
// Structs (time.Time included), chans and funcs are never zero; an array is zero when its length is 0.
func zeroEncoder(t reflect.Type, o options, enc encodeFunc) encodeFunc {
	var isZero func(reflect.Value) bool
	nullable := false
	switch t.Kind() {
	case reflect.String:
		isZero = func(v reflect.Value) bool { return v.Len() == 0 }
	case reflect.Bool:
		isZero = func(v reflect.Value) bool { return !v.Bool() }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		isZero = func(v reflect.Value) bool { return v.Int() == 0 }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		isZero = func(v reflect.Value) bool { return v.Uint() == 0 }
	case reflect.Float32, reflect.Float64:
		isZero = func(v reflect.Value) bool { return v.Float() == 0 }
	case reflect.Map, reflect.Slice:
		isZero, nullable = reflect.Value.IsNil, true
	case reflect.Array:
		if t.Len() == 0 {
			isZero = func(reflect.Value) bool { return true }
		}
	}
	if isZero == nil || (!o.omitEmpty && !o.nullEmpty && !nullable) {
		return enc
	}
	omit := o.omitEmpty
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		if isZero(v) {
			if omit {
				return nil, nil
			}
			return e.newNull(), nil
		}
		return enc(e, v, addr)
	}
}

// ptrEncoder encodes a pointer: nil is omitted with omitempty, else NULL; otherwise the value it points to
// is encoded by body with no zero check (a pointer to "" is S "" even with omitempty).
func ptrEncoder(o options, body encodeFunc) encodeFunc {
	omit := o.omitEmpty
	return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
		if v.IsNil() {
			if omit {
				return nil, nil
			}
			return e.newNull(), nil
		}
		return body(e, v.Elem(), true)
	}
}

// marshalerEncoder calls attributevalue.Marshaler ahead of enc the way attributevalue does: through a
// pointer when the type is named and the value addressable (so pointer-receiver methods are found only
// then), else on the value. A Marshaler that returns a nil AttributeValue and no error falls through to enc.
func marshalerEncoder(t reflect.Type, enc encodeFunc) encodeFunc {
	onValue := t.Implements(marshalerType)
	onPtr := t.Name() != "" && reflect.PointerTo(t).Implements(marshalerType)
	if !onValue && !onPtr {
		return enc
	}
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		var m attributevalue.Marshaler
		switch {
		case addr && t.Name() != "":
			if onPtr {
				m = v.Addr().Interface().(attributevalue.Marshaler)
			}
		case onValue:
			m = v.Interface().(attributevalue.Marshaler)
		}
		if m != nil {
			av, err := m.MarshalDynamoDBAttributeValue()
			if err != nil {
				return nil, err
			}
			if av != nil {
				if err := checkDepth(av, e.depth); err != nil {
					return nil, err
				}
				return av, nil
			}
		}
		return enc(e, v, addr)
	}
}

// --- composites ---

func structEncoder(p *Plan) encodeFunc {
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		if e.depth >= MaxDepth {
			return nil, tooDeep(v)
		}
		e.depth++
		m := make(map[string]types.AttributeValue, len(p.fields))
		err := p.encodeFields(e, v, addr, m)
		e.depth--
		if err != nil {
			if de, ok := asDepth(err); ok {
				de.at(v)
			}
			return nil, err
		}
		return e.newM(m), nil
	}
}

var errEmptyMapKey = errors.New("map key cannot be empty")

// mapEncoder encodes a non-nil map with a string key type as M. attributevalue rejects an empty key.
func mapEncoder(vc *typeCodec) encodeFunc {
	return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
		if e.depth >= MaxDepth {
			return nil, tooDeep(v)
		}
		out := make(map[string]types.AttributeValue, v.Len())
		if v.Len() > 0 {
			e.depth++ // an error ends the encoding: its returns leave depth as it is
			// Scratch copies of each key and value, so that the iteration allocates nothing per entry. A
			// map value is not addressable for attributevalue, hence addr false.
			key := reflect.New(v.Type().Key()).Elem()
			val := reflect.New(v.Type().Elem()).Elem()
			it := v.MapRange()
			for it.Next() {
				key.SetIterKey(it)
				k := key.String()
				if k == "" {
					return nil, errEmptyMapKey
				}
				val.SetIterValue(it)
				av, err := vc.enc(e, val, false)
				if err != nil {
					if de, ok := asDepth(err); ok {
						de.step(keyStep(k))
						de.at(v)
					}
					return nil, err
				}
				if av != nil {
					out[k] = av
				}
			}
			e.depth--
		}
		return e.newM(out), nil
	}
}

// stringMapEncoder is mapEncoder for exactly map[string]string.
func stringMapEncoder(eo options) encodeFunc {
	return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
		if e.depth >= MaxDepth {
			return nil, tooDeep(v)
		}
		src := v.Interface().(map[string]string) // a map is pointer-shaped: no allocation
		out := make(map[string]types.AttributeValue, len(src))
		for k, s := range src {
			if k == "" {
				return nil, errEmptyMapKey
			}
			switch {
			case s != "":
				out[k] = e.newS(s)
			case eo.omitEmpty:
			case eo.nullEmpty:
				out[k] = e.newNull()
			default:
				out[k] = e.newS(s)
			}
		}
		return e.newM(out), nil
	}
}

// stringElems reports whether ec encodes its elements exactly as encodeString would after the zero check,
// so that a list or set can read the strings directly.
func stringElems(ec *typeCodec) bool {
	t := ec.typ
	return t.Kind() == reflect.String && !t.Implements(numberType) && !hasMarshaler(t) && !ec.opts.asString
}

func listEncoder(ec *typeCodec, isArray bool) encodeFunc {
	if stringElems(ec) {
		omit, null := ec.opts.omitEmpty, ec.opts.nullEmpty
		return func(e *encState, v reflect.Value, _ bool) (types.AttributeValue, error) {
			if e.depth >= MaxDepth {
				return nil, tooDeep(v)
			}
			n := v.Len()
			l := e.list(n)
			for i := 0; i < n; i++ {
				s := v.Index(i).String()
				switch {
				case s != "":
					l = append(l, e.newS(s))
				case omit:
				case null:
					l = append(l, e.newNull())
				default:
					l = append(l, e.newS(s))
				}
			}
			return e.newL(l), nil
		}
	}
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		if e.depth >= MaxDepth {
			return nil, tooDeep(v)
		}
		e.depth++
		n := v.Len()
		l := e.list(n)
		elemAddr := addr || !isArray // slice elements are always addressable
		for i := 0; i < n; i++ {
			av, err := ec.enc(e, v.Index(i), elemAddr)
			if err != nil { // an error ends the encoding: depth is left as it is
				if de, ok := asDepth(err); ok {
					de.step(indexStep(i))
					de.at(v)
				}
				return nil, err
			}
			if av != nil {
				l = append(l, av)
			}
		}
		e.depth--
		return e.newL(l), nil
	}
}

var (
	errStringSet = errors.New("string set must only contain non-nil strings")
	errNumberSet = errors.New("number set must only contain non-nil string numbers")
	errBinarySet = errors.New("binary set must only contain non-nil byte slices")
)

// stringSetEncoder encodes SS. Like attributevalue (NullEmptySets) an empty set is NULL; every element must
// encode as S.
func stringSetEncoder(ec *typeCodec, isArray bool) encodeFunc {
	direct := stringElems(ec)
	omit, null := ec.opts.omitEmpty, ec.opts.nullEmpty
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		n := v.Len()
		if n == 0 {
			return e.newNull(), nil
		}
		ss := make([]string, 0, n)
		elemAddr := addr || !isArray
		for i := 0; i < n; i++ {
			if direct {
				s := v.Index(i).String()
				switch {
				case s != "" || (!omit && !null):
					ss = append(ss, s)
				case null:
					return nil, errStringSet
				}
				continue
			}
			av, err := ec.enc(e, v.Index(i), elemAddr)
			if err != nil {
				return nil, err
			}
			if av == nil {
				continue
			}
			s, ok := av.(*types.AttributeValueMemberS)
			if !ok || s == nil {
				return nil, errStringSet
			}
			ss = append(ss, s.Value)
		}
		return &types.AttributeValueMemberSS{Value: ss}, nil
	}
}

func numberSetEncoder(ec *typeCodec, isArray bool) encodeFunc {
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		n := v.Len()
		if n == 0 {
			return e.newNull(), nil
		}
		ns := make([]string, 0, n)
		elemAddr := addr || !isArray
		for i := 0; i < n; i++ {
			av, err := ec.enc(e, v.Index(i), elemAddr)
			if err != nil {
				return nil, err
			}
			if av == nil {
				continue
			}
			num, ok := av.(*types.AttributeValueMemberN)
			if !ok || num == nil {
				return nil, errNumberSet
			}
			ns = append(ns, num.Value)
		}
		return &types.AttributeValueMemberNS{Value: ns}, nil
	}
}

func binarySetEncoder(ec *typeCodec, isArray bool) encodeFunc {
	return func(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
		n := v.Len()
		if n == 0 {
			return e.newNull(), nil
		}
		bs := make([][]byte, 0, n)
		elemAddr := addr || !isArray
		for i := 0; i < n; i++ {
			av, err := ec.enc(e, v.Index(i), elemAddr)
			if err != nil {
				return nil, err
			}
			if av == nil {
				continue
			}
			b, ok := av.(*types.AttributeValueMemberB)
			if !ok || b == nil || b.Value == nil {
				return nil, errBinarySet
			}
			bs = append(bs, b.Value)
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	}
}
