package singletable

import (
	"context"
	"reflect"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/wire"
)

// The wire path of reads. Get, Query and All (of an entity and of a collection) and
// BatchGet decode the items of a successful response straight from its JSON into
// their Go values (internal/wire, through the entity's compiled codec plan), instead
// of letting the SDK build an attribute value tree per item that the codec then
// walks. The SDK still sends the request, signs it, retries it, resolves the
// endpoint, checks the response's X-Amz-Crc32 and reads errors, consumed capacity,
// last evaluated keys and unprocessed keys: internal/wire sits in the call's
// middleware stack just below the SDK's deserializer and hands it the rest.
//
// Items the wire path cannot decode exactly as the attribute-value path would are
// left to the SDK and decoded as before, one by one: items of another type or of
// none, items of an older schema (they are migrated, and written back, from their
// full stored image), items with attribute values the codec only decodes through
// attributevalue (Unmarshalers, interfaces...) or that would not decode plainly (a
// type mismatch, a number that does not fit). Anything unexpected in a response
// leaves all of it to the SDK. The result is the same either way; see
// internal/wire's documentation for the rules and the tests that check them.
//
// Reads the library makes for its own use, where it needs the stored item as it is
// (the read-backs of writes whose outcome is unknown, Mutate's read, migration
// sweeps, the lookups of random shards, fan-out queries, waits for an index), use
// the attribute-value path.

// wireOn reports whether reads take the wire path: as the option says (NewTable
// refuses it on where the client is not known to allow it), else by default
// where the client is known to apply middleware and return outputs unchanged
// (client.go).
func (t *Table) wireOn() bool {
	if w := t.opts.WireDecoding; w != nil {
		return *w
	}
	return defaultWireDecoding && t.traits.wire()
}

// wireTarget is an entity as the wire path decodes it, made on first use (after
// registration options such as Migrations have completed the entity).
type wireTarget struct {
	once sync.Once
	t    *wire.Target // nil: the entity is decoded from attribute values only
}

// wireTarget returns the entity's wire.Target, or nil when reads of the table do not
// take the wire path.
func (info *entityInfo) wireTarget() *wire.Target {
	t := info.table
	if !t.wireOn() || info.adopt { // adopt.go: untyped items decode the SDK's way
		return nil
	}
	info.wire.once.Do(func() {
		schemaAttr, schema := "", 0
		if mp := info.migration; mp != nil {
			schemaAttr, schema = t.opts.SchemaAttribute, mp.current
		}
		// NewTarget refuses only fields named like the table's own attributes,
		// which registration refuses first.
		info.wire.t, _ = wire.NewTarget(info.plan, info.ignored, t.opts.TypeAttribute, info.discriminator, schemaAttr, schema, t.libraryAttributes(), 0)
	})
	return info.wire.t
}

// getCall is what a GetItem on the wire path needs, in one allocation.
type getCall struct {
	sink wire.Sink
	slot wire.Ptr
	opts [1]func(*dynamodb.Options)
}

// getItem calls GetItem and reads the item it finds into out through the read
// path's phases (readpath.go): decoded on the wire path when it can be, else
// from its attribute values (migrated, and written back when p says so). A
// missing item, and one SkipExpired leaves out, is ErrNotFound. Errors are not
// wrapped: the caller names the key.
func (e *entity) getItem(ctx context.Context, p *readPlan, in *dynamodb.GetItemInput, out reflect.Value) error {
	tg := e.info.wireTarget()
	if tg == nil {
		res, err := e.table.client.GetItem(ctx, in)
		if err != nil {
			return err
		}
		if res.Item == nil {
			return ErrNotFound
		}
		return e.readFound(ctx, p, res.Item, out)
	}
	c := &getCall{slot: wire.Ptr{V: out}}
	s := &c.sink
	*s = wire.Sink{Op: wire.GetItem, Target: tg, Slots: &c.slot}
	p.sink(s)
	c.opts[0] = s.Option()
	res, err := e.table.client.GetItem(ctx, in, c.opts[:]...)
	if err != nil {
		return err
	}
	if s.Decoded() {
		ents := s.Entries()
		if len(ents) == 0 {
			return ErrNotFound
		}
		if ents[0].Target != nil {
			if p.wireVerdict(s, 0) == itemExpired {
				return errExpired
			}
			return nil
		}
	}
	if res.Item == nil {
		return ErrNotFound
	}
	return e.readFound(ctx, p, res.Item, out)
}

// fetchPageWire is fetchPage with the page's items decoded into s where they can
// be. It does not drop the items outside an SKTree's tree: the caller does, from
// the decoded items' kept sort keys and the others' attribute values.
func (t *Table) fetchPageWire(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, what string, s *wire.Sink) (*dynamodb.QueryOutput, pageMeta, error) {
	if pq.treeRoot != "" {
		s.Keep = []string{pq.index.SortKey}
	}
	if pq.scan != nil {
		s.Op = wire.Scan
	}
	out, err := t.send(ctx, pq, start, s.Option())
	if err != nil {
		return nil, pageMeta{}, errorf("%s %s: %w", pq.call(), what, err)
	}
	meta, err := t.pageMeta(pq, out, what)
	if err != nil {
		return nil, pageMeta{}, err
	}
	return out, meta, nil
}

// rawInTree reports whether an item the SDK decoded is in an SKTree query's tree
// (always, for other queries), as keepTree decides.
func (t *Table) rawInTree(pq *preparedQuery, item map[string]types.AttributeValue) bool {
	if pq.treeRoot == "" {
		return true
	}
	sk, _ := item[pq.index.SortKey].(*types.AttributeValueMemberS)
	return sk != nil && t.inTree(pq, sk.Value)
}

// queryPageWire is queryPage on the wire path: the items decoded on the wire
// take the expiry phase (the others took theirs there), the rest every phase
// (readpath.go). They are decoded straight into the slice items points to.
func (e *entity) queryPageWire(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue, tg *wire.Target, items reflect.Value) (pageInfo, error) {
	t := e.table
	sl := wire.NewSlice(items)
	s := &wire.Sink{Op: wire.Query, Target: tg, Slots: &sl}
	pq.plan.sink(s)
	out, meta, err := t.fetchPageWire(ctx, pq, start, e.info.name, s)
	if err != nil {
		return pageInfo{}, err
	}
	res := pageInfo{pageMeta: meta, partial: pq.plan.partial, last: out.LastEvaluatedKey}
	if !s.Decoded() {
		sl.Reset()
		sl.Hint(len(out.Items))
		for _, item := range out.Items {
			if !t.rawInTree(pq, item) {
				continue
			}
			if err := e.addItem(ctx, pq, &sl, item); err != nil { // query.go
				return pageInfo{}, err
			}
		}
		nonNil(items)
		return res, nil
	}
	ents := s.Entries()
	if sl.Len() == len(ents) && pq.treeRoot == "" && pq.plan.expiry == nil {
		nonNil(items) // every item decoded on the wire, none to leave out: the page is the slots
		return res, nil
	}
	// Items left to the SDK, or left out: the page is made anew, in order.
	decoded := sl
	kept := reflect.New(items.Type().Elem())
	ksl := wire.NewSlice(kept)
	ksl.Hint(len(ents))
	k := 0
	for i, en := range ents {
		if en.Target == nil {
			item := out.Items[en.Raw]
			if !t.rawInTree(pq, item) {
				continue
			}
			if err := e.addItem(ctx, pq, &ksl, item); err != nil {
				return pageInfo{}, err
			}
			continue
		}
		v := decoded.Value(k)
		k++
		if (pq.treeRoot == "" || t.inTree(pq, s.Keys(i)[0])) && pq.plan.wireVerdict(s, i) == itemRead {
			ksl.Next(nil)
			ksl.Value(ksl.Len() - 1).Set(v)
		}
	}
	items.Elem().Set(kept.Elem())
	nonNil(items)
	return res, nil
}

// collectionPage reads one page of a collection query (or a table scan) and
// reads its items through the read path's phases (readpath.go) into their entity
// types: an older item migrated and written back when the read is of whole items,
// unknown types as the plan says. On an error it returns the values read before
// it, with the error.
func (t *Table) collectionPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue) ([]any, *dynamodb.QueryOutput, pageMeta, error) {
	p := &pq.plan
	readRaw := func(vals []any, item map[string]types.AttributeValue) ([]any, error) {
		v, verdict, err := p.readAny(ctx, item)
		if err != nil {
			return vals, err
		}
		if verdict == itemRead || verdict == itemRaw {
			vals = append(vals, v)
		}
		return vals, nil
	}
	if !t.wireOn() || p.parseKeys {
		out, meta, err := t.fetchPage(ctx, pq, start, "collection")
		if err != nil {
			return nil, nil, pageMeta{}, err
		}
		vals := make([]any, 0, len(out.Items))
		for _, item := range out.Items {
			if vals, err = readRaw(vals, item); err != nil {
				return vals, out, meta, err
			}
		}
		return vals, out, meta, nil
	}
	var sl wire.Any
	s := p.sink(&wire.Sink{Op: wire.Query, TypeAttr: t.opts.TypeAttribute, Slots: &sl, Lookup: t.wireLookup})
	out, meta, err := t.fetchPageWire(ctx, pq, start, "collection", s)
	if err != nil {
		return nil, nil, pageMeta{}, err
	}
	if !s.Decoded() {
		vals := make([]any, 0, len(out.Items))
		for _, item := range out.Items {
			if !t.rawInTree(pq, item) {
				continue
			}
			if vals, err = readRaw(vals, item); err != nil {
				return vals, out, meta, err
			}
		}
		return vals, out, meta, nil
	}
	ents := s.Entries()
	vals := make([]any, 0, len(ents))
	k := 0
	for i, en := range ents {
		if en.Target == nil {
			item := out.Items[en.Raw]
			if !t.rawInTree(pq, item) {
				continue
			}
			if vals, err = readRaw(vals, item); err != nil {
				return vals, out, meta, err
			}
			continue
		}
		v := sl.Items[k]
		k++
		if (pq.treeRoot == "" || t.inTree(pq, s.Keys(i)[0])) && p.wireVerdict(s, i) == itemRead {
			vals = append(vals, v.Elem().Interface())
		}
	}
	return vals, out, meta, nil
}

// wireLookup returns the wire target of the entity registered under discriminator
// typ, or nil.
func (t *Table) wireLookup(typ string) *wire.Target {
	t.mu.RLock()
	info := t.entities[typ]
	t.mu.RUnlock()
	if info == nil {
		return nil
	}
	return info.wireTarget()
}

// batchFound holds the items a BatchGet found, by key id: decoded on the wire
// (and judged by the expiry phase there), or as the SDK decoded them.
type batchFound struct {
	typ     reflect.Type // the entity's Go type
	av      map[itemKey]map[string]types.AttributeValue
	val     map[itemKey]reflect.Value
	expired map[itemKey]bool // decoded on the wire, and left out by SkipExpired
}

func newBatchFound(typ reflect.Type) *batchFound {
	return &batchFound{typ: typ, av: map[itemKey]map[string]types.AttributeValue{}}
}

// read returns the item at id, read through the read path's phases
// (readpath.go) when the SDK decoded it; found is false when none came back.
func (f *batchFound) read(ctx context.Context, p *readPlan, id itemKey) (v reflect.Value, verdict itemVerdict, found bool, err error) {
	if v, ok := f.val[id]; ok {
		return v, itemRead, true, nil
	}
	if f.expired[id] {
		return v, itemExpired, true, nil
	}
	item, ok := f.av[id]
	if !ok {
		return v, itemRead, false, nil
	}
	v = reflect.New(f.typ).Elem()
	verdict, err = p.readItem(ctx, item, v)
	return v, verdict, true, err
}

// batchGetItem calls BatchGetItem for one chunk of keys and adds the items it
// returns to found, decoded on the wire when wire is set and they can be.
func (e *entity) batchGetItem(ctx context.Context, p *readPlan, in *dynamodb.BatchGetItemInput, found *batchFound, useWire bool) (*dynamodb.BatchGetItemOutput, error) {
	t := e.table
	var tg *wire.Target
	if useWire {
		tg = e.info.wireTarget()
	}
	if tg == nil {
		out, err := t.client.BatchGetItem(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, item := range out.Responses[t.name] {
			found.av[t.keyID(item)] = item
		}
		return out, nil
	}
	vals := reflect.New(reflect.SliceOf(found.typ)) // a []T of the chunk's items
	sl := wire.NewSlice(vals)
	s := p.sink(&wire.Sink{Op: wire.BatchGetItem, Table: t.name, Target: tg, Slots: &sl, Keep: t.baseKeyAttrs()})
	out, err := t.client.BatchGetItem(ctx, in, s.Option())
	if err != nil {
		return nil, err
	}
	raws := out.Responses[t.name]
	if !s.Decoded() {
		for _, item := range raws {
			found.av[t.keyID(item)] = item
		}
		return out, nil
	}
	if found.val == nil {
		found.val = make(map[itemKey]reflect.Value, sl.Len())
	}
	k := 0
	for i, en := range s.Entries() {
		if en.Target == nil {
			item := raws[en.Raw]
			found.av[t.keyID(item)] = item
			continue
		}
		id := t.keyIDOfTexts(s.Keys(i))
		v := sl.Value(k)
		k++
		if p.wireVerdict(s, i) == itemExpired {
			if found.expired == nil {
				found.expired = map[itemKey]bool{}
			}
			found.expired[id] = true
			continue
		}
		found.val[id] = v
	}
	return out, nil
}

// addPage reads one page of a Collection's query into its value, on the wire path
// when the table takes it; each item through the read path's phases (addOne).
func (d *collDecoder) addPage(ctx context.Context, pq *preparedQuery, start map[string]types.AttributeValue) (*dynamodb.QueryOutput, pageMeta, error) {
	t := d.c.table
	if !t.wireOn() {
		out, meta, err := t.fetchPage(ctx, pq, start, d.c.name)
		if err != nil {
			return nil, pageMeta{}, err
		}
		return out, meta, d.add(out.Items)
	}
	var sl wire.Any
	s := d.p.sink(&wire.Sink{Op: wire.Query, TypeAttr: t.opts.TypeAttribute, Slots: &sl, Lookup: t.wireLookup})
	out, meta, err := t.fetchPageWire(ctx, pq, start, d.c.name, s)
	if err != nil {
		return nil, pageMeta{}, err
	}
	if !s.Decoded() {
		items := out.Items
		if pq.treeRoot != "" {
			items = t.keepTree(items, pq)
		}
		return out, meta, d.add(items)
	}
	// The items in the tree, decoded or not, in order: those decoded on the wire
	// with their entities, once through the expiry phase.
	type entry struct {
		info *entityInfo
		item map[string]types.AttributeValue
		val  reflect.Value
	}
	ents := s.Entries()
	kept := make([]entry, 0, len(ents))
	counts := map[*entityInfo]int{}
	k := 0
	for i, en := range ents {
		var e entry
		if en.Target == nil {
			e.item = out.Items[en.Raw]
			if !t.rawInTree(pq, e.item) {
				continue
			}
			e.info, _ = t.entityOf(e.item) // a hint for growing the slices; addOne checks it
		} else {
			e.val = sl.Items[k]
			k++
			if pq.treeRoot != "" && !t.inTree(pq, s.Keys(i)[0]) || d.p.wireVerdict(s, i) != itemRead {
				continue
			}
			e.info = t.entityByType(en.Target.Type)
		}
		counts[e.info]++
		kept = append(kept, e)
	}
	d.grow(counts)
	for _, e := range kept {
		if err := d.addOne(e.info, e.item, e.val); err != nil {
			return nil, pageMeta{}, err
		}
	}
	return out, meta, nil
}
