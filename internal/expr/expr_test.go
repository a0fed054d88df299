package expr

import (
	"maps"
	"os"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// TestUpdate joins the clauses of each kind given, in DynamoDB's order.
func TestUpdate(t *testing.T) {
	for want, c := range map[string][4][]string{
		"":                                 {},
		"SET a = :v0, b = :v1":             {{"a = :v0", "b = :v1"}},
		"REMOVE a":                         {nil, {"a"}},
		"SET a = :v0 REMOVE b ADD c :v1":   {{"a = :v0"}, {"b"}, {"c :v1"}},
		"ADD c :v1 DELETE d :v2":           {nil, nil, {"c :v1"}, {"d :v2"}},
		"DELETE d :v2, e :v3":              {nil, nil, nil, {"d :v2", "e :v3"}},
		"SET a = :v0 REMOVE b, c DELETE d": {{"a = :v0"}, {"b", "c"}, {}, {"d"}},
	} {
		if got := Update(c[0], c[1], c[2], c[3]); got != want {
			t.Errorf("Update(%q) = %q, want %q", c, got, want)
		}
	}
}

// TestUpdatedAttrs finds the top-level attribute of each clause, not the names
// inside functions, paths or values.
func TestUpdatedAttrs(t *testing.T) {
	names := map[string]string{"#n0": "a", "#n1": "b", "#n2": "c", "#n3": "d", "#n4": "e", "#n5": "f"}
	for update, want := range map[string][]string{
		"SET #n0 = :v0, #n1 = list_append(if_not_exists(#n1, :v1), :v2) REMOVE #n2 ADD #n3 :v3 DELETE #n4 :v4": {"a", "b", "c", "d", "e"},
		"SET #n0.#n1[2] = :v0, #n2 = if_not_exists(#n5, :v1)":                                                  {"a", "c"},
		"REMOVE #n0[1], #n1.#n2":    {"a", "b"},
		"SET #n9 = :v0, #n0 = :v1":  {"a"},
		"SET #n0 = #n1 + :v0":       {"a"},
		"":                          nil,
		"ADD #n5 :v0 SET #n4 = :v1": {"f", "e"},
	} {
		if got := UpdatedAttrs(update, names); !reflect.DeepEqual(got, want) {
			t.Errorf("UpdatedAttrs(%q) = %q, want %q", update, got, want)
		}
	}
}

func TestSameAndUnchanged(t *testing.T) {
	var b Builder
	stored := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "P"}, "SK": &types.AttributeValueMemberS{Value: "S"},
		"b": &types.AttributeValueMemberN{Value: "2"}, "a": &types.AttributeValueMemberS{Value: "x"},
	}
	if got := Same(&b, "a", stored); got != "#n0 = :v0" {
		t.Fatalf("Same: %q", got)
	}
	if got := Same(&b, "z", stored); got != "attribute_not_exists(#n1)" {
		t.Fatalf("Same, absent: %q", got)
	}
	b = Builder{}
	got := Unchanged(&b, stored, "PK", "SK", []string{"a", "v"})
	if want := "(#n0 = :v0) AND (#n1 = :v1) AND (attribute_not_exists(#n2)) AND (attribute_exists(#n3))"; got != want {
		t.Fatalf("Unchanged: %q, want %q", got, want)
	}
	if n := b.Names(); n["#n0"] != "a" || n["#n1"] != "b" || n["#n2"] != "v" || n["#n3"] != "PK" {
		t.Fatalf("names: %v", n)
	}
}
