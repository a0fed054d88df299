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

// The option kinds of the other calls. Each call takes the options of its kind;
// an option that does not apply to a call does not compile there (it lacks the
// kind's method) or, where one option type serves several kinds, is refused
// before anything is sent. The package doc has the table of which option applies
// to which call.

// UnknownOption is what [OnUnknown] returns: an option of collection queries, of
// table scans ([Table.Scan]) and of [Table.Decode] and [Table.DecodeRecord]
// (not of entity queries or scans, which skip every item of another type).
// Package stream's consumer takes its own (stream.OnUnknown), by the same
// rules.
type UnknownOption interface {
	CollectionOption
	TableScanOption
	DecodeOption
}

// RetryOption configures the retry loops of [WaitFor], the Entity wait helpers and
// [Entity.Mutate]. [RetryBackoff] makes one.
type RetryOption interface {
	applyRetry(*Backoff)
}

// DecodeOption configures [Table.Decode] and [Table.DecodeRecord]:
// [OnUnknown].
type DecodeOption interface {
	applyDecode(*decodeOptions) error
}

// IndexOption configures an index declared with [WithIndex] or [WithLocalIndex]:
// [ProjectAll], [ProjectKeysOnly] or [ProjectInclude].
type IndexOption interface {
	applyIndex(*Index) error
}

// RegisterOption configures [Register].
type RegisterOption interface {
	apply(t *Table, info *entityInfo) error
}

// QueryOption configures a query of any kind. Query options come in three kinds,
// one per kind of call, so that an option that does not apply to a call does not
// compile there:
//
//   - QueryOption: every query; [Entity.Query] and [Entity.All] take only these.
//     [On], [Limit], [Descending], [After], [Filter], [Partition],
//     [ReturnCapacity], [Consistent] and the sort key conditions ([SKEqual]...,
//     [SK]).
//   - [ShardQueryOption]: fan-out queries ([Entity.QueryShards],
//     [Entity.AllShards]): every QueryOption, and [Days], [Parallel] and
//     [AllowPartial].
//   - [CollectionOption]: collection queries ([Table.Query], [Table.All],
//     [Collection.Query], [Collection.Load]): every QueryOption, and [OnUnknown].
//
// The one QueryOption that does not apply to every call is [Partition]: a fan-out
// query renders each partition itself, so it refuses Partition with
// [ErrInvalidInput] before sending anything. Options are plain values, safe to
// share between calls and goroutines.
type QueryOption interface {
	ShardQueryOption
	CollectionOption
	applyQuery(*queryOptions) error
}

// ShardQueryOption configures [Entity.QueryShards] and [Entity.AllShards]: any
// [QueryOption], or [Days], [Parallel] or [AllowPartial].
type ShardQueryOption interface {
	applyShardQuery(*queryOptions) error
}

// CollectionOption configures [Table.Query], [Table.All], [Collection.Query] and
// [Collection.Load]: any [QueryOption], or [OnUnknown].
type CollectionOption interface {
	applyCollection(*queryOptions) error
}

// PageOption is an option of every read that pages: every kind of query, and
// scans ([ScanOption], [TableScanOption]). [On], [Limit], [After], [Filter] and
// [ReturnCapacity] are PageOptions.
type PageOption interface {
	QueryOption
	ScanOption
}

// RailroadOption configures [NewRailroad]. [RailroadOptions] is one: its
// non-zero fields are applied.
type RailroadOption interface {
	applyRailroad(*RailroadOptions)
}

// ScanOption configures a scan of any kind: [Entity.Scan], [Entity.ScanAll],
// [Entity.ScanCount], their [Projection] forms, and (as every ScanOption is a
// [TableScanOption]) the table's. They are [On] (scan an index), [Limit],
// [After], [Filter], [ReturnCapacity], [Consistent], [Segments] and [Segment].
// Query-only options (sort key conditions, [Descending], [Partition]) are not
// ScanOptions and do not compile in a scan.
type ScanOption interface {
	TableScanOption
	applyScan(*queryOptions) error
}

// TableScanOption configures [Table.Scan], [Table.ScanAll] and
// [Table.ScanCount]: any [ScanOption], or [OnUnknown].
type TableScanOption interface {
	applyTableScan(*queryOptions) error
}

// SegmentOption is what [Segments] and [Segment] return: an option of sweeps
// ([Entity.Sweep]) and of scans.
type SegmentOption interface {
	SweepOption
	ScanOption
}

// SweepOption configures [Entity.Sweep].
type SweepOption interface {
	applySweep(*sweepOptions) error
}

// TableOption configures [NewTable]. Every one is declared in table.go and sets
// the [TableOptions] field it names: [WithKeys], [WithKeyType], [WithIndex],
// [WithLocalIndex], [WithTypeAttribute], [WithDelimiter], [WithCursorSecret],
// [WithBackoff], [WithObserver], [WithLogger], [WithTracer], [WithReceipts],
// [WithReceiptAttribute], [WithIncarnationAttribute], [WithSchemaAttribute],
// [WithRandom], [WithClock], [WithTTLAttribute], [WithWireDecoding],
// [WithClientTraits], [WithIDSource] and [WithNativeIndex]. A
// [Table]'s options are read with [Table.Options] and never change after
// NewTable.
type TableOption interface {
	applyTable(*TableOptions) error
}

// UniqueSweepOption configures [Entity.SweepUnique]: [RepairUnique].
type UniqueSweepOption interface{ applyUniqueSweep(*uniqueSweepOptions) }

// UpdateOption is a change or an option for [Entity.Update]: [Set], [Remove], [Add],
// [Append], [Prepend], [DeleteFromSet], [SetIfNotExists], [Upsert], [Returning],
// or any [WriteOption] such as [If] ([ReturnOld] is refused: see [Returning]).
type UpdateOption interface {
	applyUpdate(*updateOptions) error
}
