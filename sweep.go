package singletable

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// SweepOptions configures [Entity.Sweep]. Zero fields take the defaults named.
type SweepOptions struct {
	// Segments is the number of parallel scan segments; default 4. DynamoDB
	// splits a table into segments by partition: the items of one partition key
	// are all in one segment, so a table of few partitions keeps most segments idle.
	Segments int
	// Rate caps the items migrated per second, across segments; 0 is no cap.
	Rate float64
	// PageSize is each Scan's Limit; default 100.
	PageSize int32
	// Checkpoints keeps each segment's position under the id
	// "sweep/<Type>/<segment>/<segments>" ([ShardEnd] once it is done); default: a
	// new MemoryCheckpoints (no resume across calls). Resume with the same
	// Segments.
	Checkpoints CheckpointStore
	// Progress is called after each page with the totals so far, one call at a time.
	Progress func(SweepStats)
}

// SweepStats counts a sweep's work.
type SweepStats struct {
	Seen     int64         // items the scans read (ScannedCount), every type and version
	Migrated int64         // items migrated and written back
	Lost     int64         // write-backs that lost to a newer write (nothing to do)
	Failed   int64         // items whose migration failed (reported to Migration.OnError)
	Elapsed  time.Duration // since the sweep started
}

// PerSecond is the migration rate so far.
func (s SweepStats) PerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Migrated) / s.Elapsed.Seconds()
}

// Sweep migrates every item of the entity older than its schema, eagerly: a
// parallel Scan (Segments), filtered to this type at an older schema version, whose
// items are migrated and written back conditionally as a read would, at most Rate a
// second. Each page's position is saved in Checkpoints once its items are done, so a
// sweep stopped by its context resumes from there when run again with the same
// checkpoints; running it again changes nothing (the items are current). Cost: the
// Scan reads the whole table (0.5 RCU per 4 KB); each migrated item is one write.
func (e *Entity[T]) Sweep(ctx context.Context, opts ...func(*SweepOptions)) (SweepStats, error) {
	ctx = e.observe(ctx)
	mp := e.info.migration
	if mp == nil {
		return SweepStats{}, fmt.Errorf("singletable: Sweep %s: the entity has no migrations: %w", e.info.name, ErrInvalidInput)
	}
	o := SweepOptions{Segments: 4, PageSize: 100}
	for _, f := range opts {
		f(&o)
	}
	if o.Segments <= 0 || o.Segments > 1000000 || o.PageSize <= 0 {
		return SweepStats{}, fmt.Errorf("singletable: Sweep %s: bad segments or page size: %w", e.info.name, ErrInvalidInput)
	}
	if o.Checkpoints == nil {
		o.Checkpoints = &MemoryCheckpoints{}
	}
	s := &sweeper[T]{e: e, o: o, start: time.Now()}
	if o.Rate > 0 {
		s.interval = time.Duration(float64(time.Second) / o.Rate)
		s.next = s.start
	}
	var wg sync.WaitGroup
	errs := make([]error, o.Segments)
	for seg := range o.Segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[seg] = s.segment(ctx, seg)
		}()
	}
	wg.Wait()
	stats := s.snapshot()
	if err := errors.Join(errs...); err != nil {
		return stats, fmt.Errorf("singletable: Sweep %s: %w", e.info.name, err)
	}
	return stats, nil
}

type sweeper[T any] struct {
	e     *Entity[T]
	o     SweepOptions
	start time.Time

	mu       sync.Mutex // protects stats, next and calls of Progress
	stats    SweepStats
	interval time.Duration // between migrations, with a Rate
	next     time.Time     // when the next migration may start
}

func (s *sweeper[T]) snapshot() SweepStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Elapsed = time.Since(s.start)
	return st
}

// count updates the totals as each item is done, so a stopped sweep reports
// every write it made.
func (s *sweeper[T]) count(f func(*SweepStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}

// pace waits for the next migration slot under the rate cap.
func (s *sweeper[T]) pace(ctx context.Context) error {
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
	return sleepContext(ctx, time.Until(at))
}

func (s *sweeper[T]) segment(ctx context.Context, seg int) error {
	e := s.e
	t := e.table
	info := e.info
	id := "sweep/" + info.discriminator + "/" + strconv.Itoa(seg) + "/" + strconv.Itoa(s.o.Segments)
	cursor, err := s.o.Checkpoints.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("segment %d: checkpoint: %w", seg, err)
	}
	if cursor == ShardEnd {
		return nil
	}
	var b expr.Builder
	filter := b.Name(t.opts.TypeAttribute) + " = " + b.S(info.discriminator) + " AND (attribute_not_exists(" + b.Name(t.opts.SchemaAttribute) + ") OR " +
		b.Name(t.opts.SchemaAttribute) + " < " + b.Value(&types.AttributeValueMemberN{Value: strconv.Itoa(info.migration.current)}) + ")"
	in := dynamodb.ScanInput{
		TableName:                 aws.String(t.name),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		Segment:                   aws.Int32(int32(seg)),
		TotalSegments:             aws.Int32(int32(s.o.Segments)),
		Limit:                     aws.Int32(s.o.PageSize),
		ConsistentRead:            aws.Bool(true),
	}
	if cursor != "" {
		if in.ExclusiveStartKey, err = t.decodeScanCursor(cursor); err != nil {
			return err
		}
	}
	for {
		out, err := t.client.Scan(ctx, &in)
		if err != nil {
			return fmt.Errorf("segment %d: %w", seg, err)
		}
		for _, item := range out.Items {
			if err := s.pace(ctx); err != nil {
				return fmt.Errorf("segment %d: %w", seg, err) // the page is not checkpointed: it is read again on resume
			}
			rv := reflect.New(info.goType).Elem()
			m, err := info.decodeInto(item, rv)
			if err == nil && !m {
				continue
			}
			var w *writeRequest
			if err == nil {
				w, err = info.planWriteBack(item, rv)
			}
			if err != nil {
				info.migration.report(err)
				s.count(func(st *SweepStats) { st.Failed++ })
				continue
			}
			written, err := info.migration.send(ctx, t, w)
			switch {
			case written:
				s.count(func(st *SweepStats) { st.Migrated++ })
			case err == nil:
				s.count(func(st *SweepStats) { st.Lost++ })
			case ctx.Err() != nil:
				return fmt.Errorf("segment %d: %w", seg, ctx.Err())
			default:
				s.count(func(st *SweepStats) { st.Failed++ })
			}
		}
		next := ShardEnd
		if len(out.LastEvaluatedKey) > 0 {
			if next, err = t.encodeScanCursor(out.LastEvaluatedKey); err != nil {
				return err
			}
		}
		if err := s.o.Checkpoints.Save(ctx, id, next); err != nil {
			return fmt.Errorf("segment %d: checkpoint: %w", seg, err)
		}
		s.mu.Lock()
		s.stats.Seen += int64(out.ScannedCount)
		if s.o.Progress != nil {
			st := s.stats
			st.Elapsed = time.Since(s.start)
			s.o.Progress(st)
		}
		s.mu.Unlock()
		if next == ShardEnd {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Scan cursors of a sweep hold the base table key, as base64 of
// uvarint(len) value for the partition key then the sort key.
func (t *Table) encodeScanCursor(lek map[string]types.AttributeValue) (string, error) {
	var buf []byte
	for _, a := range []string{t.opts.PartitionKey, t.opts.SortKey} {
		s, ok := lek[a].(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("scan position lacks %s", a)
		}
		buf = binary.AppendUvarint(buf, uint64(len(s.Value)))
		buf = append(buf, s.Value...)
	}
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

func (t *Table) decodeScanCursor(c string) (map[string]types.AttributeValue, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, fmt.Errorf("sweep checkpoint: %w", ErrInvalidCursor)
	}
	key := map[string]types.AttributeValue{}
	for _, a := range []string{t.opts.PartitionKey, t.opts.SortKey} {
		n, w := binary.Uvarint(raw)
		if w <= 0 || n == 0 || n > uint64(len(raw)-w) {
			return nil, fmt.Errorf("sweep checkpoint: %w", ErrInvalidCursor)
		}
		key[a] = &types.AttributeValueMemberS{Value: string(raw[w : w+int(n)])}
		raw = raw[w+int(n):]
	}
	return key, nil
}
