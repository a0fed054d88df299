package nativekey

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

var errInvalid = errors.New("invalid")

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func b(v string) types.AttributeValue { return &types.AttributeValueMemberB{Value: []byte(v)} }

// TestCheck: the refusals of an index's declaration, each matching invalid.
func TestCheck(t *testing.T) {
	lib := func(a string) bool { return a == "pk" }
	ok := Def{Name: "ByX", Partition: []Attr{{"x", "S"}}, Sort: []Attr{{"y", "N"}}}
	require.NoError(t, Check([]Def{ok}, lib, errInvalid))
	for want, d := range map[string]Def{
		"a native index is global":                 {Name: "I", Local: true, Partition: []Attr{{"x", "S"}}},
		"PartitionKey and SortKey must be empty":   {Name: "I", SortKey: "sk", Partition: []Attr{{"x", "S"}}},
		"5 partition attributes":                   {Name: "I", Partition: []Attr{{"a", "S"}, {"b", "S"}, {"c", "S"}, {"d", "S"}, {"e", "S"}}},
		"5 sort attributes":                        {Name: "I", Partition: []Attr{{"a", "S"}}, Sort: []Attr{{"b", "S"}, {"c", "S"}, {"d", "S"}, {"e", "S"}, {"f", "S"}}},
		"an attribute has no name":                 {Name: "I", Partition: []Attr{{"", "S"}}},
		`attribute "x" is given twice`:             {Name: "I", Partition: []Attr{{"x", "S"}}, Sort: []Attr{{"x", "S"}}},
		`attribute "x" has type "BOOL"`:            {Name: "I", Partition: []Attr{{"x", "BOOL"}}},
		`attribute "pk" is one the library writes`: {Name: "I", Partition: []Attr{{"pk", "S"}}},
	} {
		err := Check([]Def{d}, lib, errInvalid)
		require.ErrorIs(t, err, errInvalid, want)
		assert.Contains(t, err.Error(), `native index "I": `+want)
	}
	err := Check([]Def{ok, {Name: "ByY", Partition: []Attr{{"y", "S"}}}}, lib, errInvalid)
	assert.EqualError(t, err, `native index "ByY": attribute "y" is S here but N in index ByX; DynamoDB gives an attribute one type per table: invalid`)
}

type row struct {
	Tenant string    `dynamodbav:"tenant"`
	Score  *int      `dynamodbav:"score"`
	Rank   int       `dynamodbav:"rank"`
	At     time.Time `dynamodbav:"at"`
	AtUnix time.Time `dynamodbav:"atUnix,unixtime"`
	Tags   []string  `dynamodbav:"tags,stringset"`
	Raw    []byte    `dynamodbav:"raw"`
	Num    int       `dynamodbav:"num,string"`
	Deep   **string  `dynamodbav:"deep"`
}

func fields(t *testing.T) *codec.Plan {
	p, err := codec.PlanFor(reflect.TypeFor[row]())
	require.NoError(t, err)
	return p
}

// TestFieldReason: which fields a key attribute can read.
func TestFieldReason(t *testing.T) {
	p := fields(t)
	f := func(name string) *codec.Field { x, ok := p.Field(name); require.True(t, ok, name); return x }
	assert.Empty(t, FieldReason(f("tenant"), Attr{"tenant", "S"}, false))
	assert.Empty(t, FieldReason(f("score"), Attr{"score", "N"}, true))
	assert.Empty(t, FieldReason(f("raw"), Attr{"raw", "B"}, false))
	assert.Empty(t, FieldReason(f("num"), Attr{"num", "S"}, false))
	assert.Empty(t, FieldReason(f("atUnix"), Attr{"atUnix", "N"}, true))
	assert.Empty(t, FieldReason(f("at"), Attr{"at", "S"}, false))
	assert.Equal(t, "is declared N, but the field string is stored as S", FieldReason(f("tenant"), Attr{"tenant", "N"}, false))
	assert.Contains(t, FieldReason(f("at"), Attr{"at", "S"}, true), "does not sort in time order")
	assert.Equal(t, "is a key attribute, which must be a string, number or binary (S, N or B), but the field is []string with a set or nullempty option", FieldReason(f("tags"), Attr{"tags", "S"}, false))
	assert.NotEmpty(t, FieldReason(f("deep"), Attr{"deep", "S"}, false), "a **string is refused, as before the move (one pointer is taken off)")
}

// TestScalars: equality and order as DynamoDB's, texts, unindexable values.
func TestScalars(t *testing.T) {
	assert.True(t, Same(n("1.50"), n("1.5")))
	assert.False(t, Same(s("1"), n("1")))
	assert.True(t, Same(b("a"), b("a")))
	assert.False(t, Same(nil, s("")))
	assert.Equal(t, -1, Compare(n("9"), n("10")))
	assert.Equal(t, 1, Compare(s("b"), s("a")))
	assert.Equal(t, 0, Compare(b("x"), b("x")))
	assert.Equal(t, "10", Text(n("10")))
	assert.Equal(t, "an empty string", Unindexable(s("")))
	assert.Equal(t, "an empty binary value", Unindexable(b("")))
	assert.Equal(t, "NULL (a nil value)", Unindexable(&types.AttributeValueMemberNULL{Value: true}))
	assert.Empty(t, Unindexable(s("x")))
	attr, left := Leaves(map[string]types.AttributeValue{"t": s("a")}, map[string]types.AttributeValue{"t": s("b")})
	assert.True(t, left)
	assert.Equal(t, "t", attr)
	_, left = Leaves(map[string]types.AttributeValue{"t": n("1")}, map[string]types.AttributeValue{"t": n("1.0"), "x": s("y")})
	assert.False(t, left)
	assert.Equal(t, []string{"t S", "n N"}, Texts([]Attr{{"t", "S"}, {"n", "N"}}))
	ks := KeySchema([]Attr{{"t", "S"}}, []Attr{{"a", "N"}, {"b", "S"}})
	require.Len(t, ks, 3)
	assert.Equal(t, types.KeyTypeHash, ks[0].KeyType)
	assert.Equal(t, "b", *ks[2].AttributeName)
	assert.Equal(t, types.KeyTypeRange, ks[2].KeyType)
}

func query(t *testing.T) *Query {
	p := fields(t)
	v := &View{Attrs: []Attr{{"tenant", "S"}, {"score", "N"}, {"rank", "N"}}, NPartition: 1}
	for _, a := range v.Attrs {
		f, _ := p.Field(a.Name)
		v.Fields = append(v.Fields, f)
	}
	return &Query{View: v, Index: "ByScore", Entity: "Row", What: "Row", Invalid: errInvalid}
}

func asRow(v any) (reflect.Value, bool) {
	r, ok := v.(row)
	return reflect.ValueOf(r), ok
}

func ptr(i int) *int { return &i }

// TestPlan: the key conditions a query sends.
func TestPlan(t *testing.T) {
	q := query(t)
	var eb expr.Builder
	p, err := q.Plan(&eb, reflect.ValueOf(row{Tenant: "acme", Score: ptr(0)}), nil, asRow)
	require.NoError(t, err)
	assert.Equal(t, "#n0 = :v0 AND #n1 = :v1", p.Condition)
	assert.Equal(t, "acme", p.Partition)
	assert.Equal(t, "tenant=S\"acme\"\x00score=N\"0\"\x00", p.Ident)
	assert.Len(t, p.Eq, 2)

	var bb expr.Builder
	p, err = q.Plan(&bb, reflect.ValueOf(row{Tenant: "acme"}), &Sort{Func: "SKBetween", Op: "BETWEEN", Values: [2]any{row{Score: ptr(1), Rank: 2}, row{Score: ptr(1), Rank: 9}}}, asRow)
	require.NoError(t, err)
	assert.Equal(t, "#n0 = :v0 AND #n1 = :v1 AND #n2 BETWEEN :v2 AND :v3", p.Condition)
	assert.Equal(t, map[string]string{"#n0": "tenant", "#n1": "score", "#n2": "rank"}, bb.Names())

	var gb expr.Builder
	p, err = q.Plan(&gb, reflect.ValueOf(row{Tenant: "acme"}), &Sort{Func: "SKGreaterThan", Op: ">", Values: [2]any{row{Score: ptr(5)}}}, asRow)
	require.NoError(t, err)
	assert.Equal(t, "#n0 = :v0 AND #n1 > :v1", p.Condition)
	assert.Equal(t, "tenant=S\"acme\"\x00> score\"5\"\"5\"", p.Ident)
}

// TestPlanRefused: each of DynamoDB's rules, before anything is sent.
func TestPlanRefused(t *testing.T) {
	q := query(t)
	for want, c := range map[string]struct {
		key  row
		sort *Sort
	}{
		"partition attribute tenant (Row.Tenant) is unset":                                             {row{}, nil},
		"sort attribute rank (Row.Rank) is set but score (Row.Score) before it is not":                 {row{Tenant: "a", Rank: 1}, nil},
		"the key value sets sort attribute score (Row.Score), which the SKLessThan condition compares": {row{Tenant: "a", Score: ptr(1)}, &Sort{Func: "SKLessThan", Op: "<", Values: [2]any{row{Score: ptr(2)}}}},
		"SKTree does not apply":                                                                     {row{Tenant: "a"}, &Sort{Func: "SKTree", Op: "tree", Values: [2]any{row{}}}},
		"SKEqual takes a value of Row (SK[Row]()), not string":                                      {row{Tenant: "a"}, &Sort{Func: "SKEqual", Op: "=", Values: [2]any{"x"}}},
		"the SKEqual value sets no sort attribute (score (Row.Score), rank (Row.Rank))":             {row{Tenant: "a"}, &Sort{Func: "SKEqual", Op: "=", Values: [2]any{row{}}}},
		"SKBeginsWith does not apply to sort attribute score (Row.Score)":                           {row{Tenant: "a"}, &Sort{Func: "SKBeginsWith", Op: "begins_with", Values: [2]any{row{Score: ptr(1)}}}},
		"SKBetween bounds of score (Row.Score) are reversed (9 > 1)":                                {row{Tenant: "a"}, &Sort{Func: "SKBetween", Op: "BETWEEN", Values: [2]any{row{Score: ptr(9)}, row{Score: ptr(1)}}}},
		"SKBetween bounds compare different sort attributes":                                        {row{Tenant: "a"}, &Sort{Func: "SKBetween", Op: "BETWEEN", Values: [2]any{row{Score: ptr(1)}, row{Score: ptr(1), Rank: 2}}}},
		"sort attribute score (Row.Score) is 1 in one value and 2 in another":                       {row{Tenant: "a"}, &Sort{Func: "SKBetween", Op: "BETWEEN", Values: [2]any{row{Score: ptr(1), Rank: 1}, row{Score: ptr(2), Rank: 2}}}},
		"sort attribute score (Row.Score) is not given, but the condition compares rank (Row.Rank)": {row{Tenant: "a"}, &Sort{Func: "SKEqual", Op: "=", Values: [2]any{row{Rank: 3}}}},
	} {
		var eb expr.Builder
		_, err := q.Plan(&eb, reflect.ValueOf(c.key), c.sort, asRow)
		require.ErrorIs(t, err, errInvalid, want)
		assert.Contains(t, err.Error(), "singletable: Query Row: native index ByScore: "+want)
	}
	q.View.Attrs, q.View.NPartition, q.View.Fields = q.View.Attrs[:1], 1, q.View.Fields[:1]
	var eb expr.Builder
	_, err := q.Plan(&eb, reflect.ValueOf(row{Tenant: "a"}), &Sort{Func: "SKEqual", Op: "=", Values: [2]any{row{}}}, asRow)
	assert.ErrorContains(t, err, "it has no sort attributes, so SKEqual does not apply")
}

// TestView: membership and the attributes missing.
func TestView(t *testing.T) {
	v := &View{Attrs: []Attr{{"a", "S"}, {"b", "S"}}, NPartition: 1, Fields: []*codec.Field{{}, nil}}
	assert.False(t, v.Member())
	assert.Equal(t, []string{"b"}, v.Missing())
	v.Fields[1] = &codec.Field{}
	assert.True(t, v.Member())
}

type keyed struct {
	Tenant string  `dynamodbav:"tenant"`
	Code   []byte  `dynamodbav:"code"`
	Ref    *string `dynamodbav:"ref"`
	Opt    string  `dynamodbav:"opt,omitempty"`
}

// TestFieldsRefusal: values no index key can hold, named by the first index.
func TestFieldsRefusal(t *testing.T) {
	p, err := codec.PlanFor(reflect.TypeFor[keyed]())
	require.NoError(t, err)
	f := func(name string) *codec.Field { x, _ := p.Field(name); return x }
	fs := Fields{}
	fs.Add("ByT", &View{Attrs: []Attr{{"tenant", "S"}, {"code", "B"}}, NPartition: 1, Fields: []*codec.Field{f("tenant"), f("code")}})
	fs.Add("ByR", &View{Attrs: []Attr{{"tenant", "S"}, {"ref", "S"}, {"opt", "S"}, {"x", "S"}}, NPartition: 1, Fields: []*codec.Field{f("tenant"), f("ref"), f("opt"), nil}})
	assert.Len(t, fs, 4)
	assert.Equal(t, `native index ByT, key attribute "tenant"`, fs[f("tenant")])
	v := reflect.ValueOf(keyed{})
	val := func(name string) reflect.Value { fv, _ := f(name).ValueOf(v); return fv }
	assert.Equal(t, `native index ByT, key attribute "tenant" cannot hold an empty string, and DynamoDB refuses the whole write: give a value, or tag the field omitempty to keep such items out of the index`, fs.Refusal(f("tenant"), val("tenant")))
	assert.Contains(t, fs.Refusal(f("code"), reflect.ValueOf([]byte{})), "cannot hold an empty binary value")
	assert.Contains(t, fs.Refusal(f("ref"), val("ref")), `native index ByR, key attribute "ref" cannot hold NULL (a nil value)`)
	assert.Empty(t, fs.Refusal(f("opt"), val("opt")), "left out: only not in the index")
	assert.Empty(t, fs.Refusal(f("tenant"), reflect.ValueOf("acme")))
}

// TestInput: a field is unset when omitempty would leave it out, or a zero
// time, or an empty slice; a pointer can hold 0.
func TestInput(t *testing.T) {
	p := fields(t)
	in := func(name string, r row) types.AttributeValue {
		f, _ := p.Field(name)
		av, err := Input(f, reflect.ValueOf(r))
		require.NoError(t, err)
		return av
	}
	assert.Nil(t, in("tenant", row{}))
	assert.Nil(t, in("rank", row{}))
	assert.Nil(t, in("score", row{}))
	assert.Nil(t, in("at", row{}))
	assert.Nil(t, in("raw", row{Raw: []byte{}}))
	assert.Equal(t, n("0"), in("score", row{Score: ptr(0)}))
	assert.Equal(t, s("acme"), in("tenant", row{Tenant: "acme"}))
	assert.Equal(t, s("7"), in("num", row{Num: 7}))
	assert.Equal(t, n("1700000000"), in("atUnix", row{AtUnix: time.Unix(1700000000, 0)}))
}
