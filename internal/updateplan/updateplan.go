// Package updateplan plans the changes of an Update: Set, Remove and Add of whole
// stored attributes, and the list, set and nested operations at document paths
// (Append, Prepend, DeleteFromSet, SetIfNotExists, Set and Remove at a path). Each
// change is checked against the entity's Go types and the rules of Set (inputs of
// the primary key and the fields the library owns do not change; no two changes
// overlap; what is sent fits in one item), encoded as the field's own tag encodes
// it, and turned into update expression clauses with placeholders for every name
// and value. It also recomputes the index keys the changes touch (indexkeys.go).
//
// The root package gives it what it knows of the entity ([Entity]) and merges the
// clauses with its feature plans' into the writeRequest it sends.
package updateplan

import (
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Op is a change's operation.
type Op uint8

// The operations; their values are kept as the root package numbered them.
const (
	Set Op = iota
	Remove
	Add
	Append
	Prepend
	DeleteElems
	SetIfNotExists
)

// Names name the operations after the options that give them, for messages.
var Names = map[Op]string{Set: "Set", Remove: "Remove", Add: "Add", Append: "Append", Prepend: "Prepend", DeleteElems: "DeleteFromSet", SetIfNotExists: "SetIfNotExists"}

// Change is one change an Update's options give: an operation on a stored
// attribute or a document path (Attr), with a value (Set, Add, SetIfNotExists)
// or elements (Append, Prepend, DeleteElems).
type Change struct {
	Op     Op
	Attr   string
	Value  any
	Values []any
}

// Entity is what the planner knows of the entity updated.
type Entity interface {
	// Field returns the top-level field stored as attr.
	Field(attr string) (*codec.Field, bool)
	// Label names a field in messages.
	Label(f *codec.Field) string
	// Owned returns the role of a field the library writes itself ("version",
	// "createdAt", ...), "" for any other.
	Owned(f *codec.Field) string
	// BaseInput reports whether the attribute feeds the primary key.
	BaseInput(attr string) bool
	// CheckValue checks one encoded value of f as a whole item's values are
	// checked and returns its size.
	CheckValue(f *codec.Field, av types.AttributeValue) (int, error)
	// Resolve checks a document path against the entity's types.
	Resolve(p docpath.Path) (*docpath.Resolved, error)
	// KeyInputs returns the key attributes f feeds, the base table's first.
	KeyInputs(f *codec.Field) []string
}

// Check is a value an Update gives a whole field, for the field's checks.
type Check struct {
	F       *codec.Field
	FV      reflect.Value
	Removed bool // Remove: FV is the zero value the field reads as
}

// Plan is an Update's changes being planned: the clauses of its update
// expression, the guards they need, and what the rest of the write needs to know
// of them.
type Plan struct {
	E       Entity
	B       *expr.Builder
	Invalid error // every refusal wraps it (the root package's ErrInvalidInput)
	Limit   int   // DynamoDB's item limit, in bytes

	Sets, Removes, Adds []string
	Deletes             []string // DELETE clauses
	// NewValues holds the Go value each Set gives a field, for index key
	// rendering; a nil entry means the field was emptied or removed.
	NewValues map[string]*reflect.Value
	Added     map[string]bool // the fields added to (ADD)
	Changed   []string        // the changes, named for messages
	Checks    []Check
	Guards    []string // conditions the changes need
	Repeats   bool     // sent twice, the update would apply twice
	Sent      int      // bytes of the values set or added
	Paths     []docpath.Path
	Lists     []*ListOp // the Appends and Prepends, planned both ways

	// For the index keys (indexkeys.go).
	K          Keys
	SV         reflect.Value // the key value, for the untouched inputs
	Upsert     bool
	InvalidKey error // the root package's ErrInvalidKey
	// Stored holds the attributes an upsert sets to the key value's inputs.
	Stored map[string]bool
	// Library holds the fields the library sets (updatedAt): an index key they
	// alone touch needs no other input (leaveIndex).
	Library map[string]bool
	Inputs  []Input
}

// Changes validates and encodes each change, in order.
func (p *Plan) Changes(changes []Change) error {
	for _, c := range changes {
		if err := p.change(c); err != nil {
			return err
		}
	}
	return nil
}

// change plans one change.
func (p *Plan) change(c Change) error {
	e := p.E
	f, ok := e.Field(c.Attr)
	if !ok || c.Op > Add {
		return p.pathChange(c)
	}
	if _, dup := p.NewValues[c.Attr]; dup || p.Added[c.Attr] || p.pathTouched(c.Attr) {
		return fmt.Errorf("%s: changed twice in one update: %w", e.Label(f), p.Invalid)
	}
	if err := p.RefuseOwned(f, ""); err != nil {
		return err
	}
	if e.BaseInput(c.Attr) {
		return fmt.Errorf("%s: feeds the primary key, which cannot change: %w", e.Label(f), p.Invalid)
	}
	p.Changed = append(p.Changed, Names[c.Op]+" "+e.Label(f))
	name := p.B.Name(c.Attr)
	if c.Op == Remove {
		p.Removes = append(p.Removes, name)
		p.NewValues[c.Attr] = nil
		// Checked as a Set of the field's zero value is.
		p.Checks = append(p.Checks, Check{F: f, FV: reflect.Zero(f.Type), Removed: true})
		return nil
	}
	fv, av, keep, err := p.encode(f, c.Value)
	if err != nil {
		return err
	}
	if c.Op == Set {
		p.Checks = append(p.Checks, Check{F: f, FV: fv})
	}
	switch {
	case c.Op == Add:
		switch av.(type) {
		case *types.AttributeValueMemberN, *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		default:
			return fmt.Errorf("%s: ADD needs a number or a set field: %w", e.Label(f), p.Invalid)
		}
		p.Adds = append(p.Adds, name+" "+p.B.Value(av))
		p.Added[c.Attr] = true
		p.Repeats = true // a second attempt would add again
	case !keep:
		p.Removes = append(p.Removes, name)
		p.NewValues[c.Attr] = nil
	default:
		p.Sets = append(p.Sets, name+" = "+p.B.Value(av))
		if keytmpl.ValueOfReflect(fv).Kind == keytmpl.KindMissing {
			p.NewValues[c.Attr] = nil
		} else {
			p.NewValues[c.Attr] = &fv
		}
	}
	return nil
}

// RefuseOwned refuses a change to a field a feature owns (the version, createdAt,
// updatedAt, the counter); label names the change ("" for the field alone).
func (p *Plan) RefuseOwned(f *codec.Field, label string) error {
	role := p.E.Owned(f)
	if role == "" {
		return nil
	}
	if label == "" {
		label = p.E.Label(f)
	}
	if role == "version" {
		return fmt.Errorf("%s: the version changes by itself: %w", label, p.Invalid)
	}
	return fmt.Errorf("%s: the %s field is set by the library on every write: %w", label, role, p.Invalid)
}

// encode converts and encodes a value given to Set or Add, checking it as a whole
// item's values are checked; keep is false for a value omitempty leaves out.
func (p *Plan) encode(f *codec.Field, value any) (reflect.Value, types.AttributeValue, bool, error) {
	e := p.E
	fv, err := codec.Convert(value, f.Type)
	if err != nil {
		return fv, nil, false, fmt.Errorf("%s: %w: %w", e.Label(f), p.Invalid, err)
	}
	av, keep, err := f.Encode(fv)
	if err != nil {
		return fv, nil, false, fmt.Errorf("%s: %w: %w", e.Label(f), p.Invalid, err)
	}
	if keep {
		size, err := e.CheckValue(f, av)
		if err != nil {
			return fv, nil, false, err
		}
		// What an update sends must fit in one item, whatever the item holds already.
		if p.Sent += size; p.Sent > p.Limit {
			return fv, nil, false, fmt.Errorf("%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", e.Label(f), p.Sent, p.Limit, p.Invalid)
		}
	}
	return fv, av, keep, nil
}

// guard adds a condition the changes need.
func (p *Plan) guard(cond string) { p.Guards = append(p.Guards, cond) }
