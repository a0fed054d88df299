// Package uniqueguard holds what the root package's unique values (unique.go)
// do apart from any entity: a guard item's attributes and its transaction
// action, the digest that keys it, the owner's key as a guard keeps it, and the
// values compared, tested for zero and rendered as text; the constraints parsed
// and checked (plan.go), the guards a write claims and frees and why a claim was
// refused, the attempts of a guarded write and their judgement after a
// cancellation or a lost answer (Send), and the sweep's repairs.
package uniqueguard

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/reserved"
)

// Type is the type attribute of a guard item.
const Type = reserved.TypePrefix + "Unique"

// The attributes of a guard item, beside its key and type.
const (
	Owner      = "_owner"      // the owner's primary key, a JSON array of its key strings
	OwnerType  = "_ownerType"  // the owner's type attribute
	Constraint = "_constraint" // the constraint ("email", "orgId+slug")
	Values     = "_values"     // the values, a list
)

// Zero reports whether av holds no unique value: missing, NULL, "", a number
// equal to 0, empty bytes.
func Zero(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value == ""
	case *types.AttributeValueMemberN:
		r, ok := new(big.Rat).SetString(v.Value)
		return ok && r.Sign() == 0
	case *types.AttributeValueMemberB:
		return len(v.Value) == 0
	case nil, *types.AttributeValueMemberNULL:
		return true
	}
	return false
}

// Same reports whether two values of a constraint are the same.
func Same(a, b []types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if Canonical(a[i]) != Canonical(b[i]) {
			return false
		}
	}
	return true
}

// Canonical is a value's canonical bytes: a type tag, then the string, the
// number (as a reduced fraction: 1.50 and 1.5 are one number) or the bytes.
func Canonical(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return "S" + v.Value
	case *types.AttributeValueMemberN:
		if r, ok := new(big.Rat).SetString(v.Value); ok {
			return "N" + r.RatString()
		}
		return "N" + v.Value
	case *types.AttributeValueMemberB:
		return "B" + string(v.Value)
	}
	return "?" + attrvalue.Text(av)
}

// Text is a unique value, or a key string, as plain text: a string as it is,
// a number's digits, bytes in base 64.
func Text(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return base64.StdEncoding.EncodeToString(v.Value)
	}
	return attrvalue.Text(av)
}

// ValuesText is a constraint's values for messages, joined by "+".
func ValuesText(vs []types.AttributeValue) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += "+"
		}
		s += Text(v)
	}
	return s
}

// QuoteAll quotes each of ss.
func QuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// Digest is the hex SHA-256 of the entity type, the constraint and the values
// (each canonical, each length-prefixed): the part of a guard's partition key
// that names its values.
func Digest(discriminator, constraint string, values []types.AttributeValue) string {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(discriminator)
	put(constraint)
	for _, v := range values {
		put(Canonical(v))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// OwnerText is an owner's primary key as a guard keeps it: a JSON array of its
// key strings, in the order of attrs (partition key first).
func OwnerText(attrs []string, key map[string]types.AttributeValue) string {
	var parts []string
	for _, a := range attrs {
		parts = append(parts, Text(key[a]))
	}
	b, _ := json.Marshal(parts)
	return string(b)
}

// OwnerKey parses an owner's primary key as a guard keeps it, attrs naming its
// parts in order.
func OwnerKey(attrs []string, text string) (map[string]types.AttributeValue, bool) {
	var parts []string
	if json.Unmarshal([]byte(text), &parts) != nil || len(parts) != len(attrs) {
		return nil, false
	}
	key := map[string]types.AttributeValue{}
	for i, a := range attrs {
		key[a] = &types.AttributeValueMemberS{Value: parts[i]}
	}
	return key, true
}

// OwnedBy reports whether the guard item g (nil: missing) is owner's.
func OwnedBy(g map[string]types.AttributeValue, owner string) bool {
	o, ok := g[Owner].(*types.AttributeValueMemberS)
	return ok && o.Value == owner
}

// Guard is one claim (Put) or free (Delete) of the guard at Key.
type Guard struct {
	Key        map[string]types.AttributeValue
	Claim      bool
	OwnerType  string // the owner's type attribute
	Constraint string
	Values     []types.AttributeValue
	Of         *Set // the constraint, when known (its fields)
	// TTLAttr and TTL: a claim stores the owner's expiry (TTL, a number of
	// Unix seconds) under the table's TTL attribute, so that DynamoDB deletes
	// the guard with its owner; a nil TTL (or no TTLAttr) never expires.
	TTLAttr string
	TTL     types.AttributeValue
}

// Action is the guard's transaction action in table (its partition key and type
// attributes named): a Put (claim) or a Delete (free), each on the condition
// that no guard is there or that the owner, me (an [OwnerText]), holds it.
func (g Guard) Action(table, partitionKey, typeAttr, me string) types.TransactWriteItem {
	var b expr.Builder
	cond := "attribute_not_exists(" + b.Name(partitionKey) + ") OR " + b.Name(Owner) + " = " + b.S(me)
	const failed = types.ReturnValuesOnConditionCheckFailureAllOld
	if !g.Claim {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: &table, Key: g.Key, ConditionExpression: &cond,
			ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(), ReturnValuesOnConditionCheckFailure: failed}}
	}
	item := make(map[string]types.AttributeValue, len(g.Key)+5)
	for k, v := range g.Key {
		item[k] = v
	}
	item[typeAttr] = &types.AttributeValueMemberS{Value: Type}
	item[Owner] = &types.AttributeValueMemberS{Value: me}
	item[OwnerType] = &types.AttributeValueMemberS{Value: g.OwnerType}
	item[Constraint] = &types.AttributeValueMemberS{Value: g.Constraint}
	item[Values] = &types.AttributeValueMemberL{Value: g.Values}
	if g.TTLAttr != "" && g.TTL != nil {
		item[g.TTLAttr] = g.TTL
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: item, ConditionExpression: &cond,
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(), ReturnValuesOnConditionCheckFailure: failed}}
}

// Key is the key of the guard of a constraint's values, in a table whose
// partition key is pk and sort key sk ("": none): the partition key is
// prefix (the reserved one) + "unique", then the entity type (discriminator),
// the constraint and the values' [Digest], each after the delimiter d; the
// sort key is "unique". It never holds a raw value.
func Key(prefix, d, discriminator, constraint string, values []types.AttributeValue, pk, sk string) map[string]types.AttributeValue {
	id := prefix + "unique" + d + discriminator + d + constraint + d + Digest(discriminator, constraint, values)
	key := map[string]types.AttributeValue{pk: &types.AttributeValueMemberS{Value: id}}
	if sk != "" {
		key[sk] = &types.AttributeValueMemberS{Value: "unique"}
	}
	return key
}

// Encode encodes the attributes attrs of the value sv (field finds each
// one's field): nil for one it does not store. On an error of the codec's, it
// returns the field.
func Encode(attrs []string, field func(string) (*codec.Field, bool), sv reflect.Value) (map[string]types.AttributeValue, *codec.Field, error) {
	out := make(map[string]types.AttributeValue, len(attrs))
	for _, name := range attrs {
		f, _ := field(name)
		fv, ok := f.ValueOf(sv)
		if !ok {
			out[name] = nil
			continue
		}
		av, keep, err := f.Encode(fv)
		if err != nil {
			return nil, f, err
		}
		if !keep {
			av = nil
		}
		out[name] = av
	}
	return out, nil, nil
}

// SetValue is the value an Update's Set of value stores in f: converted to
// the field's type and encoded, nil when it stores nothing.
func SetValue(f *codec.Field, value any) (types.AttributeValue, error) {
	fv, err := codec.Convert(value, f.Type)
	if err != nil {
		return nil, err
	}
	av, keep, err := f.Encode(fv)
	if err != nil || !keep {
		return nil, err
	}
	return av, nil
}
