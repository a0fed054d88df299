package singletable

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// UpdateOption is a change or an option for [Entity.Update]: [Set], [Remove], [Add],
// [Upsert], or any [WriteOption] such as [If].
type UpdateOption interface {
	applyUpdate(*updateOptions) error
}

type changeOp uint8

const (
	opSet changeOp = iota
	opRemove
	opAdd
)

type change struct {
	op    changeOp
	attr  string
	value any
}

type updateOptions struct {
	changes []change
	cond    expression.ConditionBuilder
	upsert  bool
	clobber bool
}

type changeOption change

func (c changeOption) applyUpdate(o *updateOptions) error {
	o.changes = append(o.changes, change(c))
	return nil
}

// Set sets a field, named by its stored attribute name, to value. The value must be
// of the field's type or convert to it without loss (5 for an int64 field, "x" for
// a named string type). Setting an omitempty field to its zero value removes it.
func Set(attr string, value any) UpdateOption {
	return changeOption{op: opSet, attr: attr, value: value}
}

// Remove removes fields, named by their stored attribute names.
func Remove(attrs ...string) UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		for _, a := range attrs {
			o.changes = append(o.changes, change{op: opRemove, attr: a})
		}
		return nil
	})
}

// Add adds value to a number field, or its elements to a set field (DynamoDB's ADD).
// ADD is not idempotent: an Update that is retried after its response was lost may
// add twice. Guard it with a condition when that matters.
func Add(attr string, value any) UpdateOption {
	return changeOption{op: opAdd, attr: attr, value: value}
}

type updateFunc func(*updateOptions) error

func (f updateFunc) applyUpdate(o *updateOptions) error { return f(o) }

// Upsert lets [Entity.Update] create the item when it does not exist; the created
// item holds the key's inputs, the changes and the type attribute. Without it,
// updating a missing item fails with [ErrNotFound].
func Upsert() UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		o.upsert = true
		return nil
	})
}

// Update changes some attributes of the item at key's primary key (UpdateItem) and
// returns the whole item as stored afterwards (ReturnValues ALL_NEW). Cost: 1 WCU
// per 1 KB of the item.
//
// Index keys whose inputs a change touches are recomputed in the same request; their
// other inputs are taken from key, so set them there (the error says which are
// missing). When a change empties an input of an index key (Remove, or Set to ""),
// the index key attributes are removed and the item leaves that sparse index.
// Inputs of the primary key cannot change: delete and put instead.
//
// For an entity with [Migrations], an item older than the schema is updated as
// stored and returned migrated in memory; it is written back on a later read.
//
// The item must exist and be of this type, or the error matches [ErrNotFound]
// (see [Upsert]). A failed [If] condition matches [ErrCondition]. key is not modified.
func (e *Entity[T]) Update(ctx context.Context, key T, opts ...UpdateOption) (T, error) {
	ctx = e.observe(ctx)
	var zero T
	sv := reflect.ValueOf(&key).Elem()
	if err := e.resolveShard(ctx, sv, true); err != nil {
		return zero, e.itemErr("Update", nil, err)
	}
	w, err := e.info.planUpdate(sv, opts)
	if err != nil {
		return zero, e.itemErr("Update", nil, err)
	}
	attrs, err := e.send(ctx, w)
	if err != nil {
		return zero, err
	}
	v, err := e.decodeWith(ctx, attrs, false) // the item just written is migrated on its next read
	if err != nil {
		return zero, e.itemErr("Update", w.keyStr, err)
	}
	return v, nil
}

// planUpdate validates the changes and builds the update and condition expressions.
func (info *entityInfo) planUpdate(sv reflect.Value, opts []UpdateOption) (*writeRequest, error) {
	var o updateOptions
	for _, opt := range opts {
		if err := opt.applyUpdate(&o); err != nil {
			return nil, err
		}
	}
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	w := &writeRequest{op: "Update", key: k, keyStr: ks, returnNew: true}
	if len(o.changes) == 0 && !o.upsert {
		return nil, fmt.Errorf("singletable: Update %s: no changes: %w", info.name, ErrInvalidInput)
	}
	tk := info.table.opts
	if info.version != nil {
		vp, err := info.planVersion(sv, o.clobber)
		if err != nil {
			return nil, err
		}
		if !vp.clobber && vp.expected == 0 {
			return nil, fmt.Errorf("singletable: Update %s: version 0: read the item first to learn its version, or pass Clobber(): %w", info.name, ErrInvalidInput)
		}
		w.version = vp
	}

	var sets, removes, adds []string
	// newValues holds the Go value each Set gives a field, for index key rendering;
	// a nil entry means the field was emptied or removed.
	newValues := map[string]*reflect.Value{}
	added := map[string]bool{}
	sent := 0 // bytes of the values set or added
	for _, c := range o.changes {
		f, ok := info.plan.Field(c.attr)
		if !ok {
			return nil, fmt.Errorf("singletable: Update %s: %q is not a stored attribute of %s: %w", info.name, c.attr, info.name, ErrInvalidInput)
		}
		if _, dup := newValues[c.attr]; dup || added[c.attr] {
			return nil, fmt.Errorf("singletable: Update %s.%s: changed twice in one update: %w", info.name, f.GoName, ErrInvalidInput)
		}
		if info.baseInputs[c.attr] {
			return nil, fmt.Errorf("singletable: Update %s.%s: feeds the primary key, which cannot change: %w", info.name, f.GoName, ErrInvalidInput)
		}
		if info.version == f {
			return nil, fmt.Errorf("singletable: Update %s.%s: the version changes by itself: %w", info.name, f.GoName, ErrInvalidInput)
		}
		name := w.b.Name(c.attr)
		switch c.op {
		case opRemove:
			removes = append(removes, name)
			newValues[c.attr] = nil
		case opSet, opAdd:
			fv, err := convertValue(c.value, f.Type)
			if err != nil {
				return nil, fmt.Errorf("singletable: Update %s.%s: %w: %w", info.name, f.GoName, ErrInvalidInput, err)
			}
			av, keep, err := f.Encode(fv)
			if err != nil {
				return nil, fmt.Errorf("singletable: Update %s.%s: %w: %w", info.name, f.GoName, ErrInvalidInput, err)
			}
			if keep {
				size, err := info.checkValue("Update", f, av)
				if err != nil {
					return nil, err
				}
				// What an update sends must fit in one item, whatever the item holds already.
				if sent += size; sent > MaxItemBytes {
					return nil, fmt.Errorf("singletable: Update %s.%s: the values set come to %d bytes, over DynamoDB's item limit of %d: %w", info.name, f.GoName, sent, MaxItemBytes, ErrInvalidInput)
				}
			}
			if c.op == opAdd {
				switch av.(type) {
				case *types.AttributeValueMemberN, *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
				default:
					return nil, fmt.Errorf("singletable: Update %s.%s: ADD needs a number or a set field: %w", info.name, f.GoName, ErrInvalidInput)
				}
				adds = append(adds, name+" "+w.b.Value(av))
				added[c.attr] = true
				continue
			}
			if !keep {
				removes = append(removes, name)
				newValues[c.attr] = nil
				continue
			}
			sets = append(sets, name+" = "+w.b.Value(av))
			if keyValueOfReflect(fv).kind == kvMissing {
				newValues[c.attr] = nil
			} else {
				newValues[c.attr] = &fv
			}
		}
	}

	// Recompute index keys whose inputs changed.
	for _, ix := range tk.Indexes {
		pair, ok := info.indexes[ix.Name]
		if !ok {
			continue
		}
		touched := false
		for _, kt := range pair {
			if kt == nil {
				continue
			}
			for _, f := range kt.fields {
				if added[f.Name] {
					return nil, fmt.Errorf("singletable: Update %s.%s: ADD to an input of %s cannot recompute it: %w", info.name, f.GoName, kt.attr, ErrInvalidInput)
				}
				if _, ok := newValues[f.Name]; ok {
					touched = true
				}
			}
		}
		if !touched {
			continue
		}
		emptied := false
		var needed []string
		vals, complete, err := info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) {
			return kt.renderWith(info, func(i int) keyValue {
				f := kt.fields[i]
				if nv, changed := newValues[f.Name]; changed {
					if nv == nil {
						emptied = true
						return keyValue{}
					}
					return keyValueOfReflect(*nv)
				}
				v := keyValueOfField(f, sv)
				if v.kind == kvMissing {
					needed = append(needed, f.GoName)
				}
				return v
			}, true)
		})
		if err != nil {
			return nil, err
		}
		if !complete && !emptied {
			return nil, fmt.Errorf("singletable: Update %s: recomputing %s's keys needs %s; set them in the key value: %w", info.name, ix.Name, strings.Join(needed, ", "), ErrInvalidKey)
		}
		for j, kt := range pair {
			if kt == nil {
				continue
			}
			if complete {
				sets = append(sets, w.b.Name(kt.attr)+" = "+w.b.S(vals[j]))
			} else {
				removes = append(removes, w.b.Name(kt.attr))
			}
		}
	}

	sets = append(sets, w.b.Name(tk.TypeAttribute)+" = "+w.b.S(info.discriminator))
	if w.version != nil {
		sets = append(sets, info.versionSets(&w.b, w.version)...)
	}
	if o.upsert {
		// A created item must hold the inputs of its own key.
		for _, kt := range []*keyTemplate{info.pk, info.sk} {
			for _, f := range kt.fields {
				fv, _ := f.ValueOf(sv)
				av, keep, err := f.Encode(fv)
				if err != nil {
					return nil, fmt.Errorf("singletable: Update %s.%s: %w: %w", info.name, f.GoName, ErrInvalidInput, err)
				}
				if keep {
					sets = append(sets, w.b.Name(f.Name)+" = "+w.b.Value(av))
				}
			}
		}
	}
	w.update = joinUpdate(sets, removes, adds)

	var guard string
	if o.upsert {
		guard = info.typeGuard(&w.b)
	} else {
		guard = "attribute_exists(" + w.b.Name(tk.PartitionKey) + ") AND " + w.b.Name(tk.TypeAttribute) + " = " + w.b.S(info.discriminator)
	}
	if vp := w.version; vp != nil && !vp.clobber {
		guard += " AND " + w.b.Name(vp.attr) + " = " + w.b.Value(numberAV(vp.expected))
	}
	if err := w.setCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}

// convertValue turns a value given to Set or Add into a reflect.Value of type t,
// refusing conversions that change its meaning (int to string) or lose information
// (300 into an int8).
func convertValue(v any, t reflect.Type) (reflect.Value, error) {
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return reflect.Zero(t), nil
		}
		return reflect.Value{}, fmt.Errorf("nil for a field of type %s", t)
	}
	rv := reflect.ValueOf(v)
	if rv.Type().AssignableTo(t) {
		out := reflect.New(t).Elem()
		out.Set(rv)
		return out, nil
	}
	if t.Kind() == reflect.Pointer {
		inner, err := convertValue(v, t.Elem())
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(inner)
		return p, nil
	}
	from, to := rv.Kind(), t.Kind()
	switch {
	case from == reflect.String && to == reflect.String,
		from == reflect.Bool && to == reflect.Bool:
		return rv.Convert(t), nil
	case rv.CanInt() || rv.CanUint() || rv.CanFloat():
		out := reflect.New(t).Elem()
		switch {
		case out.CanInt():
			var n int64
			switch {
			case rv.CanInt():
				n = rv.Int()
			case rv.CanUint() && rv.Uint() <= 1<<63-1:
				n = int64(rv.Uint())
			case rv.CanFloat() && rv.Float() == float64(int64(rv.Float())):
				n = int64(rv.Float())
			default:
				return reflect.Value{}, fmt.Errorf("%v does not fit %s", v, t)
			}
			if out.OverflowInt(n) {
				return reflect.Value{}, fmt.Errorf("%d overflows %s", n, t)
			}
			out.SetInt(n)
			return out, nil
		case out.CanUint():
			var n uint64
			switch {
			case rv.CanUint():
				n = rv.Uint()
			case rv.CanInt() && rv.Int() >= 0:
				n = uint64(rv.Int())
			default:
				return reflect.Value{}, fmt.Errorf("%v does not fit %s", v, t)
			}
			if out.OverflowUint(n) {
				return reflect.Value{}, fmt.Errorf("%d overflows %s", n, t)
			}
			out.SetUint(n)
			return out, nil
		case out.CanFloat():
			switch {
			case rv.CanFloat():
				out.SetFloat(rv.Float())
			case rv.CanInt():
				out.SetFloat(float64(rv.Int()))
			default:
				out.SetFloat(float64(rv.Uint()))
			}
			return out, nil
		}
	case from == reflect.Slice && to == reflect.Slice && rv.Type().ConvertibleTo(t):
		return rv.Convert(t), nil
	}
	return reflect.Value{}, fmt.Errorf("a %s cannot be stored in a field of type %s", rv.Type(), t)
}
