package attrvalue

import (
	"math/big"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
)

func TestNumberProblem(t *testing.T) {
	ok := []string{"0", "-0", "0.000", "1", "+1", "-1.5", ".5", "5.", "1e3", "1E-130", "-1E-130",
		"9.9999999999999999999999999999999999999E+125", strings.Repeat("9", 38), "0." + strings.Repeat("0", 200) + "1e200",
		"12345678901234567890123456789012345678000"}
	for _, s := range ok {
		assert.Empty(t, NumberProblem(s), s)
	}
	bad := map[string]string{
		"":                             "not a decimal number",
		".":                            "not a decimal number",
		"1e":                           "not a decimal number",
		"1e+":                          "not a decimal number",
		"--1":                          "not a decimal number",
		"0x10":                         "not a decimal number",
		" 1":                           "not a decimal number",
		"NaN":                          "not a number DynamoDB can store",
		"-Infinity":                    "not a number DynamoDB can store",
		strings.Repeat("9", 39):        "39 significant digits",
		"1E+126":                       "too large",
		"1E-131":                       "too small",
		"1" + strings.Repeat("0", 126): "too large",
	}
	for s, want := range bad {
		assert.Contains(t, NumberProblem(s), want, "%q", s)
	}
}

// FuzzNumberProblem checks the number grammar against math/big: what it accepts
// parses as a decimal, and its verdict on magnitude agrees with big.Float's.
func FuzzNumberProblem(f *testing.F) {
	for _, s := range []string{"0", "1.5e3", "-1E-130", "1E+126", "9.99e125", ".5", "5.", "1e-999999999", "NaN", "0e10000000000000000000", "1e10000000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := NumberProblem(s)
		x, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if p == "" {
			if err != nil && strings.Contains(err.Error(), "out of range") {
				// big.ParseFloat's exponent is an int: only a zero has one this long.
				if strings.Trim(strings.TrimLeft(strings.SplitN(strings.ToLower(s), "e", 2)[0], "+-"), "0.") != "" {
					t.Fatalf("%q accepted with an exponent out of range", s)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q accepted, but it is not a decimal number: %v", s, err)
			}
			if x.Sign() != 0 {
				if e := x.MantExp(nil); e > 420 || e < -435 { // 2^420 > 1e126, 2^-435 < 1e-130
					t.Fatalf("%q accepted with binary exponent %d", s, e)
				}
			}
		}
	})
}

func TestEqual(t *testing.T) {
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	s := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	assert.True(t, Equal(n("1.50"), n("1.5")), "numbers by value")
	assert.False(t, Equal(n("1"), s("1")), "types differ")
	assert.True(t, Equal(nil, nil))
	assert.False(t, Equal(nil, &types.AttributeValueMemberNULL{Value: true}), "absent is not NULL")
	assert.True(t, Equal(&types.AttributeValueMemberNS{Value: []string{"1", "2.0"}}, &types.AttributeValueMemberNS{Value: []string{"2", "1"}}), "sets in any order")
	assert.False(t, Equal(&types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), n("2")}}, &types.AttributeValueMemberL{Value: []types.AttributeValue{n("2"), n("1")}}), "lists in order")
	assert.True(t, Equal(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": s("x"), "b": n("1")}}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"b": n("1.0"), "a": s("x")}}))
	assert.False(t, Equal(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": s("x")}}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"b": s("x")}}))
}

func TestCheckAndSize(t *testing.T) {
	size, p := Check(&types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ab"}, &types.AttributeValueMemberS{Value: "\xff"}}})
	assert.Equal(t, 0, size)
	if assert.NotNil(t, p) {
		assert.Equal(t, "[1]", p.Path)
		assert.Equal(t, "not valid UTF-8", p.What)
	}
	_, p = Check(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "NaN"}}})
	if assert.NotNil(t, p) {
		assert.Equal(t, ".n", p.Path)
	}
	_, p = Check(nil)
	assert.NotNil(t, p)
	assert.Equal(t, len("id")+len("abc")+len("n")+len("12"), Size(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "abc"}, "n": &types.AttributeValueMemberN{Value: "12"}}))
}

// TestKind names each kind of value for messages.
func TestKind(t *testing.T) {
	for want, av := range map[string]types.AttributeValue{
		"a number (N)": &types.AttributeValueMemberN{}, "binary (B)": &types.AttributeValueMemberB{}, "a boolean (BOOL)": &types.AttributeValueMemberBOOL{},
		"NULL": &types.AttributeValueMemberNULL{}, "a list (L)": &types.AttributeValueMemberL{}, "a map (M)": &types.AttributeValueMemberM{},
		"a string set (SS)": &types.AttributeValueMemberSS{}, "a number set (NS)": &types.AttributeValueMemberNS{}, "a binary set (BS)": &types.AttributeValueMemberBS{},
		"*types.AttributeValueMemberS": &types.AttributeValueMemberS{}, "<nil>": nil,
	} {
		assert.Equal(t, want, Kind(av))
	}
}

func TestMerge(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	m := func(kv ...any) types.AttributeValue {
		out := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return &types.AttributeValueMemberM{Value: out}
	}
	l := func(vs ...types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{Value: vs} }
	// cur holds "extra", which T does not model: a change to "a" keeps it.
	cur := m("a", s("1"), "extra", s("x"), "gone", s("g"))
	got := Merge(cur, m("a", s("1"), "gone", s("g")), m("a", s("2")))
	if want := m("a", s("2"), "extra", s("x")); !Equal(got, want) {
		t.Fatalf("map: %v", got)
	}
	// Lists of one length merge element by element; a nested map keeps its extras.
	got = Merge(l(m("k", s("1"), "x", s("y")), s("b")), l(m("k", s("1")), s("b")), l(m("k", s("2")), s("b")))
	if want := l(m("k", s("2"), "x", s("y")), s("b")); !Equal(got, want) {
		t.Fatalf("list: %v", got)
	}
	// Lengths differ, or kinds: after is taken whole.
	if got := Merge(l(s("a")), l(s("a")), l(s("a"), s("b"))); !Equal(got, l(s("a"), s("b"))) {
		t.Fatalf("list lengths: %v", got)
	}
	if got := Merge(s("a"), m(), m("k", s("v"))); !Equal(got, m("k", s("v"))) {
		t.Fatalf("kinds: %v", got)
	}
	if got := Merge(s("a"), s("a"), nil); got != nil {
		t.Fatalf("removed: %v", got)
	}
}
