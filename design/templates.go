package design

import "github.com/singletable/singletable/internal/keyshape"

// Key templates as the analysis reads them: split into literal text and
// placeholders (internal/keyshape), each placeholder with the kind of the field
// it names.

// model is an entity with its key templates split into parts.
type model struct {
	e     *Entity
	views []view
}

// view is an entity's key templates on the base table (index "") or on one index.
type view struct {
	index          string
	pkAttr, skAttr string
	pk, sk         *keyshape.Template // sk is nil on an index without a sort key
}

func newModel(e *Entity) *model {
	kinds := make(map[string]keyshape.Kind, len(e.Fields))
	for _, f := range e.Fields {
		kinds[f.Name] = keyshape.Kind(f.Kind)
	}
	m := &model{e: e}
	for _, k := range e.Keys {
		v := view{index: k.Index, pkAttr: k.PartitionKey, pk: keyshape.Parse(k.Partition, kinds)}
		if k.SortKey != "" {
			v.skAttr, v.sk = k.SortKey, keyshape.Parse(k.Sort, kinds)
		}
		m.views = append(m.views, v)
	}
	return m
}

// base returns the entity's view of the base table, or nil.
func (m *model) base() *view {
	if len(m.views) == 0 || m.views[0].index != "" {
		return nil
	}
	return &m.views[0]
}

// view returns the entity's view of an index ("" for the base table), or nil.
func (m *model) view(index string) *view {
	for i := range m.views {
		if m.views[i].index == index {
			return &m.views[i]
		}
	}
	return nil
}
