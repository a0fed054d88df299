package wire

import (
	"reflect"
	"testing"
)

type slotItem struct {
	ID   string
	N    int
	Tags []string
}

// TestSliceAppendsIntoTheCallersSlice: Slice hands out zeroed elements of the
// caller's own []T, grows it as needed, and Drop and Reset leave no value behind
// (every element past the length stays zero, for the next Next).
func TestSliceAppendsIntoTheCallersSlice(t *testing.T) {
	var items []slotItem
	s := NewSlice(reflect.ValueOf(&items))
	s.Hint(2)
	for i := range 5 { // past the hint: grown in place of the caller's slice
		p := (*slotItem)(s.Next(nil))
		if p.ID != "" || p.N != 0 || p.Tags != nil {
			t.Fatalf("element %d not zero: %+v", i, *p)
		}
		*p = slotItem{ID: string(rune('a' + i)), N: i, Tags: []string{"x"}}
	}
	if len(items) != 5 || s.Len() != 5 || items[4].ID != "e" || items[0].N != 0 || items[3].N != 3 {
		t.Fatalf("items = %+v", items)
	}
	if got := s.Value(2).Interface().(slotItem); got.ID != "c" {
		t.Fatalf("Value(2) = %+v", got)
	}
	s.Drop(nil)
	if len(items) != 4 {
		t.Fatalf("after Drop: %d items", len(items))
	}
	if p := (*slotItem)(s.Next(nil)); p.ID != "" || p.Tags != nil {
		t.Fatalf("the dropped element came back: %+v", *p)
	}
	s.Reset()
	if len(items) != 0 || cap(items) < 5 {
		t.Fatalf("after Reset: len %d cap %d", len(items), cap(items))
	}
	for i, v := range items[:cap(items)] {
		if v.ID != "" || v.Tags != nil {
			t.Fatalf("element %d past the length not zero: %+v", i, v)
		}
	}
}

// TestPtrDecodesIntoTheCallersValue: Ptr hands out the caller's variable, zeroed
// when handed out again, and Drop zeroes it.
func TestPtrDecodesIntoTheCallersValue(t *testing.T) {
	var v slotItem
	s := Ptr{V: reflect.ValueOf(&v).Elem()}
	s.Hint(1)
	p := (*slotItem)(s.Next(nil))
	if p != &v || !s.Used {
		t.Fatalf("Next = %p, want the caller's %p", p, &v)
	}
	p.ID, p.Tags = "a", []string{"x"}
	if p = (*slotItem)(s.Next(nil)); p.ID != "" || p.Tags != nil {
		t.Fatalf("handed out again without zeroing: %+v", *p)
	}
	p.ID = "b"
	s.Drop(nil)
	if v.ID != "" || s.Used {
		t.Fatalf("after Drop: %+v used %v", v, s.Used)
	}
}
