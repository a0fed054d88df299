package singletable

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/backoff"
	"github.com/singletable/singletable/internal/wire"
)

// Batches of several entity types: Table.BatchGet reads [Ref] values of any
// registered types, Table.BatchWrite writes [BatchItem] puts and deletes of any.
// Their rules are those of the entity batches (batch.go): DynamoDB's request
// sizes, unprocessed keys and items sent again with the table's Backoff, and on
// giving up exactly what was not processed, with an error matching
// [ErrUnprocessed]. Neither is atomic: see [Table.TransactGet] and
// [Table.Transact].

// BatchGet reads the items of refs of any registered entity types
// (BatchGetItem, 100 keys a request), filling in each [Ref]: its Value, or an
// error matching [ErrNotFound] for a missing item, or [ErrTypeMismatch] for an
// item that is not provably of the Ref's entity type (its type attribute names
// another, or is missing or not a string). With [SkipExpired] an expired item
// is missing too (its Value says ErrNotFound); a ref of an entity without a ttl
// field then refuses the call with [ErrInvalidInput], before anything is sent. Keys DynamoDB leaves
// unprocessed are asked for again with [Backoff] until all are answered, the
// context ends, or Backoff.MaxAttempts rounds in a row make no progress; then
// the error matches [ErrUnprocessed] and the refs never answered are returned
// (their Value says ErrUnprocessed too). A call that fails otherwise (the
// client refuses it, a validation error, a missing table) returns the refs it
// left unread with that error, in their Values too, not matching ErrUnprocessed.
// A nil ref, a key that cannot be
// rendered, and one item asked for twice are refused before anything is sent,
// naming them. [Consistent] makes every read strongly consistent. Cost: as many
// GetItems (0.5 RCU per 4 KB, 1 consistent), in fewer round trips. Older items
// are migrated and written back as their entity says. refs is not modified;
// the Refs it holds are filled in.
func (t *Table) BatchGet(ctx context.Context, refs []ItemRef, opts ...GetOption) (_ []ItemRef, err error) {
	if err := t.refused("Table.BatchGet"); err != nil {
		return nil, err
	}
	ctx, done := t.begin(ctx, "BatchGet")
	defer done(&err)
	ids, err := t.checkRefs("BatchGet", refs)
	if err != nil {
		return nil, err
	}
	o, err := collectKeyOptions("BatchGet", "refs", opts)
	if err != nil {
		return nil, err
	}
	peek, err := t.refPlans("BatchGet", refs, o) // readpath.go's options phase, per entity
	if err != nil {
		return nil, err
	}
	byID := make(map[itemKey]int, len(refs))
	for i, ref := range refs {
		ref.refCore().reset()
		byID[ids[i]] = i
	}
	queue := make([]int, len(refs))
	for i := range queue {
		queue[i] = i
	}
	retry := t.batchRetry()
	var loopErr error
	refused := false // the loop ended on an error that is not "unprocessed"
	for len(queue) > 0 {
		n := min(len(queue), maxBatchGet)
		keys := make([]map[string]types.AttributeValue, n)
		for i, j := range queue[:n] {
			keys[i] = refs[j].refCore().key
		}
		in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			t.name: {Keys: keys, ConsistentRead: aws.Bool(o.consistent)},
		}}
		out, err := t.batchGetMixed(ctx, in, refs, byID, peek)
		if err != nil {
			loopErr, refused = err, !backoff.Unprocessed(err)
			break
		}
		var again []int
		for _, k := range out.UnprocessedKeys[t.name].Keys {
			j, ok := byID[t.keyID(k)]
			if !ok {
				loopErr = fmt.Errorf("DynamoDB returned an unprocessed key that was not asked for")
				break
			}
			again = append(again, j)
		}
		if loopErr != nil {
			break
		}
		// The keys of this round that came back neither as items nor unprocessed
		// are missing.
		un := make(map[int]bool, len(again))
		for _, j := range again {
			un[j] = true
		}
		for _, j := range queue[:n] {
			if c := refs[j].refCore(); c.state == refUnread && !un[j] {
				c.state = refMissing
			}
		}
		queue = append(again, queue[n:]...)
		if loopErr = retry.After(ctx, n, len(again)); loopErr != nil {
			break
		}
	}
	if refused {
		left := make([]ItemRef, 0, len(queue))
		for _, j := range queue {
			c := refs[j].refCore()
			c.state, c.rerr = refFailed, loopErr
			left = append(left, refs[j])
		}
		return left, errorf("BatchGet: %d keys not read (%s): %w", len(left), refsText(left), loopErr)
	}
	if loopErr != nil {
		left := make([]ItemRef, 0, len(queue))
		for _, j := range queue {
			refs[j].refCore().state = refUnprocessed
			left = append(left, refs[j])
		}
		return left, errorf("BatchGet: %d keys unprocessed (%s): %w: %w", len(left), refsText(left), ErrUnprocessed, loopErr)
	}
	return nil, nil
}

// batchGetMixed sends one BatchGetItem and fills the refs it answered, each
// through its plan's phases (readpath.go), decoded on the wire when the table
// takes that path (keeping the attribute peek names, for the expiry phase).
func (t *Table) batchGetMixed(ctx context.Context, in *dynamodb.BatchGetItemInput, refs []ItemRef, byID map[itemKey]int, peek string) (*dynamodb.BatchGetItemOutput, error) {
	fill := func(item map[string]types.AttributeValue) error {
		j, ok := byID[t.keyID(item)]
		if !ok {
			return fmt.Errorf("DynamoDB returned an item that was not asked for")
		}
		refs[j].refCore().setItem(ctx, item, refs[j].refValue())
		return nil
	}
	if !t.wireOn() {
		out, err := t.client.BatchGetItem(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, item := range out.Responses[t.name] {
			if err := fill(item); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var sl wire.Any
	s := &wire.Sink{Op: wire.BatchGetItem, Table: t.name, TypeAttr: t.opts.TypeAttribute, Slots: &sl, Lookup: t.wireLookup, Keep: t.baseKeyAttrs(), Peek: peek}
	out, err := t.client.BatchGetItem(ctx, in, s.Option())
	if err != nil {
		return nil, err
	}
	raws := out.Responses[t.name]
	if !s.Decoded() {
		for _, item := range raws {
			if err := fill(item); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	k := 0
	for i, en := range s.Entries() {
		if en.Target == nil {
			if err := fill(raws[en.Raw]); err != nil {
				return nil, err
			}
			continue
		}
		v := sl.Items[k]
		k++
		j, ok := byID[t.keyIDOfTexts(s.Keys(i))]
		if !ok {
			return nil, fmt.Errorf("DynamoDB returned an item that was not asked for")
		}
		if ref := refs[j]; ref.refCore().judgeWire(s, i, en.Target.Type) {
			ref.refCore().setValue(v, ref.refValue())
		}
	}
	return out, nil
}

// keyIDOfTexts is the identity of a primary key given as the texts of the base
// key attributes, in baseKeyAttrs order.
func (t *Table) keyIDOfTexts(texts []string) itemKey {
	id := itemKey{pk: texts[0]}
	if len(texts) > 1 {
		id.sk = texts[1]
	}
	return id
}

// BatchItem is one write of [Table.BatchWrite]: a put or a delete of an item of
// any registered entity type, made by [Entity.BatchPutItem] or
// [Entity.BatchDeleteItem]. An error found while building it is kept and
// reported by BatchWrite, before anything is sent.
type BatchItem struct {
	info   *entityInfo
	op     string // "Put" or "Delete"
	value  any    // the T given
	req    types.WriteRequest
	keyStr map[string]string
	err    error
}

// Entity returns the Go type name of the item's entity.
func (b BatchItem) Entity() string {
	if b.info == nil {
		return ""
	}
	return b.info.name
}

// Op returns "Put" or "Delete".
func (b BatchItem) Op() string { return b.op }

// Value returns the value (a put) or key (a delete) the item was made with, a T
// of its entity.
func (b BatchItem) Value() any { return b.value }

// Key returns the item's rendered primary key.
func (b BatchItem) Key() map[string]string { return b.keyStr }

// BatchPutItem is [Entity.BatchPut] of one item, for [Table.BatchWrite]: the
// whole item, written without condition (it overwrites whatever is at its key,
// and on a versioned entity stores the version after v's, bypassing the check).
// Defaults, timestamps (the table's clock, read when the item is made) and
// validation apply, as in BatchPut; a value they refuse is reported by
// BatchWrite before anything is sent. v is copied.
//
//go:noinline
func (e *Entity[T]) BatchPutItem(v T) BatchItem {
	return e.core().batchPutItem(v, elem(&v))
}

// batchPutItem is BatchPutItem: value is the T given, sv a copy of it.
func (e *entity) batchPutItem(value any, sv reflect.Value) BatchItem {
	if err := e.refused("BatchPutItem"); err != nil {
		return BatchItem{op: "Put", value: value, err: err}
	}
	it := BatchItem{info: e.info, op: "Put", value: value}
	// Planned as BatchPut plans each item: the shard, defaults (before the keys
	// are rendered), timestamps, validation, the version.
	item, err := e.info.planBatchPut(sv, &planEnv{}) // planner.go
	if err != nil {
		it.err = err
		return it
	}
	it.req = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	it.keyStr = e.table.keyStrings(item)
	return it
}

// BatchDeleteItem is [Entity.BatchDelete] of one key, for [Table.BatchWrite]:
// the item at key's primary key is deleted, whatever its type (a batch has no
// conditions). key is copied.
//
//go:noinline
func (e *Entity[T]) BatchDeleteItem(key T) BatchItem {
	return e.core().batchDeleteItem(key, elem(&key))
}

// batchDeleteItem is BatchDeleteItem: value is the T given, sv a copy of it.
func (e *entity) batchDeleteItem(value any, sv reflect.Value) BatchItem {
	if err := e.refused("BatchDeleteItem"); err != nil {
		return BatchItem{op: "Delete", value: value, err: err}
	}
	it := BatchItem{info: e.info, op: "Delete", value: value}
	if u := e.info.unique; u != nil {
		it.err = u.refuseBatch() // unique.go
		return it
	}
	k, err := e.batchKey(sv)
	if err != nil {
		it.err = err
		return it
	}
	it.req = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	it.keyStr = e.table.keyStrings(k)
	return it
}

// BatchWrite writes puts and deletes of any registered entity types
// (BatchWriteItem, 25 a request), without conditions and not atomically.
// Writes DynamoDB leaves unprocessed are sent again with [Backoff] until all are
// written, the context ends, or Backoff.MaxAttempts rounds in a row make no
// progress; it then returns exactly the items not written, with an error
// matching [ErrUnprocessed]. Two items of one key, a zero item and an item that
// could not be built are refused before anything is sent, naming them. Cost:
// 1 WCU per 1 KB per item. items is not modified.
func (t *Table) BatchWrite(ctx context.Context, items ...BatchItem) (_ []BatchItem, err error) {
	if err := t.refused("BatchWrite"); err != nil {
		return nil, err
	}
	ctx, done := t.begin(ctx, "BatchWrite")
	defer done(&err)
	reqs := make([]types.WriteRequest, len(items))
	at := make(map[itemKey]int, len(items))
	for i, it := range items {
		switch {
		case it.info == nil && it.err != nil:
			return nil, errorf("BatchWrite: item %d (%s): %w", i, it.op, it.err)
		case it.info == nil:
			return nil, errorf("BatchWrite: item %d is a zero BatchItem; make items with an entity's BatchPutItem or BatchDeleteItem: %w", i, ErrInvalidInput)
		case it.err != nil:
			return nil, errorf("BatchWrite: item %d (%s %s): %w", i, it.op, it.info.name, it.err)
		case it.info.table != t:
			return nil, errorf("BatchWrite: item %d is of %s, registered on table %s, not %s: %w", i, it.info.name, it.info.table.name, t.name, ErrInvalidInput)
		}
		key := it.req.PutRequest
		var id itemKey
		if key != nil {
			id = t.keyID(key.Item)
		} else {
			id = t.keyID(it.req.DeleteRequest.Key)
		}
		if j, dup := at[id]; dup {
			return nil, errorf("BatchWrite: items %d (%s %s) and %d (%s %s) have the same key %s: a batch writes an item once: %w",
				j, items[j].op, items[j].info.name, i, it.op, it.info.name, formatKey(it.keyStr), ErrInvalidInput)
		}
		at[id] = i
		reqs[i] = it.req
	}
	if len(items) == 0 {
		return nil, nil
	}
	left, err := t.batchWrite(ctx, "BatchWrite", reqs)
	if len(left) == 0 {
		return nil, err
	}
	out := make([]BatchItem, len(left))
	for i, j := range left {
		out[i] = items[j]
	}
	return out, err
}
