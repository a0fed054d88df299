package codec

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseStructTag(t *testing.T) {
	got, err := ParseStructTag(`PK:"USER#{id}"  SK:"A \"q\"" json:"-"`)
	want := []TagPair{{"PK", "USER#{id}"}, {"SK", `A "q"`}, {"json", "-"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := ParseStructTag("  "); err != nil || got != nil {
		t.Fatalf("blank: %q, %v", got, err)
	}
	for tag, reason := range map[string]string{
		`PK`:               "malformed struct tag near",
		`PK:x`:             "malformed struct tag near",
		`:"x"`:             "malformed struct tag near",
		`PK:"x`:            `unterminated value for tag "PK"`,
		`PK:"\q"`:          `bad value for tag "PK"`,
		`PK:"a" PK:"b"`:    `tag "PK" appears twice`,
		"P\x7fK:\"a\"":     "malformed struct tag near",
		`PK:"a"SK:"b" :""`: "malformed struct tag near",
	} {
		if _, err := ParseStructTag(tag); err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%q: %v, want %q", tag, err, reason)
		}
	}
}
