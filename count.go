package singletable

import (
	"context"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/count"
)

// Counts: Query or Scan with Select COUNT, paged until done. DynamoDB returns
// only the counts, never the items, so nothing is decoded or sent back over the
// network; but it reads the items all the same, and charges for them as the read
// would: 0.5 RCU per 4 KB read (1 consistent), whether counted or filtered out.

// Count is what a count found.
type Count struct {
	// Items is the number of items counted: those of the entity (or, for a
	// table's count, of every type) that the [Filter] kept.
	Items int
	// Scanned is the number of items DynamoDB read, before any filter: what the
	// count cost is charged on.
	Scanned int
	// Capacity is the read capacity consumed, over every page.
	Capacity float64
	// Pages is the number of Query or Scan calls made (DynamoDB counts up to 1 MB
	// of items a call).
	Pages int
}

// Count counts the entity's items that [Entity.Query] with the same key and
// options would return, without reading them out: Query with Select COUNT and a
// filter on the type attribute, page after page until the last (one call per
// 1 MB of items read). Cost: that of reading every item in the key condition's
// range, of every type, in full (0.5 RCU per 4 KB; 1 with [Consistent]); the
// capacity is reported whatever the options. [Limit] does not apply (a count is
// never cut short) and is refused, as is a count through an index that does not
// hold the type attribute (only reading the items could tell their types). key
// is not modified.
//
//go:noinline
func (e *Entity[T]) Count(ctx context.Context, key T, opts ...QueryOption) (_ Count, err error) {
	return e.core().count(ctx, elem(&key), opts)
}

func (e *entity) count(ctx context.Context, sv reflect.Value, opts []QueryOption) (_ Count, err error) {
	if err := e.refused("Count"); err != nil {
		return Count{}, err
	}
	ctx, done := e.begin(ctx, "Count")
	defer done(&err)
	pq, err := e.prepareQuery(sv, opts)
	if err != nil {
		return Count{}, err
	}
	if err := e.table.countable(pq, "Count", e.info); err != nil {
		return Count{}, err
	}
	return e.table.count(ctx, pq, e.info, e.info.name)
}

// ScanCount counts the entity's items that [Entity.Scan] with the same options
// would return: Scan with Select COUNT, page after page until done. Cost: every
// item of the table (or index, or segment) is read, as by a Scan; see
// [Entity.Scan].
//
//go:noinline
func (e *Entity[T]) ScanCount(ctx context.Context, opts ...ScanOption) (_ Count, err error) {
	return e.core().scanCount(ctx, opts)
}

func (e *entity) scanCount(ctx context.Context, opts []ScanOption) (_ Count, err error) {
	if err := e.refused("ScanCount"); err != nil {
		return Count{}, err
	}
	ctx, done := e.begin(ctx, "ScanCount")
	defer done(&err)
	pq, err := e.prepareScan(opts, nil)
	if err != nil {
		return Count{}, err
	}
	if err := e.table.countable(pq, "ScanCount", e.info); err != nil {
		return Count{}, err
	}
	return e.table.count(ctx, pq, nil, e.info.name) // prepareScan filtered on the type
}

// Count counts the items of every type that [Table.Query] with the same key and
// options would return (Query with Select COUNT, until done), at the cost of
// reading them. [Limit] and [OnUnknown] do not apply to a count and are refused.
func (t *Table) Count(ctx context.Context, key any, opts ...CollectionOption) (_ Count, err error) {
	if err := t.refused("Table.Count"); err != nil {
		return Count{}, err
	}
	ctx, done := t.begin(ctx, "Count")
	defer done(&err)
	pq, o, err := t.prepareCollection(key, opts)
	if err != nil {
		return Count{}, err
	}
	if o.unknownSet {
		return Count{}, errorf("Count collection: OnUnknown does not apply to a count, which decodes nothing and counts every type: %w", ErrInvalidInput)
	}
	if err := t.countable(pq, "Count", nil); err != nil {
		return Count{}, err
	}
	return t.count(ctx, pq, nil, "collection")
}

// ScanCount counts every item [Table.Scan] with the same options would return
// (Scan with Select COUNT, until done), at the cost of a Scan. [Limit] and
// [OnUnknown] do not apply to a count and are refused.
func (t *Table) ScanCount(ctx context.Context, opts ...TableScanOption) (_ Count, err error) {
	if err := t.refused("Table.ScanCount"); err != nil {
		return Count{}, err
	}
	ctx, done := t.begin(ctx, "ScanCount")
	defer done(&err)
	pq, o, err := t.prepareTableScan(opts)
	if err != nil {
		return Count{}, err
	}
	if o.unknownSet {
		return Count{}, errorf("ScanCount table: OnUnknown does not apply to a count, which decodes nothing and counts every type: %w", ErrInvalidInput)
	}
	if err := t.countable(pq, "ScanCount", nil); err != nil {
		return Count{}, err
	}
	return t.count(ctx, pq, nil, "table")
}

// countable refuses what a count cannot do: a Limit (found in the prepared
// input), and counting one entity through an index without its type attribute.
func (t *Table) countable(pq *preparedQuery, call string, info *entityInfo) error {
	what := "table"
	if info != nil {
		what = info.name
	}
	limit := pq.in.Limit
	if pq.scan != nil {
		limit = pq.scan.Limit
	}
	if limit != nil {
		return errorf("%s %s: Limit(%d) does not apply to a count, which reads every page: %w", call, what, *limit, ErrInvalidInput)
	}
	if info != nil && pq.plan.parseKeys {
		return errorf("%s %s: index %s projects %s, without the type attribute %q, so only reading the items could tell %s's from others: %w", call, what, pq.index.Name, t.projectionText(pq.index), t.opts.TypeAttribute, what, ErrInvalidInput)
	}
	return nil
}

// count runs a prepared query or scan with Select COUNT until its last page
// (internal/count). For an entity's query (info set) it filters on the type
// attribute. An SKTree query's tree (its root and the keys under it) is counted
// as two ranges, the root and the keys after root and the delimiter.
func (t *Table) count(ctx context.Context, pq *preparedQuery, info *entityInfo, what string) (Count, error) {
	if info == nil { // the library's own items (guards, sweep progress, leases) are passed over, as Table.Scan and Table.Query do
		t.skipReserved(pq)
	}
	parts := []*preparedQuery{pq}
	if pq.scan != nil {
		pq.scan.Select = types.SelectCount
		pq.scan.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	} else {
		in := &pq.in
		in.Select = types.SelectCount
		in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
		if info != nil {
			count.Narrow(&in.ExpressionAttributeNames, &in.ExpressionAttributeValues, &in.FilterExpression,
				"#ctype", t.opts.TypeAttribute, ":ctype", &types.AttributeValueMemberS{Value: info.discriminator}, "#ctype = :ctype")
		}
		if pq.treeRoot != "" {
			parts = nil
			for _, tp := range count.Tree(in.ExpressionAttributeNames, in.ExpressionAttributeValues, pq.index.PartitionKey, pq.index.SortKey,
				t.keyAV(pq.index.PartitionKey, pq.partition), pq.treeRoot, pq.treeRoot+string(t.opts.Delimiter)) {
				part := *pq
				part.in.KeyConditionExpression = aws.String(tp.KeyCondition)
				part.in.ExpressionAttributeNames, part.in.ExpressionAttributeValues = tp.Names, tp.Values
				parts = append(parts, &part)
			}
		}
	}
	c, err := count.Sum(len(parts), func(i int, start count.Item) (count.Page, error) {
		out, err := t.send(ctx, parts[i], start)
		if err != nil {
			return count.Page{}, errorf("%s %s (count): %w", pq.call(), what, err)
		}
		return count.Page{Count: out.Count, Scanned: out.ScannedCount, Capacity: out.ConsumedCapacity, Last: out.LastEvaluatedKey}, nil
	})
	return Count(c), err
}

// skipReserved filters the library's own items (unique-value guards, sweep
// progress, leases: type attributes beginning with "_singletable.") out of a
// count of every type.
func (t *Table) skipReserved(pq *preparedQuery) {
	names, values, filter := &pq.in.ExpressionAttributeNames, &pq.in.ExpressionAttributeValues, &pq.in.FilterExpression
	if pq.scan != nil {
		names, values, filter = &pq.scan.ExpressionAttributeNames, &pq.scan.ExpressionAttributeValues, &pq.scan.FilterExpression
	}
	count.Narrow(names, values, filter, "#rtype", t.opts.TypeAttribute, ":rtype", &types.AttributeValueMemberS{Value: reservedTypePrefix}, "NOT begins_with(#rtype, :rtype)")
}
