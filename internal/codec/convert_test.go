package codec

import (
	"fmt"
	"reflect"
	"testing"
	"time"

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

type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

// TestParseDefault parses default= texts by type and names the type in its
// errors.
func TestParseDefault(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 500, time.UTC)
	for _, c := range []struct {
		text string
		to   reflect.Type
		want any
	}{
		{"x y", reflect.TypeFor[named](), named("x y")},
		{"true", reflect.TypeFor[bool](), true},
		{"-7", reflect.TypeFor[int8](), int8(-7)},
		{"200", reflect.TypeFor[uint8](), uint8(200)},
		{"1.5", reflect.TypeFor[float32](), float32(1.5)},
		{"2024-05-06T07:08:09.0000005Z", reflect.TypeFor[time.Time](), when},
		{"high", reflect.TypeFor[level](), level(2)},
	} {
		v, err := ParseDefault(c.to, c.text)
		require.NoError(t, err, c.text)
		assert.Equal(t, c.want, v.Interface(), c.text)
	}
	for _, c := range []struct {
		text string
		to   reflect.Type
		want string
	}{
		{"300", reflect.TypeFor[int8](), "does not parse as int8: value out of range"},
		{"x", reflect.TypeFor[int](), "does not parse as int: invalid syntax"},
		{"-1", reflect.TypeFor[uint](), "does not parse as uint: invalid syntax"},
		{"yes!", reflect.TypeFor[bool](), "does not parse as bool: invalid syntax"},
		{"2024-05-06", reflect.TypeFor[time.Time](), `does not parse as time.Time: parsing time "2024-05-06" as "2006-01-02T15:04:05.999999999Z07:00": cannot parse "" as "T"`},
		{"mid", reflect.TypeFor[level](), `unknown level "mid"`},
		{"[]", reflect.TypeFor[[]string](), "a default is text, parsed for strings, numbers, booleans, times or encoding.TextUnmarshaler types, not []string"},
	} {
		_, err := ParseDefault(c.to, c.text)
		require.Error(t, err, c.text)
		assert.Equal(t, c.want, err.Error())
	}
}

// TestSetThrough sets a value, or a new pointer to it.
func TestSetThrough(t *testing.T) {
	var s struct {
		N int
		P *int
	}
	sv := reflect.ValueOf(&s).Elem()
	SetThrough(sv.Field(0), reflect.ValueOf(3))
	SetThrough(sv.Field(1), reflect.ValueOf(4))
	assert.Equal(t, 3, s.N)
	require.NotNil(t, s.P)
	assert.Equal(t, 4, *s.P)
}
