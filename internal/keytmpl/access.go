package keytmpl

import (
	"reflect"
	"time"
	"unsafe"

	"github.com/singletable/singletable/internal/codec"
)

var timeType = reflect.TypeFor[time.Time]()

// Access reads a placeholder's input straight from the struct's memory, as
// internal/codec's fast paths do: the field's offset and its layout. Fields behind
// pointers (their own or an embedded struct's) are read through reflect.
type Access struct {
	off  uintptr
	kind accessKind
}

type accessKind uint8

const (
	accReflect accessKind = iota
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

// AccessOf returns how to read field f, a valid key input (see KindOf).
func AccessOf(f *codec.Field) Access {
	off, ok := f.Offset()
	if !ok || f.OmitEmpty {
		return Access{} // omitempty inputs are missing when zero: see ValueOfField
	}
	t := f.Type
	if t == timeType {
		return Access{off, accTime}
	}
	var sized [4]accessKind
	switch t.Kind() {
	case reflect.String:
		return Access{off, accString}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		sized = [4]accessKind{accInt8, accInt16, accInt32, accInt64}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		sized = [4]accessKind{accUint8, accUint16, accUint32, accUint64}
	default:
		return Access{}
	}
	switch t.Size() {
	case 1:
		return Access{off, sized[0]}
	case 2:
		return Access{off, sized[1]}
	case 4:
		return Access{off, sized[2]}
	case 8:
		return Access{off, sized[3]}
	}
	return Access{}
}

// ByOffset reports whether the input is read by its offset (ReadInto); when it
// is not, it is read through reflect (ValueOfField).
func (a *Access) ByOffset() bool { return a.kind != accReflect }

// ReadInto sets v, a zero Value, to the input at base+off, as ValueOfField
// would from the field (left zero: missing).
func (a *Access) ReadInto(base unsafe.Pointer, v *Value) {
	p := unsafe.Add(base, a.off)
	switch a.kind {
	case accString:
		if s := *(*string)(p); s != "" {
			v.Kind, v.S = KindString, s
		}
	case accInt8:
		v.Kind, v.I = KindInt, int64(*(*int8)(p))
	case accInt16:
		v.Kind, v.I = KindInt, int64(*(*int16)(p))
	case accInt32:
		v.Kind, v.I = KindInt, int64(*(*int32)(p))
	case accInt64:
		v.Kind, v.I = KindInt, *(*int64)(p)
	case accUint8:
		v.Kind, v.U = KindUint, uint64(*(*uint8)(p))
	case accUint16:
		v.Kind, v.U = KindUint, uint64(*(*uint16)(p))
	case accUint32:
		v.Kind, v.U = KindUint, uint64(*(*uint32)(p))
	case accUint64:
		v.Kind, v.U = KindUint, *(*uint64)(p)
	case accTime:
		if tm := (*time.Time)(p); !tm.IsZero() {
			v.Kind, v.T = KindTime, *tm
		}
	}
}

// KindOf says how a field type renders into a key, or KindMissing if it cannot.
func KindOf(t reflect.Type) Kind {
	if t == timeType {
		return KindTime
	}
	switch t.Kind() {
	case reflect.String:
		return KindString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return KindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return KindUint
	}
	return KindMissing
}

// ValueOfField reads a placeholder's input from a struct field. "" strings, nil
// pointers and zero times are missing; numbers are always present.
//
// One rule for every write: an input is present only if the item stores it, so a
// number of an omitempty field that is 0 (which Put leaves out of the item, and
// Update(Set(attr, 0)) removes) is missing too, and its index leaves the item.
func ValueOfField(f *codec.Field, sv reflect.Value) Value {
	fv, ok := f.ValueOf(sv)
	if !ok || f.OmitEmpty && f.IsZero(fv) {
		return Value{}
	}
	return ValueOfReflect(fv)
}

// ValueOfReflect reads a placeholder's input from a value of its field's type.
func ValueOfReflect(fv reflect.Value) Value {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return Value{}
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		if fv.Len() == 0 {
			return Value{}
		}
		return Value{Kind: KindString, S: fv.String()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Value{Kind: KindInt, I: fv.Int()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Value{Kind: KindUint, U: fv.Uint()}
	case reflect.Struct:
		if tm, ok := reflect.TypeAssert[time.Time](fv); ok && !tm.IsZero() {
			return Value{Kind: KindTime, T: tm}
		}
	case reflect.Slice:
		if fv.Type().Elem().Kind() == reflect.Uint8 && fv.Len() > 0 { // a binary key's input
			return Value{Kind: KindBytes, S: string(fv.Bytes())}
		}
	}
	return Value{}
}

// Direct is a template whose every input is read by offset, as steps for Render.
type Direct struct {
	tmpl     *Template
	steps    []directStep
	tail     string // the closing literal text
	fixed    int    // bytes of the key besides its string inputs, at most
	maxBytes int
}

// directStep is a placeholder preceded by literal text, for Direct.Render.
type directStep struct {
	literal string
	Access
	seg *Seg
}

// CompileDirect compiles t, whose placeholders are read as access says (one per
// placeholder, in order), for keys of at most maxBytes; it returns nil when an
// input cannot be read by offset.
func CompileDirect(t *Template, access []Access, maxBytes int) *Direct {
	var steps []directStep
	lit, pi := "", 0
	fixed := 0
	for si := range t.Segs {
		seg := &t.Segs[si]
		fixed += len(seg.Literal)
		if seg.Name == "" {
			lit += seg.Literal
			continue
		}
		a := access[pi]
		pi++
		switch a.kind {
		case accReflect:
			return nil
		case accString:
		case accTime:
			fixed += len(TimeLayout)
		default:
			fixed += max(20, seg.Width)
		}
		steps = append(steps, directStep{literal: lit, Access: a, seg: seg})
		lit = ""
	}
	return &Direct{tmpl: t, steps: steps, tail: lit, fixed: fixed, maxBytes: maxBytes}
}

// Render renders the whole key from the struct at base, reading every input
// by its offset, into one allocation of about the key's length. It reports false,
// having rendered nothing, when an input is missing or cannot be rendered, or the
// key is too long: the general path then says why, or renders the prefix.
func (d *Direct) Render(base unsafe.Pointer) (string, bool) {
	size := d.fixed
	for i := range d.steps {
		if st := &d.steps[i]; st.kind == accString {
			size += len(*(*string)(unsafe.Add(base, st.off)))
		}
	}
	b := make([]byte, 0, size)
	delim := d.tmpl.Delim
	for i := range d.steps {
		st := &d.steps[i]
		b = append(b, st.literal...)
		p := unsafe.Add(base, st.off)
		switch format := st.seg.Format; {
		case st.kind == accString && format == Plain:
			v := *(*string)(p)
			if v == "" || !plainPart(v, delim) {
				return "", false
			}
			b = append(b, v...)
		case st.kind == accTime && (format == Time || format == Date):
			tm := (*time.Time)(p)
			sec := tm.Unix()
			if tm.IsZero() || sec < minKeyUnix || sec > maxKeyUnix {
				return "", false
			}
			b = appendFixedTime(b, sec, tm.Nanosecond(), format == Time)
		default:
			var v Value
			st.ReadInto(base, &v)
			if v.Kind == KindMissing {
				return "", false
			}
			var err error
			if b, err = d.tmpl.AppendValueAt(b, st.seg, &v); err != nil {
				return "", false
			}
		}
	}
	b = append(b, d.tail...)
	if len(b) > d.maxBytes {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}
