package codec

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable/singletable/internal/avtest"
)

// FuzzItem has a field for each compiled path (and a few fallbacks).
type FuzzItem struct {
	S       string
	SP      *string
	SO      string `dynamodbav:",omitempty"`
	SN      string `dynamodbav:",nullempty"`
	Status  Status
	I       int64
	I8      int8
	I32     int32 `dynamodbav:"i32,omitempty"`
	U       uint64
	U16     uint16
	F       float64
	F32     float32
	FS      float64 `dynamodbav:",string"`
	IS      int     `dynamodbav:",string"`
	B       bool
	Bytes   []byte
	T       time.Time
	TU      time.Time `dynamodbav:",unixtime"`
	TP      *time.Time
	Strs    []string
	StrsOE  []string `dynamodbav:",omitemptyelem"`
	SS      []string `dynamodbav:",stringset"`
	NS      []int64  `dynamodbav:",numberset"`
	M       map[string]string
	MI      map[string]int64
	Nested  Inner
	NestedP *Inner
	Nesteds []Inner
	Any     any
	Num     attributevalue.Number
	VM      valMarshaler
	PM      ptrMarshaler
	Arr     [2]int
	Base
}

func buildFuzzItem(s1, s2 string, i int64, u uint64, f float64, b bool, bs []byte, sec, nsec int64, sel uint8) FuzzItem {
	// Times that RFC 3339 can carry (years 0-9999) and Unix seconds that time.Unix round-trips.
	const minSec, span = -62135596800, 315537897600 // 0000-01-01 .. 9999-12-31
	tsec := minSec + ((sec%span)+span)%span
	tm := time.Unix(tsec, ((nsec%1e9)+1e9)%1e9).UTC()
	usec := sec % 1e15

	split := func(s string) []string {
		if sel&1 == 0 {
			return nil
		}
		return strings.Split(s, "/") // one element per '/', empty ones included
	}
	var set []string
	if parts := split(s1); len(parts) > 0 {
		set = parts
	}
	var ns []int64
	if sel&2 != 0 {
		ns = []int64{i, int64(u), int64(len(s2))}
	}
	var m map[string]string
	if sel&4 != 0 {
		m = map[string]string{s1: s2, "k": s1}
	}
	var anyV any
	switch sel % 5 {
	case 1:
		anyV = s2
	case 2:
		anyV = f
	case 3:
		anyV = []any{s1, b, nil}
	case 4:
		anyV = map[string]any{"x": s2}
	}
	it := FuzzItem{
		S: s1, SO: s2, SN: s1, Status: Status(s2),
		I: i, I8: int8(i), I32: int32(i >> 8), U: u, U16: uint16(u), F: f, F32: float32(f), FS: -f, IS: int(i), B: b,
		T: tm, TU: time.Unix(usec, 0), Strs: split(s2), StrsOE: split(s1), SS: set, NS: ns, M: m,
		MI:     map[string]int64{"i": i},
		Nested: Inner{X: s1, Y: int(i), T: tm}, Nesteds: []Inner{{X: s2}},
		Any: anyV, Num: attributevalue.Number(s2), VM: valMarshaler{A: int(i)}, PM: ptrMarshaler{B: s1},
		Arr: [2]int{int(i), int(u)}, Base: Base{ID: s2, Created: tm, Shadow: s1},
	}
	if sel&8 != 0 {
		it.SP, it.TP, it.NestedP = &s2, &tm, &Inner{X: s2, P: &Inner{}}
	}
	if sel&16 != 0 {
		it.Bytes = bs
	}
	return it
}

func FuzzRoundTrip(f *testing.F) {
	f.Add("cust-1", "ORDER#7", int64(42), uint64(7), 129.95, true, []byte("b"), int64(1700000000), int64(123456789), uint8(0xff))
	f.Add("", "", int64(0), uint64(0), 0.0, false, []byte{}, int64(0), int64(0), uint8(0))
	f.Add("a/b//c", "x/", int64(math.MinInt64), uint64(math.MaxUint64), math.Inf(-1), true, []byte(nil), int64(-1), int64(-1), uint8(0x1f))
	f.Add("\xff\xfe", "é", int64(-129), uint64(65536), math.NaN(), false, []byte{0}, int64(math.MaxInt64), int64(math.MinInt64), uint8(0x0b))
	f.Add("1e400", "-0", int64(1), uint64(1), math.Copysign(0, -1), true, []byte("xyz"), int64(253402300799), int64(999999999), uint8(0x12))
	f.Fuzz(func(t *testing.T, s1, s2 string, i int64, u uint64, fl float64, b bool, bs []byte, sec, nsec int64, sel uint8) {
		v := buildFuzzItem(s1, s2, i, u, fl, b, bs, sec, nsec, sel)
		want := checkEncode(t, v) // Encode == MarshalMap, by value and by pointer
		if want == nil {
			return // both failed (an empty map key)
		}
		checkDecode(t, want, func() any { return new(FuzzItem) }) // Decode == UnmarshalMap

		// Decode(Encode(v)) == v, except where attributevalue's own format loses information.
		p, _ := PlanFor(reflect.TypeFor[FuzzItem]())
		pv := reflect.New(p.Type())
		pv.Elem().Set(reflect.ValueOf(v))
		m, err := p.Encode(pv.Elem())
		if err != nil {
			t.Fatal(err)
		}
		var got FuzzItem
		if err := p.Decode(m, reflect.ValueOf(&got).Elem()); err != nil {
			t.Fatalf("Decode(Encode(v)): %v", err)
		}
		exp := v
		exp.StrsOE = filterEmpty(v.StrsOE) // omitemptyelem drops empty strings
		exp.PM = got.PM                    // a marshaler that does not round-trip by design
		if float64(got.F32) != float64(exp.F32) && math.Abs(float64(got.F32-exp.F32)) <= math.Abs(float64(exp.F32))*1e-7 {
			exp.F32 = got.F32 // float32 text parsed as float64 then rounded: at most one ulp off
		}
		if !avtest.SameValue(reflect.ValueOf(got), reflect.ValueOf(exp)) {
			t.Errorf("Decode(Encode(v)) != v\n got %+v\nwant %+v", got, exp)
		}
	})
}

func filterEmpty(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := []string{}
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// avGen builds attribute values from fuzz bytes.
type avGen struct{ b []byte }

func (g *avGen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

var interestingNumbers = []string{"0", "-0", "1", "-1", "1.5", "-2.25", "1e400", "-1e400", "1e39", "abc", "", " 1",
	"127", "128", "-128", "-129", "255", "256", "65535", "65536", "2147483648", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
	"18446744073709551616", "NaN", "Inf", "+Inf", "-Inf", "0x10", "1_000", "1700000000", "-62135596800",
	"253402300799", "3.4028235e38", "5e-324", "0.1"}

var interestingStrings = []string{"", "x", "2024-03-09T14:05:07.123456789Z", "2024-03-09T14:05:07+05:30",
	"1999-12-31T19:00:00-05:00", "not a time", "12", "vm:5", "vm:x", "\xff", "customerId"}

func (g *avGen) str() string {
	c := g.byte()
	if c < 64 {
		return interestingStrings[int(c)%len(interestingStrings)]
	}
	n := min(int(c%16), len(g.b))
	s := string(g.b[:n])
	g.b = g.b[n:]
	return s
}

func (g *avGen) num() string {
	c := g.byte()
	if c < 200 {
		return interestingNumbers[int(c)%len(interestingNumbers)]
	}
	return g.str()
}

func (g *avGen) av(depth int) types.AttributeValue {
	kind := g.byte() % 12
	if depth > 3 && kind >= 5 && kind <= 6 {
		kind = 0
	}
	switch kind {
	case 0:
		return &types.AttributeValueMemberS{Value: g.str()}
	case 1:
		return &types.AttributeValueMemberN{Value: g.num()}
	case 2:
		if g.byte()%4 == 0 {
			return &types.AttributeValueMemberB{}
		}
		return &types.AttributeValueMemberB{Value: []byte(g.str())}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: g.byte()%2 == 0}
	case 4:
		return &types.AttributeValueMemberNULL{Value: true}
	case 5:
		n := int(g.byte() % 4)
		l := make([]types.AttributeValue, n)
		for i := range l {
			l[i] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberL{Value: l}
	case 6:
		// No two keys equal ignoring case, as in attrMap: the map may decode into a struct.
		n := int(g.byte() % 4)
		m := make(map[string]types.AttributeValue, n)
		seen := map[string]bool{}
		for range n {
			k := g.key()
			if seen[foldKey(k)] {
				continue
			}
			seen[foldKey(k)] = true
			m[k] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberM{Value: m}
	case 7:
		n := int(g.byte() % 3)
		ss := make([]string, n)
		for i := range ss {
			ss[i] = g.str()
		}
		return &types.AttributeValueMemberSS{Value: ss}
	case 8:
		n := int(g.byte() % 3)
		ns := make([]string, n)
		for i := range ns {
			ns[i] = g.num()
		}
		return &types.AttributeValueMemberNS{Value: ns}
	case 9:
		n := int(g.byte() % 3)
		bs := make([][]byte, n)
		for i := range bs {
			bs[i] = []byte(g.str())
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case 10:
		return nil
	default:
		return &types.UnknownUnionMember{Tag: "X"}
	}
}

// fuzzKeys are the attribute names FuzzItem and Inner have, names no field has, and case variants.
var fuzzKeys = func() []string {
	keys := []string{"PK", "SK", "Type", "x", "Y", "T", "p", "ID", "Note", "Nested", "nested", "any", "SHADOW"}
	for _, t := range []reflect.Type{reflect.TypeFor[FuzzItem](), reflect.TypeFor[Inner]()} {
		p, err := PlanFor(t)
		if err != nil {
			panic(err)
		}
		for _, f := range p.Fields() {
			keys = append(keys, f.Name)
		}
	}
	return keys
}()

func (g *avGen) key() string {
	c := g.byte()
	if c >= 250 {
		return g.str()
	}
	return fuzzKeys[int(c)%len(fuzzKeys)]
}

// attrMap builds a top-level (or nested) attribute map with no two keys equal ignoring case, since which
// of two such attributes attributevalue decodes last depends on map order.
func (g *avGen) attrMap() map[string]types.AttributeValue {
	n := int(g.byte() % 24)
	m := make(map[string]types.AttributeValue, n)
	seen := map[string]bool{}
	for range n {
		k := g.key()
		if seen[foldKey(k)] {
			continue
		}
		seen[foldKey(k)] = true
		m[k] = g.av(0)
	}
	return m
}

func populatedFuzzItem() *FuzzItem {
	it := buildFuzzItem("a/b", "c", 5, 6, 7.5, true, []byte("bytes"), 1700000000, 5, 0xff)
	it.Strs = make([]string, 1, 8)
	it.Any = ptr("pointer") // attributevalue panics decoding into an interface holding a non-pointer
	return &it
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{23, 0, 0, 1, 1, 5, 2, 5, 0, 3, 2, 4, 4, 6, 1, 7, 2, 9, 8, 10, 3, 11, 1})
	f.Add([]byte("\x10\x05\x05\x03\x06\x02\x20\x00\x21\x01\x07\x02\x02\x40\x41\x08\x02\x10\x11"))
	f.Add([]byte("\x17\x1a\x01\x05\x1b\x00\x06\x1c\x08\x03\x1d\x10\x00\x1e\x01\x06\x1f\x04\x20\x0b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &avGen{b: data}
		m := g.attrMap()
		checkDecode(t, m, func() any { return new(FuzzItem) })
		checkDecode(t, m, func() any { return populatedFuzzItem() })
		checkDecode(t, m, func() any { return new(Order) })
	})
}
