package codec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// plans caches compiled plans by struct type. It is the package's only state, and holds nothing but
// immutable plans (and their atomic sizing hints), so it is safe for concurrent use.
var plans sync.Map // map[reflect.Type]*Plan

// Plan encodes values of one struct type to DynamoDB attribute maps and decodes them back, with exactly
// the output of attributevalue.MarshalMap and the effect of attributevalue.UnmarshalMap (default options),
// compiled once per type. A Plan is immutable and safe for concurrent use.
type Plan struct {
	typ     reflect.Type
	name    string
	fields  []*Field
	byLen   [][]*Field        // byLen[len(name)]: exact-name lookup without hashing
	byFold  map[string]*Field // by foldKey, first field in order wins
	rootErr error             // why the type cannot be used as an item (it can still be nested)
	hints   slabHints
}

// Field is one encoded field of a Plan's struct type: a field of the struct or one promoted from an
// embedded struct. Fields are immutable and safe for concurrent use.
type Field struct {
	Name   string            // attribute name: the tag's name, else the Go field name
	GoName string            // Go field name, for messages ("Order.Status")
	Index  []int             // for reflect.Value.FieldByIndex, through embedded structs
	Type   reflect.Type      // the field's Go type, as declared
	Tag    reflect.StructTag // the whole struct tag, for other packages' keys

	// The `dynamodbav` options. Unknown options are rejected when the plan is compiled.
	OmitEmpty     bool // omitempty: a zero value is left out (see [Field.IsZero])
	NullEmpty     bool // nullempty: a zero value is encoded as NULL
	OmitEmptyElem bool // omitemptyelem: zero elements of a slice, array or map are left out
	NullEmptyElem bool // nullemptyelem: zero elements of a slice, array or map are encoded as NULL
	AsString      bool // string: a number is encoded as S
	StringSet     bool // stringset: a slice is encoded as SS
	NumberSet     bool // numberset: a slice is encoded as NS
	BinarySet     bool // binaryset: a slice is encoded as BS
	UnixTime      bool // unixtime: a time.Time is encoded as N, Unix seconds

	plan     *Plan
	codec    *typeCodec
	pos      int  // index in plan.fields
	embedPtr bool // Index passes through an embedded pointer

	// When direct is set, the field is reached from the struct at offset without a pointer (see fast.go).
	direct  bool
	offset  uintptr
	fastEnc fastEncodeFunc
	fastDec fastDecodeFunc
}

// PlanFor returns the plan for struct type t (not a pointer to it), compiling it on first use. It fails
// with a *FieldError naming Type.Field when a `dynamodbav` tag has an unknown or inapplicable option, when
// two fields are tagged with the same attribute name, or when a field's type cannot be encoded (chan, func,
// complex, unsafe.Pointer, uintptr, unsupported map keys: attributevalue would silently drop or reject
// them at run time). A type that implements attributevalue.Marshaler or Unmarshaler itself, or is a
// time.Time, is not an item with fields and is rejected. PlanFor is safe for concurrent use.
func PlanFor(t reflect.Type) (*Plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*Plan).root()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("codec: %v is not a struct type", t)
	}
	c := newCompiler()
	if _, err := c.plan(t); err != nil {
		return nil, err
	}
	c.finishWires()
	for typ, p := range c.plans {
		plans.LoadOrStore(typ, p)
	}
	p, _ := plans.Load(t)
	return p.(*Plan).root()
}

func (p *Plan) root() (*Plan, error) {
	if p.rootErr != nil {
		return nil, p.rootErr
	}
	return p, nil
}

// plan returns the plan for struct type t: cached, being compiled in this compilation (when t is
// recursive), or compiled now.
func (c *compiler) plan(t reflect.Type) (*Plan, error) {
	if p, ok := plans.Load(t); ok {
		return p.(*Plan), nil
	}
	if p := c.plans[t]; p != nil {
		return p, nil
	}
	p := &Plan{typ: t, name: typeName(t)}
	switch {
	case hasMarshaler(t):
		p.rootErr = &FieldError{Type: p.name, Err: errors.New("implements attributevalue.Marshaler, so it has no fields to plan; use a struct without it")}
	case hasUnmarshaler(t):
		p.rootErr = &FieldError{Type: p.name, Err: errors.New("implements attributevalue.Unmarshaler, so it has no fields to plan; use a struct without it")}
	case t.ConvertibleTo(timeType):
		p.rootErr = &FieldError{Type: p.name, Err: errors.New("is a time.Time, not a struct with fields")}
	}
	c.plans[t] = p

	sfs, err := typeFields(t)
	if err != nil {
		return nil, err
	}
	p.fields = make([]*Field, 0, len(sfs))
	for _, sf := range sfs {
		o := sf.tag.opts
		if err := checkOptions(sf.sf.Type, o); err != nil {
			return nil, &FieldError{Type: typeName(sf.declType), Field: sf.sf.Name, Err: err}
		}
		tc, err := c.codec(sf.sf.Type, o)
		if err != nil {
			return nil, &FieldError{Type: typeName(sf.declType), Field: sf.sf.Name, Err: err}
		}
		f := &Field{
			Name:          sf.name,
			GoName:        sf.sf.Name,
			Index:         sf.index,
			Type:          sf.sf.Type,
			Tag:           sf.sf.Tag,
			OmitEmpty:     o.omitEmpty,
			NullEmpty:     o.nullEmpty,
			OmitEmptyElem: o.omitEmptyElem,
			NullEmptyElem: o.nullEmptyElem,
			AsString:      o.asString,
			StringSet:     o.stringSet,
			NumberSet:     o.numberSet,
			BinarySet:     o.binarySet,
			UnixTime:      o.unixTime,
			plan:          p,
			codec:         tc,
			pos:           len(p.fields),
		}
		ft := t
		for i, x := range f.Index {
			if i > 0 && ft.Kind() == reflect.Pointer {
				f.embedPtr = true
				ft = ft.Elem()
			}
			ft = ft.Field(x).Type
		}
		if off, ok := fastOffset(t, f.Index); ok {
			f.direct, f.offset = true, off
			f.fastEnc, f.fastDec = fastCodecs(f.Type, o)
		}
		p.fields = append(p.fields, f)
		for len(p.byLen) <= len(f.Name) {
			p.byLen = append(p.byLen, nil)
		}
		p.byLen[len(f.Name)] = append(p.byLen[len(f.Name)], f)
	}
	for _, f := range p.fields {
		k := foldKey(f.Name)
		if _, dup := p.byFold[k]; !dup {
			if p.byFold == nil {
				p.byFold = make(map[string]*Field, len(p.fields))
			}
			p.byFold[k] = f
		}
	}
	return p, nil
}

// Type returns the struct type the plan is for.
func (p *Plan) Type() reflect.Type { return p.typ }

// Fields returns the encoded fields in attributevalue's order (by index, after embedding promotion). Fields
// tagged "-", unexported fields (blank "_" fields included) and ambiguous promoted names are not in it.
// The slice must not be modified.
func (p *Plan) Fields() []*Field { return p.fields }

// Field returns the field encoded under attribute name attr (an exact match; decoding also accepts a
// case-insensitive match, see [Plan.Decode]).
func (p *Plan) Field(attr string) (*Field, bool) {
	f := p.lookup(attr)
	return f, f != nil
}

// lookup returns the field named exactly s, or nil. Names are unique (typeFields resolves duplicates), and
// comparing the few names of one length is cheaper than hashing s.
func (p *Plan) lookup(s string) *Field {
	if len(s) >= len(p.byLen) {
		return nil
	}
	for _, f := range p.byLen[len(s)] {
		if f.Name[0] == s[0] && f.Name == s { // names are never empty
			return f
		}
	}
	return nil
}

// Encode returns v's attributes, exactly as attributevalue.MarshalMap would: MarshalMap(&x) when v is
// addressable, MarshalMap(x) when it is not (the difference: attributevalue calls a field's
// pointer-receiver MarshalDynamoDBAttributeValue only when it can take the field's address). v must be a
// value of the plan's type. Errors are *FieldError naming the field. Encode does not modify v; strings in
// the result share memory with v's strings.
func (p *Plan) Encode(v reflect.Value) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(p.fields))
	if err := p.EncodeInto(v, out); err != nil {
		return nil, err
	}
	return out, nil
}

// EncodeInto is Encode adding v's attributes to dst, which the caller may have sized and filled (key
// attributes, say): encoded attributes replace entries of the same name; omitted fields leave dst's
// entries alone. On error dst may hold some of v's attributes.
func (p *Plan) EncodeInto(v reflect.Value, dst map[string]types.AttributeValue) error {
	if v.Type() != p.typ {
		return fmt.Errorf("codec: cannot encode %s with the plan for %s", v.Type(), p.name)
	}
	e := newEncState(&p.hints)
	err := p.encodeFields(e, v, v.CanAddr(), dst)
	p.hints.observe(&e.used)
	if de, ok := asDepth(err); ok {
		return de.finish(p.name)
	}
	return err
}

func (p *Plan) encodeFields(e *encState, v reflect.Value, addr bool, dst map[string]types.AttributeValue) error {
	var base unsafe.Pointer
	if v.CanAddr() {
		base = v.Addr().UnsafePointer()
	}
	for _, f := range p.fields {
		if f.fastEnc != nil && base != nil {
			if av := f.fastEnc(e, unsafe.Add(base, f.offset)); av != nil {
				dst[f.Name] = av
			} else if e.err != nil {
				return &FieldError{Type: p.name, Field: f.GoName, Err: e.err}
			}
			continue
		}
		var fv reflect.Value
		fAddr := addr
		if len(f.Index) == 1 {
			fv = v.Field(f.Index[0])
		} else {
			var ok bool
			if fv, ok = f.valueOf(v); !ok {
				continue
			}
			fAddr = addr || f.embedPtr && fv.CanAddr()
		}
		av, err := f.codec.enc(e, fv, fAddr)
		if err != nil {
			if de, ok := asDepth(err); ok {
				de.step(fieldStep(f.GoName))
				return de
			}
			return &FieldError{Type: p.name, Field: f.GoName, Err: err}
		}
		if av != nil {
			dst[f.Name] = av
		}
	}
	return nil
}

// Decode sets v's fields from attribute map m, exactly as attributevalue.UnmarshalMap(m, &x) would: each
// attribute goes to the field of that name, or else to the first field whose name matches it ignoring
// case; attributes with no field are ignored; fields with no attribute are left as they are; NULL sets a
// field to its zero value; nil embedded pointers on the way to a decoded field are allocated. Maps and
// slices in v are reused (decoded into) where attributevalue reuses them. v must be a settable value of the
// plan's type. Errors are *FieldError naming the field; type mismatches wrap attributevalue's own errors.
// On error v may be partly decoded.
func (p *Plan) Decode(m map[string]types.AttributeValue, v reflect.Value) error {
	if v.Type() != p.typ || !v.CanSet() {
		return fmt.Errorf("codec: cannot decode into %s with the plan for %s (it must be settable)", v.Type(), p.name)
	}
	return p.decodeMap(m, v)
}

// Ignored is a set of attribute names that match no field of a plan, not even ignoring case: attributes
// that items carry beside the fields (keys, a type) and that decoding skips. Make it with [Plan.Ignore].
type Ignored struct {
	plan  *Plan
	names []string
}

// Ignore returns the set of those names that match no field of p, exactly or ignoring case, for
// [Plan.DecodeIgnoring]; the others are left out of it, and decoding gives them to their field as always.
// List the names most items carry first.
func (p *Plan) Ignore(names ...string) *Ignored {
	ig := &Ignored{plan: p}
	for _, n := range names {
		if p.lookup(n) != nil || slices.Contains(ig.names, n) {
			continue
		}
		if _, ok := p.lookupFold(n); ok {
			continue
		}
		ig.names = append(ig.names, n)
	}
	return ig
}

// DecodeIgnoring is [Plan.Decode], with the same effect, for items whose attributes are mostly the fields'
// and ignore's: it looks each field up by name instead of ranging over m, and ranges over m (for names that
// match a field only ignoring case) only when some attribute is neither a field's nor in ignore. ignore
// must come from p's Ignore, or be nil.
func (p *Plan) DecodeIgnoring(m map[string]types.AttributeValue, v reflect.Value, ignore *Ignored) error {
	if v.Type() != p.typ || !v.CanSet() {
		return fmt.Errorf("codec: cannot decode into %s with the plan for %s (it must be settable)", v.Type(), p.name)
	}
	if ignore != nil && ignore.plan != p {
		return fmt.Errorf("codec: the ignored names of the plan for %s used with the plan for %s", ignore.plan.name, p.name)
	}
	base := v.Addr().UnsafePointer() // v is settable, so addressable
	rest := len(m)
	for _, f := range p.fields {
		if rest == 0 {
			return nil
		}
		av, ok := m[f.Name]
		if !ok {
			continue
		}
		rest--
		if err := p.decodeField(f, av, v, base); err != nil {
			return err
		}
	}
	if rest == 0 {
		return nil
	}
	if ignore != nil {
		for _, n := range ignore.names {
			if _, ok := m[n]; ok {
				if rest--; rest == 0 {
					return nil
				}
			}
		}
	}
	// Some attribute is neither a field's nor ignored: it goes to the first field whose name matches it
	// ignoring case, if any, as in attributevalue. (Fields named exactly were decoded above; a name that
	// matches exactly is never decoded as a case-insensitive match of another field.)
	if len(p.byFold) == 0 {
		return nil
	}
	for k, av := range m {
		if p.lookup(k) != nil {
			continue
		}
		f, ok := p.lookupFold(k)
		if !ok {
			continue
		}
		if err := p.decodeField(f, av, v, base); err != nil {
			return err
		}
	}
	return nil
}

// decodeField decodes av into field f of v, whose address is base.
func (p *Plan) decodeField(f *Field, av types.AttributeValue, v reflect.Value, base unsafe.Pointer) error {
	if f.fastDec != nil && f.fastDec(av, unsafe.Add(base, f.offset)) {
		return nil
	}
	var fv reflect.Value
	if len(f.Index) == 1 {
		fv = v.Field(f.Index[0])
	} else {
		var err error
		if fv, err = f.settable(v); err != nil {
			return &FieldError{Type: p.name, Field: f.GoName, Err: err}
		}
	}
	if err := f.codec.dec(av, fv); err != nil {
		return &FieldError{Type: p.name, Field: f.GoName, Err: err}
	}
	return nil
}

func (p *Plan) decodeMap(m map[string]types.AttributeValue, v reflect.Value) error {
	base := v.Addr().UnsafePointer() // v is settable, so addressable
	for k, av := range m {
		f := p.lookup(k)
		if f == nil {
			var ok bool
			if f, ok = p.lookupFold(k); !ok {
				continue
			}
		}
		if err := p.decodeField(f, av, v, base); err != nil {
			return err
		}
	}
	return nil
}

// Offset returns the field's byte offset in its struct and true when the field is reached without passing
// through an embedded pointer, so that a pointer to the struct plus the offset points at the field.
func (f *Field) Offset() (uintptr, bool) { return f.offset, f.direct }

// ValueOf returns the field in struct value v, following embedded pointers; false when one of them is nil
// (attributevalue then leaves the field out).
func (f *Field) ValueOf(v reflect.Value) (reflect.Value, bool) {
	if len(f.Index) == 1 {
		return v.Field(f.Index[0]), true
	}
	return f.valueOf(v)
}

func (f *Field) valueOf(v reflect.Value) (reflect.Value, bool) {
	for i, x := range f.Index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// Settable returns the field in settable struct value v for decoding into, allocating nil embedded
// pointers on the way as attributevalue does. It fails when such a pointer is to an unexported type
// (reflect cannot set it; attributevalue panics).
func (f *Field) Settable(v reflect.Value) (reflect.Value, error) {
	if len(f.Index) == 1 {
		return v.Field(f.Index[0]), nil
	}
	return f.settable(v)
}

func (f *Field) settable(v reflect.Value) (reflect.Value, error) {
	for i, x := range f.Index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, fmt.Errorf("cannot allocate embedded pointer to unexported type %s", v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// Encode encodes fv, a value of the field's type, honouring the field's options. ok is false when the
// field is to be left out (omitempty). Pointer-receiver marshalers are called only when fv is addressable.
// Errors are *FieldError naming the field.
func (f *Field) Encode(fv reflect.Value) (av types.AttributeValue, ok bool, err error) {
	e := newEncState(nil)
	av, err = f.codec.enc(e, fv, fv.CanAddr())
	if err != nil {
		if de, ok := asDepth(err); ok {
			de.step(fieldStep(f.GoName))
			return nil, false, de.finish(f.plan.name)
		}
		return nil, false, &FieldError{Type: f.plan.name, Field: f.GoName, Err: err}
	}
	return av, av != nil, nil
}

// Decode decodes av into fv, a settable value of the field's type, as [Plan.Decode] does. Errors are
// *FieldError naming the field.
func (f *Field) Decode(av types.AttributeValue, fv reflect.Value) error {
	if err := f.codec.dec(av, fv); err != nil {
		return &FieldError{Type: f.plan.name, Field: f.GoName, Err: err}
	}
	return nil
}

// IsZero reports whether fv is zero in attributevalue's sense, the one omitempty and nullempty use: "",
// 0, false, nil pointers, interfaces, maps and slices, and zero-length arrays. Structs (time.Time included)
// and non-nil empty maps and slices are never zero, so omitempty does not omit them.
func (f *Field) IsZero(fv reflect.Value) bool {
	switch fv.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Array:
		return fv.Len() == 0
	case reflect.Map, reflect.Slice, reflect.Interface, reflect.Pointer:
		return fv.IsNil()
	case reflect.String:
		return fv.Len() == 0
	case reflect.Bool:
		return !fv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return fv.Float() == 0
	}
	return false
}
