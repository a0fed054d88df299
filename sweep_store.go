package singletable

import (
	"context"

	"github.com/singletable/singletable/internal/sweepstore"
)

// SweepProgress is where one segment of a sweep stands: what [Entity.Sweep]
// saves in a [SweepStore] after each page, so that a sweep stopped midway, in
// this process or another, resumes its segments where they were.
type SweepProgress struct {
	Entity  string // the entity's type (discriminator)
	Segment int    // the segment, 0 to Total-1
	Total   int    // the number of segments the table is divided into
	// Cursor is the scan position after the last page done; "" at the start.
	Cursor string
	// Pages counts the pages done. Each save must count more than the one
	// before: progress never moves backwards.
	Pages int64
	// Done is set when the segment has been scanned to its end.
	Done bool
	// Totals of every run of the segment so far; see [SweepStats].
	Seen, Migrated, Lost, Failed int64
}

// SweepStore keeps the progress of sweeps' segments. Implementations must be
// safe for concurrent use. [MemoryStore] keeps it in memory, [TableStore] in
// DynamoDB.
type SweepStore interface {
	// LoadSweep returns the progress of a segment; its zero value (with the
	// ids set) when there is none.
	LoadSweep(ctx context.Context, entity string, segment, total int) (SweepProgress, error)
	// SaveSweep saves p if it has more pages than the progress stored, and
	// otherwise fails with an error matching [ErrCondition]: a segment being
	// swept twice at once stops one of them.
	SaveSweep(ctx context.Context, p SweepProgress) error
}

// MemoryStore is a [SweepStore] in memory: the sweep progress of one process,
// lost when it exits. It keeps to the same conditions as [TableStore], so it
// also serves tests. The zero value is an empty store; it is safe for
// concurrent use. (Package stream has a MemoryStore of its own, for leases.)
type MemoryStore struct {
	m sweepstore.Memory
}

var _ SweepStore = (*MemoryStore)(nil)

// LoadSweep returns the segment's progress.
func (m *MemoryStore) LoadSweep(_ context.Context, entity string, segment, total int) (SweepProgress, error) {
	return SweepProgress(m.m.Load(entity, segment, total)), nil
}

// SaveSweep saves p unless the stored progress has as many pages or more.
func (m *MemoryStore) SaveSweep(_ context.Context, p SweepProgress) error {
	return m.m.Save(sweepstore.Progress(p), ErrCondition)
}

// Sweeps returns the progress of every segment of entity's sweeps.
func (m *MemoryStore) Sweeps(entity string) []SweepProgress {
	var out []SweepProgress
	for _, p := range m.m.Of(entity) {
		out = append(out, SweepProgress(p))
	}
	return out
}

// TableStore is a [SweepStore] kept in a DynamoDB table: the single table
// itself, or one of its own (any table keyed like a [Table], e.g. made with
// NewTable and [Table.CreateTable]). Its items have partition keys beginning
// with "<delimiter>singletable<delimiter>", which no registered entity can
// render (see [Register]), and type attributes beginning with "_singletable.":
// one item per sweep segment (partition "#singletable#sweep#<entity type>",
// sort key "<segment>/<total>"). (The leases of stream consumers live beside
// them, in package stream's TableStore.)
//
// Every save is conditional, and is judged as the entity pipeline judges its
// writes: the SDK's retryer resends no failure that may have applied it (a
// lost answer, a reset, a 5xx, an ended context); after one the item is read
// back consistently, and the save counts as done when the item is the progress
// it wrote, is sent again when the item holds fewer pages, and is refused
// ([ErrCondition]) otherwise; when the item cannot be read back the error
// matches [ErrAmbiguous].
//
// A TableStore is safe for concurrent use.
type TableStore struct {
	t *Table
}

var _ SweepStore = (*TableStore)(nil)

// NewTableStore returns a store that keeps sweep progress in t's table. It
// sends nothing. It fails if the table's keys are not strings, or if one of
// the store's attribute names (cursor, pages, done, seen, migrated, lost,
// failed) is a key or type attribute of t.
func NewTableStore(t *Table) (*TableStore, error) {
	if t == nil {
		return nil, errorf("NewTableStore: nil table: %w", ErrInvalidInput)
	}
	if !t.stringKeys() { // keytypes.go
		return nil, errorf("NewTableStore %s: the store keeps its items under string partition and sort keys, and this table has a number, binary or no sort key: use a table of its own: %w", t.name, ErrInvalidInput)
	}
	for _, a := range sweepstore.Attrs {
		if _, isKey := t.keys[a]; isKey || a == t.opts.TypeAttribute {
			return nil, errorf("NewTableStore %s: attribute %q is a key or type attribute of the table: %w", t.name, a, ErrInvalidInput)
		}
	}
	return &TableStore{t: t}, nil
}

// store is the table's store of internal/sweepstore, to which the methods forward.
func (s *TableStore) store() *sweepstore.Table {
	bo := s.t.opts.Backoff.withDefaults()
	return &sweepstore.Table{
		Client: s.t.client, Name: s.t.name, Delimiter: s.t.opts.Delimiter,
		PartitionKey: s.t.opts.PartitionKey, SortKey: s.t.opts.SortKey, TypeAttribute: s.t.opts.TypeAttribute,
		Attempts: bo.MaxAttempts, Wait: bo.Wait,
		ErrCondition: ErrCondition, ErrAmbiguous: ErrAmbiguous, ErrMismatch: ErrTypeMismatch,
	}
}

// LoadSweep reads the segment's progress: one consistent GetItem (1 RCU).
func (s *TableStore) LoadSweep(ctx context.Context, entity string, segment, total int) (SweepProgress, error) {
	p, err := s.store().Load(ctx, entity, segment, total)
	return SweepProgress(p), err
}

// SaveSweep writes p: one PutItem (1 WCU) conditional on the stored progress
// having fewer pages, judged after a lost answer as [TableStore] says (a save
// whose answer was lost counts as done when the item read back is p).
func (s *TableStore) SaveSweep(ctx context.Context, p SweepProgress) error {
	return s.store().Save(ctx, sweepstore.Progress(p))
}
