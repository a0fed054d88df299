package codec

import (
	"errors"
	"strconv"
	"strings"
)

// TagPair is one key:"value" pair of a struct tag.
type TagPair struct{ Key, Value string }

// ParseStructTag splits a struct tag into its key:"value" pairs, following the
// grammar of reflect.StructTag, and refuses malformed tags and repeated keys
// (reflect.StructTag.Lookup would silently take the first). Its error is the
// reason in words.
func ParseStructTag(tag string) ([]TagPair, error) {
	var out []TagPair
	seen := map[string]bool{}
	for {
		tag = strings.TrimLeft(tag, " ")
		if tag == "" {
			return out, nil
		}
		i := 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			return nil, errors.New("malformed struct tag near " + strconv.Quote(tag))
		}
		key := tag[:i]
		tag = tag[i+1:]
		// Scan the quoted value.
		i = 1
		for i < len(tag) && tag[i] != '"' {
			if tag[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(tag) {
			return nil, errors.New("unterminated value for tag " + strconv.Quote(key))
		}
		value, err := strconv.Unquote(tag[:i+1])
		if err != nil {
			return nil, errors.New("bad value for tag " + strconv.Quote(key))
		}
		tag = tag[i+1:]
		if seen[key] {
			return nil, errors.New("tag " + strconv.Quote(key) + " appears twice")
		}
		seen[key] = true
		out = append(out, TagPair{key, value})
	}
}
