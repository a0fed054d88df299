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

// bNul's keys may hold NUL, which keys.go allows in plain values (it refuses only
// the delimiter and invalid UTF-8).
type bNul struct {
	_    struct{} `Type:"BNul" PK:"P#{id}" SK:"{s}"`
	ID   string   `dynamodbav:"id"`
	S    string   `dynamodbav:"s"`
	Note string   `dynamodbav:"note"`
}

// Two keys that NUL-joined identities would confuse, ("P#1\x00x", "y") and
// ("P#1", "x\x00y"), are two keys to every batch call.
func TestBatchKeysWithNULAreDistinct(t *testing.T) {
	tbl, client := newTestTable(t)
	nuls := MustRegister[bNul](tbl)
	ctx := context.Background()
	a := bNul{ID: "1\x00x", S: "y", Note: "a"}
	b := bNul{ID: "1", S: "x\x00y", Note: "b"}

	left, err := nuls.BatchPut(ctx, []bNul{a, b})
	require.NoError(t, err, "two distinct items are not duplicates")
	assert.Empty(t, left)
	assert.Equal(t, int64(1), client.count("BatchWriteItem"))
	assert.Equal(t, sAV("a"), rawItem(t, tbl, "P#1\x00x", "y")["note"])
	assert.Equal(t, sAV("b"), rawItem(t, tbl, "P#1", "x\x00y")["note"])

	res, err := nuls.BatchGet(ctx, []bNul{{ID: b.ID, S: b.S}, {ID: a.ID, S: a.S}})
	require.NoError(t, err)
	assert.Equal(t, []bNul{b, a}, res.Items, "each key gives its own item, once")
	assert.Empty(t, res.Missing)

	left, err = nuls.BatchDelete(ctx, []bNul{{ID: a.ID, S: a.S}})
	require.NoError(t, err)
	assert.Empty(t, left)
	res, err = nuls.BatchGet(ctx, []bNul{{ID: a.ID, S: a.S}, {ID: b.ID, S: b.S}})
	require.NoError(t, err)
	assert.Equal(t, []bNul{b}, res.Items, "deleting one leaves the other")
	assert.Equal(t, []bNul{{ID: a.ID, S: a.S}}, res.Missing)
}
