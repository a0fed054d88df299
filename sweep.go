package singletable

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/sweep"
	"github.com/singletable/singletable/internal/sweepstore"
)

type sweepFunc func(*sweepOptions) error

func (f sweepFunc) applySweep(o *sweepOptions) error { return f(o) }

// sweepOptions are internal/sweep's Config (the segments to sweep: From <=
// segment < To; To 0 means Total) and the root's parts.
type sweepOptions struct {
	sweep.Config
	store    SweepStore
	progress func(SweepStats)
}

// Segments divides the table into total scan segments (Scan's TotalSegments);
// default 4. DynamoDB divides a table into segments by partition key: the items
// of one partition key are all in one segment, so a table of few partitions
// keeps most segments idle. Every worker of a split sweep must give the same
// total, and progress is kept per segment of a total: resume with the same.
//
// Segments is also a [ScanOption]: with [Segment] it makes a scan read one
// segment of a parallel scan (see [Entity.Scan]).
func Segments(total int) SegmentOption { return segmentsOption(total) }

// SegmentRange sweeps only the segments from to to-1 of the total, so that N
// workers can each take a share: with Segments(8), one worker takes
// SegmentRange(0, 4) and another SegmentRange(4, 8). Default: every segment.
// Ranges of different workers must not overlap; if they do, the conditional
// write-backs still migrate each item once, and the progress of a segment swept
// twice at once stops one of the two with [ErrCondition].
func SegmentRange(from, to int) SweepOption {
	return sweepFunc(func(o *sweepOptions) error { return o.SetRange(from, to, ErrInvalidInput) })
}

// Segment sweeps segment i only: SegmentRange(i, i+1). It is also a
// [ScanOption]: the segment of a parallel scan this call reads (see
// [Entity.Scan]).
func Segment(i int) SegmentOption { return segmentOption(i) }

// SweepRate caps the items migrated per second by this call, across its
// segments; default no cap. A fleet of N workers each with SweepRate(r) writes
// up to N·r a second: give each its share of the rate the table can spare.
func SweepRate(perSecond float64) SweepOption {
	return sweepFunc(func(o *sweepOptions) error { return o.SetRate(perSecond, ErrInvalidInput) })
}

// PageSize is each Scan's Limit: 1 to 10,000; default 100. Progress is saved
// once per page, so a stopped sweep redoes at most a page per segment.
func PageSize(n int) SweepOption {
	return sweepFunc(func(o *sweepOptions) error { return o.SetPageSize(n, ErrInvalidInput) })
}

// SweepProgressIn keeps each segment's progress in store, so that a sweep
// stopped midway (a cancelled context, a crash) resumes each of its segments
// after its last page when it runs again, in this process or another, and a
// segment done is not scanned again. Use a [TableStore] for a fleet. Default:
// a new [MemoryStore], so that every call starts over.
func SweepProgressIn(store SweepStore) SweepOption {
	return sweepFunc(func(o *sweepOptions) error {
		if store == nil {
			return fmt.Errorf("SweepProgressIn(nil): %w", ErrInvalidInput)
		}
		o.store = store
		return nil
	})
}

// OnSweepProgress calls f after each page with this call's totals so far, one
// call at a time.
func OnSweepProgress(f func(SweepStats)) SweepOption {
	return sweepFunc(func(o *sweepOptions) error {
		if f == nil {
			return fmt.Errorf("OnSweepProgress(nil): %w", ErrInvalidInput)
		}
		o.progress = f
		return nil
	})
}

// ConsistentScan makes the sweep's Scan strongly consistent, at twice the
// read cost. A sweep does not need it: every write-back is conditional on the
// item being as it was read, so an item read stale is not overwritten (the
// write-back loses, and is counted Lost), and an item written after the scan
// passed it was written at the current schema. It only matters for items
// written, at an older schema, by something that bypasses the library, in the
// second before the scan reads their page.
func ConsistentScan() SweepOption {
	return sweepFunc(func(o *sweepOptions) error { o.Scan.Consistent = true; return nil })
}

// SweepStats counts a sweep's work: the totals of one call, and per segment.
type SweepStats struct {
	Seen     int64         // items the scans read (ScannedCount), every type and version
	Migrated int64         // items migrated and written back
	Lost     int64         // write-backs that lost to a newer write (nothing to do)
	Failed   int64         // items whose migration failed (reported to Migration.OnError)
	Elapsed  time.Duration // since the sweep started
	// Segments are the counts of each segment this call swept, in segment
	// order.
	Segments []SegmentStats
}

// SegmentStats counts the work of one segment in one call of [Entity.Sweep].
type SegmentStats struct {
	Segment                      int
	Seen, Migrated, Lost, Failed int64
	// Resumed is set when the segment began from saved progress; Done when it
	// has been scanned to its end (in this call or an earlier one).
	Resumed, Done bool
}

// PerSecond is the migration rate so far.
func (s SweepStats) PerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Migrated) / s.Elapsed.Seconds()
}

// Sweep migrates the items of the entity older than its schema, eagerly: a
// parallel Scan of the chosen segments ([Segments], [SegmentRange]), filtered to
// this type at an older schema version, whose items are migrated and written
// back conditionally as a read would, at most [SweepRate] a second. N workers
// (processes) can split one sweep, each taking a SegmentRange of the same
// total. After each page the segment's progress (its scan position and counts)
// is saved in the [SweepProgressIn] store, so a sweep stopped by its context or
// by a crash resumes each segment from its last page when run again with the
// same store, and a segment done is skipped; running it again changes nothing
// (the items are current).
//
// The Scan is eventually consistent (see [ConsistentScan] for why that is
// enough). Cost: the scan of a segment reads all of its items, of every type,
// 0.5 RCU per 4 KB (the filter does not reduce it); the whole table over every
// segment. Each migrated item is one conditional write (1 WCU per KB); each
// page saves progress, one write to the store. An item is written back once:
// the condition of the write-back fails for an item another worker, or a read,
// migrated first (counted Lost).
//
// Sweep returns the totals of this call, with one [SegmentStats] per segment it
// swept; on an error, the counts so far and the errors of the segments that
// failed, joined.
//
//go:noinline
func (e *Entity[T]) Sweep(ctx context.Context, opts ...SweepOption) (_ SweepStats, err error) {
	return e.core().sweep(ctx, opts)
}

func (e *entity) sweep(ctx context.Context, opts []SweepOption) (_ SweepStats, err error) {
	if err := e.refused("Sweep"); err != nil {
		return SweepStats{}, err
	}
	ctx, done := e.begin(ctx, "Sweep")
	defer done(&err)
	mp := e.info.migration
	if mp == nil {
		return SweepStats{}, errorf("Sweep %s: the entity has no migrations: %w", e.info.name, ErrInvalidInput)
	}
	o := sweepOptions{Config: sweep.Config{Total: 4, Scan: sweep.Scan{PageSize: 100}}}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.applySweep(&o); err != nil {
			return SweepStats{}, errorf("Sweep %s: %w", e.info.name, err)
		}
	}
	if err := o.CheckRange(ErrInvalidInput); err != nil {
		return SweepStats{}, errorf("Sweep %s: %w", e.info.name, err)
	}
	if o.store == nil {
		o.store = &MemoryStore{}
	}
	t, info := e.table, e.info
	// The sweep's reads take the read path's phases (readpath.go): the type check
	// (DynamoDB's filter ran it first), decoding and migration; the write-back is
	// the sweep's own (migrateItem).
	plan := readPlan{t: t, info: info}
	c := o.Config
	c.Serial = explaining(ctx) != nil // explain.go: one at a time, in segment order
	c.Load = func(ctx context.Context, seg int) (sweepstore.Progress, error) {
		p, err := o.store.LoadSweep(ctx, info.discriminator, seg, o.Total)
		return sweepstore.Progress(p), err
	}
	c.Save = func(ctx context.Context, p sweepstore.Progress) error {
		return o.store.SaveSweep(ctx, SweepProgress(p))
	}
	c.Scan.Client, c.Scan.Table, c.Scan.TypeAttribute, c.Scan.Type = t.client, t.name, t.opts.TypeAttribute, info.discriminator
	c.Scan.SchemaAttribute, c.Scan.Current = t.opts.SchemaAttribute, info.migration.current
	if info.adopt { // adopt.go: untyped items at the entity's keys are stamped too
		c.Scan.Untyped, c.Scan.PartitionKey = true, t.opts.PartitionKey
		if info.pk != nil && info.pk.typ == "" {
			c.Scan.UntypedPrefix = info.pk.tmpl.StaticPrefix()
		}
	}
	c.Item = func(ctx context.Context, item sweep.Item) sweep.Result { return e.migrateItem(ctx, &plan, item) }
	c.Encode, c.Decode, c.KeyOf, c.Sleep = t.encodeScanCursor, t.decodeScanCursor, t.keyOf, sleepContext
	if o.progress != nil {
		c.Progress = func(s sweep.Stats) { o.progress(sweepStats(s)) }
	}
	st, err := sweep.Run(ctx, c)
	stats := sweepStats(st)
	if err != nil {
		return stats, errorf("Sweep %s: %w", e.info.name, err)
	}
	return stats, nil
}

// sweepStats copies internal/sweep's counts.
func sweepStats(s sweep.Stats) SweepStats {
	st := SweepStats{Seen: s.Seen, Migrated: s.Migrated, Lost: s.Lost, Failed: s.Failed, Elapsed: s.Elapsed, Segments: make([]SegmentStats, len(s.Segments))}
	for i, g := range s.Segments {
		st.Segments[i] = SegmentStats(g)
	}
	return st
}

// migrateItem reads one item of a sweep through the read path's phases
// (readpath.go: the type check, decoding and migration) and writes a migrated
// one back, whatever the entity's WriteBack says (that is the sweep's purpose),
// on the conditions of every write-back (migrate.go).
func (e *entity) migrateItem(ctx context.Context, p *readPlan, item map[string]types.AttributeValue) sweep.Result {
	info, verdict, err := p.checkType(item)
	if err == nil && verdict != itemRead {
		return sweep.Current
	}
	var m map[string]types.AttributeValue
	rv := reflect.New(p.info.goType).Elem()
	if err == nil {
		m, err = p.decodeItem(info, item, rv)
		if err == nil && m == nil {
			return sweep.Current
		}
	}
	var w *writeRequest
	if err == nil {
		w, err = p.info.planWriteBack(item, m, rv)
	}
	if err != nil {
		p.info.migration.report(err)
		return sweep.Failed
	}
	// The write-back is not cut short by the end of ctx, so that its outcome is
	// known and counted: a sweep stops between items.
	sendCtx, cancelSend := context.WithTimeout(context.WithoutCancel(ctx), sweep.SaveTimeout)
	written, err := p.info.migration.send(sendCtx, e.table, w)
	cancelSend()
	switch {
	case written:
		return sweep.Migrated
	case err == nil:
		return sweep.Lost
	}
	return sweep.Failed
}

// encodeScanCursor seals a sweep's scan position, the base table key of the
// last item read, as a cursor (cursor.go: sealKeys).
func (t *Table) encodeScanCursor(lek map[string]types.AttributeValue) (string, error) {
	return t.sealKeys(scanCursorVersion, t.scanCursorID(), t.baseKeyAttrs(), lek)
}

func (t *Table) decodeScanCursor(c string) (map[string]types.AttributeValue, error) {
	return t.openKeys(scanCursorVersion, t.scanCursorID(), t.baseKeyAttrs(), c)
}
