// Package sortcond builds a query's sort key condition: the SK options'
// comparisons rendered through the queried index's sort key template (a partly
// filled value stands for the keys that begin with its prefix), the checks of a
// value given as rendered text, and the default condition a query gets from its
// key value (partial keys narrow the sort key). It returns the condition text
// and its identity, which the root package folds into a cursor.
//
// The root package keeps the SK options and SortKey[T], and gives the template
// as a [Key] rendered with its entity's information (I).
package sortcond

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Op is a sort key comparison.
type Op uint8

// The comparisons; 0 is none.
const (
	Equal Op = iota + 1
	Less
	LessEqual
	Greater
	GreaterEqual
	Between
	BeginsWith
	Tree
)

// OpNames are the comparisons as the condition writes them.
var OpNames = [...]string{"", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with", "tree"}

// FuncNames name the options that give the comparisons, for messages.
var FuncNames = [...]string{"", "SKEqual", "SKLessThan", "SKLessThanEqual", "SKGreaterThan", "SKGreaterThanEqual", "SKBetween", "SKBeginsWith", "SKTree"}

// MaxRune sorts after every UTF-8 text that does not itself begin with it;
// appended to a prefix it bounds the group of keys beginning with that prefix
// from above.
const MaxRune = "\U0010FFFF"

// Condition renders sort key conditions for one query.
type Condition struct {
	What string // entity name, or "collection", for messages
	Attr string // sort key attribute of the queried index
	// Tmpl is the sort key's template for the entity (nil when there is none),
	// with its attribute, its inputs and its type (N or B for a number or binary
	// key, "" for a string).
	Tmpl     *keytmpl.Template
	TmplAttr string
	Inputs   []*codec.Field
	TmplType types.ScalarAttributeType
	PKInputs []*codec.Field // the queried partition key's inputs
	Entity   string         // the entity's name
	HasInfo  bool           // the query is of an entity (Entity is set)
	// KeyError words an error of the template's Extract as the root package does.
	KeyError   func(error) error
	Collection bool // a query of every type in the partition: no default prefix
	Delim      byte
	Typ        types.ScalarAttributeType // the sort key's type: S (or ""), N or B
	Invalid    error                     // the root package's ErrInvalidInput
	InvalidKey error                     // the root package's ErrInvalidKey
	MaxBytes   int                       // DynamoDB's limit on a sort key
}

// label names a field in messages, as the root package does.
func (k *Condition) label(f *codec.Field) string {
	return f.Name + " (" + k.Entity + "." + f.GoName + ")"
}

// val is the placeholder of a sort key value given as text, of the key's type.
func (k *Condition) val(b *expr.Builder, text string) string {
	switch k.Typ {
	case types.ScalarAttributeTypeN:
		return b.Value(&types.AttributeValueMemberN{Value: text})
	case types.ScalarAttributeTypeB:
		return b.Value(&types.AttributeValueMemberB{Value: []byte(text)})
	}
	return b.S(text)
}

// numeric reports whether the sort key holds numbers.
func (k *Condition) numeric() bool { return k.Typ == types.ScalarAttributeTypeN }

// greater reports whether sort key value a comes after b as DynamoDB orders
// them: numbers by value, strings and binary byte by byte.
func (k *Condition) greater(a, b string) bool {
	if k.numeric() {
		return keytmpl.CompareNumberText(a, b) > 0
	}
	return a > b
}

// Input is a placeholder's input in a sort key condition or a query's key
// value: as for any key, except that a zero number is unset.
func Input(f *codec.Field, sv reflect.Value) keytmpl.Value {
	v := keytmpl.ValueOfField(f, sv)
	if (v.Kind == keytmpl.KindInt && v.I == 0) || (v.Kind == keytmpl.KindUint && v.U == 0) {
		return keytmpl.Value{}
	}
	return v
}

// Narrows reports whether a query without a condition narrows its sort key
// from its key value sv: when sv fills the leading placeholders of the sort key
// template, and at least one of them is not an input of the partition key. It
// then matches the sort key rendered from sv as a prefix (up to the first empty
// placeholder, with the literal text after the last filled one, which after a
// placeholder of variable width starts with the delimiter: "ORDER#o1#" never
// begins "ORDER#o10#"): see [Condition.NarrowedOp].
func (k *Condition) Narrows(sv reflect.Value) bool {
	if k.Tmpl == nil || !k.HasInfo || !sv.IsValid() {
		return false
	}
	own := false
	for _, f := range k.Inputs {
		if Input(f, sv).Kind == keytmpl.KindMissing {
			break
		}
		own = own || !slices.Contains(k.PKInputs, f)
	}
	return own
}

// NarrowedOp is the comparison of the condition a query narrows to: a prefix
// begins the keys; a complete key is matched exactly, Equal in an entity query,
// Tree in a collection query (the item and the items under it).
func (k *Condition) NarrowedOp(complete bool) Op {
	switch {
	case !complete:
		return BeginsWith
	case k.Collection && (k.Typ == "" || k.Typ == types.ScalarAttributeTypeS):
		return Tree
	}
	return Equal
}

// Value is a condition value: text (V a string) or a value of the entity type,
// which the root package renders through the template as a prefix, its inputs
// read with [Input] (Rendered set; Missing is the first unset input, -1: none).
type Value struct {
	V        any
	Rendered bool
	Key      string
	Complete bool
	Missing  int
	Err      error
}

// Build renders the condition op on values; with none (op 0), an entity query
// keeps to its template's literal prefix. It returns the condition text and its
// identity for cursors.
func (k *Condition) Build(b *expr.Builder, op Op, values [2]Value) (string, string, error) {
	if op == 0 {
		if k.Collection || k.Tmpl == nil {
			return "", "", nil
		}
		p := k.Tmpl.StaticPrefix()
		if p == "" || k.Typ == types.ScalarAttributeTypeN {
			return "", "", nil
		}
		return "begins_with(" + b.Name(k.Attr) + ", " + b.S(p) + ")", "\x00^" + p, nil
	}
	name := b.Name(k.Attr)
	var lo, hi string
	var err error
	if k.numeric() && (op == BeginsWith || op == Tree) {
		return "", "", fmt.Errorf("singletable: Query %s: %s: %s holds numbers, which have no prefixes: use SKEqual, SKBetween or a comparison: %w", k.What, FuncNames[op], k.Attr, k.Invalid)
	}
	switch op {
	case Between:
		if lo, err = k.render(values[0], op, false); err != nil {
			return "", "", err
		}
		if hi, err = k.render(values[1], op, true); err != nil {
			return "", "", err
		}
		if k.greater(lo, hi) {
			return "", "", fmt.Errorf("singletable: Query %s: SKBetween bounds %q > %q: %w", k.What, lo, hi, k.Invalid)
		}
		return name + " BETWEEN " + k.val(b, lo) + " AND " + k.val(b, hi), "\x00B" + lo + "\x00" + hi, nil
	case BeginsWith:
		if lo, err = k.render(values[0], op, false); err != nil {
			return "", "", err
		}
		return "begins_with(" + name + ", " + k.val(b, lo) + ")", "\x00^" + lo, nil
	case Tree:
		if lo, err = k.render(values[0], op, false); err != nil {
			return "", "", err
		}
		hi = lo + string(k.Delim) + MaxRune
		return name + " BETWEEN " + b.S(lo) + " AND " + b.S(hi), "\x00T" + lo, nil
	default:
		upper := op == LessEqual || op == Greater
		if lo, err = k.render(values[0], op, upper); err != nil {
			return "", "", err
		}
		return name + " " + OpNames[op] + " " + k.val(b, lo), "\x00" + OpNames[op] + lo, nil
	}
}

// render turns one condition value into sort key text; upper says whether a partial
// value bounds its group from above.
func (k *Condition) render(v Value, op Op, upper bool) (string, error) {
	if s, ok := v.V.(string); ok {
		return k.text(s, op)
	}
	if !v.Rendered {
		return "", k.valueTypeError(v.V, op)
	}
	s, complete, missing, err := v.Key, v.Complete, v.Missing, v.Err
	if err != nil {
		return "", err
	}
	if !complete && (op == Equal || op == Tree || k.Typ == types.ScalarAttributeTypeN || k.Typ == types.ScalarAttributeTypeB) {
		f := k.Inputs[max(missing, 0)]
		return "", fmt.Errorf("singletable: Query %s: %s needs every input of %s %q, and %s is unset (a zero number counts as unset here: give the rendered key as a string to match a zero): %w",
			k.What, FuncNames[op], k.TmplAttr, k.Tmpl.Text, k.label(f), k.InvalidKey)
	}
	if !complete && upper {
		s += MaxRune
	}
	return s, nil
}

// text checks a condition value given as rendered sort key text. In an entity query
// a complete key (SKEqual, SKTree) must be one the entity's template renders, and a
// prefix (SKBeginsWith) one it could begin with: anything else matches none of the
// entity's items.
func (k *Condition) text(s string, op Op) (string, error) {
	switch {
	case k.Typ == types.ScalarAttributeTypeN && !keytmpl.IsNumberText(s):
		return "", fmt.Errorf("singletable: Query %s: %s(%q): %s holds numbers, and this is not one: %w", k.What, FuncNames[op], s, k.Attr, k.InvalidKey)
	case s == "" || len(s) > k.MaxBytes || k.Typ != types.ScalarAttributeTypeB && !utf8.ValidString(s):
		return "", fmt.Errorf("singletable: Query %s: %s(%q): a sort key value must be 1-%d bytes of UTF-8: %w", k.What, FuncNames[op], s, k.MaxBytes, k.InvalidKey)
	}
	if k.Collection || k.Tmpl == nil || k.TmplType != "" {
		return s, nil // a number or binary key is its one input: any value of its type
	}
	switch op {
	case Equal, Tree:
		if _, err := k.Tmpl.Extract(s); err != nil {
			return "", fmt.Errorf("singletable: Query %s: %s(%q) matches no %s, whose %s is rendered from %q (to render it, pass a %s with the inputs set): %w", k.What, FuncNames[op], s, k.What, k.TmplAttr, k.Tmpl.Text, k.What, k.KeyError(err))
		}
	case BeginsWith:
		if p := k.Tmpl.StaticPrefix(); !strings.HasPrefix(s, p) && !strings.HasPrefix(p, s) {
			return "", fmt.Errorf("singletable: Query %s: %s(%q) matches no %s, whose %s always begins %q: %w", k.What, FuncNames[op], s, k.What, k.TmplAttr, p, k.InvalidKey)
		}
	}
	return s, nil
}

// valueTypeError refuses a condition value that is neither text nor the entity
// type, naming what the sort key's placeholders take.
func (k *Condition) valueTypeError(v any, op Op) error {
	if k.Tmpl == nil || !k.HasInfo {
		return fmt.Errorf("singletable: Query %s: %s(%s): a value of type %T cannot be a sort key here: give the rendered key as a string: %w", k.What, FuncNames[op], QuoteValue(v), v, k.Invalid)
	}
	inputs := make([]string, 0, len(k.Inputs))
	for _, f := range k.Inputs {
		inputs = append(inputs, k.label(f)+", a "+f.Type.String())
	}
	want := "it has no placeholders"
	if len(inputs) > 0 {
		want = strings.Join(inputs, "; ")
	}
	return fmt.Errorf("singletable: Query %s: %s(%s): a value of type %T is not a sort key of %s: give the rendered key as a string, or a %s with the inputs of %s %q set: %s: %w",
		k.What, FuncNames[op], QuoteValue(v), v, k.Entity, k.Entity, k.TmplAttr, k.Tmpl.Text, want, k.Invalid)
}

// QuoteValue formats a refused value for a message: a number, string or bool as
// Go writes it, anything else as "…".
func QuoteValue(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return fmt.Sprintf("%#v", v)
	}
	return "…"
}
