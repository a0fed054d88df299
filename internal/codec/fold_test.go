package codec

import (
	"strings"
	"testing"
)

func TestFoldKeyMatchesEqualFold(t *testing.T) {
	words := []string{"", "a", "A", "k", "K", "\u212a", "s", "S", "\u017f", "id", "ID", "Id", "iD", "\u0130d", "ß", "ẞ",
		"straße", "STRASSE", "Σ", "σ", "ς", "\xff", "\xfe", "\uFFFD", "customerId", "CUSTOMERID", "customer_id",
		"ǅ", "ǆ", "Ǆ", "µ", "Μ", "μ", "ﬀ", "ff"}
	for _, a := range words {
		for _, b := range words {
			if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKey(%q)==foldKey(%q) is %v, EqualFold is %v", a, b, got, want)
			}
		}
	}
}

func FuzzFoldKey(f *testing.F) {
	f.Add("K", "\u212a")
	f.Add("straße", "STRASSE")
	f.Add("\xff", "\uFFFD")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := foldKey(a) == foldKey(b), strings.EqualFold(a, b); got != want {
			t.Errorf("foldKey(%q)==foldKey(%q) is %v, EqualFold is %v", a, b, got, want)
		}
	})
}
