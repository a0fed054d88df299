package singletable

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// Reliability: cancellation. The index of the reliability tests, and their
// shared harness, are in reliability_test.go.

// TestCancelReturnsWithin50ms cancels operations while they wait in each of the
// library's and the SDK's waits, all made ten seconds long: a request held in
// flight, the SDK's retry backoff, the batch backoff, the versioned-write
// resend, the transaction-conflict retry, an index wait and a fan-out query.
// Each returns within 50 ms of the cancel with an error matching
// context.Canceled.
func TestCancelReturnsWithin50ms(t *testing.T) {
	const long = 10 * time.Second
	tbl, inj, _ := relTable(t, func(so *retry.StandardOptions) {
		so.MaxAttempts = 100
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return long, nil })
		so.MaxBackoff = long
	}, WithBackoff(Backoff{Base: long, Cap: long, MaxAttempts: 100, Rand: func() float64 { return 0.999 }}))
	items := MustRegister[relItem](tbl)
	counters := MustRegister[vCounter](tbl)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	cur, err := counters.Put(ctx, vCounter{ID: "c", Name: "n"})
	require.NoError(t, err)

	cases := []struct {
		name string
		rule *fault.Rule
		lag  bool
		op   string // the operation whose first request starts the wait
		run  func(ctx context.Context) error
	}{
		{"request in flight", &fault.Rule{Ops: []string{"GetItem"}, Fault: fault.Delay(time.Minute)}, false, "GetItem",
			func(ctx context.Context) error { _, err := items.Get(ctx, relItem{Worker: 1, Seq: 1}); return err }},
		{"SDK retry backoff after a throttle", &fault.Rule{Ops: []string{"PutItem"}, Fault: fault.Throttle()}, false, "PutItem",
			func(ctx context.Context) error { _, err := items.Put(ctx, relItem{Worker: 1, Seq: 1}); return err }},
		{"batch backoff after unprocessed items", &fault.Rule{Ops: []string{"BatchWriteItem"}, Fault: fault.Unprocessed(0.5)}, false, "BatchWriteItem",
			func(ctx context.Context) error {
				_, err := items.BatchPut(ctx, []relItem{{Worker: 1, Seq: 1}, {Worker: 1, Seq: 2}, {Worker: 1, Seq: 3}, {Worker: 1, Seq: 4}})
				return err
			}},
		{"versioned write resend after a 500", &fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.ServerError()}, false, "UpdateItem",
			func(ctx context.Context) error {
				// Mutate's write is pinned to the item it read: after a 500 that left
				// the item as read, it provably did not land and waits to be sent again.
				_, err := counters.Mutate(ctx, cur, func(c *vCounter) error { c.N = 5; return nil })
				return err
			}},
		{"transaction conflict retry", &fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.TxConflict()}, false, "TransactWriteItems",
			func(ctx context.Context) error { return tbl.Transact(ctx, items.TxPut(relItem{Worker: 1, Seq: 9})) }},
		{"index wait under GSI lag", nil, true, "Query",
			func(ctx context.Context) error {
				_, _, err := counters.WaitIndexed(ctx, "GSI1", cur)
				return err
			}},
		{"fan-out query in flight", &fault.Rule{Ops: []string{"Query"}, Fault: fault.Delay(time.Minute)}, false, "Query",
			func(ctx context.Context) error {
				_, err := events.QueryShards(ctx, sEvent{Day: day0})
				return err
			}},
	}
	var worst time.Duration
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var remove func()
			if c.rule != nil {
				remove = inj.Add(*c.rule)
			}
			if c.lag {
				inj.SetGSILag(fault.Lag{Duration: time.Hour})
				_, err := counters.Put(ctx, cur) // a write the index will not show for an hour
				require.NoError(t, err)
				cur.Version++
			}
			defer func() {
				if remove != nil {
					remove()
				}
				inj.SetGSILag(fault.Lag{})
			}()
			start := inj.Stats().Requests[c.op]
			opCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			type result struct {
				err error
				at  time.Time // when the operation returned
			}
			done := make(chan result, 1)
			go func() {
				err := c.run(opCtx)
				done <- result{err, time.Now()}
			}()
			waitUntil := time.Now().Add(5 * time.Second)
			for inj.Stats().Requests[c.op] == start && time.Now().Before(waitUntil) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond) // well into the wait
			select {
			case res := <-done:
				t.Fatalf("returned before the cancel: %v", res.err)
			default:
			}
			cancelledAt := time.Now()
			cancel()
			var res result
			select {
			case res = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("did not return within 5 s of the cancel")
			}
			err, took := res.err, res.at.Sub(cancelledAt)
			worst = max(worst, took)
			t.Logf("returned %s after the cancel: %v", took, err)
			assert.ErrorIs(t, err, context.Canceled)
			assert.LessOrEqual(t, took, 50*time.Millisecond)
		})
	}
	t.Logf("FIGURES cancel: %d waits of 10 s cancelled, slowest return %s after the cancel", len(cases), worst)
}
