package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strconv"

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
)

var skOpNames = [...]string{"", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"}

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
			return fmt.Errorf("singletable: Limit(%d): want a positive limit: %w", n, ErrInvalidInput)
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
			return fmt.Errorf("singletable: more than one sort key condition: %w", ErrInvalidInput)
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

// SKBeginsWith matches sort keys that begin with v.
func SKBeginsWith(v any) QueryOption { return sortKey(skBeginsWith, v) }

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
}

// Query reads one page of the entity's items in one partition (Query): the base
// table's, or with [On] an index's. The partition key is rendered from key, which
// needs only the inputs of that key set (or see [Partition]). Items of other entity
// types in the partition are skipped, never decoded. Cost: 0.5 RCU per 4 KB read
// (1 with [Consistent], base table only). key is not modified.
func (e *Entity[T]) Query(ctx context.Context, key T, opts ...QueryOption) (Page[T], error) {
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
	return e.info.prepareQuery(sv, &o, func(v any) (reflect.Value, bool) {
		switch x := v.(type) {
		case T:
			return reflect.ValueOf(&x).Elem(), true
		case *T:
			if x != nil {
				return reflect.ValueOf(x).Elem(), true
			}
		}
		return reflect.Value{}, false
	})
}

func (info *entityInfo) prepareQuery(sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (*preparedQuery, error) {
	t := info.table
	fail := func(format string, args ...any) error {
		return fmt.Errorf("singletable: Query %s: "+format, append([]any{info.name}, args...)...)
	}
	ix, ok := t.index(o.index)
	if !ok {
		return nil, fail("table %s has no index %q: %w", t.name, o.index, ErrInvalidInput)
	}
	var pkT, skT *keyTemplate
	if o.index == "" {
		pkT, skT = info.pk, info.sk
	} else {
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
	if o.partition != nil {
		pv = *o.partition
		if pv == "" || len(pv) > MaxPartitionKeyBytes {
			return nil, fail("partition value must be 1-%d bytes: %w", MaxPartitionKeyBytes, ErrInvalidKey)
		}
	} else {
		var err error
		if pv, _, err = pkT.render(info, sv, false); err != nil {
			return nil, err
		}
	}
	pq := &preparedQuery{index: ix, partition: pv}
	var b expr.Builder
	keyCond := b.Name(ix.PartitionKey) + " = " + b.S(pv)
	identity := []byte(t.name + "\x00" + o.index + "\x00" + info.discriminator + "\x00" + pv + "\x00" + strconv.FormatBool(o.desc))

	if skT != nil {
		cond, ident, err := info.sortKeyCondition(&b, skT, o.sk, asEntity)
		if err != nil {
			return nil, err
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
		TableName:                 aws.String(t.name),
		KeyConditionExpression:    aws.String(keyCond),
		FilterExpression:          expr.Ptr(filter),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		ScanIndexForward:          aws.Bool(!o.desc),
	}
	if o.index != "" {
		pq.in.IndexName = aws.String(o.index)
	}
	if o.consistent {
		pq.in.ConsistentRead = aws.Bool(true)
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
			return nil, fmt.Errorf("singletable: Query %s: %w", info.name, err)
		}
		pq.in.ExclusiveStartKey = start
	}
	return pq, nil
}

// maxRune sorts after every UTF-8 text that does not itself begin with it; appended
// to a prefix it bounds the group of keys beginning with that prefix from above.
const maxRune = "\U0010FFFF"

// sortKeyCondition renders the sort key condition, or the entity's static prefix
// when there is none. It returns the condition text and its identity for cursors.
func (info *entityInfo) sortKeyCondition(b *expr.Builder, skT *keyTemplate, c *skCond, asEntity func(any) (reflect.Value, bool)) (string, string, error) {
	if c == nil {
		p := skT.tmpl.StaticPrefix()
		if p == "" {
			return "", "", nil
		}
		return "begins_with(" + b.Name(skT.attr) + ", " + b.S(p) + ")", "\x00^" + p, nil
	}
	name := b.Name(skT.attr)
	// upper says whether a partial value bounds its group from above.
	render := func(v any, upper bool) (string, error) {
		if s, ok := v.(string); ok {
			if s == "" {
				return "", fmt.Errorf("singletable: Query %s: empty sort key value: %w", info.name, ErrInvalidKey)
			}
			return s, nil
		}
		sv, ok := asEntity(v)
		if !ok {
			return "", fmt.Errorf("singletable: Query %s: sort key value of type %T: want a string or a %s: %w", info.name, v, info.name, ErrInvalidInput)
		}
		s, complete, err := skT.renderWith(info, func(i int) keyValue {
			v := keyValueOfField(skT.fields[i], sv)
			if (v.kind == kvInt && v.i == 0) || (v.kind == kvUint && v.u == 0) {
				return keyValue{} // in a partly filled value, a zero number is unset
			}
			return v
		}, true)
		if err != nil {
			return "", err
		}
		if !complete && c.op == skEqual {
			return "", fmt.Errorf("singletable: Query %s: SKEqual needs every input of %s, got only the prefix %q: %w", info.name, skT.attr, s, ErrInvalidKey)
		}
		if !complete && upper {
			s += maxRune
		}
		return s, nil
	}
	var lo, hi string
	var err error
	switch c.op {
	case skBetween:
		if lo, err = render(c.values[0], false); err != nil {
			return "", "", err
		}
		if hi, err = render(c.values[1], true); err != nil {
			return "", "", err
		}
		if lo > hi {
			return "", "", fmt.Errorf("singletable: Query %s: SKBetween bounds %q > %q: %w", info.name, lo, hi, ErrInvalidInput)
		}
		return name + " BETWEEN " + b.S(lo) + " AND " + b.S(hi), "\x00B" + lo + "\x00" + hi, nil
	case skBeginsWith:
		if lo, err = render(c.values[0], false); err != nil {
			return "", "", err
		}
		return "begins_with(" + name + ", " + b.S(lo) + ")", "\x00^" + lo, nil
	default:
		upper := c.op == skLessEqual || c.op == skGreater
		if lo, err = render(c.values[0], upper); err != nil {
			return "", "", err
		}
		op := skOpNames[c.op]
		return name + " " + op + " " + b.S(lo), "\x00" + op + lo, nil
	}
}

// pageResult carries what the typed page does not show: the raw last key.
type pageResult[T any] struct {
	Page[T]
	last map[string]types.AttributeValue
}

func (e *Entity[T]) queryPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue) (pageResult[T], error) {
	in := pq.in // a copy: the prepared input is never mutated
	if start != nil {
		in.ExclusiveStartKey = start
	}
	out, err := e.table.client.Query(ctx, &in)
	if err != nil {
		return pageResult[T]{}, fmt.Errorf("singletable: Query %s: %w", e.info.name, err)
	}
	res := pageResult[T]{Page: Page[T]{Items: make([]T, 0, len(out.Items)), Scanned: int(out.ScannedCount)}}
	for _, item := range out.Items {
		if !e.info.isType(item) {
			continue
		}
		v, err := e.decode(item)
		if err != nil {
			return pageResult[T]{}, fmt.Errorf("singletable: Query %s: %w", e.info.name, err)
		}
		res.Items = append(res.Items, v)
	}
	if out.ConsumedCapacity != nil && out.ConsumedCapacity.CapacityUnits != nil {
		res.Capacity = *out.ConsumedCapacity.CapacityUnits
	}
	if len(out.LastEvaluatedKey) > 0 {
		res.last = out.LastEvaluatedKey
		c, err := e.table.encodeCursor(pq, out.LastEvaluatedKey)
		if err != nil {
			return pageResult[T]{}, fmt.Errorf("singletable: Query %s: %w", e.info.name, err)
		}
		res.Cursor = c
	}
	return res, nil
}
