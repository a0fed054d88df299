package cursor

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is an item, or a key, as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// KeyTypes is what the payloads made of key values need of a table: a key
// attribute's text in a key (false when missing or not of the type the table
// declares), the attribute value made from a text (false when the table keys
// attr by numbers and text is not one), and an attribute's type in words.
type KeyTypes interface {
	KeyText(key Item, attr string) (string, bool)
	KeyValue(attr, text string) (types.AttributeValue, bool)
	KeyTypeName(attr string) string
}

// AppendKey appends the values of attrs in key (the text of each: a string, a
// number's digits, a binary's bytes; of the type the table declares), each as
// uvarint(len) value, for ReadKey.
func AppendKey(b []byte, kt KeyTypes, attrs []string, key Item) ([]byte, error) {
	for _, a := range attrs {
		s, ok := kt.KeyText(key, a)
		if !ok {
			return nil, fmt.Errorf("key attribute %q is missing or not a %s", a, kt.KeyTypeName(a))
		}
		b = AppendText(b, s)
	}
	return b, nil
}

// ReadKey reads what AppendKey wrote for attrs and returns the key and the
// bytes after it; ok is false when a value is missing, empty, cut short, or not
// a number where the table keys by numbers.
func ReadKey(b []byte, kt KeyTypes, attrs []string) (key Item, rest []byte, ok bool) {
	key = make(Item, len(attrs))
	for _, a := range attrs {
		text, after, ok := ReadText(b)
		if !ok || text == "" {
			return nil, nil, false
		}
		v, ok := kt.KeyValue(a, text)
		if !ok {
			return nil, nil, false
		}
		key[a], b = v, after
	}
	return key, b, true
}

// SealKey seals a cursor of kind for the query id whose payload is the values
// of attrs in key. Its errors have no package prefix: callers wrap them.
func SealKey(secret []byte, kt KeyTypes, kind byte, id ID, attrs []string, key Item) (string, error) {
	if len(key) != len(attrs) {
		return "", fmt.Errorf("%s: the last evaluated key has %d attributes, want %d", KindName(kind), len(key), len(attrs))
	}
	b, err := AppendKey(Begin(kind, id), kt, attrs, key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", KindName(kind), err)
	}
	return Seal(secret, b), nil
}

// OpenKey opens a cursor sealed by SealKey and returns its key; its errors
// match invalid.
func OpenKey(secret []byte, kt KeyTypes, kind byte, id ID, attrs []string, c string, invalid error) (Item, error) {
	payload, err := Open(secret, kind, id, c, invalid)
	if err != nil {
		return nil, err
	}
	key, rest, ok := ReadKey(payload, kt, attrs)
	if !ok {
		return nil, fmt.Errorf("%w: %s truncated", invalid, KindName(kind))
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %s has trailing bytes", invalid, KindName(kind))
	}
	return key, nil
}
