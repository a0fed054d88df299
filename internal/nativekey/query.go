package nativekey

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// View is an entity's place in a native index: the index's key attributes
// (the NPartition partition ones first) and the field the entity stores under
// each, nil where it has none.
type View struct {
	Attrs      []Attr
	NPartition int
	Fields     []*codec.Field
}

// Member reports whether the entity stores every key attribute of the index.
func (v *View) Member() bool {
	for _, f := range v.Fields {
		if f == nil {
			return false
		}
	}
	return true
}

// Missing names the key attributes the entity does not store.
func (v *View) Missing() []string {
	var out []string
	for i, a := range v.Attrs {
		if v.Fields[i] == nil {
			out = append(out, a.Name)
		}
	}
	return out
}

// Input is the value field f of sv stores, or nil when the field is unset: zero
// as omitempty sees it, a zero time.Time, an empty slice.
func Input(f *codec.Field, sv reflect.Value) (types.AttributeValue, error) {
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

// Query is one query of a native index while it is being checked.
type Query struct {
	View    *View
	Index   string // the index's name
	Entity  string // the entity's Go name, for labels
	What    string // what the query reads, for messages: the entity's name or "collection"
	Invalid error  // what its errors match (the root's ErrInvalidInput)
}

// Sort is a query's sort key condition.
type Sort struct {
	Func   string // the option, for messages: "SKBetween"
	Op     string // its operator: "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with" or "tree"
	Values [2]any // its values (the second only for BETWEEN)
}

// Plan is a checked query's key condition.
type Plan struct {
	Eq        map[string]types.AttributeValue // the equalities, which a cursor must keep
	Condition string                          // the KeyConditionExpression
	Ident     string                          // the identity of the condition, for cursors
	Partition string                          // the partition values, for messages
}

// Fail is the error of a query refused.
func (q *Query) Fail(format string, args ...any) error {
	return fmt.Errorf("singletable: Query %s: native index %s: "+format+": %w", append(append([]any{q.What, q.Index}, args...), q.Invalid)...)
}

// label names the i-th key attribute and the entity's field stored under it.
func (q *Query) label(i int) string {
	f := q.View.Fields[i]
	return f.Name + " (" + q.Entity + "." + f.GoName + ")"
}

// Plan checks the query of the key value sv (and sort, nil for none) against
// DynamoDB's rules and builds its key condition in b: an equality on every
// partition attribute, then on each sort attribute set from the left, then the
// sort condition on the last attribute its value sets. asEntity reads a sort
// condition's value as the entity's.
func (q *Query) Plan(b *expr.Builder, sv reflect.Value, sort *Sort, asEntity func(any) (reflect.Value, bool)) (Plan, error) {
	eq, cond, ident, err := q.keyCondition(sv, sort, asEntity)
	if err != nil {
		return Plan{}, err
	}
	v := q.View
	vals := make([]types.AttributeValue, len(v.Attrs))
	for i, a := range v.Attrs {
		vals[i] = eq[a.Name]
	}
	if reason := v.Oversize(q.Index, vals, MaxPartitionBytes, MaxSortBytes); reason != "" {
		return Plan{}, fmt.Errorf("singletable: Query %s: %s: %w", q.What, reason, q.Invalid)
	}
	parts := make([]string, 0, len(eq)+1)
	for _, a := range v.Attrs {
		if av, ok := eq[a.Name]; ok {
			parts = append(parts, b.Name(a.Name)+" = "+b.Value(av))
		}
	}
	if cond != nil {
		parts = append(parts, cond(b))
	}
	var pv []string
	for _, a := range v.Attrs[:v.NPartition] {
		pv = append(pv, Text(eq[a.Name]))
	}
	return Plan{Eq: eq, Condition: strings.Join(parts, " AND "), Ident: ident, Partition: strings.Join(pv, ", ")}, nil
}

// keyCondition returns the query's equalities, the condition on the last sort
// attribute it compares (nil: none), and the identity of both for cursors.
func (q *Query) keyCondition(sv reflect.Value, c *Sort, asEntity func(any) (reflect.Value, bool)) (map[string]types.AttributeValue, func(*expr.Builder) string, string, error) {
	attrs, np := q.View.Attrs, q.View.NPartition
	key, err := q.keyValues(sv)
	if err != nil {
		return nil, nil, "", err
	}
	eq := map[string]types.AttributeValue{}
	var ident strings.Builder
	addEq := func(i int, av types.AttributeValue) {
		eq[attrs[i].Name] = av
		ident.WriteString(attrs[i].Name + "=" + string(attrs[i].Type) + strconv.Quote(Text(av)) + "\x00")
	}
	for i := range np {
		addEq(i, key[i])
	}
	if c == nil {
		for i := np; i < len(attrs) && key[i] != nil; i++ {
			addEq(i, key[i])
		}
		return eq, nil, ident.String(), nil
	}
	vals, target, err := q.conditionValues(c, asEntity)
	if err != nil {
		return nil, nil, "", err
	}
	for i := target; i < len(attrs); i++ {
		if key[i] != nil {
			return nil, nil, "", q.Fail("the key value sets sort attribute %s, which the %s condition compares or follows; leave it unset in the key value", q.label(i), c.Func)
		}
	}
	for i := np; i < target; i++ {
		v, err := q.onlyValue(i, target, key[i], vals[0][i], vals[len(vals)-1][i])
		if err != nil {
			return nil, nil, "", err
		}
		addEq(i, v)
	}
	a := attrs[target]
	lo, hi := vals[0][target], vals[len(vals)-1][target]
	switch {
	case c.Op == "begins_with" && a.Type == types.ScalarAttributeTypeN:
		return nil, nil, "", q.Fail("SKBeginsWith does not apply to sort attribute %s, which holds numbers: use a comparison or SKBetween", q.label(target))
	case c.Op == "BETWEEN" && Compare(lo, hi) > 0:
		return nil, nil, "", q.Fail("SKBetween bounds of %s are reversed (%s > %s)", q.label(target), Text(lo), Text(hi))
	}
	ident.WriteString(c.Op + " " + a.Name + strconv.Quote(Text(lo)) + strconv.Quote(Text(hi)))
	cond := func(b *expr.Builder) string {
		name := b.Name(a.Name)
		switch c.Op {
		case "BETWEEN":
			return name + " BETWEEN " + b.Value(lo) + " AND " + b.Value(hi)
		case "begins_with":
			return "begins_with(" + name + ", " + b.Value(lo) + ")"
		}
		return name + " " + c.Op + " " + b.Value(lo)
	}
	return eq, cond, ident.String(), nil
}

// keyValues reads the key value's native attributes (nil where unset) and
// checks that it sets every partition attribute and sort attributes from the
// left, with no gaps.
func (q *Query) keyValues(sv reflect.Value) ([]types.AttributeValue, error) {
	attrs, np := q.View.Attrs, q.View.NPartition
	key := make([]types.AttributeValue, len(attrs))
	for i := range attrs {
		av, err := Input(q.View.Fields[i], sv)
		if err != nil {
			return nil, fmt.Errorf("singletable: Query %s: %w", q.What, err)
		}
		key[i] = av
	}
	for i := range np {
		if key[i] == nil {
			return nil, q.Fail("partition attribute %s is unset: DynamoDB needs an equality on every partition attribute (an empty string or a zero number is unset; a pointer field can hold 0)", q.label(i))
		}
	}
	for i := np + 1; i < len(attrs); i++ {
		if key[i] != nil && key[i-1] == nil {
			return nil, q.Fail("sort attribute %s is set but %s before it is not: DynamoDB compares sort attributes left to right, with no gaps", q.label(i), q.label(i-1))
		}
	}
	return key, nil
}

// conditionValues reads the sort attributes of the condition's value (both
// bounds of SKBetween) and returns them with the index of the attribute the
// condition compares: the last one its value sets.
func (q *Query) conditionValues(c *Sort, asEntity func(any) (reflect.Value, bool)) ([][]types.AttributeValue, int, error) {
	attrs, np := q.View.Attrs, q.View.NPartition
	switch {
	case len(attrs) == np:
		return nil, 0, q.Fail("it has no sort attributes, so %s does not apply", c.Func)
	case c.Op == "tree":
		return nil, 0, q.Fail("SKTree does not apply: nothing is rendered, so no key continues another; compare the sort attributes instead")
	}
	n := 1
	if c.Op == "BETWEEN" {
		n = 2
	}
	vals := make([][]types.AttributeValue, n)
	target := -1
	for j := range n {
		cv, ok := reflect.Value{}, false
		if asEntity != nil {
			cv, ok = asEntity(c.Values[j])
		}
		if !ok {
			return nil, 0, q.Fail("%s takes a value of %s (SK[%s]()), not %T: a native index has no rendered sort key text", c.Func, q.Entity, q.Entity, c.Values[j])
		}
		vals[j] = make([]types.AttributeValue, len(attrs))
		last := -1
		for i := np; i < len(attrs); i++ {
			av, err := Input(q.View.Fields[i], cv)
			if err != nil {
				return nil, 0, fmt.Errorf("singletable: Query %s: %w", q.What, err)
			}
			vals[j][i] = av
			if av != nil {
				last = i
			}
		}
		switch {
		case last < 0:
			return nil, 0, q.Fail("the %s value sets no sort attribute (%s)", c.Func, q.sortLabels())
		case j == 1 && last != target:
			return nil, 0, q.Fail("SKBetween bounds compare different sort attributes, %s and %s: both must set the same last one", q.label(target), q.label(last))
		}
		target = last
	}
	return vals, target, nil
}

// onlyValue returns the one value that sort attribute i, before the compared
// one (target), has in the key value and the condition's values, which must
// agree and give one.
func (q *Query) onlyValue(i, target int, cands ...types.AttributeValue) (types.AttributeValue, error) {
	var v types.AttributeValue
	for _, cand := range cands {
		switch {
		case cand == nil:
		case v == nil:
			v = cand
		case !Same(v, cand):
			return nil, q.Fail("sort attribute %s is %s in one value and %s in another: DynamoDB compares only the last sort attribute given, so every one before it needs one value", q.label(i), Text(v), Text(cand))
		}
	}
	if v == nil {
		return nil, q.Fail("sort attribute %s is not given, but the condition compares %s after it: DynamoDB needs an equality on every sort attribute before the one compared", q.label(i), q.label(target))
	}
	return v, nil
}

// sortLabels names the index's sort attributes and the entity's fields.
func (q *Query) sortLabels() string {
	var out []string
	for i := q.View.NPartition; i < len(q.View.Fields); i++ {
		out = append(out, q.label(i))
	}
	return strings.Join(out, ", ")
}

// Fields are the fields an entity stores under native index key attributes,
// each with where the first index names it: "native index ByX, key attribute
// \"x\"".
type Fields map[*codec.Field]string

// Add adds the fields of v, the entity's view of the index named index.
func (fs Fields) Add(index string, v *View) {
	for i, a := range v.Attrs {
		if f := v.Fields[i]; f != nil && fs[f] == "" {
			fs[f] = "native index " + index + ", key attribute " + strconv.Quote(a.Name)
		}
	}
}

// Refusal says why f, one of fs, cannot store fv: its value is one no index key
// can hold, and DynamoDB would refuse the whole write; "" otherwise (also for a
// value the codec refuses, the write's own error, or leaves out, which only
// keeps the item out of the index).
func (fs Fields) Refusal(f *codec.Field, fv reflect.Value) string {
	av, keep, err := f.Encode(fv)
	if err != nil || !keep {
		return ""
	}
	what := Unindexable(av)
	if what == "" {
		return ""
	}
	return fs[f] + " cannot hold " + what + ", and DynamoDB refuses the whole write: give a value, or tag the field omitempty to keep such items out of the index"
}

// DynamoDB's limits on a key's bytes (the root package's MaxPartitionKeyBytes
// and MaxSortKeyBytes), which a native key's attributes share.
const (
	MaxPartitionBytes = 2048
	MaxSortBytes      = 1024
)

// Size is the bytes DynamoDB counts of a key attribute's value towards a native
// key's aggregate limit: a string's UTF-8 bytes, a binary value's bytes, a
// number's stored size (about one byte per two significant digits, plus one).
func Size(av types.AttributeValue) int {
	switch av := av.(type) {
	case *types.AttributeValueMemberS:
		return len(av.Value)
	case *types.AttributeValueMemberB:
		return len(av.Value)
	case *types.AttributeValueMemberN:
		digits := strings.Trim(strings.TrimLeft(av.Value, "+-0"), ".")
		digits = strings.ReplaceAll(digits, ".", "")
		if i := strings.IndexAny(digits, "eE"); i >= 0 {
			digits = digits[:i]
		}
		return (len(digits)+1)/2 + 1
	}
	return 0
}

// Oversize says why the values vals (one per attribute of v, nil where not
// known) would break DynamoDB's aggregate limits on the key of index: the bytes
// of the partition attributes together at most maxPartition, of the sort
// attributes at most maxSort (DynamoDB refuses the write: "Aggregate size for
// HASH key attributes ... has exceeded limit"); "" otherwise. The reason names
// the fields and their sizes.
func (v *View) Oversize(index string, vals []types.AttributeValue, maxPartition, maxSort int) string {
	part := func(lo, hi, limit int, which string) string {
		total, n := 0, 0
		var names []string
		for i := lo; i < hi; i++ {
			if vals[i] == nil {
				continue
			}
			s := Size(vals[i])
			total += s
			n++
			name := v.Attrs[i].Name
			if f := v.Fields[i]; f != nil {
				name = f.GoName + " (" + strconv.Quote(v.Attrs[i].Name) + ")"
			}
			names = append(names, fmt.Sprintf("%s %d", name, s))
		}
		if total <= limit {
			return ""
		}
		return fmt.Sprintf("native index %s: its %s key attributes together hold %d bytes (%s), over DynamoDB's limit of %d bytes for a %s key, which DynamoDB refuses: shorten the values",
			index, which, total, strings.Join(names, " + "), limit, which)
	}
	if r := part(0, v.NPartition, maxPartition, "partition"); r != "" {
		return r
	}
	return part(v.NPartition, len(v.Attrs), maxSort, "sort")
}
