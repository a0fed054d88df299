package cursor

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numberSK keys by a string PK and a number SK.
type numberSK struct{}

func (numberSK) KeyText(key Item, a string) (string, bool) {
	switch v := key[a].(type) {
	case *types.AttributeValueMemberS:
		return v.Value, a == "PK"
	case *types.AttributeValueMemberN:
		return v.Value, a == "SK"
	}
	return "", false
}

func (numberSK) KeyValue(a, text string) (types.AttributeValue, bool) {
	if a == "SK" {
		return &types.AttributeValueMemberN{Value: text}, text != "x"
	}
	return &types.AttributeValueMemberS{Value: text}, true
}

func (numberSK) KeyTypeName(a string) string {
	if a == "SK" {
		return "number"
	}
	return "string"
}

func TestKeys(t *testing.T) {
	invalid := errors.New("invalid")
	attrs := []string{"PK", "SK"}
	key := Item{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberN{Value: "12"}}
	c, err := SealKey(nil, numberSK{}, KindQuery, ID{1}, attrs, key)
	require.NoError(t, err)
	got, err := OpenKey(nil, numberSK{}, KindQuery, ID{1}, attrs, c, invalid)
	require.NoError(t, err)
	assert.Equal(t, key, got)

	_, err = OpenKey(nil, numberSK{}, KindQuery, ID{2}, attrs, c, invalid)
	assert.ErrorIs(t, err, invalid, "another query's")
	_, err = OpenKey(nil, numberSK{}, KindQuery, ID{1}, attrs[:1], c, invalid)
	assert.ErrorIs(t, err, invalid, "trailing bytes")

	_, err = SealKey(nil, numberSK{}, KindQuery, ID{1}, attrs, Item{"PK": key["PK"]})
	assert.ErrorContains(t, err, "the last evaluated key has 1 attributes, want 2")
	_, err = SealKey(nil, numberSK{}, KindQuery, ID{1}, attrs, Item{"PK": key["PK"], "SK": &types.AttributeValueMemberS{Value: "12"}})
	assert.ErrorContains(t, err, `key attribute "SK" is missing or not a number`)

	bad := AppendText(AppendText(Begin(KindQuery, ID{1}), "p"), "x")
	_, err = OpenKey(nil, numberSK{}, KindQuery, ID{1}, attrs, Seal(nil, bad), invalid)
	assert.ErrorIs(t, err, invalid, "not a number where the table keys by numbers")
	_, _, ok := ReadKey(AppendText(nil, ""), numberSK{}, attrs[:1])
	assert.False(t, ok, "an empty value")
}
