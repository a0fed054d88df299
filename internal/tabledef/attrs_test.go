package tabledef

import (
	"strings"
	"testing"
)

func TestCheckOwn(t *testing.T) {
	receipt := func(name string) bool { return name == "_wr0" || name == "_wru" }
	keys := []string{"PK", "SK", "GSI1PK"}
	typ := Own{"the type attribute (WithTypeAttribute)", "Type"}
	if err := CheckOwn(keys, []Own{typ, {"the TTL attribute (WithTTLAttribute)", ""}}, receipt, "_wr"); err != nil {
		t.Fatal(err)
	}
	for want, own := range map[string][]Own{
		`the type attribute (WithTypeAttribute) "PK" is also a key attribute`:                                  {{typ.What, "PK"}},
		`the schema attribute (WithSchemaAttribute) "Type" is also the type attribute (WithTypeAttribute)`:     {typ, {"the schema attribute (WithSchemaAttribute)", "Type"}},
		`the TTL attribute (WithTTLAttribute) "_wru" is also a receipt attribute (WithReceiptAttribute "_wr")`: {typ, {"the TTL attribute (WithTTLAttribute)", "_wru"}},
	} {
		if err := CheckOwn(keys, own, receipt, "_wr"); err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	err := CheckOwn([]string{"PK", "_wr0"}, []Own{typ}, receipt, "_wr")
	if err == nil || !strings.Contains(err.Error(), `a key attribute "_wr0" is also a receipt attribute`) {
		t.Errorf("a key named like a receipt slot: %v", err)
	}
}
