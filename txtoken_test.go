package singletable

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
)

// tokAccount is an unversioned balance changed with Add; tokOrder has timestamps
// and a counter.
type tokAccount struct {
	_       struct{} `Type:"TokAccount" PK:"ACCT#{id}" SK:"ACCT"`
	ID      string   `dynamodbav:"id"`
	Balance int      `dynamodbav:"balance"`
}

type tokOrder struct {
	_       struct{}  `Type:"TokOrder" PK:"ORDER#{id}" SK:"ORDER"`
	ID      string    `dynamodbav:"id"`
	Total   int       `dynamodbav:"total"`
	Created time.Time `dynamodbav:"created" singletable:"createdAt"`
	Updated time.Time `dynamodbav:"updated" singletable:"updatedAt"`
	Edits   int       `dynamodbav:"edits" singletable:"counter"`
}

// tokEntities registers the entities of the checkout on a table.
type tokEntities struct {
	accounts *Entity[tokAccount]
	orders   *Entity[tokOrder]
	counters *Entity[vCounter]
}

func registerTok(t *testing.T, tbl *Table) tokEntities {
	t.Helper()
	return tokEntities{MustRegister[tokAccount](tbl), MustRegister[tokOrder](tbl), MustRegister[vCounter](tbl)}
}

// checkout is the transaction a process builds from its inputs, the same after a
// restart: create the order, take the amount from the account, move a versioned
// counter on.
func (e tokEntities) checkout(amount int) []TxItem {
	return []TxItem{
		e.orders.TxCreate(tokOrder{ID: "o1", Total: amount}),
		e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", -amount)),
		e.counters.TxPut(vCounter{ID: "c", N: 1, Version: 1}),
	}
}

// TestTransactTokenResentAfterCrash: a transaction lands but its process dies
// before the answer comes (the response is lost and the context ends); another
// process builds the same actions from the same inputs and resends them under the
// same token and time: DynamoDB applies them once. A different transaction under
// the token is refused with ErrTokenMismatch.
func TestTransactTokenResentAfterCrash(t *testing.T) {
	clk := newTestClock()
	tbl, inj := faultTable(t, WithClock(clk.Now))
	first := registerTok(t, tbl)
	ctx := context.Background()
	_, err := first.accounts.Put(ctx, tokAccount{ID: "a", Balance: 100})
	require.NoError(t, err)
	_, err = first.counters.Put(ctx, vCounter{ID: "c"})
	require.NoError(t, err)

	// DynamoDB Local keeps tokens across tables for ten minutes: one per run.
	opts := TxOptions{Token: "checkout-o1-pay-" + uniqueSuffix(t), At: clk.Now()}
	crashed, crash := context.WithCancel(ctx)
	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse().Then(crash), Times: 1})
	err = tbl.TransactWith(crashed, opts, first.checkout(30)...)
	require.Error(t, err, "the process never learns the outcome")
	require.Equal(t, 1, inj.Stats().LostWrites, "but the transaction landed")

	// A restart: another Table, another client, the clock moved on.
	clk.Advance(3 * time.Minute)
	other := otherClient(t, tbl)
	second := registerTok(t, other)
	require.NoError(t, other.TransactWith(ctx, opts, second.checkout(30)...), "the resend under the same token succeeds")
	require.NoError(t, other.TransactWith(ctx, opts, second.checkout(30)...), "and again")

	acct, err := second.accounts.Get(ctx, tokAccount{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 70, acct.Balance, "applied once")
	order, err := second.orders.Get(ctx, tokOrder{ID: "o1"}, Consistent())
	require.NoError(t, err)
	assert.True(t, order.Created.Equal(opts.At), "stamped with the transaction's time")
	assert.Equal(t, 0, order.Edits)
	ctr, err := second.counters.Get(ctx, vCounter{ID: "c"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, int64(2), ctr.Version)

	// Another transaction under the same token: refused, nothing applied.
	err = other.TransactWith(ctx, opts, second.checkout(50)...)
	require.ErrorIs(t, err, ErrTokenMismatch)
	var ipm *types.IdempotentParameterMismatchException
	assert.ErrorAs(t, err, &ipm)
	assert.Contains(t, err.Error(), opts.Token)
	// The same actions at another time are another transaction too.
	err = other.TransactWith(ctx, TxOptions{Token: opts.Token, At: opts.At.Add(time.Second)}, second.checkout(30)...)
	require.ErrorIs(t, err, ErrTokenMismatch)
	acct, err = second.accounts.Get(ctx, tokAccount{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 70, acct.Balance)

	// Without a token, a resend is a new transaction: the Create fails.
	err = other.Transact(ctx, second.checkout(30)...)
	assert.ErrorIs(t, err, ErrAlreadyExists)
}

// TestTransactTokenLostResponsesRetried: with a token, lost responses are resent
// under it until one answers; DynamoDB applies the transaction once.
func TestTransactTokenLostResponsesRetried(t *testing.T) {
	tbl, inj := faultTable(t)
	e := registerTok(t, tbl)
	ctx := context.Background()
	_, err := e.accounts.Put(ctx, tokAccount{ID: "a", Balance: 100})
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse(), Times: 5})
	err = tbl.TransactWith(ctx, TxOptions{Token: "t-lost-" + uniqueSuffix(t), At: time.Unix(1700000000, 0)},
		e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", -1)), e.orders.TxCreate(tokOrder{ID: "o"}))
	require.NoError(t, err)
	assert.Equal(t, 5, inj.Stats().LostWrites)
	acct, err := e.accounts.Get(ctx, tokAccount{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 99, acct.Balance, "six sends, one application")
}

// TestTransactTokenRefusals: bad tokens and transactions that cannot be planned
// the same way twice are refused before anything is sent.
func TestTransactTokenRefusals(t *testing.T) {
	tbl, inj := faultTable(t)
	e := registerTok(t, tbl)
	shards := MustRegister[rsEvent](tbl)
	ctx := context.Background()
	before := requests(inj)
	at := time.Unix(1700000000, 0)
	for name, call := range map[string]func() error{
		"token too long": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: strings.Repeat("x", 37), At: at}, e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", 1)))
		},
		"token not UTF-8": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "\xff", At: at}, e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", 1)))
		},
		"timestamps without At": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "t"}, e.orders.TxCreate(tokOrder{ID: "o"}))
		},
		"random shard": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "t", At: at}, shards.TxPut(rsEvent{ID: "e"}))
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ErrInvalidInput)
			t.Log(err)
		})
	}
	assert.Equal(t, before, requests(inj), "nothing sent")
}

// TestTransactTokenPlansDeterministically: under one token, the same actions plan
// to the same request, receipts and incarnation ids included; under another, or
// without one, they do not.
func TestTransactTokenPlansDeterministically(t *testing.T) {
	plan := func(tbl *Table, o TxOptions) []types.TransactWriteItem {
		e := registerTok(t, tbl)
		ws, err := tbl.planTx(o, e.checkout(10), nil)
		require.NoError(t, err)
		out := make([]types.TransactWriteItem, len(ws))
		for i, w := range ws {
			out[i] = w.transactItem(tbl.Name())
		}
		return out
	}
	at := time.Unix(1700000000, 0)
	a := plan(offlineTable(t), TxOptions{Token: "tok", At: at})
	b := plan(offlineTable(t), TxOptions{Token: "tok", At: at})
	assert.Equal(t, a, b, "a restarted process plans the same request")
	c := plan(offlineTable(t), TxOptions{Token: "tok2", At: at})
	assert.NotEqual(t, a, c)
	d := plan(offlineTable(t), TxOptions{At: at})
	e := plan(offlineTable(t), TxOptions{At: at})
	assert.NotEqual(t, d, e, "without a token, receipts are random")
}

// uniqueSuffix returns 12 random hex digits: tokens live for ten minutes, across
// tables and test runs.
func uniqueSuffix(t *testing.T) string {
	t.Helper()
	s, err := newToken()
	require.NoError(t, err)
	return s[:12]
}

// TestTransactTokenLostThenThrottled: a transaction whose answer was lost and
// whose resends under the same token were all throttled past the SDK's retries
// is judged: the lost attempt landed (success), or the outcome is unknown
// (ErrAmbiguous), never a plain failure after which a caller would retry with a
// new token and apply it twice (issue 37, scenario 20).
func TestTransactTokenLostThenThrottled(t *testing.T) {
	tbl, inj := faultTable(t)
	e := registerTok(t, tbl)
	ctx := context.Background()
	_, err := e.accounts.Put(ctx, tokAccount{ID: "a", Balance: 100})
	require.NoError(t, err)
	at := time.Unix(1700000000, 0)

	// The first attempt lands and its answer is lost; every resend is throttled.
	lose := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse(), Times: 1})
	throttle := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.Throttle()})
	err = tbl.TransactWith(ctx, TxOptions{Token: "t-lt-" + uniqueSuffix(t), At: at},
		e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", -1)), e.orders.TxCreate(tokOrder{ID: "o1"}))
	require.NoError(t, err, "the lost attempt landed")
	lose()
	throttle()
	acct, err := e.accounts.Get(ctx, tokAccount{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 99, acct.Balance)

	// The first attempt never reaches DynamoDB (a reset); every resend is
	// throttled: nothing proves it will not land yet, so ErrAmbiguous, and the
	// same token applies it once later.
	token := "t-rt-" + uniqueSuffix(t)
	reset := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.Reset(), Times: 3})
	throttle = inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.Throttle()})
	err = tbl.TransactWith(ctx, TxOptions{Token: token, At: at},
		e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", -1)), e.orders.TxCreate(tokOrder{ID: "o2"}))
	require.ErrorIs(t, err, ErrAmbiguous)
	assert.Contains(t, err.Error(), token)
	reset()
	throttle()
	require.NoError(t, tbl.TransactWith(ctx, TxOptions{Token: token, At: at},
		e.accounts.TxUpdate(tokAccount{ID: "a"}, Add("balance", -1)), e.orders.TxCreate(tokOrder{ID: "o2"})))
	acct, err = e.accounts.Get(ctx, tokAccount{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 98, acct.Balance)
}

// TestIdempotentWriteLostThenRefused: an idempotent write (unversioned Put,
// Delete) is sent again after a lost answer without reading the item; when a
// resend then fails for good (throttled past the SDK's retries), the lost attempt
// may have landed: ErrAmbiguous, never a plain failure or "not applied".
func TestIdempotentWriteLostThenRefused(t *testing.T) {
	tbl, inj := faultTable(t, WithBackoff(Backoff{Base: time.Millisecond, Cap: time.Millisecond, MaxAttempts: 4}))
	e := registerTok(t, tbl)
	ctx := context.Background()
	lose := inj.Add(fault.Rule{Ops: []string{"PutItem", "DeleteItem"}, Fault: fault.LoseResponse(), Times: 1})
	throttle := inj.Add(fault.Rule{Ops: []string{"PutItem", "DeleteItem"}, Fault: fault.Throttle()})
	_, err := e.accounts.Put(ctx, tokAccount{ID: "p", Balance: 1})
	require.ErrorIs(t, err, ErrAmbiguous)
	lose()
	throttle()
	got, err := e.accounts.Get(ctx, tokAccount{ID: "p"}, Consistent())
	require.NoError(t, err, "the lost attempt landed")
	assert.Equal(t, 1, got.Balance)

	// Every answer lost: sent MaxAttempts times, each perhaps applied.
	lose = inj.Add(fault.Rule{Ops: []string{"DeleteItem"}, Fault: fault.LoseResponse()})
	err = e.accounts.Delete(ctx, tokAccount{ID: "p"})
	require.ErrorIs(t, err, ErrAmbiguous)
	assert.NotContains(t, err.Error(), "not applied")
	lose()
}
