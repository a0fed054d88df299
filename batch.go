package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/backoff"
	"github.com/singletable/singletable/internal/expr"
)

// DynamoDB's limits per batch request.
const (
	maxBatchGet = 100
)

// BatchGetResult is what [Entity.BatchGet] found.
type BatchGetResult[T any] struct {
	// Items are the items found, in the order of the keys asked for (a key asked for
	// twice gives its item twice).
	Items []T
	// Missing are the keys, as given, at which no item exists.
	Missing []T
	// Unprocessed are the keys, as given, that were never answered; non-empty only
	// together with an error.
	Unprocessed []T
}

// itemKey identifies a primary key in maps: both values as they are, so that two
// different keys never share one (a separator would not do: keys may hold any
// byte, and ("P#1\x00x", "y") joined by NUL is ("P#1", "x\x00y") joined by NUL).
type itemKey struct{ pk, sk string }

// keyID returns the identity of the primary key in key, or the zero itemKey when
// an attribute is missing or not a string.
func (t *Table) keyID(key map[string]types.AttributeValue) itemKey {
	if t.opts.KeyTypes != nil || t.opts.NoSortKey {
		return t.typedKeyID(key) // keytypes.go
	}
	pk, _ := key[t.opts.PartitionKey].(*types.AttributeValueMemberS)
	sk, _ := key[t.opts.SortKey].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return itemKey{}
	}
	return itemKey{pk.Value, sk.Value}
}

// BatchGet reads the items at many keys (BatchGetItem, 100 keys a request). Keys
// DynamoDB leaves unprocessed are asked for again with [Backoff] until all are
// answered, the context ends, or Backoff.MaxAttempts rounds in a row make no
// progress; then the error matches [ErrUnprocessed] and Unprocessed holds exactly
// the keys never answered. A call that fails otherwise (the client refuses it, a
// validation error, a missing table) ends the loop with that error, which does
// not match ErrUnprocessed; the keys it left unanswered are in none of Items,
// Missing and Unprocessed, and the error says how many. An item at a key that is not provably of this entity
// type (its type attribute names another, or is missing or not a string) is
// neither decoded nor dropped: it is in none of Items, Missing and Unprocessed,
// and the error, matching [ErrTypeMismatch], names each such key (its index and
// rendered key), while Items and Missing hold what the other keys found. With
// [SkipExpired], an expired item counts as missing. Cost: as many GetItems, in
// fewer round trips. keys is not modified.
func (e *Entity[T]) BatchGet(ctx context.Context, keys []T, opts ...GetOption) (_ BatchGetResult[T], err error) {
	ctx, done := e.begin(ctx, "BatchGet")
	defer done(&err)
	o, err := collectKeyOptions("BatchGet", e.info.name, opts)
	if err != nil {
		return BatchGetResult[T]{}, err
	}
	p, err := e.table.keyPlan(e.info, o, false) // readpath.go
	if err != nil {
		return BatchGetResult[T]{}, fmt.Errorf("singletable: BatchGet %s: %w", e.info.name, err)
	}
	return e.batchGet(ctx, keys, &p, o.consistent, nil)
}

// batchGet is BatchGet with the read's plan; a projection (project, as readList
// makes it) reads only those attributes.
func (e *Entity[T]) batchGet(ctx context.Context, keys []T, p *readPlan, consistent bool, project []string) (BatchGetResult[T], error) {
	var res BatchGetResult[T]
	t := e.table
	ids := make([]itemKey, len(keys))
	avs := map[itemKey]map[string]types.AttributeValue{}
	var queue []itemKey
	for i := range keys {
		k, err := e.batchKey(keys[i])
		if err != nil {
			return res, fmt.Errorf("singletable: BatchGet %s: key %d: %w", e.info.name, i, err)
		}
		id := t.keyID(k)
		ids[i] = id
		if _, dup := avs[id]; !dup {
			avs[id] = k
			queue = append(queue, id)
		}
	}
	found := newBatchFound[T]()
	useWire := len(queue) == len(ids) // a key asked twice takes the attribute-value path: two independent values
	unanswered := func() map[itemKey]bool {
		m := make(map[itemKey]bool, len(queue))
		for _, id := range queue {
			m[id] = true
		}
		return m
	}
	var loopErr error
	refused := false // the loop ended on an error that is not "unprocessed" (backoff.Unprocessed)
	retry := t.batchRetry()
	for len(queue) > 0 {
		n := min(len(queue), maxBatchGet)
		chunk := make([]map[string]types.AttributeValue, n)
		for i, id := range queue[:n] {
			chunk[i] = avs[id]
		}
		ka := types.KeysAndAttributes{Keys: chunk, ConsistentRead: aws.Bool(consistent)}
		if project != nil {
			var b expr.Builder
			ka.ProjectionExpression = aws.String(projectionExpression(&b, project)) // projection.go
			ka.ExpressionAttributeNames = b.Names()
		}
		out, err := e.batchGetItem(ctx, p, &dynamodb.BatchGetItemInput{ // BatchGetItem, items into found (wire.go)
			RequestItems: map[string]types.KeysAndAttributes{t.name: ka},
		}, found, useWire)
		if err != nil {
			loopErr, refused = err, !backoff.Unprocessed(err)
			break
		}
		var again []itemKey
		if u, ok := out.UnprocessedKeys[t.name]; ok {
			for _, k := range u.Keys {
				again = append(again, t.keyID(k))
			}
		}
		queue = append(again, queue[n:]...)
		if loopErr = retry.After(ctx, n, len(again)); loopErr != nil {
			break
		}
	}
	left := unanswered()
	var readErr error
	notRead := 0
	for i, id := range ids {
		v, verdict, ok, err := found.read(ctx, p, id) // through the read path's phases (wire.go, readpath.go)
		switch {
		case err != nil:
			readErr = errors.Join(readErr, fmt.Errorf("key %d %s: %w", i, formatKey(t.keyStrings(avs[id])), err))
		case ok && verdict == itemRead:
			res.Items = append(res.Items, v)
		case !ok && left[id] && refused:
			notRead++
		case !ok && left[id]:
			res.Unprocessed = append(res.Unprocessed, keys[i])
		default: // no item, or one SkipExpired leaves out: as good as missing
			res.Missing = append(res.Missing, keys[i])
		}
	}
	if refused {
		return res, fmt.Errorf("singletable: BatchGet %s: %d keys not read: %w", e.info.name, notRead, errors.Join(loopErr, readErr))
	}
	if loopErr != nil {
		return res, fmt.Errorf("singletable: BatchGet %s: %d keys unprocessed: %w: %w", e.info.name, len(res.Unprocessed), ErrUnprocessed, loopErr)
	}
	if readErr != nil {
		return res, fmt.Errorf("singletable: BatchGet %s: %w", e.info.name, readErr)
	}
	return res, nil
}

// BatchPut writes many items (BatchWriteItem, 25 a request). Unlike [Entity.Put] it
// takes no conditions: DynamoDB's batch writes have none, so it overwrites whatever
// is at each key, and on a versioned entity it bypasses optimistic locking: it
// stores the version after the one each value holds (1 for a new value, as Put
// does) and a new incarnation, whatever is stored, so it can move a version
// backwards. Use Put, Mutate or a transaction where versions must be checked. Items DynamoDB leaves unprocessed are sent again with [Backoff]
// until all are written, the context ends, or Backoff.MaxAttempts rounds in a row
// make no progress; it then returns exactly the items not written, with an error
// matching [ErrUnprocessed]. A call that fails otherwise (the client refuses it, a
// validation error, a missing table) returns the items not written with that
// error, which does not match ErrUnprocessed. Two items with the same key are refused before
// anything is sent. items is not modified.
func (e *Entity[T]) BatchPut(ctx context.Context, items []T) (_ []T, err error) {
	if e == nil {
		return nil, errNilEntity[T]("BatchPut")
	}
	ctx, done := e.begin(ctx, "BatchPut")
	defer done(&err)
	reqs := make([]types.WriteRequest, len(items))
	env := &planEnv{} // one clock reading for the batch
	for i := range items {
		// A copy: a drawn shard is not written back into the caller's slice.
		v := items[i]
		item, err := e.info.planBatchPut(reflect.ValueOf(&v).Elem(), env) // planner.go
		if err != nil {
			return nil, fmt.Errorf("singletable: BatchPut %s: item %d: %w", e.info.name, i, err)
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	left, err := e.table.batchWrite(ctx, "BatchPut "+e.info.name, reqs)
	return pick(items, left), err
}

// BatchDelete deletes the items at many keys (BatchWriteItem, 25 a request), with
// the same retries and result as [Entity.BatchPut]. Deleting a missing item is not
// an error. keys is not modified.
func (e *Entity[T]) BatchDelete(ctx context.Context, keys []T) (_ []T, err error) {
	if e == nil {
		return nil, errNilEntity[T]("BatchDelete")
	}
	ctx, done := e.begin(ctx, "BatchDelete")
	defer done(&err)
	if u := e.info.unique; u != nil {
		return slices.Clone(keys), fmt.Errorf("singletable: BatchDelete %s: %w", e.info.name, u.refuseBatch()) // unique.go
	}
	reqs := make([]types.WriteRequest, len(keys))
	for i := range keys {
		k, err := e.batchKey(keys[i])
		if err != nil {
			return nil, fmt.Errorf("singletable: BatchDelete %s: key %d: %w", e.info.name, i, err)
		}
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	left, err := e.table.batchWrite(ctx, "BatchDelete "+e.info.name, reqs)
	return pick(keys, left), err
}

// pick returns the values at the given indexes.
func pick[T any](vs []T, idx []int) []T {
	if len(idx) == 0 {
		return nil
	}
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = vs[j]
	}
	return out
}

// batchWrite sends write requests in chunks of 25, retrying unprocessed ones, and
// returns the indexes of the requests not processed.
func (t *Table) batchWrite(ctx context.Context, what string, reqs []types.WriteRequest) ([]int, error) {
	w := backoff.Writes[itemKey]{Table: t.name, What: what, Rounds: t.batchRetry(), Send: t.client.BatchWriteItem,
		ID: func(r types.WriteRequest) itemKey {
			if r.DeleteRequest != nil {
				return t.keyID(r.DeleteRequest.Key)
			}
			return t.keyID(r.PutRequest.Item)
		},
		Conflict: replicatedConflict, ErrUnprocessed: ErrUnprocessed, ErrInvalid: ErrInvalidInput} // pipeline.go
	return w.Run(ctx, reqs)
}

// batchRetry paces the rounds of a batch call that DynamoDB answers in part
// (internal/backoff's Rounds) by the table's Backoff, each round that leaves
// items unprocessed a trace event.
func (t *Table) batchRetry() *backoff.Rounds {
	b := t.opts.Backoff.withDefaults()
	return &backoff.Rounds{MaxAttempts: b.MaxAttempts, Wait: b.Wait, Event: func(ctx context.Context, unprocessed, attempt int) {
		t.event(ctx, SpanEvent{Name: EventUnprocessed, Items: unprocessed, Attempt: attempt}) // trace.go
	}}
}

// batchKey renders the primary key of one key value of a batch; a hashed shard is
// computed, a random one must be set.
func (e *Entity[T]) batchKey(key T) (map[string]types.AttributeValue, error) {
	sv := reflect.ValueOf(&key).Elem()
	if _, err := e.info.fillShard(sv, false); err != nil {
		return nil, err
	}
	k, _, err := e.info.primaryKey(sv)
	return k, err
}
