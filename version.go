package singletable

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// Versions: the version part of a write of a versioned entity, as a plan the write
// pipeline applies unconditionally (a nil *versionPlan adds nothing).
//
// One rule for version 0, applied by every write kind: a value at version 0 holds
// no version yet, and matches a stored item whose version is missing, NULL or 0 (an
// item written before versioning was adopted, or by other code); Put and Update
// (with [Upsert]) at version 0 also create the item when there is none. Every write
// that stores a whole item of a new version stores the next one: 1 for a new item,
// also from [Entity.BatchPut].

// versionPlan is the version part of one write.
type versionPlan struct {
	attr     string // version attribute
	expected uint64 // the version the write holds
	next     uint64 // the version it stores (clobber: incremented on the server)
	max      uint64 // the largest version the field can hold
	clobber  bool
}

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
			return 0, fmt.Errorf("singletable: %s.%s: negative version %d: %w", info.name, info.version.GoName, n, ErrInvalidInput)
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

// planVersion works out the version part of a write of sv; nil for an entity
// without a version.
func (info *entityInfo) planVersion(sv reflect.Value, clobber bool) (*versionPlan, error) {
	if info.version == nil {
		return nil, nil
	}
	exp, err := info.versionOf(sv)
	if err != nil {
		return nil, err
	}
	vp := &versionPlan{attr: info.version.Name, expected: exp, clobber: clobber, max: info.maxVersion()}
	if clobber {
		return vp, nil
	}
	if exp >= vp.max {
		return nil, fmt.Errorf("singletable: %s.%s: version %d is the largest the field holds; the next write would overflow: %w", info.name, info.version.GoName, exp, ErrInvalidInput)
	}
	vp.next = exp + 1
	return vp, nil
}

// newVersionPlan is the version part of a write that creates an item: it stores 1.
func (info *entityInfo) newVersionPlan() *versionPlan {
	if info.version == nil {
		return nil
	}
	return &versionPlan{attr: info.version.Name, expected: 0, next: 1, max: info.maxVersion()}
}

// guard is the version condition: the stored version is the one held (0: none
// yet), or, for a clobbering write, below the field's largest. Join it with
// expr.And, which puts it in parentheses.
func (vp *versionPlan) guard(b *expr.Builder) string {
	if vp == nil {
		return ""
	}
	ver := b.Name(vp.attr)
	switch {
	case vp.clobber:
		return "attribute_not_exists(" + ver + ") OR " + ver + " < " + b.Value(numberAV(vp.max))
	case vp.expected == 0:
		return "attribute_not_exists(" + ver + ") OR attribute_type(" + ver + ", " + b.S("NULL") + ") OR " + ver + " = " + b.Value(numberAV(0))
	default:
		return ver + " = " + b.Value(numberAV(vp.expected))
	}
}

// sets returns the SET clause that stores the next version: for a clobbering
// write, an increment on the server.
func (vp *versionPlan) sets(b *expr.Builder) []string {
	if vp == nil {
		return nil
	}
	ver := b.Name(vp.attr)
	if vp.clobber {
		return []string{ver + " = if_not_exists(" + ver + ", " + b.Value(numberAV(0)) + ") + " + b.Value(numberAV(1))}
	}
	return []string{ver + " = " + b.Value(numberAV(vp.next))}
}

// receiptSlot is where the write's receipt goes: the slot of its next version, or
// the write slot for a clobbering write.
func (vp *versionPlan) receiptSlot(t *Table) string {
	if vp.clobber {
		return t.writeReceiptAttr()
	}
	return t.receiptAttr(vp.next)
}

// stored returns the version the write stored, given what DynamoDB returned
// (ALL_NEW attributes, or the item read back) for a clobbering write.
func (vp *versionPlan) stored(attrs map[string]types.AttributeValue) uint64 {
	if !vp.clobber {
		return vp.next
	}
	n, _ := storedVersion(attrs, vp.attr)
	return n
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
