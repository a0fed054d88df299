package keyshape

import (
	"testing"

	"github.com/singletable/singletable/internal/keytmpl"
)

func TestPrefixFor(t *testing.T) {
	for in, want := range map[string]string{"order-line": "ORDERLINE", "Ü": "TYPE", "v2Item": "V2ITEM", "": "TYPE"} {
		if got := PrefixFor(in); got != want {
			t.Errorf("PrefixFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLangOf(t *testing.T) {
	lang := func(text string, phs ...Ph) *Lang {
		tm, err := keytmpl.Parse(text, '#')
		if err != nil {
			t.Fatal(err)
		}
		return LangOf(tm, phs)
	}
	order := lang("ORDER#{id}", Ph{Kind: keytmpl.KindString})
	line := lang("ORDER#{n:05}", Ph{Kind: keytmpl.KindUint})
	if k, ok := CommonKey(order, line); !ok || len(k) != len("ORDER#00000") || k[:6] != "ORDER#" {
		t.Fatalf("a string and a padded number after one prefix share %q, %v", k, ok)
	}
	if k, ok := CommonKey(lang("A#{id}", Ph{Kind: keytmpl.KindString}), lang("B#{id}", Ph{Kind: keytmpl.KindString})); ok {
		t.Fatalf("distinct prefixes share %q", k)
	}
	if k, ok := CommonKey(lang("S#{s}", Ph{Kind: keytmpl.KindInt, Shards: 3}), lang("S#4")); ok {
		t.Fatalf("shards 1..3 render 4: %q", k)
	}
}
