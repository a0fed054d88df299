package codec

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxDepth is how deeply DynamoDB lets documents nest: the item is level 1 and each
// map or list inside it one more, so an attribute holds at most 31 maps and lists
// one inside the other (sets and scalars add no level). DynamoDB refuses more with
// "Nesting Levels have exceeded supported limits"; Encode refuses it first, before
// its own recursion could run away on a value that contains itself.
const MaxDepth = 32

// ErrTooDeep is matched by the [*DepthError] of a value nested deeper than
// [MaxDepth] or containing itself.
var ErrTooDeep = errors.New("nested deeper than DynamoDB allows")

// DepthError reports a value that cannot be encoded because it nests deeper than
// [MaxDepth] levels, or because it contains itself (a pointer cycle), which no
// depth could hold. It matches [ErrTooDeep].
type DepthError struct {
	// Path is the Go path from the encoded type to the value that went too deep,
	// e.g. "Node.Next.Next" or `Doc.Sections[0].Children["a"]`, with the middle
	// of a long path left out ("…").
	Path string
	// Again, for a cycle, is the path of the value that the one at Path is (the
	// same pointer, map or slice, met again inside itself); "" when the value is
	// merely too deep.
	Again string

	// While the error travels up, steps gathers the path (deepest step first) and
	// repeats the number of steps below each value that is origin again.
	origin  ident
	steps   []string
	repeats []int
}

// Error names the path and says whether it is a cycle.
func (e *DepthError) Error() string {
	if e.Again != "" {
		return "codec: " + e.Path + " is " + e.Again + " again: a value that contains itself cannot be stored"
	}
	return "codec: " + e.Path + " is nested deeper than DynamoDB's " + strconv.Itoa(MaxDepth) + " levels"
}

// Is reports whether target is [ErrTooDeep].
func (e *DepthError) Is(target error) bool { return target == ErrTooDeep }

// ident identifies a map, slice or addressable struct, for telling a cycle from a
// value that is merely deep: the address and the type (a struct's first field has
// its address, but not its type).
type ident struct {
	p uintptr
	t reflect.Type
}

func identOf(v reflect.Value) ident {
	switch v.Kind() {
	case reflect.Map:
		return ident{v.Pointer(), v.Type()}
	case reflect.Slice:
		if v.Len() > 0 {
			return ident{v.Pointer(), v.Type()}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return ident{v.Pointer(), v.Type().Elem()}
		}
	case reflect.Struct, reflect.Array:
		if v.CanAddr() {
			return ident{v.Addr().Pointer(), v.Type()}
		}
	}
	return ident{}
}

// tooDeep is the error of v, a map or list that would be one level too many.
func tooDeep(v reflect.Value) *DepthError { return &DepthError{origin: identOf(v)} }

// at records, as e travels up through the map or list v, whether v is the value
// that went too deep: then the value is a cycle.
func (e *DepthError) at(v reflect.Value) {
	if e.origin.p != 0 && identOf(v) == e.origin {
		e.repeats = append(e.repeats, len(e.steps))
	}
}

// step adds a step of the path, from the deepest up.
func (e *DepthError) step(s string) { e.steps = append(e.steps, s) }

// asDepth returns err as a *DepthError, if it is one (not wrapped: encoders pass
// it up as it is and add their steps).
func asDepth(err error) (*DepthError, bool) {
	de, ok := err.(*DepthError)
	return de, ok
}

// finish sets Path and Again, the steps below root (a Go type name).
func (e *DepthError) finish(root string) *DepthError {
	if e.Path != "" {
		return e
	}
	n := len(e.steps)
	steps := make([]string, n)
	for i, s := range e.steps {
		steps[n-1-i] = s
	}
	// Where origin occurs, in steps from the root: at the end, and wherever the
	// error passed it again on the way up.
	at := []int{n}
	for _, r := range e.repeats {
		at = append(at, n-r)
	}
	first, second := n, -1
	for _, a := range at {
		if a < first {
			first, second = a, first
		} else if a > first && (second < 0 || a < second) {
			second = a
		}
	}
	if len(e.repeats) > 0 && second > first {
		e.Path, e.Again = pathOf(root, steps[:second]), pathOf(root, steps[:first])
	} else {
		e.Path = pathOf(root, steps)
	}
	e.steps, e.repeats = nil, nil
	return e
}

// pathOf joins root and steps, leaving out the middle of a long path.
func pathOf(root string, steps []string) string {
	const head, tail = 4, 3
	if len(steps) > head+tail+1 {
		steps = append(append(append([]string(nil), steps[:head]...), ".…"), steps[len(steps)-tail:]...)
	}
	return root + strings.Join(steps, "")
}

func fieldStep(name string) string { return "." + name }
func indexStep(i int) string       { return "[" + strconv.Itoa(i) + "]" }
func keyStep(k string) string      { return "[" + strconv.Quote(k) + "]" }

// checkDepth refuses av, produced by a Marshaler or by attributevalue at level
// depth, when it nests maps or lists beyond MaxDepth. It stops at the first level
// too many, so a Marshaler's cyclic result cannot make it run away.
func checkDepth(av types.AttributeValue, depth int) error {
	var de *DepthError
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		if depth >= MaxDepth {
			return &DepthError{}
		}
		for k, x := range v.Value {
			if err := checkDepth(x, depth+1); err != nil {
				de, _ = asDepth(err)
				de.step(keyStep(k))
				return de
			}
		}
	case *types.AttributeValueMemberL:
		if depth >= MaxDepth {
			return &DepthError{}
		}
		for i, x := range v.Value {
			if err := checkDepth(x, depth+1); err != nil {
				de, _ = asDepth(err)
				de.step(indexStep(i))
				return de
			}
		}
	}
	return nil
}

// walkLimit bounds walkDepth's recursion through pointers and interfaces, which
// add no level (a pointer to a pointer to itself has no map or list at all).
const walkLimit = 4 * MaxDepth

// walkDepth checks v before attributevalue encodes it: attributevalue recurses
// without a limit, so a value that contains itself would overflow the stack. level
// is the level v has if it is a map or list. It counts the maps and lists
// attributevalue would make, a little generously (a slice tagged as a set is a
// set, not a list; a type with its own Marshaler may return anything, which
// checkDepth checks afterwards), and so refuses only what is certainly too deep:
// a map or list more than one level beyond MaxDepth.
func walkDepth(v reflect.Value, level, hops int) error {
	if hops > walkLimit {
		return &DepthError{origin: identOf(v)}
	}
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	if t.Kind() != reflect.Interface && hasMarshaler(t) {
		return nil
	}
	var err error
	var step func(*DepthError)
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		err = walkDepth(v.Elem(), level, hops+1)
	case reflect.Struct:
		if t.ConvertibleTo(timeType) {
			return nil
		}
		if level > MaxDepth+1 {
			return tooDeep(v)
		}
		step, err = walkFields(v, level, hops)
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		if level > MaxDepth+1 {
			return tooDeep(v)
		}
		step, err = walkEntries(v, level, hops)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 || (t.Kind() == reflect.Slice && v.IsNil()) {
			return nil
		}
		if level > MaxDepth+1 {
			return tooDeep(v)
		}
		step, err = walkElems(v, level, hops)
	}
	if err == nil {
		return nil
	}
	de, ok := asDepth(err)
	if !ok {
		return err
	}
	if step != nil {
		step(de)
	}
	de.at(v)
	return de
}

// walkFields is walkDepth over the fields of the struct v that attributevalue encodes; on an error, step
// adds the field to the error's path.
func walkFields(v reflect.Value, level, hops int) (step func(*DepthError), err error) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if (!sf.IsExported() && !sf.Anonymous) || sf.Tag.Get(tagKey) == "-" {
			continue
		}
		next := level + 1
		if sf.Anonymous && deref(sf.Type).Kind() == reflect.Struct {
			next = level // an embedded struct's fields are promoted: no map of its own
		}
		if err = walkDepth(v.Field(i), next, hops+1); err != nil {
			return func(de *DepthError) { de.step(fieldStep(sf.Name)) }, err
		}
	}
	return nil, nil
}

// walkEntries is walkDepth over the values of the map v; on an error, step adds the entry's key to the
// error's path.
func walkEntries(v reflect.Value, level, hops int) (step func(*DepthError), err error) {
	it := v.MapRange()
	for it.Next() {
		if err = walkDepth(it.Value(), level+1, hops+1); err != nil {
			k := it.Key()
			return func(de *DepthError) {
				if k.Kind() == reflect.String {
					de.step(keyStep(k.String()))
				} else {
					de.step("[…]")
				}
			}, err
		}
	}
	return nil, nil
}

// walkElems is walkDepth over the elements of the slice or array v; on an error, step adds the index
// to the error's path.
func walkElems(v reflect.Value, level, hops int) (step func(*DepthError), err error) {
	for i := range v.Len() {
		if err = walkDepth(v.Index(i), level+1, hops+1); err != nil {
			return func(de *DepthError) { de.step(indexStep(i)) }, err
		}
	}
	return nil, nil
}

// CheckDepthAt refuses av, a value stored inside a map or list at level parent
// (the item is level 1, so a top-level attribute's parent is 1), when it nests
// maps or lists beyond [MaxDepth]. The error is a [*DepthError] whose Path is
// root followed by the steps into av.
func CheckDepthAt(av types.AttributeValue, parent int, root string) error {
	if err := checkDepth(av, parent); err != nil {
		if de, ok := asDepth(err); ok {
			return de.finish(root)
		}
		return err
	}
	return nil
}
