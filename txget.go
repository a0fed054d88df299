package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/wire"
)

// Reads of items of several entity types in one call: [Table.TransactGet] and
// [Table.BatchGet] (batchmixed.go) take [Ref] values, one per item, each typed by
// its entity and filled in by the call.

// maxTransactGet is DynamoDB's limit of items per TransactGetItems.
const maxTransactGet = 100

// ItemRef is a [*Ref] of any entity type, as [Table.TransactGet] and
// [Table.BatchGet] take them. Only Ref implements it.
type ItemRef interface {
	refCore() *refCore
	// refValue is the Ref's value (addressable), taken from the Ref itself at
	// each call, so that a copy of a Ref is filled in its own place.
	refValue() reflect.Value
}

// refState is what a call found for a Ref.
type refState uint8

const (
	refUnread refState = iota
	refFound
	refMissing // no item, or one the plan leaves out (rerr says why)
	refUnprocessed
	refFailed // read but not decoded, or not read for a call's error: rerr says why
)

// refCore is the part of a Ref that does not depend on T.
type refCore struct {
	info   *entityInfo
	key    map[string]types.AttributeValue // the primary key; nil when err is set
	keyStr map[string]string
	err    error // the key could not be rendered: the call refuses it
	state  refState
	rerr   error     // why a read item could not be decoded, or was left out
	plan   *readPlan // what the call reading it does with its item (refPlans)
	e      *entity
}

// Ref is one item of entity type T to read by key in [Table.TransactGet] or
// [Table.BatchGet]. Make it with [Entity.Ref]; after the call, [Ref.Value] holds
// what was read. A Ref is filled by the last call it was passed to: pass it to
// one call at a time.
type Ref[T any] struct {
	core refCore
	key  T
	v    T
}

// Ref returns a reference to the item at key's primary key (only the key's
// inputs need be set; a random shard must be set), for a read of several entity
// types. key is copied. A key that cannot be rendered is reported by the call,
// before anything is sent.
//
//go:noinline
func (e *Entity[T]) Ref(key T) *Ref[T] {
	r := &Ref[T]{key: key}
	e.core().initRef(&r.core, elem(&r.key))
	return r
}

// initRef readies c, the core of a Ref of key sv.
func (e *entity) initRef(c *refCore, sv reflect.Value) {
	c.e = e
	if c.err = e.refused("Ref"); c.err != nil {
		return
	}
	c.info = e.info
	k, err := e.batchKey(sv)
	if err != nil {
		c.err = err
		return
	}
	c.key, c.keyStr = k, e.table.keyStrings(k)
}

// Key returns the key the Ref was made with.
//
//go:noinline
func (r *Ref[T]) Key() T { return r.key }

// Found reports whether the last call found the item.
//
//go:noinline
func (r *Ref[T]) Found() bool { return r.core.state == refFound }

// Value returns the item the last call read. Its error names the entity and the
// key, and matches [ErrNotFound] when there is no item at the key,
// [ErrTypeMismatch] when the item there is of another entity type,
// [ErrUnprocessed] when a [Table.BatchGet] gave up before reading it, and
// [ErrInvalidInput] when no call has read the Ref.
//
//go:noinline
func (r *Ref[T]) Value() (T, error) {
	if err := r.core.valueErr(); err != nil {
		var zero T
		return zero, err
	}
	return r.v, nil
}

// valueErr is the error of Ref.Value: nil when the item was found.
func (c *refCore) valueErr() error {
	switch c.state {
	case refFound:
		return nil
	case refMissing:
		if c.rerr != nil {
			return c.e.itemErr("Get", c.keyStr, c.rerr)
		}
		return c.e.itemErr("Get", c.keyStr, ErrNotFound)
	case refUnprocessed:
		return c.e.itemErr("Get", c.keyStr, fmt.Errorf("the batch gave up before reading it: %w", ErrUnprocessed))
	case refFailed:
		return c.e.itemErr("Get", c.keyStr, c.rerr)
	}
	if c.info == nil && c.err != nil {
		return c.err // a Ref of a nil or zero Entity
	}
	if c.info == nil {
		return errorf("Ref.Value: a zero Ref; make refs with an entity's Ref: %w", ErrInvalidInput)
	}
	if c.err != nil {
		return c.e.itemErr("Get", nil, c.err)
	}
	return c.e.itemErr("Get", c.keyStr, fmt.Errorf("not read: pass the Ref to Table.TransactGet or Table.BatchGet first: %w", ErrInvalidInput))
}

func (r *Ref[T]) refCore() *refCore { return &r.core }

func (r *Ref[T]) refValue() reflect.Value { return elem(&r.v) }

// setItem reads an item read for the Ref through the phases of its plan
// (readpath.go): whole, so an older one is migrated and written back as its
// entity says; one not provably of the entity fails the Ref with
// ErrTypeMismatch, one SkipExpired leaves out is missing.
func (c *refCore) setItem(ctx context.Context, item map[string]types.AttributeValue, dst reflect.Value) {
	dst.SetZero()
	if item == nil {
		c.state = refMissing
		return
	}
	v := reflect.New(c.info.goType).Elem()
	verdict, err := c.plan.readItem(ctx, item, v)
	switch {
	case err != nil:
		c.state, c.rerr = refFailed, err
	case verdict == itemExpired:
		c.state, c.rerr = refMissing, errExpired
	default:
		dst.Set(v)
		c.state = refFound
	}
}

// setValue sets in dst (the Ref's value) the value the wire path decoded (a
// *T), judged (judgeWire).
func (c *refCore) setValue(v, dst reflect.Value) {
	dst.Set(v.Elem())
	c.state = refFound
}

// judgeWire runs the type check and expiry phases of the ref's plan on entry i
// of s, an item the wire path decoded as entity typ. It reports false when they
// settled the Ref (failed, or missing), and the value is not to be set.
func (c *refCore) judgeWire(s *wire.Sink, i int, typ string) bool {
	if err := c.plan.checkWireType(typ); err != nil {
		c.state, c.rerr = refFailed, err
		return false
	}
	if c.plan.wireVerdict(s, i) == itemExpired {
		c.state, c.rerr = refMissing, errExpired
		return false
	}
	return true
}

// refPlans is the options phase (readpath.go) of a read of refs: each ref gets
// the plan of its entity, made once per entity from the call's options; a ref
// whose entity cannot honour them (SkipExpired without a ttl field) is refused,
// naming it, before anything is sent. It returns the attribute a wire sink must
// keep for the plans (the TTL, with SkipExpired; "" for none).
func (t *Table) refPlans(call string, refs []ItemRef, o getOptions) (peek string, err error) {
	plans := make(map[*entityInfo]*readPlan, 1)
	for i, ref := range refs {
		c := ref.refCore()
		p, ok := plans[c.info]
		if !ok {
			kp, err := t.keyPlan(c.info, o, false)
			if err != nil {
				return "", errorf("%s: ref %d (%s): %w", call, i, refLabel(c), err)
			}
			p = &kp
			plans[c.info] = p
			if p.expiry != nil {
				peek = p.expiry.attr // the table's one TTL attribute
			}
		}
		c.plan = p
	}
	return peek, nil
}

// reset forgets what an earlier call read.
func (c *refCore) reset() {
	c.state, c.rerr = refUnread, nil
}

// checkRefs refuses, before anything is sent, refs that are nil, that could not
// render their key, of entities of another table, or that name one item twice
// (DynamoDB refuses both: a transaction acts on an item once, a batch asks for it
// once). It returns their key identities.
func (t *Table) checkRefs(call string, refs []ItemRef) ([]itemKey, error) {
	ids := make([]itemKey, len(refs))
	at := make(map[itemKey]int, len(refs))
	for i, ref := range refs {
		if ref == nil || reflect.ValueOf(ref).IsNil() {
			return nil, errorf("%s: ref %d is nil: %w", call, i, ErrInvalidInput)
		}
		c := ref.refCore()
		if c.info == nil && c.err != nil {
			return nil, errorf("%s: ref %d: %w", call, i, c.err)
		}
		if c.info == nil {
			return nil, errorf("%s: ref %d is a zero Ref; make refs with an entity's Ref: %w", call, i, ErrInvalidInput)
		}
		if c.err != nil {
			return nil, errorf("%s: ref %d (%s): %w", call, i, c.info.name, c.err)
		}
		if c.info.table != t {
			return nil, errorf("%s: ref %d is of %s, registered on table %s, not %s: %w", call, i, c.info.name, c.info.table.name, t.name, ErrInvalidInput)
		}
		id := t.keyID(c.key)
		if j, dup := at[id]; dup {
			return nil, errorf("%s: refs %d (%s) and %d (%s) name the same item %s: ask for it once: %w", call, j, refs[j].refCore().info.name, i, c.info.name, formatKey(c.keyStr), ErrInvalidInput)
		}
		at[id] = i
		ids[i] = id
	}
	return ids, nil
}

// TransactGet reads items of any registered entity types atomically
// (TransactGetItems): the values are as they all stood at one moment, never
// half of another transaction's writes. Each [Ref] is filled in: its Value, or
// an error matching [ErrNotFound] for a missing item. Up to 100 refs a call
// (DynamoDB's limit; 25 on DynamoDB Local 1.x), each of a distinct item; more,
// a repeated item, a nil ref or a key that cannot be rendered is refused before
// anything is sent. A transaction cancelled only by conflicts with concurrent
// writes is retried by the table's Backoff; another cancellation returns a
// [*TxError] naming each failed item. Cost: 2 RCU per 4 KB per item (twice a
// consistent read). Older items are migrated and written back as their entity
// says.
func (t *Table) TransactGet(ctx context.Context, refs ...ItemRef) (err error) {
	if err := t.refused("Table.TransactGet"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "TransactGet")
	defer done(&err)
	switch n := len(refs); {
	case n == 0:
		return errorf("TransactGet: no refs: %w", ErrInvalidInput)
	case n > maxTransactGet:
		return errorf("TransactGet: %d items, over DynamoDB's limit of %d a transaction: split them, or use BatchGet, which is not atomic: %w", n, maxTransactGet, ErrInvalidInput)
	}
	if _, err := t.checkRefs("TransactGet", refs); err != nil {
		return err
	}
	if _, err := t.refPlans("TransactGet", refs, getOptions{}); err != nil {
		return err
	}
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(refs))}
	for i, ref := range refs {
		c := ref.refCore()
		c.reset()
		in.TransactItems[i] = types.TransactGetItem{Get: &types.Get{TableName: t.namePtr(), Key: c.key}}
	}
	b := t.opts.Backoff.withDefaults()
	for attempt := 1; ; attempt++ {
		err := t.transactGetOnce(ctx, in, refs)
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			return nil
		case errors.As(err, &tce) && onlyConflicts(tce) && attempt < b.MaxAttempts:
			if werr := b.Wait(ctx, attempt); werr != nil {
				return errorf("TransactGet: %w (last: %w)", werr, err)
			}
			continue
		case errors.As(err, &tce):
			return t.txGetError(refs, tce, err)
		}
		return errorf("TransactGet: %w", err)
	}
}

// transactGetOnce sends the transaction once and fills the refs, on the wire path
// when the table takes it.
func (t *Table) transactGetOnce(ctx context.Context, in *dynamodb.TransactGetItemsInput, refs []ItemRef) error {
	if !t.wireOn() {
		out, err := t.client.TransactGetItems(ctx, in)
		if err != nil {
			return err
		}
		return t.fillTx(ctx, refs, out.Responses, nil, nil)
	}
	var sl wire.Any
	s := &wire.Sink{Op: wire.TransactGetItems, TypeAttr: t.opts.TypeAttribute, Slots: &sl, Lookup: t.wireLookup}
	out, err := t.client.TransactGetItems(ctx, in, s.Option())
	if err != nil {
		return err
	}
	if !s.Decoded() {
		return t.fillTx(ctx, refs, out.Responses, nil, nil)
	}
	return t.fillTx(ctx, refs, out.Responses, s, sl.Items)
}

// fillTx fills each ref from its response: decoded on the wire (s, vals), or
// from the SDK's attribute values; each through its plan's phases.
func (t *Table) fillTx(ctx context.Context, refs []ItemRef, resp []types.ItemResponse, s *wire.Sink, vals []reflect.Value) error {
	var ents []wire.Entry
	n := len(resp)
	if s != nil {
		ents = s.Entries()
		n = len(ents) // resp holds only what the wire path left to the SDK
	}
	if n != len(refs) {
		return errorf("TransactGet: %d responses for %d items", n, len(refs))
	}
	k := 0
	for i, ref := range refs {
		if ents != nil && ents[i].Target != nil {
			v := vals[k]
			k++
			if ref.refCore().judgeWire(s, i, ents[i].Target.Type) {
				ref.refCore().setValue(v, ref.refValue())
			}
			continue
		}
		switch {
		case ents == nil:
			ref.refCore().setItem(ctx, resp[i].Item, ref.refValue())
		case ents[i].Raw < 0: // no item at the key
			ref.refCore().setItem(ctx, nil, ref.refValue())
		case ents[i].Raw < len(resp):
			ref.refCore().setItem(ctx, resp[ents[i].Raw].Item, ref.refValue())
		default:
			return errorf("TransactGet: response %d is missing", i)
		}
	}
	return nil
}

// txGetError is the [*TxError] of a cancelled TransactGet.
func (t *Table) txGetError(refs []ItemRef, tce *types.TransactionCanceledException, err error) error {
	txe := &TxError{Err: err}
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" || code == "None" || i >= len(refs) {
			continue
		}
		c := refs[i].refCore()
		txe.Reasons = append(txe.Reasons, TxReason{Index: i, Op: "Get", Entity: c.info.name, Key: c.keyStr, Code: code, Message: aws.ToString(r.Message)})
	}
	if len(txe.Reasons) == 0 {
		return errorf("TransactGet: %w", err)
	}
	return txe
}

// refLabel names a ref in messages: "Order{PK=..., SK=...}".
func refLabel(c *refCore) string {
	return c.info.name + formatKey(c.keyStr)
}

// refsText lists refs for messages, up to a few.
func refsText(refs []ItemRef) string {
	out := ""
	for i, r := range refs {
		if i == 5 {
			return out + " and " + strconv.Itoa(len(refs)-5) + " more"
		}
		if i > 0 {
			out += ", "
		}
		out += refLabel(r.refCore())
	}
	return out
}
