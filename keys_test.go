package singletable

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/keytmpl"
)

func TestParseTemplateErrors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"empty", "", "empty template"},
		{"unclosed", "CUST#{id", "unclosed"},
		{"stray close", "CUST#id}", "unexpected '}'"},
		{"empty name", "CUST#{}", "empty placeholder name"},
		{"nested", "CUST#{a{b}}", "unclosed"},
		{"unknown format", "T#{at:iso}", "unknown format"},
		{"zero width", "N#{n:0}", "unknown format"},
		{"bad width", "N#{n:0x}", "unknown format"},
		{"too wide", "N#{n:021}", "unknown format"},
		{"adjacent", "{a}{b}", "variable width"},
		{"no delimiter after", "{a}-{b}", "variable width"},
		{"repeated", "{a}#{a}", "appears twice"},
		{"invalid utf8", "A#\xff{a}", "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTemplate(c.text, '#')
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidKey)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := ParseTemplate("A{a}", 'a')
	assert.ErrorIs(t, err, ErrInvalidKey, "a letter is not a delimiter")
}

func TestParseTemplateAccepts(t *testing.T) {
	for _, text := range []string{
		"PROFILE", "CUST#{id}", "{id}", "ORDER#{createdAt:time}#{orderId}",
		"{n:08}{m:04}", "{n:08}X{id}", "EVENTS#{day:date}#SHARD{shard}", "FEED#{at:rev}",
	} {
		tm, err := ParseTemplate(text, '#')
		require.NoError(t, err, text)
		assert.Equal(t, text, tm.String())
	}
}

func TestRenderFormats(t *testing.T) {
	at := time.Date(2024, 5, 1, 9, 30, 0, 123456789, time.FixedZone("X", 2*3600))
	cases := []struct {
		text   string
		values map[string]any
		want   string
	}{
		{"CUST#{id}", map[string]any{"id": "c1"}, "CUST#c1"},
		{"ISSUE#{number:08}", map[string]any{"number": 42}, "ISSUE#00000042"},
		{"ISSUE#{number:08}", map[string]any{"number": uint8(7)}, "ISSUE#00000007"},
		{"N#{n}", map[string]any{"n": -5}, "N#-5"},
		{"T#{at:time}", map[string]any{"at": at}, "T#2024-05-01T07:30:00.123456789Z"},
		{"T#{at}", map[string]any{"at": at}, "T#2024-05-01T07:30:00.123456789Z"},
		{"D#{at:date}", map[string]any{"at": at}, "D#2024-05-01"},
		{"U#{at:unix}", map[string]any{"at": at}, "U#1714548600"},
		{"M#{at:unixms}", map[string]any{"at": at}, "M#1714548600123"},
		{"R#{at:rev}", map[string]any{"at": time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)}, "R#0000000000000000000"},
		{"R#{at:rev}", map[string]any{"at": time.Date(1, 1, 1, 0, 0, 0, 100, time.UTC)}, "R#3155378975999999998"},
		{"ORDER#{orderId}#ITEM#{itemId}", map[string]any{"orderId": "o1", "itemId": "i2"}, "ORDER#o1#ITEM#i2"},
	}
	for _, c := range cases {
		tm, err := ParseTemplate(c.text, '#')
		require.NoError(t, err)
		got, err := tm.Render(c.values)
		require.NoError(t, err, c.text)
		assert.Equal(t, c.want, got, c.text)
	}
}

func TestRevSortsNewestFirst(t *testing.T) {
	tm, err := ParseTemplate("{at:rev}", '#')
	require.NoError(t, err)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 100 {
		k, err := tm.Render(map[string]any{"at": t0.Add(time.Duration(i) * 137 * time.Millisecond)})
		require.NoError(t, err)
		assert.Len(t, k, 19)
		if prev != "" {
			assert.Less(t, k, prev, "a later time must sort first")
		}
		prev = k
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		text   string
		values map[string]any
		field  string
		want   string
	}{
		{"CUST#{id}", map[string]any{"id": "a#b"}, "id", "contains the delimiter"},
		{"CUST#{id}", map[string]any{}, "id", "missing"},
		{"CUST#{id}", map[string]any{"id": ""}, "id", "missing"},
		{"CUST#{id}", map[string]any{"id": "\xff"}, "id", "UTF-8"},
		{"N#{n:04}", map[string]any{"n": 12345}, "n", "wider than 4"},
		{"N#{n:04}", map[string]any{"n": -1}, "n", "negative"},
		{"N#{n:04}", map[string]any{"n": "12"}, "n", "integer"},
		{"T#{at:date}", map[string]any{"at": "2024"}, "at", "time.Time"},
		{"T#{at:unix}", map[string]any{"at": time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}, "at", "before 1970"},
		{"T#{at:time}", map[string]any{"at": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "at", "outside 0001-9999"},
		{"X#{v}", map[string]any{"v": 1.5}, "v", "unsupported"},
	}
	for _, c := range cases {
		t.Run(c.text+"/"+c.want, func(t *testing.T) {
			tm, err := ParseTemplate(c.text, '#')
			require.NoError(t, err)
			_, err = tm.Render(c.values)
			require.Error(t, err)
			var ke *KeyError
			require.True(t, errors.As(err, &ke))
			assert.Equal(t, c.field, ke.Field)
			assert.ErrorIs(t, err, ErrInvalidKey)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestPrefix(t *testing.T) {
	tm, err := ParseTemplate("ORDER#{orderId}#ITEM#{itemId}", '#')
	require.NoError(t, err)
	cases := []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "ORDER#"},
		{map[string]any{"orderId": "5"}, "ORDER#5#ITEM#"},
		{map[string]any{"orderId": "5", "itemId": "9"}, "ORDER#5#ITEM#9"},
		{map[string]any{"itemId": "9"}, "ORDER#"},
	}
	for _, c := range cases {
		got, err := tm.Prefix(c.values)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
	assert.Equal(t, "ORDER#", tm.StaticPrefix())
}

func TestExtract(t *testing.T) {
	tm, err := ParseTemplate("REPO#{owner}#{name}#ISSUE#{number:08}#{at:time}", '#')
	require.NoError(t, err)
	at := time.Date(2024, 5, 1, 9, 30, 0, 5, time.UTC)
	key, err := tm.Render(map[string]any{"owner": "aws", "name": "sdk", "number": 42, "at": at})
	require.NoError(t, err)
	got, err := tm.Extract(key)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"owner": "aws", "name": "sdk", "number": int64(42), "at": at}, got)

	for _, bad := range []string{
		"REPO#aws#sdk#ISSUE#42#2024-05-01T09:30:00.000000005Z",        // not padded
		"REPO#aws#sdk#ISSUE#00000042#2024-05-01T09:30:00Z",            // short time
		"REPO#aws#ISSUE#00000042#2024-05-01T09:30:00.000000005Z",      // missing part
		"REPO#aws#sdk#ISSUE#00000042#2024-05-01T09:30:00.000000005Zx", // trailing
		"REPO##sdk#ISSUE#00000042#2024-05-01T09:30:00.000000005Z",     // empty value
		"ORDER#1",
	} {
		_, err := tm.Extract(bad)
		assert.ErrorIs(t, err, ErrInvalidKey, bad)
	}
	rev, err := ParseTemplate("F#{at:rev}", '#')
	require.NoError(t, err)
	k, err := rev.Render(map[string]any{"at": at})
	require.NoError(t, err)
	back, err := rev.Extract(k)
	require.NoError(t, err)
	assert.True(t, at.Truncate(100).Equal(back["at"].(time.Time)))
}

// fuzzValues turns fuzz input into a value for each placeholder of a template,
// choosing a kind that fits the placeholder's format.
func fuzzValues(tm *Template, s string, n int64, at int64) map[string]any {
	vals := map[string]any{}
	parts := strings.Split(s, "|")
	for i, seg := range tm.k.Segs {
		if seg.Name == "" {
			continue
		}
		switch {
		case seg.Format == keytmpl.Pad:
			vals[seg.Name] = (n + int64(i)) & 0x7fffffff
		case seg.Format.IsTime():
			vals[seg.Name] = time.Unix(0, at).Add(time.Duration(i) * time.Hour).UTC()
		default:
			vals[seg.Name] = parts[i%len(parts)]
		}
	}
	return vals
}

func FuzzTemplate(f *testing.F) {
	for _, seed := range []string{
		"CUST#{id}", "ORDER#{createdAt:time}#{orderId}", "{n:08}{m:04}", "REPO#{owner}#{name}",
		"FEED#{at:rev}#{id}", "{a}", "{a:unixms}X{b}", "E#{d:date}#S{s}", "{", "}{", "{a:}",
	} {
		f.Add(seed, "a|b|c", int64(42), int64(1714548600123456789))
	}
	f.Fuzz(func(t *testing.T, text, values string, n, at int64) {
		tm, err := ParseTemplate(text, '#')
		if err != nil {
			return
		}
		vals := fuzzValues(tm, values, n, at)
		key, err := tm.Render(vals)
		if err != nil {
			return
		}
		got, err := tm.Extract(key)
		if err != nil {
			t.Fatalf("Extract(%q) of %q: %v", key, text, err)
		}
		// Re-rendering what was extracted gives the same key.
		again, err := tm.Render(got)
		if err != nil || again != key {
			t.Fatalf("round trip of %q: %q -> %v -> %q (%v)", text, key, got, again, err)
		}
		prefix, err := tm.Prefix(vals)
		if err != nil || prefix != key {
			t.Fatalf("Prefix with all values = %q, want %q (%v)", prefix, key, err)
		}
	})
}

func FuzzKeyInjective(f *testing.F) {
	f.Add("ORDER#{orderId}#ITEM#{itemId}", "a|b", "a#b|", int64(1), int64(2))
	f.Add("{a}#{b}", "x|y", "x#|y", int64(1), int64(1))
	f.Add("{n:04}{m:04}", "", "", int64(12), int64(1234))
	f.Fuzz(func(t *testing.T, text, v1, v2 string, n1, n2 int64) {
		tm, err := ParseTemplate(text, '#')
		if err != nil {
			return
		}
		a := fuzzValues(tm, v1, n1, n1*1e9)
		b := fuzzValues(tm, v2, n2, n2*1e9)
		ka, errA := tm.Render(a)
		kb, errB := tm.Render(b)
		if errA != nil || errB != nil || ka != kb {
			return
		}
		// Equal keys must come from equal parts: each value, in its format, is the same.
		// (Formats like date are lossy on purpose; strings and integers are not.)
		for _, seg := range tm.k.Segs {
			if seg.Name == "" {
				continue
			}
			va, _ := keytmpl.ValueOf(a[seg.Name])
			vb, _ := keytmpl.ValueOf(b[seg.Name])
			pa, _ := tm.k.AppendValue(nil, seg, va)
			pb, _ := tm.k.AppendValue(nil, seg, vb)
			if string(pa) != string(pb) {
				t.Fatalf("%q: different parts %q and %q render the same key %q", text, pa, pb, ka)
			}
			if va.Kind == keytmpl.KindString && va.S != vb.S {
				t.Fatalf("%q: different strings %q and %q render the same key %q", text, va.S, vb.S, ka)
			}
		}
	})
}

// TestKeyErrorOfKeytmpl checks that internal/keytmpl's errors become *KeyError
// with the same text, matching ErrInvalidKey, and that other errors pass as they are.
func TestKeyErrorOfKeytmpl(t *testing.T) {
	for _, e := range []*keytmpl.Error{{Reason: "r"}, {Field: "f", Reason: "r"}} {
		err := keyError(e)
		var ke *KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, e.Error(), err.Error())
		assert.ErrorIs(t, err, ErrInvalidKey)
	}
	require.NoError(t, keyError(nil))
	other := errors.New("other")
	assert.Same(t, other, keyError(other))
}
