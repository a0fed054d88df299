package singletable

import (
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The whole-item phases: what every write that sends a whole item (Put, Create,
// BatchPut, TxPut, TxCreate, Mutate's write) runs on its value before the item is
// encoded and its keys rendered, in order: defaults, timestamps, the counter of a
// new item, validation. They run on the library's own copy of the value, and the
// values returned to the caller show what they set. A nil *writeHooks (an entity
// without defaults, timestamps, counter or validation) adds nothing.

// prepareWhole runs the whole-item phases on sv, a value about to be written whole.
func (info *entityInfo) prepareWhole(sv reflect.Value, kind writeKind, env *planEnv) error {
	h := info.hooks
	if h == nil {
		return nil
	}
	if err := h.applyDefaults(sv); err != nil {
		return err
	}
	if h.createdAt != nil || h.updatedAt != nil {
		if err := h.stampWhole(info, sv, env.now(info.table)); err != nil {
			return err
		}
	}
	if kind == kindCreate {
		if err := h.setCounter(info, sv, 0); err != nil {
			return err
		}
	}
	return h.validateWhole(info, sv)
}

// keepsStored reports whether a Put must keep something of the stored item (a
// createdAt, a count), and so be an UpdateItem.
func (h *writeHooks) keepsStored() bool {
	return h != nil && (h.createdAt != nil || h.counter != nil)
}

// ownsStored reports whether attr is set by a clause of its own in a Put planned
// as an UpdateItem (createdAt, the counter).
func (h *writeHooks) ownsStored(attr string) bool {
	return h != nil && (h.createdAt != nil && h.createdAt.f.Name == attr || h.counter != nil && h.counter.Name == attr)
}

// keepStored returns the SET clauses of a Put planned as an UpdateItem that keep
// the stored createdAt (if_not_exists, from the value's otherwise) and move the
// count. Where createdAt feeds an index key, that key was rendered from the
// value's createdAt, so the write is conditioned on the stored one being the same
// or missing (see createdGuard).
func (w *writeRequest) keepStored(sv reflect.Value, item map[string]types.AttributeValue) ([]string, error) {
	h := w.info.hooks
	if h == nil {
		return nil, nil
	}
	var sets []string
	if c := h.createdAt; c != nil {
		if av, ok := item[c.f.Name]; ok {
			name := w.b.Name(c.f.Name)
			sets = append(sets, name+" = if_not_exists("+name+", "+w.b.Value(av)+")")
			if len(c.indexed) > 0 {
				w.inputs = append(w.inputs, storedInput{field: c.f, index: c.indexed[0], av: av, orAbsent: true})
			}
		}
	}
	if h.counter != nil {
		sets = append(sets, counterIncrement(&w.b, h.counter))
	}
	return sets, nil
}

// createdGuard is the condition that a createdAt feeding an index key is stored as
// the value holds it, or not at all.
func (w *writeRequest) createdGuard() string {
	for _, in := range w.inputs {
		if in.orAbsent {
			name := w.b.Name(in.field.Name)
			return "attribute_not_exists(" + name + ") OR " + name + " = " + w.b.Value(in.av)
		}
	}
	return ""
}

// settle sets in sv, the value a Put wrote, what the write stored that sv could
// not know before it was sent: the version of a clobbering write, the createdAt
// kept, the count. attrs is what DynamoDB returned: the item as stored (ALL_NEW,
// or read back after a lost response), or with [ReturnOld] the item replaced.
func (info *entityInfo) settle(sv reflect.Value, w *writeRequest, attrs map[string]types.AttributeValue) error {
	old := w.ret == types.ReturnValueAllOld
	if vp := w.version; vp != nil {
		n := vp.stored(attrs)
		if old && vp.clobber {
			n, _ = storedVersion(attrs, vp.attr)
			n++
		}
		info.setVersion(sv, n)
	}
	h := info.hooks
	if h == nil || w.kind != kindPut || w.update == "" {
		return nil
	}
	if c := h.createdAt; c != nil {
		if av, ok := attrs[c.f.Name]; ok {
			fv, err := c.f.Settable(sv)
			if err != nil {
				return err
			}
			fv.Set(reflect.Zero(fv.Type()))
			if err := c.f.Decode(av, fv); err != nil {
				return err
			}
		}
	}
	if h.counter != nil {
		n, known := storedCount(attrs, h.counter.Name)
		switch {
		case old && attrs == nil:
			n = 0 // a new item
		case old:
			n++
		case !known:
			return nil
		}
		return h.setCounter(info, sv, n)
	}
	return nil
}

// storedCount reads a count from an item; known is false when it is not there
// (the count then reads -1: the write that stores one stores 0).
func storedCount(item map[string]types.AttributeValue, attr string) (int64, bool) {
	n, ok := item[attr].(*types.AttributeValueMemberN)
	if !ok {
		return -1, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return -1, false
	}
	return v, true
}
