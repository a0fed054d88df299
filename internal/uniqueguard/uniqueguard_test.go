package uniqueguard

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func b(v string) types.AttributeValue { return &types.AttributeValueMemberB{Value: []byte(v)} }

// TestZero: what holds no unique value.
func TestZero(t *testing.T) {
	for _, av := range []types.AttributeValue{nil, &types.AttributeValueMemberNULL{Value: true}, s(""), n("0"), n("-0.00"), n("0e5"), b("")} {
		assert.True(t, Zero(av), "%#v", av)
	}
	for _, av := range []types.AttributeValue{s("x"), n("1"), n("0.001"), b("\x00"), &types.AttributeValueMemberBOOL{}, &types.AttributeValueMemberL{}} {
		assert.False(t, Zero(av), "%#v", av)
	}
}

// TestCanonicalSame: numbers compare by value, kinds never compare equal.
func TestCanonicalSame(t *testing.T) {
	assert.Equal(t, "N3/2", Canonical(n("1.50")))
	assert.Equal(t, Canonical(n("1.5")), Canonical(n("1.50")))
	assert.Equal(t, "N1", Canonical(n("1e0")))
	assert.Equal(t, "Sa", Canonical(s("a")))
	assert.Equal(t, "Bab", Canonical(b("ab")))
	assert.Equal(t, "Nx", Canonical(n("x")), "not a number: as given")
	assert.NotEqual(t, Canonical(s("1")), Canonical(n("1")))
	assert.NotEqual(t, Canonical(s("a")), Canonical(b("a")))
	assert.True(t, Same([]types.AttributeValue{s("o"), n("10")}, []types.AttributeValue{s("o"), n("1e1")}))
	assert.False(t, Same([]types.AttributeValue{s("o"), n("10")}, []types.AttributeValue{s("o"), n("11")}))
	assert.False(t, Same([]types.AttributeValue{s("o")}, []types.AttributeValue{s("o"), s("p")}))
}

// TestTexts: values as messages and owners show them.
func TestTexts(t *testing.T) {
	assert.Equal(t, "a", Text(s("a")))
	assert.Equal(t, "1.50", Text(n("1.50")))
	assert.Equal(t, "AAE=", Text(b("\x00\x01")))
	assert.Equal(t, "org+7+AAE=", ValuesText([]types.AttributeValue{s("org"), n("7"), b("\x00\x01")}))
	assert.Equal(t, "", ValuesText(nil))
	assert.Equal(t, []string{`"a"`, `"b\"c"`}, QuoteAll([]string{"a", `b"c`}))
}

// TestDigest: the digest names the type, the constraint and the values, and
// cannot be made ambiguous by moving text between them.
func TestDigest(t *testing.T) {
	d := Digest("User", "email", []types.AttributeValue{s("a@x")})
	assert.Len(t, d, 64)
	assert.Equal(t, d, Digest("User", "email", []types.AttributeValue{s("a@x")}))
	assert.Equal(t, Digest("T", "n", []types.AttributeValue{n("1.5")}), Digest("T", "n", []types.AttributeValue{n("1.50")}), "one number")
	for _, other := range []string{
		Digest("Admin", "email", []types.AttributeValue{s("a@x")}),
		Digest("User", "login", []types.AttributeValue{s("a@x")}),
		Digest("User", "email", []types.AttributeValue{s("b@x")}),
		Digest("User", "email", []types.AttributeValue{b("a@x")}),
		Digest("User", "emai", []types.AttributeValue{s("la@x")}),
		Digest("User", "email", []types.AttributeValue{s("a"), s("@x")}),
	} {
		assert.NotEqual(t, d, other)
	}
}

// TestOwner: an owner's key as a guard keeps it, and back.
func TestOwner(t *testing.T) {
	attrs := []string{"PK", "SK"}
	key := map[string]types.AttributeValue{"PK": s("USER#1"), "SK": s(`A"B`)}
	text := OwnerText(attrs, key)
	assert.Equal(t, `["USER#1","A\"B"]`, text)
	back, ok := OwnerKey(attrs, text)
	require.True(t, ok)
	assert.Equal(t, key, back)
	_, ok = OwnerKey(attrs, `["USER#1"]`)
	assert.False(t, ok, "a part missing")
	_, ok = OwnerKey(attrs, `nope`)
	assert.False(t, ok)
	assert.True(t, OwnedBy(map[string]types.AttributeValue{Owner: s(text)}, text))
	assert.False(t, OwnedBy(map[string]types.AttributeValue{Owner: s(text)}, `["USER#2","A\"B"]`))
	assert.False(t, OwnedBy(nil, text), "a missing guard is no one's")
}

// TestAction: a claim puts the guard, a free deletes it, each on the
// condition that it is free or the owner's.
func TestAction(t *testing.T) {
	key := map[string]types.AttributeValue{"PK": s("#singletable#unique#User#email#d"), "SK": s("unique")}
	g := Guard{Key: key, Claim: true, OwnerType: "User", Constraint: "email", Values: []types.AttributeValue{s("a@x")}}
	put := g.Action("tbl", "PK", "Type", `["U#1","U"]`).Put
	require.NotNil(t, put)
	assert.Equal(t, "tbl", *put.TableName)
	assert.Equal(t, "attribute_not_exists(#n0) OR #n1 = :v0", *put.ConditionExpression)
	assert.Equal(t, map[string]string{"#n0": "PK", "#n1": "_owner"}, put.ExpressionAttributeNames)
	assert.Equal(t, map[string]types.AttributeValue{":v0": s(`["U#1","U"]`)}, put.ExpressionAttributeValues)
	assert.Equal(t, types.ReturnValuesOnConditionCheckFailureAllOld, put.ReturnValuesOnConditionCheckFailure)
	assert.Equal(t, map[string]types.AttributeValue{
		"PK": key["PK"], "SK": key["SK"], "Type": s(Type), Owner: s(`["U#1","U"]`), OwnerType: s("User"), Constraint: s("email"),
		Values: &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a@x")}},
	}, put.Item)
	assert.Len(t, key, 2, "the key is not written into")

	g.Claim = false
	act := g.Action("tbl", "PK", "Type", `["U#1","U"]`)
	require.Nil(t, act.Put)
	del := act.Delete
	require.NotNil(t, del)
	assert.Equal(t, key, del.Key)
	assert.Equal(t, "attribute_not_exists(#n0) OR #n1 = :v0", *del.ConditionExpression)
	assert.Equal(t, types.ReturnValuesOnConditionCheckFailureAllOld, del.ReturnValuesOnConditionCheckFailure)
}
