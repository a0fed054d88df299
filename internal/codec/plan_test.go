package codec

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type (
	badOption struct {
		ID    string
		Total int `dynamodbav:"total,omitempy"`
	}
	emptyOption struct {
		Name string `dynamodbav:"name,,omitempty"`
	}
	badComplex struct {
		Total complex128
	}
	badComplex64 struct {
		Total complex64
	}
	badChan struct {
		C chan int
	}
	badFunc struct {
		F func()
	}
	badUnsafe struct {
		P unsafe.Pointer
	}
	badUintptr struct {
		U uintptr
	}
	badNestedElem struct {
		Cs []chan int
	}
	badMapValue struct {
		M map[string]func()
	}
	badMapKey struct {
		M map[[2]int]string
	}
	badPtr struct {
		P *complex64
	}
	Line struct {
		SKU   string
		Price complex128
	}
	badNested struct {
		Lines []Line
	}
	badOmitNull struct {
		A string `dynamodbav:",omitempty,nullempty"`
	}
	badElemOpts struct {
		A []string `dynamodbav:",omitemptyelem,nullemptyelem"`
	}
	badUnixString struct {
		A string `dynamodbav:",unixtime"`
	}
	badSetOnString struct {
		A string `dynamodbav:",stringset"`
	}
	badNumberSetStrings struct {
		A []string `dynamodbav:",numberset"`
	}
	badStringOnBool struct {
		A bool `dynamodbav:",string"`
	}
	badElemOnScalar struct {
		A int `dynamodbav:",omitemptyelem"`
	}
	badTwoSets struct {
		A []string `dynamodbav:",stringset,binaryset"`
	}
	badDuplicate struct {
		A string `dynamodbav:"x"`
		B string `dynamodbav:"x"`
	}
	badHides struct {
		Name  string
		Alias string `dynamodbav:"Name"`
	}
	embC struct{ Name string }
	embD struct {
		Other string `dynamodbav:"Name"`
	}
	badTagHidesSibling struct {
		embC
		embD
	}
	badEmbedOptions struct {
		Base `dynamodbav:",omitempty"`
	}
	//lint:ignore U1000 only reflection sees it: an unexported embedded non-struct
	status          string
	badUnexportedNS struct {
		status //lint:ignore U1000 only reflection sees it
	}
	badUnexportedTagged struct {
		embC `dynamodbav:"c"`
	}
	// Marshaler types of unsupported kinds are fine.
	okFunc struct {
		F funcMarshaler
	}
	okIgnoredBad struct {
		C chan int `dynamodbav:"-"`
		c chan int //lint:ignore U1000 an unexported field is skipped, whatever its type
	}
	okMarshalerOptions struct {
		V valMarshaler `dynamodbav:",stringset,unixtime"` // options are the marshaler's business
	}
)

func TestPlanForRejects(t *testing.T) {
	cases := []struct {
		v         any
		typ, fld  string
		sentinel  error
		msgSubstr string
	}{
		{badOption{}, "badOption", "Total", ErrInvalidTag, `unknown option "omitempy"`},
		{emptyOption{}, "emptyOption", "Name", ErrInvalidTag, "empty option"},
		{badComplex{}, "badComplex", "Total", ErrUnsupportedType, "unsupported type complex128"},
		{badComplex64{}, "badComplex64", "Total", ErrUnsupportedType, "complex64"},
		{badChan{}, "badChan", "C", ErrUnsupportedType, "chan int"},
		{badFunc{}, "badFunc", "F", ErrUnsupportedType, "func()"},
		{badUnsafe{}, "badUnsafe", "P", ErrUnsupportedType, "unsafe.Pointer"},
		{badUintptr{}, "badUintptr", "U", ErrUnsupportedType, "uintptr"},
		{badNestedElem{}, "badNestedElem", "Cs", ErrUnsupportedType, "chan int"},
		{badMapValue{}, "badMapValue", "M", ErrUnsupportedType, "func()"},
		{badMapKey{}, "badMapKey", "M", ErrUnsupportedType, "map keys"},
		{badPtr{}, "badPtr", "P", ErrUnsupportedType, "complex64"},
		{badNested{}, "badNested", "Lines", ErrUnsupportedType, "Line.Price"},
		{badOmitNull{}, "badOmitNull", "A", ErrInvalidTag, "omitempty and nullempty"},
		{badElemOpts{}, "badElemOpts", "A", ErrInvalidTag, "omitemptyelem and nullemptyelem"},
		{badUnixString{}, "badUnixString", "A", ErrInvalidTag, "unixtime"},
		{badSetOnString{}, "badSetOnString", "A", ErrInvalidTag, "set options"},
		{badNumberSetStrings{}, "badNumberSetStrings", "A", ErrInvalidTag, "element type string"},
		{badStringOnBool{}, "badStringOnBool", "A", ErrInvalidTag, "option string"},
		{badElemOnScalar{}, "badElemOnScalar", "A", ErrInvalidTag, "omitemptyelem"},
		{badTwoSets{}, "badTwoSets", "A", ErrInvalidTag, "more than one"},
		{badDuplicate{}, "badDuplicate", "A", ErrInvalidTag, `"x" is also used by badDuplicate.B`},
		{badHides{}, "badHides", "Alias", ErrInvalidTag, "also used by badHides.Name"},
		{badTagHidesSibling{}, "embD", "Other", ErrInvalidTag, "also used by embC.Name"},
		{badEmbedOptions{}, "badEmbedOptions", "Base", ErrInvalidTag, "no effect"},
		{badUnexportedNS{}, "badUnexportedNS", "status", ErrUnsupportedType, "unexported"},
		{badUnexportedTagged{}, "badUnexportedTagged", "embC", ErrUnsupportedType, "unexported"},
	}
	for _, tc := range cases {
		typ := reflect.TypeOf(tc.v)
		t.Run(typ.Name(), func(t *testing.T) {
			p, err := PlanFor(typ)
			if err == nil {
				t.Fatalf("PlanFor(%s) = %v, want an error", typ, p)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			if fe.Type != tc.typ || fe.Field != tc.fld {
				t.Errorf("FieldError names %s.%s, want %s.%s", fe.Type, fe.Field, tc.typ, tc.fld)
			}
			if want := tc.typ + "." + tc.fld; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
			if !strings.HasPrefix(err.Error(), "codec: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if !strings.Contains(err.Error(), tc.msgSubstr) {
				t.Errorf("error %q does not say %q", err, tc.msgSubstr)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tc.sentinel)
			}
			// Not cached: asking again fails again.
			if _, err2 := PlanFor(typ); err2 == nil {
				t.Errorf("second PlanFor succeeded")
			}
		})
	}
}

func TestPlanForAccepts(t *testing.T) {
	for _, v := range []any{okFunc{}, okIgnoredBad{}, okMarshalerOptions{}, Kitchen{}, Order{}, Recursive{}} {
		if _, err := PlanFor(reflect.TypeOf(v)); err != nil {
			t.Errorf("PlanFor(%T): %v", v, err)
		}
	}
}

func TestPlanForRejectsNonItems(t *testing.T) {
	for _, typ := range []reflect.Type{
		nil, reflect.TypeFor[int](), reflect.TypeFor[*Order](), reflect.TypeFor[time.Time](),
		reflect.TypeFor[valMarshaler](), reflect.TypeFor[ptrMarshaler](), reflect.TypeFor[attributevalue.UnixTime](),
	} {
		if p, err := PlanFor(typ); err == nil || !strings.HasPrefix(err.Error(), "codec: ") {
			t.Errorf("PlanFor(%v) = %v, %v; want a codec error", typ, p, err)
		}
	}
	// A type rejected as an item still works nested (valMarshaler inside Kitchen).
	if _, err := PlanFor(reflect.TypeFor[Kitchen]()); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFor(reflect.TypeFor[valMarshaler]()); err == nil {
		t.Error("valMarshaler accepted after being compiled as a nested type")
	}
}

func TestPlanFields(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[Kitchen]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p.Fields() {
		names = append(names, f.Name)
	}
	got := strings.Join(names, ",")
	// Skip, Dash, unexported, _ and unexportedBase.hidden are out; Shadow is in both Base and PtrBase at
	// the same depth, untagged, so it is ambiguous and dropped; embedded fields come in index order.
	for _, absent := range []string{"Skip", "Dash", "unexported", "_", "hidden", "Shadow", "Base", "PtrBase"} {
		for _, n := range names {
			if n == absent {
				t.Errorf("field %q should not be encoded; fields: %s", absent, got)
			}
		}
	}
	if !strings.HasSuffix(got, ",renamed_attr,id,Created,Note,Visible") {
		t.Errorf("fields end %s", got[max(0, len(got)-60):])
	}

	f, ok := p.Field("renamed_attr")
	if !ok || f.GoName != "Renamed" || f.Type != reflect.TypeFor[string]() || reflect.TypeFor[Kitchen]().FieldByIndex(f.Index).Name != "Renamed" {
		t.Errorf("Field(renamed_attr) = %+v, %v", f, ok)
	}
	if _, ok := p.Field("RENAMED_ATTR"); ok {
		t.Error("Field is case-insensitive; it should match exactly")
	}
	f, _ = p.Field("SSO")
	if !f.StringSet || !f.OmitEmpty || !f.OmitEmptyElem || f.NullEmpty || f.Tag.Get("dynamodbav") != ",stringset,omitempty,omitemptyelem" {
		t.Errorf("SSO options = %+v", f)
	}
	f, _ = p.Field("id")
	if f.GoName != "ID" || len(f.Index) != 2 {
		t.Errorf("promoted id = %+v", f)
	}

	// ValueOf and Settable through a nil embedded pointer.
	var k Kitchen
	note, _ := p.Field("Note")
	if _, ok := note.ValueOf(reflect.ValueOf(k)); ok {
		t.Error("ValueOf through nil *PtrBase reported ok")
	}
	fv, err := note.Settable(reflect.ValueOf(&k).Elem())
	if err != nil || k.PtrBase == nil {
		t.Fatalf("Settable did not allocate *PtrBase: %v", err)
	}
	fv.SetString("n")
	if k.Note != "n" {
		t.Error("Settable returned the wrong field")
	}
}

func TestFieldEncodeDecode(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[Kitchen]())
	if err != nil {
		t.Fatal(err)
	}
	so, _ := p.Field("SO")
	av, ok, err := so.Encode(reflect.ValueOf(""))
	if av != nil || ok || err != nil {
		t.Errorf("omitempty \"\" = %v, %v, %v; want omitted", av, ok, err)
	}
	av, ok, err = so.Encode(reflect.ValueOf("x"))
	if !ok || err != nil || !reflect.DeepEqual(av, &types.AttributeValueMemberS{Value: "x"}) {
		t.Errorf("Encode(x) = %v, %v, %v", av, ok, err)
	}
	if !so.IsZero(reflect.ValueOf("")) || so.IsZero(reflect.ValueOf("x")) {
		t.Error("IsZero of string")
	}
	to, _ := p.Field("TO")
	if to.IsZero(reflect.ValueOf(time.Time{})) {
		t.Error("IsZero(time.Time{}) is true; attributevalue never omits a struct")
	}

	em, _ := p.Field("EM")
	_, _, err = em.Encode(reflect.ValueOf(errMarshaler(13)))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "EM" || fe.Type != "Kitchen" {
		t.Errorf("marshaler error = %v, want a FieldError naming Kitchen.EM", err)
	}

	i8, _ := p.Field("I8")
	var x int8
	err = i8.Decode(&types.AttributeValueMemberN{Value: "300"}, reflect.ValueOf(&x).Elem())
	var ute *attributevalue.UnmarshalTypeError
	if !errors.As(err, &fe) || fe.Field != "I8" || !errors.As(err, &ute) {
		t.Errorf("overflow error = %v, want a FieldError wrapping *attributevalue.UnmarshalTypeError", err)
	}
	err = i8.Decode(&types.AttributeValueMemberS{Value: "3"}, reflect.ValueOf(&x).Elem())
	if !errors.As(err, &ute) {
		t.Errorf("type mismatch error = %v, want *attributevalue.UnmarshalTypeError", err)
	}
}

func TestNestedErrorsNameThePath(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[Kitchen]())
	if err != nil {
		t.Fatal(err)
	}
	var k Kitchen
	err = p.Decode(map[string]types.AttributeValue{
		"Nesteds": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"y": &types.AttributeValueMemberS{Value: "x"}}},
		}},
	}, reflect.ValueOf(&k).Elem())
	if err == nil || !strings.Contains(err.Error(), "codec: Kitchen.Nesteds: Inner.Y: ") {
		t.Errorf("error = %v, want it to name Kitchen.Nesteds and Inner.Y", err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Nesteds" {
		t.Errorf("outer FieldError = %+v", fe)
	}
	if inner := (*FieldError)(nil); !errors.As(fe.Err, &inner) || inner.Type != "Inner" || inner.Field != "Y" {
		t.Errorf("inner FieldError = %+v", inner)
	}
}

func TestEncodeDecodeWrongType(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Encode(reflect.ValueOf(Inner{})); err == nil {
		t.Error("Encode accepted another type")
	}
	if err := p.Decode(nil, reflect.ValueOf(Order{})); err == nil {
		t.Error("Decode accepted an unsettable value")
	}
}

// TestPlanForConcurrent compiles fresh types from many goroutines at once and uses the plans.
func TestPlanForConcurrent(t *testing.T) {
	const nTypes, nGoroutines = 8, 16
	typs := make([]reflect.Type, nTypes)
	for i := range typs {
		// reflect.StructOf makes types no other test has compiled.
		typs[i] = reflect.StructOf([]reflect.StructField{
			{Name: fmt.Sprintf("Concurrent%d", i), Type: reflect.TypeFor[string](), Tag: `dynamodbav:"c"`},
			{Name: "Order", Type: reflect.TypeFor[Order]()},
			{Name: "Self", Type: reflect.TypeFor[[]Recursive](), Tag: `dynamodbav:",omitempty"`},
		})
	}
	var wg sync.WaitGroup
	plansSeen := make([][]*Plan, nGoroutines)
	for g := 0; g < nGoroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range typs {
				typ := typs[(i+g)%nTypes]
				p, err := PlanFor(typ)
				if err != nil {
					t.Error(err)
					return
				}
				plansSeen[g] = append(plansSeen[g], p)
				v := reflect.New(typ).Elem()
				v.Field(0).SetString("x")
				v.Field(1).Set(reflect.ValueOf(sampleOrder()))
				m, err := p.Encode(v)
				if err != nil {
					t.Error(err)
					return
				}
				out := reflect.New(typ).Elem()
				if err := p.Decode(m, out); err != nil {
					t.Error(err)
					return
				}
				if out.Field(0).String() != "x" || out.Field(1).Interface().(Order).OrderID != sampleOrder().OrderID {
					t.Errorf("round trip lost data: %v", out)
				}
			}
		}()
	}
	wg.Wait()
	// Everyone ends up with the same cached plan per type.
	for _, typ := range typs {
		want, _ := PlanFor(typ)
		for g := range plansSeen {
			for _, p := range plansSeen[g] {
				if p.Type() == typ && p != want && p.Type() == want.Type() {
					// A goroutine that compiled concurrently may have used its own copy before the cache
					// settled; later calls must return the cached one.
					if again, _ := PlanFor(typ); again != want {
						t.Errorf("PlanFor(%v) not stable", typ)
					}
				}
			}
		}
	}
}

// TestEncodeResultsAreIndependent checks that the slabs and the text arena never let one result, or one
// attribute, share writable memory with another: results of many calls stay as they were encoded, and
// appending to a list does not touch its neighbour.
func TestEncodeResultsAreIndependent(t *testing.T) {
	p, err := PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		t.Fatal(err)
	}
	var orders []Order
	var got []map[string]types.AttributeValue
	for i := range 300 {
		o := sampleOrder()
		o.Version = int64(i * 7919)
		o.Total = float64(i) / 3
		o.Tags = make([]string, i%40) // vary sizes so that hints grow and shrink
		for j := range o.Tags {
			o.Tags[j] = fmt.Sprint("t", i, j)
		}
		o.CreatedAt = o.CreatedAt.Add(time.Duration(i) * time.Millisecond)
		m, err := p.Encode(reflect.ValueOf(&o).Elem())
		if err != nil {
			t.Fatal(err)
		}
		orders = append(orders, o)
		got = append(got, m)
	}
	for i, m := range got {
		if d := diffMaps(m, mustMarshal(t, &orders[i])); d != "" {
			t.Fatalf("result %d changed after later calls:%s", i, d)
		}
	}

	type twoLists struct{ A, B []string }
	p2, err := PlanFor(reflect.TypeFor[twoLists]())
	if err != nil {
		t.Fatal(err)
	}
	v := twoLists{A: []string{"a1", "a2"}, B: []string{"b1", "b2"}}
	m, err := p2.Encode(reflect.ValueOf(&v).Elem())
	if err != nil {
		t.Fatal(err)
	}
	a := m["A"].(*types.AttributeValueMemberL)
	a.Value = append(a.Value, &types.AttributeValueMemberS{Value: "clobber"})
	if d := diffMaps(map[string]types.AttributeValue{"B": m["B"]}, map[string]types.AttributeValue{"B": mustMarshal(t, v)["B"]}); d != "" {
		t.Errorf("appending to A changed B:%s", d)
	}
}
