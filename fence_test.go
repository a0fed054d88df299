package singletable

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// errTestLost is what the fences of these tests match, as stream.ErrLeaseLost
// does for a lease's.
var errTestLost = errors.New("test: lease lost")

// testFence is a fence on the item FENCE/<name> of tbl's table: that its owner
// is owner.
func testFence(tbl *Table, name, owner string) Fence {
	return Fence{
		Table:     tbl.Name(),
		Key:       map[string]types.AttributeValue{"PK": sAV("FENCE#" + name), "SK": sAV("FENCE")},
		Condition: "#o = :o",
		Names:     map[string]string{"#o": "owner"},
		Values:    map[string]types.AttributeValue{":o": sAV(owner)},
		What:      "fence " + name + " of " + owner,
		Err:       errTestLost,
	}
}

func setFenceOwner(t *testing.T, tbl *Table, name, owner string) {
	t.Helper()
	_, err := local.Client(t).PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": sAV("FENCE#" + name), "SK": sAV("FENCE"), "owner": sAV(owner)}})
	require.NoError(t, err)
}

// Every write kind of an entity, and a transaction, made with a fenced context
// is applied while the fence holds, and refused, applying nothing, with an error
// matching ErrFenced and the fence's Err once it does not.
func TestFenceWrites(t *testing.T) {
	tbl, client := newTestTable(t)
	customers := MustRegister[tCustomer](tbl)
	counters := MustRegister[vCounter](tbl)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	setFenceOwner(t, tbl, "a", "me")
	held := WithFence(ctx, testFence(tbl, "a", "me"))
	lost := WithFence(ctx, testFence(tbl, "a", "another"))
	total := func() (n int64) {
		for op := range client.calls {
			n += client.count(op)
		}
		return n
	}
	refused := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrFenced)
		require.ErrorIs(t, err, errTestLost)
		var fe *FenceError
		require.ErrorAs(t, err, &fe)
		assert.Contains(t, err.Error(), "fence a of another does not hold")
	}

	t.Run("Put, Create, Update, Delete", func(t *testing.T) {
		before, puts := client.count("TransactWriteItems"), client.count("PutItem")
		_, err := customers.Put(held, tCustomer{CustomerID: "c1", Name: "one"})
		require.NoError(t, err)
		assert.EqualValues(t, 1, client.count("TransactWriteItems")-before, "a fenced Put is one transaction")
		assert.Equal(t, puts, client.count("PutItem"))
		_, err = customers.Put(lost, tCustomer{CustomerID: "c1", Name: "late"})
		refused(t, err)
		_, err = customers.Create(lost, tCustomer{CustomerID: "c2", Name: "late"})
		refused(t, err)
		_, err = customers.Create(held, tCustomer{CustomerID: "c2", Name: "two"})
		require.NoError(t, err)
		_, err = customers.Create(held, tCustomer{CustomerID: "c2", Name: "again"})
		require.ErrorIs(t, err, ErrAlreadyExists, "the write's own condition is explained as ever")
		_, err = customers.Update(lost, tCustomer{CustomerID: "c1"}, Set("name", "late"))
		refused(t, err)
		got, err := customers.Update(held, tCustomer{CustomerID: "c1"}, Set("name", "uno"))
		require.NoError(t, err)
		assert.Equal(t, "uno", got.Name, "an Update returns the item stored")
		refused(t, customers.Delete(lost, tCustomer{CustomerID: "c2"}))
		got, err = customers.Get(ctx, tCustomer{CustomerID: "c1"}, Consistent())
		require.NoError(t, err)
		assert.Equal(t, "uno", got.Name)
		_, err = customers.Get(ctx, tCustomer{CustomerID: "c2"}, Consistent())
		require.NoError(t, err, "the refused Delete applied nothing")
		require.NoError(t, customers.Delete(held, tCustomer{CustomerID: "c2"}))
		_, err = customers.Get(ctx, tCustomer{CustomerID: "c2"}, Consistent())
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("versioned, and Mutate", func(t *testing.T) {
		c, err := counters.Create(held, vCounter{ID: "k", N: 1})
		require.NoError(t, err)
		assert.EqualValues(t, 1, c.Version)
		_, err = counters.Mutate(lost, vCounter{ID: "k"}, func(v *vCounter) error { v.N++; return nil })
		refused(t, err)
		m, err := counters.Mutate(held, vCounter{ID: "k"}, func(v *vCounter) error { v.N++; return nil })
		require.NoError(t, err)
		assert.Equal(t, 2, m.N)
		assert.EqualValues(t, 2, m.Version)
		_, err = counters.Put(held, c) // at version 1: a conflict, explained as ever
		require.ErrorIs(t, err, ErrConflict)
	})

	t.Run("unique values", func(t *testing.T) {
		_, err := users.Create(lost, uUser{ID: "u1", Email: "a@x"})
		refused(t, err)
		_, err = users.Create(held, uUser{ID: "u2", Email: "a@x"})
		require.NoError(t, err, "the refused write claimed no unique value")
		_, err = users.Create(held, uUser{ID: "u3", Email: "a@x"})
		require.ErrorIs(t, err, ErrNotUnique)
		_, err = users.Update(lost, uUser{ID: "u2"}, Set("email", "b@x"))
		refused(t, err)
	})

	t.Run("Transact", func(t *testing.T) {
		refused(t, tbl.Transact(lost, customers.TxPut(tCustomer{CustomerID: "t1"}), counters.TxCreate(vCounter{ID: "t1"})))
		_, err := customers.Get(ctx, tCustomer{CustomerID: "t1"}, Consistent())
		require.ErrorIs(t, err, ErrNotFound)
		tok := "fenced-" + uniqueSuffix(t) // DynamoDB Local keeps tokens across tables for ten minutes
		require.NoError(t, tbl.TransactWith(held, TxOptions{Token: tok}, customers.TxPut(tCustomer{CustomerID: "t1"}), counters.TxCreate(vCounter{ID: "t1"})))
		require.NoError(t, tbl.TransactWith(held, TxOptions{Token: tok}, customers.TxPut(tCustomer{CustomerID: "t1"}), counters.TxCreate(vCounter{ID: "t1"})), "the same token and fence: applied once, answered success")
		err = tbl.Transact(held, counters.TxCreate(vCounter{ID: "t1"}))
		require.ErrorIs(t, err, ErrAlreadyExists, "an action's own condition is explained as ever")
		require.NotErrorIs(t, err, ErrFenced)
	})

	t.Run("refused before sending", func(t *testing.T) {
		before := total()
		_, err := customers.BatchPut(held, []tCustomer{{CustomerID: "b1"}})
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "batch write takes no condition")
		_, err = tbl.BatchWrite(held, customers.BatchPutItem(tCustomer{CustomerID: "b1"}))
		require.ErrorIs(t, err, ErrInvalidInput)
		var old Old[tCustomer]
		_, err = customers.Put(held, tCustomer{CustomerID: "c1"}, ReturnOld(&old))
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "ReturnOld")
		bad := testFence(tbl, "a", "me")
		bad.Table = ""
		_, err = customers.Put(WithFence(ctx, bad), tCustomer{CustomerID: "c1"})
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "names no table")
		assert.Equal(t, before, total(), "nothing sent")
		left, err := customers.BatchPut(WithoutFence(held), []tCustomer{{CustomerID: "b1"}})
		require.NoError(t, err)
		assert.Empty(t, left)
		_, ok := FenceOf(WithoutFence(held))
		assert.False(t, ok)
		f, ok := FenceOf(held)
		require.True(t, ok)
		assert.Equal(t, "fence a of me", f.What)
	})
}

// A fenced write whose answer is lost is sent again under the same token:
// applied once, answered success; and once the fence has moved on in between,
// refused (the first attempt provably applied nothing: under the same token a
// landed one is answered success).
func TestFenceLostAnswer(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	setFenceOwner(t, tbl, "b", "me")
	held := WithFence(ctx, testFence(tbl, "b", "me"))
	_, err := counters.Create(held, vCounter{ID: "x", N: 1})
	require.NoError(t, err)

	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Times: 1, Fault: fault.LoseResponse()})
	got, err := counters.Mutate(held, vCounter{ID: "x"}, func(v *vCounter) error { v.N++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 2, got.N)
	cur, err := counters.Get(ctx, vCounter{ID: "x"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 2, cur.N, "applied once")
	assert.EqualValues(t, 2, cur.Version)

	// Landed while the fence held, its answer lost, the fence moved before the
	// resend: a success when the token or the receipt proves it, else
	// ErrAmbiguous; never a refusal that says nothing was applied.
	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Times: 1, Fault: fault.LoseResponse().Then(func() { setFenceOwner(t, tbl, "b", "another") })})
	_, err = counters.Update(held, vCounter{ID: "x"}, Set("n", 9))
	if err != nil {
		require.ErrorIs(t, err, ErrAmbiguous)
		require.NotErrorIs(t, err, ErrFenced)
	}
	_, err = counters.Update(held, vCounter{ID: "x"}, Set("n", 10))
	require.ErrorIs(t, err, errTestLost)
	cur, err = counters.Get(ctx, vCounter{ID: "x"}, Consistent())
	require.NoError(t, err)
	assert.Contains(t, []int{2, 9}, cur.N, "the refused write applied nothing")

	// A transaction of the call's own token, landed while the fence held, its
	// answer lost, the fence moved before the resend: the resend under the same
	// token, or the read-back, proves it landed; never a refusal.
	setFenceOwner(t, tbl, "b", "me")
	inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Times: 1, Fault: fault.LoseResponse().Then(func() { setFenceOwner(t, tbl, "b", "another") })})
	err = tbl.Transact(held, counters.TxPut(vCounter{ID: "tx", N: 5}))
	if err != nil {
		require.ErrorIs(t, err, ErrAmbiguous)
		require.NotErrorIs(t, err, ErrFenced)
	}
	got, err = counters.Get(ctx, vCounter{ID: "tx"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 5, got.N, "landed once")
}
