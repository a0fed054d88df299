package docpath

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// TestDocPathParse covers the path grammar.
func TestDocPathParse(t *testing.T) {
	for in, want := range map[string]string{
		"a": "a", "a.b": "a.b", "a[0]": "a[0]", "a[10].b[2].c": "a[10].b[2].c", "a#b.:c": "a#b.:c", "size": "size",
	} {
		p, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, p.String())
	}
	for _, in := range []string{"", ".", "a.", ".a", "a..b", "[0]", "a[", "a[]", "a[x]", "a[01]", "a[-1]", "a[+1]", "a]", "a[0]b", "a[99999999999999999999]", "a\xff"} {
		_, err := Parse(in)
		assert.Error(t, err, "%q", in)
	}
}

// TestParseErrors asserts the messages of Parse and that each wraps ErrSyntax.
func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":          `bad document path "" at byte 0: an empty path`,
		"a..b":      `bad document path "a..b" at byte 2: an empty name`,
		"[0]":       `bad document path "[0]" at byte 0: a path starts with an attribute name`,
		"a[1":       `bad document path "a[1" at byte 1: unclosed [`,
		"a[01]":     `bad document path "a[01]" at byte 2: an index is a decimal number without sign or leading zeros`,
		"a[409601]": `bad document path "a[409601]" at byte 2: index 409601 is past any list an item can hold`,
		"a[0]b":     `bad document path "a[0]b" at byte 4: expected . or [ here`,
	} {
		_, err := Parse(in)
		require.Error(t, err, in)
		assert.Equal(t, want, err.Error())
		assert.ErrorIs(t, err, ErrSyntax)
	}
	_, err := Parse("a[409600]")
	assert.NoError(t, err, "MaxIndex itself")
	deep := "a"
	for range MaxSteps - 1 {
		deep += ".b"
	}
	_, err = Parse(deep)
	require.NoError(t, err, "MaxSteps steps")
	_, err = Parse(deep + ".c")
	assert.ErrorContains(t, err, "more than 32 steps")
}

// TestPathExprOverlapsLookup covers the rendering into an expression, the
// overlap rule and lookups in an item.
func TestPathExprOverlapsLookup(t *testing.T) {
	p, err := Parse("lines[1].sku")
	require.NoError(t, err)
	var b expr.Builder
	assert.Equal(t, "#n0[1].#n1", p.Expr(&b))
	assert.Equal(t, map[string]string{"#n0": "lines", "#n1": "sku"}, b.Names())
	assert.True(t, p.HasIndex())
	q, _ := Parse("lines.sku")
	assert.False(t, q.HasIndex())

	for _, c := range []struct {
		a, b string
		want bool
	}{{"a", "a.b", true}, {"a.b", "a", true}, {"a.b", "a.c", false}, {"a[1]", "a[1].x", true}, {"a[1]", "a[2]", false}, {"a", "b", false}} {
		pa, _ := Parse(c.a)
		pb, _ := Parse(c.b)
		assert.Equal(t, c.want, pa.Overlaps(pb), "%s / %s", c.a, c.b)
	}

	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"lines": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"sku": s("s0")}},
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"sku": s("s1")}},
		}},
		"n": s("x"),
	}
	for in, want := range map[string]types.AttributeValue{
		"lines[1].sku": s("s1"), "lines[0].sku": s("s0"), "lines[2].sku": nil, "lines.sku": nil, "lines[0][0]": nil, "n.x": nil, "missing": nil,
	} {
		pp, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, pp.Lookup(item), in)
	}
}

type line struct {
	SKU string `dynamodbav:"sku"`
	Qty int    `dynamodbav:"qty,omitempty"`
}

type doc struct {
	Tags   []string          `dynamodbav:"tags"`
	Labels []string          `dynamodbav:"labels,stringset"`
	Lines  []line            `dynamodbav:"lines"`
	Meta   map[string]string `dynamodbav:"meta"`
	Fixed  [3]int            `dynamodbav:"fixed"`
	Any    any               `dynamodbav:"any"`
	When   time.Time         `dynamodbav:"when"`
	Bin    []byte            `dynamodbav:"bin"`
	N      int               `dynamodbav:"n"`
	Ptr    *[]line           `dynamodbav:"ptr"`
}

var errInvalid = errors.New("invalid input")

func resolve(t *testing.T, path string) (*Resolved, error) {
	t.Helper()
	plan, err := codec.PlanFor(reflect.TypeFor[doc]())
	require.NoError(t, err)
	p, err := Parse(path)
	require.NoError(t, err, path)
	top, ok := plan.Field(p.Steps[0].Name)
	require.True(t, ok, path)
	return Resolve(p, top, top.Name+" (doc)", errInvalid)
}

// TestResolve walks paths through the types and names the step that fails.
func TestResolve(t *testing.T) {
	for path, leaf := range map[string]reflect.Type{
		"tags[2]": reflect.TypeFor[string](), "lines[0].sku": reflect.TypeFor[string](), "meta.k": reflect.TypeFor[string](),
		"fixed[2]": reflect.TypeFor[int](), "ptr[1].qty": reflect.TypeFor[int](), "n": reflect.TypeFor[int](),
	} {
		r, err := resolve(t, path)
		require.NoError(t, err, path)
		assert.Equal(t, leaf, r.Leaf, path)
		assert.Equal(t, path, r.Text)
	}
	for path, want := range map[string]string{
		"any.x":        `any (doc) at "any" is an interface (interface {}): its shape is not known, so no path goes into it; set the whole value: invalid input`,
		"when.x":       `when (doc) at "when" is a time.Time, stored as one value: no path goes into it: invalid input`,
		"n[0]":         `n (doc) at "n" is a int, not a list: [0] does not apply: invalid input`,
		"bin[0]":       `bin (doc) at "bin" is binary ([]uint8), not a list: [0] does not apply: invalid input`,
		"labels[0]":    `labels (doc) at "labels" is a set, whose elements have no index: invalid input`,
		"fixed[3]":     `fixed (doc) at "fixed" is a [3]int: index 3 is out of it: invalid input`,
		"lines[0].skv": `lines (doc) at "lines[0]" is a docpath.line, which stores no attribute "skv" (did you mean "sku"?): invalid input`,
		"tags.x":       `tags (doc) at "tags" is a []string, not a map or a struct: .x does not apply: invalid input`,
	} {
		_, err := resolve(t, path)
		require.Error(t, err, path)
		assert.Equal(t, want, err.Error(), path)
		assert.ErrorIs(t, err, errInvalid, path)
	}
}

// TestResolvedEncode encodes values at a path's end as the owner field would.
func TestResolvedEncode(t *testing.T) {
	r, err := resolve(t, "lines[0].sku")
	require.NoError(t, err)
	av, keep, err := r.Encode(reflect.ValueOf("s9"))
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "s9"}, av)

	r, err = resolve(t, "lines[0].qty")
	require.NoError(t, err)
	_, keep, err = r.Encode(reflect.ValueOf(0))
	require.NoError(t, err)
	assert.False(t, keep, "omitempty leaves a zero qty out")

	r, err = resolve(t, "meta.k")
	require.NoError(t, err)
	av, keep, err = r.Encode(reflect.ValueOf("v"))
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "v"}, av)

	r, err = resolve(t, "ptr[0]")
	require.NoError(t, err)
	av, keep, err = r.Encode(reflect.ValueOf(line{SKU: "a", Qty: 2}))
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"sku": &types.AttributeValueMemberS{Value: "a"}, "qty": &types.AttributeValueMemberN{Value: "2"}}}, av)

	r, err = resolve(t, "labels")
	require.NoError(t, err)
	assert.True(t, r.IsSet(r.Leaf), "a stringset field")
	r, err = resolve(t, "tags")
	require.NoError(t, err)
	assert.False(t, r.IsSet(r.Leaf))
	assert.True(t, r.IsSet(reflect.TypeFor[[][]byte]()), "a [][]byte is a binary set")
}
