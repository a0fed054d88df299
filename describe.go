package singletable

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Design is a table's design as its registered entities declare it: the key
// attributes, every entity's key templates and options, the reads those templates
// serve, and what a reviewer should look at twice. Make one with [Table.Describe];
// print it with [Design.Markdown] (tables and a key map, for a README or a design
// review) or [Design.Mermaid] (the key map alone).
//
// A Design is plain data, a snapshot: later registrations do not change it, and
// changing it changes nothing on the table. Templates appear as they are written in
// the struct tags. Everything is sorted, so the same entities always give the same
// text, which makes a Design good for golden files.
type Design struct {
	// Table is the table name.
	Table string
	// PartitionKey and SortKey name the base table's key attributes; SortKey is
	// "" for a table keyed by partition alone.
	PartitionKey, SortKey string
	// KeyTypes gives the type of key attributes that are not strings (see
	// [WithKeyType]).
	KeyTypes map[string]types.ScalarAttributeType
	// TypeAttribute holds each item's entity type.
	TypeAttribute string
	// Delimiter separates key parts.
	Delimiter byte
	// Indexes are the table's secondary indexes, global and local, in the
	// table's order, with their projections (an INCLUDE list with the type and
	// schema attributes CreateTable adds).
	Indexes []Index
	// TTLAttribute is the table's TTL attribute ([Table.TTLAttribute]); "" when it
	// has none. Describe sends nothing: whether TTL is on is DynamoDB's to say
	// (DescribeTimeToLive; [Table.EnableTTL] turns it on).
	TTLAttribute string
	// Entities are the registered entities, by Go type name, then discriminator.
	Entities []EntityDesign
	// Patterns are the reads the key templates serve: per entity (get by key, then
	// queries of the base table and of each index), then the item collections.
	// Each can be counted instead of read ([Entity.Count], [Table.Count]) at the
	// same cost.
	Patterns []AccessPattern
	// Scans are the reads of the whole table: each entity's scan, then the scan of
	// every item decoded by type. Each reads, and costs, every item of the table.
	Scans []AccessPattern
	// Notes point out what the templates make costly or surprising: queries that
	// also read items of other types, integers that sort as text, partitions
	// every item shares.
	Notes []string
}

// EntityDesign describes one registered entity.
type EntityDesign struct {
	// Name is the Go type name.
	Name string
	// Type is the discriminator, the value of the type attribute.
	Type string
	// Keys are the entity's key templates: the base table's first, then those of
	// each index the entity is in, in the table's order.
	Keys []KeyDesign
	// Version is the stored attribute of the `singletable:"version"` field; "" when
	// the entity is not versioned.
	Version string
	// Shards is the number of write shards; 0 when the entity is not sharded.
	Shards int
	// ShardAttribute is the stored attribute of the `singletable:"shard"` field.
	ShardAttribute string
	// ShardBy are the attributes whose hash picks the shard; empty when a write
	// picks a shard at random.
	ShardBy []string
	// Schema is the current schema version of an entity registered with
	// [Migrations], 0 for one without.
	Schema int
	// WriteBack is when migrated items are written back; meaningful when Schema > 0.
	WriteBack WriteBack
	// CreatedAt, UpdatedAt, Counter and TTL are the stored attributes of the fields
	// tagged `singletable:"createdAt"`, "updatedAt", "counter" and "ttl"; "" for
	// none. Defaults names the attributes that have a `default=`.
	CreatedAt, UpdatedAt, Counter, TTL string
	Defaults                           []string
}

// KeyDesign is an entity's key templates on the base table or on one index.
type KeyDesign struct {
	// Index is the index name, "" for the base table.
	Index string
	// PartitionKey and Partition are the partition key attribute and its template.
	PartitionKey, Partition string
	// SortKey and Sort are the sort key attribute and its template; both "" on an
	// index without a sort key.
	SortKey, Sort string
}

// AccessPattern is one read that the key templates serve.
type AccessPattern struct {
	// Entities are the Go type names of the entities read: one, or several for an
	// item collection.
	Entities []string
	// Index is the index read, "" for the base table.
	Index string
	// Description says what is read and in which order, in Markdown (templates in
	// backticks).
	Description string
	// KeyCondition is the key of a GetItem or the key condition of a Query, with
	// templates in place of values.
	KeyCondition string
	// Operation is the DynamoDB call, such as "GetItem" or "Query".
	Operation string
	// Call is the singletable call that makes it, where k is a value of the
	// entity holding the key's inputs; alternatives are separated by "; ".
	Call string
	// Cost says what the read costs in read capacity, and whether its items are
	// partial (an index that does not project them whole).
	Cost string
}

// Describe returns the table's design as its registered entities declare it: key
// templates, versioning, sharding, schema versions, the access patterns the
// templates serve and notes on what they make costly. It calls nothing and costs
// nothing but the work of building the text, and is safe for concurrent use.
//
//	fmt.Println(table.Describe().Markdown())
func (t *Table) Describe() Design {
	t.mu.RLock()
	infos := make([]*entityInfo, 0, len(t.entities))
	for _, info := range t.entities {
		infos = append(infos, info)
	}
	t.mu.RUnlock()
	slices.SortFunc(infos, func(a, b *entityInfo) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.discriminator, b.discriminator))
	})

	d := Design{
		Table:         t.name,
		PartitionKey:  t.opts.PartitionKey,
		SortKey:       t.opts.SortKey,
		TypeAttribute: t.opts.TypeAttribute,
		Delimiter:     t.opts.Delimiter,
		Indexes:       t.designIndexes(), // describe_reads.go
		KeyTypes:      maps.Clone(t.opts.KeyTypes),
		TTLAttribute:  t.ttlAttribute(),
	}
	for _, info := range infos {
		d.Entities = append(d.Entities, t.describeEntity(info))
	}
	for _, info := range infos {
		d.Patterns = append(d.Patterns, getPattern(info))
		for _, v := range t.views(info) {
			d.Patterns = append(d.Patterns, queryPatterns(info, v)...)
		}
		d.Scans = append(d.Scans, scanPattern(info)) // describe_reads.go
	}
	d.Patterns = append(d.Patterns, t.collectionPatterns(infos)...)
	if len(infos) > 0 {
		d.Scans = append(d.Scans, tableScanPattern(infos))
	}
	for _, ps := range [][]AccessPattern{d.Patterns, d.Scans} {
		for i := range ps {
			ps[i].Cost = t.patternCost(ps[i])
		}
	}
	d.Notes = append(t.designNotes(infos), t.projectionNotes(infos)...)
	return d
}

func (t *Table) describeEntity(info *entityInfo) EntityDesign {
	e := EntityDesign{Name: info.name, Type: info.discriminator}
	for _, v := range t.views(info) {
		k := KeyDesign{Index: v.index, PartitionKey: v.pk.attr, Partition: v.pk.tmpl.String()}
		if v.sk != nil {
			k.SortKey, k.Sort = v.sk.attr, v.sk.tmpl.String()
		}
		e.Keys = append(e.Keys, k)
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
		e.Schema, e.WriteBack = mp.current, mp.mode
	}
	info.hooks.describe(&e) // fieldtags.go
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

// keyPart is one segment of a key template, with the text it was declared with.
type keyPart struct {
	literal string // "" for a placeholder
	name    string // placeholder name
	text    string // the placeholder as written, e.g. "{createdAt:rev}"
	format  keyFormat
	width   int
	field   int // index into keyTemplate.fields
}

// parts splits a bound template into its segments.
func (kt *keyTemplate) parts() []keyPart {
	var texts []string
	for rest := kt.tmpl.text; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		texts = append(texts, rest[i:i+j+1])
		rest = rest[i+j+1:]
	}
	out := make([]keyPart, 0, len(kt.tmpl.segs))
	pi := 0
	for _, s := range kt.tmpl.segs {
		if s.name == "" {
			out = append(out, keyPart{literal: s.literal})
			continue
		}
		out = append(out, keyPart{name: s.name, text: texts[pi], format: s.format, width: s.width, field: pi})
		pi++
	}
	return out
}

// textOf joins the declared text of parts.
func textOf(parts []keyPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.name == "" {
			b.WriteString(p.literal)
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// shapeKey identifies a template's shape: literals and formats in place,
// placeholder names ignored. Entities whose partition key templates share a shape
// share partitions (an item collection).
func shapeKey(tm *Template) string {
	var b strings.Builder
	for _, s := range tm.segs {
		if s.name == "" {
			b.WriteString("L" + strconv.Quote(s.literal))
		} else {
			b.WriteString("P" + strconv.Itoa(int(s.format)) + "." + strconv.Itoa(s.width))
		}
	}
	return b.String()
}

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
func shardedBy(info *entityInfo, pk *keyTemplate) bool {
	if info.shard == nil {
		return false
	}
	return slices.Contains(pk.fields, info.shard.field)
}

// getPattern is the point read by primary key.
func getPattern(info *entityInfo) AccessPattern {
	cond := info.pk.attr + " = " + quoted(info.pk.tmpl.String())
	if info.sk != nil {
		cond += " AND " + info.sk.attr + " = " + quoted(info.sk.tmpl.String())
	}
	desc := "get one by its primary key"
	if sp := info.shard; sp != nil {
		if len(sp.by) > 0 {
			names := make([]string, len(sp.by))
			for i, f := range sp.by {
				names[i] = "`" + f.Name + "`"
			}
			desc += "; the shard is the hash of " + strings.Join(names, " and ")
		} else {
			desc += "; without its shard, one BatchGetItem over the " + strconv.Itoa(sp.count) + " shards finds it first"
		}
	}
	return AccessPattern{
		Entities:     []string{info.name},
		Description:  desc,
		KeyCondition: cond,
		Operation:    "GetItem",
		Call:         "Get(k); BatchGet(ks)",
	}
}

// queryPatterns lists the queries of one entity's partition on the base table or
// an index: one per level of the sort key, from the whole partition down through
// each categorical (plain string) placeholder.
func queryPatterns(info *entityInfo, v view) []AccessPattern {
	fixed := map[string]bool{}
	for _, f := range v.pk.fields {
		fixed[f.Name] = true
	}
	partition := v.pk.tmpl.String()
	base := AccessPattern{Entities: []string{info.name}, Index: v.index, Operation: "Query"}
	cond := v.pk.attr + " = " + quoted(partition)
	call := func(opts ...string) string { return callOf("Query", v.index, opts...) }
	var head string
	if shardedBy(info, v.pk) {
		base.Operation = "Query per shard (" + strconv.Itoa(info.shard.count) + "), merged"
		head = "query every shard of " + where(v.index) + " `" + partition + "` and merge them"
		var days []string // a partition per day: QueryShards reads a range of days
		for _, f := range v.pk.fields {
			if keyKindOf(derefType(f.Type)) == kvTime {
				days = []string{"Days(" + strconv.Quote(f.Name) + ", from, to)"}
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
	parts := v.sk.parts()
	var free []int // parts that the partition's inputs do not fix
	for i, part := range parts {
		if part.name != "" && !fixed[part.name] {
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
		if sp := v.sk.tmpl.StaticPrefix(); sp != "" {
			p.KeyCondition += " AND begins_with(" + v.sk.attr + ", " + quoted(sp) + ")"
		}
		return []AccessPattern{p}
	}

	var out []AccessPattern
	for level, fi := range free {
		p := base
		var order []string
		for _, i := range free[level:] {
			text := "`" + parts[i].text + "`"
			if parts[i].format == fmtRev {
				text += " (newest first)"
			}
			order = append(order, text)
		}
		sorted := ", sorted by " + strings.Join(order, ", then ")
		if level == 0 {
			p.Description, p.KeyCondition, p.Call = head, cond, call()
			if sp := v.sk.tmpl.StaticPrefix(); sp != "" {
				p.Description += " by prefix `" + sp + "`"
				p.KeyCondition += " AND begins_with(" + v.sk.attr + ", " + quoted(sp) + ")"
			}
		} else {
			prefix := textOf(parts[:fi])
			p.Description = head + " by prefix `" + prefix + "`"
			p.KeyCondition = cond + " AND begins_with(" + v.sk.attr + ", " + quoted(prefix) + ")"
			p.Call = call("SKBeginsWith(k)")
		}
		p.Description += sorted
		if parts[fi].width > 0 {
			p.Call += "; " + call("SKBetween(lo, hi)")
		}
		out = append(out, p)
		f := v.sk.fields[parts[fi].field]
		if parts[fi].format != fmtPlain || keyKindOf(derefType(f.Type)) != kvString {
			break // a time or number orders the keys; a range, not a prefix, narrows it
		}
	}
	return out
}

// group is the entities whose partition key templates on one index have one shape.
type group struct {
	index string
	infos []*entityInfo
	pks   []*keyTemplate
	sks   []*keyTemplate
}

// groups collects, per index (base table first), the partitions shared by entities.
func (t *Table) groups(infos []*entityInfo) []*group {
	var out []*group
	for _, index := range append([]string{""}, indexNames(t.opts.Indexes)...) {
		byShape := map[string]*group{}
		var order []string
		for _, info := range infos {
			var v *view
			for _, w := range t.views(info) {
				if w.index == index {
					v = &w
				}
			}
			if v == nil {
				continue
			}
			key := shapeKey(v.pk.tmpl)
			g, ok := byShape[key]
			if !ok {
				g = &group{index: index}
				byShape[key] = g
				order = append(order, key)
			}
			g.infos = append(g.infos, info)
			g.pks = append(g.pks, v.pk)
			g.sks = append(g.sks, v.sk)
		}
		for _, key := range order {
			out = append(out, byShape[key])
		}
	}
	return out
}

func indexNames(ixs []Index) []string {
	out := make([]string, len(ixs))
	for i, ix := range ixs {
		out[i] = ix.Name
	}
	return out
}

// partitionText names a group's partition: the first template, and the others
// where their placeholder names differ.
func (g *group) partitionText() string {
	text := "`" + g.pks[0].tmpl.String() + "`"
	for i := 1; i < len(g.pks); i++ {
		if s := g.pks[i].tmpl.String(); s != g.pks[0].tmpl.String() {
			text += " (" + g.infos[i].name + ": `" + s + "`)"
		}
	}
	return text
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
func (t *Table) collectionPatterns(infos []*entityInfo) []AccessPattern {
	var out []AccessPattern
	for _, g := range t.groups(infos) {
		if len(g.infos) < 2 {
			continue
		}
		names := make([]string, len(g.infos))
		for i, info := range g.infos {
			names[i] = info.name
		}
		in := ""
		if g.index != "" {
			in = " of " + g.index
		}
		out = append(out, AccessPattern{
			Entities:     names,
			Index:        g.index,
			Description:  "read the item collection" + in + " in partition " + g.partitionText() + ": " + andList(names) + " items, each decoded by its type",
			KeyCondition: g.pks[0].attr + " = " + quoted(g.pks[0].tmpl.String()),
			Operation:    "Query",
			Call:         tableQueryCall(g.index),
		})
		if g.sks[0] == nil {
			continue
		}
		for i, parent := range g.infos {
			var children []string
			for j, child := range g.infos {
				if i != j && continuesTree(g.sks[i].tmpl, g.sks[j].tmpl, t.opts.Delimiter) {
					children = append(children, child.name)
				}
			}
			if len(children) == 0 {
				continue
			}
			sk := g.sks[i].tmpl.String()
			out = append(out, AccessPattern{
				Entities:    append([]string{parent.name}, children...),
				Index:       g.index,
				Description: "read an aggregate in partition " + g.partitionText() + ": a " + parent.name + " and the " + andList(children) + " items under it (sort keys that continue `" + sk + "` after the delimiter)",
				KeyCondition: g.pks[i].attr + " = " + quoted(g.pks[i].tmpl.String()) + " AND " + g.sks[i].attr + " BETWEEN " +
					quoted(sk) + " AND " + quoted(sk+string(t.opts.Delimiter)+"U+10FFFF"),
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

// continuesTree reports whether every key of child's shape continues a key of
// parent's shape after the delimiter, as SKTree reads them.
func continuesTree(parent, child *Template, delim byte) bool {
	ps, cs := parent.segs, child.segs
	if len(ps) == 0 || len(cs) < len(ps) {
		return false
	}
	for i := range len(ps) - 1 {
		if !sameSegment(ps[i], cs[i]) {
			return false
		}
	}
	last, at := ps[len(ps)-1], cs[len(ps)-1]
	if last.name == "" {
		return at.name == "" && len(at.literal) > len(last.literal) &&
			strings.HasPrefix(at.literal, last.literal) && at.literal[len(last.literal)] == delim
	}
	if at.name == "" || at.format != last.format || at.width != last.width || len(cs) == len(ps) {
		return false
	}
	next := cs[len(ps)]
	return next.name == "" && next.literal[0] == delim
}

// sameSegment compares segments as shapeKey does: placeholder names aside.
func sameSegment(a, b segment) bool {
	return (a.name == "") == (b.name == "") && a.literal == b.literal && a.format == b.format && a.width == b.width
}

// hasQuery reports whether a view serves a query of the entity alone: an index
// always does; the base table only when the sort key has inputs the partition key
// does not fix (otherwise the partition holds one item of the entity).
func hasQuery(v view) bool {
	if v.index != "" || v.sk == nil {
		return v.index != ""
	}
	fixed := map[string]bool{}
	for _, f := range v.pk.fields {
		fixed[f.Name] = true
	}
	for _, f := range v.sk.fields {
		if !fixed[f.Name] {
			return true
		}
	}
	return false
}

// designNotes finds what a reviewer should look at twice.
func (t *Table) designNotes(infos []*entityInfo) []string {
	var notes []string
	// A query's default sort key condition that also matches items of other types.
	for _, g := range t.groups(infos) {
		if len(g.infos) < 2 || g.sks[0] == nil {
			continue
		}
		for i, info := range g.infos {
			if !hasQuery(view{index: g.index, pk: g.pks[i], sk: g.sks[i]}) {
				continue
			}
			prefix := g.sks[i].tmpl.StaticPrefix()
			var sure, maybe []string
			for j, other := range g.infos {
				if i == j {
					continue
				}
				switch mayBeginWith(g.sks[j], prefix, t.opts.Delimiter) {
				case overlapSure:
					sure = append(sure, other.name)
				case overlapMaybe:
					maybe = append(maybe, other.name)
				}
			}
			what := "A query of " + info.name + " items in " + where(g.index) + " `" + g.pks[i].tmpl.String() + "`"
			if prefix != "" {
				what += " (begins_with " + g.sks[i].attr + " " + strconv.Quote(prefix) + ")"
			}
			if len(sure) > 0 {
				notes = append(notes, what+" also reads the "+andList(sure)+" items there: they are skipped, but cost read capacity and count towards Limit.")
			}
			if len(maybe) > 0 {
				notes = append(notes, what+" may also read "+andList(maybe)+" items there, depending on their values: they are skipped, but cost read capacity and count towards Limit.")
			}
		}
	}
	for _, info := range infos {
		for _, v := range t.views(info) {
			// A partition every item of the entity shares.
			if len(v.pk.tmpl.names) == 0 {
				notes = append(notes, "Every "+info.name+" item is in the one "+where(v.index)+" `"+v.pk.tmpl.String()+"`: a hot partition as it grows; consider write sharding or an input in the partition key.")
			}
			// Integers in a sort key that sort as text.
			if v.sk == nil || v.sk.typ != "" { // a number key sorts as numbers
				continue
			}
			for _, part := range v.sk.parts() {
				if part.name == "" || part.format != fmtPlain {
					continue
				}
				if k := keyKindOf(derefType(v.sk.fields[part.field].Type)); k == kvInt || k == kvUint {
					notes = append(notes, info.name+"'s "+v.sk.attr+" `"+v.sk.tmpl.String()+"`: "+part.text+" is an integer without zero padding, so keys sort as text (10 before 9); {"+part.name+":08} sorts as numbers.")
				}
			}
		}
	}
	return notes
}

type overlap uint8

const (
	overlapNone overlap = iota
	overlapMaybe
	overlapSure
)

// mayBeginWith reports whether keys rendered from kt can begin with prefix.
func mayBeginWith(kt *keyTemplate, prefix string, delim byte) overlap {
	rest := prefix
	for _, part := range kt.parts() {
		if rest == "" {
			return overlapSure
		}
		if part.name == "" {
			switch {
			case strings.HasPrefix(rest, part.literal):
				rest = rest[len(part.literal):]
				continue
			case strings.HasPrefix(part.literal, rest):
				return overlapSure
			}
			return overlapNone
		}
		c := rest[0]
		digit := '0' <= c && c <= '9'
		switch kind := keyKindOf(derefType(kt.fields[part.field].Type)); {
		case part.format != fmtPlain || kind == kvTime || kind == kvUint:
			if !digit {
				return overlapNone
			}
		case kind == kvInt:
			if !digit && c != '-' {
				return overlapNone
			}
		case c == delim:
			return overlapNone
		}
		return overlapMaybe
	}
	if rest == "" {
		return overlapSure
	}
	return overlapNone
}
