// Package expr assembles DynamoDB expressions with placeholders only: every
// attribute name becomes #nN and every value :vN. It also merges conditions built
// with the SDK's expression package, whose placeholders (#0, :0) never collide
// with these.
package expr

import (
	"strconv"

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
}

// Name returns the placeholder for an attribute name, the same one each time.
func (b *Builder) Name(attr string) string {
	if p, ok := b.byName[attr]; ok {
		return p
	}
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
	if b.values == nil {
		b.values = make(map[string]types.AttributeValue, 4)
	}
	p := ":v" + strconv.Itoa(b.nv)
	b.nv++
	b.values[p] = av
	return p
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

// Ptr returns nil for "" and a pointer to s otherwise.
func Ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
