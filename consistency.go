package singletable

import (
	"context"
	"errors"
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
	var cur, last R
	done, stats, err := waitLoop(ctx, func(ctx context.Context) (bool, error) {
		r, err := read(ctx)
		if err != nil {
			return false, err
		}
		cur = r
		return until(r), nil
	}, func() { last = cur }, opts)
	if done {
		return cur, stats, err
	}
	return last, stats, err
}

// waitLoop is WaitFor's loop: attempt reads once and says whether the wait is
// over; keep is called after an attempt that read a value that did not end it.
// done reports whether an attempt ended it.
func waitLoop(ctx context.Context, attempt func(context.Context) (bool, error), keep func(), opts []RetryOption) (done bool, _ WaitStats, _ error) {
	if ctx == nil {
		return false, WaitStats{}, errorf("WaitFor: the context is nil; pass context.Background(), context.TODO() or the request's context: %w", ErrInvalidInput)
	}
	var b Backoff
	for i, o := range opts {
		if o == nil {
			return false, WaitStats{}, errorf("wait: option %d is nil: %w", i+1, ErrInvalidInput)
		}
		o.applyRetry(&b)
	}
	b = b.withDefaults()
	start := b.Now()
	var lastErr error
	for n := 1; ; n++ {
		ok, err := attempt(ctx)
		stats := WaitStats{Attempts: n, Elapsed: b.Now().Sub(start)}
		switch {
		case err == nil && ok:
			return true, stats, nil
		case err == nil:
			keep()
			lastErr = nil
		case permanentError(err):
			return false, stats, err
		case ctx.Err() != nil:
			return false, stats, waitEnded(ctx, stats, err)
		default:
			lastErr = err
		}
		if n >= b.MaxAttempts {
			return false, stats, &ConsistencyTimeoutError{Attempts: n, Elapsed: stats.Elapsed, Err: lastErr}
		}
		if err := b.Wait(ctx, n); err != nil {
			stats.Elapsed = b.Now().Sub(start)
			return false, stats, waitEnded(ctx, stats, err)
		}
	}
}

// waitEnded turns the end of ctx into the wait's error: a timeout for a deadline,
// the context's own error for a cancellation.
func waitEnded(ctx context.Context, stats WaitStats, err error) error {
	if ctx.Err() == nil { // the wait itself stopped (a Backoff.Sleep's error, Explain)
		return errorf("wait stopped after %d attempts: %w", stats.Attempts, err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ConsistencyTimeoutError{Attempts: stats.Attempts, Elapsed: stats.Elapsed, Err: err}
	}
	return errorf("wait cancelled after %d attempts: %w", stats.Attempts, ctx.Err())
}

func permanentError(err error) bool {
	return errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrInvalidKey) ||
		errors.Is(err, ErrInvalidCursor) || errors.Is(err, ErrInvalidEntity)
}

// indexLookup returns a read of the items of index whose keys v renders (partition, and sort key
// when the index has one) and reports whether the one at v's primary key is there.
func (e *entity) indexLookup(index string, sv reflect.Value) (func(context.Context) (reflect.Value, error), error) {
	if index == "" {
		return nil, errorf("wait %s: no index named: the base table is read consistently, with Get(ctx, k, Consistent()): %w", e.info.name, ErrInvalidInput)
	}
	if _, _, _, err := e.table.queryTemplates(e.info, index); err != nil {
		return nil, errorf("wait %s: %w", e.info.name, err)
	}
	pair := e.info.indexes[index]
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
			return nil, errorf("wait %s: the value does not render index %s's sort key %s %q%s: %w", e.info.name, index, skT.attr, skT.tmpl.String(), unset, ErrInvalidKey)
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
	return func(ctx context.Context) (reflect.Value, error) {
		var start map[string]types.AttributeValue
		for {
			in := pq.in
			in.ExclusiveStartKey = start
			out, err := e.table.client.Query(ctx, &in)
			if err != nil {
				return reflect.Value{}, errorf("wait %s on %s: %w", e.info.name, index, err)
			}
			for _, item := range out.Items {
				if got := e.table.keyStrings(item); got[tk.PartitionKey] != want[tk.PartitionKey] || got[tk.SortKey] != want[tk.SortKey] {
					continue
				}
				got := reflect.New(e.info.goType).Elem()
				verdict, err := plan.readItem(ctx, item, got)
				if err != nil {
					return reflect.Value{}, err
				}
				if verdict != itemRead {
					continue
				}
				return got, nil
			}
			if len(out.LastEvaluatedKey) == 0 {
				return reflect.Value{}, nil
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
//
//go:noinline
func (e *Entity[T]) WaitIndexed(ctx context.Context, index string, v T, opts ...RetryOption) (_ T, _ WaitStats, err error) {
	var got T
	stats, err := e.core().waitIndexed(ctx, index, elem(&v), elem(&got), opts)
	return got, stats, err
}

// waitIndexed is WaitIndexed: the item the index holds is set in out (left
// zero when the wait fails before any was read).
func (e *entity) waitIndexed(ctx context.Context, index string, sv, out reflect.Value, opts []RetryOption) (_ WaitStats, err error) {
	if err := e.refused("WaitIndexed"); err != nil {
		return WaitStats{}, err
	}
	ctx, done := e.begin(ctx, "WaitIndexed")
	defer done(&err)
	lookup, err := e.indexLookup(index, sv)
	if err != nil {
		return WaitStats{}, err
	}
	want, err := e.info.plan.Encode(sv)
	if err != nil {
		return WaitStats{}, errorf("wait %s: %w: %w", e.info.name, ErrInvalidInput, err)
	}
	var cur reflect.Value
	ended, stats, err := waitLoop(ctx, func(ctx context.Context) (bool, error) {
		got, err := lookup(ctx)
		if err != nil {
			return false, err
		}
		cur = got
		if !got.IsValid() {
			return false, nil
		}
		have, err := e.info.plan.Encode(got)
		return err == nil && maps.EqualFunc(want, have, func(a, b types.AttributeValue) bool { return reflect.DeepEqual(a, b) }), nil
	}, func() {
		if cur.IsValid() {
			out.Set(cur)
		} else {
			out.SetZero()
		}
	}, e.waitOpts(opts))
	if ended {
		out.Set(cur)
	}
	return stats, e.waitErr(index, err)
}

// WaitUnindexed waits until index no longer shows the item at old's primary key
// under the index keys old renders: after a delete, or after an update moved the
// item elsewhere in the index or out of it. old must hold the index key inputs the
// item had. Each attempt is one Query.
//
//go:noinline
func (e *Entity[T]) WaitUnindexed(ctx context.Context, index string, old T, opts ...RetryOption) (_ WaitStats, err error) {
	return e.core().waitUnindexed(ctx, index, elem(&old), opts)
}

func (e *entity) waitUnindexed(ctx context.Context, index string, sv reflect.Value, opts []RetryOption) (_ WaitStats, err error) {
	if err := e.refused("WaitUnindexed"); err != nil {
		return WaitStats{}, err
	}
	ctx, done := e.begin(ctx, "WaitUnindexed")
	defer done(&err)
	lookup, err := e.indexLookup(index, sv)
	if err != nil {
		return WaitStats{}, err
	}
	_, stats, err := waitLoop(ctx, func(ctx context.Context) (bool, error) {
		got, err := lookup(ctx)
		return err == nil && !got.IsValid(), err
	}, func() {}, e.waitOpts(opts))
	return stats, e.waitErr(index, err)
}

// WaitMoved waits until index shows the item at its new keys, as [Entity.WaitIndexed]
// with updated, and no longer at its old ones, as [Entity.WaitUnindexed] with old.
// Use it after an update that changed index key inputs. When the item leaves the
// index (a sparse index), use WaitUnindexed alone.
//
//go:noinline
func (e *Entity[T]) WaitMoved(ctx context.Context, index string, old, updated T, opts ...RetryOption) (_ WaitStats, err error) {
	return e.core().waitMoved(ctx, index, elem(&old), elem(&updated), opts)
}

func (e *entity) waitMoved(ctx context.Context, index string, old, updated reflect.Value, opts []RetryOption) (_ WaitStats, err error) {
	if err := e.refused("WaitMoved"); err != nil {
		return WaitStats{}, err
	}
	ctx, done := e.begin(ctx, "WaitMoved")
	defer done(&err)
	s1, err := e.waitIndexed(ctx, index, updated, reflect.New(e.info.goType).Elem(), opts)
	if err != nil {
		return s1, err
	}
	s2, err := e.waitUnindexed(ctx, index, old, opts)
	return WaitStats{Attempts: s1.Attempts + s2.Attempts, Elapsed: s1.Elapsed + s2.Elapsed}, err
}

func (e *entity) waitOpts(opts []RetryOption) []RetryOption {
	return append([]RetryOption{RetryBackoff(e.table.opts.Backoff)}, opts...)
}

func (e *entity) waitErr(index string, err error) error {
	if err == nil {
		return nil
	}
	var te *ConsistencyTimeoutError
	if errors.As(err, &te) {
		return errorf("wait %s on %s: %w", e.info.name, index, err)
	}
	return err
}
