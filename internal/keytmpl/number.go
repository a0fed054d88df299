package keytmpl

import (
	"math/big"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Keys of other types than strings (the root's keytypes.go) travel as text: a
// number's decimal digits, a binary's bytes.

// TextOf returns the text of a key attribute value (a string, a number's
// digits, a binary's bytes); ok is false for any other value.
func TextOf(av types.AttributeValue) (string, bool) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value, true
	case *types.AttributeValueMemberN:
		return v.Value, true
	case *types.AttributeValueMemberB:
		return string(v.Value), true
	}
	return "", false
}

// IsNumberText reports whether s is a number as DynamoDB takes it: an optional
// sign, digits with at most one point, an optional exponent.
func IsNumberText(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	_, ok := new(big.Float).SetString(s)
	return ok && !strings.ContainsAny(s, "xXpP_") && !strings.EqualFold(s, "inf") && !strings.EqualFold(strings.TrimLeft(s, "+-"), "inf") && !strings.EqualFold(strings.TrimLeft(s, "+-"), "infinity")
}

// CompareNumberText compares two numbers given as text (IsNumberText).
func CompareNumberText(a, b string) int {
	x, _ := new(big.Float).SetString(a)
	y, _ := new(big.Float).SetString(b)
	return x.Cmp(y)
}
