// Package sweep is the engine of the root package's Entity.Sweep: the segments
// of a parallel scan swept concurrently (or one at a time), each from its saved
// progress to its end, page after page, the items handed to a callback at most
// a rate a second, the counts kept per segment and in all, and each page's
// progress saved (internal/sweepstore's Progress). The root builds the scan, says
// what to do with an item (migrate it and write it back) and seals the cursors.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/backoff"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/sweepstore"
)

// Item is an item, or a key, as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// SaveTimeout bounds a write-back, and the save of a stopped page's progress,
// once the sweep's context has ended.
const SaveTimeout = 30 * time.Second

// Stats counts a sweep's work: the totals of one call, and per segment (the
// root's SweepStats).
type Stats struct {
	Seen, Migrated, Lost, Failed int64
	Elapsed                      time.Duration
	Segments                     []SegmentStats
}

// SegmentStats counts the work of one segment in one call (the root's
// SegmentStats).
type SegmentStats struct {
	Segment                      int
	Seen, Migrated, Lost, Failed int64
	Resumed, Done                bool
}

// Result is what a sweep did with one item.
type Result uint8

const (
	Current  Result = iota // at the current schema (or not the entity's): nothing to do
	Migrated               // migrated and written back
	Lost                   // migrated, but a newer write came first: not written
	Failed                 // the migration or its write-back failed
)

// Scanner is the client a sweep scans with.
type Scanner interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Scan is what a sweep scans: the items of Table whose type attribute
// (TypeAttribute) is Type, at a schema version (SchemaAttribute) below Current
// or without one; PageSize items a page.
type Scan struct {
	Client                     Scanner
	Table, TypeAttribute, Type string
	SchemaAttribute            string
	Current                    int
	// Untyped: items without the type attribute are read too (an entity that
	// adopts them), those whose PartitionKey begins with UntypedPrefix.
	Untyped                     bool
	PartitionKey, UntypedPrefix string
	PageSize                    int32
	Consistent                  bool // strongly consistent scans
	total                       int
}

// input is the Scan of segment seg from start (nil: its beginning).
func (s *Scan) input(seg int, start Item) *dynamodb.ScanInput {
	var b expr.Builder
	filter := b.Name(s.TypeAttribute) + " = " + b.S(s.Type) + " AND (attribute_not_exists(" + b.Name(s.SchemaAttribute) + ") OR " +
		b.Name(s.SchemaAttribute) + " < " + b.Value(&types.AttributeValueMemberN{Value: strconv.Itoa(s.Current)}) + ")"
	if s.Untyped {
		untyped := "attribute_not_exists(" + b.Name(s.TypeAttribute) + ")"
		if s.UntypedPrefix != "" {
			untyped += " AND begins_with(" + b.Name(s.PartitionKey) + ", " + b.S(s.UntypedPrefix) + ")"
		}
		filter = "(" + filter + ") OR (" + untyped + ")"
	}
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(s.Table),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		Segment:                   aws.Int32(int32(seg)),
		TotalSegments:             aws.Int32(int32(s.total)),
		Limit:                     aws.Int32(s.PageSize),
		ExclusiveStartKey:         start,
	}
	if s.Consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	return in
}

// Config is one sweep: the segments From to To-1 of Total, and what the root
// does for each step.
type Config struct {
	Total, From, To int
	Rate            float64 // items a second; 0: no cap
	Serial          bool    // the segments one at a time, in order (Explain)
	// Progress, when set, is called after each page with the totals so far, one
	// call at a time.
	Progress func(Stats)
	// Load and Save read and write a segment's progress.
	Load func(ctx context.Context, segment int) (sweepstore.Progress, error)
	Save func(ctx context.Context, p sweepstore.Progress) error
	// Scan is what each segment's scan reads.
	Scan Scan
	// Item does the sweep's work on one item.
	Item func(ctx context.Context, item Item) Result
	// Encode and Decode seal and open a scan position; KeyOf is an item's key.
	Encode func(key Item) (string, error)
	Decode func(cursor string) (Item, error)
	KeyOf  func(item Item) Item
	// Sleep waits d, or until ctx ends, under the rate cap (nil:
	// internal/backoff's Sleep).
	Sleep func(ctx context.Context, d time.Duration) error
}

// SetRange sweeps only the segments from to to-1 (SegmentRange); its error
// matches invalid.
func (c *Config) SetRange(from, to int, invalid error) error {
	if from < 0 || to <= from {
		return fmt.Errorf("SegmentRange(%d, %d): want 0 <= from < to: %w", from, to, invalid)
	}
	c.From, c.To = from, to
	return nil
}

// SetRate caps the items a second (SweepRate); its error matches invalid.
func (c *Config) SetRate(perSecond float64, invalid error) error {
	if !(perSecond > 0) {
		return fmt.Errorf("SweepRate(%g): want a positive rate: %w", perSecond, invalid)
	}
	c.Rate = perSecond
	return nil
}

// SetPageSize sets each Scan's Limit (PageSize); its error matches invalid.
func (c *Config) SetPageSize(n int, invalid error) error {
	if n < 1 || n > 10000 {
		return fmt.Errorf("PageSize(%d): want 1 to 10,000: %w", n, invalid)
	}
	c.Scan.PageSize = int32(n)
	return nil
}

// CheckRange makes a range not set (To 0) every segment, and refuses one
// outside Total with an error matching invalid.
func (c *Config) CheckRange(invalid error) error {
	if c.To == 0 {
		c.From, c.To = 0, c.Total
	}
	if c.To > c.Total {
		return fmt.Errorf("SegmentRange(%d, %d) is outside Segments(%d): %w", c.From, c.To, c.Total, invalid)
	}
	return nil
}

// Run sweeps c's segments, concurrently unless c.Serial, and returns the
// totals, with one SegmentStats per segment, and the errors of the segments
// that failed, joined.
func Run(ctx context.Context, c Config) (Stats, error) {
	s := &sweeper{c: c, start: time.Now()}
	s.c.Scan.total = c.Total
	if s.c.Sleep == nil {
		s.c.Sleep = backoff.Sleep
	}
	s.stats.Segments = make([]SegmentStats, c.To-c.From)
	for i := range s.stats.Segments {
		s.stats.Segments[i].Segment = c.From + i
	}
	if c.Rate > 0 {
		s.interval = time.Duration(float64(time.Second) / c.Rate)
		s.next = s.start
	}
	var wg sync.WaitGroup
	errs := make([]error, c.To-c.From)
	for i := range errs {
		if c.Serial {
			errs[i] = s.segment(ctx, i)
			continue
		}
		wg.Go(func() { errs[i] = s.segment(ctx, i) })
	}
	wg.Wait()
	return s.snapshot(), errors.Join(errs...)
}

type sweeper struct {
	c     Config
	start time.Time

	mu       sync.Mutex // protects stats, next and calls of Progress
	stats    Stats
	interval time.Duration // between items, with a rate
	next     time.Time     // when the next item may start
}

func (s *sweeper) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *sweeper) snapshotLocked() Stats {
	st := s.stats
	st.Segments = slices.Clone(st.Segments)
	st.Elapsed = time.Since(s.start)
	return st
}

// count adds an item's result to the totals and to segment i's counts as each
// item is done, so a stopped sweep reports every write it made.
func (s *sweeper) count(i int, r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sg := &s.stats.Segments[i]
	switch r {
	case Migrated:
		s.stats.Migrated++
		sg.Migrated++
	case Lost:
		s.stats.Lost++
		sg.Lost++
	case Failed:
		s.stats.Failed++
		sg.Failed++
	}
}

// seen adds n items read to the totals and to segment i's.
func (s *sweeper) seen(i int, n int64) {
	s.stats.Seen += n
	s.stats.Segments[i].Seen += n
}

// pace waits for the next item's slot under the rate cap.
func (s *sweeper) pace(ctx context.Context) error {
	if s.interval == 0 {
		return ctx.Err()
	}
	s.mu.Lock()
	at := s.next
	if now := time.Now(); at.Before(now) {
		at = now
	}
	s.next = at.Add(s.interval)
	s.mu.Unlock()
	return s.c.Sleep(ctx, time.Until(at))
}

// save saves p, even when ctx has ended, within SaveTimeout.
func (s *sweeper) save(ctx context.Context, p sweepstore.Progress) error {
	save, cancel := context.WithTimeout(context.WithoutCancel(ctx), SaveTimeout)
	defer cancel()
	return s.c.Save(save, p)
}

// segment sweeps the i-th segment of the call's range from its saved progress
// to its end, saving progress after each page.
func (s *sweeper) segment(ctx context.Context, i int) error {
	seg := s.c.From + i
	prog, err := s.c.Load(ctx, seg)
	if err != nil {
		return fmt.Errorf("segment %d: progress: %w", seg, err)
	}
	s.mu.Lock()
	s.stats.Segments[i].Resumed = prog.Pages > 0
	s.stats.Segments[i].Done = prog.Done
	s.mu.Unlock()
	if prog.Done {
		return nil
	}
	var start Item
	if prog.Cursor != "" {
		if start, err = s.c.Decode(prog.Cursor); err != nil {
			return err
		}
	}
	in := s.c.Scan.input(seg, start) // one input for the segment: each page moves its start
	for {
		page, err := s.c.Scan.Client.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("segment %d: %w", seg, err)
		}
		var done [Failed + 1]int64 // this page's counts by result
		for n, item := range page.Items {
			if err := s.pace(ctx); err != nil {
				s.stopped(ctx, i, &prog, page.Items[:n], done)
				return fmt.Errorf("segment %d: %w", seg, err)
			}
			r := s.c.Item(ctx, item)
			done[r]++
			if r != Current {
				s.count(i, r)
			}
		}
		prog.Pages++
		prog.Seen += int64(page.ScannedCount)
		prog.Migrated += done[Migrated]
		prog.Lost += done[Lost]
		prog.Failed += done[Failed]
		prog.Cursor, prog.Done = "", len(page.LastEvaluatedKey) == 0
		if !prog.Done {
			if prog.Cursor, err = s.c.Encode(page.LastEvaluatedKey); err != nil {
				return err
			}
		}
		// Saved even when ctx has just ended: the page's items are done and
		// counted, and a resumed sweep finds them current, so a lost save would
		// lose their count for good.
		if err := s.save(ctx, prog); err != nil {
			return fmt.Errorf("segment %d: progress: %w", seg, err)
		}
		s.mu.Lock()
		s.seen(i, int64(page.ScannedCount))
		s.stats.Segments[i].Done = prog.Done
		if s.c.Progress != nil {
			s.c.Progress(s.snapshotLocked())
		}
		s.mu.Unlock()
		if prog.Done {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// stopped saves the progress of a page stopped midway, up to the last item
// done (items), so that the next run goes on from the next one.
func (s *sweeper) stopped(ctx context.Context, i int, prog *sweepstore.Progress, items []Item, done [Failed + 1]int64) {
	if len(items) == 0 {
		return
	}
	n := int64(len(items))
	prog.Pages++
	prog.Seen += n
	prog.Migrated, prog.Lost, prog.Failed = prog.Migrated+done[Migrated], prog.Lost+done[Lost], prog.Failed+done[Failed]
	cur, err := s.c.Encode(s.c.KeyOf(items[len(items)-1]))
	if err != nil {
		return
	}
	prog.Cursor = cur
	_ = s.save(ctx, *prog) // if it fails, the page is read again on resume, and its items found current
	s.mu.Lock()
	s.seen(i, n)
	s.mu.Unlock()
}
