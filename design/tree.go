package design

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A template as a tree of values, written as JSON or as YAML from the same tree
// so that the two say the same. A value is a string, an int64, a bool, an
// object (keys in order) or a list.

type object []member

type member struct {
	key   string
	value any
}

type list []any

// add appends a member to o.
func (o *object) add(key string, value any) { *o = append(*o, member{key, value}) }

// writeJSON writes v as indented JSON (two spaces), ending with a newline.
func writeJSON(v any) []byte {
	var b bytes.Buffer
	jsonValue(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func jsonValue(b *bytes.Buffer, v any, indent string) {
	inner := indent + "  "
	switch x := v.(type) {
	case object:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range x {
			b.WriteString(inner)
			b.WriteString(jsonString(m.key))
			b.WriteString(": ")
			jsonValue(b, m.value, inner)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case list:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(inner)
			jsonValue(b, e, inner)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.WriteString(scalarText(v, jsonString))
	}
}

// jsonString quotes s as JSON does, without escaping HTML characters.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// scalarText writes a string (with quote), an integer or a bool.
func scalarText(v any, quote func(string) string) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return quote(fmt.Sprint(v)) // the renderers build only the kinds above
}

// writeYAML writes v, an object, as block-style YAML, ending with a newline.
func writeYAML(v object) []byte {
	var b bytes.Buffer
	yamlObject(&b, v, "", "")
	return b.Bytes()
}

// yamlObject writes the members of o, the first after first (a list item's
// "- ") and the others after indent.
func yamlObject(b *bytes.Buffer, o object, first, indent string) {
	for i, m := range o {
		if i == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(indent)
		}
		b.WriteString(yamlString(m.key) + ":")
		yamlMemberValue(b, m.value, indent)
	}
}

// yamlMemberValue writes the value of a member written at indent.
func yamlMemberValue(b *bytes.Buffer, v any, indent string) {
	inner := indent + "  "
	switch x := v.(type) {
	case object:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteString("\n")
		yamlObject(b, x, inner, inner)
	case list:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteString("\n")
		for _, e := range x {
			if o, ok := e.(object); ok && len(o) > 0 {
				yamlObject(b, o, inner+"- ", inner+"  ")
				continue
			}
			b.WriteString(inner + "-")
			yamlMemberValue(b, e, inner)
		}
	default:
		b.WriteString(" " + scalarText(v, yamlString) + "\n")
	}
}

// plainYAML matches the strings YAML reads back as the same string without
// quotes; every other string is double-quoted (JSON's escapes are YAML's too).
var (
	plainYAML    = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./:-]*$`)
	reservedYAML = regexp.MustCompile(`^(?i:y|n|yes|no|on|off|true|false|null)$`)
)

func yamlString(s string) string {
	if plainYAML.MatchString(s) && !reservedYAML.MatchString(s) && !strings.HasSuffix(s, ":") {
		return s
	}
	return jsonString(s)
}
