package fault

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKeyCondition(t *testing.T) {
	names := map[string]string{"#pk": "GSI1PK", "#sk": "GSI1SK"}
	values := map[string]json.RawMessage{
		":p": json.RawMessage(`{"S":"A"}`), ":lo": json.RawMessage(`{"S":"b"}`),
		":hi": json.RawMessage(`{"S":"d"}`), ":n": json.RawMessage(`{"N":"10"}`),
	}
	it := item{"GSI1PK": json.RawMessage(`{"S":"A"}`), "GSI1SK": json.RawMessage(`{"S":"c"}`)}
	ix := indexInfo{hash: "GSI1PK", sort: "GSI1SK"}
	tests := []struct {
		expr  string
		match bool
	}{
		{"#pk = :p", true},
		{"GSI1PK = :p", true},
		{":p = #pk", true},
		{"#pk = :lo", false},
		{"#pk = :p AND #sk BETWEEN :lo AND :hi", true},
		{"#pk = :p and #sk between :hi and :hi", false},
		{"(#pk = :p) AND (begins_with(#sk, :lo))", false},
		{"#pk=:p AND begins_with ( #sk , :p )", false},
		{"#pk = :p AND #sk > :lo", true},
		{"#pk = :p AND #sk >= :hi", false},
		{"#pk = :p AND :hi > #sk", true},
		{"#pk = :p AND #sk < :lo", false},
		{"#pk = :p AND #sk <= :hi", true},
		{"#sk = :lo", false},               // no partition term
		{"#pk = :p AND other = :p", false}, // a term on another attribute
		{"#pk = :p AND #sk > :n", false},   // a number never matches a string
	}
	for _, tt := range tests {
		terms, err := parseKeyCondition(tt.expr, names, values)
		require.NoError(t, err, tt.expr)
		require.Equal(t, tt.match, matchesKey(terms, it, ix), tt.expr)
	}
	for _, bad := range []string{"", "#pk =", "#pk = :missing", "#nope = :p", "#pk = :p AND", "#pk = #sk", "#pk = :p)", "#pk <> :p", "#pk BETWEEN :lo"} {
		_, err := parseKeyCondition(bad, names, values)
		require.Error(t, err, bad)
	}
}

func TestScalars(t *testing.T) {
	sc := func(raw string) scalar {
		v, err := parseScalar(json.RawMessage(raw))
		require.NoError(t, err, raw)
		return v
	}
	require.Equal(t, sc(`{"N":"1.50"}`).canonical(), sc(`{"N":"1.5"}`).canonical())
	require.Equal(t, sc(`{"N":"100"}`).canonical(), sc(`{"N":"1E2"}`).canonical())
	c, ok := compare(sc(`{"N":"9"}`), sc(`{"N":"10"}`))
	require.True(t, ok)
	require.Negative(t, c, "numbers compare by value")
	c, _ = compare(sc(`{"S":"9"}`), sc(`{"S":"10"}`))
	require.Positive(t, c, "strings compare by bytes")
	c, _ = compare(sc(`{"B":"AAE="}`), sc(`{"B":"AQ=="}`))
	require.Negative(t, c, "binaries compare by bytes")
	_, ok = compare(sc(`{"S":"1"}`), sc(`{"N":"1"}`))
	require.False(t, ok)
	for _, bad := range []string{`{"BOOL":true}`, `{"S":"a","N":"1"}`, `{"N":"x"}`, `[]`} {
		_, err := parseScalar(json.RawMessage(bad))
		require.Error(t, err, bad)
	}
}
