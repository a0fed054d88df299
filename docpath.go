package singletable

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// Document paths: "address.city", "tags[2]", "lines[0].sku", naming a part of a
// stored attribute for an Update. A path starts with a stored attribute name, then
// steps into maps and struct fields (".name", the stored name of the field or the
// map key) and lists (`[n]`, n a decimal index without leading zeros). A name is
// any text without '.', '[' or ']'; every name goes into the expression as a
// placeholder. The path is checked against T's Go types before anything is sent:
// each step must exist in the type (a struct field, a string-keyed map, a slice or
// array, an index within an array's length), so a typo fails at the call, not as
// a silent write to an attribute no field reads.

// maxPathSteps bounds a path: DynamoDB nests documents 32 levels deep.
const maxPathSteps = 32

// maxPathIndex bounds a list index: no list in a 400 KB item holds more elements.
const maxPathIndex = MaxItemBytes

// pathStep is one step of a path: a name (a map key or a field's attribute name),
// or an index into a list.
type pathStep struct {
	name  string
	index int // when isIndex
	isIdx bool
}

// docPath is a parsed document path.
type docPath struct {
	text  string
	steps []pathStep // steps[0] names the top-level attribute
}

var errPathSyntax = errors.New("bad document path")

// parseDocPath parses a path such as "address.city" or "tags[2]".
func parseDocPath(s string) (docPath, error) {
	p := docPath{text: s}
	fail := func(at int, why string) (docPath, error) {
		return docPath{}, fmt.Errorf("%w %q at byte %d: %s", errPathSyntax, s, at, why)
	}
	if !utf8.ValidString(s) {
		return fail(0, "not valid UTF-8")
	}
	i := 0
	for i < len(s) {
		if len(p.steps) >= maxPathSteps {
			return fail(i, "more than "+strconv.Itoa(maxPathSteps)+" steps (DynamoDB nests 32 levels deep)")
		}
		switch {
		case s[i] == '[':
			if len(p.steps) == 0 {
				return fail(i, "a path starts with an attribute name")
			}
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return fail(i, "unclosed [")
			}
			digits := s[i+1 : i+end]
			n, err := strconv.Atoi(digits)
			if err != nil || n < 0 || digits == "" || digits[0] < '0' || digits[0] > '9' || (len(digits) > 1 && digits[0] == '0') {
				return fail(i+1, "an index is a decimal number without sign or leading zeros")
			}
			if n > maxPathIndex {
				return fail(i+1, "index "+digits+" is past any list an item can hold")
			}
			p.steps = append(p.steps, pathStep{index: n, isIdx: true})
			i += end + 1
			continue
		case s[i] == '.':
			if len(p.steps) == 0 {
				return fail(i, "a path starts with an attribute name")
			}
			i++
		case len(p.steps) > 0:
			return fail(i, "expected . or [ here")
		}
		j := i
		for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ']' {
			j++
		}
		if j == i {
			return fail(i, "an empty name")
		}
		p.steps = append(p.steps, pathStep{name: s[i:j]})
		i = j
	}
	if len(p.steps) == 0 {
		return fail(0, "an empty path")
	}
	return p, nil
}

// String renders the path as parsed ("address.city", "tags[2]").
func (p docPath) String() string {
	var b strings.Builder
	for i, st := range p.steps {
		switch {
		case st.isIdx:
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
		case i > 0:
			b.WriteString("." + st.name)
		default:
			b.WriteString(st.name)
		}
	}
	return b.String()
}

// expr renders the path for an expression: a placeholder for every name.
func (p docPath) expr(b *expr.Builder) string {
	var out strings.Builder
	for i, st := range p.steps {
		switch {
		case st.isIdx:
			out.WriteString("[" + strconv.Itoa(st.index) + "]")
		case i > 0:
			out.WriteString("." + b.Name(st.name))
		default:
			out.WriteString(b.Name(st.name))
		}
	}
	return out.String()
}

// hasIndex reports whether a step of the path is a list index.
func (p docPath) hasIndex() bool {
	for _, st := range p.steps {
		if st.isIdx {
			return true
		}
	}
	return false
}

// overlaps reports whether one path is a prefix of the other (DynamoDB refuses an
// update that changes both).
func (p docPath) overlaps(q docPath) bool {
	n := min(len(p.steps), len(q.steps))
	for i := range n {
		if p.steps[i] != q.steps[i] {
			return false
		}
	}
	return true
}

// resolvedPath is a path checked against T's types: the type at its end, and how
// to encode a value of that type as the attribute's own field would encode it.
type resolvedPath struct {
	docPath
	top   *codec.Field // the top-level field
	owner *codec.Field // the field (top-level or in a nested struct) whose tag encodes the end
	// chain are the containers between owner and the end, outermost first: each
	// a slice, array or map type (pointers kept in the types).
	chain []reflect.Type
	leaf  reflect.Type // the Go type at the end of the path
}

var (
	marshalerType   = reflect.TypeFor[attributevalue.Marshaler]()
	textMarshalType = reflect.TypeFor[encoding.TextMarshaler]()
)

// resolvePath checks a path against the entity's types.
func (info *entityInfo) resolvePath(p docPath) (*resolvedPath, error) {
	top, ok := info.plan.Field(p.steps[0].name)
	if !ok {
		return nil, fmt.Errorf("%q is not a stored attribute of %s%s: %w", p.steps[0].name, info.name, info.suggestAttr(p.steps[0].name), ErrInvalidInput)
	}
	r := &resolvedPath{docPath: p, top: top, owner: top, leaf: top.Type}
	where := func(i int) string {
		return info.attrName(top) + " at " + strconv.Quote(docPath{steps: p.steps[:i]}.String())
	}
	for i := 1; i < len(p.steps); i++ {
		st := p.steps[i]
		t := derefType(r.leaf)
		switch {
		case t.Kind() == reflect.Interface:
			return nil, fmt.Errorf("%s is an interface (%s): its shape is not known, so no path goes into it; set the whole value: %w", where(i), r.leaf, ErrInvalidInput)
		case t == timeType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
			return nil, fmt.Errorf("%s is a %s, stored as one value: no path goes into it: %w", where(i), r.leaf, ErrInvalidInput)
		case st.isIdx:
			if err := r.stepIndex(t, st, where(i)); err != nil {
				return nil, err
			}
		default:
			if err := r.stepName(t, st, where(i)); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// isSet reports whether the value at the end of the chain is stored as a set.
func (r *resolvedPath) isSet(t reflect.Type) bool {
	if len(r.chain) == 0 && (r.owner.StringSet || r.owner.NumberSet || r.owner.BinarySet) {
		return true
	}
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Slice && t.Elem().Elem().Kind() == reflect.Uint8
}

// stepIndex steps into a list.
func (r *resolvedPath) stepIndex(t reflect.Type, st pathStep, where string) error {
	switch {
	case t.Kind() != reflect.Slice && t.Kind() != reflect.Array:
		return fmt.Errorf("%s is a %s, not a list: [%d] does not apply: %w", where, r.leaf, st.index, ErrInvalidInput)
	case t.Elem().Kind() == reflect.Uint8:
		return fmt.Errorf("%s is binary (%s), not a list: [%d] does not apply: %w", where, r.leaf, st.index, ErrInvalidInput)
	case r.isSet(t):
		return fmt.Errorf("%s is a set, whose elements have no index: %w", where, ErrInvalidInput)
	case t.Kind() == reflect.Array && st.index >= t.Len():
		return fmt.Errorf("%s is a %s: index %d is out of it: %w", where, r.leaf, st.index, ErrInvalidInput)
	}
	r.chain = append(r.chain, r.leaf)
	r.leaf = t.Elem()
	return nil
}

// stepName steps into a struct field or a map entry.
func (r *resolvedPath) stepName(t reflect.Type, st pathStep, where string) error {
	switch t.Kind() {
	case reflect.Struct:
		plan, err := codec.PlanFor(t)
		if err != nil {
			return fmt.Errorf("%s: %s cannot be reached into: %w: %w", where, r.leaf, ErrInvalidInput, err)
		}
		f, ok := plan.Field(st.name)
		if !ok {
			names := make([]string, 0, len(plan.Fields()))
			for _, pf := range plan.Fields() {
				names = append(names, pf.Name)
			}
			return fmt.Errorf("%s is a %s, which stores no attribute %q%s: %w", where, r.leaf, st.name, didYouMean(st.name, names), ErrInvalidInput)
		}
		r.owner, r.chain, r.leaf = f, nil, f.Type
		return nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalType) {
			return fmt.Errorf("%s is a %s: a path names map entries by string keys only: %w", where, r.leaf, ErrInvalidInput)
		}
		r.chain = append(r.chain, r.leaf)
		r.leaf = t.Elem()
		return nil
	}
	return fmt.Errorf("%s is a %s, not a map or a struct: .%s does not apply: %w", where, r.leaf, st.name, ErrInvalidInput)
}

// encode encodes v, a value of the leaf type, as the path's owner field encodes
// it in place: keep is false when the field's options leave it out (omitempty, or
// omitemptyelem inside a container).
func (r *resolvedPath) encode(v reflect.Value) (av types.AttributeValue, keep bool, err error) {
	// Wrap v in its containers, innermost first, up to the owner's type.
	cur := v
	for i := len(r.chain) - 1; i >= 0; i-- {
		ct := r.chain[i]
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
	holder := reflect.New(r.owner.Type).Elem() // addressable, for pointer-receiver marshalers
	holder.Set(cur)
	av, keep, err = r.owner.Encode(holder)
	if err != nil || !keep {
		return nil, false, err
	}
	// Unwrap the encoded containers again.
	for range r.chain {
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
	if len(r.steps) > 1 {
		if err := codec.CheckDepthAt(av, len(r.steps), r.text); err != nil {
			return nil, false, err
		}
	}
	return av, true, nil
}

// lookup returns the value at the path in item, nil when the item holds none.
func (p docPath) lookup(item map[string]types.AttributeValue) types.AttributeValue {
	av := item[p.steps[0].name]
	for _, st := range p.steps[1:] {
		switch x := av.(type) {
		case *types.AttributeValueMemberM:
			if st.isIdx {
				return nil
			}
			av = x.Value[st.name]
		case *types.AttributeValueMemberL:
			if !st.isIdx || st.index >= len(x.Value) {
				return nil
			}
			av = x.Value[st.index]
		default:
			return nil
		}
	}
	return av
}
