package codec

import (
	"fmt"
	"reflect"
	"strings"
)

// tagKey is the struct tag key read by attributevalue's default encoder and decoder. Other keys (json, ...)
// are not read.
const tagKey = "dynamodbav"

// options are the parsed `dynamodbav` options that change how a value is encoded or decoded. The zero value
// is "no options". It is comparable so it can key the per-compilation memo.
type options struct {
	omitEmpty     bool
	omitEmptyElem bool
	nullEmpty     bool
	nullEmptyElem bool
	asString      bool
	binarySet     bool
	numberSet     bool
	stringSet     bool
	unixTime      bool
}

// elem returns the options attributevalue applies to the elements of a slice, array or map: omitemptyelem
// becomes omitempty (and stays omitemptyelem), nullemptyelem becomes nullempty; nothing else is inherited.
func (o options) elem() options {
	return options{omitEmpty: o.omitEmptyElem, omitEmptyElem: o.omitEmptyElem, nullEmpty: o.nullEmptyElem}
}

// tagString renders o as a `dynamodbav` tag value with the given name, the inverse of parseTag.
func (o options) tagString(name string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, opt := range []struct {
		on   bool
		name string
	}{
		{o.omitEmpty, "omitempty"}, {o.omitEmptyElem, "omitemptyelem"}, {o.nullEmpty, "nullempty"},
		{o.nullEmptyElem, "nullemptyelem"}, {o.asString, "string"}, {o.binarySet, "binaryset"},
		{o.numberSet, "numberset"}, {o.stringSet, "stringset"}, {o.unixTime, "unixtime"},
	} {
		if opt.on {
			b.WriteByte(',')
			b.WriteString(opt.name)
		}
	}
	return b.String()
}

// parsedTag is one field's `dynamodbav` tag.
type parsedTag struct {
	name   string // attribute name from the tag; empty means "use the Go field name"
	ignore bool   // the tag's name is "-"
	opts   options
}

// parseTag parses the `dynamodbav` tag the way attributevalue does (name, then comma-separated options; a
// name of "-" skips the field) except that an unknown or empty option is an error rather than ignored.
func parseTag(st reflect.StructTag) (parsedTag, error) {
	s := st.Get(tagKey)
	if s == "" {
		return parsedTag{}, nil
	}
	parts := strings.Split(s, ",")
	t := parsedTag{name: parts[0]}
	if t.name == "-" {
		// attributevalue ignores the field whatever options follow.
		t.name, t.ignore = "", true
	}
	for _, opt := range parts[1:] {
		switch opt {
		case "omitempty":
			t.opts.omitEmpty = true
		case "omitemptyelem":
			t.opts.omitEmptyElem = true
		case "nullempty":
			t.opts.nullEmpty = true
		case "nullemptyelem":
			t.opts.nullEmptyElem = true
		case "string":
			t.opts.asString = true
		case "binaryset":
			t.opts.binarySet = true
		case "numberset":
			t.opts.numberSet = true
		case "stringset":
			t.opts.stringSet = true
		case "unixtime":
			t.opts.unixTime = true
		case "":
			return parsedTag{}, fmt.Errorf("%w: empty option in %s:%q", ErrInvalidTag, tagKey, s)
		default:
			return parsedTag{}, fmt.Errorf("%w: unknown option %q in %s:%q", ErrInvalidTag, opt, tagKey, s)
		}
	}
	return t, nil
}
