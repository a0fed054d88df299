package singletable

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable/singletable/internal/tabledef"
)

// Index projections and local secondary indexes.
//
// An index holds, besides its keys and the table's, the attributes its
// projection names: every attribute (ALL, the default), none (KEYS_ONLY), or a
// list (INCLUDE). A read through an index that does not hold every field of an
// entity decodes what is there and is partial: [Page.Partial] is set, and
// nothing read through it is ever written back. The library's type and schema
// attributes are always included in an INCLUDE projection it creates, so reads
// can tell entity types and schema versions apart; a KEYS_ONLY index has neither,
// and an item read through it is told apart by its primary key instead (two
// entities' primary key templates never render one key: see [Register]).

type indexOptionFunc func(*Index) error

func (f indexOptionFunc) applyIndex(ix *Index) error { return f(ix) }

// ProjectAll makes the index hold every attribute of the items it indexes
// (ProjectionType ALL): the default. Reads through it see whole items; its storage
// and write cost are those of the whole items.
func ProjectAll() IndexOption {
	return indexOptionFunc(func(ix *Index) error {
		ix.Projection, ix.NonKeyAttributes = types.ProjectionTypeAll, nil
		return nil
	})
}

// ProjectKeysOnly makes the index hold only its keys and the table's
// (ProjectionType KEYS_ONLY): the smallest index, and the cheapest to write and
// read, but a read through it is partial ([Page.Partial]): an item's fields that
// are not key inputs are zero (key inputs are parsed back from its keys).
func ProjectKeysOnly() IndexOption {
	return indexOptionFunc(func(ix *Index) error {
		ix.Projection, ix.NonKeyAttributes = types.ProjectionTypeKeysOnly, nil
		return nil
	})
}

// ProjectInclude makes the index hold its keys, the table's, and the attributes
// named (ProjectionType INCLUDE, their stored names), to which [Table.CreateTable]
// adds the type and schema attributes. A read through it is partial
// ([Page.Partial]) for an entity with a field it does not hold.
func ProjectInclude(attrs ...string) IndexOption {
	attrs = slices.Clone(attrs)
	return indexOptionFunc(func(ix *Index) error {
		if len(attrs) == 0 {
			return fmt.Errorf("index %s: ProjectInclude(): name at least one attribute: %w", ix.Name, ErrInvalidInput)
		}
		for _, a := range attrs {
			if a == "" {
				return fmt.Errorf("index %s: ProjectInclude: an empty attribute name: %w", ix.Name, ErrInvalidInput)
			}
		}
		ix.Projection, ix.NonKeyAttributes = types.ProjectionTypeInclude, slices.Clone(attrs)
		return nil
	})
}

func applyIndexOptions(ix *Index, opts []IndexOption) error {
	for i, opt := range opts {
		if opt == nil {
			return fmt.Errorf("index %s: option %d is nil: %w", ix.Name, i+1, ErrInvalidInput)
		}
		if err := opt.applyIndex(ix); err != nil {
			return err
		}
	}
	return nil
}

// checkLocalIndexes gives each local index the table's partition key and checks
// what DynamoDB requires of them, before the key attributes are recorded.
func (o *TableOptions) checkLocalIndexes() error {
	n := 0
	for i := range o.Indexes {
		ix := &o.Indexes[i]
		if !ix.Local {
			continue
		}
		n++
		switch {
		case o.NoSortKey:
			return fmt.Errorf("local index %q: the table has no sort key, and a local index needs one: %w", ix.Name, ErrInvalidInput)
		case ix.SortKey == "":
			return fmt.Errorf("local index %q has no sort key: %w", ix.Name, ErrInvalidInput)
		case ix.SortKey == o.SortKey:
			return fmt.Errorf("local index %q sorts by the table's sort key %q: %w", ix.Name, ix.SortKey, ErrInvalidInput)
		case ix.PartitionKey != "" && ix.PartitionKey != o.PartitionKey:
			return fmt.Errorf("local index %q: its partition key must be the table's (%q), not %q: %w", ix.Name, o.PartitionKey, ix.PartitionKey, ErrInvalidInput)
		}
		ix.PartitionKey = o.PartitionKey
	}
	if n > 5 {
		return fmt.Errorf("%d local indexes: DynamoDB allows 5 per table: %w", n, ErrInvalidInput)
	}
	return nil
}

// checkProjections refuses projections DynamoDB would refuse: an unknown type,
// attributes without INCLUDE, key attributes or repeats in the list.
func (t *Table) checkProjections() error {
	for _, ix := range t.opts.Indexes {
		switch ix.Projection {
		case "", types.ProjectionTypeAll, types.ProjectionTypeKeysOnly:
			if len(ix.NonKeyAttributes) > 0 {
				return fmt.Errorf("index %q: NonKeyAttributes need the INCLUDE projection: %w", ix.Name, ErrInvalidInput)
			}
		case types.ProjectionTypeInclude:
			seen := map[string]bool{}
			for _, a := range ix.NonKeyAttributes {
				if _, isKey := t.keys[a]; isKey || ix.isNativeAttr(a) {
					return fmt.Errorf("index %q: ProjectInclude(%q): a key attribute is always projected: %w", ix.Name, a, ErrInvalidInput)
				}
				if seen[a] {
					return fmt.Errorf("index %q: ProjectInclude names %q twice: %w", ix.Name, a, ErrInvalidInput)
				}
				seen[a] = true
			}
		default:
			return fmt.Errorf("index %q: unknown projection %q (want ALL, KEYS_ONLY or INCLUDE): %w", ix.Name, ix.Projection, ErrInvalidInput)
		}
	}
	return nil
}

// projectsAll reports whether an index holds whole items.
func (ix Index) projectsAll() bool {
	return ix.Projection == "" || ix.Projection == types.ProjectionTypeAll
}

// projectionType is the index's ProjectionType as CreateTable sends it.
func (ix Index) projectionType() types.ProjectionType {
	if ix.Projection == "" {
		return types.ProjectionTypeAll
	}
	return ix.Projection
}

// included lists the non-key attributes an INCLUDE index the library creates
// holds: those named, then the type and schema attributes.
func (t *Table) included(ix Index) []string {
	if ix.Projection != types.ProjectionTypeInclude {
		return nil
	}
	out := slices.Clone(ix.NonKeyAttributes)
	for _, a := range []string{t.opts.TypeAttribute, t.opts.SchemaAttribute} {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// projection is the Projection of an index for CreateTable.
func (t *Table) projection(ix Index) *types.Projection {
	p := &types.Projection{ProjectionType: ix.projectionType()}
	if inc := t.included(ix); len(inc) > 0 {
		p.NonKeyAttributes = inc
	}
	return p
}

// indexHolds reports whether items read through index ix (the base table: the
// zero Index) carry attribute attr.
func (t *Table) indexHolds(ix Index, attr string) bool {
	if ix.Name == "" || ix.projectsAll() {
		return true
	}
	if attr == t.opts.PartitionKey || attr == t.opts.SortKey || attr == ix.PartitionKey || attr == ix.SortKey || ix.isNativeAttr(attr) {
		return true
	}
	return slices.Contains(t.included(ix), attr)
}

// covers reports whether items of info read through index ix carry every field
// of the entity, its type and its schema: only then is a read through it whole.
func (t *Table) covers(ix Index, info *entityInfo) bool {
	if ix.Name == "" || ix.projectsAll() {
		return true
	}
	for _, f := range info.plan.Fields() {
		if !t.indexHolds(ix, f.Name) {
			return false
		}
	}
	return t.indexHolds(ix, t.opts.TypeAttribute)
}

// localIndexes lists the local secondary indexes for CreateTable.
func (t *Table) localIndexes() []types.LocalSecondaryIndex {
	var out []types.LocalSecondaryIndex
	for _, ix := range t.opts.Indexes {
		if ix.Local {
			out = append(out, types.LocalSecondaryIndex{
				IndexName:  aws.String(ix.Name),
				KeySchema:  tabledef.KeySchema(ix.PartitionKey, ix.SortKey),
				Projection: t.projection(ix),
			})
		}
	}
	return out
}

// globalIndexes lists the global secondary indexes for CreateTable.
func (t *Table) globalIndexes() []types.GlobalSecondaryIndex {
	var out []types.GlobalSecondaryIndex
	for _, ix := range t.opts.Indexes {
		if !ix.Local {
			out = append(out, types.GlobalSecondaryIndex{
				IndexName:  aws.String(ix.Name),
				KeySchema:  ix.keySchema(), // multiattr.go: several HASH and RANGE elements for a native index
				Projection: t.projection(ix),
			})
		}
	}
	return out
}

// projectionText describes an index's projection for messages and designs:
// "ALL", "KEYS_ONLY", "INCLUDE status, total".
func (t *Table) projectionText(ix Index) string {
	p := string(ix.projectionType())
	if inc := t.included(ix); len(inc) > 0 {
		p += " "
		for i, a := range inc {
			if i > 0 {
				p += ", "
			}
			p += strconv.Quote(a)
		}
	}
	return p
}

// bindLocal binds an entity's template for a local index's sort key: its
// partition is the entity's own (the base partition key template), so the pair
// holds the sort key alone.
func (info *entityInfo) bindLocal(templates map[string]string, ix Index) error {
	s, err := info.bind(templates, ix.SortKey, ix.Name, false, MaxSortKeyBytes)
	if err != nil || s == nil {
		return err
	}
	info.indexes[ix.Name] = [2]*keyTemplate{nil, s}
	info.all = append(info.all, s)
	return nil
}

// indexPair returns the entity's templates for index name: a local index's
// partition key template is the base table's.
func (info *entityInfo) indexPair(name string) ([2]*keyTemplate, bool) {
	pair, ok := info.indexes[name]
	if ok && pair[0] == nil {
		pair[0] = info.pk
	}
	return pair, ok
}
