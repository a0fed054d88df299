package singletable

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

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
	ops = nil // CreateTable and DescribeTable are not reported
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
