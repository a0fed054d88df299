package singletable

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/localtest"
)

// faultTable is newTestTable with the client going through a fault injector in front
// of DynamoDB Local, under the SDK's standard retryer (3 attempts, 2 ms backoff, no
// retry quota so that a storm of faults does not turn into quota errors).
func faultTable(t *testing.T, opts ...TableOption) (*Table, *fault.Injector) {
	t.Helper()
	inst := local.Get(t)
	client, inj := fault.NewClient(inst, func(o *fault.ClientOptions) {
		o.DynamoDB = append(o.DynamoDB, func(d *dynamodb.Options) {
			d.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = 3
				so.Backoff = retry.NewExponentialJitterBackoff(2 * time.Millisecond)
				so.MaxBackoff = 2 * time.Millisecond
				so.RateLimiter = ratelimit.None
			})
		})
	})
	tbl, err := NewTable(client, localtest.TableName(t), append([]TableOption{testTableOptions,
		WithBackoff(Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 50})}, opts...)...)
	require.NoError(t, err)
	createTestTable(t, tbl)
	return tbl, inj
}

// TestLostResponsesOnVersionedWrites loses the responses of most versioned writes
// after DynamoDB Local applied them: each must be reported as the success it was,
// never as a conflict, and never applied twice.
func TestLostResponsesOnVersionedWrites(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	inj.Add(fault.Rule{Ops: []string{"PutItem", "UpdateItem", "DeleteItem"}, Fault: fault.LoseResponse(), Rate: 0.7})

	cur, err := counters.Put(ctx, vCounter{ID: "c"})
	require.NoError(t, err)
	const writes = 350
	for i := range writes {
		if i%2 == 0 {
			cur, err = counters.Update(ctx, cur, Set("n", cur.N+1))
		} else {
			next := cur
			next.N++
			cur, err = counters.Put(ctx, next)
		}
		require.NoError(t, err, "write %d: a lost response is not a conflict", i)
	}
	got, err := counters.Get(ctx, vCounter{ID: "c"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, writes, got.N, "every write applied exactly once")
	assert.Equal(t, int64(writes+1), got.Version)
	assert.Equal(t, got, cur)

	require.NoError(t, counters.Delete(ctx, cur))
	_, err = counters.Get(ctx, vCounter{ID: "c"})
	assert.ErrorIs(t, err, ErrNotFound)
	lost := inj.Stats().LostWrites
	t.Logf("lost responses of applied writes: %d", lost)
	assert.GreaterOrEqual(t, lost, 200)
}

// TestLostResponsesUnderContention runs concurrent Mutate increments while half the
// responses are lost: receipts tell each writer whether its write landed, even
// after other writers' writes. With eight writers racing (and the race detector
// slowing them on a loaded 2-core machine), the version can move past any
// fixed window between a writer's write and its read-back (CI saw it move 17,
// then more than 64), and past the window Mutate rightly returns ErrAmbiguous
// (TestReceiptWindowExceeded). So this table keeps a receipt slot for every
// write the test makes: no slot is reused, and every outcome is provable.
func TestLostResponsesUnderContention(t *testing.T) {
	const writers, each = 8, 40
	tbl, inj := faultTable(t, WithReceipts(writers*each+1))
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	// The item exists before the race: creators racing with lost answers cannot
	// tell "another created it first" from "mine landed and was deleted, then
	// another created it", which is ErrAmbiguous (TestSafetyMutatePinnedToIncarnation).
	_, err := counters.Create(ctx, vCounter{ID: "hot"})
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Rate: 0.5})
	retryOpt := RetryBackoff(Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 10_000})
	for _, err := range hotMutate(writers, each, true, func() error {
		_, err := counters.Mutate(ctx, vCounter{ID: "hot"}, func(c *vCounter) error { c.N++; return nil }, retryOpt)
		return err
	}) {
		require.NoError(t, err)
	}
	got, err := counters.Get(ctx, vCounter{ID: "hot"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, writers*each, got.N, "no lost update and no double apply")
	assert.Equal(t, int64(writers*each+1), got.Version)
	t.Logf("lost responses of applied writes: %d", inj.Stats().LostWrites)
}

// TestLostResponsesOnTransactions loses most responses of tokenised transactions
// that DynamoDB Local applied; the SDK retries them with the same token.
func TestLostResponsesOnTransactions(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	logs := MustRegister[tLineItem](tbl)
	ctx := context.Background()
	cur, err := counters.Put(ctx, vCounter{ID: "t"})
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse(), Rate: 0.8})

	const txs = 260
	for i := range txs {
		next := cur
		next.N++
		err := tbl.Transact(ctx, counters.TxPut(next), logs.TxCreate(tLineItem{CustomerID: "log", OrderID: "t", Line: i, SKU: "x"}))
		require.NoError(t, err, "transaction %d", i)
		cur, err = counters.Get(ctx, vCounter{ID: "t"}, Consistent())
		require.NoError(t, err)
	}
	assert.Equal(t, txs, cur.N, "every transaction applied exactly once")
	assert.Equal(t, int64(txs+1), cur.Version)
	n := 0
	for _, err := range logs.All(ctx, tLineItem{CustomerID: "log"}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, txs, n)
	lost := inj.Stats().LostWrites
	t.Logf("lost responses of applied transactions: %d", lost)
	assert.GreaterOrEqual(t, lost, 200)
}

// TestReceiptWindowExceeded: a versioned write's answer is lost, and other
// writers move the item on before the read-back. Within the receipts kept, the
// writer's receipt proves it landed; once they move the version past the
// window, the slot holding that receipt has been reused, the outcome cannot be
// proven, and the write reports ErrAmbiguous naming the window, never a guess.
func TestReceiptWindowExceeded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		others int // writes by another client between the lost answer and the read-back
		proven bool
	}{
		{"within the window", 2, true},
		{"past the window", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, inj := faultTable(t, WithReceipts(3))
			counters := MustRegister[vCounter](tbl)
			// The other writer keeps as many slots: a receipt found in any
			// slot proves a landing, whatever the window.
			others := MustRegister[vCounter](otherClientWith(t, tbl, WithReceipts(3)))
			ctx := context.Background()
			cur, err := counters.Create(ctx, vCounter{ID: "w"})
			require.NoError(t, err)
			inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
				for range tc.others {
					_, err := others.Mutate(ctx, vCounter{ID: "w"}, func(c *vCounter) error { c.N += 10; return nil })
					require.NoError(t, err)
				}
			})})
			_, err = counters.Update(ctx, cur, Set("n", 1))
			if tc.proven {
				require.NoError(t, err, "its receipt is still in the window: it landed")
			} else {
				require.ErrorIs(t, err, ErrAmbiguous)
				assert.Contains(t, err.Error(), "past the 3 receipts kept")
			}
			got, err := others.Get(ctx, vCounter{ID: "w"}, Consistent())
			require.NoError(t, err)
			assert.Equal(t, 1+10*tc.others, got.N, "applied once, never sent again")
			assert.Equal(t, int64(2+tc.others), got.Version)
		})
	}
}
