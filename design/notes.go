package design

import (
	"strconv"

	"github.com/singletable/singletable/internal/keyshape"
)

// designNotes finds what a reviewer should look at twice in the key templates.
func (d *Design) designNotes(ms []*model) []string {
	var notes []string
	// A query's default sort key condition that also matches items of other types.
	for _, g := range d.groups(ms) {
		if len(g.models) < 2 || g.views[0].sk == nil {
			continue
		}
		for i, v := range g.views {
			if v.sk == nil || !hasQuery(v) {
				continue
			}
			prefix := v.sk.StaticPrefix()
			var sure, maybe []string
			for j, other := range g.views {
				if i == j || other.sk == nil {
					continue
				}
				switch other.sk.MayBeginWith(prefix, d.Delimiter) {
				case keyshape.Sure:
					sure = append(sure, g.models[j].e.Name)
				case keyshape.Maybe:
					maybe = append(maybe, g.models[j].e.Name)
				}
			}
			what := "A query of " + g.models[i].e.Name + " items in " + where(g.index) + " `" + v.pk.Text + "`"
			if prefix != "" {
				what += " (begins_with " + v.skAttr + " " + strconv.Quote(prefix) + ")"
			}
			if len(sure) > 0 {
				notes = append(notes, what+" also reads the "+andList(sure)+" items there: they are skipped, but cost read capacity and count towards Limit.")
			}
			if len(maybe) > 0 {
				notes = append(notes, what+" may also read "+andList(maybe)+" items there, depending on their values: they are skipped, but cost read capacity and count towards Limit.")
			}
		}
	}
	for _, m := range ms {
		for _, v := range m.views {
			// A partition every item of the entity shares.
			if len(v.pk.Names()) == 0 {
				notes = append(notes, "Every "+m.e.Name+" item is in the one "+where(v.index)+" `"+v.pk.Text+"`: a hot partition as it grows; consider write sharding or an input in the partition key.")
			}
			// Integers in a sort key that sort as text.
			if v.sk == nil || d.nonStringKey(v.skAttr) { // a number key sorts as numbers
				continue
			}
			for _, p := range v.sk.Parts {
				if p.Placeholder && p.Format == "" && (p.Kind == keyshape.Int || p.Kind == keyshape.Uint) {
					notes = append(notes, m.e.Name+"'s "+v.skAttr+" `"+v.sk.Text+"`: "+p.Text+" is an integer without zero padding, so keys sort as text (10 before 9); {"+p.Name+":08} sorts as numbers.")
				}
			}
		}
	}
	return notes
}

// hasQuery reports whether a view serves a query of the entity alone: an index
// always does; the base table only when the sort key has inputs the partition key
// does not fix (otherwise the partition holds one item of the entity).
func hasQuery(v *view) bool {
	if v.index != "" || v.sk == nil {
		return v.index != ""
	}
	fixed := v.pk.Names()
	for name := range v.sk.Names() {
		if !fixed[name] {
			return true
		}
	}
	return false
}

// projectionNotes point out indexes whose reads are partial, and what local
// indexes limit.
func (d *Design) projectionNotes(ms []*model) []string {
	var notes []string
	for _, ix := range d.Indexes {
		if ix.Local {
			notes = append(notes, "Index "+ix.Name+" is local: it shares the table's partitions, can be read consistently, and limits each partition key value to 10 GB of items.")
		}
		if ix.projectsAll() {
			continue
		}
		for _, m := range ms {
			if m.view(ix.Name) == nil || d.covers(ix, m.e) {
				continue
			}
			var missing []string
			for _, f := range m.e.Fields {
				if !d.indexHolds(ix, f.Name) {
					missing = append(missing, "`"+f.Name+"`")
				}
			}
			notes = append(notes, "Reads of "+m.e.Name+" through "+ix.Name+" ("+projectionText(ix)+") are partial: without "+andList(missing)+
				"; Page.Partial says so, iterators refuse them (use Project), and nothing read through it is written back.")
		}
	}
	return notes
}

// indexHolds reports whether items read through index ix (the base table: the
// zero Index) carry attribute attr.
func (d *Design) indexHolds(ix Index, attr string) bool {
	if ix.Name == "" || ix.projectsAll() {
		return true
	}
	if attr == d.PartitionKey || attr == d.SortKey || attr == ix.PartitionKey || attr == ix.SortKey {
		return true
	}
	for _, a := range ix.NonKeyAttributes {
		if a == attr {
			return true
		}
	}
	return false
}

// covers reports whether items of e read through index ix carry every field of
// the entity and its type: only then is a read through it whole.
func (d *Design) covers(ix Index, e *Entity) bool {
	for _, f := range e.Fields {
		if !d.indexHolds(ix, f.Name) {
			return false
		}
	}
	return d.indexHolds(ix, d.TypeAttribute)
}
