package singletable

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// GetOption configures [Entity.Get] and [Entity.BatchGet].
type GetOption interface{ applyGet(*getOptions) }

type getOptions struct {
	consistent  bool
	skipExpired bool // SkipExpired (ttl.go)
}

// ReadOption is an option for point reads, queries and scans.
type ReadOption interface {
	GetOption
	QueryOption
	ScanOption
}

type consistentOption struct{}

func (consistentOption) applyGet(o *getOptions) { o.consistent = true }
func (consistentOption) applyQuery(o *queryOptions) error {
	o.consistent = true
	return nil
}
func (c consistentOption) applyScan(o *queryOptions) error      { return c.applyQuery(o) }
func (c consistentOption) applyTableScan(o *queryOptions) error { return c.applyQuery(o) }

// Consistent asks for a strongly consistent read (ConsistentRead=true): it sees every
// write acknowledged before it and costs twice the read capacity. Global secondary
// indexes do not support it; a query or scan of one with it fails before sending
// (local secondary indexes do: see [WithLocalIndex]).
func Consistent() ReadOption { return consistentOption{} }

// collectWriteOptions applies opts; an option that cannot apply (nil, a zero
// condition) leaves its error in o.err, which the planner reports before
// anything is sent.
func collectWriteOptions(opts []WriteOption) writeOptions {
	var o writeOptions
	for i, opt := range opts {
		if opt == nil {
			if o.err == nil {
				o.err = fmt.Errorf("option %d is nil: %w", i, ErrInvalidInput)
			}
			continue
		}
		opt.applyWrite(&o)
	}
	return o
}

var ptrTrue, ptrFalse = aws.Bool(true), aws.Bool(false)

// boolPtr returns a shared pointer to b, for request inputs, which nothing modifies.
func boolPtr(b bool) *bool {
	if b {
		return ptrTrue
	}
	return ptrFalse
}

// WriteOption configures [Entity.Put], [Entity.Create], [Entity.Delete] and, since
// every WriteOption is also an [UpdateOption], [Entity.Update]: [If], [Clobber],
// [ReturnOld] (Put and Delete only; the others refuse it).
type WriteOption interface {
	UpdateOption
	applyWrite(*writeOptions)
}

type writeOptions struct {
	cond    expression.ConditionBuilder
	clobber bool
	env     *planEnv // planenv.go; nil: the table's clock and crypto/rand
	old     oldSink  // ReturnOld (returnvalues.go)
	base    *mutateBase
	// shardDrawn: the value's shard was drawn at random by the library (TxPut),
	// not chosen by the caller.
	shardDrawn bool
	err        error // the first option that cannot apply
}

type ifOption struct{ cond expression.ConditionBuilder }

func (o ifOption) applyWrite(w *writeOptions) {
	if err := checkCondition("If", o.cond); err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.cond = andCond(w.cond, o.cond)
}

func (o ifOption) applyUpdate(u *updateOptions) error {
	if err := checkCondition("If", o.cond); err != nil {
		return err
	}
	u.cond = andCond(u.cond, o.cond)
	return nil
}

// checkCondition refuses a zero condition given to an option (If, Filter) or to
// TxCheck: a zero expression.ConditionBuilder would be sent as no condition at
// all, so code that builds one only sometimes would lose it without a word. The
// caller's error names the call.
func checkCondition(what string, cond expression.ConditionBuilder) error {
	if !cond.IsSet() {
		return fmt.Errorf("%s: the condition is a zero expression.ConditionBuilder, which would be sent as no condition at all; build one, or leave the option out: %w", what, ErrInvalidInput)
	}
	return nil
}

func andCond(a, b expression.ConditionBuilder) expression.ConditionBuilder {
	if !a.IsSet() {
		return b
	}
	return a.And(b)
}

// If adds a condition, built with the SDK's expression package, that the item must
// meet for the write to happen. When it fails the error matches [ErrCondition].
// Several If options are joined with AND. A zero expression.ConditionBuilder is
// refused before anything is sent ([ErrInvalidInput]): leave If out for no
// condition.
func If(cond expression.ConditionBuilder) WriteOption { return ifOption{cond} }
