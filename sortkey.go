package singletable

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Sort key conditions: the SK options, their typed forms (SK[T]), and the default
// condition a query gets from its key value (partial keys narrow the sort key).

// skOp is a sort key comparison.
type skOp uint8

const (
	skEqual skOp = iota + 1
	skLess
	skLessEqual
	skGreater
	skGreaterEqual
	skBetween
	skBeginsWith
	skTree
)

var skOpNames = [...]string{"", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with", "tree"}

// skFuncNames name the options, for messages.
var skFuncNames = [...]string{"", "SKEqual", "SKLessThan", "SKLessThanEqual", "SKGreaterThan", "SKGreaterThanEqual", "SKBetween", "SKBeginsWith", "SKTree"}

type skCond struct {
	op     skOp
	values [2]any
}

func sortKey(op skOp, values ...any) QueryOption {
	return queryFunc(func(o *queryOptions) error {
		if o.sk != nil {
			return fmt.Errorf("%s after %s: more than one sort key condition: %w", skFuncNames[op], skFuncNames[o.sk.op], ErrInvalidInput)
		}
		c := &skCond{op: op}
		copy(c.values[:], values)
		o.sk = c
		return nil
	})
}

// Sort key conditions. Each value is either a string, used as the rendered sort key
// text, or a value of the entity type (T or *T), rendered through the sort key
// template of the index queried. Rendering stops at the first unset input (an
// empty string, a zero time, a nil pointer or, here only, a zero number: give a
// string to match a zero), and a partly filled value stands for every key that
// begins with its prefix (see [Template.Prefix]): SKBeginsWith matches them all,
// SKLessThan and SKGreaterThanEqual bound below the group, SKLessThanEqual and
// SKGreaterThan bound above it.
//
// A value of any other type is refused before anything is sent, naming the sort
// key's placeholders and their fields; so is, in an entity query, a string that the
// entity's template could not have rendered (SKEqual, SKTree) or begin
// (SKBeginsWith). [SK] gives the same conditions with values checked by the
// compiler.
//
// Without a sort key condition the key value chooses one (see [Entity.Query]).

// SKEqual matches the sort key equal to v (which must be complete).
func SKEqual(v any) QueryOption { return sortKey(skEqual, v) }

// SKLessThan matches sort keys below v.
func SKLessThan(v any) QueryOption { return sortKey(skLess, v) }

// SKLessThanEqual matches sort keys up to and including v.
func SKLessThanEqual(v any) QueryOption { return sortKey(skLessEqual, v) }

// SKGreaterThan matches sort keys above v.
func SKGreaterThan(v any) QueryOption { return sortKey(skGreater, v) }

// SKGreaterThanEqual matches sort keys from v on.
func SKGreaterThanEqual(v any) QueryOption { return sortKey(skGreaterEqual, v) }

// SKBetween matches sort keys from lo up to and including hi.
func SKBetween(lo, hi any) QueryOption { return sortKey(skBetween, lo, hi) }

// SKBeginsWith matches sort keys that begin with v. Beware that "ORDER#o1" begins
// "ORDER#o10" too; to read an item and the items under it, use [SKTree].
func SKBeginsWith(v any) QueryOption { return sortKey(skBeginsWith, v) }

// SKTree matches the sort key v (which must be complete) and every sort key that
// continues it after the delimiter: given "ORDER#o1", the order's own item and its
// "ORDER#o1#ITEM#..." rows, but not "ORDER#o10". DynamoDB reads the range from v to
// v, delimiter, U+10FFFF; the rare key in that range that merely extends v's last
// value (such as "ORDER#o1!") is dropped before decoding.
func SKTree(v any) QueryOption { return sortKey(skTree, v) }

// SortKey gives the sort key conditions with values of type T, so that the compiler
// checks them: SK[Order]().Between(lo, hi) takes two Orders, rendered through the
// queried sort key template as the SK options render a T (a partly filled value
// stands for the keys that begin with its prefix). A query of another entity type
// refuses them before sending. The zero value is ready to use.
type SortKey[T any] struct{}

// SK returns the typed sort key conditions for entity type T, for example
//
//	orders.Query(ctx, Order{CustomerID: "c1"},
//	    singletable.SK[Order]().Between(Order{OrderID: "o100"}, Order{OrderID: "o199"}))
func SK[T any]() SortKey[T] { return SortKey[T]{} }

// Equal is [SKEqual] for a value of T.
func (SortKey[T]) Equal(v T) QueryOption { return sortKey(skEqual, v) }

// LessThan is [SKLessThan] for a value of T.
func (SortKey[T]) LessThan(v T) QueryOption { return sortKey(skLess, v) }

// LessThanEqual is [SKLessThanEqual] for a value of T.
func (SortKey[T]) LessThanEqual(v T) QueryOption { return sortKey(skLessEqual, v) }

// GreaterThan is [SKGreaterThan] for a value of T.
func (SortKey[T]) GreaterThan(v T) QueryOption { return sortKey(skGreater, v) }

// GreaterThanEqual is [SKGreaterThanEqual] for a value of T.
func (SortKey[T]) GreaterThanEqual(v T) QueryOption { return sortKey(skGreaterEqual, v) }

// Between is [SKBetween] for values of T.
func (SortKey[T]) Between(lo, hi T) QueryOption { return sortKey(skBetween, lo, hi) }

// BeginsWith is [SKBeginsWith] for a value of T.
func (SortKey[T]) BeginsWith(v T) QueryOption { return sortKey(skBeginsWith, v) }

// Tree is [SKTree] for a value of T.
func (SortKey[T]) Tree(v T) QueryOption { return sortKey(skTree, v) }

// maxRune sorts after every UTF-8 text that does not itself begin with it; appended
// to a prefix it bounds the group of keys beginning with that prefix from above.
const maxRune = "\U0010FFFF"

// skCondition renders sort key conditions for one query.
type skCondition struct {
	what       string       // entity name, or "collection", for messages
	attr       string       // sort key attribute of the queried index
	tmpl       *keyTemplate // its template for the entity; nil when there is none
	pk         *keyTemplate // the queried partition key's template; nil when there is none
	info       *entityInfo
	asEntity   func(any) (reflect.Value, bool)
	collection bool // a query of every type in the partition: no default prefix
	delim      byte
	typ        types.ScalarAttributeType // the sort key's type: S (or ""), N or B (keytypes.go)
}

// val is the placeholder of a sort key value given as text, of the key's type.
func (k skCondition) val(b *expr.Builder, text string) string {
	switch k.typ {
	case types.ScalarAttributeTypeN:
		return b.Value(&types.AttributeValueMemberN{Value: text})
	case types.ScalarAttributeTypeB:
		return b.Value(&types.AttributeValueMemberB{Value: []byte(text)})
	}
	return b.S(text)
}

// numeric reports whether the sort key holds numbers.
func (k skCondition) numeric() bool { return k.typ == types.ScalarAttributeTypeN }

// greater reports whether sort key value a comes after b as DynamoDB orders
// them: numbers by value, strings and binary byte by byte.
func (k skCondition) greater(a, b string) bool {
	if k.numeric() {
		return keytmpl.CompareNumberText(a, b) > 0
	}
	return a > b
}

// sortInput is a placeholder's input in a sort key condition or a query's key
// value: as for any key, except that a zero number is unset.
func sortInput(f *codec.Field, sv reflect.Value) keytmpl.Value {
	v := keytmpl.ValueOfField(f, sv)
	if (v.Kind == keytmpl.KindInt && v.I == 0) || (v.Kind == keytmpl.KindUint && v.U == 0) {
		return keytmpl.Value{}
	}
	return v
}

// narrowed is the default condition of a query without one, from its key value sv:
// when sv fills the leading placeholders of the sort key template, and at least one
// of them is not an input of the partition key, the sort key rendered up to the
// first empty placeholder (with the literal text after the last filled one, which
// after a placeholder of variable width starts with the delimiter: "ORDER#o1#"
// never begins "ORDER#o10#"). A complete key is matched exactly: equal in an entity
// query, as [SKTree] in a collection query (the item and the items under it). It
// is nil when sv narrows nothing.
func (k skCondition) narrowed(sv reflect.Value) (*skCond, error) {
	if k.tmpl == nil || k.info == nil || !sv.IsValid() {
		return nil, nil
	}
	own := false
	for _, f := range k.tmpl.fields {
		if sortInput(f, sv).Kind == keytmpl.KindMissing {
			break
		}
		own = own || !k.pk.hasField(f)
	}
	if !own {
		return nil, nil
	}
	s, complete, err := k.tmpl.renderWith(k.info, func(i int) keytmpl.Value { return sortInput(k.tmpl.fields[i], sv) }, true)
	if err != nil {
		return nil, err
	}
	c := &skCond{op: skBeginsWith, values: [2]any{s}}
	switch {
	case !complete:
	case k.collection && (k.typ == "" || k.typ == types.ScalarAttributeTypeS):
		c.op = skTree
	default:
		c.op = skEqual
	}
	return c, nil
}

// hasField reports whether f is an input of kt (nil: none is).
func (kt *keyTemplate) hasField(f *codec.Field) bool {
	if kt == nil {
		return false
	}
	for _, g := range kt.fields {
		if g == f {
			return true
		}
	}
	return false
}

// build renders the condition c; with none, an entity query keeps to its
// template's literal prefix. It returns the condition text and its identity for
// cursors.
func (k skCondition) build(b *expr.Builder, c *skCond) (string, string, error) {
	if c == nil {
		if k.collection || k.tmpl == nil {
			return "", "", nil
		}
		p := k.tmpl.tmpl.StaticPrefix()
		if p == "" || k.typ == types.ScalarAttributeTypeN {
			return "", "", nil
		}
		return "begins_with(" + b.Name(k.attr) + ", " + b.S(p) + ")", "\x00^" + p, nil
	}
	name := b.Name(k.attr)
	var lo, hi string
	var err error
	if k.numeric() && (c.op == skBeginsWith || c.op == skTree) {
		return "", "", fmt.Errorf("singletable: Query %s: %s: %s holds numbers, which have no prefixes: use SKEqual, SKBetween or a comparison: %w", k.what, skFuncNames[c.op], k.attr, ErrInvalidInput)
	}
	switch c.op {
	case skBetween:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		if hi, err = k.render(c.values[1], c.op, true); err != nil {
			return "", "", err
		}
		if k.greater(lo, hi) {
			return "", "", fmt.Errorf("singletable: Query %s: SKBetween bounds %q > %q: %w", k.what, lo, hi, ErrInvalidInput)
		}
		return name + " BETWEEN " + k.val(b, lo) + " AND " + k.val(b, hi), "\x00B" + lo + "\x00" + hi, nil
	case skBeginsWith:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		return "begins_with(" + name + ", " + k.val(b, lo) + ")", "\x00^" + lo, nil
	case skTree:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		hi = lo + string(k.delim) + maxRune
		return name + " BETWEEN " + b.S(lo) + " AND " + b.S(hi), "\x00T" + lo, nil
	default:
		upper := c.op == skLessEqual || c.op == skGreater
		if lo, err = k.render(c.values[0], c.op, upper); err != nil {
			return "", "", err
		}
		op := skOpNames[c.op]
		return name + " " + op + " " + k.val(b, lo), "\x00" + op + lo, nil
	}
}

// render turns one condition value into sort key text; upper says whether a partial
// value bounds its group from above.
func (k skCondition) render(v any, op skOp, upper bool) (string, error) {
	if s, ok := v.(string); ok {
		return k.text(s, op)
	}
	var sv reflect.Value
	ok := false
	if k.asEntity != nil && k.tmpl != nil {
		sv, ok = k.asEntity(v)
	}
	if !ok {
		return "", k.valueTypeError(v, op)
	}
	skT := k.tmpl
	missing := -1
	s, complete, err := skT.renderWith(k.info, func(i int) keytmpl.Value {
		v := sortInput(skT.fields[i], sv)
		if v.Kind == keytmpl.KindMissing && missing < 0 {
			missing = i
		}
		return v
	}, true)
	if err != nil {
		return "", err
	}
	if !complete && (op == skEqual || op == skTree || k.typ == types.ScalarAttributeTypeN || k.typ == types.ScalarAttributeTypeB) {
		f := skT.fields[max(missing, 0)]
		return "", fmt.Errorf("singletable: Query %s: %s needs every input of %s %q, and %s is unset (a zero number counts as unset here: give the rendered key as a string to match a zero): %w",
			k.what, skFuncNames[op], skT.attr, skT.tmpl.String(), fieldLabel(k.info.name, f), ErrInvalidKey)
	}
	if !complete && upper {
		s += maxRune
	}
	return s, nil
}

// text checks a condition value given as rendered sort key text. In an entity query
// a complete key (SKEqual, SKTree) must be one the entity's template renders, and a
// prefix (SKBeginsWith) one it could begin with: anything else matches none of the
// entity's items.
func (k skCondition) text(s string, op skOp) (string, error) {
	switch {
	case k.typ == types.ScalarAttributeTypeN && !keytmpl.IsNumberText(s):
		return "", fmt.Errorf("singletable: Query %s: %s(%q): %s holds numbers, and this is not one: %w", k.what, skFuncNames[op], s, k.attr, ErrInvalidKey)
	case s == "" || len(s) > MaxSortKeyBytes || k.typ != types.ScalarAttributeTypeB && !utf8.ValidString(s):
		return "", fmt.Errorf("singletable: Query %s: %s(%q): a sort key value must be 1-%d bytes of UTF-8: %w", k.what, skFuncNames[op], s, MaxSortKeyBytes, ErrInvalidKey)
	}
	if k.collection || k.tmpl == nil || k.tmpl.typ != "" {
		return s, nil // a number or binary key is its one input: any value of its type
	}
	tmpl := k.tmpl.tmpl
	switch op {
	case skEqual, skTree:
		if _, err := tmpl.Extract(s); err != nil {
			return "", fmt.Errorf("singletable: Query %s: %s(%q) matches no %s, whose %s is rendered from %q (to render it, pass a %s with the inputs set): %w", k.what, skFuncNames[op], s, k.what, k.tmpl.attr, tmpl.String(), k.what, err)
		}
	case skBeginsWith:
		if p := tmpl.StaticPrefix(); !strings.HasPrefix(s, p) && !strings.HasPrefix(p, s) {
			return "", fmt.Errorf("singletable: Query %s: %s(%q) matches no %s, whose %s always begins %q: %w", k.what, skFuncNames[op], s, k.what, k.tmpl.attr, p, ErrInvalidKey)
		}
	}
	return s, nil
}

// valueTypeError refuses a condition value that is neither text nor the entity
// type, naming what the sort key's placeholders take.
func (k skCondition) valueTypeError(v any, op skOp) error {
	if k.tmpl == nil || k.info == nil {
		return fmt.Errorf("singletable: Query %s: %s(%s): a value of type %T cannot be a sort key here: give the rendered key as a string: %w", k.what, skFuncNames[op], quoteValue(v), v, ErrInvalidInput)
	}
	inputs := make([]string, 0, len(k.tmpl.fields))
	for _, f := range k.tmpl.fields {
		inputs = append(inputs, fieldLabel(k.info.name, f)+", a "+f.Type.String())
	}
	want := "it has no placeholders"
	if len(inputs) > 0 {
		want = strings.Join(inputs, "; ")
	}
	return fmt.Errorf("singletable: Query %s: %s(%s): a value of type %T is not a sort key of %s: give the rendered key as a string, or a %s with the inputs of %s %q set: %s: %w",
		k.what, skFuncNames[op], quoteValue(v), v, k.info.name, k.info.name, k.tmpl.attr, k.tmpl.tmpl.String(), want, ErrInvalidInput)
}

// quoteValue formats a refused value for a message: a number, string or bool as
// Go writes it, anything else as "…".
func quoteValue(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return fmt.Sprintf("%#v", v)
	}
	return "…"
}
