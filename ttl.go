package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/ttlexpiry"
	"github.com/singletable/singletable/internal/wrap"
)

// Time to live. A field tagged `singletable:"ttl"` holds the item's expiry in Unix
// seconds, stored as a number: an integer field, or a time.Time tagged
// `dynamodbav:",unixtime"`. DynamoDB deletes an item some time after its TTL has
// passed (typically within days, at no write cost), once TTL is turned on for that
// attribute: [Table.CreateTable] does so when the table has a TTL attribute, and
// [Table.EnableTTL] on an existing table. A table has one TTL attribute, so every
// entity's ttl field must be stored under the same name ([WithTTLAttribute] names
// it up front). Until DynamoDB deletes them, expired items are still read;
// [SkipExpired] leaves them out of a read (it is off by default).

// TTLClient is the part of the DynamoDB API that [Table.EnableTTL] calls.
// *dynamodb.Client satisfies it; a [Client] given to [NewTable] that does not is
// told so by EnableTTL.
type TTLClient interface {
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

var _ TTLClient = (*dynamodb.Client)(nil)

// compileTTL makes the struct field at index the item's TTL.
func compileTTL(info *entityInfo, index []int, sf reflect.StructField) error {
	f, err := storedField(info, index, sf, "ttl")
	if err != nil {
		return err
	}
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "ttl (attribute " + f.Name + "): " + reason}
	}
	h := info.hooksOf()
	switch problem := ttlexpiry.FieldProblem(f); {
	case h.ttl != nil:
		return fail("a second ttl field (the first is " + h.ttl.GoName + ")")
	case info.roleTaken(f) != "":
		return fail("the field is the " + info.roleTaken(f) + " field already")
	case problem != "":
		return fail(problem)
	}
	t := info.table
	if want := t.ttlAttribute(); want != "" && want != f.Name {
		return fail("the table's TTL attribute is " + strconv.Quote(want) + ", and a table has one: store the field under that name")
	}
	h.ttl = f
	return nil
}

// ttlAttribute is the table's TTL attribute: the one given, else the registered
// entities' (they all use one), else "".
func (t *Table) ttlAttribute() string {
	if t.opts.TTLAttribute != "" {
		return t.opts.TTLAttribute
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, info := range t.entities {
		if h := info.hooks; h != nil && h.ttl != nil {
			return h.ttl.Name
		}
	}
	return ""
}

// TTLAttribute returns the table's TTL attribute: the one given with
// [WithTTLAttribute], else that of the registered entities' ttl fields; "" when
// there is none.
func (t *Table) TTLAttribute() string {
	if t == nil {
		return ""
	}
	return t.ttlAttribute()
}

// EnableTTL turns DynamoDB's TTL on for the table's TTL attribute
// (DescribeTimeToLive, then UpdateTimeToLive unless it is on already). It is
// idempotent; TTL on for another attribute is an error, as DynamoDB allows one.
// DynamoDB may take up to an hour to apply the change. The table's client must be
// a [TTLClient].
func (t *Table) EnableTTL(ctx context.Context) (err error) {
	if err := t.refused("Table.EnableTTL"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "EnableTTL")
	defer done(&err)
	if err := t.refuseExplain(ctx, "EnableTTL"); err != nil { // explain.go
		return err
	}
	attr := t.ttlAttribute()
	if attr == "" {
		return errorf("EnableTTL %s: no TTL attribute: tag a field singletable:\"ttl\" or use WithTTLAttribute: %w", t.name, ErrInvalidInput)
	}
	c, ok := t.user.(TTLClient)
	if !ok {
		return errorf("EnableTTL %s: the table's client (%T) has no UpdateTimeToLive and DescribeTimeToLive (TTLClient): %w", t.name, t.user, ErrInvalidInput)
	}
	c = wrap.TTL{C: c, Around: t.sendTable}
	if t.observing() {
		c = wrap.TTL{C: c, Around: t.observed}
	}
	if err := ttlexpiry.Enable(ctx, c, t.namePtr(), attr, ErrInvalidInput); err != nil {
		return errorf("EnableTTL %s: %w", t.name, err)
	}
	return nil
}

// enableTTLAfterCreate turns TTL on for a table just created, when it has a TTL
// attribute.
func (t *Table) enableTTLAfterCreate(ctx context.Context) error {
	if t.ttlAttribute() == "" {
		return nil
	}
	if err := t.EnableTTL(ctx); err != nil {
		return errorf("CreateTable %s: the table was created, but: %w", t.name, err)
	}
	return nil
}

type skipExpiredOption struct{}

// SkipExpired leaves out of a read the items whose TTL has passed by the table's
// clock ([WithClock]) but that DynamoDB has not deleted yet: [Entity.Get] returns
// [ErrNotFound] for one, [Entity.BatchGet] counts it as missing, [Table.BatchGet]
// fills its [Ref] with ErrNotFound, and queries of every kind, scans and counts
// filter them out (a FilterExpression on the table's TTL attribute: they are read,
// cost read capacity and count towards [Limit] all the same). Off by default.
//
// Expired means what DynamoDB's TTL deletes: the TTL attribute is a number of Unix
// seconds at or before now and no more than five years before it. An item without
// the attribute, with one that is not a number, or with a time more than five
// years in the past (0, a negative number, the zero time.Time stored with unixtime)
// is never deleted by DynamoDB, and never expired for SkipExpired. The rule is
// judged on the attribute as stored, once per read at one instant, in the filter
// sent and in the check of each item read alike.
//
// A read of an entity without a ttl field, of a collection on a table without a
// TTL attribute, a [Table.BatchGet] with a [Ref] of an entity without a ttl field,
// and a read through an index that does not hold the TTL attribute refuse it with
// [ErrInvalidInput], before anything is sent.
func SkipExpired() ReadOption { return skipExpiredOption{} }

func (skipExpiredOption) applyGet(o *getOptions) { o.skipExpired = true }
func (skipExpiredOption) applyQuery(o *queryOptions) error {
	o.skipExpired = true
	return nil
}
func (s skipExpiredOption) applyShardQuery(o *queryOptions) error { return s.applyQuery(o) }
func (s skipExpiredOption) applyCollection(o *queryOptions) error { return s.applyQuery(o) }
func (s skipExpiredOption) applyScan(o *queryOptions) error       { return s.applyQuery(o) }
func (s skipExpiredOption) applyTableScan(o *queryOptions) error  { return s.applyQuery(o) }

// refuseSkipExpired refuses SkipExpired on a read of an entity without a ttl field.
func (info *entityInfo) refuseSkipExpired() error {
	if info.hooks == nil || info.hooks.ttl == nil {
		return fmt.Errorf("SkipExpired: %s has no ttl field (singletable:\"ttl\"): %w", info.name, ErrInvalidInput)
	}
	return nil
}

// expiryRule is SkipExpired's rule at one instant (see [SkipExpired]): an item is
// expired when its TTL attribute attr is a number from oldest to now, both
// included. The read path judges each item by it (the expiry phase, readpath.go),
// and queries, scans and counts send its filter: both read the attribute as
// stored, so they say the same of every item.
type expiryRule struct {
	attr        string
	now, oldest int64 // Unix seconds
}

// newExpiryRule is the rule on attr at now.
func newExpiryRule(attr string, now time.Time) *expiryRule {
	return &expiryRule{attr: attr, now: now.Unix(), oldest: ttlexpiry.Oldest(now)}
}

// filter is the filter expression that keeps the items the rule does not call
// expired: no TTL, a TTL that is not a number, or one outside oldest..now.
func (x *expiryRule) filter(b *expr.Builder) string {
	return ttlexpiry.Filter(b, x.attr, x.now, x.oldest)
}

// expired reports whether a stored item is expired.
func (x *expiryRule) expired(item map[string]types.AttributeValue) bool {
	n, ok := item[x.attr].(*types.AttributeValueMemberN)
	return ok && n != nil && x.expiredNumber(n.Value)
}

// expiredNumber reports whether a TTL stored as the number text n is expired.
func (x *expiryRule) expiredNumber(n string) bool { return ttlexpiry.Expired(n, x.now, x.oldest) }

// expiryFor is the SkipExpired rule of a read of info (nil: of a collection, or
// of every type) through index ix at now; nil without SkipExpired. It refuses
// what cannot be honoured: an entity without a ttl field, a table without a TTL
// attribute, an index that does not hold it (its items could not say).
func (t *Table) expiryFor(info *entityInfo, ix Index, skip bool, now time.Time) (*expiryRule, error) {
	if !skip {
		return nil, nil
	}
	attr := t.ttlAttribute()
	if info != nil {
		if err := info.refuseSkipExpired(); err != nil {
			return nil, err
		}
		attr = info.hooks.ttl.Name
	}
	switch {
	case attr == "":
		return nil, fmt.Errorf("SkipExpired: table %s has no TTL attribute: %w", t.name, ErrInvalidInput)
	case ix.Name != "" && !ix.Local && !t.indexHolds(ix, attr):
		return nil, fmt.Errorf("SkipExpired: index %s projects %s, which does not hold the TTL attribute %q, so its items cannot say whether they expired: %w", ix.Name, t.projectionText(ix), attr, ErrInvalidInput)
	}
	return newExpiryRule(attr, now), nil
}

// readsTTL adds the TTL attribute to a projected read's attributes when the read
// skips expired items, which it tells from the TTL.
func (x *expiryRule) readsTTL(list []string) []string {
	if x != nil && !slices.Contains(list, x.attr) {
		list = append(slices.Clone(list), x.attr)
	}
	return list
}
