package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// Entity is the typed access to one registered entity type T on a [Table]. Create it
// with [Register]. An Entity is safe for concurrent use. No method mutates a value
// handed to it: T is taken and returned by value.
type Entity[T any] struct {
	table *Table
	info  *entityInfo
}

// entityInfo is everything Register compiled about T, shared by all methods.
type entityInfo struct {
	name          string // Go type name, for messages
	goType        reflect.Type
	discriminator string
	table         *Table
	plan          *codec.Plan
	pk, sk        *keyTemplate
	indexes       map[string][2]*keyTemplate // index name -> partition, sort (sort may be nil)
	version       *codec.Field               // the `singletable:"version"` field, or nil
	shard         *shardPlan                 // write sharding, or nil
	migration     *migrationPlan             // schema history, or nil
	all           []*keyTemplate             // base keys first, then index keys in table order
	baseInputs    map[string]bool            // attribute names that feed the primary key
	// ignored are the attributes the library stores beside T's fields (keys, type,
	// schema, receipts), which decoding skips without looking for a field.
	ignored *codec.Ignored
	// The conditions of a Put (typeGuard) and of a Create, with their names and
	// values, built once: every such write without a condition of its own sends
	// them as they are.
	putGuard, createGuard *expr.Fixed
	wire                  wireTarget // the entity as reads decode it from JSON (wire.go)
}

// keyTemplate is one key attribute's template bound to T's fields.
type keyTemplate struct {
	attr      string
	index     string // "" for the base table
	partition bool
	tmpl      *Template
	fields    []*codec.Field // per placeholder, in order
	access    []keyAccess    // per placeholder: how to read its field
	maxBytes  int
	// When every placeholder's field can be read without reflect, direct holds
	// the template as steps for renderDirect, and tail its closing literal text.
	direct []directStep
	tail   string
	fixed  int // bytes of the key besides its string inputs, at most
}

// directStep is a placeholder preceded by literal text, for renderDirect.
type directStep struct {
	literal string
	keyAccess
	seg *segment
}

// keyAccess reads a placeholder's input straight from the struct's memory, as
// internal/codec's fast paths do: the field's offset and its layout. Fields behind
// pointers (their own or an embedded struct's) are read through reflect.
type keyAccess struct {
	off  uintptr
	kind keyAccessKind
}

type keyAccessKind uint8

const (
	accReflect keyAccessKind = iota
	accString
	accInt8
	accInt16
	accInt32
	accInt64
	accUint8
	accUint16
	accUint32
	accUint64
	accTime
)

// keyAccessOf returns how to read field f, a valid key input (see keyKindOf).
func keyAccessOf(f *codec.Field) keyAccess {
	off, ok := f.Offset()
	if !ok {
		return keyAccess{}
	}
	t := f.Type
	if t == timeType {
		return keyAccess{off, accTime}
	}
	var sized [4]keyAccessKind
	switch t.Kind() {
	case reflect.String:
		return keyAccess{off, accString}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		sized = [4]keyAccessKind{accInt8, accInt16, accInt32, accInt64}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		sized = [4]keyAccessKind{accUint8, accUint16, accUint32, accUint64}
	default:
		return keyAccess{}
	}
	switch t.Size() {
	case 1:
		return keyAccess{off, sized[0]}
	case 2:
		return keyAccess{off, sized[1]}
	case 4:
		return keyAccess{off, sized[2]}
	case 8:
		return keyAccess{off, sized[3]}
	}
	return keyAccess{}
}

// readInto sets v, a zero keyValue, to the input at base+off, as keyValueOfField
// would from the field (left zero: missing).
func (a *keyAccess) readInto(base unsafe.Pointer, v *keyValue) {
	p := unsafe.Add(base, a.off)
	switch a.kind {
	case accString:
		if s := *(*string)(p); s != "" {
			v.kind, v.s = kvString, s
		}
	case accInt8:
		v.kind, v.i = kvInt, int64(*(*int8)(p))
	case accInt16:
		v.kind, v.i = kvInt, int64(*(*int16)(p))
	case accInt32:
		v.kind, v.i = kvInt, int64(*(*int32)(p))
	case accInt64:
		v.kind, v.i = kvInt, *(*int64)(p)
	case accUint8:
		v.kind, v.u = kvUint, uint64(*(*uint8)(p))
	case accUint16:
		v.kind, v.u = kvUint, uint64(*(*uint16)(p))
	case accUint32:
		v.kind, v.u = kvUint, uint64(*(*uint32)(p))
	case accUint64:
		v.kind, v.u = kvUint, *(*uint64)(p)
	case accTime:
		if tm := (*time.Time)(p); !tm.IsZero() {
			v.kind, v.t = kvTime, *tm
		}
	}
}

// Register compiles T for use on table t and returns its typed access. T must be a
// struct with a blank field carrying the entity tags:
//
//	type Order struct {
//	    _          struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
//	    CustomerID string   `dynamodbav:"customerId"`
//	    ...
//	}
//
// The tag under the table's type attribute name (default "Type") is the
// discriminator (default: the Go type name); one tag per key attribute of the table
// gives that attribute's template. Both base key templates are required; an index's
// templates are optional (the entity is then not in that index) but come in pairs.
// Placeholders name stored attributes (dynamodbav names) of fields that are strings,
// integers, time.Time, or pointers to those.
//
// Register checks everything once and returns an [*EntityError] (matching
// [ErrInvalidEntity]) naming Type.Field for: an unknown tag or tag option, an unknown
// placeholder, a missing base key template, a template for an attribute the table
// lacks, a discriminator used twice on the table, key templates that could render
// another entity's keys, a field whose name clashes with a key or type attribute,
// and an unsupported field type.
func Register[T any](t *Table, opts ...RegisterOption) (*Entity[T], error) {
	info, err := compileEntity(t, reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	// Options complete info before other goroutines can see it; workers start once
	// the entity is registered.
	for _, o := range opts {
		if err := o.apply(t, info); err != nil {
			return nil, err
		}
	}
	if err := t.register(info); err != nil {
		return nil, err
	}
	info.start(t)
	return &Entity[T]{table: t, info: info}, nil
}

// MustRegister is like [Register] but panics on error; for package-level setup in
// programs whose entity definitions are fixed at compile time.
func MustRegister[T any](t *Table, opts ...RegisterOption) *Entity[T] {
	e, err := Register[T](t, opts...)
	if err != nil {
		panic(err)
	}
	return e
}

// Table returns the table the entity is registered on.
func (e *Entity[T]) Table() *Table { return e.table }

// Type returns the entity's discriminator, the value of its type attribute.
func (e *Entity[T]) Type() string { return e.info.discriminator }

var timeType = reflect.TypeFor[time.Time]()

func compileEntity(t *Table, rt reflect.Type) (*entityInfo, error) {
	name := rt.String()
	if rt.Kind() != reflect.Struct {
		return nil, &EntityError{Entity: name, Reason: "entity must be a struct type, not " + rt.Kind().String()}
	}
	name = rt.Name()
	if name == "" {
		name = rt.String()
	}
	plan, err := codec.PlanFor(rt)
	if err != nil {
		var fe *codec.FieldError
		if errors.As(err, &fe) {
			return nil, &EntityError{Entity: name, Field: fe.Field, Reason: "", Err: fe.Err}
		}
		return nil, &EntityError{Entity: name, Err: err}
	}
	info := &entityInfo{
		name:          name,
		goType:        rt,
		discriminator: name,
		table:         t,
		plan:          plan,
		indexes:       map[string][2]*keyTemplate{},
		baseInputs:    map[string]bool{},
	}

	// Field names may not clash with key or type attributes, and our own field tag
	// (singletable:"...") has no options yet that a field may use.
	for _, f := range plan.Fields() {
		if _, isKey := t.keys[f.Name]; isKey || f.Name == t.opts.TypeAttribute || t.isReceiptAttr(f.Name) || f.Name == t.opts.SchemaAttribute {
			return nil, &EntityError{Entity: name, Field: f.GoName, Reason: "attribute name " + strconv.Quote(f.Name) + " is a key, type or receipt attribute of table " + t.name}
		}
		// Decoding matches names without regard to case when no name matches
		// exactly (as attributevalue does), so "type" would be filled from "Type".
		if r := t.reservedFold(f.Name); r != "" {
			return nil, &EntityError{Entity: name, Field: f.GoName, Reason: "attribute name " + strconv.Quote(f.Name) + " differs only in case from the table's attribute " + strconv.Quote(r) + ", which decoding would read into it; rename one of them"}
		}
	}

	// The entity tags sit on a blank field.
	var tags []tagPair
	found := false
	for i := range rt.NumField() {
		sf := rt.Field(i)
		if sf.Name != "_" {
			continue
		}
		if found {
			return nil, &EntityError{Entity: name, Field: "_", Reason: "more than one blank field carries entity tags"}
		}
		found = true
		tags, err = parseStructTag(string(sf.Tag))
		if err != nil {
			return nil, &EntityError{Entity: name, Field: "_", Reason: err.Error()}
		}
	}
	if !found {
		return nil, &EntityError{Entity: name, Reason: "no blank field with entity tags, e.g. _ struct{} `PK:\"...\" SK:\"...\"`"}
	}
	templates := map[string]string{}
	entityOpts := ""
	for _, tg := range tags {
		switch {
		case tg.key == "singletable":
			entityOpts = tg.value
		case tg.key == t.opts.TypeAttribute:
			if tg.value == "" {
				return nil, &EntityError{Entity: name, Field: tg.key, Reason: "empty discriminator"}
			}
			info.discriminator = tg.value
		case tg.key == "dynamodbav" || tg.key == "json":
			// Harmless on a blank field.
		default:
			if _, isKey := t.keys[tg.key]; !isKey {
				return nil, &EntityError{Entity: name, Field: tg.key, Reason: "unknown tag " + strconv.Quote(tg.key) + ": table " + t.name + " has key attributes " + strings.Join(sortedKeys(t.keys), ", ") + " and type attribute " + t.opts.TypeAttribute}
			}
			templates[tg.key] = tg.value
		}
	}

	bind := func(attr, index string, partition bool, maxBytes int) (*keyTemplate, error) {
		text, ok := templates[attr]
		if !ok {
			return nil, nil
		}
		tmpl, err := ParseTemplate(text, t.opts.Delimiter)
		if err != nil {
			return nil, &EntityError{Entity: name, Field: attr, Reason: "", Err: err}
		}
		kt := &keyTemplate{attr: attr, index: index, partition: partition, tmpl: tmpl, maxBytes: maxBytes}
		pi := 0
		for si := range tmpl.segs {
			seg := &tmpl.segs[si]
			if seg.name == "" {
				continue
			}
			f, ok := plan.Field(seg.name)
			if !ok {
				return nil, &EntityError{Entity: name, Field: attr, Reason: "template " + strconv.Quote(text) + " names {" + seg.name + "}, which is not a stored attribute of " + name}
			}
			base := f.Type
			if base.Kind() == reflect.Pointer {
				base = base.Elem()
			}
			kind := keyKindOf(base)
			if kind == kvMissing {
				return nil, &EntityError{Entity: name, Field: f.GoName, Reason: "type " + f.Type.String() + " cannot be part of a key (want a string, an integer or time.Time)"}
			}
			switch {
			case seg.format == fmtPad && kind != kvInt && kind != kvUint:
				return nil, &EntityError{Entity: name, Field: f.GoName, Reason: "{" + seg.name + ":0" + strconv.Itoa(seg.width) + "} pads integers, but the field is " + f.Type.String()}
			case seg.format.isTime() && kind != kvTime:
				return nil, &EntityError{Entity: name, Field: f.GoName, Reason: "{" + seg.name + ":" + formatName(seg.format) + "} needs a time.Time, but the field is " + f.Type.String()}
			case seg.format == fmtPlain && kind == kvTime:
				seg.format, seg.width = fmtTime, fmtTime.fixedWidth()
			}
			kt.fields = append(kt.fields, f)
			kt.access = append(kt.access, keyAccessOf(f))
			pi++
		}
		kt.compileDirect()
		return kt, nil
	}

	if info.pk, err = bind(t.opts.PartitionKey, "", true, MaxPartitionKeyBytes); err != nil {
		return nil, err
	}
	if info.sk, err = bind(t.opts.SortKey, "", false, MaxSortKeyBytes); err != nil {
		return nil, err
	}
	if info.pk == nil || info.sk == nil {
		missing := t.opts.PartitionKey
		if info.pk != nil {
			missing = t.opts.SortKey
		}
		return nil, &EntityError{Entity: name, Field: missing, Reason: "missing template for base key attribute " + missing}
	}
	info.all = append(info.all, info.pk, info.sk)
	for _, f := range append(slices.Clone(info.pk.fields), info.sk.fields...) {
		info.baseInputs[f.Name] = true
	}
	for _, ix := range t.opts.Indexes {
		p, err := bind(ix.PartitionKey, ix.Name, true, MaxPartitionKeyBytes)
		if err != nil {
			return nil, err
		}
		var s *keyTemplate
		if ix.SortKey != "" {
			if s, err = bind(ix.SortKey, ix.Name, false, MaxSortKeyBytes); err != nil {
				return nil, err
			}
		}
		if p == nil && s == nil {
			continue
		}
		if p == nil || (ix.SortKey != "" && s == nil) {
			missing := ix.PartitionKey
			if p != nil {
				missing = ix.SortKey
			}
			return nil, &EntityError{Entity: name, Field: missing, Reason: "index " + ix.Name + " needs templates for both of its key attributes; " + missing + " is missing"}
		}
		info.indexes[ix.Name] = [2]*keyTemplate{p, s}
		info.all = append(info.all, p)
		if s != nil {
			info.all = append(info.all, s)
		}
	}
	info.ignored = plan.Ignore(t.libraryAttributes()...)
	var pb, cb expr.Builder
	info.putGuard = pb.Fix(info.typeGuard(&pb))
	info.createGuard = cb.Fix("attribute_not_exists(" + cb.Name(t.opts.PartitionKey) + ")")
	if err := compileFieldOptions(info, rt); err != nil {
		return nil, err
	}
	if err := compileSharding(info, entityOpts); err != nil {
		return nil, err
	}
	return info, nil
}

// compileFieldOptions reads the `singletable:"..."` tags of T's fields.
func compileFieldOptions(info *entityInfo, rt reflect.Type) error {
	for i := range rt.NumField() {
		sf := rt.Field(i)
		opt, ok := sf.Tag.Lookup("singletable")
		if !ok || sf.Name == "_" {
			continue
		}
		var err error
		switch opt {
		case "version":
			err = compileVersion(info, i, sf)
		case "shard":
			err = compileShardField(info, i, sf)
		default:
			err = &EntityError{Entity: info.name, Field: sf.Name, Reason: "unknown singletable tag option " + strconv.Quote(opt) + " (want \"version\" or \"shard\")"}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keyKindOf says how a field type renders into a key, or kvMissing if it cannot.
func keyKindOf(t reflect.Type) kvKind {
	if t == timeType {
		return kvTime
	}
	switch t.Kind() {
	case reflect.String:
		return kvString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kvInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kvUint
	}
	return kvMissing
}

// keyValueOfField reads a placeholder's input from a struct field. "" strings, nil
// pointers and zero times are missing; numbers are always present.
func keyValueOfField(f *codec.Field, sv reflect.Value) keyValue {
	fv, ok := f.ValueOf(sv)
	if !ok {
		return keyValue{}
	}
	return keyValueOfReflect(fv)
}

func keyValueOfReflect(fv reflect.Value) keyValue {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return keyValue{}
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		if fv.Len() == 0 {
			return keyValue{}
		}
		return keyValue{kind: kvString, s: fv.String()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return keyValue{kind: kvInt, i: fv.Int()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return keyValue{kind: kvUint, u: fv.Uint()}
	case reflect.Struct:
		if tm, ok := reflect.TypeAssert[time.Time](fv); ok && !tm.IsZero() {
			return keyValue{kind: kvTime, t: tm}
		}
	}
	return keyValue{}
}

// render renders the key from a struct value. With prefix set, it stops at the
// first missing input and reports complete=false. Errors name the entity, the key
// attribute and the Go field.
func (kt *keyTemplate) render(info *entityInfo, sv reflect.Value, prefix bool) (string, bool, error) {
	// Inputs are read by offset from an addressable T, through reflect otherwise.
	direct := sv.CanAddr() && sv.Type() == info.goType
	if direct && kt.direct != nil {
		if k, ok := kt.renderDirect(sv.Addr().UnsafePointer()); ok {
			return k, true, nil
		}
	}
	var inline [4]keyValue
	n := len(kt.fields)
	var vals []keyValue
	if n <= len(inline) {
		vals = inline[:n]
	} else {
		vals = make([]keyValue, n)
	}
	if direct {
		base := sv.Addr().UnsafePointer()
		for i := range vals {
			if a := &kt.access[i]; a.kind != accReflect {
				a.readInto(base, &vals[i])
			} else {
				vals[i] = keyValueOfField(kt.fields[i], sv)
			}
		}
	} else {
		for i, f := range kt.fields {
			vals[i] = keyValueOfField(f, sv)
		}
	}
	return kt.renderValues(info, vals, nil, prefix)
}

// compileDirect sets direct, tail and fixed when every input can be read by offset.
func (kt *keyTemplate) compileDirect() {
	var steps []directStep
	lit, pi := "", 0
	fixed := 0
	for si := range kt.tmpl.segs {
		seg := &kt.tmpl.segs[si]
		fixed += len(seg.literal)
		if seg.name == "" {
			lit += seg.literal
			continue
		}
		a := kt.access[pi]
		pi++
		switch a.kind {
		case accReflect:
			return
		case accString:
		case accTime:
			fixed += len(timeLayout)
		default:
			fixed += max(20, seg.width)
		}
		steps = append(steps, directStep{literal: lit, keyAccess: a, seg: seg})
		lit = ""
	}
	kt.direct, kt.tail, kt.fixed = steps, lit, fixed
	if steps == nil {
		kt.direct = []directStep{} // a template without placeholders
	}
}

// renderDirect renders the whole key from the struct at base, reading every input
// by its offset, into one allocation of about the key's length. It reports false,
// having rendered nothing, when an input is missing or cannot be rendered, or the
// key is too long: the general path then says why, or renders the prefix.
func (kt *keyTemplate) renderDirect(base unsafe.Pointer) (string, bool) {
	size := kt.fixed
	for i := range kt.direct {
		if st := &kt.direct[i]; st.kind == accString {
			size += len(*(*string)(unsafe.Add(base, st.off)))
		}
	}
	b := make([]byte, 0, size)
	delim := kt.tmpl.delim
	for i := range kt.direct {
		st := &kt.direct[i]
		b = append(b, st.literal...)
		p := unsafe.Add(base, st.off)
		switch format := st.seg.format; {
		case st.kind == accString && format == fmtPlain:
			v := *(*string)(p)
			if v == "" || !plainPart(v, delim) {
				return "", false
			}
			b = append(b, v...)
		case st.kind == accTime && (format == fmtTime || format == fmtDate):
			tm := (*time.Time)(p)
			sec := tm.Unix()
			if tm.IsZero() || sec < minKeyUnix || sec > maxKeyUnix {
				return "", false
			}
			b = appendFixedTime(b, sec, tm.Nanosecond(), format == fmtTime)
		default:
			var v keyValue
			st.readInto(base, &v)
			if v.kind == kvMissing {
				return "", false
			}
			var err error
			if b, err = kt.tmpl.appendValueAt(b, st.seg, &v); err != nil {
				return "", false
			}
		}
	}
	b = append(b, kt.tail...)
	if len(b) > kt.maxBytes {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// renderWith is render asking get for the input of the i-th placeholder. Inputs are
// asked for in order, up to the first missing one.
func (kt *keyTemplate) renderWith(info *entityInfo, get func(i int) keyValue, prefix bool) (string, bool, error) {
	var inline [4]keyValue
	vals := inline[:0]
	for i := range kt.fields {
		v := get(i)
		vals = append(vals, v)
		if v.kind == kvMissing {
			break // rendering stops here
		}
	}
	return kt.renderValues(info, vals, get, prefix)
}

// renderValues renders the key from the inputs of its placeholders, in order; vals
// may end at the first missing one, and get then gives the others.
func (kt *keyTemplate) renderValues(info *entityInfo, vals []keyValue, get func(i int) keyValue, prefix bool) (string, bool, error) {
	var buf [256]byte
	b, complete, err := kt.tmpl.appendKey(buf[:0], vals, prefix)
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			out := *ke
			out.Entity, out.Attribute = info.name, kt.attr
			out.Field = kt.goName(ke.Field)
			return "", false, &out
		}
		return "", false, err
	}
	if len(b) > kt.maxBytes {
		ke := &KeyError{Entity: info.name, Attribute: kt.attr, Reason: "rendered key is " + strconv.Itoa(len(b)) + " bytes, over DynamoDB's limit of " + strconv.Itoa(kt.maxBytes)}
		// Blame the longest input: numbers and times have a fixed width.
		longest := 0
		for i, f := range kt.fields {
			var v keyValue
			if i < len(vals) {
				v = vals[i]
			} else if get != nil {
				v = get(i)
			}
			if v.kind == kvString && len(v.s) > longest {
				longest, ke.Field = len(v.s), f.GoName
			}
		}
		if ke.Field != "" {
			ke.Reason += " (" + ke.Field + " is " + strconv.Itoa(longest) + " bytes)"
		}
		return "", false, ke
	}
	return string(b), complete, nil
}

// goName maps a placeholder name to the Go field name for messages.
func (kt *keyTemplate) goName(placeholder string) string {
	for _, f := range kt.fields {
		if f.Name == placeholder {
			return f.GoName
		}
	}
	return placeholder
}

// primaryKey renders the base table key of a struct value, as attributes and as
// strings (for messages).
func (info *entityInfo) primaryKey(sv reflect.Value) (map[string]types.AttributeValue, map[string]string, error) {
	k, err := info.primaryKeyAV(sv)
	if err != nil {
		return nil, nil, err
	}
	return k, info.table.keyStrings(k), nil
}

// primaryKeyAV renders the base table key of a struct value.
func (info *entityInfo) primaryKeyAV(sv reflect.Value) (map[string]types.AttributeValue, error) {
	if err := info.checkShard(sv); err != nil {
		return nil, err
	}
	pk, _, err := info.pk.render(info, sv, false)
	if err != nil {
		return nil, err
	}
	sk, _, err := info.sk.render(info, sv, false)
	if err != nil {
		return nil, err
	}
	t := info.table.opts
	avs := &[2]types.AttributeValueMemberS{{Value: pk}, {Value: sk}} // one allocation for both
	return map[string]types.AttributeValue{t.PartitionKey: &avs[0], t.SortKey: &avs[1]}, nil
}

// encodeItem encodes a full item: fields, every key attribute whose inputs are
// present (index keys with a missing input are left out: a sparse index), and the
// type attribute.
func (info *entityInfo) encodeItem(sv reflect.Value) (map[string]types.AttributeValue, error) {
	if err := info.checkShard(sv); err != nil {
		return nil, err
	}
	item := make(map[string]types.AttributeValue, len(info.plan.Fields())+len(info.all)+1)
	if err := info.plan.EncodeInto(sv, item); err != nil {
		return nil, fmt.Errorf("singletable: encode %s: %w: %w", info.name, ErrInvalidInput, err)
	}
	// The base keys and the type, in one allocation.
	avs := &[3]types.AttributeValueMemberS{2: {Value: info.discriminator}}
	base := avs[:2]
	for i := 0; i < len(info.all); i++ {
		kt := info.all[i]
		if kt.index == "" {
			v, _, err := kt.render(info, sv, false)
			if err != nil {
				return nil, err
			}
			base[0].Value = v
			item[kt.attr] = &base[0]
			base = base[1:]
			continue
		}
		pair := info.indexes[kt.index]
		vals, ok, err := info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) { return kt.render(info, sv, true) })
		if err != nil {
			return nil, err
		}
		if ok {
			for j, v := range vals {
				item[pair[j].attr] = &types.AttributeValueMemberS{Value: v}
			}
		}
		if pair[1] != nil {
			i++ // the pair's sort key was handled with its partition key
		}
	}
	item[info.table.opts.TypeAttribute] = &avs[2]
	info.stampSchema(item)
	if _, err := info.checkItem(item); err != nil {
		return nil, err
	}
	return item, nil
}

// renderIndex renders an index's key pair, each key with render (which renders a
// prefix). ok is false (and nothing is an error) when an input is missing: the
// item is left out of the index.
func (info *entityInfo) renderIndex(pair [2]*keyTemplate, render func(kt *keyTemplate) (string, bool, error)) ([]string, bool, error) {
	vals := make([]string, 0, 2)
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		v, complete, err := render(kt)
		if err != nil {
			return nil, false, err
		}
		if !complete {
			return nil, false, nil
		}
		vals = append(vals, v)
	}
	return vals, true, nil
}

// decode decodes an item into a T, refusing items of another type, migrating (and
// writing back) an item of an older schema.
func (e *Entity[T]) decode(ctx context.Context, item map[string]types.AttributeValue) (T, error) {
	return e.decodeWith(ctx, item, true)
}

// decodeWith is decode; writeBack=false migrates in memory only.
func (e *Entity[T]) decodeWith(ctx context.Context, item map[string]types.AttributeValue, writeBack bool) (T, error) {
	var v T
	if got, ok := item[e.table.opts.TypeAttribute].(*types.AttributeValueMemberS); ok && got.Value != e.info.discriminator {
		return v, fmt.Errorf("singletable: item has %s %q, want %q: %w", e.table.opts.TypeAttribute, got.Value, e.info.discriminator, ErrTypeMismatch)
	}
	rv := reflect.ValueOf(&v).Elem()
	migrated, err := e.info.decodeInto(item, rv)
	if err != nil {
		var me *MigrationError
		if errors.As(err, &me) {
			return v, err
		}
		return v, fmt.Errorf("singletable: decode %s: %w", e.info.name, err)
	}
	if migrated && writeBack {
		e.info.afterMigrate(ctx, item, rv)
	}
	return v, nil
}

// isType reports whether an item carries this entity's discriminator.
func (info *entityInfo) isType(item map[string]types.AttributeValue) bool {
	got, ok := item[info.table.opts.TypeAttribute].(*types.AttributeValueMemberS)
	return ok && got.Value == info.discriminator
}

// GetOption configures [Entity.Get] and [Entity.BatchGet].
type GetOption interface{ applyGet(*getOptions) }

type getOptions struct{ consistent bool }

// ReadOption is an option for both point reads and queries.
type ReadOption interface {
	GetOption
	QueryOption
}

type consistentOption struct{}

func (consistentOption) applyGet(o *getOptions) { o.consistent = true }
func (consistentOption) applyQuery(o *queryOptions) error {
	o.consistent = true
	return nil
}

// Consistent asks for a strongly consistent read (ConsistentRead=true): it sees every
// write acknowledged before it and costs twice the read capacity. Indexes do not
// support it; a query on an index with it fails before sending.
func Consistent() ReadOption { return consistentOption{} }

// Get reads one item by its primary key, rendered from key (only the key's inputs
// need be set). It calls GetItem once: 0.5 RCU per 4 KB eventually consistent, 1 with
// [Consistent]. A missing item is an error matching [ErrNotFound]; an item of another
// entity type at the key matches [ErrTypeMismatch].
func (e *Entity[T]) Get(ctx context.Context, key T, opts ...GetOption) (T, error) {
	ctx = e.observe(ctx)
	var zero T
	var o getOptions
	if len(opts) > 0 {
		o = collectGetOptions(opts)
	}
	sv := reflect.ValueOf(&key).Elem()
	found, err := e.resolveShardItem(ctx, sv, o.consistent)
	if err != nil {
		return zero, e.itemErr("Get", nil, err)
	}
	if found != nil { // a random shard's lookup read the item already
		v, err := e.decode(ctx, found)
		if err != nil {
			return zero, e.itemErr("Get", e.info.table.keyStrings(found), err)
		}
		return v, nil
	}
	k, err := e.info.primaryKeyAV(sv)
	if err != nil {
		return zero, e.itemErr("Get", nil, err)
	}
	v, err := e.getItem(ctx, &dynamodb.GetItemInput{ // GetItem, decoded (wire.go)
		TableName:      e.table.namePtr(),
		Key:            k,
		ConsistentRead: boolPtr(o.consistent),
	})
	if err != nil {
		return zero, e.itemErr("Get", e.table.keyStrings(k), err)
	}
	return v, nil
}

// collectGetOptions applies opts. (Apart from Get, so that Get's options stay on
// its stack when it has none.)
func collectGetOptions(opts []GetOption) getOptions {
	var o getOptions
	for _, opt := range opts {
		opt.applyGet(&o)
	}
	return o
}

// collectWriteOptions applies opts, as collectGetOptions does.
func collectWriteOptions(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, opt := range opts {
		opt.applyWrite(&o)
	}
	return o
}

var ptrTrue, ptrFalse = aws.Bool(true), aws.Bool(false)

// boolPtr returns a shared pointer to b, for request inputs, which nothing modifies.
func boolPtr(b bool) *bool {
	if b {
		return ptrTrue
	}
	return ptrFalse
}

func (e *Entity[T]) itemErr(op string, key map[string]string, err error) error {
	return &ItemError{Op: op, Entity: e.info.name, Key: key, Err: err}
}

// WriteOption configures [Entity.Put], [Entity.Create], [Entity.Delete] and, since
// every WriteOption is also an [UpdateOption], [Entity.Update].
type WriteOption interface {
	UpdateOption
	applyWrite(*writeOptions)
}

type writeOptions struct {
	cond    expression.ConditionBuilder
	clobber bool
}

type ifOption struct{ cond expression.ConditionBuilder }

func (o ifOption) applyWrite(w *writeOptions) { w.cond = andCond(w.cond, o.cond) }
func (o ifOption) applyUpdate(u *updateOptions) error {
	u.cond = andCond(u.cond, o.cond)
	return nil
}

func andCond(a, b expression.ConditionBuilder) expression.ConditionBuilder {
	if !a.IsSet() {
		return b
	}
	return a.And(b)
}

// If adds a condition, built with the SDK's expression package, that the item must
// meet for the write to happen. When it fails the error matches [ErrCondition].
// Several If options are joined with AND.
func If(cond expression.ConditionBuilder) WriteOption { return ifOption{cond} }

// writeRequest is a planned single-item write, before it becomes a PutItem,
// UpdateItem or DeleteItem input or a transaction item.
type writeRequest struct {
	op     string
	key    map[string]types.AttributeValue
	keyStr map[string]string
	item   map[string]types.AttributeValue // Put and Create
	update string                          // Update
	cond   string
	condP  *string // a shared pointer to cond's text, when it is a Fixed's
	b      expr.Builder
	// userCond is set when the caller added a condition, so a failed check is not
	// necessarily a missing item.
	userCond bool
	version  *versionPlan // for versioned entities
	// receipt, for a Create of an unversioned entity: a random token stored in
	// receiptAttr, which tells after a lost response whether the item read back
	// is this write's.
	receipt, receiptAttr string
	check                bool // a transaction's condition check
	// returnNew asks an UpdateItem for the item as stored afterwards.
	returnNew bool
}

// setCondition joins the library's guard with the caller's condition, if any.
func (w *writeRequest) setCondition(guard string, cond expression.ConditionBuilder) error {
	user, err := w.b.Condition(cond)
	if err != nil {
		return fmt.Errorf("singletable: condition: %w: %w", ErrInvalidInput, err)
	}
	w.userCond = user != ""
	w.cond = expr.And(guard, user)
	return nil
}

// setFixedCondition is setCondition for a guard built once (f), with w's builder
// still unused.
func (w *writeRequest) setFixedCondition(f *expr.Fixed, cond expression.ConditionBuilder) error {
	guard := w.b.Use(f)
	if !cond.IsSet() {
		w.cond, w.condP, w.userCond = guard, f.TextPtr(), false
		return nil
	}
	return w.setCondition(guard, cond)
}

// condPtr returns the condition for a request input, nil if there is none.
func (w *writeRequest) condPtr() *string {
	if w.condP != nil && *w.condP == w.cond {
		return w.condP
	}
	return expr.Ptr(w.cond)
}

// keyStrings returns the key for messages; a Put planned without it takes it
// from its item.
func (w *writeRequest) keyStrings(t *Table) map[string]string {
	if w.keyStr == nil && w.item != nil {
		return t.keyStrings(w.item)
	}
	return w.keyStr
}

// call sends the write as PutItem (item set), UpdateItem (update set) or DeleteItem.
func (w *writeRequest) call(ctx context.Context, t *Table, optFns ...func(*dynamodb.Options)) (map[string]types.AttributeValue, error) {
	switch {
	case w.item != nil:
		_, err := t.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 t.namePtr(),
			Item:                      w.item,
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}, optFns...)
		return nil, err
	case w.update != "":
		in := &dynamodb.UpdateItemInput{
			TableName:                 t.namePtr(),
			Key:                       w.key,
			UpdateExpression:          aws.String(w.update),
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}
		if w.returnNew {
			in.ReturnValues = types.ReturnValueAllNew
		}
		out, err := t.client.UpdateItem(ctx, in, optFns...)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	default:
		_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 t.namePtr(),
			Key:                       w.key,
			ConditionExpression:       w.condPtr(),
			ExpressionAttributeNames:  w.b.Names(),
			ExpressionAttributeValues: w.b.Values(),
		}, optFns...)
		return nil, err
	}
}

// typeGuard is the condition that keeps a write from touching an item of another
// entity type at the same key: the item is absent or of this type.
func (info *entityInfo) typeGuard(b *expr.Builder) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR " + b.Name(info.table.opts.TypeAttribute) + " = " + b.S(info.discriminator)
}

func (info *entityInfo) planPut(sv reflect.Value, create bool, o writeOptions) (*writeRequest, error) {
	return info.planPutKeys(sv, create, o, true)
}

// planPutKeys is planPut; without keys, a plain Put (unversioned, not a Create,
// which alone are sent once and never read back) is planned without its key and
// key strings, which writeRequest.keyStrings then takes from the item.
func (info *entityInfo) planPutKeys(sv reflect.Value, create bool, o writeOptions, keys bool) (*writeRequest, error) {
	var vp *versionPlan
	if info.version != nil {
		var err error
		if create {
			vp, err = info.planVersion(reflect.Zero(sv.Type()), false) // a create always stores version 1
		} else {
			vp, err = info.planVersion(sv, o.clobber)
		}
		if err != nil {
			return nil, err
		}
		if !create {
			return info.planVersionedPut(sv, o, vp)
		}
	}
	item, err := info.encodeItem(sv)
	if err != nil {
		return nil, err
	}
	tk := info.table.opts
	w := &writeRequest{op: "Put", item: item, version: vp}
	switch {
	case vp != nil:
		item[vp.attr] = numberAV(vp.next)
		item[vp.slot] = &types.AttributeValueMemberS{Value: vp.token}
	case create:
		// A receipt, as a versioned create stores, so that a Create whose response
		// is lost is not reported as ErrAlreadyExists because of itself.
		token, err := newToken()
		if err != nil {
			return nil, err
		}
		w.receipt, w.receiptAttr = token, info.table.receiptAttr(1)
		item[w.receiptAttr] = &types.AttributeValueMemberS{Value: token}
	}
	if vp != nil || create {
		// The version and receipt added here count too.
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
	}
	if keys || vp != nil || create {
		w.key = map[string]types.AttributeValue{tk.PartitionKey: item[tk.PartitionKey], tk.SortKey: item[tk.SortKey]}
		w.keyStr = map[string]string{tk.PartitionKey: item[tk.PartitionKey].(*types.AttributeValueMemberS).Value, tk.SortKey: item[tk.SortKey].(*types.AttributeValueMemberS).Value}
	}
	guard := info.putGuard
	if create {
		w.op = "Create"
		guard = info.createGuard
	}
	if err := w.setFixedCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}

func (info *entityInfo) planDelete(sv reflect.Value, o writeOptions) (*writeRequest, error) {
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	w := &writeRequest{op: "Delete", key: k, keyStr: ks}
	var guard string
	if info.version != nil {
		vp, err := info.planVersion(sv, o.clobber)
		if err != nil {
			return nil, err
		}
		if !vp.clobber {
			if vp.expected == 0 {
				return nil, fmt.Errorf("singletable: Delete %s: version 0: read the item first to learn its version, or pass Clobber(): %w", info.name, ErrInvalidInput)
			}
			guard = w.b.Name(vp.attr) + " = " + w.b.Value(numberAV(vp.expected)) + " AND " + w.b.Name(info.table.opts.TypeAttribute) + " = " + w.b.S(info.discriminator)
			w.version = vp
		}
	}
	if guard == "" {
		if err := w.setFixedCondition(info.putGuard, o.cond); err != nil {
			return nil, err
		}
		return w, nil
	}
	if err := w.setCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}

// writeErr maps a failed write's error: a failed condition matches ErrCondition,
// and for Create also ErrAlreadyExists.
func (e *Entity[T]) writeErr(w *writeRequest, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		switch {
		case w.op == "Create":
			err = fmt.Errorf("%w: %w: %w", ErrAlreadyExists, ErrCondition, err)
		case w.op == "Update" && !w.userCond:
			err = fmt.Errorf("%w: %w", ErrNotFound, err) // the existence and type guard failed
		default:
			err = fmt.Errorf("%w: %w", ErrCondition, err)
		}
	}
	return e.itemErr(w.op, w.keyStrings(e.table), err)
}

// Put writes v as a whole item (PutItem), replacing any item of this type at its key:
// every field, every key attribute (index keys whose inputs are empty are left out,
// so the item leaves that sparse index), and the type attribute. It refuses to
// replace an item of another entity type. Cost: 1 WCU per 1 KB. It returns the value
// stored; v itself is not modified, so retrying the call is safe.
func (e *Entity[T]) Put(ctx context.Context, v T, opts ...WriteOption) (T, error) {
	ctx = e.observe(ctx)
	return e.put(ctx, v, false, opts)
}

// Create is [Entity.Put] on the condition that no item exists at v's key; if one does,
// the error matches [ErrAlreadyExists] and [ErrCondition] and nothing is written.
func (e *Entity[T]) Create(ctx context.Context, v T, opts ...WriteOption) (T, error) {
	ctx = e.observe(ctx)
	return e.put(ctx, v, true, opts)
}

func (e *Entity[T]) put(ctx context.Context, v T, create bool, opts []WriteOption) (T, error) {
	var o writeOptions
	if len(opts) > 0 {
		o = collectWriteOptions(opts)
	}
	op := "Put"
	if create {
		op = "Create"
	}
	sv := reflect.ValueOf(&v).Elem()
	if _, err := e.info.fillShard(sv, true); err != nil {
		return v, e.itemErr(op, nil, err)
	}
	w, err := e.info.planPutKeys(sv, create, o, false)
	if err != nil {
		return v, e.itemErr(op, nil, err)
	}
	attrs, err := e.send(ctx, w)
	if err != nil {
		return v, err
	}
	if vp := w.version; vp != nil {
		next := vp.next
		if vp.clobber {
			next, _ = storedVersion(attrs, vp.attr)
		}
		e.info.setVersion(sv, next)
	}
	return v, nil
}

// Delete deletes the item at key's primary key (DeleteItem), if it is of this type.
// Deleting a missing item succeeds, unless an [If] condition says otherwise.
// Cost: 1 WCU per 1 KB of the deleted item.
func (e *Entity[T]) Delete(ctx context.Context, key T, opts ...WriteOption) error {
	ctx = e.observe(ctx)
	var o writeOptions
	if len(opts) > 0 {
		o = collectWriteOptions(opts)
	}
	sv := reflect.ValueOf(&key).Elem()
	if err := e.resolveShard(ctx, sv, true); err != nil {
		return e.itemErr("Delete", nil, err)
	}
	w, err := e.info.planDelete(sv, o)
	if err != nil {
		return e.itemErr("Delete", nil, err)
	}
	_, err = e.send(ctx, w)
	return err
}

// Key renders every key attribute of v: the primary key and the keys of each index
// whose inputs v holds (the attributes a Put of v would write). It sends nothing; a
// random shard of a sharded entity must be set in v.
func (e *Entity[T]) Key(v T) (map[string]string, error) {
	sv := reflect.ValueOf(&v).Elem()
	if _, err := e.info.fillShard(sv, false); err != nil {
		return nil, err
	}
	if err := e.info.checkShard(sv); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, kt := range []*keyTemplate{e.info.pk, e.info.sk} {
		s, _, err := kt.render(e.info, sv, false)
		if err != nil {
			return nil, err
		}
		out[kt.attr] = s
	}
	for _, ix := range e.table.opts.Indexes {
		pair, ok := e.info.indexes[ix.Name]
		if !ok {
			continue
		}
		vals, ok, err := e.info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) { return kt.render(e.info, sv, true) })
		if err != nil {
			return nil, err
		}
		for j := range vals {
			if ok {
				out[pair[j].attr] = vals[j]
			}
		}
	}
	return out, nil
}

// ParseKey rebuilds the key fields of a T from a rendered primary key, given as
// attribute name to value (for example a stream record's keys). Fields that do not
// feed the key are left zero.
func (e *Entity[T]) ParseKey(key map[string]string) (T, error) {
	var v T
	sv := reflect.ValueOf(&v).Elem()
	for _, kt := range []*keyTemplate{e.info.pk, e.info.sk} {
		s, ok := key[kt.attr]
		if !ok {
			return v, &KeyError{Entity: e.info.name, Attribute: kt.attr, Reason: "missing"}
		}
		err := kt.tmpl.extract(s, func(name, raw string, f keyFormat) error {
			fld, _ := e.info.plan.Field(name)
			return setFromKey(fld, sv, raw, f)
		})
		if err != nil {
			var ke *KeyError
			if errors.As(err, &ke) {
				out := *ke
				out.Entity, out.Attribute = e.info.name, kt.attr
				return v, &out
			}
			return v, err
		}
	}
	return v, nil
}

// setFromKey sets a field from the raw text of its placeholder.
func setFromKey(f *codec.Field, sv reflect.Value, raw string, format keyFormat) error {
	val, err := parseKeyValue(raw, format)
	if err != nil {
		return err
	}
	fv := sv.FieldByIndex(f.Index)
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch x := val.(type) {
	case time.Time:
		fv.Set(reflect.ValueOf(x))
		return nil
	case string:
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(x)
			return nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(x, 10, fv.Type().Bits())
			if err != nil || strconv.FormatInt(n, 10) != x {
				// Only the text the key renders ("7", not "007", "+7" or "-0"), so
				// that one key parses from one text.
				return &KeyError{Reason: strconv.Quote(x) + " is not an integer for " + f.GoName + " as keys write it"}
			}
			fv.SetInt(n)
			return nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(x, 10, fv.Type().Bits())
			if err != nil || strconv.FormatUint(n, 10) != x {
				return &KeyError{Reason: strconv.Quote(x) + " is not an unsigned integer for " + f.GoName + " as keys write it"}
			}
			fv.SetUint(n)
			return nil
		}
	case int64:
		if fv.CanInt() && !fv.OverflowInt(x) {
			fv.SetInt(x)
			return nil
		}
		if fv.CanUint() && x >= 0 && !fv.OverflowUint(uint64(x)) {
			fv.SetUint(uint64(x))
			return nil
		}
	case uint64:
		if fv.CanUint() && !fv.OverflowUint(x) {
			fv.SetUint(x)
			return nil
		}
	}
	return &KeyError{Reason: "value does not fit field " + f.GoName + " of type " + fv.Type().String()}
}

// MaxItemBytes is DynamoDB's item size limit. Items over it are rejected before sending.
const MaxItemBytes = 400 * 1024

// itemSize estimates an item's size as DynamoDB counts it: names plus values, with
// numbers at their decimal length (an upper bound of their stored size) and three
// bytes of overhead per list or map plus one per element.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		s, _ := checkAV(v)
		n += len(k) + s
	}
	return n
}

// checkItem returns an item's size (see itemSize) and refuses, before anything is
// sent, what DynamoDB would refuse or silently alter: items over 400 KB, numbers
// it cannot store (NaN, infinities, more than 38 significant digits, magnitudes
// outside 1E-130 to 1E+126) and strings that are not UTF-8 (the SDK's JSON
// encoding would replace their bytes with U+FFFD). Errors name the Go field and
// the path inside it.
func (info *entityInfo) checkItem(item map[string]types.AttributeValue) (int, error) {
	n := 0
	var largest string
	largestSize := -1
	for k, v := range item {
		s, p := checkAV(v)
		if p == nil && !utf8.ValidString(k) {
			p = &avProblem{what: "the attribute name is not valid UTF-8"}
		}
		if p != nil {
			return 0, fmt.Errorf("singletable: %s (attribute %q%s): %s: %w", info.fieldName(k), k, p.path, p.what, ErrInvalidInput)
		}
		n += len(k) + s
		if s > largestSize {
			largest, largestSize = k, s
		}
	}
	if n > MaxItemBytes {
		return n, fmt.Errorf("singletable: %s item is %d bytes, over DynamoDB's limit of %d (the largest attribute is %s, %d bytes): %w", info.name, n, MaxItemBytes, info.fieldName(largest), largestSize, ErrInvalidInput)
	}
	return n, nil
}

// checkSize refuses an item that is over DynamoDB's limit once the attributes the
// library adds after encoding are in it, or will be on the server (extra bytes).
func (info *entityInfo) checkSize(item map[string]types.AttributeValue, extra int) error {
	if n := itemSize(item) + extra; n > MaxItemBytes {
		return fmt.Errorf("singletable: %s item is %d bytes with its version and receipts, over DynamoDB's limit of %d: %w", info.name, n, MaxItemBytes, ErrInvalidInput)
	}
	return nil
}

// fieldName names a stored attribute for messages: "Order.Status", or the
// attribute itself for those the library writes (keys, type, schema).
func (info *entityInfo) fieldName(attr string) string {
	if f, ok := info.plan.Field(attr); ok {
		return info.name + "." + f.GoName
	}
	return info.name + " attribute " + strconv.Quote(attr)
}

// checkValue checks one encoded value of field f (see checkItem), as op (e.g.
// "Update") sends it, and returns its size with its name.
func (info *entityInfo) checkValue(op string, f *codec.Field, av types.AttributeValue) (int, error) {
	s, p := checkAV(av)
	if p != nil {
		return 0, fmt.Errorf("singletable: %s %s.%s (attribute %q%s): %s: %w", op, info.name, f.GoName, f.Name, p.path, p.what, ErrInvalidInput)
	}
	if s+len(f.Name) > MaxItemBytes {
		return 0, fmt.Errorf("singletable: %s %s.%s: the value is %d bytes, over DynamoDB's item limit of %d: %w", op, info.name, f.GoName, s, MaxItemBytes, ErrInvalidInput)
	}
	return s + len(f.Name), nil
}

// avProblem says why an encoded value cannot be sent, and where below its
// attribute ("[2]", ".name"; "" for the attribute itself).
type avProblem struct{ path, what string }

func (p *avProblem) under(step string) *avProblem {
	p.path = step + p.path
	return p
}

// checkAV returns av's size (see itemSize) and its first problem, if any.
func checkAV(av types.AttributeValue) (int, *avProblem) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return 0, &avProblem{what: "not valid UTF-8"}
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberN:
		if what := numberProblem(v.Value); what != "" {
			return 0, &avProblem{what: what}
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberB:
		return len(v.Value), nil
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1, nil
	case *types.AttributeValueMemberSS:
		n := 0
		for i, s := range v.Value {
			if !utf8.ValidString(s) {
				return 0, &avProblem{path: "[" + strconv.Itoa(i) + "]", what: "not valid UTF-8"}
			}
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberNS:
		n := 0
		for i, s := range v.Value {
			if what := numberProblem(s); what != "" {
				return 0, &avProblem{path: "[" + strconv.Itoa(i) + "]", what: what}
			}
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberBS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberL:
		n := 3
		for i, e := range v.Value {
			s, p := checkAV(e)
			if p != nil {
				return 0, p.under("[" + strconv.Itoa(i) + "]")
			}
			n += 1 + s
		}
		return n, nil
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			if !utf8.ValidString(k) {
				return 0, &avProblem{path: "." + strconv.QuoteToASCII(k), what: "a map key that is not valid UTF-8"}
			}
			s, p := checkAV(e)
			if p != nil {
				return 0, p.under("." + k)
			}
			n += 1 + len(k) + s
		}
		return n, nil
	case nil:
		return 0, &avProblem{what: "a nil attribute value"}
	}
	return 0, nil
}

// numberProblem says why DynamoDB would refuse s as a number, or returns "". It
// accepts decimal text with an optional sign, fraction and exponent, at most 38
// significant digits, and a magnitude from 1E-130 to under 1E+126 (or zero).
func numberProblem(s string) string {
	switch s {
	case "NaN", "+Inf", "-Inf", "Inf", "Infinity", "-Infinity", "+Infinity":
		return s + " is not a number DynamoDB can store"
	}
	const bad = "not a decimal number"
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	intStart := i
	for i < len(s) && digit(s[i]) {
		i++
	}
	intDigits, fracDigits := s[intStart:i], ""
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && digit(s[i]) {
			i++
		}
		fracDigits = s[start:i]
	}
	if len(intDigits)+len(fracDigits) == 0 {
		return bad
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && digit(s[i]); i++ {
			if exp < 1_000_000 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return bad
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return bad
	}
	at := func(j int) byte {
		if j < len(intDigits) {
			return intDigits[j]
		}
		return fracDigits[j-len(intDigits)]
	}
	total := len(intDigits) + len(fracDigits)
	first, last := -1, -1
	for j := range total {
		if at(j) != '0' {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first < 0 {
		return "" // zero
	}
	if last-first+1 > 38 {
		return s + " has " + strconv.Itoa(last-first+1) + " significant digits; DynamoDB keeps at most 38"
	}
	// The decimal exponent of the first significant digit.
	switch adj := len(intDigits) - first - 1 + exp; {
	case adj > 125:
		return s + " is too large for DynamoDB (at most 9.9999999999999999999999999999999999999E+125)"
	case adj < -130:
		return s + " is too small for DynamoDB (at least 1E-130 in magnitude, or zero)"
	}
	return ""
}
