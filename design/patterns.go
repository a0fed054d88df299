package design

import (
	"strconv"
	"strings"

	"github.com/singletable/singletable/internal/keyshape"
)

// The reads the key templates serve: gets, queries per entity and index, item
// collections and aggregates, scans; and what each costs.

func where(index string) string {
	if index == "" {
		return "the partition"
	}
	return index + " partition"
}

func quoted(s string) string { return `"` + s + `"` }

// callOf writes a call of fn on the key value k, on index (if any), with options.
func callOf(fn, index string, opts ...string) string {
	args := []string{"k"}
	if index != "" {
		args = append(args, "On("+strconv.Quote(index)+")")
	}
	return fn + "(" + strings.Join(append(args, opts...), ", ") + ")"
}

// shardedBy reports whether a partition key template holds the entity's shard.
func shardedBy(e *Entity, pk *keyshape.Template) bool {
	return e.Shards > 0 && pk.Names()[e.ShardAttribute]
}

// getPattern is the point read by primary key.
func getPattern(m *model) AccessPattern {
	b, e := m.base(), m.e
	cond := b.pkAttr + " = " + quoted(b.pk.Text)
	if b.sk != nil {
		cond += " AND " + b.skAttr + " = " + quoted(b.sk.Text)
	}
	desc := "get one by its primary key"
	if e.Shards > 0 {
		if len(e.ShardBy) > 0 {
			names := make([]string, len(e.ShardBy))
			for i, f := range e.ShardBy {
				names[i] = "`" + f + "`"
			}
			desc += "; the shard is the hash of " + strings.Join(names, " and ")
		} else {
			desc += "; without its shard, one BatchGetItem over the " + strconv.Itoa(e.Shards) + " shards finds it first"
		}
	}
	return AccessPattern{
		Entities:     []string{e.Name},
		Description:  desc,
		KeyCondition: cond,
		Operation:    "GetItem",
		Call:         "Get(k); BatchGet(ks)",
	}
}

// queryPatterns lists the queries of one entity's partition on the base table or
// an index: one per level of the sort key, from the whole partition down through
// each categorical (plain string) placeholder.
func queryPatterns(m *model, v view) []AccessPattern {
	e := m.e
	fixed := v.pk.Names()
	partition := v.pk.Text
	base := AccessPattern{Entities: []string{e.Name}, Index: v.index, Operation: "Query"}
	cond := v.pkAttr + " = " + quoted(partition)
	call := func(opts ...string) string { return callOf("Query", v.index, opts...) }
	var head string
	if shardedBy(e, v.pk) {
		base.Operation = "Query per shard (" + strconv.Itoa(e.Shards) + "), merged"
		head = "query every shard of " + where(v.index) + " `" + partition + "` and merge them"
		var days []string // a partition per day: QueryShards reads a range of days
		for _, p := range v.pk.Parts {
			if p.Placeholder && p.Kind == keyshape.Time {
				days = []string{"Days(" + strconv.Quote(p.Name) + ", from, to)"}
				break
			}
		}
		call = func(opts ...string) string { return callOf("QueryShards", v.index, append(days, opts...)...) }
	} else {
		head = "query " + where(v.index) + " `" + partition + "`"
	}

	if v.sk == nil {
		if v.index == "" {
			return nil // a table keyed by partition alone: one item per partition, the get covers it
		}
		p := base
		p.Description, p.KeyCondition, p.Call = head, cond, call()
		return []AccessPattern{p}
	}
	parts := v.sk.Parts
	var free []int // parts that the partition's inputs do not fix
	for i, part := range parts {
		if part.Placeholder && !fixed[part.Name] {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		if v.index == "" {
			return nil // one item per partition: the get by key covers it
		}
		p := base
		p.Description = head
		p.KeyCondition, p.Call = cond, call()
		if sp := v.sk.StaticPrefix(); sp != "" {
			p.KeyCondition += " AND begins_with(" + v.skAttr + ", " + quoted(sp) + ")"
		}
		return []AccessPattern{p}
	}

	var out []AccessPattern
	for level, fi := range free {
		p := base
		var order []string
		for _, i := range free[level:] {
			text := "`" + parts[i].Text + "`"
			if parts[i].Format == "rev" {
				text += " (newest first)"
			}
			order = append(order, text)
		}
		sorted := ", sorted by " + strings.Join(order, ", then ")
		if level == 0 {
			p.Description, p.KeyCondition, p.Call = head, cond, call()
			if sp := v.sk.StaticPrefix(); sp != "" {
				p.Description += " by prefix `" + sp + "`"
				p.KeyCondition += " AND begins_with(" + v.skAttr + ", " + quoted(sp) + ")"
			}
		} else {
			prefix := keyshape.TextOf(parts[:fi])
			p.Description = head + " by prefix `" + prefix + "`"
			p.KeyCondition = cond + " AND begins_with(" + v.skAttr + ", " + quoted(prefix) + ")"
			p.Call = call("SKBeginsWith(k)")
		}
		p.Description += sorted
		if parts[fi].FixedWidth() {
			p.Call += "; " + call("SKBetween(lo, hi)")
		}
		out = append(out, p)
		if parts[fi].Format != "" || parts[fi].Kind != keyshape.String {
			break // a time or number orders the keys; a range, not a prefix, narrows it
		}
	}
	return out
}

// nativePatterns lists the queries of a native index the entity is in: equality
// on every partition attribute, then on each sort attribute from the left, the
// next one sorting (and narrowed by a range, between or begins_with).
func nativePatterns(e *Entity, ix Index) []AccessPattern {
	var eq, given []string
	for _, a := range ix.PartitionAttrs {
		eq = append(eq, attrOf(a)+" = {"+attrOf(a)+"}")
		given = append(given, "`"+attrOf(a)+"`")
	}
	var out []AccessPattern
	for level := 0; level <= len(ix.SortAttrs); level++ {
		p := AccessPattern{Entities: []string{e.Name}, Index: ix.Name, Operation: "Query",
			Description:  "query " + ix.Name + " by " + andList(given),
			KeyCondition: strings.Join(eq, " AND "),
			Call:         callOf("Query", ix.Name),
		}
		if level < len(ix.SortAttrs) {
			var order []string
			for _, a := range ix.SortAttrs[level:] {
				order = append(order, "`"+attrOf(a)+"`")
			}
			p.Description += ", sorted by " + strings.Join(order, ", then ")
			p.Call += "; " + callOf("Query", ix.Name, "SK[T]().Between(lo, hi)")
			a := attrOf(ix.SortAttrs[level])
			eq = append(eq, a+" = {"+a+"}")
			given = append(given, "`"+a+"`")
		}
		out = append(out, p)
	}
	return out
}

// group is the entities whose partition key templates on one index have one shape.
type group struct {
	index  string
	models []*model
	views  []*view
}

// groups collects, per index (base table first), the partitions shared by entities.
func (d *Design) groups(ms []*model) []*group {
	indexes := []string{""}
	for _, ix := range d.Indexes {
		indexes = append(indexes, ix.Name)
	}
	var out []*group
	for _, index := range indexes {
		byShape := map[string]*group{}
		var order []string
		for _, m := range ms {
			v := m.view(index)
			if v == nil {
				continue
			}
			key := v.pk.Shape()
			g, ok := byShape[key]
			if !ok {
				g = &group{index: index}
				byShape[key] = g
				order = append(order, key)
			}
			g.models = append(g.models, m)
			g.views = append(g.views, v)
		}
		for _, key := range order {
			out = append(out, byShape[key])
		}
	}
	return out
}

// partitionText names a group's partition: the first template, and the others
// where their placeholder names differ.
func (g *group) partitionText() string {
	first := g.views[0].pk.Text
	text := "`" + first + "`"
	for i := 1; i < len(g.views); i++ {
		if s := g.views[i].pk.Text; s != first {
			text += " (" + g.models[i].e.Name + ": `" + s + "`)"
		}
	}
	return text
}

func (g *group) names() []string {
	names := make([]string, len(g.models))
	for i, m := range g.models {
		names[i] = m.e.Name
	}
	return names
}

func andList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// collectionPatterns lists the item collections: partitions that several entity
// types share, read whole and decoded by type, and the aggregates that SKTree reads
// (an item and the items whose sort keys continue its own).
func (d *Design) collectionPatterns(ms []*model) []AccessPattern {
	var out []AccessPattern
	for _, g := range d.groups(ms) {
		if len(g.models) < 2 {
			continue
		}
		names := g.names()
		in := ""
		if g.index != "" {
			in = " of " + g.index
		}
		first := g.views[0]
		out = append(out, AccessPattern{
			Entities:     names,
			Index:        g.index,
			Description:  "read the item collection" + in + " in partition " + g.partitionText() + ": " + andList(names) + " items, each decoded by its type",
			KeyCondition: first.pkAttr + " = " + quoted(first.pk.Text),
			Operation:    "Query",
			Call:         tableQueryCall(g.index),
		})
		if first.sk == nil {
			continue
		}
		for i, parent := range g.views {
			if parent.sk == nil {
				continue
			}
			var children []string
			for j, child := range g.views {
				if i != j && child.sk != nil && keyshape.ContinuesTree(parent.sk, child.sk, d.Delimiter) {
					children = append(children, g.models[j].e.Name)
				}
			}
			if len(children) == 0 {
				continue
			}
			sk := parent.sk.Text
			name := g.models[i].e.Name
			out = append(out, AccessPattern{
				Entities:    append([]string{name}, children...),
				Index:       g.index,
				Description: "read an aggregate in partition " + g.partitionText() + ": a " + name + " and the " + andList(children) + " items under it (sort keys that continue `" + sk + "` after the delimiter)",
				KeyCondition: parent.pkAttr + " = " + quoted(parent.pk.Text) + " AND " + parent.skAttr + " BETWEEN " +
					quoted(sk) + " AND " + quoted(sk+string(d.Delimiter)+"U+10FFFF"),
				Operation: "Query",
				Call:      tableQueryCall(g.index, "SKTree(k)"),
			})
		}
	}
	return out
}

func tableQueryCall(index string, opts ...string) string {
	return callOf("Table.Query", index, opts...) + "; " + callOf("Collection[C].Load", index, opts...)
}

// scanPattern is the scan of one entity's items: every item of the table read.
func scanPattern(m *model) AccessPattern {
	return AccessPattern{
		Entities:    []string{m.e.Name},
		Description: "scan the whole table for " + m.e.Name + " items (a filter on the type attribute); in parallel with `Segments(n), Segment(i)`",
		Operation:   "Scan",
		Call:        "Scan(); ScanAll(); ScanCount()",
	}
}

// tableScanPattern is the scan of every item, decoded by type.
func tableScanPattern(ms []*model) AccessPattern {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.e.Name
	}
	return AccessPattern{
		Entities:    names,
		Description: "scan every item of the table, each decoded by its type; in parallel with `Segments(n), Segment(i)`",
		Operation:   "Scan",
		Call:        "Table.Scan(); Table.ScanAll(); Table.ScanCount()",
	}
}

// countCall is the Count call of a query pattern: its first call with Count for
// Query ("Count(k, On(...))", "Table.Count(k)").
func countCall(call string) string {
	first, _, _ := strings.Cut(call, "; ")
	name, args, ok := strings.Cut(first, "(")
	if !ok || !strings.HasSuffix(name, "Query") {
		return "Count"
	}
	return "`" + strings.TrimSuffix(name, "Query") + "Count(" + args + "`"
}

// patternCost says what a pattern's read costs.
func (d *Design) patternCost(p AccessPattern) string {
	ix, _ := d.index(p.Index)
	var cost string
	switch {
	case p.Operation == "GetItem":
		cost = "1 read: 0.5 RCU per 4 KB of the item, 1 consistent"
	case p.Operation == "Scan":
		return "every item of the table, of every type: 0.5 RCU per 4 KB of the whole table (1 consistent), whatever it returns; filters save none"
	case ix.Name == "" || ix.Local:
		cost = "0.5 RCU per 4 KB of the items read, 1 consistent; " + countCall(p.Call) + " counts them (Select COUNT) at the same cost"
	default:
		cost = "0.5 RCU per 4 KB of the items read, eventually consistent; " + countCall(p.Call) + " counts them (Select COUNT) at the same cost"
	}
	if strings.HasPrefix(p.Operation, "Query per shard") {
		cost = "one Query per shard; " + cost
	}
	if ix.Name != "" && !ix.projectsAll() {
		cost += "; partial: the index projects " + projectionText(ix)
	}
	return cost
}

// projectionText describes an index's projection: "ALL", "KEYS_ONLY",
// `INCLUDE "status", "total"`.
func projectionText(ix Index) string {
	p := string(ix.Projection)
	if p == "" {
		p = "ALL"
	}
	if len(ix.NonKeyAttributes) > 0 {
		p += " "
		for i, a := range ix.NonKeyAttributes {
			if i > 0 {
				p += ", "
			}
			p += strconv.Quote(a)
		}
	}
	return p
}
