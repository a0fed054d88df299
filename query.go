package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// QueryOption configures [Entity.Query] and [Entity.All].
type QueryOption interface {
	applyQuery(*queryOptions) error
}

type queryFunc func(*queryOptions) error

func (f queryFunc) applyQuery(o *queryOptions) error { return f(o) }

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
	// Fan-out queries (QueryShards).
	dayAttr        string
	dayFrom, dayTo time.Time
	parallel       int
	partial        bool
}

// skOp is a sort key comparison.
type skOp uint8

const (
	skEqual skOp = iota + 1
	skLess
	skLessEqual
	skGreater
	skGreaterEqual
	skBetween
	skBeginsWith
	skTree
)

var skOpNames = [...]string{"", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with", "tree"}

type skCond struct {
	op     skOp
	values [2]any
}

// On queries the named global secondary index instead of the base table. Index
// reads are eventually consistent; combining On with [Consistent] is an error.
func On(index string) QueryOption {
	return queryFunc(func(o *queryOptions) error { o.index = index; return nil })
}

// Limit caps the number of items DynamoDB reads per page (its Limit). Items of other
// entity types and items removed by a [Filter] count towards it, so a page may hold
// fewer; the cursor resumes after the last item read.
func Limit(n int) QueryOption {
	return queryFunc(func(o *queryOptions) error {
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
func After(cursor string) QueryOption {
	return queryFunc(func(o *queryOptions) error { o.cursor = cursor; return nil })
}

// Filter adds a filter expression, built with the SDK's expression package. DynamoDB
// applies it after reading, so filtered-out items still cost read capacity and count
// towards [Limit].
func Filter(cond expression.ConditionBuilder) QueryOption {
	return queryFunc(func(o *queryOptions) error { o.filter = andCond(o.filter, cond); return nil })
}

// Partition gives the partition key value as rendered text, in place of rendering it
// from the key value passed to the query.
func Partition(value string) QueryOption {
	return queryFunc(func(o *queryOptions) error { o.partition = &value; return nil })
}

// ReturnCapacity asks DynamoDB for the read capacity each page consumed
// (ReturnConsumedCapacity=TOTAL); it is reported in [Page.Capacity].
func ReturnCapacity() QueryOption {
	return queryFunc(func(o *queryOptions) error { o.capacity = true; return nil })
}

func sortKey(op skOp, values ...any) QueryOption {
	return queryFunc(func(o *queryOptions) error {
		if o.sk != nil {
			return fmt.Errorf("more than one sort key condition: %w", ErrInvalidInput)
		}
		c := &skCond{op: op}
		copy(c.values[:], values)
		o.sk = c
		return nil
	})
}

// Sort key conditions. Each value is either a string, used as the rendered sort key
// text, or a value of the entity type (T or *T), rendered through the sort key
// template of the index queried. Rendering stops at the first unset input (an
// empty string, a zero time, a nil pointer or, here only, a zero number: give a
// string to match a zero), and a partly filled value stands for every key that
// begins with its prefix (see [Template.Prefix]): SKBeginsWith matches them all,
// SKLessThan and SKGreaterThanEqual bound below the group, SKLessThanEqual and
// SKGreaterThan bound above it.
//
// Without a sort key condition a query is limited to keys that begin with the
// literal prefix of the entity's sort key template (if it has one).

// SKEqual matches the sort key equal to v (which must be complete).
func SKEqual(v any) QueryOption { return sortKey(skEqual, v) }

// SKLessThan matches sort keys below v.
func SKLessThan(v any) QueryOption { return sortKey(skLess, v) }

// SKLessThanEqual matches sort keys up to and including v.
func SKLessThanEqual(v any) QueryOption { return sortKey(skLessEqual, v) }

// SKGreaterThan matches sort keys above v.
func SKGreaterThan(v any) QueryOption { return sortKey(skGreater, v) }

// SKGreaterThanEqual matches sort keys from v on.
func SKGreaterThanEqual(v any) QueryOption { return sortKey(skGreaterEqual, v) }

// SKBetween matches sort keys from lo up to and including hi.
func SKBetween(lo, hi any) QueryOption { return sortKey(skBetween, lo, hi) }

// SKBeginsWith matches sort keys that begin with v. Beware that "ORDER#o1" begins
// "ORDER#o10" too; to read an item and the items under it, use [SKTree].
func SKBeginsWith(v any) QueryOption { return sortKey(skBeginsWith, v) }

// SKTree matches the sort key v (which must be complete) and every sort key that
// continues it after the delimiter: given "ORDER#o1", the order's own item and its
// "ORDER#o1#ITEM#..." rows, but not "ORDER#o10". DynamoDB reads the range from v to
// v, delimiter, U+10FFFF; the rare key in that range that merely extends v's last
// value (such as "ORDER#o1!") is dropped before decoding.
func SKTree(v any) QueryOption { return sortKey(skTree, v) }

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
}

// preparedQuery is a validated query, ready to run page after page.
type preparedQuery struct {
	in        dynamodb.QueryInput
	index     Index
	partition string
	identity  []byte // what a cursor must match
	treeRoot  string // with SKTree: items must have this sort key or continue it after the delimiter
}

// Query reads one page of the entity's items in one partition (Query): the base
// table's, or with [On] an index's. The partition key is rendered from key, which
// needs only the inputs of that key set (or see [Partition]). Items of other entity
// types in the partition are skipped, never decoded. Cost: 0.5 RCU per 4 KB read
// (1 with [Consistent], base table only). key is not modified.
func (e *Entity[T]) Query(ctx context.Context, key T, opts ...QueryOption) (Page[T], error) {
	ctx = e.observe(ctx)
	pq, err := e.prepareQuery(reflect.ValueOf(&key).Elem(), opts)
	if err != nil {
		return Page[T]{}, err
	}
	res, err := e.queryPage(ctx, pq, nil)
	return res.Page, err
}

// All iterates over every item of the query, page after page, as Query with the same
// options would return them. It stops at the first error, which it yields with a zero T.
func (e *Entity[T]) All(ctx context.Context, key T, opts ...QueryOption) iter.Seq2[T, error] {
	ctx = e.observe(ctx)
	return func(yield func(T, error) bool) {
		var zero T
		pq, err := e.prepareQuery(reflect.ValueOf(&key).Elem(), opts)
		if err != nil {
			yield(zero, err)
			return
		}
		var start map[string]types.AttributeValue
		first := true
		for first || start != nil {
			first = false
			page, err := e.queryPage(ctx, pq, start)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			start = page.last
		}
	}
}

func (e *Entity[T]) prepareQuery(sv reflect.Value, opts []QueryOption) (*preparedQuery, error) {
	var o queryOptions
	for _, opt := range opts {
		if err := opt.applyQuery(&o); err != nil {
			return nil, fmt.Errorf("singletable: Query %s: %w", e.info.name, err)
		}
	}
	return e.table.prepareQuery(e.info, sv, &o, e.asEntity)
}

// prepareQuery validates a query and builds its input. info is the entity whose key
// templates render the partition and sort key values; it is nil for a collection
// query given a rendered partition value.
func (t *Table) prepareQuery(info *entityInfo, sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (*preparedQuery, error) {
	what := "collection"
	if info != nil {
		what = info.name
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("singletable: Query %s: "+format, append([]any{what}, args...)...)
	}
	ix, ok := t.index(o.index)
	if !ok {
		return nil, fail("table %s has no index %q: %w", t.name, o.index, ErrInvalidInput)
	}
	var pkT, skT *keyTemplate
	switch {
	case info == nil:
	case o.index == "":
		pkT, skT = info.pk, info.sk
	default:
		pair, ok := info.indexes[o.index]
		if !ok {
			return nil, fail("%s has no key templates for index %s: %w", info.name, o.index, ErrInvalidInput)
		}
		pkT, skT = pair[0], pair[1]
	}
	if o.consistent && o.index != "" {
		return nil, fail("index %s does not support consistent reads: %w", o.index, ErrInvalidInput)
	}
	var pv string
	switch {
	case o.partition != nil:
		pv = *o.partition
		if pv == "" || len(pv) > MaxPartitionKeyBytes || !utf8.ValidString(pv) {
			return nil, fail("partition value must be 1-%d bytes of UTF-8: %w", MaxPartitionKeyBytes, ErrInvalidKey)
		}
	case pkT == nil:
		return nil, fail("no partition value: %w", ErrInvalidInput)
	default:
		if err := info.checkShard(sv); err != nil && o.index == "" {
			return nil, fail("%w (query every shard with QueryShards)", err)
		}
		var err error
		if pv, _, err = pkT.render(info, sv, false); err != nil {
			return nil, err
		}
	}
	pq := &preparedQuery{index: ix, partition: pv}
	var b expr.Builder
	keyCond := b.Name(ix.PartitionKey) + " = " + b.S(pv)
	kind := "*"
	if info != nil && !o.collection {
		kind = info.discriminator
	}
	identity := []byte(t.name + "\x00" + o.index + "\x00" + kind + "\x00" + pv + "\x00" + strconv.FormatBool(o.desc))

	if ix.SortKey != "" {
		sk := skCondition{what: what, attr: ix.SortKey, tmpl: skT, info: info, asEntity: asEntity, defaultPrefix: !o.collection, delim: t.opts.Delimiter}
		cond, ident, err := sk.build(&b, o.sk)
		if err != nil {
			return nil, err
		}
		if o.sk != nil && o.sk.op == skTree {
			pq.treeRoot = ident[2:]
		}
		if cond != "" {
			keyCond += " AND " + cond
		}
		identity = append(identity, ident...)
	} else if o.sk != nil {
		return nil, fail("index %s has no sort key: %w", o.index, ErrInvalidInput)
	}
	filter, err := b.Condition(o.filter)
	if err != nil {
		return nil, fail("filter: %w: %w", ErrInvalidInput, err)
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
	pq.identity = identity
	if o.cursor != "" {
		start, err := t.decodeCursor(o.cursor, pq)
		if err != nil {
			return nil, fail("%w", err)
		}
		pq.in.ExclusiveStartKey = start
	}
	return pq, nil
}

// maxRune sorts after every UTF-8 text that does not itself begin with it; appended
// to a prefix it bounds the group of keys beginning with that prefix from above.
const maxRune = "\U0010FFFF"

// skCondition renders sort key conditions for one query.
type skCondition struct {
	what          string       // entity name, for messages
	attr          string       // sort key attribute of the queried index
	tmpl          *keyTemplate // its template for the entity; nil when there is none
	info          *entityInfo
	asEntity      func(any) (reflect.Value, bool)
	defaultPrefix bool // without a condition, keep to the template's literal prefix
	delim         byte
}

// build renders the condition, or the entity's static prefix when there is none and
// defaultPrefix is set. It returns the condition text and its identity for cursors.
func (k skCondition) build(b *expr.Builder, c *skCond) (string, string, error) {
	if c == nil {
		if !k.defaultPrefix || k.tmpl == nil {
			return "", "", nil
		}
		p := k.tmpl.tmpl.StaticPrefix()
		if p == "" {
			return "", "", nil
		}
		return "begins_with(" + b.Name(k.attr) + ", " + b.S(p) + ")", "\x00^" + p, nil
	}
	name := b.Name(k.attr)
	var lo, hi string
	var err error
	switch c.op {
	case skBetween:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		if hi, err = k.render(c.values[1], c.op, true); err != nil {
			return "", "", err
		}
		if lo > hi {
			return "", "", fmt.Errorf("singletable: Query %s: SKBetween bounds %q > %q: %w", k.what, lo, hi, ErrInvalidInput)
		}
		return name + " BETWEEN " + b.S(lo) + " AND " + b.S(hi), "\x00B" + lo + "\x00" + hi, nil
	case skBeginsWith:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		return "begins_with(" + name + ", " + b.S(lo) + ")", "\x00^" + lo, nil
	case skTree:
		if lo, err = k.render(c.values[0], c.op, false); err != nil {
			return "", "", err
		}
		hi = lo + string(k.delim) + maxRune
		return name + " BETWEEN " + b.S(lo) + " AND " + b.S(hi), "\x00T" + lo, nil
	default:
		upper := c.op == skLessEqual || c.op == skGreater
		if lo, err = k.render(c.values[0], c.op, upper); err != nil {
			return "", "", err
		}
		op := skOpNames[c.op]
		return name + " " + op + " " + b.S(lo), "\x00" + op + lo, nil
	}
}

// render turns one condition value into sort key text; upper says whether a partial
// value bounds its group from above.
func (k skCondition) render(v any, op skOp, upper bool) (string, error) {
	if s, ok := v.(string); ok {
		if s == "" || len(s) > MaxSortKeyBytes || !utf8.ValidString(s) {
			return "", fmt.Errorf("singletable: Query %s: sort key value must be 1-%d bytes of UTF-8: %w", k.what, MaxSortKeyBytes, ErrInvalidKey)
		}
		return s, nil
	}
	var sv reflect.Value
	ok := false
	if k.asEntity != nil && k.tmpl != nil {
		sv, ok = k.asEntity(v)
	}
	if !ok {
		return "", fmt.Errorf("singletable: Query %s: sort key value of type %T: want a string or a %s: %w", k.what, v, k.what, ErrInvalidInput)
	}
	skT := k.tmpl
	s, complete, err := skT.renderWith(k.info, func(i int) keyValue {
		v := keyValueOfField(skT.fields[i], sv)
		if (v.kind == kvInt && v.i == 0) || (v.kind == kvUint && v.u == 0) {
			return keyValue{} // in a partly filled value, a zero number is unset
		}
		return v
	}, true)
	if err != nil {
		return "", err
	}
	if !complete && (op == skEqual || op == skTree) {
		return "", fmt.Errorf("singletable: Query %s: %s needs every input of %s, got only the prefix %q: %w", k.what, map[skOp]string{skEqual: "SKEqual", skTree: "SKTree"}[op], skT.attr, s, ErrInvalidKey)
	}
	if !complete && upper {
		s += maxRune
	}
	return s, nil
}

// pageResult carries what the typed page does not show: the raw last key.
type pageResult[T any] struct {
	Page[T]
	last map[string]types.AttributeValue
}

func (e *Entity[T]) queryPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue) (pageResult[T], error) {
	if tg := e.info.wireTarget(); tg != nil {
		return e.queryPageWire(ctx, pq, start, tg) // wire.go
	}
	out, meta, err := e.table.fetchPage(ctx, pq, start, e.info.name)
	if err != nil {
		return pageResult[T]{}, err
	}
	res := pageResult[T]{Page: Page[T]{Items: make([]T, 0, len(out.Items)), Cursor: meta.cursor, Scanned: meta.scanned, Capacity: meta.capacity}, last: out.LastEvaluatedKey}
	for _, item := range out.Items {
		if !e.info.isType(item) {
			continue
		}
		v, err := e.decode(ctx, item)
		if err != nil {
			return pageResult[T]{}, fmt.Errorf("singletable: Query %s: %w", e.info.name, err)
		}
		res.Items = append(res.Items, v)
	}
	return res, nil
}

// pageMeta is what a page says beyond its items.
type pageMeta struct {
	cursor   string
	scanned  int
	capacity float64
}

// fetchPage runs one Query call of a prepared query, starting after start.
func (t *Table) fetchPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, what string) (*dynamodb.QueryOutput, pageMeta, error) {
	in := pq.in // a copy: the prepared input is never mutated
	if start != nil {
		in.ExclusiveStartKey = start
	}
	out, err := t.client.Query(ctx, &in)
	if err != nil {
		return nil, pageMeta{}, fmt.Errorf("singletable: Query %s: %w", what, err)
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
			return pageMeta{}, fmt.Errorf("singletable: Query %s: %w", what, err)
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

// inTree reports whether sort key sk is the tree root of an SKTree query or
// continues it after the delimiter.
func (t *Table) inTree(pq *preparedQuery, sk string) bool {
	return sk == pq.treeRoot || len(sk) > len(pq.treeRoot) && sk[len(pq.treeRoot)] == t.opts.Delimiter && strings.HasPrefix(sk, pq.treeRoot)
}
