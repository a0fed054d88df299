package wire

import (
	"encoding/base64"
)

// The attribute-value union as DynamoDB writes it in JSON, {"TAG": value}: its opening and closing,
// its scalar members, and the reading of values that nothing decodes (skipped, or only counted).

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
	return d.avOpenSlow()
}

// avOpenSlow is avOpen for any other spelling: spaces, a member name of two letters, an escaped name, a
// null member.
func (d *decoder) avOpenSlow() (avTag, error) {
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
