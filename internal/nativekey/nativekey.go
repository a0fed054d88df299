// Package nativekey holds what the root package's native indexes
// (multiattr.go, multiattr_query.go) do apart from any entity: the checks of an
// index's multi-attribute key, of a field stored under one of its attributes,
// and of a query against DynamoDB's rules for such keys, with the key condition
// it sends.
package nativekey

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Attr is one attribute of a native index's key: its stored name and its type.
type Attr struct {
	Name string
	Type types.ScalarAttributeType
}

// Def is a native index as declared: its name, its key attributes, and what
// must be left unset for such an index.
type Def struct {
	Name                  string
	Local                 bool
	PartitionKey, SortKey string
	Partition, Sort       []Attr
}

// Check refuses native indexes DynamoDB or the library cannot work with: a
// local one, one with templated keys, too many attributes, an attribute unnamed,
// twice in a key, of another type than S, N or B, one the library writes itself
// (library), or given two types by two indexes. Its errors match invalid.
func Check(defs []Def, library func(attr string) bool, invalid error) error {
	typed := map[string]Attr{}
	where := map[string]string{}
	for _, ix := range defs {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("native index %q: "+format+": %w", append([]any{ix.Name}, append(args, invalid)...)...)
		}
		switch {
		case ix.Local:
			return fail("a native index is global; DynamoDB keys a local index by the table's partition key and one sort attribute")
		case ix.PartitionKey != "" || ix.SortKey != "":
			return fail("PartitionKey and SortKey must be empty: the key is PartitionAttrs and SortAttrs")
		case len(ix.Partition) > 4:
			return fail("%d partition attributes: DynamoDB allows 1 to 4", len(ix.Partition))
		case len(ix.Sort) > 4:
			return fail("%d sort attributes: DynamoDB allows up to 4", len(ix.Sort))
		}
		seen := map[string]bool{}
		for _, a := range append(append([]Attr(nil), ix.Partition...), ix.Sort...) {
			switch {
			case a.Name == "":
				return fail("an attribute has no name")
			case seen[a.Name]:
				return fail("attribute %q is given twice; DynamoDB allows an attribute once per key", a.Name)
			case a.Type != types.ScalarAttributeTypeS && a.Type != types.ScalarAttributeTypeN && a.Type != types.ScalarAttributeTypeB:
				return fail("attribute %q has type %q: want S, N or B", a.Name, a.Type)
			case library(a.Name):
				return fail("attribute %q is one the library writes itself (a key of the table or of a templated index, the type, schema, receipt or incarnation attribute); a native index reads the entities' own attributes", a.Name)
			}
			seen[a.Name] = true
			if prev, ok := typed[a.Name]; ok && prev.Type != a.Type {
				return fail("attribute %q is %s here but %s in index %s; DynamoDB gives an attribute one type per table", a.Name, a.Type, prev.Type, where[a.Name])
			}
			typed[a.Name], where[a.Name] = a, ix.Name
		}
	}
	return nil
}

// KeySchema is a native index's KeySchema for CreateTable: every HASH element,
// then every RANGE element, in order.
func KeySchema(partition, sort []Attr) []types.KeySchemaElement {
	out := make([]types.KeySchemaElement, 0, len(partition)+len(sort))
	for _, a := range partition {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeHash})
	}
	for _, a := range sort {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeRange})
	}
	return out
}

// Texts describes key attributes for a design: "tenant S".
func Texts(attrs []Attr) []string {
	var out []string
	for _, a := range attrs {
		out = append(out, a.Name+" "+string(a.Type))
	}
	return out
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[attributevalue.Marshaler]()
)

// deref is t with one pointer taken off (a **T stays a pointer, and is refused).
func deref(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// FieldReason says why field f cannot feed key attribute a (a sort attribute
// when sort), or "".
func FieldReason(f *codec.Field, a Attr, sort bool) string {
	got, what := StoredScalar(f)
	switch {
	case got == "":
		return "is a key attribute, which must be a string, number or binary (S, N or B), but the field is " + what
	case got != a.Type:
		return "is declared " + string(a.Type) + ", but the field " + what + " is stored as " + string(got)
	case sort && deref(f.Type) == timeType && got == types.ScalarAttributeTypeS:
		return "is a sort attribute, but the field is a time.Time stored as RFC 3339 text, which does not sort in time order; store it with the unixtime option (and declare it N)"
	}
	return ""
}

// StoredScalar is the DynamoDB type the codec stores field f as, when a scalar
// a key can hold ("" otherwise), and the field's type in words.
func StoredScalar(f *codec.Field) (types.ScalarAttributeType, string) {
	rt := deref(f.Type)
	what := f.Type.String()
	if f.NullEmpty || f.StringSet || f.NumberSet || f.BinarySet {
		return "", what + " with a set or nullempty option"
	}
	if rt.Implements(marshalerType) || reflect.PointerTo(rt).Implements(marshalerType) {
		return "", what + ", which marshals itself (its stored type cannot be known)"
	}
	switch {
	case rt == timeType && f.UnixTime:
		return types.ScalarAttributeTypeN, what + " (unixtime)"
	case rt == timeType:
		return types.ScalarAttributeTypeS, what
	case rt.Kind() == reflect.String:
		return types.ScalarAttributeTypeS, what
	case rt.Kind() >= reflect.Int && rt.Kind() <= reflect.Uint64 || rt.Kind() == reflect.Float32 || rt.Kind() == reflect.Float64:
		if f.AsString {
			return types.ScalarAttributeTypeS, what + " (string)"
		}
		return types.ScalarAttributeTypeN, what
	case rt.Kind() == reflect.Slice && rt.Elem().Kind() == reflect.Uint8:
		return types.ScalarAttributeTypeB, what
	}
	return "", what
}

// Unindexable names the value av that no index key can hold (an empty string,
// an empty binary value, NULL), or "".
func Unindexable(av types.AttributeValue) string {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		if x.Value == "" {
			return "an empty string"
		}
	case *types.AttributeValueMemberB:
		if len(x.Value) == 0 {
			return "an empty binary value"
		}
	case *types.AttributeValueMemberNULL:
		return "NULL (a nil value)"
	}
	return ""
}

// Same reports whether two key values are of one type and equal.
func Same(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && keytmpl.CompareNumberText(x.Value, y.Value) == 0
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	}
	return false
}

// Compare orders two key values of one type as DynamoDB does.
func Compare(a, b types.AttributeValue) int {
	switch x := a.(type) {
	case *types.AttributeValueMemberN:
		return keytmpl.CompareNumberText(x.Value, b.(*types.AttributeValueMemberN).Value)
	case *types.AttributeValueMemberB:
		return bytes.Compare(x.Value, b.(*types.AttributeValueMemberB).Value)
	}
	return strings.Compare(a.(*types.AttributeValueMemberS).Value, b.(*types.AttributeValueMemberS).Value)
}

// Text is a key value's text for identities and messages.
func Text(av types.AttributeValue) string {
	s, _ := keytmpl.TextOf(av)
	return s
}

// Leaves returns the attribute of eq whose value the key start does not hold
// (a cursor that would move a query to another partition or sort prefix).
func Leaves(eq, start map[string]types.AttributeValue) (string, bool) {
	for attr, want := range eq {
		if !Same(start[attr], want) {
			return attr, true
		}
	}
	return "", false
}
