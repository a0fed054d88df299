package singletable

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBatchPutGetDelete(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	var all []tOrder
	for i := range 260 {
		all = append(all, order("c1", i))
	}
	unprocessed, err := orders.BatchPut(ctx, all)
	require.NoError(t, err)
	assert.Empty(t, unprocessed)
	assert.Equal(t, int64(11), client.count("BatchWriteItem"), "25 items a request")

	keys := make([]tOrder, 0, 265)
	for _, o := range all {
		keys = append(keys, tOrder{CustomerID: o.CustomerID, OrderID: o.OrderID})
	}
	for i := range 5 {
		keys = append(keys, tOrder{CustomerID: "c1", OrderID: "missing" + itoa(i)})
	}
	keys = append(keys, keys[7]) // asked twice
	res, err := orders.BatchGet(ctx, keys)
	require.NoError(t, err)
	require.Len(t, res.Items, 261)
	assert.Equal(t, all, res.Items[:260], "items come in the order of the keys")
	assert.Equal(t, all[7], res.Items[260])
	assert.Len(t, res.Missing, 5)
	assert.Empty(t, res.Unprocessed)
	assert.Equal(t, int64(3), client.count("BatchGetItem"), "100 keys a request, duplicates asked once")

	unprocessed, err = orders.BatchDelete(ctx, keys[:200])
	require.NoError(t, err)
	assert.Empty(t, unprocessed)
	res, err = orders.BatchGet(ctx, keys[:260])
	require.NoError(t, err)
	assert.Len(t, res.Items, 60)
	assert.Len(t, res.Missing, 200)

	_, err = orders.BatchPut(ctx, []tOrder{all[0], all[1], all[0]})
	assert.ErrorIs(t, err, ErrInvalidInput, "duplicate keys are refused before sending")
	_, err = orders.BatchPut(ctx, []tOrder{all[0], {CustomerID: "c1", OrderID: "a#b", CreatedAt: t0}})
	assert.ErrorIs(t, err, ErrInvalidKey)
}
