package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/keytmpl"
)

// ConsistencyTimeoutError reports a wait that gave up. It matches
// [ErrConsistencyTimeout] and wraps the last read error, or the context's error
// when the deadline ended it.
type ConsistencyTimeoutError struct {
	Attempts int
	Elapsed  time.Duration
	Err      error // last read error or context error; nil when attempts ran out on unmet results
}

// Error says how many attempts were made over how long, and the last error.
func (e *ConsistencyTimeoutError) Error() string {
	s := "singletable: consistency wait timed out after " + strconv.Itoa(e.Attempts) + " attempts in " + e.Elapsed.Round(time.Millisecond).String()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches ErrConsistencyTimeout.
func (e *ConsistencyTimeoutError) Is(target error) bool { return target == ErrConsistencyTimeout }

// Unwrap returns the last error seen.
func (e *ConsistencyTimeoutError) Unwrap() error { return e.Err }

// WaitStats says what a successful wait took.
type WaitStats struct {
	Attempts int           // reads made, the successful one included
	Elapsed  time.Duration // from the first read to the end of the last, by Backoff.Now
}

type retryBackoff Backoff

func (r retryBackoff) applyRetry(b *Backoff) { *b = Backoff(r) }

// RetryBackoff sets the schedule of a retry loop; its MaxAttempts bounds the
// attempts. The default is the table's Backoff, and [Backoff]'s defaults for [WaitFor].
func RetryBackoff(b Backoff) RetryOption { return retryBackoff(b) }

// WaitFor calls read until until accepts its result, sleeping between attempts by
// the backoff schedule (exponential with full jitter). It returns the accepted
// result and what the wait took. When ctx's deadline passes or the attempts run out
// first, it returns the last result read with a [*ConsistencyTimeoutError]; when ctx
// is cancelled, it returns ctx's error. Either way it stops as soon as ctx ends,
// even in the middle of a sleep.
//
// Read errors are retried like unmet results, except errors matching
// [ErrInvalidInput], [ErrInvalidKey], [ErrInvalidCursor] or [ErrInvalidEntity],
// which no retry can fix and which are returned at once.
func WaitFor[R any](ctx context.Context, read func(context.Context) (R, error), until func(R) bool, opts ...RetryOption) (R, WaitStats, error) {
	var b Backoff
	var last R
	for i, o := range opts {
		if o == nil {
			return last, WaitStats{}, fmt.Errorf("singletable: wait: option %d is nil: %w", i+1, ErrInvalidInput)
		}
		o.applyRetry(&b)
	}
	b = b.withDefaults()
	start := b.Now()
	var lastErr error
	for attempt := 1; ; attempt++ {
		r, err := read(ctx)
		stats := WaitStats{Attempts: attempt, Elapsed: b.Now().Sub(start)}
		switch {
		case err == nil && until(r):
			return r, stats, nil
		case err == nil:
			last, lastErr = r, nil
		case permanentError(err):
			return last, stats, err
		case ctx.Err() != nil:
			return last, stats, waitEnded(ctx, stats, err)
		default:
			lastErr = err
		}
		if attempt >= b.MaxAttempts {
			return last, stats, &ConsistencyTimeoutError{Attempts: attempt, Elapsed: stats.Elapsed, Err: lastErr}
		}
		if err := b.Wait(ctx, attempt); err != nil {
			stats.Elapsed = b.Now().Sub(start)
			return last, stats, waitEnded(ctx, stats, err)
		}
	}
}

// waitEnded turns the end of ctx into the wait's error: a timeout for a deadline,
// the context's own error for a cancellation.
func waitEnded(ctx context.Context, stats WaitStats, err error) error {
	if ctx.Err() == nil { // the wait itself stopped (a Backoff.Sleep's error, Explain)
		return fmt.Errorf("singletable: wait stopped after %d attempts: %w", stats.Attempts, err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ConsistencyTimeoutError{Attempts: stats.Attempts, Elapsed: stats.Elapsed, Err: err}
	}
	return fmt.Errorf("singletable: wait cancelled after %d attempts: %w", stats.Attempts, ctx.Err())
}

func permanentError(err error) bool {
	return errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrInvalidKey) ||
		errors.Is(err, ErrInvalidCursor) || errors.Is(err, ErrInvalidEntity)
}

// indexLookup returns a read of the items of index whose keys v renders (partition, and sort key
// when the index has one) and reports whether the one at v's primary key is there.
func (e *Entity[T]) indexLookup(index string, v T) (func(context.Context) (*T, error), error) {
	if index == "" {
		return nil, fmt.Errorf("singletable: wait %s: no index named: the base table is read consistently, with Get(ctx, k, Consistent()): %w", e.info.name, ErrInvalidInput)
	}
	if _, _, _, err := e.table.queryTemplates(e.info, index); err != nil {
		return nil, fmt.Errorf("singletable: wait %s: %w", e.info.name, err)
	}
	pair := e.info.indexes[index]
	sv := reflect.ValueOf(&v).Elem()
	_, want, err := e.info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	opts := []QueryOption{On(index)}
	if skT := pair[1]; skT != nil {
		sk, complete, err := skT.render(e.info, sv, true)
		if err != nil {
			return nil, err
		}
		if !complete {
			unset := ""
			for _, f := range skT.fields {
				if keytmpl.ValueOfField(f, sv).Kind == keytmpl.KindMissing {
					unset = ": " + fieldLabel(e.info.name, f) + " is unset"
					break
				}
			}
			return nil, fmt.Errorf("singletable: wait %s: the value does not render index %s's sort key %s %q%s: %w", e.info.name, index, skT.attr, skT.tmpl.String(), unset, ErrInvalidKey)
		}
		opts = append(opts, SKEqual(sk))
	}
	pq, err := e.prepareQuery(sv, opts)
	if err != nil {
		return nil, err
	}
	tk := e.table.opts
	plan := pq.plan   // readpath.go: an index's items, never written back
	plan.byKey = true // read for one key: an item there of another type is ErrTypeMismatch
	return func(ctx context.Context) (*T, error) {
		var start map[string]types.AttributeValue
		for {
			in := pq.in
			in.ExclusiveStartKey = start
			out, err := e.table.client.Query(ctx, &in)
			if err != nil {
				return nil, fmt.Errorf("singletable: wait %s on %s: %w", e.info.name, index, err)
			}
			for _, item := range out.Items {
				if got := e.table.keyStrings(item); got[tk.PartitionKey] != want[tk.PartitionKey] || got[tk.SortKey] != want[tk.SortKey] {
					continue
				}
				got, verdict, err := readAs[T](ctx, &plan, item)
				if err != nil {
					return nil, err
				}
				if verdict != itemRead {
					continue
				}
				return &got, nil
			}
			if len(out.LastEvaluatedKey) == 0 {
				return nil, nil
			}
			start = out.LastEvaluatedKey
		}
	}, nil
}

// WaitIndexed waits until index shows v as written: a query of the index keys that v
// renders returns the item at v's primary key with the same stored attributes as v.
// Use it right after a write to read your own write
// through an eventually consistent index. Each attempt is one Query (0.5 RCU per
// 4 KB read). It returns the item as the index shows it.
func (e *Entity[T]) WaitIndexed(ctx context.Context, index string, v T, opts ...RetryOption) (_ T, _ WaitStats, err error) {
	ctx, done := e.begin(ctx, "WaitIndexed")
	defer done(&err)
	var zero T
	lookup, err := e.indexLookup(index, v)
	if err != nil {
		return zero, WaitStats{}, err
	}
	want, err := e.info.plan.Encode(reflect.ValueOf(&v).Elem())
	if err != nil {
		return zero, WaitStats{}, fmt.Errorf("singletable: wait %s: %w: %w", e.info.name, ErrInvalidInput, err)
	}
	got, stats, err := WaitFor(ctx, lookup, func(p *T) bool {
		if p == nil {
			return false
		}
		have, err := e.info.plan.Encode(reflect.ValueOf(p).Elem())
		return err == nil && maps.EqualFunc(want, have, func(a, b types.AttributeValue) bool { return reflect.DeepEqual(a, b) })
	}, e.waitOpts(opts)...)
	if got == nil {
		return zero, stats, e.waitErr(index, err)
	}
	return *got, stats, e.waitErr(index, err)
}

// WaitUnindexed waits until index no longer shows the item at old's primary key
// under the index keys old renders: after a delete, or after an update moved the
// item elsewhere in the index or out of it. old must hold the index key inputs the
// item had. Each attempt is one Query.
func (e *Entity[T]) WaitUnindexed(ctx context.Context, index string, old T, opts ...RetryOption) (_ WaitStats, err error) {
	ctx, done := e.begin(ctx, "WaitUnindexed")
	defer done(&err)
	lookup, err := e.indexLookup(index, old)
	if err != nil {
		return WaitStats{}, err
	}
	_, stats, err := WaitFor(ctx, lookup, func(p *T) bool { return p == nil }, e.waitOpts(opts)...)
	return stats, e.waitErr(index, err)
}

// WaitMoved waits until index shows the item at its new keys, as [Entity.WaitIndexed]
// with updated, and no longer at its old ones, as [Entity.WaitUnindexed] with old.
// Use it after an update that changed index key inputs. When the item leaves the
// index (a sparse index), use WaitUnindexed alone.
func (e *Entity[T]) WaitMoved(ctx context.Context, index string, old, updated T, opts ...RetryOption) (_ WaitStats, err error) {
	ctx, done := e.begin(ctx, "WaitMoved")
	defer done(&err)
	_, s1, err := e.WaitIndexed(ctx, index, updated, opts...)
	if err != nil {
		return s1, err
	}
	s2, err := e.WaitUnindexed(ctx, index, old, opts...)
	return WaitStats{Attempts: s1.Attempts + s2.Attempts, Elapsed: s1.Elapsed + s2.Elapsed}, err
}

func (e *Entity[T]) waitOpts(opts []RetryOption) []RetryOption {
	return append([]RetryOption{RetryBackoff(e.table.opts.Backoff)}, opts...)
}

func (e *Entity[T]) waitErr(index string, err error) error {
	if err == nil {
		return nil
	}
	var te *ConsistencyTimeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("singletable: wait %s on %s: %w", e.info.name, index, err)
	}
	return err
}
