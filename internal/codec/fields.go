package codec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// structField is one candidate field found while walking a struct type and its embedded structs.
type structField struct {
	name        string // attribute name
	nameFromTag bool
	index       []int
	typ         reflect.Type // sf.Type, with an unnamed pointer type dereferenced (attributevalue's field.Type)
	sf          reflect.StructField
	declType    reflect.Type // the struct type that declares sf
	tag         parsedTag
}

// typeFields returns the encoded fields of struct type t in index order, after Go's embedding promotion
// rules as attributevalue applies them (encoding/json's typeFields: breadth-first over embedded structs,
// the shallowest field of a name wins, a tagged name beats an untagged one at the same depth, and an
// ambiguous name is dropped).
//
// Deliberate differences from attributevalue: a tag error is reported; two fields at the same depth given
// the same attribute name by a tag (or a tagged name that hides a field at its own depth) is an error rather
// than a silent drop; options on an embedded struct that is promoted (not named) are an error since they
// have no effect; an unexported embedded field that is not promoted (a non-struct, or a struct with a name
// tag) is an error, since attributevalue encodes it but cannot set it when decoding.
func typeFields(t reflect.Type) ([]structField, error) {
	var current []structField
	next := []structField{{typ: t}}

	// count of queued names for the current level and the next.
	var count map[reflect.Type]int
	nextCount := map[reflect.Type]int{}

	visited := map[reflect.Type]bool{}
	var fields []structField

	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}

		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true

			for i := 0; i < f.typ.NumField(); i++ {
				field, use, promote, err := candidate(f, i)
				if err != nil {
					return nil, err
				}
				if !use {
					continue
				}
				if !promote {
					fields = append(fields, field)
					if count[f.typ] > 1 {
						// Multiple instances of this embedded type at this depth: add a second copy so
						// that dominantField sees a conflict and drops the name (Go's ambiguity rule).
						fields = append(fields, field)
					}
					continue
				}

				// Record the embedded struct to explore on the next level.
				nextCount[field.typ]++
				if nextCount[field.typ] == 1 {
					next = append(next, field)
				}
			}
		}
	}

	return resolve(fields)
}

// candidate returns the i-th field of the struct f.typ (f is the struct's own field, or the root) as a
// candidate for typeFields; use is false when attributevalue skips it, and promote reports that it is an
// embedded struct whose fields are promoted rather than a field of its own.
func candidate(f structField, i int) (field structField, use, promote bool, err error) {
	sf := f.typ.Field(i)
	if !sf.IsExported() && !sf.Anonymous {
		return structField{}, false, false, nil // unexported, including blank (_) fields
	}
	tag, err := parseTag(sf.Tag)
	if err != nil {
		return structField{}, false, false, &FieldError{Type: typeName(f.typ), Field: sf.Name, Err: err}
	}
	if tag.ignore {
		return structField{}, false, false, nil
	}

	ft := sf.Type
	if ft.Name() == "" && ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	promote = sf.Anonymous && tag.name == "" && ft.Kind() == reflect.Struct
	if !sf.IsExported() && !promote {
		// attributevalue encodes an unexported embedded field that is not a promoted struct
		// (under its type's name, or its tag's) but panics or silently does nothing when
		// decoding it. Say so rather than drop it.
		return structField{}, false, false, &FieldError{Type: typeName(f.typ), Field: sf.Name,
			Err: fmt.Errorf("%w: embedded field of unexported type is encoded by attributevalue but cannot be decoded; export the type, or embed a struct without a name tag", ErrUnsupportedType)}
	}
	if promote && tag.opts != (options{}) {
		return structField{}, false, false, &FieldError{Type: typeName(f.typ), Field: sf.Name,
			Err: fmt.Errorf("%w: %s:%q: options have no effect on an embedded struct whose fields are promoted; give it a name to encode it as a map", ErrInvalidTag, tagKey, sf.Tag.Get(tagKey))}
	}

	field = structField{
		name:     sf.Name,
		index:    append(slices.Clip(f.index), i),
		typ:      ft,
		sf:       sf,
		declType: f.typ,
		tag:      tag,
	}
	if tag.name != "" {
		field.name = tag.name
		field.nameFromTag = true
	}
	return field, true, promote, nil
}

// resolve keeps, of the candidate fields sharing an attribute name, the one Go's embedding rules (as
// modified by tags) make win, and drops the name when it is ambiguous; it returns them in index order.
func resolve(fields []structField) ([]structField, error) {
	slices.SortFunc(fields, func(a, b structField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		if a.nameFromTag != b.nameFromTag {
			if a.nameFromTag {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})

	out := fields[:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		fi := fields[i]
		for advance = 1; i+advance < len(fields); advance++ {
			if fields[i+advance].name != fi.name {
				break
			}
		}
		if advance == 1 {
			out = append(out, fi)
			continue
		}
		dominant, ok, err := dominantField(fields[i : i+advance])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, dominant)
		}
	}
	slices.SortFunc(out, func(a, b structField) int { return slices.Compare(a.index, b.index) })
	return out, nil
}

// dominantField picks, from fields sharing one attribute name (sorted by depth, tagged first), the one that
// wins under Go's embedding rules as modified by tags; ok is false when the name is ambiguous.
func dominantField(fields []structField) (structField, bool, error) {
	depth := len(fields[0].index)
	for i, f := range fields {
		if len(f.index) > depth {
			fields = fields[:i]
			break
		}
	}
	if len(fields) > 1 {
		// Distinct fields at the same depth share the name. If a tag gave the name, that is a mistake in
		// the struct definition, not Go's (silent) ambiguity between two embedded structs.
		a := fields[0] // a tagged field sorts first
		for _, b := range fields[1:] {
			if !slices.Equal(a.index, b.index) && (a.nameFromTag || b.nameFromTag) {
				return structField{}, false, &FieldError{Type: typeName(a.declType), Field: a.sf.Name,
					Err: fmt.Errorf("%w: attribute name %q is also used by %s.%s", ErrInvalidTag, a.name, typeName(b.declType), b.sf.Name)}
			}
		}
		return structField{}, false, nil
	}
	return fields[0], true, nil
}

// typeName is the Go name of t for messages: its declared name when it has one, else its literal.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}
