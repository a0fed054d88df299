package updateplan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Key is one key template of an index: its attribute and its inputs, in order.
type Key interface {
	Attr() string
	Inputs() []*codec.Field
}

// Keys is what the planner knows of the entity's index keys.
type Keys interface {
	// Indexes calls yield with each index the entity has keys in, in the
	// table's order, and its key pair (a nil Key: none), until yield returns
	// false.
	Indexes(yield func(index string, pair [2]Key) bool)
	// RenderKeys renders an index's key pair as stored, asking get for the i-th
	// input of each key; complete is false when an input is missing.
	RenderKeys(pair [2]Key, get func(k Key, i int) keytmpl.Value) (avs [2]types.AttributeValue, complete bool, err error)
	// Base returns the primary key's templates.
	Base() []Key
}

// Input is an input of a recomputed index key that the update did not change:
// the update is conditioned on the stored value being AV (or, with OrAbsent,
// missing beside the index keys Keys).
type Input struct {
	Field    *codec.Field
	Index    string
	AV       types.AttributeValue // nil: the input is not stored either (LeaveIndex)
	OrAbsent bool
	Keys     []string
}

// IndexKeys recomputes the keys of every index an input of which changed.
func (p *Plan) IndexKeys() error {
	var err error
	p.K.Indexes(func(index string, pair [2]Key) bool {
		err = p.indexKey(index, pair)
		return err == nil
	})
	return err
}

// indexKey recomputes one index's keys, if a change touched an input. An emptied
// input removes them; otherwise the untouched inputs come from the key value, on
// the condition that they are stored as given (and, for an upsert, are stored).
func (p *Plan) indexKey(index string, pair [2]Key) error {
	touched, emptied := false, false
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.Inputs() {
			if p.Added[f.Name] {
				return fmt.Errorf("ADD to %s, an input of %s, cannot recompute it: %w", p.E.Label(f), kt.Attr(), p.Invalid)
			}
			if nv, ok := p.NewValues[f.Name]; ok {
				touched = true
				emptied = emptied || nv == nil
			}
		}
	}
	switch {
	case !touched:
		return nil
	case emptied: // the item leaves the index; nothing needs rendering
		p.removeKeys(pair)
		return nil
	}
	var needed []string
	var missing []*codec.Field
	untouched := map[*codec.Field]bool{}
	avs, complete, err := p.K.RenderKeys(pair, func(kt Key, i int) keytmpl.Value {
		f := kt.Inputs()[i]
		if nv, changed := p.NewValues[f.Name]; changed {
			return keytmpl.ValueOfReflect(*nv)
		}
		v := keytmpl.ValueOfField(f, p.SV)
		if v.Kind == keytmpl.KindMissing {
			needed = append(needed, p.E.Label(f))
			missing = append(missing, f)
		} else {
			untouched[f] = true
		}
		return v
	})
	if err != nil {
		return err
	}
	if !complete {
		if p.onlyLibrary(pair) { // an updatedAt needs no other input of a sparse index
			return p.leaveIndex(index, pair, missing)
		}
		return fmt.Errorf("recomputing %s's keys needs %s; set them in the key value: %w", index, strings.Join(needed, ", "), p.InvalidKey)
	}
	for j, kt := range pair {
		if kt != nil {
			p.Sets = append(p.Sets, p.B.Name(kt.Attr())+" = "+p.B.Value(avs[j]))
		}
	}
	for _, f := range sortedFields(untouched) {
		fv, _ := f.ValueOf(p.SV)
		av, keep, err := f.Encode(fv)
		if err != nil || !keep {
			return fmt.Errorf("%s: cannot be stored as an input of %s: %w", p.E.Label(f), index, p.Invalid)
		}
		p.Inputs = append(p.Inputs, Input{Field: f, Index: index, AV: av})
		name, value := p.B.Name(f.Name), p.B.Value(av)
		p.guard(name + " = " + value)
		if p.Upsert && !p.Stored[f.Name] {
			p.Stored[f.Name] = true
			p.Sets = append(p.Sets, name+" = "+value) // every input of a key is stored
		}
	}
	return nil
}

// removeKeys removes an index's key attributes: the item leaves the index.
func (p *Plan) removeKeys(pair [2]Key) {
	for _, kt := range pair {
		if kt != nil {
			p.Removes = append(p.Removes, p.B.Name(kt.Attr()))
		}
	}
}

// sortedFields orders a set of fields by attribute name, for stable expressions.
func sortedFields(set map[*codec.Field]bool) []*codec.Field {
	out := make([]*codec.Field, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *codec.Field) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// UpsertInputs makes an item an upsert creates hold the inputs of its own key.
func (p *Plan) UpsertInputs() error {
	if !p.Upsert {
		return nil
	}
	for _, kt := range p.K.Base() {
		for _, f := range kt.Inputs() {
			fv, _ := f.ValueOf(p.SV)
			av, keep, err := f.Encode(fv)
			if err != nil {
				return fmt.Errorf("%s: %w: %w", p.E.Label(f), p.Invalid, err)
			}
			if keep && !p.Stored[f.Name] {
				p.Stored[f.Name] = true
				p.Sets = append(p.Sets, p.B.Name(f.Name)+" = "+p.B.Value(av))
			}
		}
	}
	return nil
}

// IfAbsent stores av as attribute name only where the item holds none, but
// where an upsert stores the field f as an input of a key, and, beside a field
// (f not nil) so stored, the keys of the indexes it feeds (AbsentKeys).
func (p *Plan) IfAbsent(name string, av types.AttributeValue, f *codec.Field, fv reflect.Value) error {
	if f != nil && p.Stored[name] {
		return nil
	}
	n := p.B.Name(name)
	p.Sets = append(p.Sets, n+" = if_not_exists("+n+", "+p.B.Value(av)+")")
	if f == nil {
		return nil
	}
	return p.AbsentKeys(name, av, f, fv)
}

// AbsentKeys writes, beside a field f the update stores with if_not_exists as
// the attribute name (a createdAt: an upsert creating the item, or an item
// written before the field existed), the keys of every index it feeds whose
// other inputs are the primary key's (stored by every write) and that no change
// of this update recomputes: each key with if_not_exists, rendered from fv, the
// value stored when there is none. Without them an upserted item would hold
// every input of those keys but not the keys: it would be missing from the index
// for good. The update is conditioned on the result agreeing with the stored
// field: neither the field nor the keys stored (both written), the field equal to
// av, or both stored already; an item whose keys are missing beside another value
// fails, and its Input says why.
func (p *Plan) AbsentKeys(name string, av types.AttributeValue, f *codec.Field, fv reflect.Value) error {
	var err error
	p.K.Indexes(func(index string, pair [2]Key) bool {
		err = p.absentKeys(index, pair, name, av, f, fv)
		return err == nil
	})
	return err
}

// absentKeys is AbsentKeys for one index.
func (p *Plan) absentKeys(index string, pair [2]Key, attr string, av types.AttributeValue, af *codec.Field, afv reflect.Value) error {
	feeds, eligible := false, true
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.Inputs() {
			if f == af {
				feeds = true
				continue
			}
			if _, touched := p.NewValues[f.Name]; touched || !p.E.BaseInput(f.Name) {
				eligible = false
			}
		}
	}
	if !feeds || !eligible {
		return nil
	}
	avs, complete, err := p.K.RenderKeys(pair, func(kt Key, i int) keytmpl.Value {
		if f := kt.Inputs()[i]; f != af {
			return keytmpl.ValueOfField(f, p.SV)
		}
		if af.OmitEmpty && af.IsZero(afv) {
			return keytmpl.Value{}
		}
		return keytmpl.ValueOfReflect(afv)
	})
	if err != nil || !complete {
		return err
	}
	var keys, exist, absent []string
	for j, kt := range pair {
		if kt == nil {
			continue
		}
		name := p.B.Name(kt.Attr())
		p.Sets = append(p.Sets, name+" = if_not_exists("+name+", "+p.B.Value(avs[j])+")")
		keys = append(keys, kt.Attr())
		exist = append(exist, "attribute_exists("+name+")")
		absent = append(absent, "attribute_not_exists("+name+")")
	}
	cn := p.B.Name(attr)
	p.guard("(" + expr.And(append([]string{"attribute_not_exists(" + cn + ")"}, absent...)...) + ") OR " +
		cn + " = " + p.B.Value(av) + " OR (" + expr.And(append([]string{"attribute_exists(" + cn + ")"}, exist...)...) + ")")
	p.Inputs = append(p.Inputs, Input{Field: af, Index: index, AV: av, OrAbsent: true, Keys: keys})
	return nil
}

// onlyLibrary reports whether the only inputs of an index's keys that an Update
// touched are fields the library sets (updatedAt, which every Update stamps).
func (p *Plan) onlyLibrary(pair [2]Key) bool {
	if len(p.Library) == 0 {
		return false
	}
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		for _, f := range kt.Inputs() {
			if _, touched := p.NewValues[f.Name]; touched && !p.Library[f.Name] {
				return false
			}
		}
	}
	return true
}

// leaveIndex handles an index that updatedAt feeds when the key value lacks
// another of its inputs (missing, in order): rather than ask for it, the update
// keeps the item out of the index on the condition that the first missing input
// is not stored either (so the item is in no index to move). When it is stored,
// the condition fails, and its Input asks for it.
func (p *Plan) leaveIndex(index string, pair [2]Key, missing []*codec.Field) error {
	f := missing[0]
	p.Inputs = append(p.Inputs, Input{Field: f, Index: index})
	p.guard("attribute_not_exists(" + p.B.Name(f.Name) + ")")
	p.removeKeys(pair)
	return nil
}
