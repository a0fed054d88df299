package singletable

import (
	"errors"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/nativekey"
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
	return nativekey.KeySchema(nativeKeyAttrs(ix.PartitionAttrs), nativeKeyAttrs(ix.SortAttrs))
}

// nativeKeyAttrs converts key attributes for internal/nativekey.
func nativeKeyAttrs(attrs []KeyAttribute) []nativekey.Attr {
	out := make([]nativekey.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = nativekey.Attr(a)
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
	var defs []nativekey.Def
	for _, ix := range t.opts.Indexes {
		if ix.Native() {
			defs = append(defs, nativekey.Def{Name: ix.Name, Local: ix.Local, PartitionKey: ix.PartitionKey, SortKey: ix.SortKey,
				Partition: nativeKeyAttrs(ix.PartitionAttrs), Sort: nativeKeyAttrs(ix.SortAttrs)})
		}
	}
	return nativekey.Check(defs, t.isLibraryAttr, ErrInvalidInput)
}

// isLibraryAttr reports whether attr is one the library writes itself.
func (t *Table) isLibraryAttr(attr string) bool {
	_, isKey := t.keys[attr]
	o := &t.opts
	return isKey || attr == o.TypeAttribute || attr == o.SchemaAttribute || attr == o.IncarnationAttribute || t.isReceiptAttr(attr)
}

// nativeView is an entity's place in a native index (internal/nativekey): the
// field stored under each of its key attributes (partition ones first), nil
// where the entity has none.
type nativeView = nativekey.View

// bindNative finds the fields an entity stores under each native index's key
// attributes and refuses one DynamoDB could not index: a field stored under such
// an attribute must have its type (S, N or B), and one in a sort attribute must
// sort as its values do.
func (info *entityInfo) bindNative() error {
	for _, ix := range info.table.opts.Indexes {
		if !ix.Native() {
			continue
		}
		v := &nativeView{Attrs: nativeKeyAttrs(ix.nativeAttrs()), NPartition: len(ix.PartitionAttrs)}
		for i, a := range v.Attrs {
			f, ok := info.plan.Field(a.Name)
			if !ok {
				v.Fields = append(v.Fields, nil)
				continue
			}
			if reason := nativekey.FieldReason(f, a, i >= v.NPartition); reason != "" {
				return &EntityError{Entity: info.name, Field: f.GoName, Reason: "native index " + ix.Name + ": attribute " + strconv.Quote(a.Name) + " " + reason}
			}
			v.Fields = append(v.Fields, f)
		}
		if info.native == nil {
			info.native = map[string]*nativeView{}
		}
		info.native[ix.Name] = v
	}
	return nil
}

// keyAttrTexts describes native key attributes for a design: "tenant S".
func keyAttrTexts(attrs []KeyAttribute) []string { return nativekey.Texts(nativeKeyAttrs(attrs)) }

// nativeKeysFeature is the write plan of an entity in native indexes: it refuses,
// before anything is sent, a write that would store under a native index's key
// attribute a value DynamoDB cannot index (an empty string or binary value, or a
// NULL: a nil pointer without omitempty). DynamoDB refuses such a write whole ("A
// value specified for a secondary index key is not supported"); an attribute left
// out (an omitempty field's zero value, or Remove) only keeps the item out of the
// index. Nothing is rendered or recomputed: the index reads the stored attribute.
type nativeKeysFeature struct {
	noOwner
	keys nativekey.Fields
	// views are the entity's native indexes, in the table's order, whose key
	// sizes are checked (DynamoDB's aggregate limits).
	views []namedView
	// order is keys' fields in T's field order, so that a value refused for
	// several names the first of them, every time.
	order []*codec.Field
}

// newNativeKeysFeature returns the plan of info's native key fields, or nil.
func newNativeKeysFeature(info *entityInfo) featurePlan {
	keys := nativekey.Fields{}
	var views []namedView
	for _, ix := range info.table.opts.Indexes {
		if v := info.native[ix.Name]; v != nil {
			keys.Add(ix.Name, v)
			views = append(views, namedView{ix.Name, v})
		}
	}
	if len(keys) == 0 {
		return nil
	}
	n := &nativeKeysFeature{keys: keys, views: views}
	for _, f := range info.plan.Fields() {
		if _, ok := keys[f]; ok {
			n.order = append(n.order, f)
		}
	}
	for f := range keys { // a field the plan does not list (none today) is checked too, last
		if !slices.Contains(n.order, f) {
			n.order = append(n.order, f)
		}
	}
	return n
}

// namedView is an entity's view of one native index.
type namedView struct {
	name string
	v    *nativeView
}

func (n *nativeKeysFeature) plan(p *writePlan) error {
	values := map[*codec.Field]reflect.Value{} // the key fields the write stores
	switch {
	case p.whole():
		for _, f := range n.order {
			fv, ok := f.ValueOf(p.sv)
			if !ok {
				continue // under a nil embedded pointer: not stored
			}
			if err := n.check(p.info, f, fv); err != nil {
				return err
			}
			values[f] = fv
		}
	case p.kind == kindUpdate:
		for _, c := range p.checks {
			if _, ok := n.keys[c.f]; ok && !c.removed {
				if err := n.check(p.info, c.f, c.fv); err != nil {
					return err
				}
				values[c.f] = c.fv
			}
		}
	}
	return n.checkSizes(p.info, values)
}

// checkSizes refuses a write whose native index keys would exceed DynamoDB's
// aggregate limits (MaxPartitionKeyBytes, MaxSortKeyBytes) with the values it
// stores; an Update is checked on the attributes it sets.
func (n *nativeKeysFeature) checkSizes(info *entityInfo, values map[*codec.Field]reflect.Value) error {
	if len(values) == 0 {
		return nil
	}
	for _, nv := range n.views {
		vals := make([]types.AttributeValue, len(nv.v.Attrs))
		var first *codec.Field
		for i, f := range nv.v.Fields {
			fv, ok := values[f]
			if f == nil || !ok {
				continue
			}
			if av, keep, err := f.Encode(fv); err == nil && keep {
				vals[i] = av
				if first == nil {
					first = f
				}
			}
		}
		if reason := nv.v.Oversize(nv.name, vals, MaxPartitionKeyBytes, MaxSortKeyBytes); reason != "" {
			return &ValidationError{Entity: info.name, Field: first.GoName, Attribute: first.Name, Err: errors.New(reason)}
		}
	}
	return nil
}

// check refuses fv when f would store it as a value no index key can hold.
func (n *nativeKeysFeature) check(info *entityInfo, f *codec.Field, fv reflect.Value) error {
	if reason := n.keys.Refusal(f, fv); reason != "" {
		return &ValidationError{Entity: info.name, Field: f.GoName, Attribute: f.Name, Err: errors.New(reason)}
	}
	return nil
}
