package wire

import (
	"reflect"
	"slices"
	"unsafe"
)

// The Slots the root package's reads use.

// Any hands out values of any Go type, each the type of its target's plan, for
// reads of many entity types (collections, mixed batches, transactional reads).
type Any struct{ Items []reflect.Value }

// Hint grows Items for n more items.
func (s *Any) Hint(n int) { s.Items = slices.Grow(s.Items, n) }

// Next appends a new value of t's type and returns its address.
func (s *Any) Next(t *Target) unsafe.Pointer {
	v := reflect.New(t.Plan.Type())
	s.Items = append(s.Items, v)
	return v.UnsafePointer()
}

// Drop removes the last value.
func (s *Any) Drop(*Target) {
	s.Items[len(s.Items)-1] = reflect.Value{}
	s.Items = s.Items[:len(s.Items)-1]
}

// Reset clears every value and empties Items, keeping its capacity.
func (s *Any) Reset() {
	clear(s.Items)
	s.Items = s.Items[:0]
}

// Slice is Values without a type parameter, compiled once for every Go type: it
// appends the items to a []T of the caller's (a page's Items), through its
// reflect.Value. Every element past the slice's length must be zero (a nil slice,
// or one that only Slice has grown); Drop and Reset keep it so.
type Slice struct {
	v    reflect.Value // the []T, settable
	hdr  *sliceHeader  // v's header, read and written in place
	elem reflect.Type
	size uintptr
}

// sliceHeader is the runtime's layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// NewSlice returns the Slots that append to the slice ptr points to (a *[]T, as
// a reflect.Value).
func NewSlice(ptr reflect.Value) Slice {
	v := ptr.Elem()
	elem := v.Type().Elem()
	return Slice{v: v, hdr: (*sliceHeader)(ptr.UnsafePointer()), elem: elem, size: elem.Size()}
}

// Len returns the number of values handed out and kept.
func (s *Slice) Len() int { return s.hdr.len }

// At returns the address of the i-th value.
func (s *Slice) At(i int) unsafe.Pointer { return unsafe.Add(s.hdr.data, uintptr(i)*s.size) }

// Value returns the i-th value, addressable.
func (s *Slice) Value(i int) reflect.Value { return reflect.NewAt(s.elem, s.At(i)).Elem() }

// Hint grows the slice for n more items.
func (s *Slice) Hint(n int) {
	if s.hdr.cap-s.hdr.len < n {
		s.v.Grow(n)
	}
}

// Next appends a zero value and returns its address.
func (s *Slice) Next(*Target) unsafe.Pointer {
	if s.hdr.len == s.hdr.cap {
		s.v.Grow(1)
	}
	s.hdr.len++
	return s.At(s.hdr.len - 1)
}

// Drop removes the last value, cleared first: what it references is garbage.
func (s *Slice) Drop(*Target) {
	s.Value(s.hdr.len - 1).SetZero()
	s.hdr.len--
}

// Reset clears every value and empties the slice, keeping its capacity.
func (s *Slice) Reset() {
	s.v.Clear()
	s.hdr.len = 0
}

// Ptr is One without a type parameter: the item is decoded into a value of the
// caller's (V, addressable), and Used says whether Next handed it out.
type Ptr struct {
	V    reflect.Value
	Used bool
}

// Hint does nothing: one item at most.
func (s *Ptr) Hint(int) {}

// Next returns the address of V, zeroed if it was handed out before.
func (s *Ptr) Next(*Target) unsafe.Pointer {
	if s.Used {
		s.V.SetZero()
	}
	s.Used = true
	return s.V.Addr().UnsafePointer()
}

// Drop discards V.
func (s *Ptr) Drop(*Target) { s.Reset() }

// Reset zeroes V and marks it unused.
func (s *Ptr) Reset() {
	s.V.SetZero()
	s.Used = false
}
