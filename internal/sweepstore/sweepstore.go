// Package sweepstore keeps the progress of sweeps' segments for the root
// package's MemoryStore and TableStore, which forward to it: in a map ([Memory]),
// or as one item per segment in a DynamoDB table ([Table]), saved by a
// conditional write judged after a lost answer (internal/condwrite).
package sweepstore

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
	"github.com/singletable/singletable/internal/reserved"
)

// Progress is where one segment of a sweep stands: the root package's
// SweepProgress, field for field, so that each converts to the other.
type Progress struct {
	Entity                       string
	Segment                      int
	Total                        int
	Cursor                       string
	Pages                        int64
	Done                         bool
	Seen, Migrated, Lost, Failed int64
}

// Memory keeps progress in memory; the zero value is empty. It is safe for
// concurrent use.
type Memory struct {
	mu     sync.Mutex          // protects sweeps
	sweeps map[string]Progress // key -> progress
}

func key(entity string, segment, total int) string {
	return entity + "\x00" + strconv.Itoa(segment) + "/" + strconv.Itoa(total)
}

// Load returns the segment's progress; its zero value with the ids set when
// there is none.
func (m *Memory) Load(entity string, segment, total int) Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.sweeps[key(entity, segment, total)]; ok {
		return p
	}
	return Progress{Entity: entity, Segment: segment, Total: total}
}

// Save saves p unless the stored progress has as many pages or more; that
// error wraps refused (the root package's ErrCondition).
func (m *Memory) Save(p Progress, refused error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key(p.Entity, p.Segment, p.Total)
	if cur, ok := m.sweeps[k]; ok && cur.Pages >= p.Pages {
		return fmt.Errorf("singletable: sweep %s segment %d/%d: progress at page %d, not %d: %w", p.Entity, p.Segment, p.Total, cur.Pages, p.Pages, refused)
	}
	if m.sweeps == nil {
		m.sweeps = map[string]Progress{}
	}
	m.sweeps[k] = p
	return nil
}

// Of returns the progress of every segment of entity's sweeps.
func (m *Memory) Of(entity string) []Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Progress
	for _, p := range m.sweeps {
		if p.Entity == entity {
			out = append(out, p)
		}
	}
	return out
}

// The attributes of sweep progress items.
const (
	AttrCursor   = "cursor"
	AttrPages    = "pages"
	AttrDone     = "done"
	AttrSeen     = "seen"
	AttrMigrated = "migrated"
	AttrLost     = "lost"
	AttrFailed   = "failed"
)

// Attrs are the attributes of sweep progress items, beside the table's key and
// type attributes.
var Attrs = []string{AttrCursor, AttrPages, AttrDone, AttrSeen, AttrMigrated, AttrLost, AttrFailed}

// Client is what [Table] calls of the table's client.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Table keeps progress in a DynamoDB table keyed by string partition and sort
// keys: one item per segment (partition "<Prefix>sweep<delimiter><entity
// type>", sort key "<segment>/<total>", type attribute [reserved.SweepType]).
type Table struct {
	Client                                  Client
	Name                                    string
	PartitionKey, SortKey, TypeAttribute    string
	Delimiter                               byte
	Attempts                                int                                    // sends and reads back, the first included
	Wait                                    func(ctx context.Context, n int) error // the pause before attempt n+1
	ErrCondition, ErrAmbiguous, ErrMismatch error                                  // the root package's sentinels
}

func (t *Table) itemKey(entity string, segment, total int) map[string]types.AttributeValue {
	d := string(t.Delimiter)
	return map[string]types.AttributeValue{
		t.PartitionKey: &types.AttributeValueMemberS{Value: reserved.Prefix(t.Delimiter) + "sweep" + d + entity},
		t.SortKey:      &types.AttributeValueMemberS{Value: fmt.Sprintf("%08d/%08d", segment, total)},
	}
}

// Load reads the segment's progress: one consistent GetItem.
func (t *Table) Load(ctx context.Context, entity string, segment, total int) (Progress, error) {
	p := Progress{Entity: entity, Segment: segment, Total: total}
	out, err := t.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.Name),
		Key:            t.itemKey(entity, segment, total),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return p, fmt.Errorf("singletable: sweep %s segment %d/%d: GetItem: %w", entity, segment, total, err)
	}
	item := out.Item
	if item == nil {
		return p, nil
	}
	if typ, _ := item[t.TypeAttribute].(*types.AttributeValueMemberS); typ == nil || typ.Value != reserved.SweepType {
		return p, fmt.Errorf("singletable: sweep %s segment %d/%d: the item at its key is not sweep progress: %w", entity, segment, total, t.ErrMismatch)
	}
	num := func(a string) int64 { return intAttr(item, a) }
	if c, ok := item[AttrCursor].(*types.AttributeValueMemberS); ok {
		p.Cursor = c.Value
	}
	if d, ok := item[AttrDone].(*types.AttributeValueMemberBOOL); ok {
		p.Done = d.Value
	}
	p.Pages, p.Seen, p.Migrated, p.Lost, p.Failed = num(AttrPages), num(AttrSeen), num(AttrMigrated), num(AttrLost), num(AttrFailed)
	return p, nil
}

// item is p as stored.
func (t *Table) item(p Progress) map[string]types.AttributeValue {
	item := t.itemKey(p.Entity, p.Segment, p.Total)
	item[t.TypeAttribute] = &types.AttributeValueMemberS{Value: reserved.SweepType}
	item[AttrPages], item[AttrSeen], item[AttrMigrated], item[AttrLost], item[AttrFailed] = n(p.Pages), n(p.Seen), n(p.Migrated), n(p.Lost), n(p.Failed)
	item[AttrDone] = &types.AttributeValueMemberBOOL{Value: p.Done}
	if p.Cursor != "" {
		item[AttrCursor] = &types.AttributeValueMemberS{Value: p.Cursor}
	}
	return item
}

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// Save writes p: one PutItem conditional on the stored progress having fewer
// pages, judged after a lost answer by [Judge]. A refusal wraps ErrCondition,
// an outcome that could not be learnt ErrAmbiguous.
func (t *Table) Save(ctx context.Context, p Progress) error {
	item := t.item(p)
	var b expr.Builder
	cond := "attribute_not_exists(" + b.Name(t.PartitionKey) + ") OR (" + b.Name(t.TypeAttribute) + " = " + b.S(reserved.SweepType) +
		" AND " + b.Name(AttrPages) + " < " + b.Value(n(p.Pages)) + ")"
	in := &dynamodb.PutItemInput{
		TableName:                 aws.String(t.Name),
		Item:                      item,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	}
	key := t.itemKey(p.Entity, p.Segment, p.Total)
	_, refused, err := condwrite.Write{
		Send: func(ctx context.Context, optFn func(*dynamodb.Options)) (condwrite.Item, error) {
			_, err := t.Client.PutItem(ctx, in, optFn)
			return nil, err
		},
		ReadBack: func(ctx context.Context) (condwrite.Item, error) {
			return condwrite.ReadBack(ctx, t.Client.GetItem, t.Name, key, t.Attempts, t.Wait)
		},
		Judge:         func(cur condwrite.Item) condwrite.Verdict { return Judge(cur, item, t.TypeAttribute, p.Pages) },
		Attempts:      t.Attempts,
		Wait:          t.Wait,
		TrustRefusals: true, // another sweep of the segment may have saved the same progress
	}.Do(ctx)
	if refused {
		return fmt.Errorf("singletable: sweep %s segment %d/%d: progress is at page %d or later: %w", p.Entity, p.Segment, p.Total, p.Pages, t.ErrCondition)
	}
	if err != nil {
		if errors.Is(err, condwrite.ErrUnproven) {
			err = fmt.Errorf("%w: %w", t.ErrAmbiguous, err)
		}
		return fmt.Errorf("singletable: sweep %s segment %d/%d: PutItem: %w", p.Entity, p.Segment, p.Total, err)
	}
	return nil
}

// Judge says what cur, the item read back after a save of item (with pages
// pages) lost its answer, shows of it. Progress only grows: the item as written
// is this save's, and one with fewer pages shows it did not land.
func Judge(cur, item condwrite.Item, typeAttr string, pages int64) condwrite.Verdict {
	typ, _ := cur[typeAttr].(*types.AttributeValueMemberS)
	switch {
	case cur == nil:
		return condwrite.NotLanded
	case typ == nil || typ.Value != reserved.SweepType:
		return condwrite.Overtaken
	case maps.EqualFunc(cur, item, sameAV):
		return condwrite.Landed
	case intAttr(cur, AttrPages) < pages:
		return condwrite.NotLanded
	}
	return condwrite.Overtaken
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
