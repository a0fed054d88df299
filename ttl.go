package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
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

// WithTTLAttribute names the table's TTL attribute; see [TableOptions.TTLAttribute].
// An entity's ttl field must then be stored under this name.
func WithTTLAttribute(name string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		if name == "" {
			return fmt.Errorf("WithTTLAttribute(\"\"): %w", ErrInvalidInput)
		}
		o.TTLAttribute = name
		return nil
	})
}

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
	base := derefType(f.Type)
	switch {
	case h.ttl != nil:
		return fail("a second ttl field (the first is " + h.ttl.GoName + ")")
	case info.roleTaken(f) != "":
		return fail("the field is the " + info.roleTaken(f) + " field already")
	case base == timeType && !f.UnixTime:
		return fail("a time.Time is stored as RFC 3339 text, which DynamoDB's TTL ignores: tag it dynamodbav:\"" + f.Name + ",unixtime\" to store Unix seconds")
	case f.AsString:
		return fail("the string option stores the number as text, which DynamoDB's TTL ignores")
	case base != timeType && !isIntegerKind(base.Kind()):
		return fail("DynamoDB's TTL is a number of Unix seconds: use an integer field or a time.Time tagged unixtime, not " + f.Type.String())
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
func (t *Table) TTLAttribute() string { return t.ttlAttribute() }

// EnableTTL turns DynamoDB's TTL on for the table's TTL attribute
// (DescribeTimeToLive, then UpdateTimeToLive unless it is on already). It is
// idempotent; TTL on for another attribute is an error, as DynamoDB allows one.
// DynamoDB may take up to an hour to apply the change. The table's client must be
// a [TTLClient].
func (t *Table) EnableTTL(ctx context.Context) error {
	attr := t.ttlAttribute()
	if attr == "" {
		return fmt.Errorf("singletable: EnableTTL %s: no TTL attribute: tag a field singletable:\"ttl\" or use WithTTLAttribute: %w", t.name, ErrInvalidInput)
	}
	c, ok := t.user.(TTLClient)
	if !ok {
		return fmt.Errorf("singletable: EnableTTL %s: the table's client (%T) has no UpdateTimeToLive and DescribeTimeToLive (TTLClient): %w", t.name, t.user, ErrInvalidInput)
	}
	var optFns []func(*dynamodb.Options)
	if t.observing() {
		optFns = append(optFns, t.observeCall)
	}
	d, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: t.namePtr()}, optFns...)
	if err != nil {
		return fmt.Errorf("singletable: EnableTTL %s: %w", t.name, err)
	}
	if desc := d.TimeToLiveDescription; desc != nil && desc.AttributeName != nil {
		switch cur := aws.ToString(desc.AttributeName); {
		case (desc.TimeToLiveStatus == types.TimeToLiveStatusEnabled || desc.TimeToLiveStatus == types.TimeToLiveStatusEnabling) && cur == attr:
			return nil
		case desc.TimeToLiveStatus == types.TimeToLiveStatusEnabled || desc.TimeToLiveStatus == types.TimeToLiveStatusEnabling:
			return fmt.Errorf("singletable: EnableTTL %s: TTL is on for attribute %q, not %q; DynamoDB allows one: %w", t.name, cur, attr, ErrInvalidInput)
		}
	}
	_, err = c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: t.namePtr(),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)}}, optFns...)
	if err != nil {
		return fmt.Errorf("singletable: EnableTTL %s: %w", t.name, err)
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
		return fmt.Errorf("singletable: CreateTable %s: the table was created, but: %w", t.name, err)
	}
	return nil
}

type skipExpiredOption struct{}

// SkipExpired leaves out of a read the items whose TTL has passed by the table's
// clock ([WithClock]) but that DynamoDB has not deleted yet: [Entity.Get] returns
// [ErrNotFound] for one, [Entity.BatchGet] counts it as missing, and queries of
// every kind and scans filter them out (a FilterExpression on the table's TTL attribute:
// they are read, cost read capacity and count towards [Limit] all the same). An
// item without a TTL, or with one that is not a number, never expires. Off by
// default. A read of an entity without a ttl field, or of a collection on a table
// without a TTL attribute, refuses it with [ErrInvalidInput].
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

// expired reports whether the value's TTL has passed at now.
func (info *entityInfo) expired(sv reflect.Value, now time.Time) bool {
	h := info.hooks
	if h == nil || h.ttl == nil {
		return false
	}
	sec, ok := ttlSeconds(h.ttl, sv)
	return ok && sec <= now.Unix()
}

// ttlSeconds reads a ttl field as Unix seconds; false when it holds none.
func ttlSeconds(f *codec.Field, sv reflect.Value) (int64, bool) {
	fv, ok := f.ValueOf(sv)
	if !ok {
		return 0, false
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return 0, false
		}
		fv = fv.Elem()
	}
	switch {
	case fv.Type() == timeType:
		tm := fv.Interface().(time.Time)
		return tm.Unix(), !tm.IsZero()
	case fv.CanInt():
		return fv.Int(), fv.Int() != 0
	case fv.CanUint():
		return int64(fv.Uint()), fv.Uint() != 0 && fv.Uint() < 1<<63
	}
	return 0, false
}

// unexpiredFilter is the filter that keeps items whose TTL (attr) has not passed:
// no TTL, a TTL that is not a number, or one after now.
func unexpiredFilter(b *expr.Builder, attr string, now time.Time) string {
	name := b.Name(attr)
	return "attribute_not_exists(" + name + ") OR NOT attribute_type(" + name + ", " + b.S("N") + ") OR " + name + " > " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)})
}

// expiredFilterFor returns the SkipExpired filter of a query of info (nil: a
// collection query).
func (t *Table) expiredFilterFor(b *expr.Builder, info *entityInfo, o *queryOptions) (string, error) {
	if !o.skipExpired {
		return "", nil
	}
	attr := t.ttlAttribute()
	if info != nil && !o.collection {
		if err := info.refuseSkipExpired(); err != nil {
			return "", err
		}
		attr = info.hooks.ttl.Name
	}
	if attr == "" {
		return "", fmt.Errorf("SkipExpired: table %s has no TTL attribute: %w", t.name, ErrInvalidInput)
	}
	return unexpiredFilter(b, attr, t.now()), nil
}

// skipExpired returns ErrNotFound for a value read with SkipExpired whose TTL has
// passed.
func (e *Entity[T]) skipExpired(o getOptions, v *T) error {
	if o.skipExpired && e.info.expired(reflect.ValueOf(v).Elem(), e.table.now()) {
		return fmt.Errorf("the item's TTL has passed (SkipExpired): %w", ErrNotFound)
	}
	return nil
}

// readsTTL adds the TTL attribute to a projected read's attributes when the read
// skips expired items, which it tells from the TTL (refused on an entity without
// one).
func (info *entityInfo) readsTTL(o getOptions, list []string) ([]string, error) {
	if !o.skipExpired {
		return list, nil
	}
	if err := info.refuseSkipExpired(); err != nil {
		return nil, err
	}
	if name := info.hooks.ttl.Name; !slices.Contains(list, name) {
		list = append(slices.Clone(list), name)
	}
	return list, nil
}
