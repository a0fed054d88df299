package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Adopting a table written before the library: items at an entity's keys that
// carry no type attribute (written by other programs or mappers) are, by
// default, no entity's: a Get answers ErrTypeMismatch, since such an item may be
// another entity's. AdoptUntyped says they are this entity's.

// AdoptUntyped registers the entity as the owner of untyped items at its keys:
// items without the table's type attribute whose primary key its templates
// parse (PK and SK render as this entity's would). It is the path for moving an
// existing table onto the library; see the adoption notes in docs/modelling.md.
//
//   - Reads by key (Get, BatchGet, TransactGet, a Ref, Mutate, Project.Get)
//     decode such an item as the entity's, and write it back with the type
//     attribute, the schema version and the index keys stamped (as a migration's
//     write-back does: an UpdateItem on the condition that the item is unchanged
//     since it was read; the entity's Migration.WriteBack decides when, and a
//     Migration, if any, runs first). Without Migrations, the entity gets an
//     empty schema history (version 1, write-back on the read), so its items
//     carry the schema attribute.
//   - [Entity.Sweep] finds them too (a Scan filtered to untyped items and the
//     entity's migrated ones) and stamps each: after a sweep, Queries, Scans and
//     the indexes list them.
//   - Writes accept an untyped item at the key as the entity's (their type guard
//     is "this type, or none"), and stamp the type.
//   - Queries and Scans do not list untyped items before they are stamped: a
//     page of a partition may hold other programs' items.
//
// An entity's reads then take the SDK's decoding, not the wire path. Without
// AdoptUntyped, the guard stays: an untyped item is not the entity's.
func AdoptUntyped() RegisterOption { return adoptOption{} }

type adoptOption struct{}

func (adoptOption) apply(t *Table, info *entityInfo) error {
	info.adopt = true
	var pb expr.Builder
	info.putGuard = pb.Fix(info.typeGuard(&pb))
	return nil
}

// adoptable reports whether item, which has no type attribute, is one the
// entity adopts: it does (AdoptUntyped), and its primary key parses as the
// entity's.
func (info *entityInfo) adoptable(item map[string]types.AttributeValue) bool {
	if !info.adopt {
		return false
	}
	if _, typed := item[info.table.opts.TypeAttribute]; typed {
		return false
	}
	for _, kt := range []*keyTemplate{info.pk, info.sk} {
		if kt == nil || kt.typ != "" { // a number or binary key: any value of its type
			continue
		}
		s, ok := item[kt.attr].(*types.AttributeValueMemberS)
		if !ok {
			return false
		}
		if _, err := kt.tmpl.Extract(s.Value); err != nil {
			return false
		}
	}
	return true
}

// typeIs is the condition that the stored item is of the entity's type, or,
// for an entity that adopts untyped items, has none.
func (info *entityInfo) typeIs(b *expr.Builder) string {
	t := info.table
	is := b.Name(t.opts.TypeAttribute) + " = " + b.S(info.discriminator)
	if info.adopt { // an OR: callers join it with expr.And, which parenthesizes it
		return is + " OR attribute_not_exists(" + b.Name(t.opts.TypeAttribute) + ")"
	}
	return is
}

// unstamped reports whether item, read as the entity's, is one it adopted and
// has not stamped whole yet: untyped (adoptable), or typed by an Update, which
// sets the type but not the schema or the index keys it does not change. Every
// whole write of an adopting entity stores the schema attribute, so an item of
// its type without one is such an item.
func (info *entityInfo) unstamped(item map[string]types.AttributeValue) bool {
	if !info.adopt {
		return false
	}
	if _, ok := item[info.table.opts.SchemaAttribute]; ok {
		return false
	}
	return info.adoptable(item) || item[info.table.opts.TypeAttribute] != nil
}
