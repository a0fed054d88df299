package singletable

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// List, set and nested operations of [Entity.Update]: [Append], [Prepend],
// [DeleteFromSet], [SetIfNotExists], and [Set] and [Remove] on document paths
// ("address.city", "tags[2]"). Each is checked against T's Go types at the call
// (see the notes on document paths in docpath.go), encoded as the field's own
// dynamodbav tag encodes it, and sent with placeholders for every name. The rules
// of Set hold for them too: inputs of the primary key, the version and the fields
// the library writes (createdAt, updatedAt, the counter) cannot be changed; a
// versioned entity's update carries its version condition and stores the next
// version; the values sent count towards the item limit. Two changes of one
// update may not overlap (one path a prefix of the other), as DynamoDB requires.
//
// Appending, prepending, and changing a list element by index are not idempotent
// (a second attempt would append again, or change another element), so such an
// update carries a receipt, as one with [Add] does, and is never sent twice after
// a lost response.

const (
	opAppend changeOp = opAdd + 1 + iota
	opPrepend
	opDeleteElems
	opSetIfNotExists
)

var opNames = map[changeOp]string{opSet: "Set", opRemove: "Remove", opAdd: "Add", opAppend: "Append", opPrepend: "Prepend", opDeleteElems: "DeleteFromSet", opSetIfNotExists: "SetIfNotExists"}

// Append appends elems to the list at path (a list attribute, or a list inside
// one: "lines", "orders[0].notes"), creating the list when there is none
// (SET path = list_append(if_not_exists(path, []), elems)). Each element must be
// of the list's element type or convert to it without loss. Not idempotent: see
// the notes above.
func Append(path string, elems ...any) UpdateOption {
	return changeOption{op: opAppend, attr: path, values: elems}
}

// Prepend puts elems at the front of the list at path, in the order given,
// creating the list when there is none; as [Append].
func Prepend(path string, elems ...any) UpdateOption {
	return changeOption{op: opPrepend, attr: path, values: elems}
}

// DeleteFromSet removes elems from the set attribute attr (a field tagged
// stringset, numberset or binaryset, or a [][]byte): DynamoDB's DELETE. Elements
// not in the set are ignored; a set left empty is removed. DynamoDB allows it on
// top-level attributes only. Idempotent.
func DeleteFromSet(attr string, elems ...any) UpdateOption {
	return changeOption{op: opDeleteElems, attr: attr, values: elems}
}

// SetIfNotExists sets the attribute or document path to value only when it holds
// nothing yet (SET path = if_not_exists(path, value)); a stored value is kept. It
// cannot change an input of an index key, whose keys could then not be recomputed
// (whether it stores the value is known only on the server).
func SetIfNotExists(path string, value any) UpdateOption {
	return changeOption{op: opSetIfNotExists, attr: path, value: value}
}

// pathChange plans a change that is not a Set, Remove or Add of a whole stored
// attribute: a list or set operation, SetIfNotExists, or any change at a
// document path.
func (p *updatePlan) pathChange(c change) error {
	info := p.info
	dp, err := parseDocPath(c.attr)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", opNames[c.op], ErrInvalidInput, err)
	}
	rp, err := info.resolvePath(dp)
	if err != nil {
		return fmt.Errorf("%s: %w", opNames[c.op], err)
	}
	if err := p.pathAllowed(c, rp); err != nil {
		return err
	}
	p.paths = append(p.paths, dp)
	if dp.hasIndex() {
		p.nonIdempotent = true // SET l[9] past the end appends; REMOVE l[1] twice removes two
	}
	name := dp.expr(&p.w.b)
	switch c.op {
	case opRemove:
		p.removes = append(p.removes, name)
		return nil
	case opSet, opSetIfNotExists:
		return p.setPath(c, rp, name)
	case opAppend, opPrepend:
		return p.appendPath(c, rp, name)
	case opDeleteElems:
		return p.deleteElems(c, rp, name)
	}
	return fmt.Errorf("%s: ADD applies to top-level number and set attributes only, not %q (DynamoDB's rule): %w", info.attrName(rp.top), dp.text, ErrInvalidInput)
}

// pathAllowed applies the rules of Set to a change at a path: what may not change,
// and what may not be changed twice.
func (p *updatePlan) pathAllowed(c change, rp *resolvedPath) error {
	info, top := p.info, rp.top
	label := opNames[c.op] + " " + info.attrName(top)
	switch {
	case info.baseInputs[top.Name]:
		return fmt.Errorf("%s: feeds the primary key, which cannot change: %w", label, ErrInvalidInput)
	case info.version == top:
		return fmt.Errorf("%s: the version changes by itself: %w", label, ErrInvalidInput)
	case info.hooks.library(top) != "":
		return fmt.Errorf("%s: the %s field is set by the library on every write: %w", label, info.hooks.library(top), ErrInvalidInput)
	case c.op == opSetIfNotExists && len(rp.steps) == 1:
		if attrs, _ := info.keyInputOf(top); len(attrs) > 0 {
			return fmt.Errorf("%s: an input of %s: if_not_exists may or may not store the value, so the key could not be recomputed; use Set: %w", label, attrs[0], ErrInvalidInput)
		}
	case c.op == opDeleteElems && len(rp.steps) > 1:
		return fmt.Errorf("%s: DELETE applies to top-level set attributes only, not %q (DynamoDB's rule): %w", label, rp.text, ErrInvalidInput)
	}
	if _, whole := p.newValues[top.Name]; whole || p.added[top.Name] {
		return fmt.Errorf("%s: %q overlaps another change of %s in one update: %w", label, rp.text, top.Name, ErrInvalidInput)
	}
	for _, q := range p.paths {
		if q.overlaps(rp.docPath) {
			return fmt.Errorf("%s: %q overlaps %q, changed in the same update (DynamoDB refuses overlapping paths): %w", label, rp.text, q.text, ErrInvalidInput)
		}
	}
	return nil
}

// pathTouched reports whether a change at a path of attr is planned already.
func (p *updatePlan) pathTouched(attr string) bool {
	for _, q := range p.paths {
		if q.steps[0].name == attr {
			return true
		}
	}
	return false
}

// setPath plans Set or SetIfNotExists at a path.
func (p *updatePlan) setPath(c change, rp *resolvedPath, name string) error {
	info := p.info
	fv, err := convertValue(c.value, rp.leaf)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", opNames[c.op], info.attrName(rp.top), rp.text, ErrInvalidInput, err)
	}
	if len(rp.steps) == 1 {
		if err := info.hooks.checkField(info, rp.top.Name, fv); err != nil { // validator.go
			return err
		}
	}
	av, keep, err := rp.encode(fv)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", opNames[c.op], info.attrName(rp.top), rp.text, ErrInvalidInput, err)
	}
	switch {
	case !keep && c.op == opSet:
		p.removes = append(p.removes, name) // as Set of an omitempty field's zero value
		return nil
	case !keep:
		return fmt.Errorf("SetIfNotExists %s at %q: the field's options leave this value out (omitempty): nothing to set: %w", info.attrName(rp.top), rp.text, ErrInvalidInput)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	v := p.w.b.Value(av)
	if c.op == opSetIfNotExists {
		v = "if_not_exists(" + name + ", " + v + ")"
	}
	p.sets = append(p.sets, name+" = "+v)
	return nil
}

// appendPath plans Append or Prepend.
func (p *updatePlan) appendPath(c change, rp *resolvedPath, name string) error {
	info := p.info
	label := opNames[c.op] + " " + info.attrName(rp.top) + " at " + fmt.Sprintf("%q", rp.text)
	lt := derefType(rp.leaf)
	switch {
	case lt.Kind() != reflect.Slice || lt.Elem().Kind() == reflect.Uint8:
		return fmt.Errorf("%s: a %s is not a list (arrays have a fixed length): %w", label, rp.leaf, ErrInvalidInput)
	case rp.isSet(lt):
		return fmt.Errorf("%s: a set has no order; add elements with Add: %w", label, ErrInvalidInput)
	case len(c.values) == 0:
		return fmt.Errorf("%s: nothing to append: %w", label, ErrInvalidInput)
	}
	list, err := elemsOf(lt, c.values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	lv := list
	if rp.leaf.Kind() == reflect.Pointer {
		lv = reflect.New(lt)
		lv.Elem().Set(list)
	}
	av, keep, err := rp.encode(lv)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	l, ok := av.(*types.AttributeValueMemberL)
	if !keep || !ok || len(l.Value) == 0 {
		return fmt.Errorf("%s: the field's options leave every element out: nothing to append: %w", label, ErrInvalidInput)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	v, empty := p.w.b.Value(av), p.w.b.Value(&types.AttributeValueMemberL{Value: []types.AttributeValue{}})
	existing := "if_not_exists(" + name + ", " + empty + ")"
	if c.op == opAppend {
		p.sets = append(p.sets, name+" = list_append("+existing+", "+v+")")
	} else {
		p.sets = append(p.sets, name+" = list_append("+v+", "+existing+")")
	}
	p.nonIdempotent = true
	return nil
}

// deleteElems plans DeleteFromSet.
func (p *updatePlan) deleteElems(c change, rp *resolvedPath, name string) error {
	info := p.info
	label := "DeleteFromSet " + info.attrName(rp.top)
	lt := derefType(rp.leaf)
	switch {
	case lt.Kind() != reflect.Slice || !rp.isSet(lt):
		return fmt.Errorf("%s: a %s is not stored as a set (tag it stringset, numberset or binaryset): %w", label, rp.leaf, ErrInvalidInput)
	case len(c.values) == 0:
		return fmt.Errorf("%s: no elements to delete: %w", label, ErrInvalidInput)
	}
	set, err := elemsOf(lt, c.values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	av, keep, err := rp.encode(set)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
	default:
		return fmt.Errorf("%s: the elements do not encode as a set (keep %v): %w", label, keep, ErrInvalidInput)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	p.deletes = append(p.deletes, name+" "+p.w.b.Value(av))
	return nil
}

// elemsOf makes a slice of type lt from values, each converted to its element type.
func elemsOf(lt reflect.Type, values []any) (reflect.Value, error) {
	out := reflect.MakeSlice(lt, len(values), len(values))
	for i, v := range values {
		ev, err := convertValue(v, lt.Elem())
		if err != nil {
			return out, fmt.Errorf("element %d: %w", i, err)
		}
		out.Index(i).Set(ev)
	}
	return out, nil
}

// count checks a value sent at a path as a whole item's values are checked, and
// adds its size to what the update sends.
func (p *updatePlan) count(rp *resolvedPath, av types.AttributeValue) error {
	size, prob := checkAV(av)
	if prob != nil {
		return fmt.Errorf("%s (attribute %q at %q%s): %s: %w", p.info.attrName(rp.top), rp.top.Name, rp.text, prob.path, prob.what, ErrInvalidInput)
	}
	if p.sent += size + len(rp.text); p.sent > MaxItemBytes {
		return fmt.Errorf("%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", p.info.attrName(rp.top), p.sent, MaxItemBytes, ErrInvalidInput)
	}
	return nil
}

// deleteClause is the DELETE clause of an update expression, "" without one.
func deleteClause(dels []string) string {
	if len(dels) == 0 {
		return ""
	}
	return " DELETE " + strings.Join(dels, ", ")
}

// pathHint explains DynamoDB's refusal of an update whose nested path has no
// parent in the stored item (a map or list that is missing or NULL), which only
// the server can see.
func (w *writeRequest) pathHint(err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" || !strings.Contains(api.ErrorMessage(), "document path") {
		return err
	}
	var nested []string
	for _, p := range w.paths {
		if len(p.steps) > 1 {
			nested = append(nested, strconv.Quote(p.text))
		}
	}
	if len(nested) == 0 {
		return err
	}
	return fmt.Errorf("a path of %s goes into a map or list the stored item does not hold (missing or NULL): Set the whole attribute first; nothing was written: %w", strings.Join(nested, ", "), err)
}
