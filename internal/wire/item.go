package wire

import (
	"errors"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/singletable/singletable/internal/codec"
)

// The decoder of one body's items: the strings it cuts from an item's text, and an item's (or an M's)
// attributes, each to its field.

// errItem means one item cannot be decoded here exactly as the attribute-value path would decode it (a
// type the plan does not know, a type mismatch, a number that does not parse or fit, an attribute value
// of a shape the SDK reads in its own way): that item is handed to the SDK, and decoded from attribute
// values by the caller.
var errItem = errors.New("wire: item left to the attribute-value path")

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

// special are the attributes of a top-level item that the caller reads besides the fields.
type special struct {
	t         *Target
	keepNames []string // Sink.Keep
	keep      []string // their values, as read
	kept      int      // how many were read
	typ       bool     // the type attribute was read and matches
	schem     bool     // the schema attribute was read and is current
	peekName  string   // Sink.Peek
	peeked    peeked   // its value, when it is a number
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
	// A bit per field, for the fields given: on the stack for up to 64 fields.
	var seen0 [1]uint64
	seen := seen0[:]
	if plan != nil && len(plan.Fields()) > 64 {
		seen = make([]uint64, (len(plan.Fields())+63)/64)
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
			if !ok && !sp.ignores(name) {
				f, ok = plan.LookupFold(name)
			}
			if !ok {
				if err := d.skipAV(depth + 1); err != nil {
					return err
				}
				goto next
			}
			pos := uint(f.Pos())
			if seen[pos/64]&(1<<(pos%64)) != 0 {
				return errItem
			}
			seen[pos/64] |= 1 << (pos % 64)
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

// ignores reports whether name is an attribute of the target's that no field takes, not even one equal
// to it ignoring case; false for an M (sp nil).
func (sp *special) ignores(name string) bool {
	return sp != nil && sp.t.Ignored != nil && sp.t.Ignored.Has(name)
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
	if sp.peekName != "" && string(name) == sp.peekName {
		// A field too: note its text if it is a number, then decode it as the field.
		at := d.i
		if n, err := d.stringAV(tagN); err == nil {
			sp.peeked = peeked{n: n, ok: true}
		}
		d.i = at
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
