package expr

import (
	"maps"
	"os"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable/singletable/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(m.Run())) }

func guard(b *Builder) string {
	return "attribute_not_exists(" + b.Name("PK") + ") OR " + b.Name("Type") + " = " + b.S("Order")
}

// TestFixedSameAsBuilt checks that a Builder started from a Fixed gives what building
// the expression again gives, also when names, values and a condition are added
// afterwards, and that adding to it leaves the Fixed as it was.
func TestFixedSameAsBuilt(t *testing.T) {
	var fb Builder
	f := fb.Fix(guard(&fb))
	names, values := maps.Clone(f.names), maps.Clone(f.values)
	if *f.TextPtr() != f.Text() || f.Text() != "attribute_not_exists(#n0) OR #n1 = :v0" {
		t.Fatalf("text %q", f.Text())
	}
	more := func(b *Builder, text string) string {
		text += " AND " + b.Name("Type") + " <> " + b.Name("status") + " AND " + b.S("x")
		c, err := b.Condition(expression.Name("a").Equal(expression.Value(1)))
		if err != nil {
			t.Fatal(err)
		}
		return text + " AND " + c
	}
	for _, add := range []bool{false, true} {
		var built, used Builder
		wt, gt := guard(&built), used.Use(f)
		if add {
			wt, gt = more(&built, wt), more(&used, gt)
		}
		if gt != wt || !reflect.DeepEqual(used.Names(), built.Names()) || !reflect.DeepEqual(used.Values(), built.Values()) {
			t.Errorf("add=%v: from the Fixed %q %v %v; built %q %v %v", add, gt, used.Names(), used.Values(), wt, built.Names(), built.Values())
		}
		if !maps.Equal(f.names, names) || !maps.Equal(f.values, values) {
			t.Fatalf("add=%v: the Fixed changed: %v %v", add, f.names, f.values)
		}
	}
}

func TestAnd(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"", ""}, ""}, {[]string{"a", ""}, "a"}, {[]string{"", "b"}, "b"}, {[]string{"a", "b"}, "(a) AND (b)"},
	} {
		if got := And(tc.in...); got != tc.want {
			t.Errorf("And(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if Ptr("") != nil || *Ptr("x") != "x" {
		t.Error("Ptr")
	}
}
