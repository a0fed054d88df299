package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/wire"
)

// queryFunc is an option for every kind of query.
type queryFunc func(*queryOptions) error

func (f queryFunc) applyQuery(o *queryOptions) error      { return f(o) }
func (f queryFunc) applyShardQuery(o *queryOptions) error { return f(o) }
func (f queryFunc) applyCollection(o *queryOptions) error { return f(o) }

// pageFunc is an option for every kind of query and scan.
type pageFunc func(*queryOptions) error

func (f pageFunc) applyQuery(o *queryOptions) error      { return f(o) }
func (f pageFunc) applyShardQuery(o *queryOptions) error { return f(o) }
func (f pageFunc) applyCollection(o *queryOptions) error { return f(o) }
func (f pageFunc) applyScan(o *queryOptions) error       { return f(o) }
func (f pageFunc) applyTableScan(o *queryOptions) error  { return f(o) }

// applyShardQuery and applyCollection: [Consistent] (options.go) is a
// [ReadOption], and so a QueryOption; it applies to every kind of query.
func (c consistentOption) applyShardQuery(o *queryOptions) error { return c.applyQuery(o) }
func (c consistentOption) applyCollection(o *queryOptions) error { return c.applyQuery(o) }

// applyOptions applies opts with apply, naming the call ("Query") and what it reads
// (an entity, or "collection") in errors; a nil option is refused, not skipped.
func applyOptions[O any](o *queryOptions, call, what string, opts []O, apply func(O, *queryOptions) error) error {
	for i, opt := range opts {
		if any(opt) == nil {
			return errorf("%s %s: option %d is nil: %w", call, what, i+1, ErrInvalidInput)
		}
		if err := apply(opt, o); err != nil {
			return errorf("%s %s: %w", call, what, err)
		}
	}
	return nil
}

type queryOptions struct {
	index      string
	limit      int32
	desc       bool
	consistent bool
	cursor     string
	filter     expression.ConditionBuilder
	sk         *skCond
	partition  *string
	capacity   bool
	collection bool         // a query of every entity type in the partition
	unknown    UnknownTypes // what a collection query does with unregistered types
	unknownSet bool         // OnUnknown was given
	// Fan-out queries (QueryShards).
	dayAttr        string
	dayFrom, dayTo time.Time
	parallel       int
	partial        bool
	// Scans (scan.go) and counts (count.go).
	segments, segment int  // Segments(total), Segment(i); 0 and 0 when not given
	segmentSet        bool // Segment was given
	// Projections (projection.go): the attributes to read (ProjectionExpression);
	// nil reads whole items.
	project []string
	// SkipExpired (ttl.go), and the instant it judges at (zero: the table's
	// clock when the read is prepared; fixInstant).
	skipExpired bool
	now         time.Time
}

// On queries the named global secondary index instead of the base table. Index
// reads are eventually consistent; combining On with [Consistent] is an error.
func On(index string) PageOption {
	return pageFunc(func(o *queryOptions) error { o.index = index; return nil })
}

// Limit caps the number of items DynamoDB reads per page (its Limit). Items of other
// entity types and items removed by a [Filter] count towards it, so a page may hold
// fewer; the cursor resumes after the last item read.
func Limit(n int) PageOption {
	return pageFunc(func(o *queryOptions) error {
		if n <= 0 || n > 1<<31-1 {
			return fmt.Errorf("Limit(%d): want a positive limit: %w", n, ErrInvalidInput)
		}
		o.limit = int32(n)
		return nil
	})
}

// Descending returns items in descending sort key order (ScanIndexForward=false):
// newest first for time-ordered sort keys.
func Descending() QueryOption {
	return queryFunc(func(o *queryOptions) error { o.desc = true; return nil })
}

// After resumes a query after the page that returned cursor. An empty cursor starts
// from the beginning. A cursor from another query, or one altered in any way, is
// rejected with [ErrInvalidCursor] before anything is sent.
func After(cursor string) PageOption {
	return pageFunc(func(o *queryOptions) error { o.cursor = cursor; return nil })
}

// Filter adds a filter expression, built with the SDK's expression package. DynamoDB
// applies it after reading, so filtered-out items still cost read capacity and count
// towards [Limit]. A zero expression.ConditionBuilder is refused before anything
// is sent ([ErrInvalidInput]).
func Filter(cond expression.ConditionBuilder) PageOption {
	return pageFunc(func(o *queryOptions) error {
		if err := checkCondition("Filter", cond); err != nil { // options.go: a zero filter is refused
			return err
		}
		o.filter = andCond(o.filter, cond)
		return nil
	})
}

// Partition gives the partition key value as rendered text, in place of rendering it
// from the key value passed to the query.
func Partition(value string) QueryOption {
	return queryFunc(func(o *queryOptions) error { o.partition = &value; return nil })
}

// ReturnCapacity asks DynamoDB for the read capacity each page consumed
// (ReturnConsumedCapacity=TOTAL); it is reported in [Page.Capacity].
func ReturnCapacity() PageOption {
	return pageFunc(func(o *queryOptions) error { o.capacity = true; return nil })
}

// Page is one page of a query.
type Page[T any] struct {
	// Items are the page's items of this entity type, in sort key order.
	Items []T
	// Cursor resumes the query after this page (see [After]); "" when there is no more.
	Cursor string
	// Scanned counts the items DynamoDB read for the page, before the filter and the
	// type check.
	Scanned int
	// Capacity is the read capacity consumed, when [ReturnCapacity] was given.
	Capacity float64
	// Partial says the items lack attributes: the page was read through an index
	// whose projection does not hold every field of the entity (see
	// [ProjectKeysOnly], [ProjectInclude]), or with a projection ([Entity.Project]).
	// Fields not read are zero. The library never writes a partial item back (no
	// migration write-back); do not Put one either: it would erase what was not
	// read.
	Partial bool
}

// preparedQuery is a validated query, ready to run page after page.
type preparedQuery struct {
	in        dynamodb.QueryInput
	index     Index
	partition string
	identity  []byte // what a cursor must match
	treeRoot  string // with SKTree: items must have this sort key or continue it after the delimiter
	// plan is what the read does with each item (readpath.go): the type check,
	// expiry, whether items are whole (written back after a migration) or partial.
	plan readPlan
	// scan, when set, makes this a scan (scan.go): Scan is called with it instead
	// of Query with in.
	scan *dynamodb.ScanInput
	// native, for a query of a native index (multiattr_query.go), holds its
	// equalities, which a cursor must keep.
	native *nativeQuery
}

// call names the read's DynamoDB call in messages.
func (pq *preparedQuery) call() string {
	if pq.scan != nil {
		return "Scan"
	}
	return "Query"
}

// Query reads one page of the entity's items in one partition (one Query call):
// the base table's, or with [On] an index's. The partition key is rendered from
// key, which needs only the inputs of that key set (or see [Partition]). Items of
// other entity types in the partition are skipped, never decoded. Cost: 0.5 RCU per
// 4 KB read (1 with [Consistent], base table only). key is not modified.
//
// Without a sort key condition, key also narrows the sort key. When it sets the
// leading inputs of the queried sort key template, at least one of them not an
// input of the partition key, the query reads the sort keys that begin with the
// template rendered up to the first unset input, with the literal text that follows
// the last set one: with SK "ORDER#{orderId}#ITEM#{line:04}",
// LineItem{CustomerID: "c1", OrderID: "o1"} reads begins_with(SK, "ORDER#o1#ITEM#"),
// o1's items and never o10's. With every input set, it reads the one sort key
// (SK = "ORDER#o1#ITEM#0002"). An unset input is an empty string, a zero time, a
// nil pointer or, here, a zero number; inputs after the first unset one are not
// used. When key narrows nothing, the query keeps to the template's literal prefix
// ("ORDER#"). A sort key condition ([SKEqual], [SKBetween], [SK]...) replaces all
// of this.
//
//go:noinline
func (e *Entity[T]) Query(ctx context.Context, key T, opts ...QueryOption) (_ Page[T], err error) {
	var page Page[T]
	err = e.core().query(ctx, elem(&key), opts, elem(&page))
	return page, err
}

// query is Query: the page is read into page, a Page[T] (left zero on an
// error).
func (e *entity) query(ctx context.Context, sv reflect.Value, opts []QueryOption, page reflect.Value) (err error) {
	if err := e.refused("Query"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Query")
	defer done(&err)
	pq, err := e.prepareQuery(sv, opts)
	if err != nil {
		return err
	}
	r, err := e.queryPage(ctx, pq, nil, page.Field(pageItems).Addr())
	return fillPage(page, r, err)
}

// All iterates over every item of the query, page after page, as Query with the same
// options would return them. It stops at the first error, which it yields with a zero T.
//
//go:noinline
func (e *Entity[T]) All(ctx context.Context, key T, opts ...QueryOption) iter.Seq2[T, error] {
	c := e.core()
	return func(yield func(T, error) bool) {
		var items []T
		p := c.all(ctx, elem(&key), opts, ptrTo(&items))
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

// all is All's pager, reading each page into the slice items points to.
func (e *entity) all(ctx context.Context, sv reflect.Value, opts []QueryOption, items reflect.Value) *pager {
	if err := e.refused("All"); err != nil {
		return newPager(items, nil, noDone, err)
	}
	ctx, done := e.begin(ctx, "All")
	pq, err := e.prepareQuery(sv, opts)
	if err == nil && pq.plan.partial {
		err = e.table.refuseIterPartial("All", e.info.name, pq.index, "page through it with Query (Page.Partial says so), or iterate with Project(...).All (values of type Partial)")
	}
	return e.pager(ctx, pq, items, err, done)
}

// pager is the engine of an iterator (All, ScanAll, AllShards and their
// projected forms): each next reads one page into the []T items points to,
// emptied first (the values the iterator yields are copies, so the slice is
// reused), until there is no more or an error, which err then holds. close ends
// the operation's span, with that error.
type pager struct {
	items reflect.Value // the *[]T the pages are read into
	read  func(items reflect.Value) (more bool, err error)
	end   func(*error) // nil once called
	err   error
	over  bool
}

// newPager returns a pager reading into items (a *[]T) with read; done ends the
// operation's span. With err set, it reads nothing and failed returns err.
func newPager(items reflect.Value, read func(items reflect.Value) (bool, error), done func(*error), err error) *pager {
	return &pager{items: items, read: read, end: done, err: err, over: err != nil}
}

// next reads the next page into items; false when there is none (then see
// failed).
func (p *pager) next() bool {
	sl := wire.NewSlice(p.items)
	sl.Reset()
	if p.over {
		return false
	}
	more, err := p.read(p.items)
	p.err, p.over = err, err != nil || !more
	return true // the page, and with an error what was read before it (AllowPartial)
}

// failed returns the error that ended the pages, nil when none did.
func (p *pager) failed() error { return p.err }

// close ends the iterator's span, once, with that error.
func (p *pager) close() {
	if p.end != nil {
		p.end(&p.err)
		p.end = nil
	}
}

// pager returns the pager of the pages of pq into items (a *[]T); done ends the
// operation's span. With err set, it reads nothing and failed returns err.
func (e *entity) pager(ctx context.Context, pq *preparedQuery, items reflect.Value, err error, done func(*error)) *pager {
	if err != nil {
		return newPager(items, nil, done, err)
	}
	var start map[string]types.AttributeValue
	return newPager(items, func(items reflect.Value) (bool, error) {
		page, err := e.queryPage(ctx, pq, start, items)
		if err != nil {
			sl := wire.NewSlice(items) // nothing of a failed page is yielded
			sl.Reset()
			return false, err
		}
		start = page.last
		return start != nil, nil
	}, done, nil)
}

func (e *entity) prepareQuery(sv reflect.Value, opts []QueryOption) (*preparedQuery, error) {
	var o queryOptions
	if err := applyOptions(&o, "Query", e.info.name, opts, QueryOption.applyQuery); err != nil {
		return nil, err
	}
	return e.table.prepareQuery(e.info, sv, &o, e.asEntity)
}

// prepareQuery validates a query and builds its input, in phases: the index and
// templates, the partition value, the key condition, the input, the cursor. info
// is the entity whose key templates render the partition and sort key values; it
// is nil for a collection query given a rendered partition value.
func (t *Table) prepareQuery(info *entityInfo, sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (*preparedQuery, error) {
	what := "collection"
	if info != nil {
		what = info.name
	}
	fail := func(format string, args ...any) error {
		return errorf("Query %s: "+format, append([]any{what}, args...)...)
	}
	if ix, ok := t.index(o.index); ok && ix.Native() {
		return t.prepareNativeQuery(info, ix, sv, o, asEntity) // multiattr_query.go
	}
	ix, pkT, skT, err := t.queryTemplates(info, o.index)
	if err != nil {
		return nil, fail("On(%q): %w", o.index, err)
	}
	if o.consistent && o.index != "" && !ix.Local {
		return nil, fail("global index %s does not support consistent reads (Consistent): %w", o.index, ErrInvalidInput)
	}
	if ix.SortKey == "" && o.sk != nil {
		return nil, fail("index %s has no sort key, so %s does not apply: %w", o.index, skFuncNames[o.sk.op], ErrInvalidInput)
	}
	pv, err := t.queryPartition(info, sv, o, pkT)
	if err != nil {
		return nil, err
	}
	pq := &preparedQuery{index: ix, partition: pv}
	if pq.plan, err = t.pagePlan(info, ix, o); err != nil { // readpath.go
		return nil, fail("%w", err)
	}
	var b expr.Builder
	keyCond := b.Name(ix.PartitionKey) + " = " + b.Value(t.keyAV(ix.PartitionKey, pv))
	kind := "*"
	if info != nil && !o.collection {
		kind = info.discriminator
	}
	pq.identity = []byte(t.name + "\x00" + o.index + "\x00" + kind + "\x00" + pv + "\x00" + strconv.FormatBool(o.desc))
	if ix.SortKey != "" {
		sk := skCondition{what: what, attr: ix.SortKey, tmpl: skT, pk: pkT, info: info, asEntity: asEntity, collection: o.collection, delim: t.opts.Delimiter, typ: t.keyType(ix.SortKey)}
		cond, err := pq.sortKeyCondition(&b, sk, sv, o.sk)
		if err != nil {
			return nil, err
		}
		if cond != "" {
			keyCond += " AND " + cond
		}
	}
	if err := t.queryInput(pq, &b, keyCond, o); err != nil {
		return nil, fail("%w", err)
	}
	if o.cursor != "" {
		start, err := t.decodeCursor(o.cursor, pq)
		if err != nil {
			return nil, fail("%w", err)
		}
		pq.in.ExclusiveStartKey = start
	}
	return pq, nil
}

// queryTemplates returns the queried index (the base table for "") and, for an
// entity, its partition and sort key templates there (the sort key's may be nil).
func (t *Table) queryTemplates(info *entityInfo, index string) (Index, *keyTemplate, *keyTemplate, error) {
	ix, ok := t.index(index)
	if !ok {
		names := make([]string, 0, len(t.opts.Indexes))
		for _, x := range t.opts.Indexes {
			names = append(names, x.Name)
		}
		return Index{}, nil, nil, fmt.Errorf("table %s has no index %q%s (its indexes: %s): %w", t.name, index, didYouMean(index, names), listOrNone(names), ErrInvalidInput)
	}
	switch {
	case info == nil:
		return ix, nil, nil, nil
	case index == "":
		return ix, info.pk, info.sk, nil
	}
	pair, ok := info.indexPair(index)
	if !ok {
		names := make([]string, 0, len(info.indexes))
		for _, x := range t.opts.Indexes {
			if _, ok := info.indexes[x.Name]; ok {
				names = append(names, x.Name)
			}
		}
		return Index{}, nil, nil, fmt.Errorf("%s has no key templates for index %s (it has templates for: %s): %w", info.name, index, listOrNone(names), ErrInvalidInput)
	}
	return ix, pair[0], pair[1], nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// queryPartition is the partition key value of a query: given with [Partition], or
// rendered from the key value.
func (t *Table) queryPartition(info *entityInfo, sv reflect.Value, o *queryOptions, pkT *keyTemplate) (string, error) {
	what := "collection"
	if info != nil {
		what = info.name
	}
	switch {
	case o.partition != nil:
		pv := *o.partition
		if err := t.checkKeyText(t.partitionAttr(o.index), pv, MaxPartitionKeyBytes); err != nil { // keytypes.go
			return "", errorf("Query %s: Partition(%q): %w", what, pv, err)
		}
		return pv, nil
	case pkT == nil:
		return "", errorf("Query %s: no partition value: %w", what, ErrInvalidInput)
	}
	if err := info.checkShard(sv); err != nil && pkT == info.pk {
		return "", errorf("Query %s: %w (query every shard with QueryShards)", what, err)
	}
	pv, _, err := pkT.render(info, sv, false)
	return pv, err
}

// sortKeyCondition builds the sort key condition: c, or without one the condition
// the key value sv narrows to (see [skCondition.narrowed]). It adds the
// condition's identity to the query's and notes an SKTree's root.
func (pq *preparedQuery) sortKeyCondition(b *expr.Builder, sk skCondition, sv reflect.Value, c *skCond) (string, error) {
	if c == nil {
		var err error
		if c, err = sk.narrowed(sv); err != nil {
			return "", err
		}
	}
	cond, ident, err := sk.build(b, c)
	if err != nil {
		return "", err
	}
	if c != nil && c.op == skTree {
		pq.treeRoot = ident[2:]
	}
	pq.identity = append(pq.identity, ident...)
	return cond, nil
}

// queryInput fills the QueryInput of a prepared query.
func (t *Table) queryInput(pq *preparedQuery, b *expr.Builder, keyCond string, o *queryOptions) error {
	filter, err := b.Condition(o.filter)
	if err != nil {
		return fmt.Errorf("Filter: %w: %w", ErrInvalidInput, err)
	}
	if x := pq.plan.expiry; x != nil { // SkipExpired (ttl.go)
		filter = expr.And(filter, x.filter(b))
	}
	pq.in = dynamodb.QueryInput{
		TableName:                 t.namePtr(),
		KeyConditionExpression:    aws.String(keyCond),
		FilterExpression:          expr.Ptr(filter),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		ScanIndexForward:          boolPtr(!o.desc),
	}
	if o.index != "" {
		pq.in.IndexName = aws.String(o.index)
	}
	if o.consistent {
		pq.in.ConsistentRead = boolPtr(true)
	}
	if o.limit > 0 {
		pq.in.Limit = aws.Int32(o.limit)
	}
	if o.capacity {
		pq.in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	if len(o.project) > 0 {
		pq.in.ProjectionExpression = aws.String(projectionExpression(b, o.project)) // projection.go
		pq.in.ExpressionAttributeNames = b.Names()
	}
	return nil
}

// pageInfo is what a page of an entity's read says beyond its items: its
// cursor, items scanned, capacity and partiality, and the raw last key.
type pageInfo struct {
	pageMeta
	partial bool
	last    map[string]types.AttributeValue
	// read is set when the page was read, even with an error (a fan-out's
	// AllowPartial returns the page it read with the failures).
	read bool
}

// The fields of a Page[T], by index: the engine fills the caller's Page through
// reflection, so that no code is compiled per T for it (TestPageFieldOrder).
const (
	pageItems = iota
	pageCursor
	pageScanned
	pageCapacity
	pagePartial
)

// fillPage sets the fields of page (an addressable Page[T]) other than Items
// from r, and returns err; with an error the whole page is left zero, unless
// r.read says the page was read all the same (a fan-out's AllowPartial).
func fillPage(page reflect.Value, r pageInfo, err error) error {
	if err != nil && !r.read {
		page.SetZero()
		return err
	}
	page.Field(pageCursor).SetString(r.cursor)
	page.Field(pageScanned).SetInt(int64(r.scanned))
	page.Field(pageCapacity).SetFloat(r.capacity)
	page.Field(pagePartial).SetBool(r.partial)
	return err
}

// partials sets dst (a []Partial[T]) to the values of items (a []T), each with
// attrs: the items of a projected read.
func partials(dst, items reflect.Value, attrs []string) {
	n := items.Len()
	out := reflect.MakeSlice(dst.Type(), n, n)
	av := reflect.ValueOf(attrs)
	for i := range n {
		p := out.Index(i)
		p.Field(0).Set(items.Index(i)) // Partial[T].Value
		p.Field(1).Set(av)             // Partial[T].Attributes
	}
	dst.Set(out)
}

// projectedPage is fillPage for a projected read: items (a []T, as read) become
// the page's Partial values.
func (p *projection) projectedPage(page, items reflect.Value, r pageInfo, err error) error {
	if err != nil && !r.read { // as before the engine: an empty, partial page
		page.SetZero()
		page.Field(pageItems).Set(reflect.MakeSlice(page.Field(pageItems).Type(), 0, 0))
		page.Field(pagePartial).SetBool(true)
		return err
	}
	partials(page.Field(pageItems), items, p.attrs)
	r.partial = true
	return fillPage(page, r, err)
}

// queryPage reads one page of an entity's query or scan, its items through the
// read path's phases (readpath.go), on the wire path when the table takes it,
// appended to the slice items points to (a *[]T, never left nil on success).
func (e *entity) queryPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, items reflect.Value) (pageInfo, error) {
	if tg := e.info.wireTarget(); tg != nil && !pq.plan.parseKeys {
		return e.queryPageWire(ctx, pq, start, tg, items) // wire.go
	}
	out, meta, err := e.table.fetchPage(ctx, pq, start, e.info.name)
	if err != nil {
		return pageInfo{}, err
	}
	sl := wire.NewSlice(items)
	sl.Hint(len(out.Items))
	for _, item := range out.Items {
		if err := e.addItem(ctx, pq, &sl, item); err != nil {
			return pageInfo{}, err
		}
	}
	nonNil(items)
	return pageInfo{pageMeta: meta, partial: pq.plan.partial, last: out.LastEvaluatedKey}, nil
}

// nonNil makes the slice items points to empty rather than nil: a page's Items
// is never nil.
func nonNil(items reflect.Value) {
	if s := items.Elem(); s.IsNil() {
		s.Set(reflect.MakeSlice(s.Type(), 0, 0))
	}
}

// addItem reads one stored item of a page through the read path's phases and
// appends it to sl when the read keeps it.
func (e *entity) addItem(ctx context.Context, pq *preparedQuery, sl *wire.Slice, item map[string]types.AttributeValue) error {
	if _, err := pq.plan.readInto(ctx, item, sl); err != nil {
		return errorf("%s %s: %w", pq.call(), e.info.name, err)
	}
	return nil
}

// pageMeta is what a page says beyond its items.
type pageMeta struct {
	cursor   string
	scanned  int
	capacity float64
}

// fetchPage runs one Query call of a prepared query, starting after start.
func (t *Table) fetchPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, what string) (*dynamodb.QueryOutput, pageMeta, error) {
	out, err := t.send(ctx, pq, start)
	if err != nil {
		return nil, pageMeta{}, errorf("%s %s: %w", pq.call(), what, err)
	}
	if pq.treeRoot != "" {
		out.Items = t.keepTree(out.Items, pq)
	}
	meta, err := t.pageMeta(pq, out, what)
	if err != nil {
		return nil, pageMeta{}, err
	}
	return out, meta, nil
}

// send calls Query, or Scan for a scan (scan.go), once for a prepared read,
// starting after start. A Scan's output is returned as a QueryOutput: the two
// carry the same members.
func (t *Table) send(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if pq.scan != nil {
		in := *pq.scan // a copy: the prepared input is never mutated
		if start != nil {
			in.ExclusiveStartKey = start
		}
		out, err := t.client.Scan(ctx, &in, optFns...)
		if err != nil {
			return nil, err
		}
		return &dynamodb.QueryOutput{Items: out.Items, Count: out.Count, ScannedCount: out.ScannedCount, LastEvaluatedKey: out.LastEvaluatedKey, ConsumedCapacity: out.ConsumedCapacity, ResultMetadata: out.ResultMetadata}, nil
	}
	in := pq.in // a copy: the prepared input is never mutated
	if start != nil {
		in.ExclusiveStartKey = start
	}
	return t.client.Query(ctx, &in, optFns...)
}

// pageMeta is what a page's output says beyond its items: its cursor, the items
// scanned and the capacity consumed.
func (t *Table) pageMeta(pq *preparedQuery, out *dynamodb.QueryOutput, what string) (pageMeta, error) {
	meta := pageMeta{scanned: int(out.ScannedCount)}
	if out.ConsumedCapacity != nil && out.ConsumedCapacity.CapacityUnits != nil {
		meta.capacity = *out.ConsumedCapacity.CapacityUnits
	}
	if len(out.LastEvaluatedKey) > 0 {
		c, err := t.encodeCursor(pq, out.LastEvaluatedKey)
		if err != nil {
			return pageMeta{}, errorf("%s %s: %w", pq.call(), what, err)
		}
		meta.cursor = c
	}
	return meta, nil
}

// keepTree drops items whose sort key extends the tree root's last value instead of
// continuing it after the delimiter (see [SKTree]).
func (t *Table) keepTree(items []map[string]types.AttributeValue, pq *preparedQuery) []map[string]types.AttributeValue {
	kept := items[:0]
	for _, item := range items {
		sk, _ := item[pq.index.SortKey].(*types.AttributeValueMemberS)
		if sk != nil && t.inTree(pq, sk.Value) {
			kept = append(kept, item)
		}
	}
	return kept
}

// asEntity accepts a value of the entity's type, or a non-nil pointer to one, as
// a sort key condition value.
func (e *entity) asEntity(v any) (reflect.Value, bool) {
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
	case rv.Type() == e.info.goType:
		cp := reflect.New(e.info.goType).Elem()
		cp.Set(rv)
		return cp, true
	case rv.Kind() == reflect.Pointer && rv.Type().Elem() == e.info.goType && !rv.IsNil():
		return rv.Elem(), true
	}
	return reflect.Value{}, false
}

// inTree reports whether sort key sk is the tree root of an SKTree query or
// continues it after the delimiter.
func (t *Table) inTree(pq *preparedQuery, sk string) bool {
	return sk == pq.treeRoot || len(sk) > len(pq.treeRoot) && sk[len(pq.treeRoot)] == t.opts.Delimiter && strings.HasPrefix(sk, pq.treeRoot)
}
