// Package fanout is the engine of the root package's fan-out queries
// (QueryShards, AllShards): one stream per partition, each read a page at a
// time and concurrently, the streams' heads merged in sort key order, the
// shares each partition is asked for, the failures gathered, and the cursor that
// resumes every stream. The root renders the partitions, reads a page of one
// ([Query.Fetch]) and decodes an item (the decode function of [Merge]); this
// package knows neither entities nor types.
package fanout

import (
	"container/heap"
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is an item, or a key, as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// Stream is one partition of a fan-out query.
type Stream struct {
	Partition string // the partition key's value, as errors and the cursor name it
	Start     Item   // where the next page starts
	Buf       []Item
	Pos       Item // key of the last item consumed, or the start
	Done      bool // no page after Buf
	Failed    error
	Fetched   bool
	stuck     int     // pages in a row that ended where they started
	Units     float64 // read capacity consumed by fetches not yet reported
	// Exempt: the stream failed on an earlier page (AllowPartial), so its items
	// before the merge boundary were never returned and are not skipped.
	Exempt bool
}

// Page is what [Query.Fetch] read of one stream: its items (those of the
// stream's query only), where the next page starts (nil at the end) and the read
// capacity it consumed.
type Page struct {
	Items []Item
	Last  Item
	Units float64
}

// Query is a prepared fan-out query; its streams keep their positions from page
// to page.
type Query struct {
	Streams []*Stream
	// Boundary is the merge position of the last item returned: on a resumed
	// page, items at or before it (written meanwhile) are skipped, so pages stay
	// in order.
	Boundary *Pos
	// PartitionKey and SortKey are the queried index's key attributes; the
	// merge orders by SortKey (by PartitionKey when there is none). KeyAttrs are
	// the attributes of a stream's position, in the cursor's order.
	PartitionKey, SortKey string
	KeyAttrs              []string
	Limit                 int
	Desc                  bool
	Parallel              int
	Partial               bool
	// Whole: read whole pages (Limit items) from each partition, for AllShards,
	// which keeps what a partition returned from page to page and so reads every
	// item once in any case.
	Whole bool
	// Name is the entity's name, as errors give it.
	Name string
	// Fetch reads the page of stream i that starts at start, of at most limit
	// items (0: the query's own limit).
	Fetch func(ctx context.Context, i int, start Item, limit int) (Page, error)
	// Serial reads the streams one at a time, in order (Explain).
	Serial bool
	// Fail makes the error of the streams that failed: their partitions and
	// errors, in stream order.
	Fail func(partitions []string, errs []error) error
}

// fetch reads stream i's next page, of at most limit items.
func (q *Query) fetch(ctx context.Context, i int, limit int) {
	s := q.Streams[i]
	p, err := q.Fetch(ctx, i, s.Start, limit)
	s.Fetched = true
	if err != nil {
		s.Failed = fmt.Errorf("singletable: QueryShards %s on %s: %w", q.Name, s.Partition, err)
		return
	}
	s.Units += p.Units
	if len(p.Items) == 0 && len(p.Last) > 0 && reflect.DeepEqual(p.Last, s.Start) {
		// DynamoDB reads at least one item a page; a client that keeps answering
		// otherwise would have the fan-out read forever.
		if s.stuck++; s.stuck >= 3 {
			s.Failed = fmt.Errorf("singletable: QueryShards %s on %s: %d pages in a row ended where they started: no progress", q.Name, s.Partition, s.stuck)
		}
		return
	}
	s.stuck = 0
	s.Buf = append(s.Buf, p.Items...)
	s.Start = p.Last
	s.Done = len(p.Last) == 0
}

// Pos is a position in the merged order: a sort key, ties broken by stream.
type Pos struct {
	SK     string
	Stream int
}

// after reports whether (sk, stream) comes after p in the merge order.
func (p *Pos) after(sk string, stream int, desc bool) bool {
	if sk != p.SK {
		return (sk > p.SK) != desc
	}
	return stream > p.Stream
}

// mergeHeap orders the heads of the streams by sort key.
type mergeHeap struct {
	streams []*Stream
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
	s, _ := h.streams[i].Buf[0][h.attr].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// Result is one merged page: the items decoded, how many were read, the read
// capacity of the fetches, and whether another page may follow.
type Result[V any] struct {
	Items    []V
	Scanned  int
	Capacity float64
	More     bool
}

// Decode decodes the item of stream i; ok false skips it (not of the query's
// type).
type Decode[V any] func(ctx context.Context, i int, item Item) (v V, ok bool, err error)

// Next is [Query.Next] with the values decode returns gathered in a slice.
func Next[V any](ctx context.Context, q *Query, decode Decode[V]) (Result[V], error) {
	var res Result[V]
	r, err := q.Next(ctx, func(ctx context.Context, i int, item Item) (bool, error) {
		v, ok, err := decode(ctx, i, item)
		if err == nil && ok {
			res.Items = append(res.Items, v)
		}
		return ok, err
	})
	if err != nil {
		return Result[V]{}, err
	}
	res.Scanned, res.Capacity, res.More = r.Scanned, r.Capacity, r.More
	return res, nil
}

// Merged is what [Query.Next] read beyond the items: how many it kept, how many
// it read, the capacity and whether there is more.
type Merged struct {
	Kept     int
	Scanned  int
	Capacity float64
	More     bool
}

// Keep decodes the item of stream i and keeps its value where the caller
// gathers them; ok false skips it (not of the query's type). It is compiled
// once, whatever the Go type of the values.
type Keep func(ctx context.Context, i int, item Item) (ok bool, err error)

// Next merges one page from the streams, in three phases: fill the streams that
// have nothing buffered, merge item by item (reading on where a stream runs
// dry), then total what was read. Its error is keep's, or the streams'
// failure ([Query.Failure]) when q is not Partial.
func (q *Query) Next(ctx context.Context, keep Keep) (Merged, error) {
	// Fill every live stream that has nothing buffered, concurrently, with its
	// share of the page.
	q.refill(ctx, q.Limit, func(s *Stream) bool { return len(s.Buf) == 0 })
	if err := q.Failure(); err != nil && !q.Partial {
		return Merged{}, err
	}
	res, err := merge(ctx, q, keep)
	if err != nil {
		return Merged{}, err
	}
	for _, s := range q.Streams {
		res.More = res.More || len(s.Buf) > 0 || !s.Done || s.Failed != nil
		res.Capacity += s.Units
		s.Units = 0
	}
	return res, nil
}

// merge takes the streams' heads in sort key order until the page is full or
// the streams run dry, reading on where one runs dry before the others.
func merge(ctx context.Context, q *Query, keep Keep) (Merged, error) {
	h := &mergeHeap{streams: q.Streams, attr: q.SortKey, desc: q.Desc}
	if h.attr == "" {
		h.attr = q.PartitionKey
	}
	for i, s := range q.Streams {
		if len(s.Buf) > 0 {
			h.idx = append(h.idx, i)
		}
	}
	heap.Init(h)
	var res Merged
	for h.Len() > 0 && (q.Limit == 0 || res.Kept < q.Limit) {
		i := h.idx[0]
		s := q.Streams[i]
		if err := take(ctx, q, &res, i, h.head(i), keep); err != nil {
			return Merged{}, err
		}
		if len(s.Buf) == 0 && !s.Done && s.Failed == nil && (q.Limit == 0 || res.Kept < q.Limit) {
			// Its next item may come before every other head: read on, and top up
			// at the same time the streams that are about to run dry too (as the
			// partitions of the newest day do when reading newest first).
			low := (q.share(q.Limit) + 1) / 2
			q.refill(ctx, q.Limit-res.Kept, func(o *Stream) bool { return o == s || len(o.Buf) < low })
			if err := q.Failure(); err != nil && !q.Partial {
				return Merged{}, err // this partition, or another topped up with it
			}
		}
		if len(s.Buf) > 0 {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return res, nil
}

// take takes the head of stream i (its sort key sk) and keeps it when it is in
// this pass and of the query's type.
func take(ctx context.Context, q *Query, res *Merged, i int, sk string, keep Keep) error {
	s := q.Streams[i]
	item := s.Buf[0]
	s.Buf = s.Buf[1:]
	s.Pos = keyOf(item, q.KeyAttrs)
	res.Scanned++
	if s.Exempt && q.Boundary != nil && q.Boundary.after(sk, i, q.Desc) {
		s.Exempt = false // caught up with the pass
	}
	if q.Boundary != nil && !s.Exempt && !q.Boundary.after(sk, i, q.Desc) {
		return nil // written since the previous page, before its end: not in this pass
	}
	ok, err := keep(ctx, i, item)
	if err != nil || !ok {
		return err
	}
	q.Boundary = &Pos{SK: sk, Stream: i}
	res.Kept++
	return nil
}

// Share is how many items to ask each of k partitions for when n more items
// are wanted (0: no limit): n/k with half as much again and two more, so that
// evenly spread partitions rarely need a second request, and never more than n.
// Reading n from every partition would cost k times the page in read capacity.
func Share(n, k int) int {
	if n <= 0 {
		return 0
	}
	return min(n, (n*3+2*k-1)/(2*k)+2)
}

// share is the first request's size per partition for a page of n items.
func (q *Query) share(n int) int { return Share(n, len(q.Streams)) }

// refill reads the next page of every live stream that want selects,
// concurrently (at most q.Parallel at a time), sharing n more items between
// them.
func (q *Query) refill(ctx context.Context, n int, want func(*Stream) bool) {
	var todo []int
	for i, s := range q.Streams {
		if (s.Done && s.Fetched) || s.Failed != nil || !want(s) {
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return
	}
	limit := 0
	switch {
	case q.Whole:
		limit = q.Limit
	case q.Limit > 0:
		limit = Share(n, len(todo))
		if len(todo) < len(q.Streams) {
			// Topping up: at least a first request's worth, so that one skewed
			// partition does not take many small requests.
			limit = min(n, max(limit, q.share(q.Limit)))
		}
	}
	for len(todo) > 0 {
		if len(todo) == 1 || q.Serial { // one at a time, in shard order
			for _, i := range todo {
				q.fetch(ctx, i, limit)
			}
		} else {
			var wg sync.WaitGroup
			sem := make(chan struct{}, q.Parallel)
			for _, i := range todo {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					q.fetch(ctx, i, limit)
				}()
			}
			wg.Wait()
		}
		// A page that a filter emptied, with more after it: read on, or the
		// merge would pass over the partition's next items; twice as much each
		// time (up to 1,000 items), so a selective filter takes few requests.
		todo = slices.DeleteFunc(todo, func(i int) bool {
			s := q.Streams[i]
			return len(s.Buf) > 0 || s.Done || s.Failed != nil
		})
		if limit > 0 {
			limit = max(limit, min(2*limit, 1000))
		}
		if err := ctx.Err(); err != nil {
			for _, i := range todo {
				q.Streams[i].Failed = fmt.Errorf("singletable: QueryShards %s on %s: %w", q.Name, q.Streams[i].Partition, err)
			}
			return
		}
	}
}

func keyOf(item Item, attrs []string) Item {
	k := make(Item, len(attrs))
	for _, a := range attrs {
		k[a] = item[a]
	}
	return k
}

// Failure gathers the streams' errors through q.Fail; nil when none failed.
func (q *Query) Failure() error {
	var parts []string
	var errs []error
	for _, s := range q.Streams {
		if s.Failed != nil {
			parts = append(parts, s.Partition)
			errs = append(errs, s.Failed)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return q.Fail(parts, errs)
}

// All yields the items of page after page (next returns a page's items and
// whether another page follows) until the last, or until yield returns false.
// A page that fails yields its items first (those of the partitions that
// answered, with AllowPartial), then its error, and ends the iteration.
func All[V any](next func() ([]V, bool, error), yield func(V, error) bool) {
	for {
		items, more, err := next()
		for _, v := range items {
			if !yield(v, nil) {
				return
			}
		}
		if err != nil {
			var zero V
			yield(zero, err)
			return
		}
		if !more {
			return
		}
	}
}
