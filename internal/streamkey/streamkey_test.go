package streamkey

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// parse inverts Of: it reads back the map a key was made from, and fails on a
// string Of cannot give. That such an inverse exists is what makes Of
// injective.
func parse(t *testing.T, key string) map[string]string {
	t.Helper()
	m := map[string]string{}
	prev, first := "", true
	next := func() string {
		n, rest, ok := strings.Cut(key, ":")
		l, err := strconv.Atoi(n)
		if !ok || err != nil || l < 0 || l > len(rest) || strconv.Itoa(l) != n {
			t.Fatalf("streamkey: %q is not a key: bad length %q", key, n)
		}
		key = rest[l:]
		return rest[:l]
	}
	for key != "" {
		name := next()
		if !first && name <= prev {
			t.Fatalf("streamkey: names out of order: %q after %q", name, prev)
		}
		prev, first = name, false
		m[name] = next()
	}
	return m
}

// TestOfInjective: the pairs that shared a rail under the keys used before
// (PK + NUL + SK in streamlambda; len(PK) + ":" + PK + SK in stream.Consume,
// which ignored the names) get different keys, and every key reads back as
// its map.
func TestOfInjective(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b map[string]string
	}{
		{"NUL in the partition key vs in the sort key", // issue 30, scenario 10
			map[string]string{"PK": "P#x\x00y", "SK": "z"}, map[string]string{"PK": "P#x", "SK": "y\x00z"}},
		{"digits and colons", map[string]string{"PK": "1:a", "SK": "b"}, map[string]string{"PK": "1", "SK": ":ab"}},
		{"empty sort key vs no sort key", map[string]string{"PK": "a", "SK": ""}, map[string]string{"PK": "a"}},
		{"names differ, values equal", map[string]string{"pk": "a", "sk": "b"}, map[string]string{"pk": "b", "sk": "a"}},
		{"a name holding a value", map[string]string{"a": "1:b"}, map[string]string{"a": "1", "b": ""}},
		{"numbers", map[string]string{"n": "1.5", "s": "0"}, map[string]string{"n": "1.50", "s": "0"}},
		{"binary", map[string]string{"id": "\xff\x00"}, map[string]string{"id": "\xff"}},
		{"empty map vs empty name", map[string]string{}, map[string]string{"": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := Of(tc.a), Of(tc.b)
			if ka == kb {
				t.Fatalf("Of(%q) == Of(%q) == %q", tc.a, tc.b, ka)
			}
			for _, m := range []map[string]string{tc.a, tc.b} {
				if got := parse(t, Of(m)); !maps.Equal(got, m) {
					t.Errorf("parse(Of(%q)) = %q", m, got)
				}
			}
		})
	}
	// Map iteration order does not change the key.
	m := map[string]string{"c": "3", "a": "1", "b": "2"}
	want := Of(m)
	for range 20 {
		if got := Of(maps.Clone(m)); got != want {
			t.Fatalf("Of is not deterministic: %q then %q", want, got)
		}
	}
}

// mapOf builds a key map of up to three attributes from fuzz data: each
// attribute is a length byte and that many bytes of name, then the same for its
// value. Any bytes (NUL, ':', digits, invalid UTF-8) reach the names and values.
func mapOf(data []byte) map[string]string {
	m := map[string]string{}
	take := func() string {
		if len(data) == 0 {
			return ""
		}
		n := min(int(data[0])%8, len(data)-1)
		s := string(data[1 : 1+n])
		data = data[1+n:]
		return s
	}
	for i := 0; i < 3 && len(data) > 0; i++ {
		name := take()
		m[name] = take()
	}
	return m
}

// FuzzOfInjective: Of gives equal keys exactly for equal maps, and every key
// reads back as the map it was made from.
func FuzzOfInjective(f *testing.F) {
	f.Add([]byte("\x02PK\x05P#x\x00y\x02SK\x01z"), []byte("\x02PK\x03P#x\x02SK\x03y\x00z"))
	f.Add([]byte("\x01a\x031:b"), []byte("\x01a\x011\x01b\x00"))
	f.Add([]byte("\x01n\x031.5"), []byte("\x01n\x041.50"))
	f.Add([]byte(""), []byte("\x00\x00"))
	f.Add([]byte("\x02id\x02\xff\x00"), []byte("\x02id\x01\xff"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ma, mb := mapOf(a), mapOf(b)
		ka, kb := Of(ma), Of(mb)
		if (ka == kb) != maps.Equal(ma, mb) {
			t.Fatalf("Of(%q) = %q, Of(%q) = %q", ma, ka, mb, kb)
		}
		if got := parse(t, ka); !maps.Equal(got, ma) {
			t.Fatalf("parse(Of(%q)) = %q", ma, got)
		}
	})
}

// BenchmarkOf: the key of a two-attribute primary key, as stream.Consume and
// streamlambda make it for every record.
func BenchmarkOf(b *testing.B) {
	b.ReportAllocs()
	m := map[string]string{"PK": "CUST#123456", "SK": "ORDER#2026-01-01#0001"}
	for b.Loop() {
		_ = Of(m)
	}
}

// BenchmarkOfBaseline is the key stream.Consume used before Of, for comparison
// in the same run: length-prefixed partition key and sort key, names ignored.
func BenchmarkOfBaseline(b *testing.B) {
	b.ReportAllocs()
	m := map[string]string{"PK": "CUST#123456", "SK": "ORDER#2026-01-01#0001"}
	pk, sk := "PK", "SK"
	for b.Loop() {
		p := m[pk]
		_ = strconv.Itoa(len(p)) + ":" + p + m[sk]
	}
}
