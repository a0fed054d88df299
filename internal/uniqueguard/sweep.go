package uniqueguard

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Read returns what the guard item g holds: its owner (an [OwnerText]), its
// constraint and its values; ok is false for an item this library did not
// write as a guard.
func Read(g map[string]types.AttributeValue) (owner, constraint string, values []types.AttributeValue, ok bool) {
	o, _ := g[Owner].(*types.AttributeValueMemberS)
	c, _ := g[Constraint].(*types.AttributeValueMemberS)
	vl, _ := g[Values].(*types.AttributeValueMemberL)
	if o == nil || c == nil || vl == nil {
		return "", "", nil, false
	}
	return o.Value, c.Value, vl.Value, true
}

// Texts is each of vs as [Text].
func Texts(vs []types.AttributeValue) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = Text(v)
	}
	return out
}

// Table names what a repair's actions need of the table: its name, partition
// key and type attributes.
type Table struct{ Name, PartitionKey, TypeAttribute string }

// FreeOrphan is the repair of an orphan guard (at key gkey, owner its
// [OwnerText]): delete it if it is still owner's, and the owner (at okey, of
// type ownerType) is gone, of another type, or does not hold values of c.
func (t Table) FreeOrphan(gkey, okey map[string]types.AttributeValue, owner, ownerType string, c *Set, values []types.AttributeValue) []types.TransactWriteItem {
	var gb, ob expr.Builder
	gcond := gb.Name(Owner) + " = " + gb.S(owner)
	ocond := []string{"attribute_not_exists(" + ob.Name(t.PartitionKey) + ")", ob.Name(t.TypeAttribute) + " <> " + ob.S(ownerType)}
	for i, fd := range c.Fields {
		n := ob.Name(fd.Name)
		ocond = append(ocond, "attribute_not_exists("+n+")", n+" <> "+ob.Value(values[i]))
	}
	oc := orAll(ocond)
	return []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: &t.Name, Key: gkey, ConditionExpression: &gcond, ExpressionAttributeNames: gb.Names(), ExpressionAttributeValues: gb.Values()}},
		{ConditionCheck: &types.ConditionCheck{TableName: &t.Name, Key: okey, ConditionExpression: &oc, ExpressionAttributeNames: ob.Names(), ExpressionAttributeValues: ob.Values()}},
	}
}

// Restore is the repair of a value held without a guard: claim g (a claim of
// the item at key, me its [OwnerText]) if no guard appeared and the item, of
// g's OwnerType, still holds g's values.
func (t Table) Restore(g Guard, key map[string]types.AttributeValue, me string) []types.TransactWriteItem {
	var ib expr.Builder
	conds := []string{ib.Name(t.TypeAttribute) + " = " + ib.S(g.OwnerType)}
	for i, fd := range g.Of.Fields {
		conds = append(conds, ib.Name(fd.Name)+" = "+ib.Value(g.Values[i]))
	}
	ic := expr.And(conds...)
	claim := g.Action(t.Name, t.PartitionKey, t.TypeAttribute, me)
	var gb expr.Builder
	gc := "attribute_not_exists(" + gb.Name(t.PartitionKey) + ")"
	claim.Put.ConditionExpression, claim.Put.ExpressionAttributeNames, claim.Put.ExpressionAttributeValues = &gc, gb.Names(), nil
	return []types.TransactWriteItem{claim,
		{ConditionCheck: &types.ConditionCheck{TableName: &t.Name, Key: key, ConditionExpression: &ic, ExpressionAttributeNames: ib.Names(), ExpressionAttributeValues: ib.Values()}},
	}
}

func orAll(conds []string) string {
	out := ""
	for i, c := range conds {
		if i > 0 {
			out += " OR "
		}
		out += "(" + c + ")"
	}
	return out
}

// ScanFilter is the filter, built in b, of a sweep's Scan of the entity whose
// type attribute (typeAttr) is discriminator: its items and its guards.
func ScanFilter(b *expr.Builder, typeAttr, discriminator string) string {
	typ := b.Name(typeAttr)
	return "(" + typ + " = " + b.S(Type) + " AND " + b.Name(OwnerType) + " = " + b.S(discriminator) + ") OR " + typ + " = " + b.S(discriminator)
}

// Holder is the primary key of the owner the guard g names (its parts named
// by attrs), if it names one.
func Holder(attrs []string, g map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	o, ok := g[Owner].(*types.AttributeValueMemberS)
	if !ok {
		return nil, false
	}
	return OwnerKey(attrs, o.Value)
}

// Repair sends a repair with send, which sends it under one token: after a
// lost answer (lost) or a cancellation by conflicts only (conflicts) it is
// sent again, up to max attempts, after wait. landed is false when a condition
// failed (the state changed since it was read: nothing to repair, or not the
// sweep's to repair); an answer that stayed lost matches ambiguous.
func Repair(ctx context.Context, send func() error, max int, wait func(context.Context, int) error,
	lost func(error) bool, conflicts func(*types.TransactionCanceledException) bool, ambiguous error) (landed bool, _ error) {
	for attempt := 1; ; attempt++ {
		err := send()
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &tce) && !conflicts(tce):
			return false, nil
		case (lost(err) || errors.As(err, &tce)) && attempt < max:
			if werr := wait(ctx, attempt); werr != nil {
				return false, fmt.Errorf("repair: %w: %w", ambiguous, err)
			}
		case lost(err):
			return false, fmt.Errorf("repair: %w: %w", ambiguous, err)
		default:
			return false, fmt.Errorf("repair: %w", err)
		}
	}
}
