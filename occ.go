package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
)

// Optimistic concurrency control.
//
// An entity with an integer field tagged `singletable:"version"` (directly or in an
// embedded struct) is versioned. Every write then carries a condition on the
// version the caller holds and stores the next one:
//
//   - Version 0 means "no version yet": it matches an item whose version is
//     missing, NULL or 0 (written before versioning was adopted, or by other code).
//     Put at version 0, and Update at version 0 with [Upsert], also create the item
//     when there is none; Update at version 0 without Upsert needs an item without
//     a version, and Delete at version 0 deletes such an item (or none).
//   - Put, Update and Delete with version n > 0 succeed only if the stored version
//     is n; Put and Update store n+1. Create, and BatchPut of a new value, store 1.
//   - A write that loses the race fails with a [*ConflictError] (errors.Is
//     ErrConflict) that tells a moved version from a missing item, explained from
//     the item DynamoDB returns with the failed condition
//     (ReturnValuesOnConditionCheckFailure) or, where it does not, read back.
//   - [Clobber] skips the check, but not the field's bound: a version at the
//     largest value the field holds is never incremented past it.
//   - The value passed in is never modified: Put returns the stored value with its
//     new version, Update the item as stored.
//
// Lost responses. A write whose response is lost (a reset connection, a timeout, a
// 5xx) may or may not have been applied. The SDK does not retry such failures of a
// versioned write; the item is read back (consistently) and the write's receipt,
// stored with the item in the slot of its version, proves it landed: then it is a
// success, never a conflict, never sent twice. Without its receipt the outcome
// cannot be proven (the write may have landed on an item that another client then
// deleted, or deleted and created again at the same version) and the error matches
// [ErrAmbiguous]: the write is never sent again blindly. [Entity.Mutate] reads the
// item itself, so its writes are pinned to that item's incarnation (see the notes
// on receipts in receipt.go) and judged in full: a write that provably did not land
// is sent again, one that another writer overtook is retried from a fresh read.

// ConflictError reports a versioned write that lost a race. It matches ErrConflict
// and ErrCondition, ErrNotFound when the item is missing, and ErrAlreadyExists for
// a Create.
type ConflictError struct {
	Op       string            // "Put", "Create", "Update", "Delete", "Mutate"
	Entity   string            // Go type name of the entity
	Key      map[string]string // rendered primary key
	Expected uint64            // the version the write held
	// Current is the version stored when the conflict was seen, if CurrentKnown.
	Current      uint64
	CurrentKnown bool
	Missing      bool  // no item exists at the key
	Err          error // the AWS error, when there was one
}

// Error names the write, the key, the version expected and what was found.
func (e *ConflictError) Error() string {
	return "singletable: " + e.Op + " " + e.Entity + formatKey(e.Key) + ": " + e.detail()
}

// detail is the message without the write and key.
func (e *ConflictError) detail() string {
	var b strings.Builder
	b.WriteString("version conflict: expected version " + strconv.FormatUint(e.Expected, 10))
	switch {
	case e.Missing:
		b.WriteString(", but the item is missing")
	case e.CurrentKnown:
		b.WriteString(", found " + strconv.FormatUint(e.Current, 10))
		if e.Expected == 0 && e.Current > 0 && (e.Op == "Update" || e.Op == "Delete" || e.Op == "Put") {
			b.WriteString(": the value passed holds version 0 (no version yet) in its version field," +
				" but the stored item has a version; pass the version read in the value (the item Get returned)," +
				" or use Clobber() to skip the check")
		}
	default:
		b.WriteString(", found an unreadable version")
	}
	return b.String()
}

// detailError is an error whose message is given apart from its cause, so that
// a message wrapping another names the call and key once.
type detailError struct {
	msg string
	err error
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.err }

// conflictDetail is the message of a Mutate attempt's error without the call and
// key, which the Mutate error names.
func conflictDetail(err error) string {
	var ce *ConflictError
	if errors.As(err, &ce) {
		return ce.detail()
	}
	return strings.TrimPrefix(err.Error(), "singletable: ")
}

// asMutate names Mutate as the call in the error of the write it sent (planned
// as a Put): the caller called Mutate.
func asMutate(err error) error {
	var ie *ItemError
	var ce *ConflictError
	switch {
	case errors.As(err, &ce):
		ce.Op = "Mutate"
	case errors.As(err, &ie):
		ie.Op = "Mutate"
	}
	return err
}

// Is matches ErrConflict, ErrCondition, and ErrNotFound or ErrAlreadyExists as the
// case may be.
func (e *ConflictError) Is(target error) bool {
	switch target {
	case ErrConflict, ErrCondition:
		return true
	case ErrNotFound:
		return e.Missing
	case ErrAlreadyExists:
		return e.Op == "Create" && !e.Missing
	}
	return false
}

// Unwrap returns the AWS error, if any.
func (e *ConflictError) Unwrap() error { return e.Err }

// Clobber skips the version check of a versioned entity's write, and says so: the
// write replaces (or deletes) whatever version is stored. The stored version is
// still incremented, on the server, so that holders of the old version see a
// conflict; Put and Update return the version stored. After a lost response a
// clobbering Put or Update is judged by its receipt (in the write slot, which the
// next clobbering write replaces) and a clobbering Delete by the item's absence;
// neither is sent again blindly, and what cannot be proven is [ErrAmbiguous].
func Clobber() WriteOption { return clobberOption{} }

type clobberOption struct{}

func (clobberOption) applyWrite(w *writeOptions) { w.clobber = true }
func (clobberOption) applyUpdate(u *updateOptions) error {
	u.clobber = true
	return nil
}

// Mutate reads the item at key's primary key (a consistent GetItem), applies fn to
// it and writes it back (a conditional UpdateItem, as [Entity.Put]); when another
// writer got there first it reads again, applies fn again and retries. When no item
// exists, fn gets key with version 0 and the write creates the item; but an
// entity sharded at random whose key leaves the shard unset is looked up in every
// shard, and when it is in none Mutate fails with [ErrNotFound] and creates
// nothing (concurrent callers would each draw a shard and store copies). fn must only
// change the value it is given, and may be called several times; an error from it
// ends Mutate with nothing written. fn may not change the key's inputs or the
// version. Each attempt costs a consistent read and a write. Mutate needs a
// versioned entity.
//
// Its write is pinned to the incarnation it read, so after a lost response it is
// judged in full: sent again if it provably did not land, a success if it did,
// retried from a fresh read if another writer won, and [ErrAmbiguous] only when the
// item was deleted (or deleted and created again) in between.
//
// Retries follow the table's Backoff with full jitter, delays capped at 50 ms, for up
// to a minute and 1,000 attempts unless the table's Backoff or a [RetryBackoff]
// option says otherwise (MaxElapsed and MaxAttempts bound them): enough to carry
// one hot item under dozens of concurrent writers. Giving up returns the last
// [*ConflictError], wrapped in a message that says how long it tried.
//
//go:noinline
func (e *Entity[T]) Mutate(ctx context.Context, key T, fn func(*T) error, opts ...RetryOption) (_ T, err error) {
	var v T
	err = e.core().mutate(ctx, elem(&key), elem(&v), fn, opts)
	return v, err
}

// mutate is Mutate: fn is the caller's func(*T) error, called through
// reflection (no closure compiled per T; a Mutate attempt is two round trips),
// and the value stored is set in out (left zero on an error).
func (e *entity) mutate(ctx context.Context, ksv, out reflect.Value, fnv any, opts []RetryOption) (err error) {
	if err := e.refused("Mutate"); err != nil {
		return err
	}
	fn := reflect.ValueOf(fnv)
	if fn.IsNil() {
		return errorf("Mutate %s: a nil function: %w", e.info.name, ErrInvalidInput)
	}
	ctx, done := e.begin(ctx, "Mutate")
	defer done(&err)
	defer zeroOnError(&err, out)
	if e.info.version == nil {
		return errorf("Mutate %s: the entity has no version field: %w", e.info.name, ErrInvalidInput)
	}
	b := e.table.opts.Backoff
	if b.MaxAttempts == 0 && b.MaxElapsed == 0 {
		b.MaxAttempts, b.MaxElapsed = 1000, time.Minute
	}
	if b.Cap == 0 {
		// A conflict is a hot item, not an overloaded table: writers that lost keep
		// close behind, so that none starves behind fresh ones.
		b.Cap = 50 * time.Millisecond
	}
	for _, o := range opts {
		o.applyRetry(&b)
	}
	b = b.withDefaults()
	if err := e.resolveShard(ctx, ksv, true); errors.Is(err, ErrNotFound) {
		return e.itemErr("Mutate", nil, e.info.errNoRandomCreate("Mutate", err))
	} else if err != nil {
		return e.itemErr("Mutate", nil, err)
	}
	k, wantKey, err := e.info.primaryKey(ksv)
	if err != nil {
		return e.itemErr("Mutate", nil, err)
	}
	start := b.Now()
	for attempt := 1; ; attempt++ {
		actx, end := e.table.StartSpan(ctx, Span{Kind: SpanAttempt, Name: "Mutate", Attempt: attempt}) // trace.go
		err := e.mutateOnce(actx, ksv, k, wantKey, fn, out)
		end(SpanEnd{Err: err, Items: -1})
		if err == nil || !errors.Is(err, ErrConflict) {
			return err
		}
		if attempt >= b.MaxAttempts || b.MaxElapsed > 0 && b.Now().Sub(start) >= b.MaxElapsed {
			return e.itemErr("Mutate", wantKey, &detailError{
				msg: fmt.Sprintf("gave up after %d attempts in %s, each a consistent GetItem and a conditional UpdateItem; the last: %s", attempt, b.Now().Sub(start).Round(time.Millisecond), conflictDetail(err)),
				err: err})
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return e.itemErr("Mutate", wantKey, &detailError{msg: werr.Error() + " (last: " + conflictDetail(err) + ")", err: errors.Join(werr, err)})
		}
	}
}

// mutateOnce is one attempt of Mutate: read, apply fn, write pinned to what was
// read. The value written is left in out.
func (e *entity) mutateOnce(ctx context.Context, key reflect.Value, k map[string]types.AttributeValue, wantKey map[string]string, fn, out reflect.Value) error {
	t := e.table
	res, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: t.namePtr(), Key: k, ConsistentRead: boolPtr(true)})
	if err != nil {
		return e.itemErr("Mutate", wantKey, err)
	}
	cur := reflect.New(e.info.goType).Elem()
	cur.Set(key)
	var read map[string]types.AttributeValue // the item as stored, when no migration changed it
	switch {
	case res.Item == nil:
		e.info.setVersion(cur, 0)
	default:
		// Migrated in memory: the write stores the whole item at the current schema.
		cur.SetZero()
		migrated, err := e.decodeMigrated(res.Item, cur)
		if err != nil {
			return e.itemErr("Mutate", wantKey, err)
		}
		if migrated == nil {
			read = res.Item
		}
	}
	p := t.pinOf(e.info, res.Item)
	next := reflect.New(e.info.goType).Elem() // fn's own value each attempt, as before; Mutate returns a copy of it
	next.Set(cur)
	if ret := fn.Call([]reflect.Value{next.Addr()}); !ret[0].IsNil() {
		return ret[0].Interface().(error)
	}
	var o writeOptions
	if read != nil {
		// What fn left alone keeps its stored bytes, and a changed map is merged
		// into the stored one, so what T does not model survives (a string set
		// stays a set, a NULL stays, map entries T has no field for stay).
		before, err := e.info.encodeItem(cur)
		if err != nil {
			return e.itemErr("Mutate", wantKey, err)
		}
		o.base = &mutateBase{read: read, before: before}
	}
	_, gotKey, err := e.info.primaryKey(next)
	if err != nil || !maps.Equal(gotKey, wantKey) {
		return e.itemErr("Mutate", wantKey, fmt.Errorf("the function changed the key: %w", ErrInvalidInput))
	}
	// Planned as a Put pinned to what was read: the version plan refuses a
	// function that changed the version.
	o.env = explainEnv(ctx)                       // explain.go: nil but under Explain
	w, err := e.info.planPut(next, kindPut, o, p) // planner.go
	if err != nil {
		return e.itemErr("Mutate", wantKey, err)
	}
	if _, err := t.execute(ctx, w); err != nil { // pipeline.go; the version, createdAt and count settled in next
		return asMutate(err)
	}
	out.Set(next)
	return nil
}

// mutateBase is what a Mutate read, for writing only what its function changed:
// the item as stored (not migrated) and its fields as T encodes them.
type mutateBase struct {
	read, before map[string]types.AttributeValue
}

// keepUnchanged replaces in item (the encoding of the value to write) each field
// whose encoding fn left alone by its stored bytes, and merges each changed map
// into the stored one (attrvalue.Merge). own reports the attributes the
// write sets by clauses of their own (the version, createdAt, the count).
func (b *mutateBase) keepUnchanged(info *entityInfo, item map[string]types.AttributeValue, own func(string) bool) {
	if b == nil {
		return
	}
	for _, f := range info.plan.Fields() {
		if own(f.Name) {
			continue
		}
		before, after := b.before[f.Name], item[f.Name]
		stored, has := b.read[f.Name]
		switch {
		case attrvalue.Equal(before, after):
			if has {
				item[f.Name] = stored
			}
		case after != nil && has:
			if m := attrvalue.Merge(stored, before, after); m != nil {
				item[f.Name] = m
			}
		}
	}
}
