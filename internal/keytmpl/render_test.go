package keytmpl

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestAppendFixedTime checks the hand-written time formats against time.Time's
// AppendFormat: every day from 0001-01-01 to 9999-12-31 at a varying time of day,
// the ends of the range, and times in other zones.
func TestAppendFixedTime(t *testing.T) {
	check := func(tm time.Time) {
		t.Helper()
		sec := tm.Unix()
		if got, want := string(appendFixedTime([]byte("x"), sec, tm.Nanosecond(), true)), "x"+tm.UTC().Format(TimeLayout); got != want {
			t.Fatalf("%v: time %q, want %q", tm, got, want)
		}
		if got, want := string(appendFixedTime(nil, sec, tm.Nanosecond(), false)), tm.UTC().Format(DateLayout); got != want {
			t.Fatalf("%v: date %q, want %q", tm, got, want)
		}
	}
	start := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	if start.Unix() != minKeyUnix || end.Unix() != maxKeyUnix {
		t.Fatalf("key time range %d-%d, want %d-%d", minKeyUnix, maxKeyUnix, start.Unix(), end.Unix())
	}
	check(start)
	check(end)
	i := 0
	for d := start; d.Before(end); d = d.AddDate(0, 0, 1) {
		i++
		// A different second of the day and nanosecond each day.
		check(d.Add(time.Duration(i*7919%86400)*time.Second + time.Duration(i*104729%1_000_000_000)))
	}
	zone := time.FixedZone("X", -11*3600-30*60)
	for _, tm := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, zone), time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2000, 2, 29, 12, 0, 0, 1, zone), time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 11, 30, 0, 0, zone), time.Now(),
	} {
		check(tm)
	}
}

func TestPlainPart(t *testing.T) {
	for _, s := range []string{
		"", "a", "cust-7d3f2a", "ord-2024-000981", "#", "a#", "#abcdefgh", "abcdefgh#", "abcdefg#h", "abcdefghijklmnop#",
		"é", "abcdefghé", "abcdefghé#", "\xff", "abcdefgh\xff", "abc\x80defgh", "ab\x00cd", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f#",
		"########", "\"\"\"\"\"\"\"\"", "$$$$$$$$$$$$$$$$",
	} {
		for _, d := range []byte{'#', '|', '-', '"', '$'} {
			want := utf8.ValidString(s) && !strings.Contains(s, string(d))
			if got := plainPart(s, d); got != want {
				t.Errorf("plainPart(%q, %q) = %v, want %v", s, d, got, want)
			}
		}
	}
}
