package wire

import (
	"reflect"
	"slices"
	"unsafe"
)

// The Slots the root package's reads use.

// Values hands out the values of one response's items of one Go type T, in a
// slice (Items) the page can keep.
type Values[T any] struct{ Items []T }

// Hint grows Items for n more items.
func (s *Values[T]) Hint(n int) { s.Items = slices.Grow(s.Items, n) }

// Next appends a zero T and returns its address.
func (s *Values[T]) Next(*Target) unsafe.Pointer {
	var zero T
	s.Items = append(s.Items, zero)
	return unsafe.Pointer(&s.Items[len(s.Items)-1])
}

// Drop removes the last value, cleared first: what it references is garbage.
func (s *Values[T]) Drop(*Target) {
	var zero T
	s.Items[len(s.Items)-1] = zero
	s.Items = s.Items[:len(s.Items)-1]
}

// Reset clears every value and empties Items, keeping its capacity.
func (s *Values[T]) Reset() {
	clear(s.Items)
	s.Items = s.Items[:0]
}

// One is Values for one item (GetItem), without a slice: V holds it, and Used
// says whether Next handed it out.
type One[T any] struct {
	V    T
	Used bool
}

// Hint does nothing: one item at most.
func (s *One[T]) Hint(int) {}

// Next returns the address of V, zeroed if it was handed out before (a second
// item of GetItem: never; it keeps the first's place).
func (s *One[T]) Next(*Target) unsafe.Pointer {
	if s.Used {
		var zero T
		s.V = zero
	}
	s.Used = true
	return unsafe.Pointer(&s.V)
}

// Drop discards V.
func (s *One[T]) Drop(*Target) { s.Reset() }

// Reset zeroes V and marks it unused.
func (s *One[T]) Reset() {
	var zero T
	s.V, s.Used = zero, false
}

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
