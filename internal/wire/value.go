package wire

import (
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/singletable/singletable/internal/codec"
)

// Decoding one attribute value into the Go value at a pointer, as the codec's decoders would from the
// attribute value the SDK builds: scalars, numbers, NULL, slices and sets, maps.

// value reads one attribute value into the value of w's type at p, as the codec's decoders would from
// the attribute value the SDK builds from it.
func (d *decoder) value(w *codec.Wire, p unsafe.Pointer, depth int) error {
	if w.Kind == codec.WireNone || depth > maxDepth {
		return errItem
	}
	tag, err := d.avOpen()
	if err != nil {
		return err
	}
	if tag == tagNULL {
		if err := d.null(); err != nil {
			return err
		}
		if err := setZero(w, p); err != nil {
			return err
		}
		return d.avClose()
	}
	if !accepts(w, tag) {
		return errItem
	}
	if err := d.valueAfterTag(w, tag, p, depth); err != nil {
		return err
	}
	return d.avClose()
}

// accepts reports whether a value of w's type is decoded plainly from a union member tag (not NULL).
func accepts(w *codec.Wire, tag avTag) bool {
	switch w.Kind {
	case codec.WireString:
		return tag == tagS || tag == tagN
	case codec.WireBool:
		return tag == tagBOOL
	case codec.WireInt, codec.WireUint, codec.WireFloat:
		return tag == tagN || tag == tagS && w.AsString
	case codec.WireTime:
		return tag == tagS || tag == tagN
	case codec.WireBytes:
		return tag == tagB
	case codec.WireStruct, codec.WireMap:
		return tag == tagM
	case codec.WireSlice:
		switch tag {
		case tagL:
			return true
		case tagSS:
			return w.Sets&codec.WireSS != 0
		case tagNS:
			return w.Sets&codec.WireNS != 0
		case tagBS:
			return w.Sets&codec.WireBS != 0
		}
	case codec.WirePointer:
		return accepts(w.Elem, tag)
	}
	return false
}

// valueAfterTag reads the value of a union whose member tag has been read (and is not NULL, and is one
// that w accepts) into p, without the closing brace.
func (d *decoder) valueAfterTag(w *codec.Wire, tag avTag, p unsafe.Pointer, depth int) error {
	switch w.Kind {
	case codec.WireString:
		start, end, escaped, err := d.stringToken()
		if err != nil {
			return err
		}
		s, err := d.text(start, end, escaped)
		if err != nil {
			return err
		}
		*(*string)(p) = s
	case codec.WireBool:
		b, err := d.boolToken()
		if err != nil {
			return err
		}
		*(*bool)(p) = b
	case codec.WireInt, codec.WireUint, codec.WireFloat:
		start, end, escaped, err := d.stringToken()
		if err != nil {
			return err
		}
		s, err := d.text(start, end, escaped)
		if err != nil {
			return err
		}
		return setNumber(w, s, p)
	case codec.WireTime:
		start, end, escaped, err := d.stringToken()
		if err != nil {
			return err
		}
		s, err := d.text(start, end, escaped)
		if err != nil {
			return err
		}
		var tm time.Time
		if tag == tagS {
			tm, err = time.Parse(time.RFC3339, s)
		} else {
			var sec int64
			sec, err = strconv.ParseInt(s, 10, 64)
			tm = time.Unix(sec, 0)
		}
		if err != nil {
			return errItem
		}
		*(*time.Time)(p) = tm
	case codec.WireBytes:
		b, err := d.blob(true)
		if err != nil {
			return err
		}
		*(*[]byte)(p) = b
	case codec.WireStruct:
		return d.object(w.Plan, p, nil, depth)
	case codec.WireSlice:
		return d.slice(w, tag, p, depth)
	case codec.WireMap:
		return d.mapValue(w, p, depth)
	case codec.WirePointer:
		// Anything but NULL allocates what the pointer points to and decodes into it.
		ep := reflect.New(w.Elem.Type).UnsafePointer()
		if err := d.valueAfterTag(w.Elem, tag, ep, depth); err != nil {
			return err
		}
		*(*unsafe.Pointer)(p) = ep
	default:
		return errItem
	}
	return nil
}

// setNumber parses s into the number at p as the codec's number decoders do; anything they would not set
// plainly (a parse error, an overflow) is left to them.
func setNumber(w *codec.Wire, s string, p unsafe.Pointer) error {
	switch w.Kind {
	case codec.WireInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errItem
		}
		switch w.Size {
		case 1:
			if i != int64(int8(i)) {
				return errItem
			}
			*(*int8)(p) = int8(i)
		case 2:
			if i != int64(int16(i)) {
				return errItem
			}
			*(*int16)(p) = int16(i)
		case 4:
			if i != int64(int32(i)) {
				return errItem
			}
			*(*int32)(p) = int32(i)
		default:
			*(*int64)(p) = i
		}
	case codec.WireUint:
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return errItem
		}
		switch w.Size {
		case 1:
			if u > math.MaxUint8 {
				return errItem
			}
			*(*uint8)(p) = uint8(u)
		case 2:
			if u > math.MaxUint16 {
				return errItem
			}
			*(*uint16)(p) = uint16(u)
		case 4:
			if u > math.MaxUint32 {
				return errItem
			}
			*(*uint32)(p) = uint32(u)
		default:
			*(*uint64)(p) = u
		}
	case codec.WireFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return errItem
		}
		if w.Size == 4 {
			// reflect.Value.OverflowFloat for float32.
			if a := math.Abs(f); math.MaxFloat32 < a && a <= math.MaxFloat64 {
				return errItem
			}
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
	default:
		return errItem
	}
	return nil
}

// setZero sets the value at p to its zero value, as NULL does.
func setZero(w *codec.Wire, p unsafe.Pointer) error {
	switch w.Kind {
	case codec.WireString:
		*(*string)(p) = ""
	case codec.WireBool:
		*(*bool)(p) = false
	case codec.WireInt, codec.WireUint, codec.WireFloat:
		switch w.Size {
		case 1:
			*(*uint8)(p) = 0
		case 2:
			*(*uint16)(p) = 0
		case 4:
			*(*uint32)(p) = 0
		default:
			*(*uint64)(p) = 0
		}
	case codec.WireTime:
		*(*time.Time)(p) = time.Time{}
	case codec.WireBytes, codec.WireSlice:
		*(*[]byte)(p) = nil
	case codec.WirePointer, codec.WireMap:
		*(*unsafe.Pointer)(p) = nil
	case codec.WireStruct:
		reflect.NewAt(w.Type, p).Elem().SetZero()
	default:
		return errItem
	}
	return nil
}

// slice decodes L (or a set) into a new slice, as the codec's listDecoder does into a nil slice.
func (d *decoder) slice(w *codec.Wire, tag avTag, p unsafe.Pointer, depth int) error {
	var set codec.WireSets
	switch tag {
	case tagL:
	case tagSS:
		set = codec.WireSS
	case tagNS:
		set = codec.WireNS
	case tagBS:
		set = codec.WireBS
	default:
		return errItem
	}
	if set != 0 && w.Sets&set == 0 {
		return errItem
	}
	elem := w.Elem
	if elem.Kind == codec.WireNone {
		return errItem
	}
	n, err := d.count()
	if err != nil {
		return err
	}
	// A new slice of n elements, set into the field without allocating a header.
	var data unsafe.Pointer
	if w.Exact {
		s := make([]string, n)
		*(*[]string)(p) = s
		data = unsafe.Pointer(unsafe.SliceData(s))
	} else {
		sv := reflect.NewAt(w.Type, p).Elem()
		sv.Set(reflect.MakeSlice(w.Type, 0, n))
		sv.SetLen(n)
		data = sv.UnsafePointer()
	}
	size := elem.Type.Size()
	i := 0
	return d.list(func() error {
		if i >= n {
			return errItem
		}
		ep := unsafe.Add(data, uintptr(i)*size)
		i++
		switch tag {
		case tagL:
			return d.value(elem, ep, depth+1)
		case tagBS:
			b, err := d.blob(true)
			if err != nil {
				return err
			}
			*(*[]byte)(ep) = b
			return nil
		}
		start, end, escaped, err := d.stringToken()
		if err != nil {
			return err
		}
		s, err := d.text(start, end, escaped)
		if err != nil {
			return err
		}
		if elem.Kind == codec.WireString {
			*(*string)(ep) = s
			return nil
		}
		if tag != tagNS {
			return errItem
		}
		num := *elem
		num.AsString = false
		return setNumber(&num, s, ep)
	})
}

// mapValue decodes M into a new map with string keys, as the codec's mapDecoder does into a nil map:
// each value decoded into a new zero value.
func (d *decoder) mapValue(w *codec.Wire, p unsafe.Pointer, depth int) error {
	elem := w.Elem
	if elem.Kind == codec.WireNone {
		return errItem
	}
	n, err := d.count()
	if err != nil {
		return err
	}
	var (
		exact map[string]string
		mv    reflect.Value
		key   reflect.Value
		ev    reflect.Value
	)
	if w.Exact {
		exact = make(map[string]string, n)
		*(*map[string]string)(p) = exact
	} else {
		mv = reflect.MakeMapWithSize(w.Type, n)
		reflect.NewAt(w.Type, p).Elem().Set(mv)
		key = reflect.New(w.Type.Key()).Elem()
		ev = reflect.New(w.Type.Elem()).Elem()
	}
	if !d.expect('{') {
		return errItem
	}
	if d.ws() == '}' {
		d.i++
		return nil
	}
	for {
		start, end, escaped, err := d.stringToken()
		if err != nil || !d.expect(':') {
			return errItem
		}
		k, err := d.text(start, end, escaped)
		if err != nil {
			return err
		}
		if exact != nil {
			d.str0 = ""
			if err := d.value(elem, unsafe.Pointer(&d.str0), depth+1); err != nil {
				return err
			}
			exact[k] = d.str0
		} else {
			ev.SetZero()
			if err := d.value(elem, ev.Addr().UnsafePointer(), depth+1); err != nil {
				return err
			}
			key.SetString(k)
			mv.SetMapIndex(key, ev)
		}
		switch d.ws() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errItem
		}
	}
}
