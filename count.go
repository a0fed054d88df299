package singletable

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
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
func (e *Entity[T]) Count(ctx context.Context, key T, opts ...QueryOption) (_ Count, err error) {
	ctx, done := e.begin(ctx, "Count")
	defer done(&err)
	pq, err := e.prepareQuery(reflect.ValueOf(&key).Elem(), opts)
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
func (e *Entity[T]) ScanCount(ctx context.Context, opts ...ScanOption) (_ Count, err error) {
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
func (t *Table) Count(ctx context.Context, key any, opts ...CollectionOption) (Count, error) {
	pq, o, err := t.prepareCollection(key, opts)
	if err != nil {
		return Count{}, err
	}
	if o.unknownSet {
		return Count{}, fmt.Errorf("singletable: Count collection: OnUnknown does not apply to a count, which decodes nothing and counts every type: %w", ErrInvalidInput)
	}
	if err := t.countable(pq, "Count", nil); err != nil {
		return Count{}, err
	}
	return t.count(ctx, pq, nil, "collection")
}

// ScanCount counts every item [Table.Scan] with the same options would return
// (Scan with Select COUNT, until done), at the cost of a Scan. [Limit] and
// [OnUnknown] do not apply to a count and are refused.
func (t *Table) ScanCount(ctx context.Context, opts ...TableScanOption) (Count, error) {
	pq, o, err := t.prepareTableScan(opts)
	if err != nil {
		return Count{}, err
	}
	if o.unknownSet {
		return Count{}, fmt.Errorf("singletable: ScanCount table: OnUnknown does not apply to a count, which decodes nothing and counts every type: %w", ErrInvalidInput)
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
		return fmt.Errorf("singletable: %s %s: Limit(%d) does not apply to a count, which reads every page: %w", call, what, *limit, ErrInvalidInput)
	}
	if info != nil && pq.plan.parseKeys {
		return fmt.Errorf("singletable: %s %s: index %s projects %s, without the type attribute %q, so only reading the items could tell %s's from others: %w", call, what, pq.index.Name, t.projectionText(pq.index), t.opts.TypeAttribute, what, ErrInvalidInput)
	}
	return nil
}

// count runs a prepared query or scan with Select COUNT until its last page. For
// an entity's query (info set) it filters on the type attribute. An SKTree
// query's tree (its root and the keys under it) is counted as two ranges, the
// root and the keys after root and the delimiter: a filter cannot name a key.
func (t *Table) count(ctx context.Context, pq *preparedQuery, info *entityInfo, what string) (Count, error) {
	if info == nil {
		t.skipReserved(pq)
	}
	if pq.scan != nil {
		pq.scan.Select = types.SelectCount
		pq.scan.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
		return t.countPages(ctx, pq, what)
	}
	in := &pq.in
	in.Select = types.SelectCount
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	if info != nil {
		names, values := maps.Clone(in.ExpressionAttributeNames), maps.Clone(in.ExpressionAttributeValues)
		if names == nil {
			names = map[string]string{}
		}
		if values == nil {
			values = map[string]types.AttributeValue{}
		}
		names["#ctype"], values[":ctype"] = t.opts.TypeAttribute, &types.AttributeValueMemberS{Value: info.discriminator}
		in.FilterExpression = expr.Ptr(expr.And(aws.ToString(in.FilterExpression), "#ctype = :ctype"))
		in.ExpressionAttributeNames, in.ExpressionAttributeValues = names, values
	}
	if pq.treeRoot == "" {
		return t.countPages(ctx, pq, what)
	}
	var total Count
	for _, cond := range []string{"#ctsk = :ctroot", "begins_with(#ctsk, :ctunder)"} {
		part := *pq
		names, values := map[string]string{}, map[string]types.AttributeValue{}
		for k, v := range in.ExpressionAttributeNames {
			if !strings.HasPrefix(k, "#n") { // the key condition's own names go
				names[k] = v
			}
		}
		for k, v := range in.ExpressionAttributeValues {
			if !strings.HasPrefix(k, ":v") {
				values[k] = v
			}
		}
		names["#ctpk"], names["#ctsk"] = pq.index.PartitionKey, pq.index.SortKey
		values[":ctpk"] = t.keyAV(pq.index.PartitionKey, pq.partition)
		if cond[0] == '#' {
			values[":ctroot"] = &types.AttributeValueMemberS{Value: pq.treeRoot}
		} else {
			values[":ctunder"] = &types.AttributeValueMemberS{Value: pq.treeRoot + string(t.opts.Delimiter)}
		}
		part.in.KeyConditionExpression = aws.String("#ctpk = :ctpk AND " + cond)
		part.in.ExpressionAttributeNames, part.in.ExpressionAttributeValues = names, values
		c, err := t.countPages(ctx, &part, what)
		total.Items += c.Items
		total.Scanned += c.Scanned
		total.Capacity += c.Capacity
		total.Pages += c.Pages
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// countPages sums the counts of every page of a COUNT query or scan.
func (t *Table) countPages(ctx context.Context, pq *preparedQuery, what string) (Count, error) {
	var c Count
	var start map[string]types.AttributeValue
	for first := true; first || start != nil; first = false {
		out, err := t.send(ctx, pq, start)
		if err != nil {
			return c, fmt.Errorf("singletable: %s %s (count): %w", pq.call(), what, err)
		}
		c.Items += int(out.Count)
		c.Scanned += int(out.ScannedCount)
		c.Pages++
		if cc := out.ConsumedCapacity; cc != nil && cc.CapacityUnits != nil {
			c.Capacity += *cc.CapacityUnits
		}
		start = out.LastEvaluatedKey
	}
	return c, nil
}

// skipReserved filters the library's own items (unique-value guards, sweep
// progress, leases: type attributes beginning with "_singletable.") out of a
// count of every type, as Table.Scan and Table.Query pass them over.
func (t *Table) skipReserved(pq *preparedQuery) {
	names, values, filter := &pq.in.ExpressionAttributeNames, &pq.in.ExpressionAttributeValues, &pq.in.FilterExpression
	if pq.scan != nil {
		names, values, filter = &pq.scan.ExpressionAttributeNames, &pq.scan.ExpressionAttributeValues, &pq.scan.FilterExpression
	}
	*names, *values = maps.Clone(*names), maps.Clone(*values)
	if *names == nil {
		*names = map[string]string{}
	}
	if *values == nil {
		*values = map[string]types.AttributeValue{}
	}
	(*names)["#rtype"], (*values)[":rtype"] = t.opts.TypeAttribute, &types.AttributeValueMemberS{Value: reservedTypePrefix}
	*filter = expr.Ptr(expr.And(aws.ToString(*filter), "NOT begins_with(#rtype, :rtype)"))
}
