package codec

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func asFieldError(err error, fe **FieldError) bool { return errors.As(err, fe) }

func ptr[T any](v T) *T { return &v }

var (
	t0   = time.Date(2024, 2, 29, 23, 59, 58, 120000000, time.UTC)
	tEST = time.Date(1999, 12, 31, 19, 0, 0, 1, time.FixedZone("EST", -5*3600))
)

// fullKitchen sets every field of Kitchen to a non-zero value.
func fullKitchen() Kitchen {
	s := "pointed"
	ps := &s
	one := 1
	return Kitchen{
		S: "s", SP: ptr("sp"), SO: "so", SN: "sn", B: true, BP: ptr(false), BO: true,
		I: -1, I8: -8, I16: -16, I32: -32, I64: math.MinInt64, U: 1, U8: 8, U16: 16, U32: 32, U64: math.MaxUint64,
		F32: 1.5, F64: 1e21, FS: -0.25, IS: 42, IO: 7, IN: 9, IP: ptr(0), FP: ptr(3.25), IPO: ptr(0),
		Bytes: []byte{1, 2, 3}, BytesO: []byte{}, Blob: Blob("blob"), Arr: ByteArr{1, 2, 3, 4},
		T: t0, TP: ptr(tEST), TU: t0, TUP: ptr(t0), TO: t0, UT: attributevalue.UnixTime(t0), MT: MyTime(tEST),
		Strs: []string{"a", "", "c"}, StrsO: []string{"x"}, StrsOE: []string{"", "b", ""}, StrsNE: []string{"", "b"},
		SS: []string{"x", "y"}, SSO: []string{"", "z"}, Ints: []int{3, 0, -3}, NS: []int{1, 2}, FNS: []float64{0.5, 1e-7},
		BS: [][]byte{{1}, {}, {2, 3}}, BSet: []Blob{Blob("a"), Blob("b")}, Bools: []bool{true, false},
		PtrStrs: []*string{ptr("p"), nil}, Matrix: Matrix{{1, 2}, nil, {}}, TimeSS: []time.Time{t0, tEST},
		M: map[string]string{"k": "v", "e": ""}, MI: map[string]int{"one": 1, "zero": 0},
		MO: map[string]string{"k": "v", "e": ""}, MN: map[string]string{"k": "v", "e": ""},
		MS: map[Status]int{"OPEN": 1}, MInt: map[int]string{1: "one", -2: "minus two"},
		MP: map[string]*int{"one": &one, "nil": nil}, MSl: map[string][]string{"l": {"a"}, "n": nil},
		Counts: Counts{"c": 3}, Tags: Tags{"t1", "t2"}, Attrs: Attrs{"a": "b"},
		IntArr: [3]int{1, 2, 3}, StrArr: [2]string{"", "b"},
		Any: "dynamic", AnyO: []string(nil), Anys: []any{"a", 1.5, nil, []any{true}},
		AnyMap:    map[string]any{"s": "x", "n": 2.0, "m": map[string]any{"deep": []any{}}},
		Nested:    Inner{X: "x", Y: 1, T: t0, P: &Inner{X: "deeper"}},
		NestedP:   &Inner{X: "np"},
		NestedPO:  &Inner{},
		Nesteds:   []Inner{{X: "n1"}, {Y: 2}},
		NestedPs:  []*Inner{{X: "p1"}, nil},
		NestedMap: map[string]Inner{"a": {X: "ma"}},
		Status:    "ACTIVE", Count: 12, Money: 9.99, Flag: true, Num: "12.50", NumS: "7",
		PP: &ps,
		VM: valMarshaler{A: 5}, VMP: &valMarshaler{A: 6}, PM: ptrMarshaler{B: "abc"}, PMP: &ptrMarshaler{B: "de"},
		VMs: []valMarshaler{{A: 1}}, PMs: []ptrMarshaler{{B: "x"}}, PMMap: map[string]ptrMarshaler{"k": {B: "yy"}},
		NilM: "declined", EM: 12,
		Renamed: "r", Skip: "skip", Dash: "dash", unexported: "u",
		Base:           Base{ID: "id-1", Created: t0, Shadow: "base shadow"},
		PtrBase:        &PtrBase{Note: "note", Shadow: "ptr shadow"},
		unexportedBase: unexportedBase{Visible: "v", hidden: "h"},
	}
}

// emptyKitchen has every pointer set to a zero value and every slice and map empty but not nil.
func emptyKitchen() Kitchen {
	return Kitchen{
		SP: ptr(""), BP: ptr(false), IP: ptr(0), FP: ptr(0.0), IPO: ptr(0), TP: &time.Time{}, TUP: &time.Time{},
		Bytes: []byte{}, BytesO: []byte{}, Blob: Blob{},
		Strs: []string{}, StrsO: []string{}, StrsOE: []string{}, StrsNE: []string{}, SS: []string{}, SSO: []string{},
		Ints: []int{}, NS: []int{}, FNS: []float64{}, BS: [][]byte{}, BSet: []Blob{}, Bools: []bool{},
		PtrStrs: []*string{}, Matrix: Matrix{}, TimeSS: []time.Time{},
		M: map[string]string{}, MI: map[string]int{}, MO: map[string]string{}, MN: map[string]string{},
		MS: map[Status]int{}, MInt: map[int]string{}, MP: map[string]*int{}, MSl: map[string][]string{},
		Counts: Counts{}, Tags: Tags{}, Attrs: Attrs{},
		Any: 0, AnyO: "", Anys: []any{}, AnyMap: map[string]any{},
		NestedP: &Inner{}, Nesteds: []Inner{}, NestedPs: []*Inner{}, NestedMap: map[string]Inner{},
		PP: new(*string), VMP: &valMarshaler{}, PMP: &ptrMarshaler{}, VMs: []valMarshaler{}, PMs: []ptrMarshaler{},
		PMMap:   map[string]ptrMarshaler{},
		PtrBase: &PtrBase{},
	}
}

// Small types for rules the kitchen sink cannot show.
type (
	embA struct {
		Name string
		A    string
	}
	embB struct {
		Name string
		B    string
	}
	Conflict struct { // Name is ambiguous between embA and embB: dropped
		embA
		embB
	}
	Winner struct { // the shallower Name wins
		embA
		Name string
	}
	EmbX struct {
		Name string
		A    string
	}
	TaggedEmbedded struct { // a named embedded struct is a map attribute
		EmbX   `dynamodbav:"a"`
		Base   `dynamodbav:"base"`
		*Inner `dynamodbav:"inner"`
	}
	DeepPtr struct {
		*Mid
		Top string
	}
	Mid struct {
		*Base
		MidField int
	}
	Recursive struct {
		Name     string
		Children []Recursive
		Next     *Recursive `dynamodbav:",omitempty"`
		ByName   map[string]*Recursive
	}
	Ifaces struct {
		A, B, C, D, E, F, G, H any
		O                      any `dynamodbav:",omitempty"`
		SS                     any `dynamodbav:",stringset"`
		U                      any `dynamodbav:",unixtime"`
		N                      any `dynamodbav:",nullempty"`
	}
	Arrays struct {
		Ints  [3]int
		Ptrs  [2]*int
		Set   [2]string `dynamodbav:",stringset"`
		Bytes [2]byte
		Inner [1]Inner
	}
	Funcs struct {
		F  funcMarshaler
		FN funcMarshaler
	}
	NumKeys struct {
		I map[int]int
		U map[uint8]string
		F map[float64]bool
		B map[bool]string
	}
	Errs struct {
		A errMarshaler
	}
	EmptyKey struct {
		M map[string]string
	}
	BadSet struct {
		S []*string `dynamodbav:",stringset"`
	}
	NestedRenamedTime struct {
		At MyTime `dynamodbav:"at,unixtime"`
	}
)

func TestEncodeMatchesAttributeValue(t *testing.T) {
	one := 1
	cases := []struct {
		name string
		v    any
	}{
		{"kitchen/zero", Kitchen{}},
		{"kitchen/full", fullKitchen()},
		{"kitchen/empty", emptyKitchen()},
		{"order", sampleOrder()},
		{"order/zero", Order{}},
		{"conflict", Conflict{embA{"a", "A"}, embB{"b", "B"}}},
		{"winner", Winner{embA{"inner", "A"}, "outer"}},
		{"tagged embedded", TaggedEmbedded{EmbX{"n", "a"}, Base{ID: "x"}, nil}},
		{"tagged embedded ptr", TaggedEmbedded{EmbX{}, Base{}, &Inner{X: "i"}}},
		{"deep ptr/nil", DeepPtr{Top: "t"}},
		{"deep ptr/mid", DeepPtr{Mid: &Mid{MidField: 1}}},
		{"deep ptr/full", DeepPtr{Mid: &Mid{Base: &Base{ID: "b"}, MidField: 2}, Top: "t"}},
		{"recursive", Recursive{Name: "root", Children: []Recursive{{Name: "c", Next: &Recursive{Name: "n"}}},
			ByName: map[string]*Recursive{"x": {Name: "x"}, "nil": nil}}},
		{"ifaces/zero", Ifaces{}},
		{"ifaces/values", Ifaces{A: "s", B: []string(nil), C: map[string]int(nil), D: (*int)(nil), E: &one,
			F: valMarshaler{A: 1}, G: &ptrMarshaler{B: "xy"}, H: Inner{X: "in"}, O: "", SS: []string{"a"}, U: t0, N: 0}},
		{"ifaces/more", Ifaces{A: []any{map[string]any{"k": []byte("b")}}, B: [][]byte{{1}}, C: t0, D: ptr(""),
			E: 0, F: false, G: ptrMarshaler{B: "v"}, H: &Inner{}, O: ptr(""), SS: []int{1}, U: &t0, N: ""}},
		{"arrays", Arrays{Ints: [3]int{1, 0, 3}, Ptrs: [2]*int{&one, nil}, Set: [2]string{"a", "b"}, Bytes: [2]byte{9, 8},
			Inner: [1]Inner{{X: "i"}}}},
		{"arrays/zero", Arrays{}},
		{"funcs", Funcs{F: func() string { return "called" }}},
		{"num keys", NumKeys{I: map[int]int{-1: 1}, U: map[uint8]string{8: "e"}, F: map[float64]bool{1.5: true, 1e21: false},
			B: map[bool]string{true: "t"}}},
		{"errs/ok", Errs{A: 1}},
		{"errs/fail", Errs{A: 13}},
		{"empty key", EmptyKey{M: map[string]string{"": "x"}}},
		{"bad set", BadSet{S: []*string{ptr("a"), nil}}},
		{"bad set ok", BadSet{S: []*string{ptr("a")}}},
		{"renamed time", NestedRenamedTime{At: MyTime(t0)}},
		{"floats", struct {
			NaN, Inf, NegInf, NegZero, Tiny, Big float64
			F32                                  float32
		}{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324, math.MaxFloat64, math.MaxFloat32}},
		{"ints", struct {
			A, B int64
			C    uint64
			D    int8
		}{math.MinInt64, math.MaxInt64, math.MaxUint64, -128}},
		{"anon struct field", struct {
			In struct{ A, B string }
			P  *struct{ C int }
		}{In: struct{ A, B string }{"a", "b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := checkEncode(t, tc.v)
			if want == nil {
				return
			}
			typ := reflect.TypeOf(tc.v)
			newV := func() any { return reflect.New(typ).Interface() }
			// Decode attributevalue's output into a zero value, and into a value that already holds
			// data (a fresh copy per decoder, since decoding writes into maps, slices and pointees).
			checkDecode(t, want, newV)
			if typ != reflect.TypeFor[Ifaces]() { // attributevalue panics decoding into a populated interface
				checkDecode(t, want, func() any { return prefilled(typ) })
			}
		})
	}
}

// prefilled returns a pointer to a value of typ that already holds data, built afresh each call.
func prefilled(typ reflect.Type) any {
	switch typ {
	case reflect.TypeFor[Kitchen]():
		k := fullKitchen()
		k.Strs = make([]string, 1, 10) // capacity to reuse
		k.M = map[string]string{"old": "entry"}
		k.Any = nil
		return &k
	case reflect.TypeFor[Order]():
		o := sampleOrder()
		o.Tags = []string{"old1", "old2", "old3", "old4"}
		return &o
	}
	return reflect.New(typ).Interface()
}

func TestDecodeMatchesAttributeValue(t *testing.T) {
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	B := func(b ...byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: b} }
	BOOL := func(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }
	NULL := &types.AttributeValueMemberNULL{Value: true}
	L := func(avs ...types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberL{Value: avs}
	}
	M := func(kv ...any) types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return &types.AttributeValueMemberM{Value: m}
	}
	SS := func(s ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: s} }
	NS := func(s ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: s} }
	BS := func(b ...[]byte) types.AttributeValue { return &types.AttributeValueMemberBS{Value: b} }
	all := []types.AttributeValue{S("x"), S(""), S("2024-01-02T03:04:05Z"), S("12"), N("12"), N("-1"), N("1.5"),
		N("1e400"), N("abc"), N("300"), N("99999999999999999999"), B(1, 2, 3, 4), B(), BOOL(true), NULL, nil,
		L(), L(S("a"), NULL), L(N("1"), N("x")), M(), M("X", S("in"), "y", N("3")), SS("a", "b"), SS(), NS("1", "2"),
		NS("x"), BS([]byte("a")), BS(), &types.UnknownUnionMember{Tag: "Z"}}

	kitchenFields := []string{}
	p, err := PlanFor(reflect.TypeFor[Kitchen]())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Fields() {
		kitchenFields = append(kitchenFields, f.Name)
	}
	// Every attribute value type into every Kitchen field, into a zero and a populated value. Skip the
	// interface fields with a populated value (attributevalue panics; we report an error, and the check
	// below would compare those).
	for _, name := range kitchenFields {
		for _, av := range all {
			m := map[string]types.AttributeValue{name: av}
			t.Run(name+"="+avString(av), func(t *testing.T) {
				checkDecode(t, m, func() any { return new(Kitchen) })
				checkDecode(t, m, func() any { return prefilled(reflect.TypeFor[Kitchen]()) })
			})
		}
	}

	more := []struct {
		name string
		m    map[string]types.AttributeValue
		newV func() any
	}{
		{"case-insensitive", map[string]types.AttributeValue{"CUSTOMERID": S("c"), "orderID": S("o"), "Paid": BOOL(true),
			"unknown": S("u"), "PK": S("pk")}, func() any { return new(Order) }},
		{"kelvin fold", map[string]types.AttributeValue{"\u212aey": S("k")}, func() any { return new(struct{ Key string }) }},
		{"long s fold", map[string]types.AttributeValue{"\u017fTATUS": S("s")}, func() any { return new(struct{ Status string }) }},
		{"invalid utf8 fold", map[string]types.AttributeValue{"\xff": S("s")}, func() any {
			return new(struct {
				X string `dynamodbav:"\xfe"`
			})
		}},
		{"deep ptr alloc", map[string]types.AttributeValue{"id": S("b"), "MidField": N("2")}, func() any { return new(DeepPtr) }},
		{"deep ptr null", map[string]types.AttributeValue{"id": NULL}, func() any { return new(DeepPtr) }},
		{"recursive", map[string]types.AttributeValue{"Name": S("r"), "Children": L(M("Name", S("c"), "Next", M("Name", S("n")))),
			"ByName": M("a", M("Name", S("a")), "b", NULL)}, func() any { return new(Recursive) }},
		{"arrays", map[string]types.AttributeValue{"Ints": L(N("1"), N("2"), N("3"), N("4")), "Ptrs": L(N("5")),
			"Set": SS("x"), "Bytes": B(1, 2), "Inner": L(M("X", S("i")))}, func() any { return new(Arrays) }},
		{"byte array wrong length", map[string]types.AttributeValue{"Bytes": B(1)}, func() any { return new(Arrays) }},
		{"funcs", map[string]types.AttributeValue{"F": S("f"), "FN": NULL}, func() any { return new(Funcs) }},
		{"num keys", map[string]types.AttributeValue{"I": M("-1", N("1")), "U": M("8", S("e")), "F": M("1.5", BOOL(true)),
			"B": M("true", S("t"))}, func() any { return new(NumKeys) }},
		{"num keys bad", map[string]types.AttributeValue{"I": M("x", N("1"))}, func() any { return new(NumKeys) }},
		{"ifaces", map[string]types.AttributeValue{"A": S("s"), "B": N("1"), "C": L(S("x")), "D": M("k", BOOL(true)),
			"E": SS("a"), "F": NS("1"), "G": BS([]byte("b")), "H": B(1), "O": NULL, "SS": S("1"), "U": N("5")},
			func() any { return new(Ifaces) }},
		{"ifaces populated with pointer", map[string]types.AttributeValue{"A": S("s"), "B": NULL},
			func() any { return &Ifaces{A: ptr("old"), B: ptr(1)} }},
		{"ifaces populated with value", map[string]types.AttributeValue{"A": NULL, "B": S("x")},
			func() any { return &Ifaces{A: "old", B: 1} }},
		{"order full", mustMarshal(t, sampleOrder()), func() any { return new(Order) }},
		{"order into populated", mustMarshal(t, sampleOrder()), func() any {
			o := Order{Tags: make([]string, 5, 8), Attrs: map[string]string{"keep": "me"}}
			return &o
		}},
		{"order empty list keeps slice", map[string]types.AttributeValue{"tags": L()}, func() any {
			return &Order{Tags: []string{"stays"}}
		}},
		{"set into populated slice", map[string]types.AttributeValue{"SS": SS("a"), "NS": NS("5", "6", "7"), "BS": BS([]byte("x"))},
			func() any { k := fullKitchen(); return &k }},
		{"list into pointer elements", map[string]types.AttributeValue{"NestedPs": L(M("X", S("new")), NULL)},
			func() any { return &Kitchen{NestedPs: []*Inner{{X: "old", Y: 5}, {X: "gone"}}} }},
		{"map merge", map[string]types.AttributeValue{"MI": M("a", N("1"), "b", NULL)},
			func() any { return &Kitchen{MI: map[string]int{"keep": 9, "a": 100}} }},
		{"bytes reuse", map[string]types.AttributeValue{"Bytes": B(7, 8)},
			func() any { return &Kitchen{Bytes: make([]byte, 5, 10)} }},
		{"int overflow", map[string]types.AttributeValue{"I8": N("128"), "U8": N("-1")}, func() any { return new(Kitchen) }},
		{"float32 overflow", map[string]types.AttributeValue{"F32": N("1e39")}, func() any { return new(Kitchen) }},
		{"unix time into time", map[string]types.AttributeValue{"T": N("1700000000"), "TU": N("1"), "TP": N("-5")},
			func() any { return new(Kitchen) }},
		{"string option decode", map[string]types.AttributeValue{"IS": S("12"), "FS": S("1.5"), "NumS": S("3")},
			func() any { return new(Kitchen) }},
	}
	for _, tc := range more {
		t.Run(tc.name, func(t *testing.T) { checkDecode(t, tc.m, tc.newV) })
	}
}

func mustMarshal(t testing.TB, v any) map[string]types.AttributeValue {
	m, err := attributevalue.MarshalMap(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
