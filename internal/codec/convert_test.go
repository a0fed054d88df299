package codec

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type named string

// TestConvert converts what keeps its meaning and refuses what would change or
// lose it.
func TestConvert(t *testing.T) {
	ok := []struct {
		in   any
		to   reflect.Type
		want any
	}{
		{5, reflect.TypeFor[int64](), int64(5)},
		{int64(-3), reflect.TypeFor[int8](), int8(-3)},
		{uint(7), reflect.TypeFor[int](), 7},
		{2.0, reflect.TypeFor[int](), 2},
		{4, reflect.TypeFor[uint16](), uint16(4)},
		{3, reflect.TypeFor[float64](), 3.0},
		{uint8(3), reflect.TypeFor[float32](), float32(3)},
		{"x", reflect.TypeFor[named](), named("x")},
		{true, reflect.TypeFor[bool](), true},
		{[]named{"a"}, reflect.TypeFor[[]named](), []named{"a"}},
		{[]byte("b"), reflect.TypeFor[[]uint8](), []byte("b")},
		{nil, reflect.TypeFor[*int](), (*int)(nil)},
		{nil, reflect.TypeFor[[]string](), []string(nil)},
	}
	for _, c := range ok {
		got, err := Convert(c.in, c.to)
		require.NoError(t, err, "%v to %s", c.in, c.to)
		assert.Equal(t, c.to, got.Type())
		assert.Equal(t, c.want, got.Interface(), "%v to %s", c.in, c.to)
	}
	p, err := Convert(5, reflect.TypeFor[*int64]())
	require.NoError(t, err)
	assert.Equal(t, int64(5), *p.Interface().(*int64))

	for _, c := range []struct {
		in   any
		to   reflect.Type
		want string
	}{
		{nil, reflect.TypeFor[int](), "nil for a field of type int"},
		{300, reflect.TypeFor[int8](), "300 overflows int8"},
		{-1, reflect.TypeFor[uint](), "-1 does not fit uint"},
		{2.5, reflect.TypeFor[int](), "2.5 does not fit int"},
		{uint64(1 << 63), reflect.TypeFor[int64](), "9223372036854775808 does not fit int64"},
		{5, reflect.TypeFor[string](), "a int cannot be stored in a field of type string"},
		{"5", reflect.TypeFor[int](), "a string cannot be stored in a field of type int"},
		{300, reflect.TypeFor[*int8](), "300 overflows int8"},
	} {
		_, err := Convert(c.in, c.to)
		require.Error(t, err, "%v to %s", c.in, c.to)
		assert.Equal(t, c.want, err.Error())
	}
}

// TestElems converts each element and names the one that fails.
func TestElems(t *testing.T) {
	v, err := Elems(reflect.TypeFor[[]int16](), []any{1, int64(2), 3.0})
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 2, 3}, v.Interface())
	_, err = Elems(reflect.TypeFor[[]int8](), []any{1, 1000})
	require.Error(t, err)
	assert.Equal(t, "element 1: 1000 overflows int8", err.Error())
}
