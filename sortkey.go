package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
	"github.com/singletable/singletable/internal/sortcond"
)

// Sort key conditions: the SK options, their typed forms (SK[T]), and the default
// condition a query gets from its key value (partial keys narrow the sort key).

// skOp is a sort key comparison (internal/sortcond).
type skOp = sortcond.Op

const (
	skEqual        = sortcond.Equal
	skLess         = sortcond.Less
	skLessEqual    = sortcond.LessEqual
	skGreater      = sortcond.Greater
	skGreaterEqual = sortcond.GreaterEqual
	skBetween      = sortcond.Between
	skBeginsWith   = sortcond.BeginsWith
	skTree         = sortcond.Tree
)

var skOpNames = sortcond.OpNames

// skFuncNames name the options, for messages.
var skFuncNames = sortcond.FuncNames

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
// A value of the entity type that sets fields its rendering would ignore is
// refused before anything is sent, naming the field and the sort key's inputs:
// one that sets none of the sort key's inputs but other fields
// (SK[Task]().Between(Task{Title: "a"}, ...) on SK "TASK#{taskId}"), or an input
// after an unset one. A whole value (its inputs set, other fields too) is taken.
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

// skCondition renders sort key conditions for one query (internal/sortcond).
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

// narrowed is the default condition of a query without one, from its key value
// sv (see sortcond's Narrows); nil when sv narrows nothing.
func (k skCondition) narrowed(sv reflect.Value) (*skCond, error) {
	c := k.cond()
	if !c.Narrows(sv) {
		return nil, nil
	}
	v := k.render(sv)
	if v.Err != nil {
		return nil, v.Err
	}
	return &skCond{op: c.NarrowedOp(v.Complete), values: [2]any{v.Key}}, nil
}

// build renders the condition c; with none, an entity query keeps to its
// template's literal prefix. It returns the condition text and its identity for
// cursors. Values of the entity type are rendered here, text checked there.
func (k skCondition) build(b *expr.Builder, c *skCond) (string, string, error) {
	cond := k.cond()
	if c == nil {
		return cond.Build(b, 0, [2]sortcond.Value{})
	}
	var vals [2]sortcond.Value
	for j, v := range c.values {
		vals[j].V = v
		if _, text := v.(string); text || v == nil || k.asEntity == nil || k.tmpl == nil {
			continue
		}
		if sv, ok := k.asEntity(v); ok {
			vals[j] = k.render(sv)
			vals[j].V = v
			if err := k.ignored(sv, vals[j].Missing, c.op); err != nil {
				return "", "", err
			}
		}
	}
	return cond.Build(b, c.op, vals)
}

// ignored refuses a condition value sv that sets a field its rendering ignores:
// an input of the sort key after the first unset one (rendering stops there), or,
// when it sets no input of the sort key at all, a field that is none of its
// inputs (nor the partition key's). Such a condition would be sent as the
// template's prefix alone and match other items than the value says.
func (k skCondition) ignored(sv reflect.Value, missing int, op skOp) error {
	if missing < 0 || k.info == nil {
		return nil
	}
	kt := k.tmpl
	label := func(f *codec.Field) string { return f.Name + " (" + k.info.name + "." + f.GoName + ")" }
	var inputs []string
	for _, f := range kt.fields {
		inputs = append(inputs, label(f))
	}
	fail := func(f *codec.Field, why string) error {
		return errorf("Query %s: %s: the value sets %s, %s %s %q renders from %s, in that order, up to the first unset one: set the inputs before it, or give the rendered key as a string: %w",
			k.what, skFuncNames[op], label(f), why, kt.attr, kt.tmpl.k.Text, strings.Join(inputs, ", "), ErrInvalidInput)
	}
	for _, f := range kt.fields[missing+1:] {
		if sortcond.Input(f, sv).Kind != keytmpl.KindMissing {
			return fail(f, "but "+label(kt.fields[missing])+" before it is unset, so it is not rendered:")
		}
	}
	if missing > 0 {
		return nil
	}
	for _, f := range k.info.plan.Fields() {
		if slices.Contains(kt.fields, f) || (k.pk != nil && slices.Contains(k.pk.fields, f)) {
			continue
		}
		if fv, ok := f.ValueOf(sv); ok && !fv.IsZero() {
			return fail(f, "which is not an input of the sort key, and none of its inputs:")
		}
	}
	return nil
}

// render renders the sort key template from sv as a prefix, its inputs read as
// a sort key condition reads them.
func (k skCondition) render(sv reflect.Value) sortcond.Value {
	kt, missing := k.tmpl, -1
	s, complete, err := kt.renderWith(k.info, func(i int) keytmpl.Value {
		v := sortcond.Input(kt.fields[i], sv)
		if v.Kind == keytmpl.KindMissing && missing < 0 {
			missing = i
		}
		return v
	}, true)
	return sortcond.Value{Rendered: true, Key: s, Complete: complete, Missing: missing, Err: err}
}

// cond is the condition for internal/sortcond.
func (k skCondition) cond() sortcond.Condition {
	c := sortcond.Condition{What: k.what, Attr: k.attr, Collection: k.collection, Delim: k.delim, Typ: k.typ,
		KeyError: keyError, Invalid: ErrInvalidInput, InvalidKey: ErrInvalidKey, MaxBytes: MaxSortKeyBytes}
	if k.info != nil {
		c.Entity, c.HasInfo = k.info.name, true
	}
	if k.pk != nil {
		c.PKInputs = k.pk.fields
	}
	if kt := k.tmpl; kt != nil {
		c.Tmpl, c.TmplAttr, c.Inputs, c.TmplType = &kt.tmpl.k, kt.attr, kt.fields, kt.typ
	}
	return c
}
