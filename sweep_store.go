package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/expr"
)

// sameAV reports whether two of the store's own attribute values are equal: the
// scalar kinds it writes (S, N, BOOL).
func sameAV(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		b, ok := b.(*types.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberN:
		b, ok := b.(*types.AttributeValueMemberN)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberBOOL:
		b, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && a.Value == b.Value
	}
	return false
}

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
	mu     sync.Mutex               // protects sweeps
	sweeps map[string]SweepProgress // sweepKey -> progress
}

var _ SweepStore = (*MemoryStore)(nil)

func sweepKey(entity string, segment, total int) string {
	return entity + "\x00" + strconv.Itoa(segment) + "/" + strconv.Itoa(total)
}

// LoadSweep returns the segment's progress.
func (m *MemoryStore) LoadSweep(_ context.Context, entity string, segment, total int) (SweepProgress, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.sweeps[sweepKey(entity, segment, total)]; ok {
		return p, nil
	}
	return SweepProgress{Entity: entity, Segment: segment, Total: total}, nil
}

// SaveSweep saves p unless the stored progress has as many pages or more.
func (m *MemoryStore) SaveSweep(_ context.Context, p SweepProgress) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := sweepKey(p.Entity, p.Segment, p.Total)
	if cur, ok := m.sweeps[k]; ok && cur.Pages >= p.Pages {
		return fmt.Errorf("singletable: sweep %s segment %d/%d: progress at page %d, not %d: %w", p.Entity, p.Segment, p.Total, cur.Pages, p.Pages, ErrCondition)
	}
	if m.sweeps == nil {
		m.sweeps = map[string]SweepProgress{}
	}
	m.sweeps[k] = p
	return nil
}

// Sweeps returns the progress of every segment of entity's sweeps.
func (m *MemoryStore) Sweeps(entity string) []SweepProgress {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []SweepProgress
	for _, p := range m.sweeps {
		if p.Entity == entity {
			out = append(out, p)
		}
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

// sweepAttrs are the attributes of sweep progress items.
var sweepAttrs = []string{attrCursor, attrPages, attrDone, attrSeen, attrMigrated, attrLost, attrFailed}

// The attributes of sweep progress items.
const (
	attrCursor   = "cursor"
	attrPages    = "pages"
	attrDone     = "done"
	attrSeen     = "seen"
	attrMigrated = "migrated"
	attrLost     = "lost"
	attrFailed   = "failed"
)

// NewTableStore returns a store that keeps sweep progress in t's table. It
// sends nothing. It fails if the table's keys are not strings, or if one of
// the store's attribute names (cursor, pages, done, seen, migrated, lost,
// failed) is a key or type attribute of t.
func NewTableStore(t *Table) (*TableStore, error) {
	if t == nil {
		return nil, fmt.Errorf("singletable: NewTableStore: nil table: %w", ErrInvalidInput)
	}
	if !t.stringKeys() { // keytypes.go
		return nil, fmt.Errorf("singletable: NewTableStore %s: the store keeps its items under string partition and sort keys, and this table has a number, binary or no sort key: use a table of its own: %w", t.name, ErrInvalidInput)
	}
	for _, a := range sweepAttrs {
		if _, isKey := t.keys[a]; isKey || a == t.opts.TypeAttribute {
			return nil, fmt.Errorf("singletable: NewTableStore %s: attribute %q is a key or type attribute of the table: %w", t.name, a, ErrInvalidInput)
		}
	}
	return &TableStore{t: t}, nil
}

func (s *TableStore) sweepItemKey(entity string, segment, total int) map[string]types.AttributeValue {
	d := string(s.t.opts.Delimiter)
	return map[string]types.AttributeValue{
		s.t.opts.PartitionKey: &types.AttributeValueMemberS{Value: s.t.reservedPrefix() + "sweep" + d + entity},
		s.t.opts.SortKey:      &types.AttributeValueMemberS{Value: fmt.Sprintf("%08d/%08d", segment, total)},
	}
}

// LoadSweep reads the segment's progress: one consistent GetItem (1 RCU).
func (s *TableStore) LoadSweep(ctx context.Context, entity string, segment, total int) (SweepProgress, error) {
	p := SweepProgress{Entity: entity, Segment: segment, Total: total}
	out, err := s.t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.t.namePtr(),
		Key:            s.sweepItemKey(entity, segment, total),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return p, fmt.Errorf("singletable: sweep %s segment %d/%d: GetItem: %w", entity, segment, total, err)
	}
	item := out.Item
	if item == nil {
		return p, nil
	}
	if typ, _ := item[s.t.opts.TypeAttribute].(*types.AttributeValueMemberS); typ == nil || typ.Value != sweepType {
		return p, fmt.Errorf("singletable: sweep %s segment %d/%d: the item at its key is not sweep progress: %w", entity, segment, total, ErrTypeMismatch)
	}
	num := func(a string) int64 { return intAttr(item, a) }
	if c, ok := item[attrCursor].(*types.AttributeValueMemberS); ok {
		p.Cursor = c.Value
	}
	if d, ok := item[attrDone].(*types.AttributeValueMemberBOOL); ok {
		p.Done = d.Value
	}
	p.Pages, p.Seen, p.Migrated, p.Lost, p.Failed = num(attrPages), num(attrSeen), num(attrMigrated), num(attrLost), num(attrFailed)
	return p, nil
}

// SaveSweep writes p: one PutItem (1 WCU) conditional on the stored progress
// having fewer pages, judged after a lost answer as [TableStore] says (a save
// whose answer was lost counts as done when the item read back is p).
func (s *TableStore) SaveSweep(ctx context.Context, p SweepProgress) error {
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	item := s.sweepItemKey(p.Entity, p.Segment, p.Total)
	item[s.t.opts.TypeAttribute] = &types.AttributeValueMemberS{Value: sweepType}
	item[attrPages], item[attrSeen], item[attrMigrated], item[attrLost], item[attrFailed] = n(p.Pages), n(p.Seen), n(p.Migrated), n(p.Lost), n(p.Failed)
	item[attrDone] = &types.AttributeValueMemberBOOL{Value: p.Done}
	if p.Cursor != "" {
		item[attrCursor] = &types.AttributeValueMemberS{Value: p.Cursor}
	}
	var b expr.Builder
	cond := "attribute_not_exists(" + b.Name(s.t.opts.PartitionKey) + ") OR (" + b.Name(s.t.opts.TypeAttribute) + " = " + b.S(sweepType) +
		" AND " + b.Name(attrPages) + " < " + b.Value(n(p.Pages)) + ")"
	in := &dynamodb.PutItemInput{
		TableName:                 s.t.namePtr(),
		Item:                      item,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	}
	key := s.sweepItemKey(p.Entity, p.Segment, p.Total)
	bo := s.t.opts.Backoff.withDefaults()
	_, refused, err := condwrite.Write{
		Send: func(ctx context.Context, optFn func(*dynamodb.Options)) (condwrite.Item, error) {
			_, err := s.t.client.PutItem(ctx, in, optFn)
			return nil, err
		},
		ReadBack: func(ctx context.Context) (condwrite.Item, error) {
			return condwrite.ReadBack(ctx, s.t.client.GetItem, s.t.name, key, bo.MaxAttempts, bo.Wait)
		},
		Judge: func(cur condwrite.Item) condwrite.Verdict {
			// Progress only grows: the item as written is this save's, and one with
			// fewer pages shows it did not land.
			typ, _ := cur[s.t.opts.TypeAttribute].(*types.AttributeValueMemberS)
			switch {
			case cur == nil:
				return condwrite.NotLanded
			case typ == nil || typ.Value != sweepType:
				return condwrite.Overtaken
			case maps.EqualFunc(cur, item, sameAV):
				return condwrite.Landed
			case intAttr(cur, attrPages) < p.Pages:
				return condwrite.NotLanded
			}
			return condwrite.Overtaken
		},
		Attempts:      bo.MaxAttempts,
		Wait:          bo.Wait,
		TrustRefusals: true, // another sweep of the segment may have saved the same progress
	}.Do(ctx)
	if refused {
		return fmt.Errorf("singletable: sweep %s segment %d/%d: progress is at page %d or later: %w", p.Entity, p.Segment, p.Total, p.Pages, ErrCondition)
	}
	if err != nil {
		return fmt.Errorf("singletable: sweep %s segment %d/%d: PutItem: %w", p.Entity, p.Segment, p.Total, ambiguity(err))
	}
	return nil
}

// intAttr is item's number attribute a as an int64; 0 when it is missing, not
// a number or not an integer (the store's own items, written by it).
func intAttr(item map[string]types.AttributeValue, a string) int64 {
	v, _ := item[a].(*types.AttributeValueMemberN)
	if v == nil {
		return 0
	}
	n, _ := strconv.ParseInt(v.Value, 10, 64)
	return n
}

// ambiguity makes an outcome condwrite could not learn match ErrAmbiguous.
func ambiguity(err error) error {
	if errors.Is(err, condwrite.ErrUnproven) {
		return fmt.Errorf("%w: %w", ErrAmbiguous, err)
	}
	return err
}
