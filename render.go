package singletable

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/keytmpl"
)

// keyTemplate is one key attribute's template bound to T's fields.
type keyTemplate struct {
	attr      string
	index     string // "" for the base table
	partition bool
	tmpl      *Template
	fields    []*codec.Field   // per placeholder, in order
	access    []keytmpl.Access // per placeholder: how to read its field
	maxBytes  int
	typ       types.ScalarAttributeType // N or B for a number or binary key (keytypes.go); "" for a string
	// direct renders the key by offset when every placeholder's field can be
	// read without reflect; nil otherwise.
	direct *keytmpl.Direct
}

// render renders the key from a struct value. With prefix set, it stops at the
// first missing input and reports complete=false. Errors name the entity, the key
// attribute and the Go field.
func (kt *keyTemplate) render(info *entityInfo, sv reflect.Value, prefix bool) (string, bool, error) {
	// Inputs are read by offset from an addressable T, through reflect otherwise.
	direct := sv.CanAddr() && sv.Type() == info.goType
	if direct && kt.direct != nil {
		if k, ok := kt.direct.Render(sv.Addr().UnsafePointer()); ok {
			return k, true, nil
		}
	}
	var inline [4]keytmpl.Value
	n := len(kt.fields)
	var vals []keytmpl.Value
	if n <= len(inline) {
		vals = inline[:n]
	} else {
		vals = make([]keytmpl.Value, n)
	}
	if direct {
		base := sv.Addr().UnsafePointer()
		for i := range vals {
			if a := &kt.access[i]; a.ByOffset() {
				a.ReadInto(base, &vals[i])
			} else {
				vals[i] = keytmpl.ValueOfField(kt.fields[i], sv)
			}
		}
	} else {
		for i, f := range kt.fields {
			vals[i] = keytmpl.ValueOfField(f, sv)
		}
	}
	return kt.renderValues(info, vals, nil, prefix)
}

// renderWith is render asking get for the input of the i-th placeholder. Inputs are
// asked for in order, up to the first missing one.
func (kt *keyTemplate) renderWith(info *entityInfo, get func(i int) keytmpl.Value, prefix bool) (string, bool, error) {
	var inline [4]keytmpl.Value
	vals := inline[:0]
	for i := range kt.fields {
		v := get(i)
		vals = append(vals, v)
		if v.Kind == keytmpl.KindMissing {
			break // rendering stops here
		}
	}
	return kt.renderValues(info, vals, get, prefix)
}

// renderValues renders the key from the inputs of its placeholders, in order; vals
// may end at the first missing one, and get then gives the others.
func (kt *keyTemplate) renderValues(info *entityInfo, vals []keytmpl.Value, get func(i int) keytmpl.Value, prefix bool) (string, bool, error) {
	var buf [256]byte
	b, complete, err := kt.tmpl.k.AppendKey(buf[:0], vals, prefix)
	if err != nil {
		var ke *keytmpl.Error
		if errors.As(err, &ke) {
			return "", false, &KeyError{Entity: info.name, Attribute: kt.attr, Field: kt.goName(ke.Field), Reason: ke.Reason}
		}
		return "", false, err
	}
	if len(b) > kt.maxBytes {
		ke := &KeyError{Entity: info.name, Attribute: kt.attr, Reason: "rendered key is " + strconv.Itoa(len(b)) + " bytes, over DynamoDB's limit of " + strconv.Itoa(kt.maxBytes)}
		// Blame the longest input: numbers and times have a fixed width.
		longest := 0
		for i, f := range kt.fields {
			var v keytmpl.Value
			if i < len(vals) {
				v = vals[i]
			} else if get != nil {
				v = get(i)
			}
			if v.Kind == keytmpl.KindString && len(v.S) > longest {
				longest, ke.Field = len(v.S), f.GoName
			}
		}
		if ke.Field != "" {
			ke.Reason += " (" + ke.Field + " is " + strconv.Itoa(longest) + " bytes)"
		}
		return "", false, ke
	}
	return string(b), complete, nil
}

// goName maps a placeholder name to the Go field name for messages.
func (kt *keyTemplate) goName(placeholder string) string {
	for _, f := range kt.fields {
		if f.Name == placeholder {
			return f.GoName
		}
	}
	return placeholder
}

// primaryKey renders the base table key of a struct value, as attributes and as
// strings (for messages).
func (info *entityInfo) primaryKey(sv reflect.Value) (map[string]types.AttributeValue, map[string]string, error) {
	k, err := info.primaryKeyAV(sv)
	if err != nil {
		return nil, nil, err
	}
	return k, info.table.keyStrings(k), nil
}

// primaryKeyAV renders the base table key of a struct value.
func (info *entityInfo) primaryKeyAV(sv reflect.Value) (map[string]types.AttributeValue, error) {
	if err := info.checkShard(sv); err != nil {
		return nil, err
	}
	pk, _, err := info.pk.render(info, sv, false)
	if err != nil {
		return nil, err
	}
	if info.pk.typ != "" || info.sk == nil || info.sk.typ != "" {
		return info.typedKeyAV(sv, pk) // keytypes.go
	}
	sk, _, err := info.sk.render(info, sv, false)
	if err != nil {
		return nil, err
	}
	t := info.table.opts
	avs := &[2]types.AttributeValueMemberS{{Value: pk}, {Value: sk}} // one allocation for both
	return map[string]types.AttributeValue{t.PartitionKey: &avs[0], t.SortKey: &avs[1]}, nil
}

// encodeItem encodes a full item of a value whose shard must be set (see
// encodeWhole).
func (info *entityInfo) encodeItem(sv reflect.Value) (map[string]types.AttributeValue, error) {
	if err := info.checkShard(sv); err != nil {
		return nil, err
	}
	return info.encodeWhole(sv)
}

// encodeWhole encodes a full item: fields, every key attribute whose inputs are
// present (index keys with a missing input are left out: a sparse index), and the
// type attribute. What the feature plans store (version, receipts, schema) they
// add themselves (planner.go).
func (info *entityInfo) encodeWhole(sv reflect.Value) (map[string]types.AttributeValue, error) {
	item := make(map[string]types.AttributeValue, len(info.plan.Fields())+len(info.all)+1)
	if err := info.plan.EncodeInto(sv, item); err != nil {
		return nil, errorf("encode %s: %w: %w", info.name, ErrInvalidInput, err)
	}
	// The base keys and the type, in one allocation.
	avs := &[3]types.AttributeValueMemberS{2: {Value: info.discriminator}}
	base := avs[:2]
	for i := 0; i < len(info.all); i++ {
		kt := info.all[i]
		if kt.index == "" {
			v, _, err := kt.render(info, sv, false)
			if err != nil {
				return nil, err
			}
			if kt.typ != "" { // a number or binary key (keytypes.go)
				item[kt.attr] = info.table.keyAV(kt.attr, v)
				continue
			}
			base[0].Value = v
			item[kt.attr] = &base[0]
			base = base[1:]
			continue
		}
		pair := info.indexes[kt.index]
		vals, ok, err := info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) { return kt.render(info, sv, true) })
		if err != nil {
			return nil, err
		}
		for j, pt := range pair {
			if ok && pt != nil {
				item[pt.attr] = info.table.keyAV(pt.attr, vals[j])
			}
		}
		if pair[0] != nil && pair[1] != nil {
			i++ // the pair's sort key was handled with its partition key (a local index has only its sort key in all)
		}
	}
	item[info.table.opts.TypeAttribute] = &avs[2]
	if _, err := info.checkItem(item); err != nil {
		return nil, err
	}
	return item, nil
}

// renderIndex renders an index's key pair, each key with render (which renders a
// prefix). ok is false (and nothing is an error) when an input is missing: the
// item is left out of the index.
func (info *entityInfo) renderIndex(pair [2]*keyTemplate, render func(kt *keyTemplate) (string, bool, error)) ([2]string, bool, error) {
	var vals [2]string // as pair: a nil template (a local index's partition key, an index without sort key) has ""
	for j, kt := range pair {
		if kt == nil {
			continue
		}
		v, complete, err := render(kt)
		if err != nil {
			return vals, false, err
		}
		if !complete {
			return vals, false, nil
		}
		vals[j] = v
	}
	return vals, true, nil
}

// keyStrings returns an item's primary key as strings, for messages: a number's
// digits, a binary's bytes in hex.
func (t *Table) keyStrings(item map[string]types.AttributeValue) map[string]string {
	key := map[string]string{}
	for _, a := range t.baseKeyAttrs() {
		switch v := item[a].(type) {
		case *types.AttributeValueMemberS:
			key[a] = v.Value
		case *types.AttributeValueMemberN:
			key[a] = v.Value
		case *types.AttributeValueMemberB:
			key[a] = t.keyDisplay(a, string(v.Value))
		}
	}
	return key
}

// formatKey renders a key's attributes for messages, sorted by name:
// {PK="ORDER#1", SK="A"}.
func formatKey(k map[string]string) string {
	if len(k) == 0 {
		return ""
	}
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		b.WriteString("=")
		b.WriteString(strconv.Quote(k[n]))
	}
	b.WriteString("}")
	return b.String()
}
