package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"

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
//
//go:noinline
func (e *Entity[T]) BatchGet(ctx context.Context, keys []T, opts ...GetOption) (_ BatchGetResult[T], err error) {
	var res BatchGetResult[T]
	err = e.core().batchGetCall(ctx, elem(&keys), opts, elem(&res))
	return res, err
}

// batchGetCall is BatchGet: keys is the []T given, res the BatchGetResult[T] to
// fill (see batchGet).
func (e *entity) batchGetCall(ctx context.Context, keys reflect.Value, opts []GetOption, res reflect.Value) (err error) {
	if err := e.refused("BatchGet"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "BatchGet")
	defer done(&err)
	o, err := collectKeyOptions("BatchGet", e.info.name, opts)
	if err != nil {
		return err
	}
	p, err := e.table.keyPlan(e.info, o, false) // readpath.go
	if err != nil {
		return errorf("BatchGet %s: %w", e.info.name, err)
	}
	return e.batchGet(ctx, keys, &p, o.consistent, nil, res.Field(0), res.Field(1), res.Field(2))
}

// batchGet is BatchGet with the read's plan; a projection (project, as readList
// makes it) reads only those attributes. keys is the []T given; it appends to
// items, missing and unprocessed (settable []T: a BatchGetResult's fields).
func (e *entity) batchGet(ctx context.Context, keys reflect.Value, p *readPlan, consistent bool, project []string, items, missing, unprocessed reflect.Value) error {
	t := e.table
	n := keys.Len()
	ids := make([]itemKey, n)
	avs := map[itemKey]map[string]types.AttributeValue{}
	var queue []itemKey
	for i := range n {
		k, err := e.batchKey(keys.Index(i))
		if err != nil {
			return errorf("BatchGet %s: key %d: %w", e.info.name, i, err)
		}
		id := t.keyID(k)
		ids[i] = id
		if _, dup := avs[id]; !dup {
			avs[id] = k
			queue = append(queue, id)
		}
	}
	found := newBatchFound(e.info.goType)
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
	notRead, nUnprocessed := 0, 0
	for i, id := range ids {
		v, verdict, ok, err := found.read(ctx, p, id) // through the read path's phases (wire.go, readpath.go)
		switch {
		case err != nil:
			readErr = errors.Join(readErr, fmt.Errorf("key %d %s: %w", i, formatKey(t.keyStrings(avs[id])), err))
		case ok && verdict == itemRead:
			items.Set(reflect.Append(items, v))
		case !ok && left[id] && refused:
			notRead++
		case !ok && left[id]:
			unprocessed.Set(reflect.Append(unprocessed, keys.Index(i)))
			nUnprocessed++
		default: // no item, or one SkipExpired leaves out: as good as missing
			missing.Set(reflect.Append(missing, keys.Index(i)))
		}
	}
	if refused {
		return errorf("BatchGet %s: %d keys not read: %w", e.info.name, notRead, errors.Join(loopErr, readErr))
	}
	if loopErr != nil {
		return errorf("BatchGet %s: %d keys unprocessed: %w: %w", e.info.name, nUnprocessed, ErrUnprocessed, loopErr)
	}
	if readErr != nil {
		return errorf("BatchGet %s: %w", e.info.name, readErr)
	}
	return nil
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
//
//go:noinline
func (e *Entity[T]) BatchPut(ctx context.Context, items []T) (_ []T, err error) {
	var left []T
	err = e.core().batchPut(ctx, elem(&items), elem(&left))
	return left, err
}

// batchPut is BatchPut: items is the []T given; the items not written are set
// in left (a []T).
func (e *entity) batchPut(ctx context.Context, items, left reflect.Value) (err error) {
	if err := e.refused("BatchPut"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "BatchPut")
	defer done(&err)
	reqs := make([]types.WriteRequest, items.Len())
	env := &planEnv{} // one clock reading for the batch
	if xe := explainEnv(ctx); xe != nil {
		env = xe
	}
	for i := range reqs {
		// A copy: a drawn shard is not written back into the caller's slice.
		v := reflect.New(e.info.goType).Elem()
		v.Set(items.Index(i))
		item, err := e.info.planBatchPut(v, env) // planner.go
		if err != nil {
			return errorf("BatchPut %s: item %d: %w", e.info.name, i, err)
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	idx, err := e.table.batchWrite(ctx, "BatchPut "+e.info.name, reqs)
	pick(left, items, idx)
	return err
}

// BatchDelete deletes the items at many keys (BatchWriteItem, 25 a request), with
// the same retries and result as [Entity.BatchPut]. Deleting a missing item is not
// an error. keys is not modified.
//
//go:noinline
func (e *Entity[T]) BatchDelete(ctx context.Context, keys []T) (_ []T, err error) {
	var left []T
	err = e.core().batchDelete(ctx, elem(&keys), elem(&left))
	return left, err
}

// batchDelete is BatchDelete: keys is the []T given; the keys not deleted are
// set in left (a []T).
func (e *entity) batchDelete(ctx context.Context, keys, left reflect.Value) (err error) {
	if err := e.refused("BatchDelete"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "BatchDelete")
	defer done(&err)
	if u := e.info.unique; u != nil {
		if !keys.IsNil() { // a copy of keys
			cp := reflect.MakeSlice(keys.Type(), keys.Len(), keys.Len())
			reflect.Copy(cp, keys)
			left.Set(cp)
		}
		return errorf("BatchDelete %s: %w", e.info.name, u.refuseBatch()) // unique.go
	}
	reqs := make([]types.WriteRequest, keys.Len())
	for i := range reqs {
		k, err := e.batchKey(keys.Index(i))
		if err != nil {
			return errorf("BatchDelete %s: key %d: %w", e.info.name, i, err)
		}
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	idx, err := e.table.batchWrite(ctx, "BatchDelete "+e.info.name, reqs)
	pick(left, keys, idx)
	return err
}

// pick sets dst (a []T) to the values of vs (a []T) at the given indexes, nil
// when there are none.
func pick(dst, vs reflect.Value, idx []int) {
	if len(idx) == 0 {
		return
	}
	out := reflect.MakeSlice(vs.Type(), len(idx), len(idx))
	for i, j := range idx {
		out.Index(i).Set(vs.Index(j))
	}
	dst.Set(out)
}

// batchWrite sends write requests in chunks of 25, retrying unprocessed ones, and
// returns the indexes of the requests not processed.
func (t *Table) batchWrite(ctx context.Context, what string, reqs []types.WriteRequest) ([]int, error) {
	if err := refuseFenced(ctx, what); err != nil { // fence.go: nothing sent, nothing written
		all := make([]int, len(reqs))
		for i := range all {
			all[i] = i
		}
		return all, err
	}
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
func (e *entity) batchKey(key reflect.Value) (map[string]types.AttributeValue, error) {
	sv := reflect.New(e.info.goType).Elem() // a copy: a hashed shard is not set in the caller's value
	sv.Set(key)
	if _, err := e.info.fillShard(sv, false); err != nil {
		return nil, err
	}
	k, _, err := e.info.primaryKey(sv)
	return k, err
}
