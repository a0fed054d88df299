// Package expr assembles DynamoDB expressions with placeholders only: every
// attribute name becomes #nN and every value :vN. It also merges conditions built
// with the SDK's expression package, whose placeholders (#0, :0) never collide
// with these.
package expr

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Builder collects names and values for one request. The zero value is ready to
// use. A Builder is not safe for concurrent use.
type Builder struct {
	names  map[string]string
	values map[string]types.AttributeValue
	byName map[string]string
	nv     int
	shared bool // the maps are a Fixed's: copy them before adding
}

// Fixed is an expression built once, with its names and values, for requests
// that all send the same one. It is immutable and safe for concurrent use.
type Fixed struct {
	text   *string
	names  map[string]string
	values map[string]types.AttributeValue
	byName map[string]string
	nv     int
}

// Fix returns text, built with b, as a Fixed holding b's names and values. b must
// not be used afterwards.
func (b *Builder) Fix(text string) *Fixed {
	return &Fixed{text: &text, names: b.names, values: b.values, byName: b.byName, nv: b.nv}
}

// Text returns the expression's text, and TextPtr a pointer to it that requests
// share (nothing may write through it).
func (f *Fixed) Text() string { return *f.text }

// TextPtr returns a pointer to the text, shared by every caller.
func (f *Fixed) TextPtr() *string { return f.text }

// Use starts b, which must be unused, with f's names and values, and returns f's
// text: what building f again with b would give. The maps are shared with f, and
// with the requests that send them, until b adds names or values of its own.
func (b *Builder) Use(f *Fixed) string {
	b.names, b.values, b.byName, b.nv, b.shared = f.names, f.values, f.byName, f.nv, true
	return *f.text
}

// own copies shared maps before b changes them.
func (b *Builder) own() {
	if !b.shared {
		return
	}
	b.shared = false
	b.names, b.byName = clone(b.names), clone(b.byName)
	b.values = clone(b.values)
}

func clone[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	c := make(map[string]V, len(m)+4)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Clone returns a copy of b that adds names and values of its own without
// changing b's (a write's expression built again on top of b).
func (b *Builder) Clone() Builder {
	c := *b
	c.shared = true // copied before the first addition
	return c
}

// Name returns the placeholder for an attribute name, the same one each time.
func (b *Builder) Name(attr string) string {
	if p, ok := b.byName[attr]; ok {
		return p
	}
	b.own()
	if b.names == nil {
		b.names = make(map[string]string, 4)
		b.byName = make(map[string]string, 4)
	}
	p := "#n" + strconv.Itoa(len(b.names))
	b.names[p] = attr
	b.byName[attr] = p
	return p
}

// Value returns a new placeholder for a value.
func (b *Builder) Value(av types.AttributeValue) string {
	b.own()
	if b.values == nil {
		b.values = make(map[string]types.AttributeValue, 4)
	}
	p := ":v" + strconv.Itoa(b.nv)
	b.nv++
	b.values[p] = av
	return p
}

// Set gives ph, a value placeholder of b's, the value av.
func (b *Builder) Set(ph string, av types.AttributeValue) {
	b.own()
	b.values[ph] = av
}

// S returns a new placeholder for a string value.
func (b *Builder) S(s string) string { return b.Value(&types.AttributeValueMemberS{Value: s}) }

// Names returns the name map, or nil when empty (DynamoDB rejects empty maps).
func (b *Builder) Names() map[string]string {
	if len(b.names) == 0 {
		return nil
	}
	return b.names
}

// Values returns the value map, or nil when empty.
func (b *Builder) Values() map[string]types.AttributeValue {
	if len(b.values) == 0 {
		return nil
	}
	return b.values
}

// Condition builds a condition made with the SDK's expression package and adds its
// names and values to b, returning its text. An unset condition returns "".
func (b *Builder) Condition(c expression.ConditionBuilder) (string, error) {
	if !c.IsSet() {
		return "", nil
	}
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		return "", err
	}
	b.merge(e)
	return *e.Condition(), nil
}

func (b *Builder) merge(e expression.Expression) {
	b.own()
	for k, v := range e.Names() {
		if b.names == nil {
			b.names = make(map[string]string, 4)
			b.byName = make(map[string]string, 4)
		}
		b.names[k] = v
	}
	for k, v := range e.Values() {
		if b.values == nil {
			b.values = make(map[string]types.AttributeValue, 4)
		}
		b.values[k] = v
	}
}

// And joins conditions with AND, skipping empty ones, each in parentheses when more
// than one remains.
func And(conds ...string) string {
	n := 0
	for _, c := range conds {
		if c != "" {
			n++
		}
	}
	out := ""
	for _, c := range conds {
		if c == "" {
			continue
		}
		if n > 1 {
			c = "(" + c + ")"
		}
		if out != "" {
			out += " AND "
		}
		out += c
	}
	return out
}

// Update joins SET, REMOVE, ADD and DELETE clauses into an update expression,
// leaving out the kinds without one.
func Update(sets, removes, adds, deletes []string) string {
	var upd strings.Builder
	for _, c := range []struct {
		kw      string
		clauses []string
	}{{"SET", sets}, {"REMOVE", removes}, {"ADD", adds}, {"DELETE", deletes}} {
		if len(c.clauses) > 0 {
			upd.WriteString(" " + c.kw + " ")
			upd.WriteString(strings.Join(c.clauses, ", "))
		}
	}
	return strings.TrimSpace(upd.String())
}

// Ptr returns nil for "" and a pointer to s otherwise.
func Ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// UpdatedAttrs returns the top-level attributes an update expression writes: the
// first name of each clause, its placeholder resolved by names.
func UpdatedAttrs(update string, names map[string]string) []string {
	var out []string
	depth := 0
	start := false // at the start of a clause
	for i := 0; i < len(update); i++ {
		c := update[i]
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth > 0:
		case c == ',':
			start = true
		case c >= 'A' && c <= 'Z' && (i == 0 || update[i-1] == ' '):
			// A keyword (SET, REMOVE, ADD, DELETE) starts a clause.
			for i < len(update) && update[i] != ' ' {
				i++
			}
			start = true
		case c == '#' && start:
			j := i + 1
			for j < len(update) && (update[j] == '_' || update[j] >= '0' && update[j] <= '9' || update[j] >= 'a' && update[j] <= 'z' || update[j] >= 'A' && update[j] <= 'Z') {
				j++
			}
			if name, ok := names[update[i:j]]; ok {
				out = append(out, name)
			}
			start = false
			i = j - 1
		}
	}
	return out
}

// Same is the condition that attribute name holds what stored holds: its value,
// or no value when stored has none.
func Same(b *Builder, name string, stored map[string]types.AttributeValue) string {
	if av, ok := stored[name]; ok {
		return b.Name(name) + " = " + b.Value(av)
	}
	return "attribute_not_exists(" + b.Name(name) + ")"
}

// Unchanged is the condition that an item is as it was read whole (stored):
// every attribute but the primary key's (pk, sk) still there with its value,
// none of the known attributes that stored lacks appeared, and the item exists.
func Unchanged(b *Builder, stored map[string]types.AttributeValue, pk, sk string, known []string) string {
	var conds []string
	for _, name := range slices.Sorted(maps.Keys(stored)) {
		if name == pk || name == sk {
			continue
		}
		conds = append(conds, b.Name(name)+" = "+b.Value(stored[name]))
	}
	for _, name := range known {
		if _, ok := stored[name]; !ok {
			conds = append(conds, "attribute_not_exists("+b.Name(name)+")")
		}
	}
	conds = append(conds, "attribute_exists("+b.Name(pk)+")")
	return And(conds...)
}
