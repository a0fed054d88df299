package keytmpl

import (
	"reflect"
	"testing"
	"time"
)

// TestErrorText checks that Error reads as the root package's KeyError without
// entity or attribute.
func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Reason: "r"}, "singletable: invalid key: r"},
		{&Error{Field: "f", Reason: "r"}, "singletable: invalid key (field f): r"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.err, got, c.want)
		}
	}
}

// TestRoundTrip renders a key of every format from a map and extracts it back.
func TestRoundTrip(t *testing.T) {
	tm, err := Parse("A#{s}#{n:06}#{t:time}#{d:date}{x:unix}{ms:unixms}{r:rev}#{u}", '#')
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 5, 1, 9, 30, 0, 5, time.UTC)
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	key, err := tm.RenderMap(map[string]any{"s": "x", "n": 42, "t": at, "d": at, "x": at, "ms": at, "r": at.Truncate(100), "u": uint8(7)}, false)
	if err != nil {
		t.Fatal(err)
	}
	const want = "A#x#000042#2024-05-01T09:30:00.000000005Z#2024-05-01" + "1714555800" + "1714555800000" + "2516877449999999999" + "#7"
	if key != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	got, err := tm.Extract(key)
	if err != nil {
		t.Fatal(err)
	}
	wantVals := map[string]any{"s": "x", "n": int64(42), "t": at, "d": day, "x": at.Truncate(time.Second), "ms": at.Truncate(time.Millisecond), "r": at.Truncate(100), "u": "7"}
	if !reflect.DeepEqual(got, wantVals) {
		t.Fatalf("Extract = %v, want %v", got, wantVals)
	}
	if _, err := tm.RenderMap(map[string]any{"s": "x#y"}, false); err == nil {
		t.Fatal("a value with the delimiter rendered")
	}
}
