// Package docpath holds document paths: "address.city", "tags[2]", "lines[0].sku",
// naming a part of a stored attribute for an Update. A path starts with a stored
// attribute name, then steps into maps and struct fields (".name", the stored name
// of the field or the map key) and lists (`[n]`, n a decimal index without leading
// zeros). A name is any text without '.', '[' or ']'; every name goes into the
// expression as a placeholder. The path is checked against the entity's Go types
// before anything is sent ([Resolve]): each step must exist in the type (a struct
// field, a string-keyed map, a slice or array, an index within an array's length),
// so a typo fails at the call, not as a silent write to an attribute no field reads.
//
// The root package finds the top-level field of a path and names it in messages;
// everything past it is here.
package docpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// MaxSteps bounds a path: DynamoDB nests documents 32 levels deep.
const MaxSteps = 32

// MaxIndex bounds a list index: no list in a 400 KB item (the root package's
// MaxItemBytes) holds more elements.
const MaxIndex = 400 * 1024

// Step is one step of a path: a name (a map key or a field's attribute name), or
// an index into a list.
type Step struct {
	Name    string
	Index   int // when IsIndex
	IsIndex bool
}

// Path is a parsed document path.
type Path struct {
	Text  string
	Steps []Step // Steps[0] names the top-level attribute
}

// ErrSyntax is what every error of [Parse] wraps.
var ErrSyntax = errors.New("bad document path")

// Parse parses a path such as "address.city" or "tags[2]".
func Parse(s string) (Path, error) {
	p := Path{Text: s}
	fail := func(at int, why string) (Path, error) {
		return Path{}, fmt.Errorf("%w %q at byte %d: %s", ErrSyntax, s, at, why)
	}
	if !utf8.ValidString(s) {
		return fail(0, "not valid UTF-8")
	}
	i := 0
	for i < len(s) {
		if len(p.Steps) >= MaxSteps {
			return fail(i, "more than "+strconv.Itoa(MaxSteps)+" steps (DynamoDB nests 32 levels deep)")
		}
		switch {
		case s[i] == '[':
			if len(p.Steps) == 0 {
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
			if n > MaxIndex {
				return fail(i+1, "index "+digits+" is past any list an item can hold")
			}
			p.Steps = append(p.Steps, Step{Index: n, IsIndex: true})
			i += end + 1
			continue
		case s[i] == '.':
			if len(p.Steps) == 0 {
				return fail(i, "a path starts with an attribute name")
			}
			i++
		case len(p.Steps) > 0:
			return fail(i, "expected . or [ here")
		}
		j := i
		for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ']' {
			j++
		}
		if j == i {
			return fail(i, "an empty name")
		}
		p.Steps = append(p.Steps, Step{Name: s[i:j]})
		i = j
	}
	if len(p.Steps) == 0 {
		return fail(0, "an empty path")
	}
	return p, nil
}

// String renders the path as parsed ("address.city", "tags[2]").
func (p Path) String() string {
	var b strings.Builder
	for i, st := range p.Steps {
		switch {
		case st.IsIndex:
			b.WriteString("[" + strconv.Itoa(st.Index) + "]")
		case i > 0:
			b.WriteString("." + st.Name)
		default:
			b.WriteString(st.Name)
		}
	}
	return b.String()
}

// Expr renders the path for an expression: a placeholder for every name.
func (p Path) Expr(b *expr.Builder) string {
	var out strings.Builder
	for i, st := range p.Steps {
		switch {
		case st.IsIndex:
			out.WriteString("[" + strconv.Itoa(st.Index) + "]")
		case i > 0:
			out.WriteString("." + b.Name(st.Name))
		default:
			out.WriteString(b.Name(st.Name))
		}
	}
	return out.String()
}

// HasIndex reports whether a step of the path is a list index.
func (p Path) HasIndex() bool {
	for _, st := range p.Steps {
		if st.IsIndex {
			return true
		}
	}
	return false
}

// Overlaps reports whether one path is a prefix of the other (DynamoDB refuses an
// update that changes both).
func (p Path) Overlaps(q Path) bool {
	n := min(len(p.Steps), len(q.Steps))
	for i := range n {
		if p.Steps[i] != q.Steps[i] {
			return false
		}
	}
	return true
}

// Lookup returns the value at the path in item, nil when the item holds none.
func (p Path) Lookup(item map[string]types.AttributeValue) types.AttributeValue {
	av := item[p.Steps[0].Name]
	for _, st := range p.Steps[1:] {
		switch x := av.(type) {
		case *types.AttributeValueMemberM:
			if st.IsIndex {
				return nil
			}
			av = x.Value[st.Name]
		case *types.AttributeValueMemberL:
			if !st.IsIndex || st.Index >= len(x.Value) {
				return nil
			}
			av = x.Value[st.Index]
		default:
			return nil
		}
	}
	return av
}
