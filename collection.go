package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An item collection is every item in one partition, of every entity type: a
// customer's profile with its orders, an order with its line items. One Query reads
// it; [Table.Query] and [Table.All] decode each item by its type attribute into the
// registered entity type, and a [Collection] decodes the whole collection into a
// struct of your own.

// UnknownTypeError names the type value and the key of an item no registered entity
// can decode. It matches [ErrUnknownType].
type UnknownTypeError struct {
	Type string            // the type attribute's value; "" when it is missing or not a string
	Key  map[string]string // the item's primary key
}

// Error names the item's key and its type value.
func (e *UnknownTypeError) Error() string {
	t := strconv.Quote(e.Type)
	if e.Type == "" {
		t = "(missing)"
	}
	return "singletable: item " + formatKey(e.Key) + " has unknown type " + t
}

// Is matches ErrUnknownType.
func (e *UnknownTypeError) Is(target error) bool { return target == ErrUnknownType }

// UnknownTypes says what a collection query does with an item of unknown type.
type UnknownTypes uint8

const (
	// UnknownFail stops the query with an [*UnknownTypeError]. The default.
	UnknownFail UnknownTypes = iota
	// UnknownSkip leaves such items out.
	UnknownSkip
	// UnknownCollect keeps them as [RawItem] values: yielded by [Table.Query] and
	// [Table.All], gathered in a Collection's `singletable:",unknown"` field.
	UnknownCollect
)

type unknownOption struct{ m UnknownTypes }

func (u unknownOption) check() error {
	if u.m > UnknownCollect {
		return fmt.Errorf("OnUnknown(%d): %w", u.m, ErrInvalidInput)
	}
	return nil
}

func (u unknownOption) applyCollection(o *queryOptions) error {
	o.unknown, o.unknownSet = u.m, true
	return u.check()
}

func (u unknownOption) applyTableScan(o *queryOptions) error { return u.applyCollection(o) }

func (u unknownOption) applyDecode(o *decodeOptions) error {
	o.unknown = u.m
	return u.check()
}

// OnUnknown sets what a collection query, a table scan or [Table.Decode]
// does with an item whose type attribute is missing or names no registered
// entity. Entity queries are not affected: they skip every item of another type.
func OnUnknown(m UnknownTypes) UnknownOption { return unknownOption{m} }

// RawItem is an item as DynamoDB returned it, for items of unknown type.
type RawItem map[string]types.AttributeValue

// Query reads one page of an item collection (one Query call) and decodes each item
// into its registered entity type: the page's Items hold values such as Customer
// and Order (not pointers), in sort key order, for a type switch. key chooses the
// partition: a rendered partition key value (a string), or a value of a registered
// entity (T or *T) whose partition key template for the queried index renders it.
// Sort key conditions take strings, or values of key's entity type. Without one,
// an entity value narrows the sort key as in [Entity.Query], except that a value
// with every sort key input set reads its item and the items under it, as [SKTree]
// does (an order and its line items, not order o10); a value that sets only the
// partition's inputs, or a string, reads the whole partition. [Limit] counts items
// of every type. Cost: 0.5 RCU per 4 KB read. key is not modified.
func (t *Table) Query(ctx context.Context, key any, opts ...CollectionOption) (_ Page[any], err error) {
	if err := t.refused("Table.Query"); err != nil {
		return Page[any]{}, err
	}
	ctx, done := t.begin(ctx, "Query")
	defer done(&err)
	pq, _, err := t.prepareCollection(key, opts)
	if err != nil {
		return Page[any]{}, err
	}
	vals, _, meta, err := t.collectionPage(ctx, pq, nil) // wire.go
	if err != nil {
		return Page[any]{}, err
	}
	return Page[any]{Items: vals, Cursor: meta.cursor, Scanned: meta.scanned, Capacity: meta.capacity, Partial: pq.plan.partial}, nil
}

// All iterates over every item of a collection query, page after page, as
// [Table.Query] decodes them. It stops at the first error, which it yields with a
// nil value.
func (t *Table) All(ctx context.Context, key any, opts ...CollectionOption) iter.Seq2[any, error] {
	if err := t.refused("Table.All"); err != nil {
		return func(yield func(any, error) bool) { yield(nil, err) }
	}
	return spanned(ctx, t.begin, "All", func(ctx context.Context, yield func(any, error) bool) {
		pq, _, err := t.prepareCollection(key, opts)
		if err == nil && pq.plan.partial {
			err = t.refuseIterPartial("All", "collection", pq.index, "page through it with Table.Query (Page.Partial says so)")
		}
		if err != nil {
			yield(nil, err)
			return
		}
		var start map[string]types.AttributeValue
		for first := true; first || start != nil; first = false {
			vals, out, _, err := t.collectionPage(ctx, pq, start) // wire.go
			for _, v := range vals {
				if !yield(v, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
				return
			}
			start = out.LastEvaluatedKey
		}
	})
}

// prepareCollection resolves key and builds a query of every type in its partition.
func (t *Table) prepareCollection(key any, opts []CollectionOption) (*preparedQuery, *queryOptions, error) {
	o := &queryOptions{collection: true}
	if err := applyOptions(o, "Query", "collection", opts, CollectionOption.applyCollection); err != nil {
		return nil, nil, err
	}
	if s, ok := key.(string); ok {
		if o.partition != nil && *o.partition != s {
			return nil, nil, errorf("Query collection: Partition(%q) and the partition %q given as the key: give one: %w", *o.partition, s, ErrInvalidInput)
		}
		o.partition = &s
		pq, err := t.prepareQuery(nil, reflect.Value{}, o, nil)
		return pq, o, err
	}
	rv := reflect.ValueOf(key)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() || rv.Kind() == reflect.Pointer {
		return nil, nil, errorf("Query collection: nil key: %w", ErrInvalidInput)
	}
	t.mu.RLock()
	info, ok := t.byGoType[rv.Type()]
	t.mu.RUnlock()
	if !ok {
		return nil, nil, errorf("Query collection: key of type %s: want a string or a value of an entity registered on table %s: %w", rv.Type(), t.name, ErrInvalidInput)
	}
	pq, err := t.prepareQuery(info, rv, o, func(v any) (reflect.Value, bool) {
		x := reflect.ValueOf(v)
		if x.Kind() == reflect.Pointer && !x.IsNil() {
			x = x.Elem()
		}
		return x, x.IsValid() && x.Type() == info.goType
	})
	return pq, o, err
}

// entityOf returns the registered entity an item's type attribute names.
func (t *Table) entityOf(item map[string]types.AttributeValue) (*entityInfo, string) {
	s, _ := item[t.opts.TypeAttribute].(*types.AttributeValueMemberS)
	if s == nil {
		return nil, ""
	}
	t.mu.RLock()
	info := t.entities[s.Value]
	t.mu.RUnlock()
	return info, s.Value
}

func (t *Table) unknownType(item map[string]types.AttributeValue, typ string) error {
	key := map[string]string{}
	for _, a := range []string{t.opts.PartitionKey, t.opts.SortKey} {
		if s, ok := item[a].(*types.AttributeValueMemberS); ok {
			key[a] = s.Value
		}
	}
	return &UnknownTypeError{Type: typ, Key: key}
}

// Collection decodes item collections into C, a struct whose fields are tagged with
// the entity type they hold:
//
//	type CustomerOrders struct {
//	    Customer *Customer `singletable:"Customer"` // one item: T or *T
//	    Orders   []Order   `singletable:"Order"`    // many: []T or []*T
//	    Other    []singletable.RawItem `singletable:",unknown"` // with OnUnknown(UnknownCollect)
//	}
//
// Items of registered types that C has no field for are skipped. A Collection is
// safe for concurrent use.
type Collection[C any] struct {
	x collection // a field, not embedded: see Entity
}

// collection is what a Collection holds, the same for every C: Go compiles a generic
// type's methods again for every struct type it is instantiated with, so the
// Collection[C] methods are thin shells that hand this engine the reflect.Value of
// the caller's C, and everything else is compiled once.
type collection struct {
	table   *Table
	name    string                // C's name, for errors
	goType  reflect.Type          // C
	fields  map[string]*collField // by discriminator
	unknown []int                 // index of the `singletable:",unknown"` field, if any
}

type collKind uint8

const (
	collOne collKind = iota
	collPtr
	collSlice
	collSlicePtr
)

type collField struct {
	goName string
	index  []int
	kind   collKind
	info   *entityInfo
}

// NewCollection compiles C for collections of table t. The entity types C names must
// be registered on t first. Errors name C's field and match [ErrInvalidEntity].
func NewCollection[C any](t *Table) (*Collection[C], error) {
	c, err := newCollection(t, reflect.TypeFor[C]())
	if err != nil {
		return nil, err
	}
	return &Collection[C]{c}, nil
}

// newCollection compiles the collection struct type rt for table t: which field
// holds which entity, and how (NewCollection).
func newCollection(t *Table, rt reflect.Type) (collection, error) {
	if err := t.refused("NewCollection[" + rt.String() + "]"); err != nil {
		return collection{}, err
	}
	name := rt.String()
	if rt.Kind() != reflect.Struct {
		return collection{}, &EntityError{Entity: name, Reason: "a collection must be a struct type"}
	}
	c := collection{table: t, name: rt.Name(), goType: rt, fields: map[string]*collField{}}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i := range rt.NumField() {
		sf := rt.Field(i)
		tag, ok := sf.Tag.Lookup("singletable")
		if !ok {
			continue
		}
		fail := func(reason string) error { return &EntityError{Entity: c.name, Field: sf.Name, Reason: reason} }
		if !sf.IsExported() {
			return collection{}, fail("field is not exported")
		}
		if tag == ",unknown" {
			if sf.Type != reflect.TypeFor[[]RawItem]() {
				return collection{}, fail("the unknown field must be a []singletable.RawItem")
			}
			c.unknown = sf.Index
			continue
		}
		if tag == "" || strings.ContainsAny(tag, ",") {
			return collection{}, fail("tag " + strconv.Quote(tag) + ": want the entity type, or \",unknown\"")
		}
		info, ok := t.entities[tag]
		if !ok {
			return collection{}, fail("no entity of type " + strconv.Quote(tag) + " is registered on table " + t.name + didYouMean(tag, sortedKeys(t.entities)))
		}
		if _, dup := c.fields[tag]; dup {
			return collection{}, fail("type " + strconv.Quote(tag) + " has two fields")
		}
		f := &collField{goName: sf.Name, index: sf.Index, info: info}
		switch ft := sf.Type; {
		case ft == info.goType:
			f.kind = collOne
		case ft.Kind() == reflect.Pointer && ft.Elem() == info.goType:
			f.kind = collPtr
		case ft.Kind() == reflect.Slice && ft.Elem() == info.goType:
			f.kind = collSlice
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Pointer && ft.Elem().Elem() == info.goType:
			f.kind = collSlicePtr
		default:
			return collection{}, fail("type " + ft.String() + " cannot hold " + info.name + ": want " + info.name + ", *" + info.name + ", []" + info.name + " or []*" + info.name)
		}
		c.fields[tag] = f
	}
	if len(c.fields) == 0 {
		return collection{}, &EntityError{Entity: c.name, Reason: "no field is tagged with an entity type, e.g. `singletable:\"Order\"`"}
	}
	return c, nil
}

// CollectionPage is one page of a collection query.
type CollectionPage[C any] struct {
	Value    C       // the page's items, decoded into C's fields
	Cursor   string  // resumes after this page (see [After]); "" when there is no more
	Scanned  int     // items read for the page, of every type
	Capacity float64 // read capacity consumed, with [ReturnCapacity]
}

// Query reads one page of the collection at key (one Query call) into a C; key and
// options are as for [Table.Query]. A one-item field (T or *T) that meets a second
// item of its type is an error.
//
//go:noinline
func (c *Collection[C]) Query(ctx context.Context, key any, opts ...CollectionOption) (CollectionPage[C], error) {
	var res CollectionPage[C]
	meta, err := c.engine().query(ctx, elem(&res.Value), key, opts)
	if err != nil {
		return CollectionPage[C]{}, err
	}
	res.Cursor, res.Scanned, res.Capacity = meta.cursor, meta.scanned, meta.capacity
	return res, nil
}

// Load reads every page of the collection at key into one C: a whole aggregate in
// as few requests as its size allows. Options are as for [Collection.Query].
//
//go:noinline
func (c *Collection[C]) Load(ctx context.Context, key any, opts ...CollectionOption) (C, error) {
	var v C
	if err := c.engine().load(ctx, elem(&v), key, opts); err != nil {
		var zero C
		return zero, err
	}
	return v, nil
}

// engine returns the non-generic part of c, nil when c is nil: the engine's methods
// then name C from the value they are handed, rather than panic.
func (c *Collection[C]) engine() *collection {
	if c == nil {
		return nil
	}
	return &c.x
}

// decoder returns a decoder that fills *dst from pages of items (the tests and
// benchmarks decode items through it, without a Query call).
func (c *Collection[C]) decoder(ctx context.Context, dst *C, p *readPlan) *collDecoder {
	return c.engine().newDecoder(ctx, reflect.ValueOf(dst).Elem(), p)
}

// query reads one page of the collection at key (one Query call) into dst, the
// addressable C of Collection.Query, and returns the page's cursor, items scanned
// and capacity.
func (c *collection) query(ctx context.Context, dst reflect.Value, key any, opts []CollectionOption) (_ pageMeta, err error) {
	ctx, done := c.begin(ctx, "Query")
	defer done(&err)
	pq, err := c.prepare("Query", dst, key, opts)
	if err != nil {
		return pageMeta{}, err
	}
	_, meta, err := c.newDecoder(ctx, dst, &pq.plan).addPage(ctx, pq, nil) // wire.go
	return meta, err
}

// begin starts the span of one of the collection's operations (Table.begin); a
// nil collection (refused by prepare) has none.
func (c *collection) begin(ctx context.Context, op string) (context.Context, func(*error)) {
	if c == nil {
		return usable(ctx, op), noDone
	}
	return c.table.begin(ctx, op)
}

// load reads every page of the collection at key into dst, the addressable C of
// Collection.Load. On an error dst holds what the pages before it added: the caller
// returns a zero C.
func (c *collection) load(ctx context.Context, dst reflect.Value, key any, opts []CollectionOption) (err error) {
	ctx, done := c.begin(ctx, "Load")
	defer done(&err)
	pq, err := c.prepare("Load", dst, key, opts)
	if err != nil {
		return err
	}
	d := c.newDecoder(ctx, dst, &pq.plan)
	var start map[string]types.AttributeValue
	for first := true; first || start != nil; first = false {
		out, _, err := d.addPage(ctx, pq, start) // wire.go
		if err != nil {
			return err
		}
		start = out.LastEvaluatedKey
	}
	return nil
}

// prepare checks that c was made by NewCollection, resolves key and builds the
// query of op (Query or Load), which refuses an index whose items would be partial.
func (c *collection) prepare(op string, dst reflect.Value, key any, opts []CollectionOption) (*preparedQuery, error) {
	if err := c.check(op, dst.Type()); err != nil {
		return nil, err
	}
	pq, _, err := c.table.prepareCollection(key, opts)
	if err == nil && pq.plan.partial {
		err = c.table.refuseIterPartial(op, c.name, pq.index, "a Collection's struct cannot say its items are partial: page through it with Table.Query (Page.Partial says so)")
	}
	if err != nil {
		return nil, err
	}
	return pq, nil
}

// check refuses a call on a nil *Collection (NewCollection failed, and its error was
// ignored) or on one NewCollection did not make (a zero Collection holds no table),
// naming C (rt), where either would panic.
func (c *collection) check(op string, rt reflect.Type) error {
	name := rt.Name()
	if name == "" {
		name = rt.String()
	}
	switch {
	case c == nil:
		return errorf("%s collection %s: the *Collection is nil (was the error of NewCollection ignored?): %w", op, name, ErrInvalidInput)
	case c.table == nil:
		return errorf("%s collection %s: the Collection was not made by NewCollection: %w", op, name, ErrInvalidInput)
	case c.goType != rt:
		// The shells hand the engine their own C: this is a bug of the library.
		return errorf("%s collection %s: decoding into a %s: %w", op, name, c.goType, ErrInvalidInput)
	}
	return nil
}

// collDecoder fills one C from pages of items.
type collDecoder struct {
	ctx  context.Context
	c    *collection
	dst  reflect.Value   // the C, addressable
	seen map[string]bool // one-item fields already filled
	p    *readPlan       // the read's plan (readpath.go): unknown types, expiry, write-back
}

// newDecoder returns a decoder that fills dst, an addressable C.
func (c *collection) newDecoder(ctx context.Context, dst reflect.Value, p *readPlan) *collDecoder {
	return &collDecoder{ctx: ctx, c: c, dst: dst, seen: map[string]bool{}, p: p}
}

// add adds the stored items of a page.
func (d *collDecoder) add(items []map[string]types.AttributeValue) error {
	t := d.c.table
	counts := map[*entityInfo]int{}
	for _, item := range items {
		info, _ := t.entityOf(item) // a hint for growing the slices; addOne checks it
		counts[info]++
	}
	d.grow(counts)
	for _, item := range items {
		if err := d.addOne(nil, item, reflect.Value{}); err != nil {
			return err
		}
	}
	return nil
}

// grow grows each slice field once for a page that holds counts items of each
// entity, rather than item by item.
func (d *collDecoder) grow(counts map[*entityInfo]int) {
	for info, n := range counts {
		if info == nil {
			continue
		}
		if f, ok := d.c.fields[info.discriminator]; ok && (f.kind == collSlice || f.kind == collSlicePtr) {
			d.dst.FieldByIndex(f.index).Grow(n)
		}
	}
}

// addOne adds one item to the collection: decoded (a pointer to its value), when
// the wire path decoded it as info's, else the stored item, through the read
// path's phases (readpath.go).
func (d *collDecoder) addOne(info *entityInfo, item map[string]types.AttributeValue, decoded reflect.Value) error {
	if !decoded.IsValid() {
		var verdict itemVerdict
		var err error
		info, verdict, err = d.p.check(item)
		switch {
		case err != nil:
			return err
		case verdict == itemRaw:
			if d.c.unknown == nil {
				return errorf("%s: OnUnknown(UnknownCollect) needs a []singletable.RawItem field tagged `singletable:\",unknown\"`: %w", d.c.name, ErrInvalidInput)
			}
			fv := d.dst.FieldByIndex(d.c.unknown)
			fv.Set(reflect.Append(fv, reflect.ValueOf(RawItem(item))))
			return nil
		case verdict != itemRead:
			return nil
		}
	}
	typ := info.discriminator
	f, ok := d.c.fields[typ]
	if !ok {
		return nil // a registered type this collection does not hold
	}
	fv := d.dst.FieldByIndex(f.index)
	var target reflect.Value
	switch f.kind {
	case collOne, collPtr:
		if d.seen[typ] {
			return errorf("%s.%s holds one %s, but the collection has more: %w", d.c.name, f.goName, info.name, ErrInvalidInput)
		}
		d.seen[typ] = true
		if f.kind == collPtr {
			if decoded.IsValid() {
				fv.Set(decoded)
				return nil
			}
			fv.Set(reflect.New(info.goType))
			target = fv.Elem()
		} else {
			target = fv
		}
	case collSlice:
		fv.SetLen(fv.Len() + 1)
		target = fv.Index(fv.Len() - 1)
	case collSlicePtr:
		if decoded.IsValid() {
			fv.Set(reflect.Append(fv, decoded))
			return nil
		}
		p := reflect.New(info.goType)
		fv.Set(reflect.Append(fv, p))
		target = p.Elem()
	}
	if decoded.IsValid() {
		target.Set(decoded.Elem())
		return nil
	}
	if err := d.p.decode(d.ctx, info, item, target); err != nil {
		return errorf("%s.%s: %w", d.c.name, f.goName, err)
	}
	return nil
}
