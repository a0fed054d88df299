// Package design holds a single-table design as plain data, and its renderings:
// Markdown tables and a Mermaid key map for a README or a design review
// (markdown.go), and the table's definition as a CloudFormation or Terraform
// resource (definition.go, cloudformation.go, terraform.go).
//
// The package needs nothing but public data. The root package builds a [Design]
// from the entities registered on a table ([singletable.Table.Describe]) and a
// [Definition] from the CreateTable request it sends
// ([singletable.Table.Definition]); [New] derives a design's access patterns,
// scans and notes from any [Table] and [Entity] values, so tools and tests can
// build one by hand too.
//
// The files:
//
//	design.go          Design, Table, Index, Entity, Key, Field; New
//	templates.go       an entity's key templates split into parts (internal/keyshape)
//	patterns.go        the reads the key templates serve, and what each costs
//	notes.go           what a reviewer should look at twice
//	markdown.go        a Design as Markdown and as a Mermaid key map
//	definition.go      Definition: the CreateTable request and the TTL attribute; ErrUnsupported
//	cloudformation.go  an AWS::DynamoDB::Table resource, as JSON and YAML
//	terraform.go       an aws_dynamodb_table resource, as HCL
//	tree.go            a template as a tree of values, written as JSON or YAML
//
// [singletable.Table.Describe]: https://pkg.go.dev/github.com/singletable/singletable#Table.Describe
// [singletable.Table.Definition]: https://pkg.go.dev/github.com/singletable/singletable#Table.Definition
package design

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Design is a table's design as its entities declare it: the key attributes,
// every entity's key templates and options, the reads those templates serve, and
// what a reviewer should look at twice. Make one with [New] (or the root
// package's Table.Describe); print it with [Design.Markdown] (tables and a key
// map, for a README or a design review) or [Design.Mermaid] (the key map alone).
//
// A Design is plain data, a snapshot: changing it changes nothing on a table.
// Templates appear as they are written in the struct tags. Everything is sorted,
// so the same entities always give the same text, which makes a Design good for
// golden files. A Design is not safe for concurrent modification; its methods
// only read it.
type Design struct {
	// Table holds the table's name, keys, indexes and TTL attribute.
	Table
	// Entities are the entities, by Go type name, then discriminator.
	Entities []Entity
	// Patterns are the reads the key templates serve: per entity (get by key, then
	// queries of the base table and of each index), then the item collections.
	// Each can be counted instead of read (Entity.Count, Table.Count) at the
	// same cost.
	Patterns []AccessPattern
	// Scans are the reads of the whole table: each entity's scan, then the scan of
	// every item decoded by type. Each reads, and costs, every item of the table.
	Scans []AccessPattern
	// Notes point out what the templates make costly or surprising: queries that
	// also read items of other types, integers that sort as text, partitions
	// every item shares, partial reads through indexes.
	Notes []string
}

// Table is a table's keys and indexes as a design shows them.
type Table struct {
	// Name is the table name.
	Name string
	// PartitionKey and SortKey name the base table's key attributes; SortKey is
	// "" for a table keyed by partition alone.
	PartitionKey, SortKey string
	// KeyTypes gives the type of key attributes that are not strings.
	KeyTypes map[string]types.ScalarAttributeType
	// TypeAttribute holds each item's entity type.
	TypeAttribute string
	// Delimiter separates key parts.
	Delimiter byte
	// Indexes are the table's secondary indexes, global and local, in the
	// table's order, with their projections (an INCLUDE list holding every
	// attribute the index is created with).
	Indexes []Index
	// TTLAttribute is the table's TTL attribute; "" when it has none. Whether TTL
	// is on is DynamoDB's to say (DescribeTimeToLive).
	TTLAttribute string
}

// Index describes a secondary index: its name, its key attribute names and its
// projection. SortKey may be empty for a global index keyed by partition only.
type Index struct {
	Name         string
	PartitionKey string
	SortKey      string
	// Local marks a local secondary index: its PartitionKey is the table's.
	Local bool
	// Projection is what the index holds besides keys: ALL ("" too), KEYS_ONLY or
	// INCLUDE NonKeyAttributes.
	Projection       types.ProjectionType
	NonKeyAttributes []string
	// PartitionAttrs and SortAttrs are a native index's key attributes, each
	// with its type ("tenant S", "created N"), in order: DynamoDB's
	// multi-attribute keys, read from the items' own attributes. PartitionKey and
	// SortKey are then "".
	PartitionAttrs, SortAttrs []string
}

// native reports whether the index is keyed by the items' own attributes.
func (ix Index) native() bool { return len(ix.PartitionAttrs) > 0 }

// projectsAll reports whether an index holds whole items.
func (ix Index) projectsAll() bool {
	return ix.Projection == "" || ix.Projection == types.ProjectionTypeAll
}

// Entity describes one entity stored in the table.
type Entity struct {
	// Name is the Go type name.
	Name string
	// Type is the discriminator, the value of the type attribute.
	Type string
	// Keys are the entity's key templates: the base table's first, then those of
	// each index the entity is in, in the table's order.
	Keys []Key
	// Fields are the stored attributes of the entity's fields, in the order of
	// the struct; their kinds say how a key template writes them.
	Fields []Field
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
	// migrations, 0 for one without.
	Schema int
	// WriteBack is when migrated items are written back: "sync", "async" or
	// "off"; meaningful when Schema > 0.
	WriteBack string
	// CreatedAt, UpdatedAt, Counter and TTL are the stored attributes of the fields
	// tagged `singletable:"createdAt"`, "updatedAt", "counter" and "ttl"; "" for
	// none. Defaults names the attributes that have a `default=`.
	CreatedAt, UpdatedAt, Counter, TTL string
	Defaults                           []string
	// TTLFrom and TTLAfter say how the library derives the TTL: from the time
	// attribute TTLFrom plus TTLAfter (`singletable:"ttl,from=...,after=..."`);
	// "" and 0 when the TTL is the caller's.
	TTLFrom  string
	TTLAfter time.Duration
	// Generated maps each attribute whose id the library generates
	// (`singletable:"generate=..."`) to its kind: "ulid" or "uuidv7".
	Generated map[string]string
	// NativeIndexes names the native indexes the entity is in, in table order:
	// it stores every key attribute of each (an item that lacks one is not in
	// that index).
	NativeIndexes []string
}

// Key is an entity's key templates on the base table or on one index.
type Key struct {
	// Index is the index name, "" for the base table.
	Index string
	// PartitionKey and Partition are the partition key attribute and its template.
	PartitionKey, Partition string
	// SortKey and Sort are the sort key attribute and its template; both "" on an
	// index without a sort key.
	SortKey, Sort string
}

// Field is one stored attribute of an entity.
type Field struct {
	// Name is the attribute's name in the item.
	Name string
	// Kind is how a key template writes the field's value; "" for a value no
	// template can hold as text.
	Kind Kind
}

// Kind is the kind of a field's value, as a key template writes it.
type Kind string

// The kinds of field a key template can hold.
const (
	KindString Kind = "string" // written as it is
	KindInt    Kind = "int"    // a signed integer: decimal, or zero-padded with {name:08}
	KindUint   Kind = "uint"   // an unsigned integer
	KindTime   Kind = "time"   // a time.Time, in one of the time formats
)

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

// New returns the design of table t holding entities: their access patterns,
// scans, costs and notes, derived from the key templates. It copies what it
// keeps (entities sorted by name, then type), so later changes to its arguments
// do not change the design. Templates must be valid (as the root package's
// registration checks them): literal text and {name} or {name:format}
// placeholders naming fields of the entity.
func New(t Table, entities []Entity) *Design {
	t.KeyTypes = maps.Clone(t.KeyTypes)
	t.Indexes = slices.Clone(t.Indexes)
	for i := range t.Indexes {
		t.Indexes[i].NonKeyAttributes = slices.Clone(t.Indexes[i].NonKeyAttributes)
		t.Indexes[i].PartitionAttrs = slices.Clone(t.Indexes[i].PartitionAttrs)
		t.Indexes[i].SortAttrs = slices.Clone(t.Indexes[i].SortAttrs)
	}
	es := make([]Entity, len(entities))
	for i, e := range entities {
		e.Keys = slices.Clone(e.Keys)
		e.Fields = slices.Clone(e.Fields)
		e.ShardBy = slices.Clone(e.ShardBy)
		e.Defaults = slices.Clone(e.Defaults)
		e.Generated = maps.Clone(e.Generated)
		e.NativeIndexes = slices.Clone(e.NativeIndexes)
		es[i] = e
	}
	slices.SortStableFunc(es, func(a, b Entity) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Type, b.Type))
	})

	d := &Design{Table: t, Entities: es}
	ms := make([]*model, len(es))
	for i := range es {
		ms[i] = newModel(&es[i]) // templates.go
	}
	for _, m := range ms {
		if m.base() != nil {
			d.Patterns = append(d.Patterns, getPattern(m)) // patterns.go
		}
		for _, v := range m.views {
			d.Patterns = append(d.Patterns, queryPatterns(m, v)...)
		}
		for _, name := range m.e.NativeIndexes {
			if ix, ok := t.index(name); ok && ix.native() {
				d.Patterns = append(d.Patterns, nativePatterns(m.e, ix)...)
			}
		}
		d.Scans = append(d.Scans, scanPattern(m))
	}
	d.Patterns = append(d.Patterns, d.collectionPatterns(ms)...)
	if len(ms) > 0 {
		d.Scans = append(d.Scans, tableScanPattern(ms))
	}
	for _, ps := range [][]AccessPattern{d.Patterns, d.Scans} {
		for i := range ps {
			ps[i].Cost = d.patternCost(ps[i])
		}
	}
	d.Notes = append(d.designNotes(ms), d.projectionNotes(ms)...) // notes.go
	return d
}

// index returns the named index, or the base table's keys for "".
func (t *Table) index(name string) (Index, bool) {
	if name == "" {
		return Index{PartitionKey: t.PartitionKey, SortKey: t.SortKey}, true
	}
	for _, ix := range t.Indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return Index{}, false
}

// nonStringKey reports whether a key attribute holds numbers or bytes.
func (t *Table) nonStringKey(attr string) bool {
	typ := t.KeyTypes[attr]
	return typ != "" && typ != types.ScalarAttributeTypeS
}
