package singletable

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// TestTransactGetThreeTypes reads items of three entity types in one
// TransactGetItems, one of them missing, on both decoding paths; each ref is
// typed and says what it found.
func TestTransactGetThreeTypes(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(fmt.Sprintf("wire=%v", wire), func(t *testing.T) {
			tbl, client := newTestTable(t, WithWireDecoding(wire))
			customers, orders, lines := registerAll(t, tbl)
			ctx := context.Background()
			c := tCustomer{CustomerID: "c1", Name: "Ada", Email: "ada@x"}
			o := tOrder{CustomerID: "c1", OrderID: "o1", Status: "NEW", CreatedAt: t0, Total: 42, Tags: []string{"x"}}
			l := tLineItem{CustomerID: "c1", OrderID: "o1", Line: 2, SKU: "sku"}
			require.NoError(t, tbl.Transact(ctx, customers.TxPut(c), orders.TxPut(o), lines.TxPut(l)))

			rc := customers.Ref(tCustomer{CustomerID: "c1"})
			ro := orders.Ref(tOrder{CustomerID: "c1", OrderID: "o1"})
			rl := lines.Ref(tLineItem{CustomerID: "c1", OrderID: "o1", Line: 2})
			missing := orders.Ref(tOrder{CustomerID: "c1", OrderID: "o2"})
			_, err := ro.Value()
			require.ErrorIs(t, err, ErrInvalidInput, "not read yet")

			require.NoError(t, tbl.TransactGet(ctx, rc, ro, rl, missing))
			gc, err := rc.Value()
			require.NoError(t, err)
			assert.Equal(t, c, gc)
			gotO, err := ro.Value()
			require.NoError(t, err)
			assert.Equal(t, o, gotO)
			gl, err := rl.Value()
			require.NoError(t, err)
			assert.Equal(t, l, gl)
			assert.True(t, ro.Found())
			assert.False(t, missing.Found())
			_, err = missing.Value()
			require.ErrorIs(t, err, ErrNotFound)
			assert.Contains(t, err.Error(), `ORDER#o2`, "the error names the key")
			assert.Equal(t, tOrder{CustomerID: "c1", OrderID: "o2"}, missing.Key())

			// An item of another type at a ref's key.
			_, err = tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
				"PK": sAV("CUST#c2"), "SK": sAV("ORDER#o9"), "Type": sAV("LineItem"), "customerId": sAV("c2"), "orderId": sAV("o9"), "line": &types.AttributeValueMemberN{Value: "1"},
			}})
			require.NoError(t, err)
			wrong := orders.Ref(tOrder{CustomerID: "c2", OrderID: "o9"})
			require.NoError(t, tbl.TransactGet(ctx, wrong))
			_, err = wrong.Value()
			require.ErrorIs(t, err, ErrTypeMismatch)
			assert.Positive(t, client.count("GetItem")+1)
		})
	}
}

// TestTransactGetRefusedBeforeSending: over 100 refs, a repeated item, a nil ref
// and a bad key are refused with nothing sent.
func TestTransactGetRefusedBeforeSending(t *testing.T) {
	tbl, inj := faultTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	var refs []ItemRef
	for i := range 101 {
		refs = append(refs, orders.Ref(tOrder{CustomerID: "c1", OrderID: fmt.Sprintf("o%d", i)}))
	}
	before := inj.Stats().Requests["TransactGetItems"]
	err := tbl.TransactGet(ctx, refs...)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "101 items, over DynamoDB's limit of 100")
	err = tbl.TransactGet(ctx, refs[0], refs[1], orders.Ref(tOrder{CustomerID: "c1", OrderID: "o0"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `refs 0 (tOrder) and 2 (tOrder) name the same item {PK="CUST#c1", SK="ORDER#o0"}`)
	err = tbl.TransactGet(ctx, refs[0], nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	var nilRef *Ref[tOrder]
	err = tbl.TransactGet(ctx, nilRef)
	require.ErrorIs(t, err, ErrInvalidInput)
	err = tbl.TransactGet(ctx, orders.Ref(tOrder{CustomerID: "c#1", OrderID: "o"}))
	require.ErrorIs(t, err, ErrInvalidKey)
	err = tbl.TransactGet(ctx)
	require.ErrorIs(t, err, ErrInvalidInput)
	other, _ := newTestTable(t)
	_, otherOrders, _ := registerAll(t, other)
	err = tbl.TransactGet(ctx, otherOrders.Ref(tOrder{CustomerID: "c1", OrderID: "o1"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, before, inj.Stats().Requests["TransactGetItems"], "nothing sent")

	// 100 is allowed, and read (all missing).
	require.NoError(t, tbl.TransactGet(ctx, refs[:100]...))
	for _, r := range refs[:100] {
		_, err := r.(*Ref[tOrder]).Value()
		require.ErrorIs(t, err, ErrNotFound)
	}

	// A conflict with a concurrent transaction is retried.
	inj.Add(fault.Rule{Ops: []string{"TransactGetItems"}, Fault: fault.TxConflict(), Times: 2})
	_, err = orders.Put(ctx, tOrder{CustomerID: "c1", OrderID: "o5", CreatedAt: t0})
	require.NoError(t, err)
	require.NoError(t, tbl.TransactGet(ctx, refs[5]))
	assert.True(t, refs[5].(*Ref[tOrder]).Found())

	// A conflict that lasts is a TxError naming the item.
	inj.Add(fault.Rule{Ops: []string{"TransactGetItems"}, Fault: fault.TxConflict()})
	err = tbl.TransactGet(ctx, refs[5])
	var txe *TxError
	require.ErrorAs(t, err, &txe)
	require.Len(t, txe.Reasons, 1)
	assert.Equal(t, "Get", txe.Reasons[0].Op)
	assert.Equal(t, "TransactionConflict", txe.Reasons[0].Code)
}

// TestRefCopyFilledInItsOwnPlace: a Ref copied by value (a []Ref[T] filled from
// Entity.Ref, to allocate once) is filled in its own place by TransactGet and
// BatchGet, on both decoding paths; the Ref it was copied from is left alone.
func TestRefCopyFilledInItsOwnPlace(t *testing.T) {
	for _, wire := range []bool{true, false} {
		tbl, _ := newTestTable(t, WithWireDecoding(wire))
		tasks := MustRegister[vTask](tbl)
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			_, err := tasks.Put(ctx, vTask{ID: id})
			require.NoError(t, err)
		}
		orig := tasks.Ref(vTask{ID: "a"})
		refs := []Ref[vTask]{*orig, *tasks.Ref(vTask{ID: "b"})}
		require.NoError(t, tbl.TransactGet(ctx, &refs[0], &refs[1]), "wire=%v", wire)
		for i, id := range []string{"a", "b"} {
			v, err := refs[i].Value()
			require.NoError(t, err, "wire=%v", wire)
			assert.Equal(t, id, v.ID, "TransactGet, wire=%v", wire)
		}
		_, err := orig.Value()
		assert.ErrorIs(t, err, ErrInvalidInput, "the original was not read")

		refs = []Ref[vTask]{*tasks.Ref(vTask{ID: "a"}), *tasks.Ref(vTask{ID: "b"})}
		left, err := tbl.BatchGet(ctx, []ItemRef{&refs[0], &refs[1]})
		require.NoError(t, err, "wire=%v", wire)
		require.Empty(t, left)
		for i, id := range []string{"a", "b"} {
			v, err := refs[i].Value()
			require.NoError(t, err, "wire=%v", wire)
			assert.Equal(t, id, v.ID, "BatchGet, wire=%v", wire)
		}
	}
}
