package singletable

import (
	"strconv"
	"strings"
)

type tagPair struct{ key, value string }

// parseStructTag splits a struct tag into its key:"value" pairs, following the
// grammar of reflect.StructTag, and reports malformed tags and repeated keys
// (reflect.StructTag.Lookup would silently take the first).
func parseStructTag(tag string) ([]tagPair, error) {
	var out []tagPair
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
			return nil, &KeyError{Reason: "malformed struct tag near " + strconv.Quote(tag)}
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
			return nil, &KeyError{Reason: "unterminated value for tag " + strconv.Quote(key)}
		}
		value, err := strconv.Unquote(tag[:i+1])
		if err != nil {
			return nil, &KeyError{Reason: "bad value for tag " + strconv.Quote(key)}
		}
		tag = tag[i+1:]
		if seen[key] {
			return nil, &KeyError{Reason: "tag " + strconv.Quote(key) + " appears twice"}
		}
		seen[key] = true
		out = append(out, tagPair{key, value})
	}
}
