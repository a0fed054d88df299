package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/tabledef"
)

// Native indexes: global secondary indexes keyed by the items' own attributes,
// DynamoDB's multi-attribute keys (up to four partition attributes and four sort
// attributes, each of its own type S, N or B).
//
// Nothing is rendered for such an index: DynamoDB reads the attributes an item
// stores, so the index can never drift from them, an Update needs no
// recomputation, and numbers sort as numbers. An entity is in the index when it
// stores every attribute of its key under that name (its fields' dynamodbav
// names; a field stored under another name in one entity type and under the
// index's name in another lets one index serve both). Membership is sparse: an
// item that lacks any of the attributes (an omitempty field left empty) is not
// in the index, and nothing says so.

// KeyAttribute is one attribute of a native index's key: its stored name and its
// DynamoDB type, S, N or B ("" means S). See [S], [N] and [B].
type KeyAttribute struct {
	Name string
	Type types.ScalarAttributeType
}

// S names a key attribute that holds strings.
func S(name string) KeyAttribute { return KeyAttribute{Name: name, Type: types.ScalarAttributeTypeS} }

// N names a key attribute that holds numbers; they sort as numbers.
func N(name string) KeyAttribute { return KeyAttribute{Name: name, Type: types.ScalarAttributeTypeN} }

// B names a key attribute that holds binary values.
func B(name string) KeyAttribute { return KeyAttribute{Name: name, Type: types.ScalarAttributeTypeB} }

// NativeKey is a native index's key: 1 to 4 partition attributes and 0 to 4 sort
// attributes, each in order. Items sort by the sort attributes left to right.
type NativeKey struct {
	Partition []KeyAttribute
	Sort      []KeyAttribute
}

func scalarOrS(t types.ScalarAttributeType) types.ScalarAttributeType {
	if t == "" {
		return types.ScalarAttributeTypeS
	}
	return t
}

// Native reports whether the index is a native one ([WithNativeIndex]), keyed by
// PartitionAttrs and SortAttrs instead of PartitionKey and SortKey.
func (ix Index) Native() bool { return len(ix.PartitionAttrs) > 0 }

// nativeAttrs lists a native index's key attributes, partition ones first.
func (ix Index) nativeAttrs() []KeyAttribute {
	return append(slices.Clone(ix.PartitionAttrs), ix.SortAttrs...)
}

// keyAttrNames lists the index's key attribute names in key schema order.
func (ix Index) keyAttrNames() []string {
	if !ix.Native() {
		return []string{ix.PartitionKey, ix.SortKey}
	}
	out := make([]string, 0, len(ix.PartitionAttrs)+len(ix.SortAttrs))
	for _, a := range ix.nativeAttrs() {
		out = append(out, a.Name)
	}
	return out
}

// keySchema is the index's KeySchema for CreateTable: every HASH element, then
// every RANGE element, in order.
func (ix Index) keySchema() []types.KeySchemaElement {
	if !ix.Native() {
		return tabledef.KeySchema(ix.PartitionKey, ix.SortKey)
	}
	out := make([]types.KeySchemaElement, 0, len(ix.PartitionAttrs)+len(ix.SortAttrs))
	for _, a := range ix.PartitionAttrs {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeHash})
	}
	for _, a := range ix.SortAttrs {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeRange})
	}
	return out
}

// nativeType is the type of attr when it is a native index's key attribute.
func (t *Table) nativeType(attr string) (types.ScalarAttributeType, bool) {
	for _, ix := range t.opts.Indexes {
		for _, a := range ix.nativeAttrs() {
			if a.Name == attr {
				return a.Type, true
			}
		}
	}
	return "", false
}

// isNativeAttr reports whether attr is a key attribute of native index ix.
func (ix Index) isNativeAttr(attr string) bool {
	for _, a := range ix.nativeAttrs() {
		if a.Name == attr {
			return true
		}
	}
	return false
}

// definedAttributes lists every attribute CreateTable declares, sorted: the
// key attributes of the table and templated indexes, and those of native indexes.
func (t *Table) definedAttributes() []string {
	names := sortedKeys(t.keys)
	for _, ix := range t.opts.Indexes {
		for _, a := range ix.nativeAttrs() {
			if !slices.Contains(names, a.Name) {
				names = append(names, a.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// checkNativeIndexes refuses native indexes DynamoDB or the library cannot work
// with, once the other key attributes are recorded.
func (t *Table) checkNativeIndexes() error {
	typed := map[string]KeyAttribute{}
	where := map[string]string{}
	for _, ix := range t.opts.Indexes {
		if !ix.Native() {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("native index %q: "+format+": %w", append([]any{ix.Name}, append(args, ErrInvalidInput)...)...)
		}
		switch {
		case ix.Local:
			return fail("a native index is global; DynamoDB keys a local index by the table's partition key and one sort attribute")
		case ix.PartitionKey != "" || ix.SortKey != "":
			return fail("PartitionKey and SortKey must be empty: the key is PartitionAttrs and SortAttrs")
		case len(ix.PartitionAttrs) > 4:
			return fail("%d partition attributes: DynamoDB allows 1 to 4", len(ix.PartitionAttrs))
		case len(ix.SortAttrs) > 4:
			return fail("%d sort attributes: DynamoDB allows up to 4", len(ix.SortAttrs))
		}
		seen := map[string]bool{}
		for _, a := range ix.nativeAttrs() {
			switch {
			case a.Name == "":
				return fail("an attribute has no name")
			case seen[a.Name]:
				return fail("attribute %q is given twice; DynamoDB allows an attribute once per key", a.Name)
			case a.Type != types.ScalarAttributeTypeS && a.Type != types.ScalarAttributeTypeN && a.Type != types.ScalarAttributeTypeB:
				return fail("attribute %q has type %q: want S, N or B", a.Name, a.Type)
			case t.isLibraryAttr(a.Name):
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

// isLibraryAttr reports whether attr is one the library writes itself.
func (t *Table) isLibraryAttr(attr string) bool {
	_, isKey := t.keys[attr]
	o := &t.opts
	return isKey || attr == o.TypeAttribute || attr == o.SchemaAttribute || attr == o.IncarnationAttribute || t.isReceiptAttr(attr)
}

// nativeView is an entity's place in a native index: the field stored under each
// of its key attributes (partition ones first), nil where the entity has none.
type nativeView struct {
	index  Index
	fields []*codec.Field
}

// member reports whether the entity stores every key attribute of the index.
func (v *nativeView) member() bool { return !slices.Contains(v.fields, nil) }

// missing names the key attributes the entity does not store.
func (v *nativeView) missing() []string {
	var out []string
	for i, a := range v.index.nativeAttrs() {
		if v.fields[i] == nil {
			out = append(out, a.Name)
		}
	}
	return out
}

// bindNative finds the fields an entity stores under each native index's key
// attributes and refuses one DynamoDB could not index: a field stored under such
// an attribute must have its type (S, N or B), and one in a sort attribute must
// sort as its values do.
func (info *entityInfo) bindNative() error {
	for _, ix := range info.table.opts.Indexes {
		if !ix.Native() {
			continue
		}
		v := &nativeView{index: ix}
		for i, a := range ix.nativeAttrs() {
			f, ok := info.plan.Field(a.Name)
			if !ok {
				v.fields = append(v.fields, nil)
				continue
			}
			if reason := nativeFieldReason(f, a, i >= len(ix.PartitionAttrs)); reason != "" {
				return &EntityError{Entity: info.name, Field: f.GoName, Reason: "native index " + ix.Name + ": attribute " + strconv.Quote(a.Name) + " " + reason}
			}
			v.fields = append(v.fields, f)
		}
		if info.native == nil {
			info.native = map[string]*nativeView{}
		}
		info.native[ix.Name] = v
	}
	return nil
}

// nativeFieldReason says why field f cannot feed key attribute a, or "".
func nativeFieldReason(f *codec.Field, a KeyAttribute, sort bool) string {
	got, what := storedScalar(f)
	switch {
	case got == "":
		return "is a key attribute, which must be a string, number or binary (S, N or B), but the field is " + what
	case got != a.Type:
		return "is declared " + string(a.Type) + ", but the field " + what + " is stored as " + string(got)
	case sort && derefType(f.Type) == timeType && got == types.ScalarAttributeTypeS:
		return "is a sort attribute, but the field is a time.Time stored as RFC 3339 text, which does not sort in time order; store it with the unixtime option (and declare it N)"
	}
	return ""
}

var marshalerType = reflect.TypeFor[attributevalue.Marshaler]()

// storedScalar is the DynamoDB type the codec stores field f as, when a scalar
// a key can hold ("" otherwise), and the field's type in words.
func storedScalar(f *codec.Field) (types.ScalarAttributeType, string) {
	rt := derefType(f.Type)
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

// keyAttrTexts describes native key attributes for a design: "tenant S".
func keyAttrTexts(attrs []KeyAttribute) []string {
	var out []string
	for _, a := range attrs {
		out = append(out, a.Name+" "+string(a.Type))
	}
	return out
}

// nativeKeysFeature is the write plan of an entity in native indexes: it refuses,
// before anything is sent, a write that would store under a native index's key
// attribute a value DynamoDB cannot index (an empty string or binary value, or a
// NULL: a nil pointer without omitempty). DynamoDB refuses such a write whole ("A
// value specified for a secondary index key is not supported"); an attribute left
// out (an omitempty field's zero value, or Remove) only keeps the item out of the
// index. Nothing is rendered or recomputed: the index reads the stored attribute.
type nativeKeysFeature struct {
	noOwner
	keys map[*codec.Field]string // field → "index ByX, attribute \"x\""
}

// newNativeKeysFeature returns the plan of info's native key fields, or nil.
func newNativeKeysFeature(info *entityInfo) featurePlan {
	keys := map[*codec.Field]string{}
	for _, ix := range info.table.opts.Indexes {
		v := info.native[ix.Name]
		if v == nil {
			continue
		}
		for i, a := range ix.nativeAttrs() {
			if f := v.fields[i]; f != nil && keys[f] == "" {
				keys[f] = "native index " + ix.Name + ", key attribute " + strconv.Quote(a.Name)
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &nativeKeysFeature{keys: keys}
}

func (n *nativeKeysFeature) plan(p *writePlan) error {
	switch {
	case p.whole():
		for f := range n.keys {
			fv, ok := f.ValueOf(p.sv)
			if !ok {
				continue // under a nil embedded pointer: not stored
			}
			if err := n.check(p.info, f, fv); err != nil {
				return err
			}
		}
	case p.kind == kindUpdate:
		for _, c := range p.checks {
			if _, ok := n.keys[c.f]; ok && !c.removed {
				if err := n.check(p.info, c.f, c.fv); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// check refuses fv when f would store it as a value no index key can hold.
func (n *nativeKeysFeature) check(info *entityInfo, f *codec.Field, fv reflect.Value) error {
	av, keep, err := f.Encode(fv)
	if err != nil || !keep {
		return nil // the codec's error is the write's own; left out, the item is only not in the index
	}
	var what string
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		if x.Value == "" {
			what = "an empty string"
		}
	case *types.AttributeValueMemberB:
		if len(x.Value) == 0 {
			what = "an empty binary value"
		}
	case *types.AttributeValueMemberNULL:
		what = "NULL (a nil value)"
	}
	if what == "" {
		return nil
	}
	return &ValidationError{Entity: info.name, Field: f.GoName, Attribute: f.Name,
		Err: fmt.Errorf("%s cannot hold %s, and DynamoDB refuses the whole write: give a value, or tag the field omitempty to keep such items out of the index", n.keys[f], what)}
}
