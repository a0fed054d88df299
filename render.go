package singletable

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
)

// keyTemplate is one key attribute's template bound to T's fields.
type keyTemplate struct {
	attr      string
	index     string // "" for the base table
	partition bool
	tmpl      *Template
	fields    []*codec.Field // per placeholder, in order
	access    []keyAccess    // per placeholder: how to read its field
	maxBytes  int
	typ       types.ScalarAttributeType // N or B for a number or binary key (keytypes.go); "" for a string
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
	if !ok || f.OmitEmpty {
		return keyAccess{} // omitempty inputs are missing when zero: see keyValueOfField
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
//
// One rule for every write: an input is present only if the item stores it, so a
// number of an omitempty field that is 0 (which Put leaves out of the item, and
// Update(Set(attr, 0)) removes) is missing too, and its index leaves the item.
func keyValueOfField(f *codec.Field, sv reflect.Value) keyValue {
	fv, ok := f.ValueOf(sv)
	if !ok || f.OmitEmpty && f.IsZero(fv) {
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
	case reflect.Slice:
		if fv.Type().Elem().Kind() == reflect.Uint8 && fv.Len() > 0 { // a binary key's input (keytypes.go)
			return keyValue{kind: kvBytes, s: string(fv.Bytes())}
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
	if info.pk.typ != "" || info.sk == nil || info.sk.typ != "" {
		return info.typedKeyAV(sv, pk) // keytypes.go
	}
	sk, _, err := info.sk.render(info, sv, false)
	if err != nil {
		return nil, err
	}
	t := info.table.opts
	avs := &[2]types.AttributeValueMemberS{{Value: pk}, {Value: sk}} // one allocation for both
	return map[string]types.AttributeValue{t.PartitionKey: &avs[0], t.SortKey: &avs[1]}, nil
}

// encodeItem encodes a full item of a value whose shard must be set (see
// encodeWhole).
func (info *entityInfo) encodeItem(sv reflect.Value) (map[string]types.AttributeValue, error) {
	if err := info.checkShard(sv); err != nil {
		return nil, err
	}
	return info.encodeWhole(sv)
}

// encodeWhole encodes a full item: fields, every key attribute whose inputs are
// present (index keys with a missing input are left out: a sparse index), and the
// type attribute. What the feature plans store (version, receipts, schema) they
// add themselves (planner.go).
func (info *entityInfo) encodeWhole(sv reflect.Value) (map[string]types.AttributeValue, error) {
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
			if kt.typ != "" { // a number or binary key (keytypes.go)
				item[kt.attr] = info.table.keyAV(kt.attr, v)
				continue
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
		for j, pt := range pair {
			if ok && pt != nil {
				item[pt.attr] = info.table.keyAV(pt.attr, vals[j])
			}
		}
		if pair[0] != nil && pair[1] != nil {
			i++ // the pair's sort key was handled with its partition key (a local index has only its sort key in all)
		}
	}
	item[info.table.opts.TypeAttribute] = &avs[2]
	if _, err := info.checkItem(item); err != nil {
		return nil, err
	}
	return item, nil
}

// renderIndex renders an index's key pair, each key with render (which renders a
// prefix). ok is false (and nothing is an error) when an input is missing: the
// item is left out of the index.
func (info *entityInfo) renderIndex(pair [2]*keyTemplate, render func(kt *keyTemplate) (string, bool, error)) ([2]string, bool, error) {
	var vals [2]string // as pair: a nil template (a local index's partition key, an index without sort key) has ""
	for j, kt := range pair {
		if kt == nil {
			continue
		}
		v, complete, err := render(kt)
		if err != nil {
			return vals, false, err
		}
		if !complete {
			return vals, false, nil
		}
		vals[j] = v
	}
	return vals, true, nil
}

// keyStrings returns an item's primary key as strings, for messages: a number's
// digits, a binary's bytes in hex.
func (t *Table) keyStrings(item map[string]types.AttributeValue) map[string]string {
	key := map[string]string{}
	for _, a := range t.baseKeyAttrs() {
		switch v := item[a].(type) {
		case *types.AttributeValueMemberS:
			key[a] = v.Value
		case *types.AttributeValueMemberN:
			key[a] = v.Value
		case *types.AttributeValueMemberB:
			key[a] = t.keyDisplay(a, string(v.Value))
		}
	}
	return key
}

// formatKey renders a key's attributes for messages, sorted by name:
// {PK="ORDER#1", SK="A"}.
func formatKey(k map[string]string) string {
	if len(k) == 0 {
		return ""
	}
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		b.WriteString("=")
		b.WriteString(strconv.Quote(k[n]))
	}
	b.WriteString("}")
	return b.String()
}
