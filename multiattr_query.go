package singletable

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Queries of native indexes (multiattr.go), checked against DynamoDB's rules
// before anything is sent:
//
//   - every partition attribute gets an equality, from the key value's field;
//   - the key value's set sort fields, left to right, become equalities: a set
//     sort field after an unset one is refused (DynamoDB reads sort attributes
//     left to right, with no gaps);
//   - a sort condition (SK[T]() or SKEqual... given a T) compares the last sort
//     attribute its value sets; every sort attribute before that one gets an
//     equality, from the condition's value or the key value's (which must agree
//     when both set it); Between's bounds compare the same attribute;
//     BeginsWith does not apply to numbers; Tree and text values do not apply
//     (nothing is rendered).
//
// A field is unset when it is zero as omitempty sees it (an empty string, a zero
// number, a nil pointer or slice) or a zero time.Time: to query a zero number,
// make the field a pointer.

// nativeQuery is what a prepared query of a native index keeps: the equality
// conditions, which a cursor must carry unchanged.
type nativeQuery struct {
	eq map[string]types.AttributeValue
}

// checkStart refuses a cursor whose key leaves the query's equalities: one that
// would move the query to another partition or sort prefix.
func (nq *nativeQuery) checkStart(start map[string]types.AttributeValue) error {
	for attr, want := range nq.eq {
		if !sameScalar(start[attr], want) {
			return fmt.Errorf("%w: it points into another partition (attribute %s)", ErrInvalidCursor, attr)
		}
	}
	return nil
}

// sameScalar reports whether two key values are of one type and equal.
func sameScalar(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && keytmpl.CompareNumberText(x.Value, y.Value) == 0
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	}
	return false
}

// compareScalar orders two key values of one type as DynamoDB does.
func compareScalar(a, b types.AttributeValue) int {
	switch x := a.(type) {
	case *types.AttributeValueMemberN:
		return keytmpl.CompareNumberText(x.Value, b.(*types.AttributeValueMemberN).Value)
	case *types.AttributeValueMemberB:
		return bytes.Compare(x.Value, b.(*types.AttributeValueMemberB).Value)
	}
	return strings.Compare(a.(*types.AttributeValueMemberS).Value, b.(*types.AttributeValueMemberS).Value)
}

// scalarText is a key value's text for identities and messages.
func scalarText(av types.AttributeValue) string {
	s, _ := keytmpl.TextOf(av)
	return s
}

// nativeInput is the value field f of sv stores, or nil when the field is unset
// (see the rules above).
func nativeInput(f *codec.Field, sv reflect.Value) (types.AttributeValue, error) {
	fv, ok := f.ValueOf(sv)
	if !ok || f.IsZero(fv) {
		return nil, nil
	}
	if tm, ok := reflect.TypeAssert[time.Time](fv); ok && tm.IsZero() {
		return nil, nil
	}
	if fv.Kind() == reflect.Slice && fv.Len() == 0 {
		return nil, nil
	}
	av, ok, err := f.Encode(fv)
	if err != nil || !ok {
		return nil, err
	}
	return av, nil
}

// nativeQueryPlan is one query of a native index while it is being checked.
type nativeQueryPlan struct {
	t    *Table
	info *entityInfo
	ix   Index
	view *nativeView
	what string
}

func (p *nativeQueryPlan) fail(format string, args ...any) error {
	return fmt.Errorf("singletable: Query %s: native index %s: "+format+": %w", append(append([]any{p.what, p.ix.Name}, args...), ErrInvalidInput)...)
}

// label names the i-th key attribute and the entity's field stored under it.
func (p *nativeQueryPlan) label(i int) string {
	return fieldLabel(p.info.name, p.view.fields[i])
}

// prepareNativeQuery is prepareQuery for a native index: the same phases, with
// the key condition built from the key value's fields.
func (t *Table) prepareNativeQuery(info *entityInfo, ix Index, sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (*preparedQuery, error) {
	p := &nativeQueryPlan{t: t, info: info, ix: ix, what: "collection"}
	if info != nil {
		p.what = info.name
	}
	switch {
	case info == nil || !sv.IsValid():
		return nil, p.fail("query it with a value of a registered entity: its key is the entity's own attributes (Partition does not apply)")
	case o.partition != nil:
		return nil, p.fail("Partition does not apply: the partition is the key value's attributes")
	case o.consistent:
		return nil, p.fail("a global index does not support consistent reads (Consistent)")
	}
	p.view = info.native[ix.Name]
	if p.view == nil || !p.view.member() {
		return nil, p.fail("%s does not store %s, so none of its items is in the index", info.name, strings.Join(p.view.missing(), ", "))
	}
	eq, conds, ident, err := p.keyCondition(sv, o, asEntity)
	if err != nil {
		return nil, err
	}
	var b expr.Builder
	parts := make([]string, 0, len(conds)+len(eq))
	attrs := ix.nativeAttrs()
	for _, a := range attrs {
		if av, ok := eq[a.Name]; ok {
			parts = append(parts, b.Name(a.Name)+" = "+b.Value(av))
		}
	}
	for _, c := range conds {
		parts = append(parts, c(&b))
	}
	kind := "*"
	if !o.collection {
		kind = info.discriminator
	}
	pq := &preparedQuery{index: ix, native: &nativeQuery{eq: eq}}
	var pv []string
	for _, a := range ix.PartitionAttrs {
		pv = append(pv, scalarText(eq[a.Name]))
	}
	pq.partition = strings.Join(pv, ", ")
	pq.identity = []byte(t.name + "\x00" + o.index + "\x00" + kind + "\x00" + ident + "\x00" + strconv.FormatBool(o.desc))
	if pq.plan, err = t.pagePlan(info, ix, o); err != nil { // readpath.go
		return nil, fmt.Errorf("singletable: Query %s: %w", p.what, err)
	}
	if err := t.queryInput(pq, &b, strings.Join(parts, " AND "), o); err != nil {
		return nil, fmt.Errorf("singletable: Query %s: %w", p.what, err)
	}
	if o.cursor != "" {
		start, err := t.decodeCursor(o.cursor, pq)
		if err != nil {
			return nil, fmt.Errorf("singletable: Query %s: %w", p.what, err)
		}
		pq.in.ExclusiveStartKey = start
	}
	return pq, nil
}

// keyCondition checks the query against DynamoDB's rules and returns its
// equalities, the condition on the last sort attribute it compares (none, or
// one), and the identity of both for cursors.
func (p *nativeQueryPlan) keyCondition(sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (map[string]types.AttributeValue, []func(*expr.Builder) string, string, error) {
	attrs := p.ix.nativeAttrs()
	np := len(p.ix.PartitionAttrs)
	key, err := p.keyValues(sv)
	if err != nil {
		return nil, nil, "", err
	}
	eq := map[string]types.AttributeValue{}
	var ident strings.Builder
	addEq := func(i int, av types.AttributeValue) {
		eq[attrs[i].Name] = av
		ident.WriteString(attrs[i].Name + "=" + string(attrs[i].Type) + strconv.Quote(scalarText(av)) + "\x00")
	}
	for i := range np {
		addEq(i, key[i])
	}
	c := o.sk
	if c == nil {
		for i := np; i < len(attrs) && key[i] != nil; i++ {
			addEq(i, key[i])
		}
		return eq, nil, ident.String(), nil
	}
	vals, target, err := p.conditionValues(c, asEntity)
	if err != nil {
		return nil, nil, "", err
	}
	for i := target; i < len(attrs); i++ {
		if key[i] != nil {
			return nil, nil, "", p.fail("the key value sets sort attribute %s, which the %s condition compares or follows; leave it unset in the key value", p.label(i), skFuncNames[c.op])
		}
	}
	for i := np; i < target; i++ {
		v, err := p.onlyValue(i, target, key[i], vals[0][i], vals[len(vals)-1][i])
		if err != nil {
			return nil, nil, "", err
		}
		addEq(i, v)
	}
	a := attrs[target]
	lo, hi := vals[0][target], vals[len(vals)-1][target]
	switch {
	case c.op == skBeginsWith && a.Type == types.ScalarAttributeTypeN:
		return nil, nil, "", p.fail("SKBeginsWith does not apply to sort attribute %s, which holds numbers: use a comparison or SKBetween", p.label(target))
	case c.op == skBetween && compareScalar(lo, hi) > 0:
		return nil, nil, "", p.fail("SKBetween bounds of %s are reversed (%s > %s)", p.label(target), scalarText(lo), scalarText(hi))
	}
	ident.WriteString(skOpNames[c.op] + " " + a.Name + strconv.Quote(scalarText(lo)) + strconv.Quote(scalarText(hi)))
	cond := func(b *expr.Builder) string {
		name := b.Name(a.Name)
		switch c.op {
		case skBetween:
			return name + " BETWEEN " + b.Value(lo) + " AND " + b.Value(hi)
		case skBeginsWith:
			return "begins_with(" + name + ", " + b.Value(lo) + ")"
		}
		return name + " " + skOpNames[c.op] + " " + b.Value(lo)
	}
	return eq, []func(*expr.Builder) string{cond}, ident.String(), nil
}

// keyValues reads the key value's native attributes (nil where unset) and
// checks that it sets every partition attribute and sort attributes from the
// left, with no gaps.
func (p *nativeQueryPlan) keyValues(sv reflect.Value) ([]types.AttributeValue, error) {
	attrs := p.ix.nativeAttrs()
	np := len(p.ix.PartitionAttrs)
	key := make([]types.AttributeValue, len(attrs))
	for i := range attrs {
		av, err := nativeInput(p.view.fields[i], sv)
		if err != nil {
			return nil, fmt.Errorf("singletable: Query %s: %w", p.what, err)
		}
		key[i] = av
	}
	for i := range np {
		if key[i] == nil {
			return nil, p.fail("partition attribute %s is unset: DynamoDB needs an equality on every partition attribute (an empty string or a zero number is unset; a pointer field can hold 0)", p.label(i))
		}
	}
	for i := np + 1; i < len(attrs); i++ {
		if key[i] != nil && key[i-1] == nil {
			return nil, p.fail("sort attribute %s is set but %s before it is not: DynamoDB compares sort attributes left to right, with no gaps", p.label(i), p.label(i-1))
		}
	}
	return key, nil
}

// conditionValues reads the sort attributes of the condition's value (both
// bounds of SKBetween) and returns them with the index of the attribute the
// condition compares: the last one its value sets.
func (p *nativeQueryPlan) conditionValues(c *skCond, asEntity func(any) (reflect.Value, bool)) ([][]types.AttributeValue, int, error) {
	attrs := p.ix.nativeAttrs()
	np := len(p.ix.PartitionAttrs)
	switch {
	case len(p.ix.SortAttrs) == 0:
		return nil, 0, p.fail("it has no sort attributes, so %s does not apply", skFuncNames[c.op])
	case c.op == skTree:
		return nil, 0, p.fail("SKTree does not apply: nothing is rendered, so no key continues another; compare the sort attributes instead")
	}
	n := 1
	if c.op == skBetween {
		n = 2
	}
	vals := make([][]types.AttributeValue, n)
	target := -1
	for j := range n {
		cv, ok := reflect.Value{}, false
		if asEntity != nil {
			cv, ok = asEntity(c.values[j])
		}
		if !ok {
			return nil, 0, p.fail("%s takes a value of %s (SK[%s]()), not %T: a native index has no rendered sort key text", skFuncNames[c.op], p.info.name, p.info.name, c.values[j])
		}
		vals[j] = make([]types.AttributeValue, len(attrs))
		last := -1
		for i := np; i < len(attrs); i++ {
			av, err := nativeInput(p.view.fields[i], cv)
			if err != nil {
				return nil, 0, fmt.Errorf("singletable: Query %s: %w", p.what, err)
			}
			vals[j][i] = av
			if av != nil {
				last = i
			}
		}
		switch {
		case last < 0:
			return nil, 0, p.fail("the %s value sets no sort attribute (%s)", skFuncNames[c.op], p.sortLabels())
		case j == 1 && last != target:
			return nil, 0, p.fail("SKBetween bounds compare different sort attributes, %s and %s: both must set the same last one", p.label(target), p.label(last))
		}
		target = last
	}
	return vals, target, nil
}

// onlyValue returns the one value that sort attribute i, before the compared
// one (target), has in the key value and the condition's values, which must
// agree and give one.
func (p *nativeQueryPlan) onlyValue(i, target int, cands ...types.AttributeValue) (types.AttributeValue, error) {
	var v types.AttributeValue
	for _, cand := range cands {
		switch {
		case cand == nil:
		case v == nil:
			v = cand
		case !sameScalar(v, cand):
			return nil, p.fail("sort attribute %s is %s in one value and %s in another: DynamoDB compares only the last sort attribute given, so every one before it needs one value", p.label(i), scalarText(v), scalarText(cand))
		}
	}
	if v == nil {
		return nil, p.fail("sort attribute %s is not given, but the condition compares %s after it: DynamoDB needs an equality on every sort attribute before the one compared", p.label(i), p.label(target))
	}
	return v, nil
}

// sortLabels names the index's sort attributes and the entity's fields.
func (p *nativeQueryPlan) sortLabels() string {
	var out []string
	for i := len(p.ix.PartitionAttrs); i < len(p.view.fields); i++ {
		out = append(out, p.label(i))
	}
	return strings.Join(out, ", ")
}
