package singletable

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/nativekey"
)

// Queries of native indexes (multiattr.go), checked against DynamoDB's rules
// before anything is sent:
//
//   - every partition attribute gets an equality, from the key value's field;
//   - the key value's set sort fields, left to right, become equalities: a set
//     sort field after an unset one is refused (DynamoDB reads sort attributes
//     left to right, with no gaps);
//   - a sort condition (SK[T]() or SKEqual... given a T) compares the last sort
//     attribute its value sets; every sort attribute before that one gets an
//     equality, from the condition's value or the key value's (which must agree
//     when both set it); Between's bounds compare the same attribute;
//     BeginsWith does not apply to numbers; Tree and text values do not apply
//     (nothing is rendered).
//
// A field is unset when it is zero as omitempty sees it (an empty string, a zero
// number, a nil pointer or slice) or a zero time.Time: to query a zero number,
// make the field a pointer.

// nativeQuery is what a prepared query of a native index keeps: the equality
// conditions, which a cursor must carry unchanged.
type nativeQuery struct {
	eq map[string]types.AttributeValue
}

// checkStart refuses a cursor whose key leaves the query's equalities: one that
// would move the query to another partition or sort prefix.
func (nq *nativeQuery) checkStart(start map[string]types.AttributeValue) error {
	if attr, ok := nativekey.Leaves(nq.eq, start); ok {
		return fmt.Errorf("%w: it points into another partition (attribute %s)", ErrInvalidCursor, attr)
	}
	return nil
}

// prepareNativeQuery is prepareQuery for a native index: the same phases, with
// the key condition built from the key value's fields.
func (t *Table) prepareNativeQuery(info *entityInfo, ix Index, sv reflect.Value, o *queryOptions, asEntity func(any) (reflect.Value, bool)) (*preparedQuery, error) {
	p := &nativekey.Query{Index: ix.Name, What: "collection", Invalid: ErrInvalidInput}
	if info != nil {
		p.What, p.Entity = info.name, info.name
	}
	switch {
	case info == nil || !sv.IsValid():
		return nil, p.Fail("query it with a value of a registered entity: its key is the entity's own attributes (Partition does not apply)")
	case o.partition != nil:
		return nil, p.Fail("Partition does not apply: the partition is the key value's attributes")
	case o.consistent:
		return nil, p.Fail("a global index does not support consistent reads (Consistent)")
	}
	p.View = info.native[ix.Name]
	if p.View == nil || !p.View.Member() {
		return nil, p.Fail("%s does not store %s, so none of its items is in the index", info.name, strings.Join(p.View.Missing(), ", "))
	}
	var sort *nativekey.Sort
	if c := o.sk; c != nil {
		sort = &nativekey.Sort{Func: skFuncNames[c.op], Op: skOpNames[c.op], Values: c.values}
	}
	var b expr.Builder
	plan, err := p.Plan(&b, sv, sort, asEntity)
	if err != nil {
		return nil, err
	}
	kind := "*"
	if !o.collection {
		kind = info.discriminator
	}
	pq := &preparedQuery{index: ix, native: &nativeQuery{eq: plan.Eq}, partition: plan.Partition}
	pq.identity = []byte(t.name + "\x00" + o.index + "\x00" + kind + "\x00" + plan.Ident + "\x00" + strconv.FormatBool(o.desc))
	if pq.plan, err = t.pagePlan(info, ix, o); err != nil { // readpath.go
		return nil, errorf("Query %s: %w", p.What, err)
	}
	if err := t.queryInput(pq, &b, plan.Condition, o); err != nil {
		return nil, errorf("Query %s: %w", p.What, err)
	}
	if o.cursor != "" {
		start, err := t.decodeCursor(o.cursor, pq)
		if err != nil {
			return nil, errorf("Query %s: %w", p.What, err)
		}
		pq.in.ExclusiveStartKey = start
	}
	return pq, nil
}
