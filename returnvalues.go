package singletable

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Return values. [Entity.Put] and [Entity.Delete] can return the item they
// replaced or deleted ([ReturnOld]); [Entity.Update] returns the item as stored
// afterwards, or with [Returning] the item before, or only the attributes it
// changed. DynamoDB returns them with the write's own response (ReturnValues), at
// no extra read capacity.
//
// The item replaced exists only in the write's response. When that response is
// lost (a reset, a timeout, a 5xx) the write is never sent again blindly (a second
// attempt would return the item the first one wrote): an unversioned write is then
// [ErrAmbiguous]; a versioned one whose receipt shows it landed is [ErrAmbiguous]
// too, since the item it replaced is gone; one that provably did not land is sent
// again, as always. Everything else a write returns has the same shape whether
// its answer came or was lost and the item read back: the item after an Update,
// the attributes it wrote ([ReturnUpdatedNew], taken from the whole item either
// way), the value a Put stored. Transactions return no items: ReturnOld and Returning are
// refused there, and so is ReturnOld on Create, which never replaces an item.

// Old receives the item a write replaced or deleted; see [ReturnOld].
type Old[T any] struct {
	// Item is the item as it was before the write, decoded (and migrated in
	// memory); the zero T when Found is false.
	Item T
	// Found is false when there was no item at the key.
	Found bool
}

// oldSink is an *Old[T] of some T, as a write option holds it.
type oldSink interface {
	oldType() reflect.Type
	// oldParts returns the Item (addressable) and Found of a non-nil *Old.
	oldParts() (reflect.Value, *bool)
}

func (o *Old[T]) oldType() reflect.Type { return reflect.TypeFor[T]() }

func (o *Old[T]) oldParts() (reflect.Value, *bool) { return elem(&o.Item), &o.Found }

type returnOldOption struct{ dst oldSink }

// ReturnOld asks [Entity.Put] or [Entity.Delete] for the item the write replaced
// or deleted (ReturnValues ALL_OLD), decoded into dst: dst.Found is false when
// there was none. Put of a versioned entity, or of one with a createdAt or counter
// field, returns the stored version, createdAt and count worked out from it. It
// costs no read capacity. dst must be an *Old of the entity's own type; Create,
// transaction actions and [Entity.Update] (which takes [Returning]) refuse it with
// [ErrInvalidInput]. A write asking for it is never resent after a lost response
// (see the notes on return values): the call then fails with [ErrAmbiguous].
func ReturnOld[T any](dst *Old[T]) WriteOption { return returnOldOption{dst: dst} }

func (o returnOldOption) applyWrite(w *writeOptions) { w.old = o.dst }
func (o returnOldOption) applyUpdate(*updateOptions) error {
	return fmt.Errorf("ReturnOld does not apply to Update, which returns the item it stored; ask for the item before with Returning(ReturnAllOld): %w", ErrInvalidInput)
}

// returnsFeature is the plan of return values, compiled at Register for every
// entity: what a write asks DynamoDB to return, and what the call returns of it.
type returnsFeature struct{ noOwner }

// plan has a Put or Delete with [ReturnOld] ask for the item it replaces
// (ALL_OLD), and an Update ask for what [Returning] says: ALL_NEW by default;
// UPDATED_NEW and UPDATED_OLD are asked as ALL_NEW and ALL_OLD, and the call
// returns the attributes the update wrote (see settle), so that what it returns
// is the same whether the answer came or was lost and the item read back.
func (returnsFeature) plan(p *writePlan) error {
	w := &p.w
	switch p.kind {
	case kindPut, kindCreate, kindDelete:
		o := p.old
		if o == nil {
			return nil
		}
		switch {
		case p.env.tx:
			return fmt.Errorf("ReturnOld does not apply to Tx%s: transactions return no items: %w", p.kind, ErrInvalidInput)
		case reflect.ValueOf(o).IsNil():
			return fmt.Errorf("ReturnOld(nil): %w", ErrInvalidInput)
		case o.oldType() != p.info.goType:
			return fmt.Errorf("ReturnOld holds a %s, but the write is of %s: %w", o.oldType(), p.info.goType, ErrInvalidInput)
		case p.kind == kindCreate:
			return fmt.Errorf("ReturnOld does not apply to Create, which never replaces an item: %w", ErrInvalidInput)
		}
		w.ret, w.wireRet, w.answerOnly = types.ReturnValueAllOld, types.ReturnValueAllOld, true
	case kindUpdate:
		if p.env.tx && p.ret != "" {
			return fmt.Errorf("Returning does not apply to TxUpdate: transactions return no items: %w", ErrInvalidInput)
		}
		w.ret, w.wireRet = p.ret, p.ret
		switch p.ret {
		case types.ReturnValueUpdatedNew:
			w.wireRet = types.ReturnValueAllNew
			p.stake(returnsFeature{})
		case types.ReturnValueUpdatedOld:
			w.wireRet = types.ReturnValueAllOld
			p.stake(returnsFeature{})
		}
		// The item before the update is only in the answer.
		w.answerOnly = p.ret == types.ReturnValueAllOld || p.ret == types.ReturnValueUpdatedOld
	}
	return nil
}

func (returnsFeature) judge(*writeRequest, map[string]types.AttributeValue) (verdict, string) {
	return abstain, ""
}

func (returnsFeature) explain(*writeRequest, map[string]types.AttributeValue) error { return nil }

// settle returns, for UPDATED_NEW and UPDATED_OLD, the top-level attributes the
// update wrote (set, removed, added to or deleted from; a change at a document
// path returns its whole attribute) of the item after it or before it: the same
// whether attrs is the answer or the item read back after a lost answer.
func (returnsFeature) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	if attrs == nil {
		return nil, nil
	}
	names := w.b.Names()
	out := map[string]types.AttributeValue{}
	for _, attr := range expr.UpdatedAttrs(w.update, names) {
		if av, ok := attrs[attr]; ok {
			out[attr] = av
		}
	}
	return out, nil
}

// fillOld decodes the item a write replaced into the caller's Old.
func (e *entity) fillOld(ctx context.Context, sink oldSink, attrs map[string]types.AttributeValue) error {
	if sink.oldType() != e.info.goType || reflect.ValueOf(sink).IsNil() {
		return nil
	}
	item, found := sink.oldParts()
	item.SetZero()
	*found = attrs != nil
	if attrs == nil {
		return nil
	}
	// Decoded into a fresh value, so that a failed decoding leaves Item zero.
	v := reflect.New(e.info.goType).Elem()
	if err := e.decodeWith(ctx, attrs, false, v); err != nil { // migrated in memory: the item is gone or replaced
		return err
	}
	item.Set(v)
	return nil
}

// ReturnValue says what [Entity.Update] returns; see [Returning].
type ReturnValue uint8

const (
	// ReturnAllNew returns the whole item as stored after the update (the default).
	ReturnAllNew ReturnValue = iota
	// ReturnAllOld returns the whole item as it was before the update; the zero T
	// when an [Upsert] created it.
	ReturnAllOld
	// ReturnUpdatedNew returns only the attributes the update wrote (set,
	// removed, added to or deleted from), whole, as stored after it, in an
	// otherwise zero T (the library's own, such as the version and timestamps,
	// included). A change at a document path returns its whole attribute. The
	// library asks DynamoDB for the whole item (ALL_NEW) and takes these
	// attributes from it, so that the value is the same when the answer is lost
	// and the item read back.
	ReturnUpdatedNew
	// ReturnUpdatedOld returns only the attributes the update wrote, whole, as
	// they were before it, in an otherwise zero T (asked as ALL_OLD).
	ReturnUpdatedOld
	// ReturnNothing returns the zero T: the smallest response.
	ReturnNothing
)

var returnValues = [...]types.ReturnValue{
	ReturnAllNew:     types.ReturnValueAllNew,
	ReturnAllOld:     types.ReturnValueAllOld,
	ReturnUpdatedNew: types.ReturnValueUpdatedNew,
	ReturnUpdatedOld: types.ReturnValueUpdatedOld,
	ReturnNothing:    types.ReturnValueNone,
}

// Returning says what [Entity.Update] returns (ReturnValues): the item after the
// update (ReturnAllNew, the default), before it (ReturnAllOld), only the
// attributes it wrote after or before it (ReturnUpdatedNew, ReturnUpdatedOld), or
// nothing (ReturnNothing). It costs no read capacity. Asking for what was there
// before the update makes a lost response [ErrAmbiguous] (see the notes on return
// values). [Entity.TxUpdate] refuses it: transactions return nothing.
func Returning(r ReturnValue) UpdateOption {
	return updateFunc(func(o *updateOptions) error {
		if int(r) >= len(returnValues) {
			return fmt.Errorf("Returning(%d): unknown ReturnValue: %w", r, ErrInvalidInput)
		}
		o.ret = returnValues[r]
		return nil
	})
}

// updateResult decodes what an Update returned, as its ReturnValues asked.
func (e *entity) updateResult(ctx context.Context, w *writeRequest, attrs map[string]types.AttributeValue, rv reflect.Value) error {
	switch w.ret {
	case "", types.ReturnValueAllNew:
		return e.decodeWith(ctx, attrs, false, rv) // the item just written is migrated on its next read
	case types.ReturnValueAllOld:
		if attrs == nil {
			return nil
		}
		return e.decodeWith(ctx, attrs, false, rv)
	case types.ReturnValueNone:
		return nil
	}
	// UPDATED_*: a part of the item, decoded as it is (never migrated).
	err := e.info.plan.DecodeIgnoring(attrs, rv, e.info.ignored)
	if err != nil {
		return errorf("decode %s: %w", e.info.name, err)
	}
	return nil
}
