// Package streamkey gives the default rail key of a stream record, shared by
// stream.Consume and package streamlambda so that both put the
// records of one item, and only those, on one rail.
package streamkey

import (
	"slices"
	"strconv"
	"strings"
)

// Of returns the rail key of a record whose primary key is key: the names of
// the key attributes mapped to their values (S and N as their text, B as their
// bytes), as a stream record's Keys give them. It is injective: two different
// maps never give the same string, whatever the names and values hold (NUL,
// ':', digits, invalid UTF-8, empty strings), because every name and every
// value is written with its length before it, names in sorted order. Equal
// maps give equal strings.
//
// Within one table a key attribute has one type, and DynamoDB gives numbers in
// one canonical form (it writes 1.50, 001.5 and 15E-1 all as 1.5), so the
// records of one item get one key and those of two items get two. Of does not
// modify key and is safe for concurrent use.
func Of(key map[string]string) string {
	var buf [2]string // a table's key has one or two attributes: sorting them allocates nothing
	names := buf[:0]
	size := 0
	for name, value := range key {
		names = append(names, name)
		size += digits(len(name)) + 1 + len(name) + digits(len(value)) + 1 + len(value)
	}
	slices.Sort(names)
	var b strings.Builder
	b.Grow(size)
	var num [20]byte
	for _, name := range names {
		value := key[name]
		b.Write(strconv.AppendInt(num[:0], int64(len(name)), 10))
		b.WriteByte(':')
		b.WriteString(name)
		b.Write(strconv.AppendInt(num[:0], int64(len(value)), 10))
		b.WriteByte(':')
		b.WriteString(value)
	}
	return b.String()
}

// digits returns the number of decimal digits of n >= 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
