package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/uniqueguard"
)

// Fenced writes. A context carrying a [Fence] ([WithFence]) makes every write
// of the library made with it depend on a condition on another item, checked
// by DynamoDB in the same request: the write is sent as one TransactWriteItems
// of its own action (and its unique-value guards) and a ConditionCheck of the
// fence's item, under a ClientRequestToken; a transaction of the caller's gets
// the ConditionCheck as one more action. So a write whose fence no longer
// holds is applied by nobody, and fails with a [*FenceError]. The fence is a
// plain condition expression sent as it is: it works through any client (a
// DAX client, a wrapper), with no middleware.
//
// The rest is the transaction of unique values' (unique_exec.go, and
// uniqueguard.Send): a lost answer is sent again under the same token, which
// DynamoDB applies at most once; a cancellation is judged action by action, the
// fence's first.

// Fence is a condition on one item, of any table the table's client can write
// to in one transaction (the same account and Region), that the writes made
// with a context carrying it ([WithFence]) depend on. Package stream makes one
// for the lease of the shard a handler's record is of ([stream.FenceWrites]).
type Fence struct {
	// Table is the name of the table that holds the item.
	Table string
	// Key is the item's primary key.
	Key map[string]types.AttributeValue
	// Condition is a condition expression on the item, as DynamoDB takes it
	// (ConditionCheck), with its Names and Values.
	Condition string
	Names     map[string]string
	Values    map[string]types.AttributeValue
	// What names the fence in errors: "lease of shard X (owner W, epoch 3)".
	What string
	// Err, when set, is also matched by the error of a write the fence refused
	// (errors.Is), besides [ErrFenced]: stream.ErrLeaseLost for a lease's fence.
	Err error
}

// ErrFenced means a write was refused because the condition of its context's
// [Fence] did not hold: nothing was applied. The error is a [*FenceError].
var ErrFenced = errors.New("singletable: fence does not hold")

// FenceError reports a write (or a transaction) that its context's [Fence]
// refused: nothing was applied. It matches [ErrFenced] and the fence's Err.
type FenceError struct {
	What string // the fence's What
	Err  error  // the AWS error (TransactionCanceledException)
	err  error  // the fence's Err
}

// Error says which fence refused the write, and that nothing was applied.
func (e *FenceError) Error() string {
	what := e.What
	if what == "" {
		what = "its fence"
	}
	msg := "singletable: refused: " + what + " does not hold; nothing was applied"
	if e.err != nil {
		msg += ": " + e.err.Error()
	}
	return msg
}

// Unwrap returns the AWS error.
func (e *FenceError) Unwrap() error { return e.Err }

// Is matches ErrFenced and the fence's Err.
func (e *FenceError) Is(target error) bool {
	return target == ErrFenced || (e.err != nil && target == e.err)
}

type fenceKey struct{}

// WithFence returns a context whose writes depend on f: every [Entity.Put],
// [Entity.Create], [Entity.Update], [Entity.Delete], [Entity.Mutate] and
// [Table.Transact] or [Table.TransactWith] made with it (or a context derived
// from it) is sent as a transaction with a ConditionCheck of f, and fails with
// a [*FenceError] (nothing applied) when f's condition does not hold. A
// fenced single write costs a transaction: 2 WCU per KB of the item, plus 2
// WCU for the check, where the write alone costs 1 WCU per KB. It returns
// nothing the write returns from the item as it was ([ReturnOld], Returning
// ALL_OLD or UPDATED_OLD are refused: a transaction returns no item); an
// Update's new item is read back, consistently. The batch writes
// (BatchPut, BatchDelete, BatchWrite), which take no condition, are refused
// with it ([ErrInvalidInput]); so is a fence with no Table, Key or Condition,
// when a write is made. A migrated item's write-back on a read is not fenced.
// [WithoutFence] lifts it.
func WithFence(ctx context.Context, f Fence) context.Context {
	f.Key, f.Names, f.Values = maps.Clone(f.Key), maps.Clone(f.Names), maps.Clone(f.Values)
	return context.WithValue(ctx, fenceKey{}, &f)
}

// WithoutFence returns a context whose writes depend on no fence, whatever
// ctx carries.
func WithoutFence(ctx context.Context) context.Context {
	return context.WithValue(ctx, fenceKey{}, (*Fence)(nil))
}

// FenceOf returns the fence of ctx's writes, if it has one.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, _ := ctx.Value(fenceKey{}).(*Fence)
	if f == nil {
		return Fence{}, false
	}
	return *f, true
}

// fenceOf returns ctx's fence (nil when none), or the error that says why it
// cannot be checked, naming the call (op).
func fenceOf(ctx context.Context, op string) (*Fence, error) {
	f, _ := ctx.Value(fenceKey{}).(*Fence)
	if f == nil {
		return nil, nil
	}
	switch {
	case f.Table == "":
		return nil, errorf("%s: the context's fence (%s) names no table: %w", op, f.What, ErrInvalidInput)
	case len(f.Key) == 0:
		return nil, errorf("%s: the context's fence (%s) has no key: %w", op, f.What, ErrInvalidInput)
	case f.Condition == "":
		return nil, errorf("%s: the context's fence (%s) has no condition: %w", op, f.What, ErrInvalidInput)
	}
	return f, nil
}

// action is the fence as a transaction's action.
func (f *Fence) action() types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(f.Table),
		Key:                       f.Key,
		ConditionExpression:       aws.String(f.Condition),
		ExpressionAttributeNames:  f.Names,
		ExpressionAttributeValues: f.Values,
	}}
}

// refused reports whether the fence, the action at i of a cancelled
// transaction, failed its condition. A nil fence never does.
func (f *Fence) refused(tce *types.TransactionCanceledException, i int) bool {
	r := tce.CancellationReasons
	return f != nil && i >= 0 && i < len(r) && aws.ToString(r[i].Code) == "ConditionalCheckFailed"
}

func (f *Fence) error(err error) *FenceError { return &FenceError{What: f.What, Err: err, err: f.Err} }

// fenceTx appends ctx's fence to a transaction's actions (Transact), refusing
// one it would take past DynamoDB's 100 actions. The fence returned is nil
// when ctx has none.
func (t *Table) fenceTx(ctx context.Context, actions []types.TransactWriteItem) ([]types.TransactWriteItem, *Fence, error) {
	f, err := fenceOf(ctx, "Transact")
	if f == nil || err != nil {
		return actions, nil, err
	}
	if len(actions) >= maxTxActions {
		return nil, nil, errorf("Transact: %d actions and the context's fence (%s) come to %d, over the %d of a transaction: %w", len(actions), f.What, len(actions)+1, maxTxActions, ErrInvalidInput)
	}
	return append(actions, f.action()), f, nil
}

// refuseFenced refuses a batch write (op) made with a fenced context: it takes
// no condition.
func refuseFenced(ctx context.Context, op string) error {
	if f, _ := ctx.Value(fenceKey{}).(*Fence); f != nil {
		return errorf("%s: the context carries a fence (%s), and a batch write takes no condition: write with Put, Delete or Transact, or lift the fence with WithoutFence: %w", op, f.What, ErrInvalidInput)
	}
	return nil
}

// executeFenced runs a planned single write under ctx's fence f: one
// TransactWriteItems of the write (with its unique-value guards, if any) and
// the fence's ConditionCheck, last, run by uniqueguard.Send.
func (t *Table) executeFenced(ctx context.Context, w *writeRequest, f *Fence) (map[string]types.AttributeValue, error) {
	if w.answerOnly {
		return nil, t.itemErr(w, fmt.Errorf("a fenced write (%s) is a transaction, which returns no item as it was: ReturnOld and Returning(ALL_OLD or UPDATED_OLD) do not apply: %w", f.What, ErrInvalidInput))
	}
	w.ensureKey(t)
	r := &fencedRun{t: t, w: w, f: f}
	if w.uniq != nil {
		r.u = &uniqueRun{t: t, w: w, base: w.b.Clone(), baseCond: w.cond, notMine: map[string]bool{}}
	}
	b := t.opts.Backoff.withDefaults()
	return uniqueguard.Send(ctx, r, uniqueguard.Policy{MaxAttempts: b.MaxAttempts, Wait: b.Wait, Lost: ambiguous, Conflicts: onlyConflicts, GaveUp: r.gaveUp})
}

// fencedRun is the uniqueguard.Attempts of a fenced write: a uniqueRun's, with
// the fence's check last, or for a write of no unique value, the write alone
// and the check.
type fencedRun struct {
	t       *Table
	w       *writeRequest
	f       *Fence
	u       *uniqueRun // the write of unique values; nil when it has none
	actions []types.TransactWriteItem
	token   string
	// maybe is set once an attempt's answer was lost: it may have landed while
	// the fence held, so a later refusal by the fence proves nothing.
	maybe bool
}

func (r *fencedRun) Prepare(ctx context.Context) error {
	if r.u != nil {
		if err := r.u.Prepare(ctx); err != nil {
			return err
		}
		if len(r.u.actions) >= maxTxActions {
			return r.t.itemErr(r.w, fmt.Errorf("the write, its unique-value guards and the fence (%s) come to %d actions, over the %d of a transaction: %w", r.f.What, len(r.u.actions)+1, maxTxActions, ErrInvalidInput))
		}
		r.u.actions = append(r.u.actions, r.f.action())
		return nil
	}
	r.actions = append(r.actions[:0], r.w.transactItem(r.t.name), r.f.action())
	return r.NewToken()
}

// Send sends the actions under the token. The SDK resends no failure that may
// have applied them (condwrite.DefiniteRetries): Send's loop does, knowing it.
func (r *fencedRun) Send(ctx context.Context) error {
	actions, token := r.actions, r.token
	if r.u != nil {
		actions, token = r.u.actions, r.u.token
	}
	_, err := r.t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions, ClientRequestToken: aws.String(token)}, condwrite.DefiniteRetries)
	if err != nil && ambiguous(err) {
		r.maybe = true
	}
	return err
}

func (r *fencedRun) NewToken() (err error) {
	if r.u != nil {
		return r.u.NewToken()
	}
	r.token, err = newToken()
	return err
}

// Landed judges a write whose answer was lost from the item read back: its
// receipt. A Delete of no unique value is not proven by the item's absence, as
// an unfenced one is: another holder of the fence may have deleted it.
func (r *fencedRun) Landed(ctx context.Context) bool {
	if r.u != nil {
		return r.t.uniqueLanded(ctx, r.w)
	}
	if !r.w.receipted {
		return false
	}
	cur, err := r.t.readBack(ctx, r.w.key)
	return err == nil && r.w.holdsReceipt(cur)
}

// Done reads back, consistently, what the write returns of the item stored.
func (r *fencedRun) Done(ctx context.Context) (map[string]types.AttributeValue, error) {
	return r.t.uniqueDone(ctx, r.w)
}

// Failed: a fence that failed refuses the write, whatever else failed; then the
// write's own condition (or its guards') explains it.
func (r *fencedRun) Failed(ctx context.Context, tce *types.TransactionCanceledException, err error) (bool, error) {
	t, w := r.t, r.w
	n := len(r.actions)
	if r.u != nil {
		n = len(r.u.actions)
	}
	if r.f.refused(tce, n-1) {
		if r.maybe { // an earlier attempt may have landed while the fence held
			return false, t.unproven(w, err, "an earlier attempt's answer was lost, and the fence no longer holds: the write may have landed before it moved")
		}
		return false, t.itemErr(w, r.f.error(err))
	}
	if r.u != nil {
		return r.u.Failed(ctx, tce, err)
	}
	if reasons := tce.CancellationReasons; len(reasons) > 0 && aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
		cur, known := t.failedTxItem(ctx, w, reasons[0].Item, nil)
		if known && w.adapt(cur) { // update_ops.go: a list stored as NULL; planned again
			return true, nil
		}
		return false, t.explain(w, cur, known, err)
	}
	return false, t.writeFailed(w, txHint([]*writeRequest{w}, err))
}

// gaveUp is the error of a fenced write given up after n attempts, each
// cancelled (uniqueguard.Policy.GaveUp): a write of unique values says it as
// any such write does; another, as its own.
func (r *fencedRun) gaveUp(n int, conflicts bool, err error) error {
	if r.u != nil {
		return r.u.gaveUp(n, conflicts, err)
	}
	why := "other writers' transactions on the item or the fence's item conflicted with each (TransactionConflict)"
	if !conflicts {
		why = "each found the item changed from what the write was planned against"
	}
	return r.t.itemErr(r.w, fmt.Errorf("nothing was written: gave up after %d attempts: %s: %w: %w: %w", n, why, ErrConflict, ErrCondition, err))
}

func (r *fencedRun) Refused(err error) error {
	return r.t.writeFailed(r.w, txHint([]*writeRequest{r.w}, err))
}

func (r *fencedRun) NotApplied(err error) error { return r.t.itemErr(r.w, err) }

func (r *fencedRun) Unproven(err error, why string) error { return r.t.unproven(r.w, err, why) }
