package codec

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// wireKitchen has a field of each decoding shape internal/wire tells apart.
type wireKitchen struct {
	S     string                  `dynamodbav:"s"`
	N     json.Number             `dynamodbav:"n"`
	B     bool                    `dynamodbav:"b"`
	I8    int8                    `dynamodbav:"i8"`
	IS    int                     `dynamodbav:"is,string"`
	U32   uint32                  `dynamodbav:"u32"`
	F32   float32                 `dynamodbav:"f32"`
	T     time.Time               `dynamodbav:"t"`
	TU    time.Time               `dynamodbav:"tu,unixtime"`
	MT    MyTime                  `dynamodbav:"mt"`
	Bytes []byte                  `dynamodbav:"bytes"`
	Arr   [4]byte                 `dynamodbav:"arr"`
	Inner Inner                   `dynamodbav:"inner"`
	P     *Inner                  `dynamodbav:"p"`
	PP    **string                `dynamodbav:"pp"`
	Strs  []string                `dynamodbav:"strs"`
	NS    []int                   `dynamodbav:"ns,numberset"`
	BS    [][]byte                `dynamodbav:"bs"`
	Ptrs  []*string               `dynamodbav:"ptrs"`
	IA    [2]int                  `dynamodbav:"ia"`
	M     map[string]string       `dynamodbav:"m"`
	MI    map[string]int          `dynamodbav:"mi"`
	MK    map[int]string          `dynamodbav:"mk"`
	MA    map[string]any          `dynamodbav:"ma"`
	Any   any                     `dynamodbav:"any"`
	UM    valMarshaler            `dynamodbav:"um"`
	PUM   *ptrMarshaler           `dynamodbav:"pum"`
	UMs   []ptrMarshaler          `dynamodbav:"ums"`
	Rec   []wireKitchen           `dynamodbav:"rec"`
	MS    map[Status]int          `dynamodbav:"ms"`
	Tags  Tags                    `dynamodbav:"tags"`
	Deep  map[string][]*time.Time `dynamodbav:"deep"`
}

func TestWireKinds(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[wireKitchen]())
	if err != nil {
		t.Fatal(err)
	}
	checkWireKinds(t, p)
	field := func(name string) *Wire {
		f, ok := p.Field(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		return f.Wire()
	}
	if w := field("i8"); w.Size != 1 || w.AsString {
		t.Errorf("i8: %+v", w)
	}
	if w := field("is"); w.Size != 8 || !w.AsString {
		t.Errorf("is: %+v", w)
	}
	checkWireSequences(t, field)
	checkWireNested(t, p, field)
	if f, ok := p.LookupFold("STRS"); !ok || f.Name != "strs" {
		t.Errorf("LookupFold(STRS) = %v, %v", f, ok)
	}
	ig := p.Ignore("PK", "s", "Type")
	if !ig.Has("PK") || !ig.Has("Type") || ig.Has("s") || ig.Plan() != p {
		t.Errorf("Ignore: %+v", ig)
	}
}

// checkWireKinds checks each field of wireKitchen's plan: its position, its
// wire kind and the type the kind decodes.
func checkWireKinds(t *testing.T, p *Plan) {
	t.Helper()
	want := map[string]WireKind{
		"s": WireString, "n": WireString, "b": WireBool, "i8": WireInt, "is": WireInt, "u32": WireUint, "f32": WireFloat,
		"t": WireTime, "tu": WireTime, "mt": WireNone, "bytes": WireBytes, "arr": WireNone,
		"inner": WireStruct, "p": WirePointer, "pp": WireNone, "strs": WireSlice, "ns": WireSlice, "bs": WireSlice,
		"ptrs": WireSlice, "ia": WireNone, "m": WireMap, "mi": WireMap, "mk": WireNone, "ma": WireNone, "any": WireNone,
		"um": WireNone, "pum": WireNone, "ums": WireSlice, "rec": WireSlice, "ms": WireMap, "tags": WireSlice, "deep": WireMap,
	}
	for i, f := range p.Fields() {
		if f.Pos() != i {
			t.Errorf("%s: Pos %d, want %d", f.Name, f.Pos(), i)
		}
		w := f.Wire()
		if w.Kind != want[f.Name] {
			t.Errorf("%s (%s): kind %d, want %d", f.Name, f.Type, w.Kind, want[f.Name])
		}
		if w.Kind != WireNone && w.Type != f.Type && w.Kind != WirePointer {
			t.Errorf("%s: type %s, want %s", f.Name, w.Type, f.Type)
		}
	}
}

// checkWireSequences checks the slices' element kinds and the sets each may
// decode from.
func checkWireSequences(t *testing.T, field func(string) *Wire) {
	t.Helper()
	if w := field("strs"); !w.Exact || w.Elem.Kind != WireString || w.Sets != WireSS|WireNS {
		t.Errorf("strs: %+v", w)
	}
	if w := field("ns"); w.Sets != WireNS || w.Elem.Kind != WireInt {
		t.Errorf("ns: %+v", w)
	}
	if w := field("bs"); w.Sets != WireBS || w.Elem.Kind != WireBytes {
		t.Errorf("bs: %+v", w)
	}
	if w := field("ptrs"); w.Sets != 0 || w.Elem.Kind != WirePointer || w.Elem.Elem.Kind != WireString {
		t.Errorf("ptrs: %+v", w)
	}
	if w := field("ums"); w.Elem.Kind != WireNone {
		t.Errorf("ums: elements %d, want none", w.Elem.Kind)
	}
}

// checkWireNested checks the nested shapes: a recursive slice of the plan's
// own type, a pointer to a struct, maps and a map of slices of pointers.
func checkWireNested(t *testing.T, p *Plan, field func(string) *Wire) {
	t.Helper()
	if w := field("rec"); w.Elem.Kind != WireStruct || w.Elem.Plan != p {
		t.Errorf("rec: %+v", w.Elem)
	}
	if w := field("p"); w.Elem.Kind != WireStruct || w.Elem.Plan.Type() != reflect.TypeFor[Inner]() {
		t.Errorf("p: %+v", w)
	}
	if w := field("m"); !w.Exact || w.Elem.Kind != WireString {
		t.Errorf("m: %+v", w)
	}
	if w := field("deep"); w.Exact || w.Elem.Kind != WireSlice || w.Elem.Elem.Kind != WirePointer || w.Elem.Elem.Elem.Kind != WireTime {
		t.Errorf("deep: %+v", w)
	}
}
