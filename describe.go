package singletable

import (
	"maps"
	"strconv"

	"github.com/singletable/singletable/design"

	"github.com/singletable/singletable/internal/keyshape"
	"github.com/singletable/singletable/internal/keytmpl"
)

// The design of a table, built from its registered entities: what the package
// design derives its access patterns, notes and renderings from.

// Describe returns the table's design as its registered entities declare it: key
// templates, versioning, sharding, schema versions, the access patterns the
// templates serve and notes on what they make costly ([design.New]). It calls
// nothing and costs nothing but the work of building the text, and is safe for
// concurrent use. The design is a snapshot: later registrations do not change it.
//
//	fmt.Println(table.Describe().Markdown())
func (t *Table) Describe() *design.Design {
	if t == nil {
		t = &Table{}
	}
	t.mu.RLock()
	infos := make([]*entityInfo, 0, len(t.entities))
	for _, info := range t.entities {
		infos = append(infos, info)
	}
	t.mu.RUnlock()

	entities := make([]design.Entity, len(infos))
	for i, info := range infos {
		entities[i] = t.describeEntity(info)
	}
	return design.New(t.designTable(), entities)
}

// designTable is the table's keys and indexes as a design shows them: an
// INCLUDE list with the attributes CreateTable adds.
func (t *Table) designTable() design.Table {
	d := design.Table{
		Name:          t.name,
		PartitionKey:  t.opts.PartitionKey,
		SortKey:       t.opts.SortKey,
		KeyTypes:      maps.Clone(t.opts.KeyTypes),
		TypeAttribute: t.opts.TypeAttribute,
		Delimiter:     t.opts.Delimiter,
		TTLAttribute:  t.ttlAttribute(), // ttl.go
	}
	for _, ix := range t.opts.Indexes {
		d.Indexes = append(d.Indexes, design.Index{
			Name:             ix.Name,
			PartitionKey:     ix.PartitionKey,
			SortKey:          ix.SortKey,
			Local:            ix.Local,
			Projection:       ix.Projection,
			NonKeyAttributes: t.included(ix),                  // indexes.go
			PartitionAttrs:   keyAttrTexts(ix.PartitionAttrs), // multiattr.go
			SortAttrs:        keyAttrTexts(ix.SortAttrs),
		})
	}
	return d
}

// describeEntity is one entity as a design shows it.
func (t *Table) describeEntity(info *entityInfo) design.Entity {
	e := design.Entity{Name: info.name, Type: info.discriminator}
	for _, v := range t.views(info) {
		k := design.Key{Index: v.index, PartitionKey: v.pk.attr, Partition: v.pk.tmpl.String()}
		if v.sk != nil {
			k.SortKey, k.Sort = v.sk.attr, v.sk.tmpl.String()
		}
		e.Keys = append(e.Keys, k)
	}
	for _, f := range info.plan.Fields() {
		e.Fields = append(e.Fields, design.Field{Name: f.Name, Kind: design.Kind(keyshape.KindOf(keytmpl.KindOf(derefType(f.Type))))})
	}
	if info.version != nil {
		e.Version = info.version.Name
	}
	if sp := info.shard; sp != nil {
		e.Shards, e.ShardAttribute = sp.count, sp.field.Name
		for _, f := range sp.by {
			e.ShardBy = append(e.ShardBy, f.Name)
		}
	}
	if mp := info.migration; mp != nil {
		e.Schema, e.WriteBack = mp.current, writeBackName(mp.mode)
	}
	for _, ix := range t.opts.Indexes {
		if v := info.native[ix.Name]; v != nil && v.Member() {
			e.NativeIndexes = append(e.NativeIndexes, ix.Name) // multiattr.go
		}
	}
	info.hooks.describe(&e)  // fieldtags.go
	info.unique.describe(&e) // unique.go
	return e
}

// view is an entity's key templates on the base table (index "") or on one index.
type view struct {
	index  string
	pk, sk *keyTemplate // sk is nil on an index without a sort key
}

// views lists the base table's templates, then each index's in table order.
func (t *Table) views(info *entityInfo) []view {
	out := []view{{pk: info.pk, sk: info.sk}}
	for _, ix := range t.opts.Indexes {
		if pair, ok := info.indexPair(ix.Name); ok {
			out = append(out, view{index: ix.Name, pk: pair[0], sk: pair[1]})
		}
	}
	return out
}

// writeBackName names a write-back mode for a design.
func writeBackName(w WriteBack) string {
	switch w {
	case WriteBackSync:
		return "sync"
	case WriteBackAsync:
		return "async"
	case WriteBackOff:
		return "off"
	}
	return strconv.Itoa(int(w))
}
