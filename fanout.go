package singletable

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/cursor"
	"github.com/singletable/singletable/internal/keytmpl"
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

// shardStream is one partition of a fan-out query.
type shardStream struct {
	pq      *preparedQuery
	start   map[string]types.AttributeValue // where the next page starts
	buf     []map[string]types.AttributeValue
	pos     map[string]types.AttributeValue // key of the last item consumed, or the start
	done    bool                            // no page after buf
	failed  error
	fetched bool
	stuck   int     // pages in a row that ended where they started
	units   float64 // read capacity consumed by fetches not yet reported
	// exempt: the stream failed on an earlier page (AllowPartial), so its items
	// before the merge boundary were never returned and are not skipped.
	exempt bool
}

// fetch reads the stream's next page, of at most limit items (0: the query's own
// limit).
func (s *shardStream) fetch(ctx context.Context, t *Table, what string, limit int) {
	in := s.pq.in
	in.ExclusiveStartKey = s.start
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	ctx, end := t.StartSpan(ctx, Span{Kind: SpanShard, Name: "QueryShards", Key: s.pq.partition}) // trace.go
	out, err := t.client.Query(ctx, &in)
	end(SpanEnd{Err: err, Items: wrap.Returned(out)})
	s.fetched = true
	if err != nil {
		s.failed = fmt.Errorf("singletable: QueryShards %s on %s: %w", what, s.pq.partition, err)
		return
	}
	if s.pq.treeRoot != "" {
		out.Items = t.keepTree(out.Items, s.pq)
	}
	if out.ConsumedCapacity != nil && out.ConsumedCapacity.CapacityUnits != nil {
		s.units += *out.ConsumedCapacity.CapacityUnits
	}
	if len(out.Items) == 0 && len(out.LastEvaluatedKey) > 0 && reflect.DeepEqual(out.LastEvaluatedKey, in.ExclusiveStartKey) {
		// DynamoDB reads at least one item a page; a client that keeps answering
		// otherwise would have the fan-out read forever.
		if s.stuck++; s.stuck >= 3 {
			s.failed = fmt.Errorf("singletable: QueryShards %s on %s: %d pages in a row ended where they started: no progress", what, s.pq.partition, s.stuck)
		}
		return
	}
	s.stuck = 0
	s.buf = append(s.buf, out.Items...)
	s.start = out.LastEvaluatedKey
	s.done = len(out.LastEvaluatedKey) == 0
}

// mergePos is a position in the merged order: a sort key, ties broken by stream.
type mergePos struct {
	sk     string
	stream int
}

// after reports whether (sk, stream) comes after p in the merge order.
func (p *mergePos) after(sk string, stream int, desc bool) bool {
	if sk != p.sk {
		return (sk > p.sk) != desc
	}
	return stream > p.stream
}

// mergeHeap orders the heads of the streams by sort key.
type mergeHeap struct {
	streams []*shardStream
	idx     []int // streams with a buffered head
	attr    string
	desc    bool
}

func (h *mergeHeap) Len() int { return len(h.idx) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.head(h.idx[i]), h.head(h.idx[j])
	if a != b {
		return (a < b) != h.desc
	}
	return h.idx[i] < h.idx[j]
}
func (h *mergeHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *mergeHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *mergeHeap) Pop() any {
	n := len(h.idx) - 1
	x := h.idx[n]
	h.idx = h.idx[:n]
	return x
}
func (h *mergeHeap) head(i int) string {
	s, _ := h.streams[i].buf[0][h.attr].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

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
func (e *Entity[T]) QueryShards(ctx context.Context, key T, opts ...ShardQueryOption) (_ Page[T], err error) {
	ctx, done := e.begin(ctx, "QueryShards")
	defer done(&err)
	fq, err := e.prepareFanout(key, opts)
	if err != nil {
		return Page[T]{}, err
	}
	e.table.event(ctx, SpanEvent{Name: EventFanout, Items: len(fq.streams)}) // trace.go
	return e.fanoutPage(ctx, fq)
}

// AllShards iterates over every item of a fan-out query, page after page, as
// [Entity.QueryShards] merges them. It stops at the first error. As it reads
// everything, it asks each partition for whole pages of [Limit] items (not a
// share of one) and keeps what a partition returned from page to page: every item
// is read once. Like [Entity.All], it refuses an index whose items would be
// partial.
func (e *Entity[T]) AllShards(ctx context.Context, key T, opts ...ShardQueryOption) iter.Seq2[T, error] {
	return spanned(ctx, e.begin, "AllShards", func(ctx context.Context, yield func(T, error) bool) {
		var zero T
		fq, err := e.prepareFanout(key, opts)
		if err == nil && fq.streams[0].pq.plan.partial {
			err = e.table.refuseIterPartial("AllShards", e.info.name, fq.index, "page through it with QueryShards (Page.Partial says so)")
		}
		if err != nil {
			yield(zero, err)
			return
		}
		e.table.event(ctx, SpanEvent{Name: EventFanout, Items: len(fq.streams)})
		fq.whole = true
		for {
			var page Page[T]
			page, err = e.fanoutPage(ctx, fq)
			if err != nil {
				// With AllowPartial, what the other partitions gave comes first.
				for _, v := range page.Items {
					if !yield(v, nil) {
						return
					}
				}
				yield(zero, err)
				return
			}
			for _, v := range page.Items {
				if !yield(v, nil) {
					return
				}
			}
			if page.Cursor == "" {
				return
			}
		}
	})
}

// fanoutQuery is a prepared fan-out query; its streams keep their positions from
// page to page.
type fanoutQuery struct {
	streams []*shardStream
	// boundary is the merge position of the last item returned: on a resumed page,
	// items at or before it (written meanwhile) are skipped, so pages stay in order.
	boundary *mergePos
	index    Index
	limit    int
	desc     bool
	parallel int
	partial  bool
	// whole: read whole pages (Limit items) from each partition, for AllShards,
	// which keeps what a partition returned from page to page and so reads
	// every item once in any case.
	whole    bool
	identity [32]byte
}

func (e *Entity[T]) prepareFanout(key T, opts []ShardQueryOption) (*fanoutQuery, error) {
	info := e.info
	var o queryOptions
	if err := applyOptions(&o, "QueryShards", info.name, opts, ShardQueryOption.applyShardQuery); err != nil {
		return nil, err
	}
	o.fixInstant(e.table) // every partition judges expiry at one instant (readpath.go)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("singletable: QueryShards %s: "+format, append([]any{info.name}, args...)...)
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
	fq := &fanoutQuery{limit: int(o.limit), desc: o.desc, parallel: 16, partial: o.partial}
	if o.parallel > 0 {
		fq.parallel = o.parallel
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
func (e *Entity[T]) fanoutDayField(o *queryOptions) (*codec.Field, error) {
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
func (e *Entity[T]) fanoutStreams(fq *fanoutQuery, key T, o *queryOptions, dayField *codec.Field) error {
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
			cp := key
			sv := reflect.ValueOf(&cp).Elem()
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
			fq.streams = append(fq.streams, &shardStream{pq: pq})
		}
	}
	fq.index = fq.streams[0].pq.index
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

// fanoutPage merges one page from the streams, in three phases: fill the streams
// that have nothing buffered, merge item by item (reading on where a stream runs
// dry), then seal the cursor.
func (e *Entity[T]) fanoutPage(ctx context.Context, fq *fanoutQuery) (Page[T], error) {
	// Fill every live stream that has nothing buffered, concurrently, with its
	// share of the page.
	e.refill(ctx, fq, fq.limit, func(s *shardStream) bool { return len(s.buf) == 0 })
	if err := fq.failure(); err != nil && !fq.partial {
		return Page[T]{}, err
	}
	page, err := e.merge(ctx, fq)
	if err != nil {
		return Page[T]{}, err
	}
	page.Partial = fq.streams[0].pq.plan.partial
	more := false
	for _, s := range fq.streams {
		more = more || len(s.buf) > 0 || !s.done || s.failed != nil
		page.Capacity += s.units
		s.units = 0
	}
	if more {
		c, err := e.table.encodeFanoutCursor(fq)
		if err != nil {
			return Page[T]{}, err
		}
		page.Cursor = c
	}
	if err := fq.failure(); err != nil {
		return page, err
	}
	return page, nil
}

// merge takes items from the streams' heads in merge order until the page is full
// or every stream is spent.
func (e *Entity[T]) merge(ctx context.Context, fq *fanoutQuery) (Page[T], error) {
	h := &mergeHeap{streams: fq.streams, attr: fq.index.SortKey, desc: fq.desc}
	if h.attr == "" {
		h.attr = fq.index.PartitionKey
	}
	for i, s := range fq.streams {
		if len(s.buf) > 0 {
			h.idx = append(h.idx, i)
		}
	}
	heap.Init(h)
	var page Page[T]
	attrs := e.table.cursorAttrs(fq.index)
	for h.Len() > 0 && (fq.limit == 0 || len(page.Items) < fq.limit) {
		i := h.idx[0]
		s := fq.streams[i]
		if err := e.take(ctx, fq, &page, s, i, h.head(i), attrs); err != nil {
			return Page[T]{}, err
		}
		if len(s.buf) == 0 && !s.done && s.failed == nil && (fq.limit == 0 || len(page.Items) < fq.limit) {
			// Its next item may come before every other head: read on, and top up
			// at the same time the streams that are about to run dry too (as the
			// partitions of the newest day do when reading newest first).
			low := (fq.share(fq.limit) + 1) / 2
			e.refill(ctx, fq, fq.limit-len(page.Items), func(o *shardStream) bool { return o == s || len(o.buf) < low })
			if err := fq.failure(); err != nil && !fq.partial {
				return Page[T]{}, err // this partition, or another topped up with it
			}
		}
		if len(s.buf) > 0 {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return page, nil
}

// take consumes the head item of stream s (number i, sort key sk), adding it to
// the page unless it is of another type or comes at or before the boundary of the
// previous page (written since).
func (e *Entity[T]) take(ctx context.Context, fq *fanoutQuery, page *Page[T], s *shardStream, i int, sk string, attrs []string) error {
	item := s.buf[0]
	s.buf = s.buf[1:]
	s.pos = keyOf(item, attrs)
	page.Scanned++
	if s.exempt && fq.boundary != nil && fq.boundary.after(sk, i, fq.desc) {
		s.exempt = false // caught up with the pass
	}
	if fq.boundary != nil && !s.exempt && !fq.boundary.after(sk, i, fq.desc) {
		return nil // written since the previous page, before its end: not in this pass
	}
	// Through the read path's phases, as Query reads: items of another type are
	// skipped, items read through an index are migrated in memory only (an index
	// may not hold every attribute: never written back), and items an index holds
	// without their type are this entity's when their primary key parses.
	v, verdict, err := readAs[T](ctx, &s.pq.plan, item) // readpath.go
	if err != nil {
		return fmt.Errorf("singletable: QueryShards %s: %w", e.info.name, err)
	}
	if verdict != itemRead {
		return nil
	}
	fq.boundary = &mergePos{sk: sk, stream: i}
	page.Items = append(page.Items, v)
	return nil
}

// share is how many items to ask each of k partitions for when n more items are
// wanted (0: no limit): n/k with half as much again and two more, so that evenly
// spread partitions rarely need a second request, and never more than n. Reading
// n from every partition would cost k times the page in read capacity.
func share(n, k int) int {
	if n <= 0 {
		return 0
	}
	return min(n, (n*3+2*k-1)/(2*k)+2)
}

// share is the first request's size per partition for a page of n items.
func (fq *fanoutQuery) share(n int) int { return share(n, len(fq.streams)) }

// refill reads the next page of every live stream that want selects,
// concurrently (at most fq.parallel at a time), sharing n more items between them.
func (e *Entity[T]) refill(ctx context.Context, fq *fanoutQuery, n int, want func(*shardStream) bool) {
	var todo []*shardStream
	for _, s := range fq.streams {
		if (s.done && s.fetched) || s.failed != nil || !want(s) {
			continue
		}
		todo = append(todo, s)
	}
	if len(todo) == 0 {
		return
	}
	limit := 0
	switch {
	case fq.whole:
		limit = fq.limit
	case fq.limit > 0:
		limit = share(n, len(todo))
		if len(todo) < len(fq.streams) {
			// Topping up: at least a first request's worth, so that one skewed
			// partition does not take many small requests.
			limit = min(n, max(limit, fq.share(fq.limit)))
		}
	}
	for len(todo) > 0 {
		if len(todo) == 1 || explaining(ctx) != nil { // explain.go: one at a time, in shard order
			for _, s := range todo {
				s.fetch(ctx, e.table, e.info.name, limit)
			}
		} else {
			var wg sync.WaitGroup
			sem := make(chan struct{}, fq.parallel)
			for _, s := range todo {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					s.fetch(ctx, e.table, e.info.name, limit)
				}()
			}
			wg.Wait()
		}
		// A page that a filter emptied, with more after it: read on, or the
		// merge would pass over the partition's next items; twice as much each
		// time (up to 1,000 items), so a selective filter takes few requests.
		todo = slices.DeleteFunc(todo, func(s *shardStream) bool { return len(s.buf) > 0 || s.done || s.failed != nil })
		if limit > 0 {
			limit = max(limit, min(2*limit, 1000))
		}
		if err := ctx.Err(); err != nil {
			for _, s := range todo {
				s.failed = fmt.Errorf("singletable: QueryShards %s on %s: %w", e.info.name, s.pq.partition, err)
			}
			return
		}
	}
}

func keyOf(item map[string]types.AttributeValue, attrs []string) map[string]types.AttributeValue {
	k := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		k[a] = item[a]
	}
	return k
}

// failure gathers the streams' errors.
func (fq *fanoutQuery) failure() error {
	var se ShardError
	for _, s := range fq.streams {
		if s.failed != nil {
			se.Partitions = append(se.Partitions, s.pq.partition)
			se.Errs = append(se.Errs, s.failed)
		}
	}
	if len(se.Errs) == 0 {
		return nil
	}
	return &se
}

// A fan-out cursor records, per partition, where the next page starts. Its
// payload, in the envelope of sealCursor (kind fanoutCursorVersion):
//
//	boundary | per partition: state(1) [| per key attribute: uvarint(len) value]
//
// boundary is 0, or 1 | uvarint(stream) | uvarint(len) sort key: the merge position
// of the last item returned. state 0: not read yet; 1: after the key that follows;
// 2: read to the end; 3 and 4: as 0 and 1 for a partition that failed, whose items
// before the boundary are still to be returned.

func (t *Table) encodeFanoutCursor(fq *fanoutQuery) (string, error) {
	attrs := t.cursorAttrs(fq.index)
	payload := cursor.Begin(fanoutCursorVersion, cursorID(fq.identity[:cursorIDLen]))
	if b := fq.boundary; b != nil {
		payload = append(payload, 1)
		payload = cursor.AppendText(binary.AppendUvarint(payload, uint64(b.stream)), b.sk)
	} else {
		payload = append(payload, 0)
	}
	for _, s := range fq.streams {
		pos := s.pos
		exempt := byte(0)
		switch {
		case s.failed == nil && len(s.buf) == 0 && s.done && s.fetched:
			// Read to the end (also after failing on an earlier page).
			payload = append(payload, 2)
			continue
		case s.failed != nil || s.exempt:
			exempt = 3 // resume where it stood, without skipping to the boundary
		}
		if pos == nil {
			payload = append(payload, 0+exempt)
			continue
		}
		payload = append(payload, 1+exempt)
		var err error
		if payload, err = t.appendKeyValues(payload, attrs, pos); err != nil {
			return "", fmt.Errorf("singletable: cursor: %w", err)
		}
	}
	return t.sealCursor(payload), nil
}

func (t *Table) decodeFanoutCursor(c string, fq *fanoutQuery) error {
	rest, err := t.openCursor(fanoutCursorVersion, cursorID(fq.identity[:cursorIDLen]), c)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return fmt.Errorf("%w: truncated", ErrInvalidCursor)
	}
	if rest[0] == 1 {
		rest = rest[1:]
		stream, w := binary.Uvarint(rest)
		if w <= 0 || stream >= uint64(len(fq.streams)) {
			return fmt.Errorf("%w: bad boundary", ErrInvalidCursor)
		}
		rest = rest[w:]
		sk, after, ok := cursor.ReadText(rest)
		if !ok {
			return fmt.Errorf("%w: bad boundary", ErrInvalidCursor)
		}
		fq.boundary = &mergePos{stream: int(stream), sk: sk}
		rest = after
	} else if rest[0] == 0 {
		rest = rest[1:]
	} else {
		return fmt.Errorf("%w: bad boundary", ErrInvalidCursor)
	}
	attrs := t.cursorAttrs(fq.index)
	for _, s := range fq.streams {
		if len(rest) == 0 {
			return fmt.Errorf("%w: truncated", ErrInvalidCursor)
		}
		state := rest[0]
		rest = rest[1:]
		if state >= 3 {
			s.exempt = true
			state -= 3
		}
		switch state {
		case 0:
		case 2:
			s.done, s.fetched = true, true
		case 1:
			start, after, ok := t.readKeyValues(rest, attrs)
			if !ok {
				return fmt.Errorf("%w: truncated", ErrInvalidCursor)
			}
			rest = after
			if got, _ := keytmpl.TextOf(start[fq.index.PartitionKey]); got != s.pq.partition {
				return fmt.Errorf("%w: it points into another partition", ErrInvalidCursor)
			}
			s.start, s.pos = start, start
		default:
			return fmt.Errorf("%w: bad partition state", ErrInvalidCursor)
		}
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: trailing bytes", ErrInvalidCursor)
	}
	return nil
}
