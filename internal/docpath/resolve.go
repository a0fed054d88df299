package docpath

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/suggest"
)

// Resolved is a path checked against an entity's types: the type at its end, and
// how to encode a value of that type as the attribute's own field would encode it.
type Resolved struct {
	Path
	Top   *codec.Field // the top-level field
	Owner *codec.Field // the field (top-level or in a nested struct) whose tag encodes the end
	// Chain are the containers between Owner and the end, outermost first: each
	// a slice, array or map type (pointers kept in the types).
	Chain []reflect.Type
	Leaf  reflect.Type // the Go type at the end of the path
}

var (
	marshalerType   = reflect.TypeFor[attributevalue.Marshaler]()
	textMarshalType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// derefType is t with one pointer taken off.
func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// Resolve checks p past its first step against the types of top, the field its
// first step names; attr names that field in messages ("attr (Type.Field)"), and
// every error wraps invalid (the root package's ErrInvalidInput).
func Resolve(p Path, top *codec.Field, attr string, invalid error) (*Resolved, error) {
	r := &Resolved{Path: p, Top: top, Owner: top, Leaf: top.Type}
	where := func(i int) string {
		return attr + " at " + strconv.Quote(Path{Steps: p.Steps[:i]}.String())
	}
	for i := 1; i < len(p.Steps); i++ {
		st := p.Steps[i]
		t := derefType(r.Leaf)
		switch {
		case t.Kind() == reflect.Interface:
			return nil, fmt.Errorf("%s is an interface (%s): its shape is not known, so no path goes into it; set the whole value: %w", where(i), r.Leaf, invalid)
		case t == timeType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
			return nil, fmt.Errorf("%s is a %s, stored as one value: no path goes into it: %w", where(i), r.Leaf, invalid)
		case st.IsIndex:
			if err := r.stepIndex(t, st, where(i), invalid); err != nil {
				return nil, err
			}
		default:
			if err := r.stepName(t, st, where(i), invalid); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// IsSet reports whether the value of type t at the end of the chain is stored as
// a set.
func (r *Resolved) IsSet(t reflect.Type) bool {
	if len(r.Chain) == 0 && (r.Owner.StringSet || r.Owner.NumberSet || r.Owner.BinarySet) {
		return true
	}
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Slice && t.Elem().Elem().Kind() == reflect.Uint8
}

// stepIndex steps into a list.
func (r *Resolved) stepIndex(t reflect.Type, st Step, where string, invalid error) error {
	switch {
	case t.Kind() != reflect.Slice && t.Kind() != reflect.Array:
		return fmt.Errorf("%s is a %s, not a list: [%d] does not apply: %w", where, r.Leaf, st.Index, invalid)
	case t.Elem().Kind() == reflect.Uint8:
		return fmt.Errorf("%s is binary (%s), not a list: [%d] does not apply: %w", where, r.Leaf, st.Index, invalid)
	case r.IsSet(t):
		return fmt.Errorf("%s is a set, whose elements have no index: %w", where, invalid)
	case t.Kind() == reflect.Array && st.Index >= t.Len():
		return fmt.Errorf("%s is a %s: index %d is out of it: %w", where, r.Leaf, st.Index, invalid)
	}
	r.Chain = append(r.Chain, r.Leaf)
	r.Leaf = t.Elem()
	return nil
}

// stepName steps into a struct field or a map entry.
func (r *Resolved) stepName(t reflect.Type, st Step, where string, invalid error) error {
	switch t.Kind() {
	case reflect.Struct:
		plan, err := codec.PlanFor(t)
		if err != nil {
			return fmt.Errorf("%s: %s cannot be reached into: %w: %w", where, r.Leaf, invalid, err)
		}
		f, ok := plan.Field(st.Name)
		if !ok {
			names := make([]string, 0, len(plan.Fields()))
			for _, pf := range plan.Fields() {
				names = append(names, pf.Name)
			}
			return fmt.Errorf("%s is a %s, which stores no attribute %q%s: %w", where, r.Leaf, st.Name, suggest.DidYouMean(st.Name, names), invalid)
		}
		r.Owner, r.Chain, r.Leaf = f, nil, f.Type
		return nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalType) {
			return fmt.Errorf("%s is a %s: a path names map entries by string keys only: %w", where, r.Leaf, invalid)
		}
		r.Chain = append(r.Chain, r.Leaf)
		r.Leaf = t.Elem()
		return nil
	}
	return fmt.Errorf("%s is a %s, not a map or a struct: .%s does not apply: %w", where, r.Leaf, st.Name, invalid)
}

// Encode encodes v, a value of the leaf type, as the path's owner field encodes
// it in place: keep is false when the field's options leave it out (omitempty, or
// omitemptyelem inside a container).
func (r *Resolved) Encode(v reflect.Value) (av types.AttributeValue, keep bool, err error) {
	// Wrap v in its containers, innermost first, up to the owner's type.
	cur := v
	for i := len(r.Chain) - 1; i >= 0; i-- {
		ct := r.Chain[i]
		base := derefType(ct)
		var c reflect.Value
		switch base.Kind() {
		case reflect.Slice:
			c = reflect.MakeSlice(base, 1, 1)
			c.Index(0).Set(cur)
		case reflect.Array:
			c = reflect.New(base).Elem()
			c.Index(0).Set(cur)
		case reflect.Map:
			c = reflect.MakeMapWithSize(base, 1)
			c.SetMapIndex(reflect.ValueOf("k").Convert(base.Key()), cur)
		}
		if ct.Kind() == reflect.Pointer {
			pc := reflect.New(base)
			pc.Elem().Set(c)
			c = pc
		}
		cur = c
	}
	holder := reflect.New(r.Owner.Type).Elem() // addressable, for pointer-receiver marshalers
	holder.Set(cur)
	av, keep, err = r.Owner.Encode(holder)
	if err != nil || !keep {
		return nil, false, err
	}
	// Unwrap the encoded containers again.
	for range r.Chain {
		switch x := av.(type) {
		case *types.AttributeValueMemberL:
			if len(x.Value) == 0 {
				return nil, false, nil // the element was left out (omitemptyelem)
			}
			av = x.Value[0]
		case *types.AttributeValueMemberM:
			inner, ok := x.Value["k"]
			if !ok {
				return nil, false, nil
			}
			av = inner
		default:
			return nil, false, fmt.Errorf("the container encodes as %T, not a list or map", av)
		}
	}
	// The owner checked the depth from its own level; the path's end is deeper
	// (each step one level), and DynamoDB counts from the item.
	if len(r.Steps) > 1 {
		if err := codec.CheckDepthAt(av, len(r.Steps), r.Text); err != nil {
			return nil, false, err
		}
	}
	return av, true, nil
}
