package singletable

import (
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/keytmpl"
)

// Key schemas beyond string keys, for tables that exist already: a key attribute
// may hold a number or binary instead of a string ([WithKeyType]), and a table's
// primary key may be its partition key alone ([WithKeys] with no sort key).
//
// A number key's template is a single placeholder of an integer field ({id}),
// rendered in decimal; a binary key's is a single placeholder of a []byte field,
// its bytes as they are. Literal text, formats and other placeholders have no
// place in such keys (a number or a byte string has no delimiter), so each
// renders from one field and parses back into it. Inside the library every key
// value travels as text (a number's decimal digits, a binary's bytes) and becomes
// an attribute value of its attribute's type only when a request is built.

// checkKeyTypes refuses types given for attributes that are not keys.
func (t *Table) checkKeyTypes() error {
	for _, attr := range sortedKeys(t.opts.KeyTypes) {
		if _, ok := t.keys[attr]; !ok {
			return fmt.Errorf("WithKeyType(%q): not a key attribute of the table or its indexes (key attributes: %s)%s: %w", attr, listOrNone(sortedKeys(t.keys)), didYouMean(attr, sortedKeys(t.keys)), ErrInvalidInput)
		}
	}
	return nil
}

// keyType is the type of key attribute attr: S unless declared otherwise.
func (t *Table) keyType(attr string) types.ScalarAttributeType {
	if typ, ok := t.opts.KeyTypes[attr]; ok {
		return typ
	}
	if typ, ok := t.nativeType(attr); ok { // multiattr.go
		return typ
	}
	return types.ScalarAttributeTypeS
}

// stringKeys reports whether every key attribute of the table is a string and
// the table has a sort key: the layout of the library's own items (leases,
// sweep progress) and of write sharding.
func (t *Table) stringKeys() bool {
	if t.opts.NoSortKey {
		return false
	}
	for _, typ := range t.opts.KeyTypes {
		if typ != types.ScalarAttributeTypeS {
			return false
		}
	}
	return true
}

// keyAV makes the attribute value of key attribute attr from its text.
func (t *Table) keyAV(attr, text string) types.AttributeValue {
	switch t.keyType(attr) {
	case types.ScalarAttributeTypeN:
		return &types.AttributeValueMemberN{Value: text}
	case types.ScalarAttributeTypeB:
		return &types.AttributeValueMemberB{Value: []byte(text)}
	}
	return &types.AttributeValueMemberS{Value: text}
}

// keyTextOf returns the text of key attribute attr in item, checking that it has
// the attribute's type.
func (t *Table) keyTextOf(item map[string]types.AttributeValue, attr string) (string, bool) {
	av := item[attr]
	switch av.(type) {
	case *types.AttributeValueMemberS:
		if t.keyType(attr) != types.ScalarAttributeTypeS {
			return "", false
		}
	case *types.AttributeValueMemberN:
		if t.keyType(attr) != types.ScalarAttributeTypeN {
			return "", false
		}
	case *types.AttributeValueMemberB:
		if t.keyType(attr) != types.ScalarAttributeTypeB {
			return "", false
		}
	default:
		return "", false
	}
	return keytmpl.TextOf(av)
}

// keyDisplay quotes a key value for messages: a binary's bytes in hex.
func (t *Table) keyDisplay(attr, text string) string {
	if t.keyType(attr) == types.ScalarAttributeTypeB {
		return fmt.Sprintf("0x%x", text)
	}
	return text
}

// checkTypedTemplate checks a template of a number or binary key attribute: one
// placeholder of an integer (N) or []byte (B) field, nothing else.
func (info *entityInfo) checkTypedTemplate(kt *keyTemplate) error {
	typ := info.table.keyType(kt.attr)
	if typ == types.ScalarAttributeTypeS {
		return nil
	}
	segs := kt.tmpl.k.Segs
	if len(segs) != 1 || segs[0].Name == "" || segs[0].Format != keytmpl.Plain {
		return &EntityError{Entity: info.name, Field: kt.attr, Reason: kt.attr + " holds " + typeName(typ) + "s, so its template must be a single placeholder such as {id}, not " + strconv.Quote(kt.tmpl.String())}
	}
	f := kt.fields[0]
	base := derefType(f.Type)
	switch {
	case typ == types.ScalarAttributeTypeN && (keytmpl.KindOf(base) == keytmpl.KindInt || keytmpl.KindOf(base) == keytmpl.KindUint):
	case typ == types.ScalarAttributeTypeB && isBytes(base):
	default:
		want := "an integer"
		if typ == types.ScalarAttributeTypeB {
			want = "a []byte"
		}
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: kt.attr + " holds " + typeName(typ) + "s, so {" + f.Name + "} must be " + want + " field, not " + f.Type.String()}
	}
	kt.typ = typ
	return nil
}

// isBytes reports whether t is a byte slice.
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

func typeName(typ types.ScalarAttributeType) string {
	switch typ {
	case types.ScalarAttributeTypeN:
		return "number"
	case types.ScalarAttributeTypeB:
		return "binary"
	}
	return "string"
}

// typedKeyAV is primaryKeyAV for a table with a number or binary key, or
// without sort key: pk is the partition key's text, rendered already.
func (info *entityInfo) typedKeyAV(sv reflect.Value, pk string) (map[string]types.AttributeValue, error) {
	t := info.table
	key := map[string]types.AttributeValue{info.pk.attr: t.keyAV(info.pk.attr, pk)}
	if info.sk != nil {
		sk, _, err := info.sk.render(info, sv, false)
		if err != nil {
			return nil, err
		}
		key[info.sk.attr] = t.keyAV(info.sk.attr, sk)
	}
	return key, nil
}

// keyOf returns the primary key attributes of an item.
func (t *Table) keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := make(map[string]types.AttributeValue, 2)
	for _, a := range t.baseKeyAttrs() {
		key[a] = item[a]
	}
	return key
}

// typedKeyID is keyID for a table with a number or binary key, or without sort
// key: the texts of the key attributes (a table's key attribute holds one type,
// so texts tell keys apart).
func (t *Table) typedKeyID(key map[string]types.AttributeValue) itemKey {
	pk, ok := t.keyTextOf(key, t.opts.PartitionKey)
	if !ok {
		return itemKey{}
	}
	if t.opts.NoSortKey {
		return itemKey{pk: pk}
	}
	sk, ok := t.keyTextOf(key, t.opts.SortKey)
	if !ok {
		return itemKey{}
	}
	return itemKey{pk, sk}
}

// baseTemplates are the entity's primary key templates: the partition key's,
// then the sort key's when the table has one.
func (info *entityInfo) baseTemplates() []*keyTemplate {
	if info.sk == nil {
		return []*keyTemplate{info.pk}
	}
	return []*keyTemplate{info.pk, info.sk}
}

// partitionAttr is the partition key attribute of index ("" the base table).
func (t *Table) partitionAttr(index string) string {
	if ix, ok := t.index(index); ok {
		return ix.PartitionKey
	}
	return t.opts.PartitionKey
}

// checkKeyText checks a key value given as text for attribute attr: 1 to max
// bytes, UTF-8 for a string, a number for a number key.
func (t *Table) checkKeyText(attr, text string, maxBytes int) error {
	typ := t.keyType(attr)
	switch {
	case text == "" || len(text) > maxBytes:
		return fmt.Errorf("a %s key value must be 1-%d bytes: %w", typeName(typ), maxBytes, ErrInvalidKey)
	case typ == types.ScalarAttributeTypeS && !utf8.ValidString(text):
		return fmt.Errorf("a string key value must be UTF-8: %w", ErrInvalidKey)
	case typ == types.ScalarAttributeTypeN && !keytmpl.IsNumberText(text):
		return fmt.Errorf("%s holds numbers, and %q is not one: %w", attr, text, ErrInvalidKey)
	}
	return nil
}
