package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Scans: every item of the table (or of an index), page after page.
//
// What a Scan costs: it reads every item of the table or index, of every entity
// type, whatever it returns: 0.5 RCU per 4 KB read (1 with Consistent), summed
// over each page (up to 1 MB a page). A filter, including the type filter of an
// entity scan, is applied after the read: it saves network, not capacity. A scan
// of a table holding a million 1 KB items costs about 125,000 RCUs, whether it
// returns one item or all. Prefer a Query wherever a key can say which items are
// wanted; scan for exports, migrations, audits and small tables.

type segmentsOption int

func (n segmentsOption) check() error {
	if n < 1 || n > 1000000 {
		return fmt.Errorf("Segments(%d): want 1 to 1,000,000: %w", int(n), ErrInvalidInput)
	}
	return nil
}

func (n segmentsOption) applySweep(o *sweepOptions) error {
	o.Total = int(n)
	return n.check()
}

func (n segmentsOption) applyScan(o *queryOptions) error {
	o.segments = int(n)
	return n.check()
}

func (n segmentsOption) applyTableScan(o *queryOptions) error { return n.applyScan(o) }

type segmentOption int

func (i segmentOption) applySweep(o *sweepOptions) error {
	return SegmentRange(int(i), int(i)+1).applySweep(o)
}

func (i segmentOption) applyScan(o *queryOptions) error {
	if i < 0 {
		return fmt.Errorf("Segment(%d): want 0 or more: %w", int(i), ErrInvalidInput)
	}
	o.segment, o.segmentSet = int(i), true
	return nil
}

func (i segmentOption) applyTableScan(o *queryOptions) error { return i.applyScan(o) }

// Scan reads one page of the entity's items in the whole table (one Scan call,
// with a filter on the type attribute), or with [On] in an index. For a parallel
// scan, give [Segments] (the total) and [Segment] (this call's, 0 to total-1):
// DynamoDB splits the table into that many segments, each read by its own calls
// (goroutines or processes), every item in exactly one segment. The page's Cursor
// resumes this segment ([After]) and no other. Items are in no useful order.
//
// Cost: every item of the table is read, of every type, whatever the type filter
// and any [Filter] keep: 0.5 RCU per 4 KB (1 with [Consistent]); Scanned says how
// many were read, [ReturnCapacity] what they cost. [Limit] caps the items read
// per page, not those returned. Older items are migrated and written back as on
// every read of whole items; items read through an index that does not hold every
// field are partial (Page.Partial) and never written back.
//
//go:noinline
func (e *Entity[T]) Scan(ctx context.Context, opts ...ScanOption) (_ Page[T], err error) {
	var page Page[T]
	err = e.core().scan(ctx, opts, nil, elem(&page))
	return page, err
}

// scan is Scan, and with p a projected Scan: the page is read into page, a
// Page[T] (a Page[Partial[T]] with p), left zero on an error.
func (e *entity) scan(ctx context.Context, opts []ScanOption, p *projection, page reflect.Value) (err error) {
	if err := e.refused("Scan"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Scan")
	defer done(&err)
	pq, err := e.prepareScan(opts, p)
	if err != nil {
		return err
	}
	if p == nil {
		r, err := e.queryPage(ctx, pq, nil, page.Field(pageItems).Addr())
		return fillPage(page, r, err)
	}
	items := reflect.New(reflect.SliceOf(e.info.goType))
	r, err := e.queryPage(ctx, pq, nil, items)
	return p.projectedPage(page, items.Elem(), r, err)
}

// ScanAll iterates over every item [Entity.Scan] with the same options would
// return, page after page (one Scan call a page; the cost of Scan). With
// [Segments] and [Segment] it reads one segment. It stops at the first error,
// which it yields with a zero T.
//
//go:noinline
func (e *Entity[T]) ScanAll(ctx context.Context, opts ...ScanOption) iter.Seq2[T, error] {
	c := e.core()
	return func(yield func(T, error) bool) {
		var items []T
		p := c.scanAll(ctx, opts, nil, ptrTo(&items))
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

// scanAll is ScanAll's pager (a projected ScanAll's with p), reading each page
// into the slice items points to.
func (e *entity) scanAll(ctx context.Context, opts []ScanOption, p *projection, items reflect.Value) *pager {
	if err := e.refused("ScanAll"); err != nil {
		return newPager(items, nil, noDone, err)
	}
	ctx, done := e.begin(ctx, "ScanAll")
	pq, err := e.prepareScan(opts, p)
	if err == nil && p == nil && pq.plan.partial {
		err = e.table.refuseIterPartial("ScanAll", e.info.name, pq.index, "page through it with Scan (Page.Partial says so), or iterate with Project(...).ScanAll (values of type Partial)")
	}
	return e.pager(ctx, pq, items, err, done)
}

// Scan reads one page of a projected scan: [Entity.Scan] reading only the
// projection's attributes (at the same cost: the items are read whole).
//
//go:noinline
func (p *Projection[T]) Scan(ctx context.Context, opts ...ScanOption) (_ Page[Partial[T]], err error) {
	var page Page[Partial[T]]
	err = p.x.e.scan(ctx, opts, &p.x, elem(&page))
	return page, err
}

// ScanAll iterates over every item of a projected scan, page after page.
//
//go:noinline
func (p *Projection[T]) ScanAll(ctx context.Context, opts ...ScanOption) iter.Seq2[Partial[T], error] {
	c := p.x
	return func(yield func(Partial[T], error) bool) {
		var items []T
		pg := c.e.scanAll(ctx, opts, &c, ptrTo(&items))
		defer pg.close() // the span ends however the loop ends, a panic in it too
		for pg.next() {
			for _, v := range items {
				if !yield(Partial[T]{Value: v, Attributes: c.attrs}, nil) {
					return
				}
			}
		}
		if err := pg.failed(); err != nil {
			yield(Partial[T]{}, err)
		}
	}
}

// prepareScan applies an entity scan's options (and a projection's, when p is
// set) and prepares it.
func (e *entity) prepareScan(opts []ScanOption, p *projection) (*preparedQuery, error) {
	var o queryOptions
	if err := applyOptions(&o, "Scan", e.info.name, opts, ScanOption.applyScan); err != nil {
		return nil, err
	}
	if p != nil {
		if p.err != nil {
			return nil, p.err
		}
		if err := p.project(&o, "Scan"); err != nil {
			return nil, err
		}
	}
	return e.table.prepareScan(e.info, &o)
}

// Scan reads one page of every item of the table (one Scan call), or with [On] of
// an index, and decodes each by its type attribute into its registered entity
// type, as [Table.Query] does; [OnUnknown] says what to do with other items (by
// default they fail the page). [Segments] and [Segment] make it one segment of a
// parallel scan, as for [Entity.Scan]. Cost: every item read, 0.5 RCU per 4 KB
// (1 with [Consistent]).
func (t *Table) Scan(ctx context.Context, opts ...TableScanOption) (_ Page[any], err error) {
	if err := t.refused("Table.Scan"); err != nil {
		return Page[any]{}, err
	}
	ctx, done := t.begin(ctx, "Scan")
	defer done(&err)
	pq, _, err := t.prepareTableScan(opts)
	if err != nil {
		return Page[any]{}, err
	}
	vals, _, meta, err := t.collectionPage(ctx, pq, nil) // wire.go
	if err != nil {
		return Page[any]{}, err
	}
	return Page[any]{Items: vals, Cursor: meta.cursor, Scanned: meta.scanned, Capacity: meta.capacity, Partial: pq.plan.partial}, nil
}

// ScanAll iterates over every item [Table.Scan] with the same options would
// return, page after page. It stops at the first error, which it yields with a
// nil value.
func (t *Table) ScanAll(ctx context.Context, opts ...TableScanOption) iter.Seq2[any, error] {
	if err := t.refused("Table.ScanAll"); err != nil {
		return func(yield func(any, error) bool) { yield(nil, err) }
	}
	return spanned(ctx, t.begin, "ScanAll", func(ctx context.Context, yield func(any, error) bool) {
		pq, _, err := t.prepareTableScan(opts)
		if err == nil && pq.plan.partial {
			err = t.refuseIterPartial("ScanAll", "table", pq.index, "page through it with Table.Scan (Page.Partial says so)")
		}
		if err != nil {
			yield(nil, err)
			return
		}
		var start map[string]types.AttributeValue
		for first := true; first || start != nil; first = false {
			vals, out, _, err := t.collectionPage(ctx, pq, start)
			for _, v := range vals {
				if !yield(v, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
				return
			}
			start = out.LastEvaluatedKey
		}
	})
}

func (t *Table) prepareTableScan(opts []TableScanOption) (*preparedQuery, *queryOptions, error) {
	o := &queryOptions{collection: true}
	if err := applyOptions(o, "Scan", "table", opts, TableScanOption.applyTableScan); err != nil {
		return nil, nil, err
	}
	pq, err := t.prepareScan(nil, o)
	return pq, o, err
}

// prepareScan validates a scan of info's items (nil: every item) and builds its
// input, in phases: the index, the segment, the filter, the input, the cursor.
func (t *Table) prepareScan(info *entityInfo, o *queryOptions) (*preparedQuery, error) {
	what := "table"
	if info != nil {
		what = info.name
	}
	fail := func(format string, args ...any) error {
		return errorf("Scan %s: "+format, append([]any{what}, args...)...)
	}
	ix, _, _, err := t.queryTemplates(info, o.index)
	if err != nil {
		return nil, fail("On(%q): %w", o.index, err)
	}
	if o.consistent && o.index != "" && !ix.Local {
		return nil, fail("global index %s does not support consistent reads (Consistent): %w", o.index, ErrInvalidInput)
	}
	if err := o.checkSegment(); err != nil {
		return nil, fail("%w", err)
	}
	pq := &preparedQuery{index: ix}
	if pq.plan, err = t.pagePlan(info, ix, o); err != nil { // readpath.go
		return nil, fail("%w", err)
	}
	var b expr.Builder
	filter, err := b.Condition(o.filter)
	if err != nil {
		return nil, fail("Filter: %w: %w", ErrInvalidInput, err)
	}
	kind := "*"
	if info != nil {
		kind = info.discriminator
		if !pq.plan.parseKeys { // items that hold their type are filtered on it by DynamoDB
			filter = expr.And(filter, info.typeIs(&b)) // adopt.go: untyped items too, for an entity that adopts them
		}
	}
	if x := pq.plan.expiry; x != nil { // SkipExpired (ttl.go)
		filter = expr.And(filter, x.filter(&b))
	}
	pq.scan = t.scanInput(&b, filter, ix, o)
	pq.identity = []byte("scan\x00" + t.name + "\x00" + o.index + "\x00" + kind + "\x00" + strconv.Itoa(o.segment) + "/" + strconv.Itoa(o.segments))
	if o.cursor != "" {
		start, err := t.openKeys(cursorVersion, cursorIDOf(pq.identity), t.cursorAttrs(ix), o.cursor)
		if err != nil {
			return nil, fail("%w", err)
		}
		pq.scan.ExclusiveStartKey = start
	}
	return pq, nil
}

// checkSegment checks Segments and Segment: both or neither, and in range.
func (o *queryOptions) checkSegment() error {
	switch {
	case o.segmentSet && o.segments == 0:
		return fmt.Errorf("Segment(%d) needs Segments(total): %w", o.segment, ErrInvalidInput)
	case o.segments > 0 && !o.segmentSet:
		return fmt.Errorf("Segments(%d) needs Segment(i), the segment this call reads (0 to %d): run one call per segment, in goroutines or processes: %w", o.segments, o.segments-1, ErrInvalidInput)
	case o.segmentSet && o.segment >= o.segments:
		return fmt.Errorf("Segment(%d) is outside Segments(%d) (0 to %d): %w", o.segment, o.segments, o.segments-1, ErrInvalidInput)
	}
	return nil
}

// scanInput builds the ScanInput of a scan.
func (t *Table) scanInput(b *expr.Builder, filter string, ix Index, o *queryOptions) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{TableName: t.namePtr(), FilterExpression: expr.Ptr(filter)}
	if ix.Name != "" {
		in.IndexName = aws.String(ix.Name)
	}
	if o.consistent {
		in.ConsistentRead = boolPtr(true)
	}
	if o.limit > 0 {
		in.Limit = aws.Int32(o.limit)
	}
	if o.capacity {
		in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	if o.segments > 0 {
		in.TotalSegments = aws.Int32(int32(o.segments))
		in.Segment = aws.Int32(int32(o.segment))
	}
	if len(o.project) > 0 {
		in.ProjectionExpression = aws.String(projectionExpression(b, o.project))
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
	return in
}
