package updateplan

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
)

// pathChange plans a change that is not a Set, Remove or Add of a whole stored
// attribute: a list or set operation, SetIfNotExists, or any change at a
// document path.
func (p *Plan) pathChange(c Change) error {
	e := p.E
	dp, err := docpath.Parse(c.Attr)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", Names[c.Op], p.Invalid, err)
	}
	rp, err := e.Resolve(dp)
	if err != nil {
		return fmt.Errorf("%s: %w", Names[c.Op], err)
	}
	if err := p.pathAllowed(c, rp); err != nil {
		return err
	}
	p.Paths = append(p.Paths, dp)
	label := Names[c.Op] + " " + e.Label(rp.Top)
	if len(dp.Steps) > 1 {
		label += " at " + strconv.Quote(dp.Text)
	}
	p.Changed = append(p.Changed, label)
	if dp.HasIndex() {
		p.Repeats = true // SET l[9] past the end appends; REMOVE l[1] twice removes two
	}
	name := dp.Expr(p.B)
	switch c.Op {
	case Remove:
		p.Removes = append(p.Removes, name)
		return nil
	case Set, SetIfNotExists:
		return p.setPath(c, rp, name)
	case Append, Prepend:
		return p.appendPath(c, rp, name)
	case DeleteElems:
		return p.deleteElems(c, rp, name)
	}
	return fmt.Errorf("%s: ADD applies to top-level number and set attributes only, not %q (DynamoDB's rule): %w", e.Label(rp.Top), dp.Text, p.Invalid)
}

// pathAllowed applies the rules of Set to a change at a path: what may not change,
// and what may not be changed twice.
func (p *Plan) pathAllowed(c Change, rp *docpath.Resolved) error {
	e, top := p.E, rp.Top
	label := Names[c.Op] + " " + e.Label(top)
	switch {
	case e.BaseInput(top.Name):
		return fmt.Errorf("%s: feeds the primary key, which cannot change: %w", label, p.Invalid)
	case e.Owned(top) != "":
		return p.RefuseOwned(top, label)
	case c.Op == SetIfNotExists && len(rp.Steps) == 1:
		if attrs := e.KeyInputs(top); len(attrs) > 0 {
			return fmt.Errorf("%s: an input of %s: if_not_exists may or may not store the value, so the key could not be recomputed; use Set: %w", label, attrs[0], p.Invalid)
		}
	case c.Op == DeleteElems && len(rp.Steps) > 1:
		return fmt.Errorf("%s: DELETE applies to top-level set attributes only, not %q (DynamoDB's rule): %w", label, rp.Text, p.Invalid)
	}
	if _, whole := p.NewValues[top.Name]; whole || p.Added[top.Name] {
		return fmt.Errorf("%s: %q overlaps another change of %s in one update: %w", label, rp.Text, top.Name, p.Invalid)
	}
	for _, q := range p.Paths {
		if q.Overlaps(rp.Path) {
			return fmt.Errorf("%s: %q overlaps %q, changed in the same update (DynamoDB refuses overlapping paths): %w", label, rp.Text, q.Text, p.Invalid)
		}
	}
	return nil
}

// pathTouched reports whether a change at a path of attr is planned already.
func (p *Plan) pathTouched(attr string) bool {
	for _, q := range p.Paths {
		if q.Steps[0].Name == attr {
			return true
		}
	}
	return false
}

// setPath plans Set or SetIfNotExists at a path.
func (p *Plan) setPath(c Change, rp *docpath.Resolved, name string) error {
	e := p.E
	fv, err := codec.Convert(c.Value, rp.Leaf)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", Names[c.Op], e.Label(rp.Top), rp.Text, p.Invalid, err)
	}
	if len(rp.Steps) == 1 {
		p.Checks = append(p.Checks, Check{F: rp.Top, FV: fv}) // the field's checks (validation)
	}
	av, keep, err := rp.Encode(fv)
	if err != nil {
		return fmt.Errorf("%s %s at %q: %w: %w", Names[c.Op], e.Label(rp.Top), rp.Text, p.Invalid, err)
	}
	switch {
	case !keep && c.Op == Set:
		p.Removes = append(p.Removes, name) // as Set of an omitempty field's zero value
		return nil
	case !keep:
		return fmt.Errorf("SetIfNotExists %s at %q: the field's options leave this value out (omitempty): nothing to set: %w", e.Label(rp.Top), rp.Text, p.Invalid)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	v := p.B.Value(av)
	if c.Op == SetIfNotExists {
		v = "if_not_exists(" + name + ", " + v + ")"
	}
	p.Sets = append(p.Sets, name+" = "+v)
	return nil
}

// derefType is t with one pointer taken off.
func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// appendPath plans Append or Prepend.
func (p *Plan) appendPath(c Change, rp *docpath.Resolved, name string) error {
	label := Names[c.Op] + " " + p.E.Label(rp.Top) + " at " + fmt.Sprintf("%q", rp.Text)
	lt := derefType(rp.Leaf)
	switch {
	case lt.Kind() != reflect.Slice || lt.Elem().Kind() == reflect.Uint8:
		return fmt.Errorf("%s: a %s is not a list (arrays have a fixed length): %w", label, rp.Leaf, p.Invalid)
	case rp.IsSet(lt):
		return fmt.Errorf("%s: a set has no order; add elements with Add: %w", label, p.Invalid)
	case len(c.Values) == 0:
		return fmt.Errorf("%s: nothing to append: %w", label, p.Invalid)
	}
	list, err := codec.Elems(lt, c.Values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, p.Invalid, err)
	}
	lv := list
	if rp.Leaf.Kind() == reflect.Pointer {
		lv = reflect.New(lt)
		lv.Elem().Set(list)
	}
	av, keep, err := rp.Encode(lv)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, p.Invalid, err)
	}
	l, ok := av.(*types.AttributeValueMemberL)
	if !keep || !ok || len(l.Value) == 0 {
		return fmt.Errorf("%s: the field's options leave every element out: nothing to append: %w", label, p.Invalid)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	b := p.B
	v, empty, null := b.Value(av), b.Value(&types.AttributeValueMemberL{Value: []types.AttributeValue{}}), b.S("NULL")
	existing := "if_not_exists(" + name + ", " + empty + ")"
	op := &ListOp{Path: rp.Path}
	if c.Op == Append {
		op.set = [2]string{name + " = list_append(" + existing + ", " + v + ")", name + " = list_append(" + empty + ", " + v + ")"}
	} else {
		op.set = [2]string{name + " = list_append(" + v + ", " + existing + ")", name + " = list_append(" + v + ", " + empty + ")"}
	}
	op.cond = [2]string{"NOT attribute_type(" + name + ", " + null + ")", "attribute_type(" + name + ", " + null + ")"}
	p.Sets = append(p.Sets, op.set[0])
	p.guard(op.cond[0])
	p.Lists = append(p.Lists, op)
	p.Repeats = true
	return nil
}

// ListOp is an Append or Prepend planned both ways: for a list or none, and for
// a list stored as NULL, which no one update expression covers (if_not_exists
// does not see through a NULL). The update is sent in the first form.
type ListOp struct {
	Path docpath.Path
	set  [2]string // the SET clause for a list or none ([0]) and for a NULL ([1])
	cond [2]string // the condition of each form
	null bool      // the update holds the NULL form
}

// Adapt switches the Appends and Prepends of an update whose condition failed to
// the form the item as it stood (cur) calls for: NULL where a list is stored as
// NULL. It returns the update and condition expressions, and whether it changed
// anything (and so whether to send again).
func Adapt(lists []*ListOp, update, cond string, cur map[string]types.AttributeValue) (string, string, bool) {
	changed := false
	for _, l := range lists {
		_, null := l.Path.Lookup(cur).(*types.AttributeValueMemberNULL)
		if null == l.null {
			continue
		}
		from, to := 0, 1
		if l.null {
			from, to = 1, 0
		}
		update = strings.Replace(update, l.set[from], l.set[to], 1)
		cond = strings.Replace(cond, l.cond[from], l.cond[to], 1)
		l.null, changed = null, true
	}
	return update, cond, changed
}

// deleteElems plans DeleteFromSet.
func (p *Plan) deleteElems(c Change, rp *docpath.Resolved, name string) error {
	label := "DeleteFromSet " + p.E.Label(rp.Top)
	lt := derefType(rp.Leaf)
	switch {
	case lt.Kind() != reflect.Slice || !rp.IsSet(lt):
		return fmt.Errorf("%s: a %s is not stored as a set (tag it stringset, numberset or binaryset): %w", label, rp.Leaf, p.Invalid)
	case len(c.Values) == 0:
		return fmt.Errorf("%s: no elements to delete: %w", label, p.Invalid)
	}
	set, err := codec.Elems(lt, c.Values)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, p.Invalid, err)
	}
	av, keep, err := rp.Encode(set)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", label, p.Invalid, err)
	}
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
	default:
		return fmt.Errorf("%s: the elements do not encode as a set (keep %v): %w", label, keep, p.Invalid)
	}
	if err := p.count(rp, av); err != nil {
		return err
	}
	p.Deletes = append(p.Deletes, name+" "+p.B.Value(av))
	return nil
}

// count checks a value sent at a path as a whole item's values are checked, and
// adds its size to what the update sends.
func (p *Plan) count(rp *docpath.Resolved, av types.AttributeValue) error {
	size, prob := attrvalue.Check(av)
	if prob != nil {
		return fmt.Errorf("%s (attribute %q at %q%s): %s: %w", p.E.Label(rp.Top), rp.Top.Name, rp.Text, prob.Path, prob.What, p.Invalid)
	}
	if p.Sent += size + len(rp.Text); p.Sent > p.Limit {
		return fmt.Errorf("%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", p.E.Label(rp.Top), p.Sent, p.Limit, p.Invalid)
	}
	return nil
}
