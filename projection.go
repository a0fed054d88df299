package singletable

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Projections: reads of some attributes only (ProjectionExpression).
//
// A projected read is partial, and its type says so: [Partial] wraps each value.
// The library never writes a partial item back (no migration write-back, whatever
// the entity's WriteBack), never judges a version from one, and Mutate always
// reads the whole item itself. Every projected read also asks for what identifies
// the item: the primary key, the fields its template renders from, the type and
// schema attributes, and the keys of the index read.

// Partial is an item read in part: with a projection ([Entity.Project]), or
// through an index that does not hold every field of the entity.
//
// Value holds the attributes read; every other field is zero, whatever the item
// stores. Its primary key inputs are always set (read, or parsed back from the
// keys), so Value can key a Get, Update or Delete. Do not Put it: a Put writes
// every field and would erase what was not read. To change an attribute, use
// [Entity.Update] with Set, or read the whole item first.
type Partial[T any] struct {
	Value T
	// Attributes are the stored names of the fields of T that were asked for, in
	// the order given; shared by the values of one call, not to be modified.
	Attributes []string
}

// Projection reads some attributes of an entity's items, and gives them as
// [Partial] values. Make one with [Entity.Project]. A Projection is immutable and
// safe for concurrent use.
type Projection[T any] struct {
	x projection // a field, not embedded: see Entity
}

// projection is what every method of a Projection[T] runs on, compiled once
// (see entity).
type projection struct {
	e     *entity
	attrs []string // the fields asked for, by stored name, each once
	err   error    // a bad attribute name, reported by every read
}

// Project returns reads of only the named attributes of the entity's items
// (their stored names, as in `dynamodbav` tags) plus what identifies each item:
// its primary key and the fields it is rendered from, its type and schema. Each
// read costs what the whole item would (DynamoDB charges by the item's size, not
// by what it returns) but moves less data over the network. A name that is not a
// stored attribute of T is refused by every read of the Projection with an error
// naming the entity and the closest attribute, before anything is sent. With no
// names, the reads fetch the identifying attributes only.
//
// Through an index ([On]), only attributes the index holds can be named (see
// [ProjectKeysOnly], [ProjectInclude]); key inputs it does not hold are parsed
// back from the keys.
//
//go:noinline
func (e *Entity[T]) Project(attrs ...string) *Projection[T] {
	return &Projection[T]{e.core().project(attrs)}
}

func (e *entity) project(attrs []string) projection {
	p := projection{e: e}
	if p.err = e.refused("Project"); p.err != nil {
		return p
	}
	for _, a := range attrs {
		if _, ok := e.info.plan.Field(a); !ok {
			p.err = errorf("Project %s: %q is not a stored attribute of %s%s (its attributes: %s): %w", e.info.name, a, e.info.name, e.info.suggestAttr(a), strings.Join(e.info.fieldNames(), ", "), ErrInvalidInput)
			return p
		}
		if !slices.Contains(p.attrs, a) {
			p.attrs = append(p.attrs, a)
		}
	}
	return p
}

// fieldNames lists the stored names of the entity's fields.
func (info *entityInfo) fieldNames() []string {
	names := make([]string, 0, len(info.plan.Fields()))
	for _, f := range info.plan.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// Attributes returns the attributes the projection asks for, as given.
//
//go:noinline
func (p *Projection[T]) Attributes() []string { return p.x.attributes() }

func (p *projection) attributes() []string { return slices.Clone(p.attrs) }

// readList is what a projected read of info through ix asks for: the key
// attributes, the type and schema attributes, the primary key's inputs that ix
// holds, and attrs. It refuses an attribute ix does not hold (a global index
// cannot fetch from the table), naming it.
func (t *Table) readList(info *entityInfo, ix Index, attrs []string) ([]string, error) {
	var out []string
	add := func(a string) {
		if a != "" && !slices.Contains(out, a) && t.indexHolds(ix, a) {
			out = append(out, a)
		}
	}
	for _, a := range []string{t.opts.PartitionKey, t.opts.SortKey, ix.PartitionKey, ix.SortKey, t.opts.TypeAttribute} {
		add(a)
	}
	if info.migration != nil {
		add(t.opts.SchemaAttribute)
	}
	for _, f := range info.keyInputs() {
		add(f.Name)
	}
	for _, a := range attrs {
		if !t.indexHolds(ix, a) && !ix.Local {
			return nil, fmt.Errorf("index %s projects %s, which does not hold %q: %w", ix.Name, t.projectionText(ix), a, ErrInvalidInput)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// keyInputs lists the fields the primary key is rendered from.
func (info *entityInfo) keyInputs() []*codec.Field {
	var out []*codec.Field
	for _, kt := range info.baseTemplates() {
		for _, f := range kt.fields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// projectionExpression lists attrs as a ProjectionExpression, each name through
// a placeholder of b.
func projectionExpression(b *expr.Builder, attrs []string) string {
	var sb strings.Builder
	for i, a := range attrs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(b.Name(a))
	}
	return sb.String()
}

// partialRead says how a read of info through ix is partial: partial when items
// lack some fields; parseKeys when they may lack the type attribute or a key
// input, which are then found from the primary key.
func (t *Table) partialRead(info *entityInfo, ix Index, project []string) (partial, parseKeys bool) {
	if project != nil {
		partial = true
	} else {
		partial = !t.covers(ix, info)
	}
	if !partial || ix.Name == "" {
		return partial, false
	}
	if !t.indexHolds(ix, t.opts.TypeAttribute) {
		return true, true
	}
	for _, f := range info.keyInputs() {
		if !t.indexHolds(ix, f.Name) {
			return true, true
		}
	}
	return true, false
}

// readKind says how a read of info (nil: a collection) through ix with options
// o is partial; see partialRead.
func (t *Table) readKind(info *entityInfo, ix Index, o *queryOptions) (partial, parseKeys bool) {
	if info != nil && !o.collection {
		return t.partialRead(info, ix, o.project)
	}
	partial = !ix.projectsAll() && ix.Name != ""
	return partial, partial && !t.indexHolds(ix, t.opts.TypeAttribute)
}

// fillFromIndexKeys sets the inputs of index's keys that item lacks from those
// keys, where they parse (a field set already is left alone).
func (info *entityInfo) fillFromIndexKeys(item map[string]types.AttributeValue, rv reflect.Value, index string) {
	pair, ok := info.indexes[index]
	if !ok {
		return
	}
	for _, kt := range pair {
		if kt == nil {
			continue
		}
		text, ok := info.table.keyTextOf(item, kt.attr)
		if !ok {
			continue
		}
		// Parse into a scratch value, then copy the fields still zero.
		scratch := reflect.New(rv.Type()).Elem()
		if kt.parseInto(info, text, scratch, item) != nil {
			continue
		}
		for _, f := range kt.fields {
			dst, ok1 := f.ValueOf(rv)
			src, ok2 := f.ValueOf(scratch)
			if ok1 && ok2 && dst.IsZero() && dst.CanSet() {
				dst.Set(src)
			}
		}
	}
}

// fillFromKeys sets the primary key inputs that item lacks from its primary
// key, parsed with the entity's templates. It reports false, having set nothing
// useful, when the key is not one the entity renders.
func (info *entityInfo) fillFromKeys(item map[string]types.AttributeValue, rv reflect.Value) bool {
	t := info.table
	for _, kt := range info.baseTemplates() {
		text, ok := t.keyTextOf(item, kt.attr)
		if !ok {
			return false
		}
		if err := kt.parseInto(info, text, rv, item); err != nil {
			return false
		}
	}
	return true
}

// parseInto sets the fields of rv that the key text renders from, except those
// whose attribute is in skip (read already).
func (kt *keyTemplate) parseInto(info *entityInfo, text string, rv reflect.Value, skip map[string]types.AttributeValue) error {
	if kt.typ == types.ScalarAttributeTypeB {
		f := kt.fields[0]
		if _, ok := skip[f.Name]; ok {
			return nil
		}
		return setBytesField(f, rv, text)
	}
	return kt.tmpl.extract(text, func(name, raw string, format keytmpl.Format) error {
		if _, ok := skip[name]; ok {
			return nil
		}
		f, _ := info.plan.Field(name)
		return setFromKey(f, rv, raw, format)
	})
}

// prepareQuery applies a projected query's options and prepares it.
func (p *projection) prepareQuery(sv reflect.Value, opts []QueryOption) (*preparedQuery, error) {
	e := p.e
	if p.err != nil {
		return nil, p.err
	}
	var o queryOptions
	if err := applyOptions(&o, "Query", e.info.name, opts, QueryOption.applyQuery); err != nil {
		return nil, err
	}
	if err := p.project(&o, "Query"); err != nil {
		return nil, err
	}
	return e.table.prepareQuery(e.info, sv, &o, e.asEntity)
}

// project sets the projection of a read through the index o names.
func (p *projection) project(o *queryOptions, call string) error {
	e := p.e
	ix, ok := e.table.index(o.index)
	if !ok {
		return nil // prepareQuery refuses it, naming the indexes
	}
	list, err := e.table.readList(e.info, ix, p.attrs)
	if err != nil {
		return errorf("%s %s: Project: %w", call, e.info.name, err)
	}
	o.project = list
	return nil
}

// Get reads the projected attributes of one item (one GetItem with a
// ProjectionExpression), as [Entity.Get] reads the whole item: 0.5 RCU per 4 KB
// of the whole item, 1 with [Consistent]. key is not modified.
//
//go:noinline
func (p *Projection[T]) Get(ctx context.Context, key T, opts ...GetOption) (_ Partial[T], err error) {
	var r Partial[T]
	err = p.x.getPartial(ctx, elem(&key), elem(&r), opts)
	return r, err
}

// getPartial is Get: r is the caller's Partial[T] (left zero on an error).
func (p *projection) getPartial(ctx context.Context, sv, r reflect.Value, opts []GetOption) error {
	if err := p.get(ctx, sv, r.Field(0), opts); err != nil { // Partial[T].Value
		r.SetZero()
		return err
	}
	r.Field(1).Set(reflect.ValueOf(p.attrs)) // Partial[T].Attributes
	return nil
}

func (p *projection) get(ctx context.Context, sv, out reflect.Value, opts []GetOption) (err error) {
	e := p.e
	if err := e.refused("Get"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Get")
	defer done(&err)
	if p.err != nil {
		return p.err
	}
	o, err := collectKeyOptions("Get", e.info.name, opts)
	if err != nil {
		return err
	}
	plan, err := e.table.keyPlan(e.info, o, true) // readpath.go: partial, never written back
	if err != nil {
		return e.itemErr("Get", nil, err)
	}
	k, err := e.batchKey(sv)
	if err != nil {
		return e.itemErr("Get", nil, err)
	}
	list, _ := e.table.readList(e.info, Index{}, p.attrs)
	list = plan.expiry.readsTTL(list) // ttl.go: SkipExpired reads the TTL too
	var b expr.Builder
	err = e.getItem(ctx, &plan, &dynamodb.GetItemInput{ // GetItem, through the read path (wire.go)
		TableName:                e.table.namePtr(),
		Key:                      k,
		ConsistentRead:           boolPtr(o.consistent),
		ProjectionExpression:     aws.String(projectionExpression(&b, list)),
		ExpressionAttributeNames: b.Names(),
	}, out)
	if err != nil {
		return e.itemErr("Get", e.table.keyStrings(k), err)
	}
	return nil
}

// PartialBatch is what a projected [Projection.BatchGet] found.
type PartialBatch[T any] struct {
	// Items are the items found, in the order of the keys asked for.
	Items []Partial[T]
	// Missing are the keys, as given, at which no item exists.
	Missing []T
	// Unprocessed are the keys, as given, that were never answered; non-empty
	// only together with an error.
	Unprocessed []T
}

// BatchGet reads the projected attributes of the items at many keys, as
// [Entity.BatchGet] reads whole items (BatchGetItem with a ProjectionExpression,
// 100 keys a request, unprocessed keys retried with backoff). keys is not
// modified.
//
//go:noinline
func (p *Projection[T]) BatchGet(ctx context.Context, keys []T, opts ...GetOption) (_ PartialBatch[T], err error) {
	var res PartialBatch[T]
	err = p.x.batchGet(ctx, elem(&keys), opts, elem(&res))
	return res, err
}

// batchGet is BatchGet: res is the caller's PartialBatch[T], left zero when the
// call is refused before reading.
func (p *projection) batchGet(ctx context.Context, keys reflect.Value, opts []GetOption, res reflect.Value) error {
	read, err := p.batchGetRead(ctx, keys, opts, res)
	if !read {
		res.SetZero()
	}
	return err
}

// batchGetRead is batchGet; read is false when it was refused before reading.
func (p *projection) batchGetRead(ctx context.Context, keys reflect.Value, opts []GetOption, res reflect.Value) (read bool, err error) {
	e := p.e
	if err := e.refused("BatchGet"); err != nil {
		return false, err
	}
	ctx, done := e.begin(ctx, "BatchGet")
	defer done(&err)
	if p.err != nil {
		return false, p.err
	}
	o, err := collectKeyOptions("BatchGet", e.info.name, opts)
	if err != nil {
		return false, err
	}
	plan, err := e.table.keyPlan(e.info, o, true) // readpath.go: partial, never written back
	if err != nil {
		return false, errorf("BatchGet %s: %w", e.info.name, err)
	}
	list, _ := e.table.readList(e.info, Index{}, p.attrs)
	list = plan.expiry.readsTTL(list) // ttl.go: SkipExpired reads the TTL too
	items := reflect.New(reflect.SliceOf(e.info.goType)).Elem()
	err = e.batchGet(ctx, keys, &plan, o.consistent, list, items, res.Field(1), res.Field(2))
	partials(res.Field(0), items, p.attrs) // PartialBatch[T].Items
	return true, err
}

// Query reads one page of the projected attributes of the entity's items in one
// partition, as [Entity.Query] does (same options, same key rules, same cost:
// DynamoDB charges for the items read whole). key is not modified.
//
//go:noinline
func (p *Projection[T]) Query(ctx context.Context, key T, opts ...QueryOption) (_ Page[Partial[T]], err error) {
	var page Page[Partial[T]]
	err = p.x.query(ctx, elem(&key), opts, elem(&page))
	return page, err
}

// query is Query: the page is read into page, a Page[Partial[T]] (left zero on
// an error).
func (p *projection) query(ctx context.Context, sv reflect.Value, opts []QueryOption, page reflect.Value) (err error) {
	if err := p.e.refused("Query"); err != nil {
		return err
	}
	ctx, done := p.e.begin(ctx, "Query")
	defer done(&err)
	pq, err := p.prepareQuery(sv, opts)
	if err != nil {
		return err
	}
	items := reflect.New(reflect.SliceOf(p.e.info.goType))
	r, err := p.e.queryPage(ctx, pq, nil, items)
	return p.projectedPage(page, items.Elem(), r, err)
}

// All iterates over every item of the projected query, page after page, as
// [Projection.Query] reads them. It stops at the first error, which it yields
// with a zero value.
//
//go:noinline
func (p *Projection[T]) All(ctx context.Context, key T, opts ...QueryOption) iter.Seq2[Partial[T], error] {
	c := p.x
	return func(yield func(Partial[T], error) bool) {
		var items []T
		pg := c.all(ctx, elem(&key), opts, ptrTo(&items))
		defer pg.close() // the span ends however the loop ends, a panic in it too
		for pg.next() {
			for _, v := range items {
				if !yield(Partial[T]{Value: v, Attributes: c.attrs}, nil) {
					return
				}
			}
		}
		if err := pg.failed(); err != nil {
			yield(Partial[T]{}, err)
		}
	}
}

func (p *projection) all(ctx context.Context, sv reflect.Value, opts []QueryOption, items reflect.Value) *pager {
	if err := p.e.refused("All"); err != nil {
		return newPager(items, nil, noDone, err)
	}
	ctx, done := p.e.begin(ctx, "All")
	pq, err := p.prepareQuery(sv, opts)
	return p.e.pager(ctx, pq, items, err, done)
}

// refuseIterPartial refuses an iterator over a read that would be partial: its
// values could not say so. hint names the calls that can make the read.
func (t *Table) refuseIterPartial(call, what string, ix Index, hint string) error {
	return errorf("%s %s: index %s projects %s, which does not hold every field: its items would be partial, and an iterator's values cannot say so; %s: %w",
		call, what, ix.Name, t.projectionText(ix), hint, ErrInvalidInput)
}

// setBytesField sets a []byte field (or *[]byte) from a binary key's bytes.
func setBytesField(f *codec.Field, sv reflect.Value, text string) error {
	fv := sv.FieldByIndex(f.Index)
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	if !isBytes(fv.Type()) {
		return &KeyError{Reason: "field " + f.GoName + " is not a []byte"}
	}
	fv.SetBytes([]byte(text))
	return nil
}
