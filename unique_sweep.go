package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/uniqueguard"
)

type uniqueSweepOptions struct{ repair bool }

type repairUnique struct{}

func (repairUnique) applyUniqueSweep(o *uniqueSweepOptions) { o.repair = true }

// RepairUnique makes [Entity.SweepUnique] repair what it finds: it frees orphan
// guards and restores missing ones. Without it the sweep only reports.
func RepairUnique() UniqueSweepOption { return repairUnique{} }

// UniqueFinding is one thing [Entity.SweepUnique] found.
type UniqueFinding struct {
	Constraint string            // the constraint ("email", "orgId+slug")
	Values     []string          // its values, as text
	Item       map[string]string // the item concerned: the guard's owner (Orphans), the item holding the value (Missing, Duplicates)
	Holder     map[string]string // Duplicates: the item the guard names as the value's holder
	Repaired   bool              // RepairUnique freed (Orphans) or restored (Missing) it
}

// UniqueSweepReport is what [Entity.SweepUnique] found and did.
type UniqueSweepReport struct {
	Guards int // guards of the entity read
	Items  int // items of the entity read
	// Orphans are guards whose owner is gone, of another type, or holds
	// other values: they block the value for nobody's sake.
	Orphans []UniqueFinding
	// Missing are values items hold without a guard: another item could claim
	// them.
	Missing []UniqueFinding
	// Duplicates are values held by an item whose guard names another item:
	// two items hold one value (written outside the library). Reported, never
	// repaired: which item keeps the value is the caller's decision.
	Duplicates []UniqueFinding
}

// SweepUnique checks the guards of the entity's unique values against its items,
// and reports (and with [RepairUnique], repairs) what writers outside the library
// left behind: a guard whose owner no longer holds its value (deleted with the
// SDK, expired by DynamoDB's TTL) is freed; a value held without a guard (an
// item put with the SDK) is given one; a value held by two items is only
// reported. Each repair is a transaction conditioned on what was read (the
// guard's owner; the item still holding, or no longer holding, the value), so
// a concurrent write of the library's is never undone.
//
// Cost: a consistent Scan of the whole table (1 RCU per 4 KB read, every type),
// one consistent GetItem per guard and per value held, and a transaction (2
// WCU per action) per repair. It is meant to be run now and then, or after a
// bulk change made outside the library.
//
//go:noinline
func (e *Entity[T]) SweepUnique(ctx context.Context, opts ...UniqueSweepOption) (UniqueSweepReport, error) {
	return e.core().sweepUnique(ctx, opts)
}

func (e *entity) sweepUnique(ctx context.Context, opts []UniqueSweepOption) (_ UniqueSweepReport, err error) {
	var rep UniqueSweepReport
	if err := e.refused("SweepUnique"); err != nil {
		return rep, err
	}
	ctx, done := e.begin(ctx, "SweepUnique")
	defer done(&err)
	info, t := e.info, e.table
	u := info.unique
	if u == nil {
		return rep, errorf("SweepUnique %s: the entity has no unique values: %w", info.name, ErrInvalidInput)
	}
	var o uniqueSweepOptions
	for _, opt := range opts {
		if opt == nil {
			return rep, errorf("SweepUnique %s: a nil option: %w", info.name, ErrInvalidInput)
		}
		opt.applyUniqueSweep(&o)
	}
	var b expr.Builder
	filter := uniqueguard.ScanFilter(&b, t.opts.TypeAttribute, info.discriminator)
	// Paged here, not by the SDK's paginator, which adds middleware of its own
	// (APIOptions) that a client not known to take it may refuse: the scan goes
	// through the table's client as every other call does.
	in := dynamodb.ScanInput{TableName: t.namePtr(), ConsistentRead: aws.Bool(true),
		FilterExpression: &filter, ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values()}
	for first := true; first || len(in.ExclusiveStartKey) > 0; first = false {
		page, err := t.client.Scan(ctx, &in)
		if err != nil {
			return rep, errorf("SweepUnique %s: Scan: %w", info.name, err)
		}
		for _, item := range page.Items {
			var err error
			if info.isType(item) {
				rep.Items++
				err = u.sweepItem(ctx, item, o.repair, &rep)
			} else {
				rep.Guards++
				err = u.sweepGuard(ctx, item, o.repair, &rep)
			}
			if err != nil {
				return rep, errorf("SweepUnique %s: %w", info.name, err)
			}
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return rep, nil
}

// sweepGuard checks one guard against its owner.
func (u *uniqueFeature) sweepGuard(ctx context.Context, g map[string]types.AttributeValue, repair bool, rep *UniqueSweepReport) error {
	t, info := u.info.table, u.info
	owner, cname, values, ok := uniqueguard.Read(g)
	if !ok {
		return nil // not a guard this library wrote
	}
	key, ok := uniqueguard.OwnerKey(t.baseKeyAttrs(), owner)
	c := uniqueguard.Find(u.cons, cname)
	if !ok || c == nil {
		return nil
	}
	cur, err := t.readBack(ctx, key)
	if err != nil {
		return err
	}
	if cur != nil && info.isType(cur) {
		if vs, ok := c.ValuesOf(cur); ok && uniqueguard.Same(vs, values) {
			return nil // held by its owner
		}
	}
	f := UniqueFinding{Constraint: c.Name, Values: uniqueguard.Texts(values), Item: t.keyStrings(key)}
	if repair {
		// Free the guard if it is still this owner's and the owner still does not
		// hold the value.
		landed, err := u.repairTx(ctx, u.repairTable().FreeOrphan(t.keyOf(g), key, owner, info.discriminator, c, values))
		if err != nil {
			return err
		}
		f.Repaired = landed
	}
	rep.Orphans = append(rep.Orphans, f)
	return nil
}

// sweepItem checks the guards of one item's values.
func (u *uniqueFeature) sweepItem(ctx context.Context, item map[string]types.AttributeValue, repair bool, rep *UniqueSweepReport) error {
	t, info := u.info.table, u.info
	key := t.keyOf(item)
	me := uniqueguard.OwnerText(t.baseKeyAttrs(), key)
	for _, c := range u.cons {
		vs, ok := c.ValuesOf(item)
		if !ok {
			continue
		}
		gkey := u.guardKey(c, vs)
		g, err := t.readBack(ctx, gkey)
		if err != nil {
			return err
		}
		f := UniqueFinding{Constraint: c.Name, Values: uniqueguard.Texts(vs), Item: t.keyStrings(key)}
		switch {
		case uniqueguard.OwnedBy(g, me):
			continue
		case g != nil:
			if hk, ok := uniqueguard.Holder(t.baseKeyAttrs(), g); ok {
				f.Holder = t.keyStrings(hk)
			}
			rep.Duplicates = append(rep.Duplicates, f)
			continue
		}
		if repair {
			// Claim the value for the item if no guard appeared and the item still
			// holds it.
			claim := uniqueguard.Guard{Key: gkey, Claim: true, OwnerType: info.discriminator, Constraint: c.Name, Values: vs, Of: c}
			if f := u.ttlField(); f != nil { // the owner's expiry, as every claim carries it
				claim.TTLAttr, claim.TTL = f.Name, item[f.Name]
			}
			landed, err := u.repairTx(ctx, u.repairTable().Restore(claim, key, me))
			if err != nil {
				return err
			}
			f.Repaired = landed
		}
		rep.Missing = append(rep.Missing, f)
	}
	return nil
}

// repairTable is what internal/uniqueguard's repairs name of the table.
func (u *uniqueFeature) repairTable() uniqueguard.Table {
	t := u.info.table
	return uniqueguard.Table{Name: t.name, PartitionKey: t.opts.PartitionKey, TypeAttribute: t.opts.TypeAttribute}
}

// repairTx sends a repair under a token of its own, sent again under it after a
// lost answer (uniqueguard.Repair): landed is false when a condition failed
// (the state changed since it was read: nothing to repair, or not this sweep's
// to repair).
func (u *uniqueFeature) repairTx(ctx context.Context, acts []types.TransactWriteItem) (landed bool, _ error) {
	t := u.info.table
	token, err := newToken()
	if err != nil {
		return false, err
	}
	b := t.opts.Backoff.withDefaults()
	send := func() error {
		_, err := t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: acts, ClientRequestToken: &token})
		return err
	}
	return uniqueguard.Repair(ctx, send, b.MaxAttempts, b.Wait, ambiguous, onlyConflicts, ErrAmbiguous)
}
