package singletable

import "github.com/singletable/singletable/internal/keytmpl"

// DynamoDB's limits on key attribute values, in UTF-8 bytes.
const (
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// DefaultDelimiter separates the parts of a rendered key unless the table says otherwise.
const DefaultDelimiter = '#'

// Template is a parsed key template such as "ORDER#{createdAt:time}#{orderId}":
// literal text and {placeholder} parts naming stored attributes. A Template is
// immutable and safe for concurrent use.
//
// Placeholder formats:
//
//	{name}         strings as they are; integers in decimal; times as {name:time}
//	{name:08}      a non-negative integer zero-padded to 8 digits (any width 1-20)
//	{name:time}    UTC time, fixed width, sorts as text: 2024-05-01T09:30:00.000000000Z
//	{name:date}    UTC date: 2024-05-01
//	{name:unix}    unix seconds, 10 digits
//	{name:unixms}  unix milliseconds, 13 digits
//	{name:rev}     reverse time for newest-first order: 3155378975999999999 minus the
//	               100 ns ticks since 0001-01-01 UTC, 19 digits
//
// Safety: a value of variable width may not contain the delimiter, and such a
// placeholder must be followed by the end of the template or by literal text that
// starts with the delimiter. Together these make rendering injective: two different
// inputs never render the same key, and [Template.Extract] recovers every value.
type Template struct {
	k keytmpl.Template // the language itself: internal/keytmpl
}

// ParseTemplate parses a key template; delimiter is the byte that separates key parts
// (usually [DefaultDelimiter]). It must be ASCII punctuation other than '{', '}' and ':'.
func ParseTemplate(text string, delimiter byte) (*Template, error) {
	k, err := keytmpl.Parse(text, delimiter)
	if err != nil {
		return nil, keyError(err)
	}
	return &Template{k: *k}, nil
}

// keyError turns an error of internal/keytmpl into a *KeyError with the same text.
func keyError(err error) error {
	if e, ok := err.(*keytmpl.Error); ok {
		return &KeyError{Field: e.Field, Reason: e.Reason}
	}
	return err
}

// String returns the template text.
func (t *Template) String() string { return t.k.Text }

// Placeholders returns the placeholder names in order of appearance.
func (t *Template) Placeholders() []string { return append([]string(nil), t.k.Names...) }

// StaticPrefix returns the literal text before the first placeholder (the whole
// template when it has none).
func (t *Template) StaticPrefix() string { return t.k.StaticPrefix() }

// Render renders the key from values keyed by placeholder name. Values may be
// strings, integers or time.Time; a missing, nil, "" or zero-time value is an error.
func (t *Template) Render(values map[string]any) (string, error) {
	k, err := t.k.RenderMap(values, false)
	return k, keyError(err)
}

// Prefix renders the key up to the first missing value, including the literal text
// that follows the last value present, for use with begins_with: given
// "ORDER#{orderId}#ITEM#{itemId}" and only orderId 5 it returns "ORDER#5#ITEM#".
// With every value present it returns the whole key.
func (t *Template) Prefix(values map[string]any) (string, error) {
	k, err := t.k.RenderMap(values, true)
	return k, keyError(err)
}

// Extract parses a rendered key back into its placeholder values: zero-padded
// placeholders as int64 (uint64 when too large), time formats as time.Time in UTC,
// plain placeholders as strings (the caller converts them to the field's type).
// A key that this template could not have rendered is an error.
func (t *Template) Extract(key string) (map[string]any, error) {
	m, err := t.k.Extract(key)
	if err != nil {
		return nil, keyError(err)
	}
	return m, nil
}

// extract walks key against the template, calling set with each placeholder's raw text.
func (t *Template) extract(key string, set func(name, raw string, f keytmpl.Format) error) error {
	return keyError(t.k.Walk(key, set))
}
