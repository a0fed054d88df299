package singletable

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/fanout"
	"github.com/singletable/singletable/internal/keytmpl"
	"github.com/singletable/singletable/internal/wire"
	"github.com/singletable/singletable/internal/wrap"
)

// Fan-out reading: a query of every partition of a sharded entity (every shard,
// and with [Days] every day), each read concurrently, merged in sort key order,
// resumed by one cursor. Write sharding itself (shard plans, choosing and finding
// an item's shard) lives in shard.go.

// shardFunc is an option of fan-out queries alone.
type shardFunc func(*queryOptions) error

func (f shardFunc) applyShardQuery(o *queryOptions) error { return f(o) }

// Days makes [Entity.QueryShards] read the partitions of every UTC day from from to to
// (both included), setting the time field whose stored attribute is attr to each
// day in turn: for partition keys bucketed by day, such as "EVENTS#{day:date}#SHARD{shard}".
// attr must name a time placeholder of the partition key template.
func Days(attr string, from, to time.Time) ShardQueryOption {
	return shardFunc(func(o *queryOptions) error {
		f, t := from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
		if t.Before(f) || t.Sub(f) > 366*24*time.Hour {
			return fmt.Errorf("Days(%s, %s): want from <= to, at most a year apart: %w", f.Format(keytmpl.DateLayout), t.Format(keytmpl.DateLayout), ErrInvalidInput)
		}
		o.dayAttr, o.dayFrom, o.dayTo = attr, f, t
		return nil
	})
}

// Parallel bounds how many partitions [Entity.QueryShards] reads at once; default 16.
func Parallel(n int) ShardQueryOption {
	return shardFunc(func(o *queryOptions) error {
		if n < 1 {
			return fmt.Errorf("Parallel(%d): want at least 1: %w", n, ErrInvalidInput)
		}
		o.parallel = n
		return nil
	})
}

// AllowPartial lets [Entity.QueryShards] return what the partitions that answered
// hold when others fail, with a [*ShardError] naming the failed ones; the cursor
// resumes those where they stood. Without it any failure fails the query.
func AllowPartial() ShardQueryOption {
	return shardFunc(func(o *queryOptions) error { o.partial = true; return nil })
}

// ShardError reports partitions of a fan-out query that failed.
type ShardError struct {
	Partitions []string // partition key values that failed
	Errs       []error
}

// Error names the partitions that failed and their errors.
func (e *ShardError) Error() string {
	return "singletable: " + strconv.Itoa(len(e.Partitions)) + " partitions failed: " + strings.Join(e.Partitions, ", ") + ": " + errors.Join(e.Errs...).Error()
}

// Unwrap returns the partitions' errors.
func (e *ShardError) Unwrap() []error { return e.Errs }

// QueryShards reads one page of a sharded entity's items across every shard (and,
// with [Days], every day) of the partition key's template: each partition is queried
// concurrently ([Parallel], default 16), and the results are merged in sort key
// order, in either direction, up to [Limit] items in all. [Filter], sort key
// conditions and [On] apply to every partition. The cursor records where each
// partition stopped, so [After] resumes every one of them without gaps or repeats.
// A failing partition fails the query unless [AllowPartial] is given.
//
// Cost: a page of L items from N partitions first asks each for its share,
// 1.5·L/N+2 items (at most L), in one concurrent round: 8 shards and L = 100
// read 168 items, not 800. A partition that runs dry while the merge still needs
// it is read again, with the others about to run dry, in one more concurrent
// round (reading the newest day first across [Days] takes one such round). Items
// read but not returned are read again by the next page. Without [Limit], each
// partition is read a page at a time. With [Filter], items filtered out count
// against the shares, as DynamoDB's Limit counts them. key is not modified; its
// shard (and day) fields are ignored, and its other fields narrow the sort key as
// in [Entity.Query]. Through an index ([On]) items are decoded as Query decodes
// them: migrated in memory only, never written back, and partial (Page.Partial)
// when the index does not hold every field.
//
//go:noinline
func (e *Entity[T]) QueryShards(ctx context.Context, key T, opts ...ShardQueryOption) (_ Page[T], err error) {
	var page Page[T]
	err = e.core().queryShards(ctx, elem(&key), opts, elem(&page))
	return page, err
}

// queryShards is QueryShards: the page is read into page, a Page[T] (left zero
// on an error, but for the failures AllowPartial returns with the page).
func (e *entity) queryShards(ctx context.Context, sv reflect.Value, opts []ShardQueryOption, page reflect.Value) (err error) {
	if err := e.refused("QueryShards"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "QueryShards")
	defer done(&err)
	fq, err := e.prepareFanout(sv, opts)
	if err != nil {
		return err
	}
	e.table.event(ctx, SpanEvent{Name: EventFanout, Items: len(fq.Streams)}) // trace.go
	r, err := e.fanoutPage(ctx, fq, page.Field(pageItems).Addr())
	return fillPage(page, r, err)
}

// AllShards iterates over every item of a fan-out query, page after page, as
// [Entity.QueryShards] merges them. It stops at the first error. As it reads
// everything, it asks each partition for whole pages of [Limit] items (not a
// share of one) and keeps what a partition returned from page to page: every item
// is read once. Like [Entity.All], it refuses an index whose items would be
// partial.
//
//go:noinline
func (e *Entity[T]) AllShards(ctx context.Context, key T, opts ...ShardQueryOption) iter.Seq2[T, error] {
	c := e.core()
	return func(yield func(T, error) bool) {
		var items []T
		p := c.allShards(ctx, elem(&key), opts, ptrTo(&items))
		defer p.close() // the span ends however the loop ends, a panic in it too
		for p.next() {
			for _, v := range items {
				if !yield(v, nil) {
					return
				}
			}
		}
		if err := p.failed(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}

// allShards is AllShards' pager, reading each page into the slice items
// points to.
func (e *entity) allShards(ctx context.Context, sv reflect.Value, opts []ShardQueryOption, items reflect.Value) *pager {
	if err := e.refused("AllShards"); err != nil {
		return newPager(items, nil, noDone, err)
	}
	ctx, done := e.begin(ctx, "AllShards")
	fq, err := e.prepareFanout(sv, opts)
	if err == nil && fq.pqs[0].plan.partial {
		err = e.table.refuseIterPartial("AllShards", e.info.name, fq.index, "page through it with QueryShards (Page.Partial says so)")
	}
	if err != nil {
		return newPager(items, nil, done, err)
	}
	e.table.event(ctx, SpanEvent{Name: EventFanout, Items: len(fq.Streams)})
	fq.Whole = true
	return newPager(items, func(items reflect.Value) (bool, error) {
		page, err := e.fanoutPage(ctx, fq, items) // with AllowPartial, the page read and the failures
		return page.cursor != "", err
	}, done, nil)
}

// fanoutQuery is a prepared fan-out query (internal/fanout's) with the
// partitions' prepared queries, stream by stream.
type fanoutQuery struct {
	fanout.Query
	pqs      []*preparedQuery
	index    Index
	identity [32]byte
}

func (e *entity) prepareFanout(key reflect.Value, opts []ShardQueryOption) (*fanoutQuery, error) {
	info := e.info
	var o queryOptions
	if err := applyOptions(&o, "QueryShards", info.name, opts, ShardQueryOption.applyShardQuery); err != nil {
		return nil, err
	}
	o.fixInstant(e.table) // every partition judges expiry at one instant (readpath.go)
	fail := func(format string, args ...any) error {
		return errorf("QueryShards %s: "+format, append([]any{info.name}, args...)...)
	}
	if info.shard == nil {
		return nil, fail("the entity is not sharded (no `singletable:\"shards=N\"`); use Query: %w", ErrInvalidInput)
	}
	if o.partition != nil {
		return nil, fail("Partition(%q) does not apply to QueryShards, which renders every shard's partition itself: %w", *o.partition, ErrInvalidInput)
	}
	if ix, ok := e.table.index(o.index); ok && ix.Native() { // multiattr.go: nothing rendered, no shards to read
		return nil, fail("native index %s is keyed by the items' own attributes, not by a sharded partition; use Query: %w", o.index, ErrInvalidInput)
	}
	dayField, err := e.fanoutDayField(&o)
	if err != nil {
		return nil, fail("%w", err)
	}
	cursor := o.cursor
	o.cursor = ""
	fq := &fanoutQuery{Query: fanout.Query{Name: info.name, Limit: int(o.limit), Desc: o.desc, Parallel: 16, Partial: o.partial}}
	if o.parallel > 0 {
		fq.Parallel = o.parallel
	}
	fq.Fail = func(partitions []string, errs []error) error { return &ShardError{Partitions: partitions, Errs: errs} }
	fq.Fetch = func(ctx context.Context, i int, start fanout.Item, limit int) (fanout.Page, error) {
		return e.table.shardPage(ctx, fq.pqs[i], start, limit)
	}
	if err := e.fanoutStreams(fq, key, &o, dayField); err != nil {
		return nil, err
	}
	if cursor != "" {
		if err := e.table.decodeFanoutCursor(cursor, fq); err != nil {
			return nil, fail("%w", err)
		}
	}
	return fq, nil
}

// fanoutDayField checks that the queried partition key template holds the shard
// and returns the field that [Days] sets (nil without Days).
func (e *entity) fanoutDayField(o *queryOptions) (*codec.Field, error) {
	info := e.info
	_, pkT, _, err := e.table.queryTemplates(info, o.index)
	if err != nil {
		return nil, fmt.Errorf("On(%q): %w", o.index, err)
	}
	hasShard := false
	var dayField *codec.Field
	names := make([]string, 0, len(pkT.fields))
	for _, f := range pkT.fields {
		hasShard = hasShard || f == info.shard.field
		if f.Name == o.dayAttr {
			dayField = f
		}
		names = append(names, f.Name)
	}
	if !hasShard {
		return nil, fmt.Errorf("the partition key template %q has no {%s} placeholder: %w", pkT.tmpl.String(), info.shard.field.Name, ErrInvalidInput)
	}
	switch {
	case o.dayAttr == "":
		return nil, nil
	case dayField == nil:
		return nil, fmt.Errorf("Days(%q): %s's partition key %s %q has no such placeholder%s: %w", o.dayAttr, info.name, pkT.attr, pkT.tmpl.String(), didYouMean(o.dayAttr, names), ErrInvalidInput)
	case keytmpl.KindOf(derefType(dayField.Type)) != keytmpl.KindTime:
		return nil, fmt.Errorf("Days(%q): %s is a %s, not a time: %w", o.dayAttr, fieldLabel(info.name, dayField), dayField.Type, ErrInvalidInput)
	}
	return dayField, nil
}

// fanoutStreams prepares one stream per partition: every shard of every day.
func (e *entity) fanoutStreams(fq *fanoutQuery, key reflect.Value, o *queryOptions, dayField *codec.Field) error {
	info := e.info
	days := []time.Time{{}}
	if dayField != nil {
		days = nil
		for d := o.dayFrom; !d.After(o.dayTo); d = d.AddDate(0, 0, 1) {
			days = append(days, d)
		}
	}
	h := sha256.New()
	for _, d := range days {
		for s := 1; s <= info.shard.count; s++ {
			sv := reflect.New(info.goType).Elem()
			sv.Set(key)
			info.shard.setShard(sv, s)
			if dayField != nil {
				setTime(sv, dayField, d)
			}
			oc := *o
			pq, err := e.table.prepareQuery(info, sv, &oc, e.asEntity)
			if err != nil {
				return err
			}
			h.Write(pq.identity)
			h.Write([]byte{0})
			fq.pqs = append(fq.pqs, pq)
			fq.Streams = append(fq.Streams, &fanout.Stream{Partition: pq.partition})
		}
	}
	fq.index = fq.pqs[0].index
	fq.PartitionKey, fq.SortKey, fq.KeyAttrs = fq.index.PartitionKey, fq.index.SortKey, e.table.cursorAttrs(fq.index)
	copy(fq.identity[:], h.Sum(nil))
	return nil
}

func setTime(sv reflect.Value, f *codec.Field, d time.Time) {
	fv := sv.FieldByIndex(f.Index)
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	fv.Set(reflect.ValueOf(d))
}

// fanoutPage merges one page from the streams (internal/fanout), decoding the
// items through the read path's phases as Query reads: items of another type are
// skipped, items read through an index are migrated in memory only (an index may
// not hold every attribute: never written back), and items an index holds
// without their type are this entity's when their primary key parses.
func (e *entity) fanoutPage(ctx context.Context, fq *fanoutQuery, items reflect.Value) (pageInfo, error) {
	fq.Serial = explaining(ctx) != nil // explain.go: one at a time, in shard order
	sl := wire.NewSlice(items)
	res, err := fq.Next(ctx, func(ctx context.Context, i int, item fanout.Item) (bool, error) {
		kept, err := fq.pqs[i].plan.readInto(ctx, item, &sl) // readpath.go
		if err != nil {
			return false, errorf("QueryShards %s: %w", e.info.name, err)
		}
		return kept, nil
	})
	if err != nil {
		sl.Reset()
		return pageInfo{}, err
	}
	if sl.Len() == 0 {
		items.Elem().SetZero() // no item kept: Items is nil, as the merge has always left it
	}
	page := pageInfo{pageMeta: pageMeta{scanned: res.Scanned, capacity: res.Capacity}, partial: fq.pqs[0].plan.partial, read: true}
	if res.More {
		if page.cursor, err = e.table.encodeFanoutCursor(fq); err != nil {
			sl.Reset()
			return pageInfo{}, err
		}
	}
	return page, fq.Failure()
}

// shardPage reads the page of one partition of a fan-out query that starts at
// start, of at most limit items (0: the query's own limit).
func (t *Table) shardPage(ctx context.Context, pq *preparedQuery, start fanout.Item, limit int) (fanout.Page, error) {
	in := pq.in
	in.ExclusiveStartKey = start
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	ctx, end := t.StartSpan(ctx, Span{Kind: SpanShard, Name: "QueryShards", Key: pq.partition}) // trace.go
	out, err := t.client.Query(ctx, &in)
	end(SpanEnd{Err: err, Items: wrap.Returned(out)})
	if err != nil {
		return fanout.Page{}, err
	}
	if pq.treeRoot != "" {
		out.Items = t.keepTree(out.Items, pq)
	}
	p := fanout.Page{Items: out.Items, Last: out.LastEvaluatedKey}
	if cc := out.ConsumedCapacity; cc != nil && cc.CapacityUnits != nil {
		p.Units = *cc.CapacityUnits
	}
	return p, nil
}

// encodeFanoutCursor seals the cursor that resumes fq (internal/fanout).
func (t *Table) encodeFanoutCursor(fq *fanoutQuery) (string, error) {
	return fq.Seal(t.opts.CursorSecret, (*tableKeys)(t), cursorID(fq.identity[:cursorIDLen]))
}

func (t *Table) decodeFanoutCursor(c string, fq *fanoutQuery) error {
	return fq.Open(t.opts.CursorSecret, (*tableKeys)(t), cursorID(fq.identity[:cursorIDLen]), c, ErrInvalidCursor)
}
