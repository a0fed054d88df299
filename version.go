package singletable

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
)

// Versions: the version part of every write of a versioned entity, as a plan
// compiled at Register (versionFeature) that the planner runs for each write.
//
// One rule for version 0, applied by every write kind: a value at version 0 holds
// no version yet, and matches a stored item whose version is missing, NULL or 0 (an
// item written before versioning was adopted, or by other code); Put and Update
// (with [Upsert]) at version 0 also create the item when there is none. Every write
// that stores a whole item of a new version stores the next one: 1 for a new item,
// also from [Entity.BatchPut].

// storedField returns the plan field of the struct field at index (a path through
// embedded structs).
func storedField(info *entityInfo, index []int, sf reflect.StructField, what string) (*codec.Field, error) {
	for _, pf := range info.plan.Fields() {
		if slicesEqual(pf.Index, index) {
			return pf, nil
		}
	}
	return nil, &EntityError{Entity: info.name, Field: sf.Name, Reason: "the " + what + " field is not stored (unexported, tagged \"-\", or hidden by another field of the same name)"}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func isIntegerKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64 && k != reflect.Uintptr
}

// compileVersion makes the struct field at index (through embedded structs) the version.
func compileVersion(info *entityInfo, index []int, sf reflect.StructField) error {
	f, err := storedField(info, index, sf, "version")
	if err != nil {
		return err
	}
	if info.version != nil {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "a second version field (the first is " + info.version.GoName + "); an entity has one"}
	}
	if !isIntegerKind(f.Type.Kind()) {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "the version field must be an integer, not " + f.Type.String()}
	}
	for _, kt := range info.all {
		for _, kf := range kt.fields {
			if kf == f {
				return &EntityError{Entity: info.name, Field: f.GoName, Reason: "the version cannot be part of a key (" + kt.attr + ")"}
			}
		}
	}
	info.version = f
	return nil
}

// versionOf reads the version a value holds.
func (info *entityInfo) versionOf(sv reflect.Value) (uint64, error) {
	fv, _ := info.version.ValueOf(sv)
	if fv.CanInt() {
		n := fv.Int()
		if n < 0 {
			return 0, errorf("%s.%s: negative version %d: %w", info.name, info.version.GoName, n, ErrInvalidInput)
		}
		return uint64(n), nil
	}
	return fv.Uint(), nil
}

// maxVersion is the largest version the field can hold.
func (info *entityInfo) maxVersion() uint64 {
	bits := info.version.Type.Bits()
	if info.version.Type.Kind() >= reflect.Uint && info.version.Type.Kind() <= reflect.Uint64 {
		return 1<<bits - 1
	}
	return 1<<(bits-1) - 1
}

// setVersion stores n in a value's version field.
func (info *entityInfo) setVersion(sv reflect.Value, n uint64) {
	fv := sv.FieldByIndex(info.version.Index)
	if fv.CanInt() {
		fv.SetInt(int64(n))
	} else {
		fv.SetUint(n)
	}
}

// versionFeature is the version's plan, compiled at Register for a versioned
// entity: the condition on the version held and the next version stored, by
// every write kind.
type versionFeature struct {
	f   *codec.Field
	max uint64 // the largest version the field holds
}

func newVersionFeature(info *entityInfo) *versionFeature {
	return &versionFeature{f: info.version, max: info.maxVersion()}
}

func (v *versionFeature) owns(own func(*codec.Field, string)) { own(v.f, "version") }

// plan adds the version's part to a write: a Create and a BatchPut store the
// version after the value's (1 for a Create); a Put, an Update and a Delete hold
// the value's version (the condition) and, but for a Delete, store the next one;
// a clobbering write holds none and moves the stored version on the server.
func (v *versionFeature) plan(p *writePlan) error {
	switch p.kind {
	case kindCheck, kindWriteBack:
		return nil
	case kindCreate:
		p.set(v.f.Name, numberAV(1))
		p.versioned, p.version, p.judged = true, 1, true
		p.stake(&versionPart{v: v, next: 1})
		return nil
	case kindDelete:
		p.judged = true
		if p.clobber {
			return nil // a clobbering Delete stores nothing to judge: done when the item is gone
		}
	}
	vp, err := v.hold(p)
	if err != nil {
		return err
	}
	ver := p.w.b.Name(v.f.Name)
	switch {
	case p.kind == kindBatchPut:
		p.set(v.f.Name, numberAV(vp.next)) // no condition: the version after the value's
		return nil
	case vp.clobber:
		p.increment(v.f.Name, 0)
		p.guard("attribute_not_exists(" + ver + ") OR " + ver + " < " + p.w.b.Value(numberAV(v.max)))
		p.learns = true
	case vp.expected == 0:
		p.guard("attribute_not_exists(" + ver + ") OR attribute_type(" + ver + ", " + p.w.b.S("NULL") + ") OR " + ver + " = " + p.w.b.Value(numberAV(0)))
		p.zeroVersion = p.kind == kindPut
	default:
		p.guard(ver + " = " + p.w.b.Value(numberAV(vp.expected)))
		p.mustExist = true
	}
	if p.kind != kindDelete {
		if !vp.clobber {
			p.set(v.f.Name, numberAV(vp.next))
			p.version = vp.next
		}
		p.versioned, p.keeps, p.judged = true, true, true
		// The stored item also holds the version, beside the receipts.
		p.extra += len(v.f.Name) + 20
	}
	p.stake(vp)
	return nil
}

// hold reads the version the value holds, and the next one a write of it
// stores. A write made from an item the library read (Mutate) holds the version
// read.
func (v *versionFeature) hold(p *writePlan) (*versionPart, error) {
	info := p.info
	exp, err := info.versionOf(p.sv)
	if err != nil {
		return nil, err
	}
	if pin := p.w.pin; pin != nil && exp != pin.version {
		return nil, fmt.Errorf("the function changed the version: %w", ErrInvalidInput)
	}
	vp := &versionPart{v: v, expected: exp, clobber: p.clobber && p.kind != kindBatchPut}
	if vp.clobber {
		return vp, nil
	}
	if exp >= v.max {
		return nil, errorf("%s.%s: version %d is the largest the field holds; the next write would overflow: %w", info.name, v.f.GoName, exp, ErrInvalidInput)
	}
	vp.next = exp + 1
	return vp, nil
}

// versionPart is the version's stake in one write: the version held and the one
// stored (for a clobbering write, the one stored is learnt from the answer).
type versionPart struct {
	v        *versionFeature
	expected uint64
	next     uint64
	clobber  bool
}

// judge: a write pinned to the incarnation read did not land when the version is
// the one it held, and lost to another writer when the version moved within the
// receipts kept (the slot of version next holds the receipt of whoever wrote it).
func (vp *versionPart) judge(w *writeRequest, cur map[string]types.AttributeValue) (verdict, string) {
	t := w.info.table
	v, known := storedVersion(cur, vp.v.f.Name)
	why := fmt.Sprintf("the item is at version %d without this write's receipt, and it may have been deleted and created again in between (Mutate tells these apart)", v)
	if v > vp.next && v-vp.next >= uint64(t.opts.Receipts) {
		why = fmt.Sprintf("the item is at version %d, past the %d receipts kept", v, t.opts.Receipts)
	}
	switch {
	case !known:
		return unproven, why
	case v == vp.expected:
		return notLanded, why
	case v > vp.expected && (w.kind == kindDelete || v-vp.next < uint64(t.opts.Receipts)):
		return lost, why
	}
	return unproven, why
}

// explain: a version conflict ([*ConflictError]) when the version held is not
// the one stored; for a clobbering write, a stored version at the field's bound.
func (vp *versionPart) explain(w *writeRequest, cur map[string]types.AttributeValue) error {
	info := w.info
	t := info.table
	if vp.clobber {
		if v, _ := storedVersion(cur, vp.v.f.Name); cur != nil && v >= vp.v.max {
			return fmt.Errorf("%s.%s: the stored version %d is the largest the field holds; a write would overflow it: %w", info.name, vp.v.f.GoName, v, ErrInvalidInput)
		}
		return nil
	}
	ce := &ConflictError{Op: w.kind.String(), Entity: info.name, Key: w.keyStrings(t), Expected: vp.expected}
	if cur == nil {
		if w.kind == kindCreate || w.upsert || vp.expected == 0 && w.kind != kindUpdate {
			return nil // a missing item was allowed: the caller's condition failed
		}
		ce.Missing = true
		return ce
	}
	ce.Current, ce.CurrentKnown = storedVersion(cur, vp.v.f.Name)
	if ce.CurrentKnown && ce.Current == vp.expected && w.kind != kindCreate {
		if p := w.pin; p == nil || p.same(t, cur, w.newInc) {
			return nil
		}
	}
	return ce
}

// settle sets the version stored in the value written: the next one, or for a
// clobbering write the one the answer holds (with [ReturnOld], the one replaced,
// plus one).
func (vp *versionPart) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	if !w.whole.IsValid() {
		return attrs, nil
	}
	n := vp.next
	if vp.clobber {
		n, _ = storedVersion(attrs, vp.v.f.Name)
		if w.ret == types.ReturnValueAllOld {
			n++
		}
	}
	w.info.setVersion(w.whole, n)
	return attrs, nil
}

func numberAV(n uint64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatUint(n, 10)}
}

// storedVersion reads the version attribute of a raw item: 0 when it is missing,
// NULL or 0; known=false when it is not a number that fits.
func storedVersion(item map[string]types.AttributeValue, attr string) (v uint64, known bool) {
	switch av := item[attr].(type) {
	case nil, *types.AttributeValueMemberNULL:
		return 0, true
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseUint(av.Value, 10, 64)
		return n, err == nil
	}
	return 0, false
}
