package wire

import (
	"encoding/base64"
	"errors"
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/singletable/singletable/internal/codec"
)

// errItem means one item cannot be decoded here exactly as the attribute-value path would decode it (a
// type the plan does not know, a type mismatch, a number that does not parse or fit, an attribute value
// of a shape the SDK reads in its own way): that item is handed to the SDK, and decoded from attribute
// values by the caller.
var errItem = errors.New("wire: item left to the attribute-value path")

// avTag is the member of an attribute value union.
type avTag uint8

const (
	tagNone avTag = iota
	tagS
	tagN
	tagB
	tagBOOL
	tagNULL
	tagM
	tagL
	tagSS
	tagNS
	tagBS
)

// tagOf returns the union member named by the bytes name.
func tagOf(name []byte) avTag {
	switch len(name) {
	case 1:
		switch name[0] {
		case 'S':
			return tagS
		case 'N':
			return tagN
		case 'B':
			return tagB
		case 'M':
			return tagM
		case 'L':
			return tagL
		}
	case 2:
		switch string(name) {
		case "SS":
			return tagSS
		case "NS":
			return tagNS
		case "BS":
			return tagBS
		}
	case 4:
		switch string(name) {
		case "BOOL":
			return tagBOOL
		case "NULL":
			return tagNULL
		}
	}
	return tagNone
}

// decoder decodes the items of one body. Strings without escapes are cut from one string per item,
// a copy of the item's text made on first use, so an item's strings cost one allocation together;
// strings with escapes are allocated each. As an item's end is known only once it is decoded, the copy
// runs as far as the previous item's length from its start (the items of a page are alike), and is
// made again, longer, in the rare case that a string lies beyond it.
type decoder struct {
	scanner
	itemStart int    // the current item's start in b
	item      string // b[itemStart:itemStart+len(item)]: a copy of the item's text (and perhaps more)
	sizeHint  int    // the previous item's length
	scratch   []byte // unescaping, base64
	// str0 receives a map[string]string value: a field of the decoder, so that
	// decoding into it allocates nothing.
	str0 string
}

// begin starts an item at b[start].
func (d *decoder) begin(start int) {
	d.itemStart, d.item = start, ""
	d.i = start
}

// end records the length of the item just decoded, to size the next item's copy.
func (d *decoder) end() { d.sizeHint = d.i - d.itemStart }

// text returns the string at b[start:end] (contents between quotes).
func (d *decoder) text(start, end int, escaped bool) (string, error) {
	if escaped {
		var ok bool
		d.scratch, ok = unquote(d.scratch[:0], d.b[start:end])
		if !ok {
			return "", errItem
		}
		return string(d.scratch), nil
	}
	if start < d.itemStart {
		return "", errItem
	}
	if end-d.itemStart > len(d.item) {
		// The first item of a body: up to 4 KB (all of a GetItem's item, usually).
		first := 0
		if d.sizeHint == 0 {
			first = min(len(d.b)-d.itemStart, 4096)
		}
		n := max(end-d.itemStart, d.sizeHint, 2*len(d.item), first)
		d.item = string(d.b[d.itemStart:min(len(d.b), d.itemStart+n)])
	}
	return d.item[start-d.itemStart : end-d.itemStart], nil
}

// bytes returns the contents of a string as bytes, unescaped into scratch when it holds escapes; valid
// until the next use of scratch.
func (d *decoder) bytes(start, end int, escaped bool) ([]byte, error) {
	if !escaped {
		return d.b[start:end], nil
	}
	var ok bool
	d.scratch, ok = unquote(d.scratch[:0], d.b[start:end])
	if !ok {
		return nil, errItem
	}
	return d.scratch, nil
}

// stringToken reads a JSON string after whitespace.
func (d *decoder) stringToken() (start, end int, escaped bool, err error) {
	if d.ws() != '"' {
		return 0, 0, false, errItem
	}
	return d.str()
}

// avOpen reads the opening of an attribute value, {"TAG": , and returns TAG; the value follows. A union
// that the SDK reads in its own way (null, no member, an unknown or escaped member, a null member) is
// left to it.
func (d *decoder) avOpen() (avTag, error) {
	// The common spellings first, as DynamoDB writes them: {"S": and the like, no spaces.
	if b := d.b[min(d.i, len(d.b)):]; len(b) >= 6 && b[0] == '{' && b[1] == '"' {
		var tag avTag
		n := 0
		switch {
		case b[3] == '"' && b[4] == ':':
			switch b[2] {
			case 'S':
				tag = tagS
			case 'N':
				tag = tagN
			case 'M':
				tag = tagM
			case 'L':
				tag = tagL
			case 'B':
				tag = tagB
			}
			n = 5
		case len(b) >= 9 && b[6] == '"' && b[7] == ':' && string(b[2:6]) == "NULL":
			tag, n = tagNULL, 8
		case len(b) >= 9 && b[6] == '"' && b[7] == ':' && string(b[2:6]) == "BOOL":
			tag, n = tagBOOL, 8
		}
		if tag != tagNone && n < len(b) && b[n] != 'n' && !isSpace(b[n]) {
			d.i += n
			return tag, nil
		}
	}
	if !d.expect('{') {
		return tagNone, errItem
	}
	start, end, escaped, err := d.stringToken()
	if err != nil || escaped {
		return tagNone, errItem
	}
	tag := tagOf(d.b[start:end])
	if tag == tagNone || !d.expect(':') {
		return tagNone, errItem
	}
	if d.ws() == 'n' {
		return tagNone, errItem // a null member: the SDK skips it
	}
	return tag, nil
}

// avClose reads the closing brace of an attribute value: a second member is left to the SDK.
func (d *decoder) avClose() error {
	if !d.expect('}') {
		return errItem
	}
	return nil
}

// boolToken reads true or false.
func (d *decoder) boolToken() (bool, error) {
	switch d.ws() {
	case 't':
		if d.literal("true") {
			return true, nil
		}
	case 'f':
		if d.literal("false") {
			return false, nil
		}
	}
	return false, errItem
}

// null reads the NULL member's value: only true is plain (the SDK keeps NULL false as a NULL too, and
// the codec treats it as NULL, but that is rare enough to leave to them).
func (d *decoder) null() error {
	b, err := d.boolToken()
	if err != nil || !b {
		return errItem
	}
	return nil
}

// blob reads a B value: base64 in a JSON string, decoded as the SDK does
// (base64.StdEncoding.DecodeString of the unquoted text).
func (d *decoder) blob(keep bool) ([]byte, error) {
	start, end, escaped, err := d.stringToken()
	if err != nil {
		return nil, err
	}
	src, err := d.bytes(start, end, escaped)
	if err != nil {
		return nil, err
	}
	var dst []byte
	if keep {
		dst = make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	} else {
		// Validation only: decode into the scratch space after src.
		n := base64.StdEncoding.DecodedLen(len(src))
		if escaped {
			d.scratch = append(d.scratch[:len(src)], make([]byte, n)...)
			src = d.scratch[:len(src)]
			dst = d.scratch[len(src):]
		} else {
			d.scratch = append(d.scratch[:0], make([]byte, n)...)
			dst = d.scratch
		}
	}
	n, err := base64.StdEncoding.Decode(dst, src)
	if err != nil {
		return nil, errItem // the SDK fails the whole response: let it
	}
	return dst[:n], nil
}

// skipAV reads an attribute value that nothing decodes, checking that the SDK would read it without an
// error and as a plain value (else the item is left to it).
func (d *decoder) skipAV(depth int) error {
	if depth > maxDepth {
		return errItem
	}
	tag, err := d.avOpen()
	if err != nil {
		return err
	}
	switch tag {
	case tagS, tagN:
		_, _, _, err = d.stringToken()
	case tagB:
		_, err = d.blob(false)
	case tagBOOL:
		_, err = d.boolToken()
	case tagNULL:
		err = d.null()
	case tagM:
		err = d.object(nil, nil, nil, depth+1)
	case tagL:
		err = d.list(func() error { return d.skipAV(depth + 1) })
	case tagSS, tagNS:
		err = d.list(func() error { _, _, _, err := d.stringToken(); return err })
	case tagBS:
		err = d.list(func() error { _, err := d.blob(false); return err })
	}
	if err != nil {
		return err
	}
	return d.avClose()
}

// list reads a JSON array, calling elem at each element.
func (d *decoder) list(elem func() error) error {
	if !d.expect('[') {
		return errItem
	}
	if d.ws() == ']' {
		d.i++
		return nil
	}
	for {
		if d.ws() == 'n' {
			return errItem // a null element: the SDK keeps a zero value
		}
		if err := elem(); err != nil {
			return err
		}
		switch d.ws() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errItem
		}
	}
}

// count returns the number of elements of the array or members of the object that opens at d.i,
// leaving d.i where it was.
func (d *decoder) count() (int, error) {
	at := d.i
	defer func() { d.i = at }()
	open := d.ws()
	if open != '[' && open != '{' {
		return 0, errItem
	}
	d.i++
	c := d.ws()
	if c == ']' || c == '}' {
		return 0, nil
	}
	n := 0
	for {
		if open == '{' {
			if _, _, _, err := d.stringToken(); err != nil || !d.expect(':') {
				return 0, errItem
			}
		}
		if err := d.skip(0); err != nil {
			return 0, errItem
		}
		n++
		switch d.ws() {
		case ',':
			d.i++
		case ']', '}':
			return n, nil
		default:
			return 0, errItem
		}
	}
}

// special are the attributes of a top-level item that the caller reads besides the fields.
type special struct {
	t         *Target
	keepNames []string // Sink.Keep
	keep      []string // their values, as read
	kept      int      // how many were read
	typ       bool     // the type attribute was read and matches
	schem     bool     // the schema attribute was read and is current
}

// object reads the attributes of an M (or a whole item, with sp set) into the struct at base through
// plan, as Plan.Decode does (Plan.DecodeIgnoring, for an item): each attribute to the field of that
// name, else to the field equal to it ignoring case, else skipped. A field given twice (two attributes
// of one name, or one that matches a field only ignoring case as well as the field's own) is left to
// the attribute-value path, whose result then depends on Go's map order. With plan nil, it only checks.
func (d *decoder) object(plan *codec.Plan, base unsafe.Pointer, sp *special, depth int) error {
	if depth > maxDepth || !d.expect('{') {
		return errItem
	}
	if d.ws() == '}' {
		d.i++
		return nil
	}
	var seen uint64
	var seenMore []bool
	if plan != nil && len(plan.Fields()) > 64 {
		seenMore = make([]bool, len(plan.Fields()))
	}
	for {
		start, end, escaped, err := d.stringToken()
		if err != nil || escaped || !d.expect(':') {
			return errItem // an escaped name is rare: the SDK's path reads it
		}
		if sp != nil {
			if done, err := d.specialAttr(sp, d.b[start:end], depth); err != nil {
				return err
			} else if done {
				goto next
			}
		}
		if plan == nil {
			if err := d.skipAV(depth + 1); err != nil {
				return err
			}
			goto next
		}
		{
			name, err := d.text(start, end, false)
			if err != nil {
				return err
			}
			f, ok := plan.Field(name)
			if !ok && (sp == nil || sp.t.Ignored == nil || !sp.t.Ignored.Has(name)) {
				f, ok = plan.LookupFold(name)
			}
			if !ok {
				if err := d.skipAV(depth + 1); err != nil {
					return err
				}
				goto next
			}
			pos := f.Pos()
			if seenMore != nil {
				if seenMore[pos] {
					return errItem
				}
				seenMore[pos] = true
			} else {
				if seen&(1<<pos) != 0 {
					return errItem
				}
				seen |= 1 << pos
			}
			p, err := fieldPtr(plan, f, base)
			if err != nil {
				return err
			}
			if err := d.value(f.Wire(), p, depth+1); err != nil {
				return err
			}
		}
	next:
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

// specialAttr reads the attribute named name if it is one of the target's own (type, schema, kept
// keys). done reports that it was.
func (d *decoder) specialAttr(sp *special, name []byte, depth int) (done bool, err error) {
	t := sp.t
	switch {
	case string(name) == t.TypeAttr:
		if sp.typ {
			return true, errItem // twice
		}
		s, err := d.stringAV(tagS)
		if err != nil || s != t.Type {
			return true, errItem // another type, or a type attribute that is not a string
		}
		sp.typ = true
		return true, nil
	case t.SchemaAttr != "" && string(name) == t.SchemaAttr:
		if sp.schem {
			return true, errItem
		}
		n, err := d.stringAV(tagN)
		if err != nil {
			return true, err
		}
		v, err := strconv.Atoi(n) // as Table.schemaOf reads it
		if err != nil || v != t.Schema {
			return true, errItem // to be migrated, or refused, by the attribute-value path
		}
		sp.schem = true
		return true, nil
	}
	for i, k := range sp.keepNames {
		if string(name) != k {
			continue
		}
		if sp.keep[i] != "" {
			return true, errItem // twice
		}
		s, err := d.stringAV(tagS)
		if err != nil || s == "" {
			return true, errItem
		}
		sp.keep[i] = s
		sp.kept++
		return true, nil
	}
	return false, nil
}

// stringAV reads an attribute value that must be {"S": ...} or {"N": ...} as tag says.
func (d *decoder) stringAV(tag avTag) (string, error) {
	got, err := d.avOpen()
	if err != nil || got != tag {
		return "", errItem
	}
	start, end, escaped, err := d.stringToken()
	if err != nil {
		return "", err
	}
	s, err := d.text(start, end, escaped)
	if err != nil {
		return "", err
	}
	return s, d.avClose()
}

// fieldPtr returns the address of field f in the struct at base, allocating embedded pointers on the
// way as the codec does.
func fieldPtr(plan *codec.Plan, f *codec.Field, base unsafe.Pointer) (unsafe.Pointer, error) {
	if off, ok := f.Offset(); ok {
		return unsafe.Add(base, off), nil
	}
	sv := reflect.NewAt(plan.Type(), base).Elem()
	fv, err := f.Settable(sv)
	if err != nil {
		return nil, errItem
	}
	return fv.Addr().UnsafePointer(), nil
}

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
