package singletable

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
)

// List, set and nested operations of [Entity.Update]: [Append], [Prepend],
// [DeleteFromSet], [SetIfNotExists], and [Set] and [Remove] on document paths
// ("address.city", "tags[2]"). Each is checked against T's Go types at the call
// (see the notes on document paths in internal/docpath), encoded as the field's own
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
//
// Append and Prepend work on a list that is missing, stored as a list, or stored
// as NULL (a nil slice without omitempty, as the library itself stores one). No
// one update expression covers all three (if_not_exists does not see through a
// NULL), so each is planned both ways (listOp): for a list or none,
// list_append(if_not_exists(path, []), elems) on the condition that the path does
// not hold NULL; for a NULL, list_append([], elems) on the condition that it does.
// The update is sent in the first form; when its condition fails and the item as
// it stood holds NULL there, it is sent again at once in the other form (and back,
// should the item change again), carrying the same receipt: it is still applied
// once at most, and judged as any update after a lost answer.

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
	dp, err := docpath.Parse(c.attr)
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
	label := opNames[c.op] + " " + info.attrName(rp.Top)
	if len(dp.Steps) > 1 {
		label += " at " + strconv.Quote(dp.Text)
	}
	p.w.changed = append(p.w.changed, label)
	if dp.HasIndex() {
		p.repeats = true // SET l[9] past the end appends; REMOVE l[1] twice removes two
	}
	name := dp.Expr(&p.w.b)
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
	return fmt.Errorf("%s: ADD applies to top-level number and set attributes only, not %q (DynamoDB's rule): %w", info.attrName(rp.Top), dp.Text, ErrInvalidInput)
}

// pathAllowed applies the rules of Set to a change at a path: what may not change,
// and what may not be changed twice.
func (p *updatePlan) pathAllowed(c change, rp *docpath.Resolved) error {
	info, top := p.info, rp.Top
	label := opNames[c.op] + " " + info.attrName(top)
	switch {
	case info.baseInputs[top.Name]:
		return fmt.Errorf("%s: feeds the primary key, which cannot change: %w", label, ErrInvalidInput)
	case info.owned[top] != "":
		return info.refuseOwned(top, label)
	case c.op == opSetIfNotExists && len(rp.Steps) == 1:
		if attrs, _ := info.keyInputOf(top); len(attrs) > 0 {
			return fmt.Errorf("%s: an input of %s: if_not_exists may or may not store the value, so the key could not be recomputed; use Set: %w", label, attrs[0], ErrInvalidInput)
		}
	case c.op == opDeleteElems && len(rp.Steps) > 1:
		return fmt.Errorf("%s: DELETE applies to top-level set attributes only, not %q (DynamoDB's rule): %w", label, rp.Text, ErrInvalidInput)
	}
	if _, whole := p.newValues[top.Name]; whole || p.added[top.Name] {
		return fmt.Errorf("%s: %q overlaps another change of %s in one update: %w", label, rp.Text, top.Name, ErrInvalidInput)
	}
	for _, q := range p.paths {
		if q.Overlaps(rp.Path) {
			return fmt.Errorf("%s: %q overlaps %q, changed in the same update (DynamoDB refuses overlapping paths): %w", label, rp.Text, q.Text, ErrInvalidInput)
		}
	}
	return nil
}

// pathTouched reports whether a change at a path of attr is planned already.
func (p *updatePlan) pathTouched(attr string) bool {
	for _, q := range p.paths {
		if q.Steps[0].Name == attr {
			return true
		}
	}
	return false
}

// setPath plans Set or SetIfNotExists at a path.
func (p *updatePlan) setPath(c change, rp *docpath.Resolved, name string) error {
	info := p.info
	fv, err := codec.Convert(c.value, rp.Leaf)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", opNames[c.op], info.attrName(rp.Top), rp.Text, ErrInvalidInput, err)
	}
	if len(rp.Steps) == 1 {
		p.checks = append(p.checks, fieldValue{f: rp.Top, fv: fv}) // the field's checks (validation)
	}
	av, keep, err := rp.Encode(fv)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", opNames[c.op], info.attrName(rp.Top), rp.Text, ErrInvalidInput, err)
	}
	switch {
	case !keep && c.op == opSet:
		p.removes = append(p.removes, name) // as Set of an omitempty field's zero value
		return nil
	case !keep:
		return fmt.Errorf("SetIfNotExists %s at %q: the field's options leave this value out (omitempty): nothing to set: %w", info.attrName(rp.Top), rp.Text, ErrInvalidInput)
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
func (p *updatePlan) appendPath(c change, rp *docpath.Resolved, name string) error {
	info := p.info
	label := opNames[c.op] + " " + info.attrName(rp.Top) + " at " + fmt.Sprintf("%q", rp.Text)
	lt := derefType(rp.Leaf)
	switch {
	case lt.Kind() != reflect.Slice || lt.Elem().Kind() == reflect.Uint8:
		return fmt.Errorf("%s: a %s is not a list (arrays have a fixed length): %w", label, rp.Leaf, ErrInvalidInput)
	case rp.IsSet(lt):
		return fmt.Errorf("%s: a set has no order; add elements with Add: %w", label, ErrInvalidInput)
	case len(c.values) == 0:
		return fmt.Errorf("%s: nothing to append: %w", label, ErrInvalidInput)
	}
	list, err := codec.Elems(lt, c.values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	lv := list
	if rp.Leaf.Kind() == reflect.Pointer {
		lv = reflect.New(lt)
		lv.Elem().Set(list)
	}
	av, keep, err := rp.Encode(lv)
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
	b := &p.w.b
	v, empty, null := b.Value(av), b.Value(&types.AttributeValueMemberL{Value: []types.AttributeValue{}}), b.S("NULL")
	existing := "if_not_exists(" + name + ", " + empty + ")"
	op := &listOp{path: rp.Path}
	if c.op == opAppend {
		op.set = [2]string{name + " = list_append(" + existing + ", " + v + ")", name + " = list_append(" + empty + ", " + v + ")"}
	} else {
		op.set = [2]string{name + " = list_append(" + v + ", " + existing + ")", name + " = list_append(" + v + ", " + empty + ")"}
	}
	op.cond = [2]string{"NOT attribute_type(" + name + ", " + null + ")", "attribute_type(" + name + ", " + null + ")"}
	p.sets = append(p.sets, op.set[0])
	p.guard(op.cond[0])
	p.lists = append(p.lists, op)
	p.repeats = true
	return nil
}

// listOp is an Append or Prepend planned both ways (see the notes above): set and
// cond hold the SET clause and the condition for a list or none ([0]) and for a
// NULL ([1]); null says which the update holds now.
type listOp struct {
	path docpath.Path
	set  [2]string
	cond [2]string
	null bool
}

// adapt switches the Appends and Prepends of an update whose condition failed to
// the form the item as it stood (cur) calls for: NULL where a list is stored as
// NULL. It reports whether it changed anything, and so whether to send again.
func (w *writeRequest) adapt(cur map[string]types.AttributeValue) bool {
	if len(w.lists) == 0 || cur == nil || !w.info.isType(cur) {
		return false
	}
	changed := false
	for _, l := range w.lists {
		_, null := l.path.Lookup(cur).(*types.AttributeValueMemberNULL)
		if null == l.null {
			continue
		}
		from, to := 0, 1
		if l.null {
			from, to = 1, 0
		}
		w.update = strings.Replace(w.update, l.set[from], l.set[to], 1)
		w.cond = strings.Replace(w.cond, l.cond[from], l.cond[to], 1)
		l.null, changed = null, true
	}
	return changed
}

// deleteElems plans DeleteFromSet.
func (p *updatePlan) deleteElems(c change, rp *docpath.Resolved, name string) error {
	info := p.info
	label := "DeleteFromSet " + info.attrName(rp.Top)
	lt := derefType(rp.Leaf)
	switch {
	case lt.Kind() != reflect.Slice || !rp.IsSet(lt):
		return fmt.Errorf("%s: a %s is not stored as a set (tag it stringset, numberset or binaryset): %w", label, rp.Leaf, ErrInvalidInput)
	case len(c.values) == 0:
		return fmt.Errorf("%s: no elements to delete: %w", label, ErrInvalidInput)
	}
	set, err := codec.Elems(lt, c.values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, ErrInvalidInput, err)
	}
	av, keep, err := rp.Encode(set)
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

// count checks a value sent at a path as a whole item's values are checked, and
// adds its size to what the update sends.
func (p *updatePlan) count(rp *docpath.Resolved, av types.AttributeValue) error {
	size, prob := attrvalue.Check(av)
	if prob != nil {
		return fmt.Errorf("%s (attribute %q at %q%s): %s: %w", p.info.attrName(rp.Top), rp.Top.Name, rp.Text, prob.Path, prob.What, ErrInvalidInput)
	}
	if p.sent += size + len(rp.Text); p.sent > MaxItemBytes {
		return fmt.Errorf("%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", p.info.attrName(rp.Top), p.sent, MaxItemBytes, ErrInvalidInput)
	}
	return nil
}

// hint names, in DynamoDB's refusal of an update (a ValidationException), the
// changes it was refused for, which only the server could check against the
// stored item: an operand of another type than the change needs (Add to a string,
// Append to a map), or a nested path whose parent the item does not hold.
func (w *writeRequest) hint(err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" || w.update == "" {
		return err
	}
	if strings.Contains(api.ErrorMessage(), "document path") {
		var nested []string
		for _, p := range w.paths {
			if len(p.Steps) > 1 {
				nested = append(nested, strconv.Quote(p.Text))
			}
		}
		if len(nested) > 0 {
			return fmt.Errorf("a path of %s goes into a map or list the stored item does not hold (missing or NULL): Set the whole attribute first; nothing was written: %w", strings.Join(nested, ", "), err)
		}
	}
	changed := w.changed
	if len(changed) == 0 {
		changed = []string{"the library's own attributes"}
	}
	what := "DynamoDB refused the update"
	if strings.Contains(api.ErrorMessage(), "incorrect data type") {
		what = "a value stored in the item is not of the type a change needs (Add a number or a set, Append and Prepend a list, DeleteFromSet a set)"
	}
	return fmt.Errorf("%s (changes: %s); nothing was written: %w", what, strings.Join(changed, ", "), err)
}
