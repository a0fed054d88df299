package wire

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/singletable/singletable/internal/codec"
)

// TestWideStruct decodes a struct of more than 64 fields, whose fields given are tracked beyond one
// word: every field is set, and a field given twice (by its own name, or by its own and one equal to it
// ignoring case) leaves the item to the SDK, on either side of the 64th field.
func TestWideStruct(t *testing.T) {
	const n = 70
	fields := make([]reflect.StructField, n)
	for i := range fields {
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](),
			Tag: reflect.StructTag(fmt.Sprintf(`dynamodbav:"f%d"`, i)),
		}
	}
	typ := reflect.StructOf(fields)
	p, err := codec.PlanFor(typ)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(p, p.Ignore("PK", "SK", "Type"), "Type", "Wide", "", 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	body := func(extra string) []byte {
		var b strings.Builder
		b.WriteString(`{"Item":{"PK":{"S":"p"},"Type":{"S":"Wide"}`)
		for i := range n {
			fmt.Fprintf(&b, `,"f%d":{"S":"v%d"}`, i, i)
		}
		b.WriteString(extra + `}}`)
		return []byte(b.String())
	}

	var sl anySlots
	s := &Sink{Op: GetItem, Target: tg, Slots: &sl}
	if _, ok := s.read(body("")); !ok || len(s.Entries()) != 1 || s.Entries()[0].Target == nil {
		t.Fatalf("not decoded: ok %v, entries %+v", ok, s.Entries())
	}
	v := sl.items[0].Elem()
	for i := range n {
		if got, want := v.Field(i).String(), fmt.Sprintf("v%d", i); got != want {
			t.Errorf("F%d = %q, want %q", i, got, want)
		}
	}

	for _, extra := range []string{`,"f3":{"S":"again"}`, `,"f66":{"S":"again"}`, `,"F67":{"S":"again"}`, `,"F2":{"S":"again"}`} {
		sl = anySlots{}
		s := &Sink{Op: GetItem, Target: tg, Slots: &sl}
		if _, ok := s.read(body(extra)); !ok || len(s.Entries()) != 1 || s.Entries()[0].Target != nil || len(sl.items) != 0 {
			t.Errorf("%s: ok %v, entries %+v, %d decoded; want the item left to the SDK", extra, ok, s.Entries(), len(sl.items))
		}
	}
}
