package singletable

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObserverAndLogger(t *testing.T) {
	var mu sync.Mutex
	var ops []Operation
	var logs bytes.Buffer
	tbl, _ := newTestTable(t, WithObserver(func(op Operation) {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, op)
	}), WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	mu.Lock()
	require.NotEmpty(t, ops)
	assert.Equal(t, "CreateTable", ops[0].Name, "table management is observed too")
	assert.Empty(t, ops[0].Entity)
	assert.Equal(t, "DescribeTable", ops[len(ops)-1].Name, "and the wait for the table")
	ops = nil
	mu.Unlock()
	_, err := orders.Put(ctx, order("c1", 1))
	require.NoError(t, err)
	_, err = orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "nope"})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = orders.Query(ctx, tOrder{CustomerID: "c1"})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ops, 3)
	for i, name := range []string{"PutItem", "GetItem", "Query"} {
		assert.Equal(t, name, ops[i].Name)
		assert.Equal(t, "tOrder", ops[i].Entity)
		assert.Equal(t, tbl.Name(), ops[i].Table)
		assert.Positive(t, ops[i].Latency)
		assert.Equal(t, 1, ops[i].Attempts)
		assert.NoError(t, ops[i].Err)
	}
	assert.Positive(t, ops[0].Capacity, "write capacity is asked for and reported")
	assert.Contains(t, logs.String(), "op=PutItem")
	assert.Contains(t, logs.String(), "entity=tOrder")
}

// TestObserverSeesEveryCall: a failed call, a call of the table's own and a call
// no wrapper method was written for are all reported; the caller's input is not
// modified to ask for the consumed capacity.
func TestObserverSeesEveryCall(t *testing.T) {
	var mu sync.Mutex
	var ops []Operation
	observe := WithObserver(func(op Operation) {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, op)
	})
	tbl, client := newTestTable(t, observe)
	orders := MustRegister[tOrder](tbl)
	assert.Same(t, client, tbl.Client(), "Client returns the client given to NewTable")
	ctx := context.Background()

	// A table that does not exist: the call fails and is reported with its error.
	missing, err := NewTable(client, tbl.Name()+"-missing", testTableOptions, observe)
	require.NoError(t, err)
	missingOrders := MustRegister[tOrder](missing)
	mu.Lock()
	ops = nil
	mu.Unlock()
	_, err = missingOrders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
	require.Error(t, err)
	_, err = orders.Put(ctx, order("c1", 1))
	require.NoError(t, err)
	require.NoError(t, tbl.DeleteTable(ctx))

	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(ops), 4)
	assert.Equal(t, "GetItem", ops[0].Name)
	assert.Equal(t, "tOrder", ops[0].Entity)
	var nf *types.ResourceNotFoundException
	assert.ErrorAs(t, ops[0].Err, &nf, "the error as the SDK returns it")
	assert.Equal(t, "PutItem", ops[1].Name)
	assert.Equal(t, "DeleteTable", ops[2].Name)
	assert.Empty(t, ops[2].Entity)
	assert.Equal(t, "DescribeTable", ops[3].Name)
}
