package stream

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/reserved"
)

// Fencing the handlers' writes.
//
// A lease is the holder's from a take (or a hand-over) until another worker
// takes it; its Epoch moves on at each change of hands and stays put while one
// owner holds it, so owner and epoch name one term of ownership. A handler's
// context carries them ([FencingTokenFrom]); with [FenceWrites] it also carries
// a [singletable.Fence] on the lease item (owner and epoch as the handler's
// record was read under), so that every write the handler makes through the
// library is one transaction with a ConditionCheck of the lease: a process that
// lost the lease (frozen, partitioned, slow) can no longer write, whatever its
// timers say. A fenced write refused fails with an error matching
// [ErrLeaseLost]; a handler that returns such an error stops the reading of the
// shard, as a lost lease does, and is not retried.

// FencingToken names the term of ownership of the lease a record was read
// under: the lease's stream (Group) and shard, its owner and its [Lease.Epoch].
// Tokens of one shard are ordered by Epoch: a sink outside the library can keep
// the highest epoch it has seen per shard and refuse writes of a lower one.
type FencingToken struct {
	Group, Shard, Owner string
	Epoch               int64
}

type tokenKey struct{}

// FencingTokenFrom returns the fencing token of the lease a handler's record
// was read under, from the handler's context; ok is false for a context that
// is not a handler's.
func FencingTokenFrom(ctx context.Context) (tok FencingToken, ok bool) {
	tok, ok = ctx.Value(tokenKey{}).(FencingToken)
	return tok, ok
}

// Fencer is a [LeaseStore] that can fence writes by a lease: [TableStore].
// [FenceWrites] needs one.
type Fencer interface {
	// Fence returns the fence of l as l.Owner holds it: a condition that the
	// lease is still l.Owner's at l.Epoch, whose failure matches
	// [ErrLeaseLost].
	Fence(l Lease) (singletable.Fence, error)
}

var _ Fencer = (*TableStore)(nil)

// Fence returns the fence of l: a ConditionCheck of l's lease item that it is
// a lease, unfinished, owned by l.Owner at l.Epoch. It sends nothing.
func (s *TableStore) Fence(l Lease) (singletable.Fence, error) {
	if err := checkLeaseID(l.Group, l.Shard); err != nil {
		return singletable.Fence{}, err
	}
	if l.Owner == "" {
		return singletable.Fence{}, fmt.Errorf("singletable: stream: fence of lease %s of %s: no owner: %w", l.Shard, l.Group, singletable.ErrInvalidInput)
	}
	var b expr.Builder
	epoch := b.Name(attrEpoch) + " = " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(l.Epoch, 10)})
	if l.Epoch == 0 {
		epoch = "(attribute_not_exists(" + b.Name(attrEpoch) + ") OR " + epoch + ")" // taken before epochs were kept
	}
	cond := b.Name(s.typeAttr) + " = " + b.S(reserved.LeaseType) +
		" AND " + b.Name(attrOwner) + " = " + b.S(l.Owner) +
		" AND " + epoch +
		" AND " + b.Name(attrFinished) + " = " + b.Value(&types.AttributeValueMemberBOOL{Value: false})
	return singletable.Fence{
		Table:     s.table,
		Key:       s.leaseKey(l.Group, l.Shard),
		Condition: cond,
		Names:     b.Names(),
		Values:    b.Values(),
		What:      fmt.Sprintf("the lease of shard %s (owner %q, epoch %d)", l.Shard, l.Owner, l.Epoch),
		Err:       ErrLeaseLost,
	}, nil
}

// taskContext is the context of the handlers of the records of lease x, under
// ctx: it carries x's fencing token and, with FenceWrites, its fence.
func (c *consumer) taskContext(ctx context.Context, x Lease) (context.Context, error) {
	ctx = context.WithValue(ctx, tokenKey{}, FencingToken{Group: x.Group, Shard: x.Shard, Owner: x.Owner, Epoch: x.Epoch})
	if !c.o.fence {
		return ctx, nil
	}
	f, err := c.o.leases.(Fencer).Fence(x)
	if err != nil {
		return nil, fmt.Errorf("singletable: stream: fence of shard %s: %w", x.Shard, err)
	}
	return singletable.WithFence(ctx, f), nil
}
