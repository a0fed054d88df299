package singletable

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// collectWriteOptions applies opts.
func collectWriteOptions(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, opt := range opts {
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
}

// mutateBase is what a Mutate read, for writing only what its function changed:
// the item as stored (not migrated) and its fields as T encodes them.
type mutateBase struct {
	read, before map[string]types.AttributeValue
}

// keepUnchanged replaces in item (the encoding of the value to write) each field
// whose encoding fn left alone by its stored bytes, and merges each changed map
// into the stored one (mergeChange, migrate.go).
func (b *mutateBase) keepUnchanged(info *entityInfo, item map[string]types.AttributeValue) {
	if b == nil {
		return
	}
	for _, f := range info.plan.Fields() {
		if info.hooks.ownsStored(f.Name) {
			continue // createdAt and the counter: kept by clauses of their own
		}
		before, after := b.before[f.Name], item[f.Name]
		stored, has := b.read[f.Name]
		switch {
		case avEqual(before, after):
			if has {
				item[f.Name] = stored
			}
		case after != nil && has:
			if m := mergeChange(stored, before, after); m != nil {
				item[f.Name] = m
			}
		}
	}
}

type ifOption struct{ cond expression.ConditionBuilder }

func (o ifOption) applyWrite(w *writeOptions) { w.cond = andCond(w.cond, o.cond) }
func (o ifOption) applyUpdate(u *updateOptions) error {
	u.cond = andCond(u.cond, o.cond)
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
// Several If options are joined with AND.
func If(cond expression.ConditionBuilder) WriteOption { return ifOption{cond} }
