package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/wire"
)

// The read path. Every read of items goes through the same phases, each written
// once, here:
//
//  1. Options. The read's typed options become a readPlan (keyPlan for reads by
//     key, pagePlan for queries, scans and counts, imagePlan for Decode): what
//     the read does with each item. An option the read kind or its entity cannot
//     honour is refused here, before anything is sent; one a kind does not take
//     does not compile (the option interfaces of options.go, query.go, scan.go).
//     No read looks at its options after this phase: the plan carries them.
//  2. Request and send: each read kind's own (GetItem, BatchGetItem,
//     TransactGetItems, Query, Scan), built from the plan (its expiry filter, its
//     projection), on the wire path when the table takes it (wire.go).
//  3. Per item, in this order:
//     a. the type check (checkType): which entity the item is. An item is an
//     entity's only when its type attribute is a string naming it, as the write
//     guard requires (typeGuard, write.go); read through an index that does not
//     hold the type attribute, when its primary key parses with the entity's
//     templates. An item not provably the entity's is ErrTypeMismatch on a read
//     by key, skipped by an entity's query or scan, and of unknown type
//     (OnUnknown) in a collection;
//     b. expiry (expiredItem, wireVerdict): SkipExpired's rule (ttl.go), on the
//     TTL attribute as stored;
//     c. decoding and migration (decodeItem): into a value of the entity, an
//     older item migrated in memory (migrate.go);
//     d. the write-back decision (writeBack): a migrated item is written back as
//     its entity says only when the read was of whole items of the base table;
//     e. partial marking (markPartial): an item read in part keeps its key
//     inputs, filled from its keys, and is never written back; the page says
//     Partial.
//
// Items the wire path decodes (wire.go, internal/wire) have had phases a and c
// there: it decodes only an item whose type attribute is the string it expects,
// at the current schema (nothing to migrate, nothing to write back), and leaves
// every other item to the SDK, whose attribute values then take every phase here.
// Phase b for them reads the TTL's text the wire decoder kept (Sink.Peek).

// readPlan is what one read does with each item it receives, fixed by the
// options phase before anything is sent. A readPlan is a value: reads keep it on
// their stack or in their prepared query.
type readPlan struct {
	t    *Table
	info *entityInfo // the entity read; nil: any registered entity (collections, table scans, Decode)
	// byKey: a read by key (Get, BatchGet, Ref): an item that is not provably
	// info's is ErrTypeMismatch. Else it is skipped.
	byKey   bool
	unknown UnknownTypes // info nil: what to do with an item of no registered type
	expiry  *expiryRule  // SkipExpired; nil: every item is read
	// whole: the items are whole, read from the base table for the caller, so a
	// migrated one may be written back (as its entity says).
	whole bool
	// partial: items lack attributes (a projection, or an index that does not
	// hold every field). parseKeys: they may lack the type attribute or key
	// inputs, which are then found from their primary key; index is the index read.
	partial, parseKeys bool
	index              string
}

// itemVerdict is what the type check and expiry phases made of an item.
type itemVerdict uint8

const (
	itemRead    itemVerdict = iota // decode it, as the entity the type check found
	itemSkipped                    // not for this read: another entity's, or of an unknown type skipped
	itemExpired                    // its TTL has passed (SkipExpired)
	itemRaw                        // of an unknown type, kept as a RawItem (UnknownCollect)
)

// ---- Phase 1: options.

// collectKeyOptions applies the options of a read by key, refusing a nil one.
func collectKeyOptions(call, what string, opts []GetOption) (getOptions, error) {
	var o getOptions
	for i, opt := range opts {
		if opt == nil {
			return o, errorf("%s %s: option %d is nil: %w", call, what, i+1, ErrInvalidInput)
		}
		opt.applyGet(&o)
	}
	return o, nil
}

// keyPlan is the plan of a read by key of info (Get, BatchGet, a Ref's item in
// Table.BatchGet and TransactGet) with options o: whole items of the base table
// unless partial (a projection). It refuses SkipExpired on an entity without a
// ttl field.
func (t *Table) keyPlan(info *entityInfo, o getOptions, partial bool) (readPlan, error) {
	p := readPlan{t: t, info: info, byKey: true, whole: !partial, partial: partial}
	var err error
	if o.skipExpired {
		p.expiry, err = t.expiryFor(info, Index{}, true, t.now())
	}
	return p, err
}

// pagePlan is the plan of a query, scan or count of info (nil, or o.collection:
// of every type) through index ix with options o. It refuses SkipExpired where it
// cannot be honoured (ttl.go).
func (t *Table) pagePlan(info *entityInfo, ix Index, o *queryOptions) (readPlan, error) {
	p := readPlan{t: t, unknown: o.unknown, index: ix.Name}
	if !o.collection {
		p.info = info
	}
	p.partial, p.parseKeys = t.readKind(info, ix, o) // projection.go
	if len(o.project) > 0 {
		p.partial = true
	}
	p.whole = ix.Name == "" && !p.partial
	now := o.now
	if now.IsZero() {
		now = t.now()
	}
	var err error
	p.expiry, err = t.expiryFor(p.info, ix, o.skipExpired, now)
	return p, err
}

// imagePlan is the plan of decoding item images the caller holds (Decode,
// DecodeRecord, and so stream records): any registered entity, unknown types as
// mode says, migrated in memory only (an image may be older than the item).
func (t *Table) imagePlan(mode UnknownTypes) readPlan {
	return readPlan{t: t, unknown: mode}
}

// ---- Phase 3: per item.

// checkType is phase a: the entity item is for this read, or the verdict that it
// is not one (skipped, or kept raw), or the error that says it cannot be read.
func (p *readPlan) checkType(item map[string]types.AttributeValue) (*entityInfo, itemVerdict, error) {
	t := p.t
	av, typed := item[t.opts.TypeAttribute]
	if !typed && p.parseKeys {
		return p.byKeys(item)
	}
	if p.info != nil {
		switch {
		case p.info.isType(item):
			return p.info, itemRead, nil
		case p.byKey:
			return nil, itemSkipped, p.typeMismatch(av)
		}
		return nil, itemSkipped, nil
	}
	s, _ := av.(*types.AttributeValueMemberS)
	var info *entityInfo
	if s != nil {
		info = t.entityByType(s.Value)
	}
	if info != nil {
		return info, itemRead, nil
	}
	return p.unknownItem(item, s)
}

// isType reports whether an item is provably this entity's: its type attribute
// is a string naming it. The one rule of the type check, on reads (checkType) and
// on the read-backs of writes (pipeline.go) alike; the wire decoder applies the
// same (internal/wire: it decodes only an item whose type is {"S": the type}).
func (info *entityInfo) isType(item map[string]types.AttributeValue) bool {
	got, ok := item[info.table.opts.TypeAttribute].(*types.AttributeValueMemberS)
	return ok && got != nil && got.Value == info.discriminator || info.adoptable(item) // adopt.go
}

// checkWireType is phase a for an item the wire path decoded as entity typ.
func (p *readPlan) checkWireType(typ string) error {
	if p.info != nil && p.byKey && typ != p.info.discriminator {
		return p.typeMismatch(&types.AttributeValueMemberS{Value: typ})
	}
	return nil
}

// unknownItem is the verdict on an item of no registered type, as p.unknown says.
func (p *readPlan) unknownItem(item map[string]types.AttributeValue, s *types.AttributeValueMemberS) (*entityInfo, itemVerdict, error) {
	if s != nil && strings.HasPrefix(s.Value, reservedTypePrefix) {
		// The library's own items (unique-value guards, sweep progress, leases)
		// are no caller's: never decoded, never of unknown type.
		return nil, itemSkipped, nil
	}
	switch p.unknown {
	case UnknownSkip:
		return nil, itemSkipped, nil
	case UnknownCollect:
		return nil, itemRaw, nil
	}
	typ := ""
	if s != nil {
		typ = s.Value
	}
	return nil, itemSkipped, p.t.unknownType(item, typ)
}

// byKeys is phase a for an item without a type attribute, read through an index
// that does not hold it: the entity whose primary key templates parse its key
// (registration makes them disjoint, so at most one does).
func (p *readPlan) byKeys(item map[string]types.AttributeValue) (*entityInfo, itemVerdict, error) {
	if p.info != nil {
		if p.info.keysParse(item) {
			return p.info, itemRead, nil
		}
		return nil, itemSkipped, nil
	}
	for _, info := range p.t.registered() {
		if info.keysParse(item) {
			return info, itemRead, nil
		}
	}
	return p.unknownItem(item, nil)
}

// typeMismatch is the error of a read by key that found an item not provably of
// its entity: av is the item's type attribute (nil: missing).
func (p *readPlan) typeMismatch(av types.AttributeValue) error {
	attr, want := p.t.opts.TypeAttribute, p.info.discriminator
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return errorf("item has %s %q, want %q: %w", attr, x.Value, want, ErrTypeMismatch)
	case nil:
		return errorf("item has no %s attribute, so it is not provably a %s (%s %q): %w", attr, p.info.name, attr, want, ErrTypeMismatch)
	}
	return errorf("item's %s attribute is %s, not a string, so it is not provably a %s (%s %q): %w", attr, attrvalue.Kind(av), p.info.name, attr, want, ErrTypeMismatch)
}

// expiredItem is phase b on a stored item.
func (p *readPlan) expiredItem(item map[string]types.AttributeValue) bool {
	return p.expiry != nil && p.expiry.expired(item)
}

// check runs phases a and b on a stored item.
func (p *readPlan) check(item map[string]types.AttributeValue) (*entityInfo, itemVerdict, error) {
	info, v, err := p.checkType(item)
	if err == nil && (v == itemRead || v == itemRaw) && p.expiredItem(item) {
		return nil, itemExpired, nil
	}
	return info, v, err
}

// decodeItem is phase c: item decoded into rv, a value of info's type, migrated
// in memory when it is older than the entity's schema; migrated is then the image
// the raw steps made (where a write-back starts from), else nil. An item without
// a type attribute (parseKeys) is decoded as it is: its schema is unknown.
func (p *readPlan) decodeItem(info *entityInfo, item map[string]types.AttributeValue, rv reflect.Value) (migrated map[string]types.AttributeValue, err error) {
	if _, typed := item[p.t.opts.TypeAttribute]; !typed && p.parseKeys {
		err = info.plan.DecodeIgnoring(item, rv, info.ignored)
	} else {
		migrated, err = info.decodeInto(item, rv) // migrate.go
	}
	if err != nil {
		var me *MigrationError
		if errors.As(err, &me) {
			return nil, err
		}
		return nil, errorf("decode %s: %w", info.name, err)
	}
	return migrated, nil
}

// writeBack is phase d: a migrated item is written back, as its entity says
// (migrate.go), only when the read was of whole items of the base table.
func (p *readPlan) writeBack(ctx context.Context, info *entityInfo, stored, migrated map[string]types.AttributeValue, rv reflect.Value) {
	if migrated != nil && p.whole {
		info.afterMigrate(ctx, stored, migrated, rv)
	}
}

// markPartial is phase e: an item read in part whose type or key inputs may be
// missing gets its key inputs from its primary key and the index's keys.
func (p *readPlan) markPartial(info *entityInfo, item map[string]types.AttributeValue, rv reflect.Value) {
	if p.parseKeys {
		info.fillFromKeys(item, rv)
		info.fillFromIndexKeys(item, rv, p.index)
	}
}

// decode runs phases c, d and e on an item that passed phases a and b as info's.
func (p *readPlan) decode(ctx context.Context, info *entityInfo, item map[string]types.AttributeValue, rv reflect.Value) error {
	migrated, err := p.decodeItem(info, item, rv)
	if err != nil {
		return err
	}
	p.writeBack(ctx, info, item, migrated, rv)
	p.markPartial(info, item, rv)
	return nil
}

// readItem runs every phase on a stored item read for p.info, decoding it into rv.
func (p *readPlan) readItem(ctx context.Context, item map[string]types.AttributeValue, rv reflect.Value) (itemVerdict, error) {
	info, v, err := p.check(item)
	if err != nil || v != itemRead {
		return v, err
	}
	return itemRead, p.decode(ctx, info, item, rv)
}

// readInto runs every phase on a stored item, decoding it straight into a new
// last element of sl (the caller's []T), which stays only when the read keeps
// the item.
func (p *readPlan) readInto(ctx context.Context, item map[string]types.AttributeValue, sl *wire.Slice) (kept bool, err error) {
	sl.Next(nil)
	verdict, err := p.readItem(ctx, item, sl.Value(sl.Len()-1))
	if err != nil || verdict != itemRead {
		sl.Drop(nil)
		return false, err
	}
	return true, nil
}

// readAny runs every phase on a stored item of any entity: a value of its type
// (such as an Order), or a RawItem (UnknownCollect).
func (p *readPlan) readAny(ctx context.Context, item map[string]types.AttributeValue) (any, itemVerdict, error) {
	info, v, err := p.check(item)
	switch {
	case err != nil:
		return nil, v, err
	case v == itemRaw:
		return RawItem(item), v, nil
	case v != itemRead:
		return nil, v, nil
	}
	rv := reflect.New(info.goType).Elem()
	if err := p.decode(ctx, info, item, rv); err != nil {
		return nil, v, err
	}
	return rv.Interface(), itemRead, nil
}

// sink readies a wire sink for the plan: with SkipExpired, the TTL's text of each
// item it decodes is kept, for wireVerdict.
func (p *readPlan) sink(s *wire.Sink) *wire.Sink {
	if p.expiry != nil {
		s.Peek = p.expiry.attr
	}
	return s
}

// wireVerdict is phase b for entry i of a wire sink, an item the wire path
// decoded (phases a and c ran there; d has nothing to do for an item at the
// current schema, and e nothing for an item that holds its type).
func (p *readPlan) wireVerdict(s *wire.Sink, i int) itemVerdict {
	if p.expiry != nil {
		if n, ok := s.Peeked(i); ok && p.expiry.expiredNumber(n) {
			return itemExpired
		}
	}
	return itemRead
}

// errExpired is what a read by key says of an item SkipExpired leaves out.
var errExpired = fmt.Errorf("the item's TTL has passed (SkipExpired): %w", ErrNotFound)

// entityByType returns the entity registered under discriminator typ, or nil.
func (t *Table) entityByType(typ string) *entityInfo {
	t.mu.RLock()
	info := t.entities[typ]
	t.mu.RUnlock()
	return info
}

// registered lists the registered entities.
func (t *Table) registered() []*entityInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	infos := make([]*entityInfo, 0, len(t.entities))
	for _, info := range t.entities {
		infos = append(infos, info)
	}
	return infos
}

// keysParse reports whether item's primary key parses with the entity's templates.
func (info *entityInfo) keysParse(item map[string]types.AttributeValue) bool {
	return info.fillFromKeys(item, reflect.New(info.goType).Elem())
}

// fixInstant fixes the instant a read judges expiry at, once for all of its
// requests (a fan-out's partitions).
func (o *queryOptions) fixInstant(t *Table) {
	if o.skipExpired && o.now.IsZero() {
		o.now = t.now()
	}
}
