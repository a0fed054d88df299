package singletable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tCustomer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE" GSI3PK:"EMAIL#{email}"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
	Email      string   `dynamodbav:"email,omitempty"`
}

type tOrder struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}" GSI2PK:"CUST#{customerId}" GSI2SK:"{createdAt:rev}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status,omitempty"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Total      int64     `dynamodbav:"total"`
	Tags       []string  `dynamodbav:"tags,omitempty"`
	Note       string    `dynamodbav:"note,omitempty"`
	Count      int       `dynamodbav:"count"`
}

type tLineItem struct {
	_          struct{} `Type:"LineItem" PK:"CUST#{customerId}" SK:"ORDER#{orderId}#ITEM#{line:04}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Line       int      `dynamodbav:"line"`
	SKU        string   `dynamodbav:"sku"`
}

var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

func registerAll(t *testing.T, tbl *Table) (*Entity[tCustomer], *Entity[tOrder], *Entity[tLineItem]) {
	t.Helper()
	c, err := Register[tCustomer](tbl)
	require.NoError(t, err)
	o, err := Register[tOrder](tbl)
	require.NoError(t, err)
	l, err := Register[tLineItem](tbl)
	require.NoError(t, err)
	return c, o, l
}

func order(cust string, n int) tOrder {
	return tOrder{
		CustomerID: cust,
		OrderID:    "o" + pad3(n),
		Status:     []string{"PENDING", "SHIPPED"}[n%2],
		CreatedAt:  t0.Add(time.Duration(n) * time.Minute),
		Total:      int64(100 * n),
	}
}

func pad3(n int) string { s := "000" + itoa(n); return s[len(s)-3:] }
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// rawItem reads an item with the bare SDK, to check what was stored.
func rawItem(t *testing.T, tbl *Table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := tbl.Client().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(tbl.Name()),
		Key:       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
	})
	require.NoError(t, err)
	return out.Item
}

func sAttr(item map[string]types.AttributeValue, name string) (string, bool) {
	v, ok := item[name].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return v.Value, true
}

func TestPutGetStoresKeysAndType(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	o := order("c1", 1)
	o.Tags = []string{"gift"}
	stored, err := orders.Put(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, o, stored)

	got, err := orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o001"})
	require.NoError(t, err)
	assert.Equal(t, o, got)
	got, err = orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o001"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, o, got)
	assert.Equal(t, int64(2), client.count("GetItem"))

	raw := rawItem(t, tbl, "CUST#c1", "ORDER#o001")
	want := map[string]string{
		"PK": "CUST#c1", "SK": "ORDER#o001", "Type": "Order",
		"GSI1PK": "STATUS#SHIPPED", "GSI1SK": "2024-05-01T09:01:00.000000000Z#o001",
		"GSI2PK": "CUST#c1", "GSI2SK": "2024-05-01T09:01:00.000000000Z#o001",
	}
	for k, v := range want {
		got, ok := sAttr(raw, k)
		require.True(t, ok, k)
		if k == "GSI2SK" {
			assert.True(t, strings.HasSuffix(got, "#o001") && len(got) == 19+5, "GSI2SK %q", got)
			continue
		}
		assert.Equal(t, v, got, k)
	}
}

func TestGetMissing(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	_, err := orders.Get(context.Background(), tOrder{CustomerID: "c1", OrderID: "nope"})
	require.ErrorIs(t, err, ErrNotFound)
	var ie *ItemError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "tOrder", ie.Entity)
	assert.Equal(t, "ORDER#nope", ie.Key["SK"])
}

func TestCreateRefusesExisting(t *testing.T) {
	tbl, _ := newTestTable(t)
	customers, _, _ := registerAll(t, tbl)
	ctx := context.Background()
	_, err := customers.Create(ctx, tCustomer{CustomerID: "c1", Name: "Ann"})
	require.NoError(t, err)
	_, err = customers.Create(ctx, tCustomer{CustomerID: "c1", Name: "Bob"})
	require.ErrorIs(t, err, ErrAlreadyExists)
	require.ErrorIs(t, err, ErrCondition)
	var ccf *types.ConditionalCheckFailedException
	require.ErrorAs(t, err, &ccf, "the AWS error stays wrapped")
	got, err := customers.Get(ctx, tCustomer{CustomerID: "c1"})
	require.NoError(t, err)
	assert.Equal(t, "Ann", got.Name, "the failed create changed nothing")
}

func TestOtherTypeAtKeyIsNeverTouched(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "CUST#c1"}, "SK": &types.AttributeValueMemberS{Value: "ORDER#o1"},
		"Type": &types.AttributeValueMemberS{Value: "Invoice"},
	}})
	require.NoError(t, err)
	_, err = orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o1"})
	assert.ErrorIs(t, err, ErrTypeMismatch)
	// One error kind for one situation, on every call.
	_, err = orders.Put(ctx, tOrder{CustomerID: "c1", OrderID: "o1", CreatedAt: t0})
	assert.ErrorIs(t, err, ErrTypeMismatch)
	assert.ErrorIs(t, err, ErrCondition)
	assert.ErrorIs(t, orders.Delete(ctx, tOrder{CustomerID: "c1", OrderID: "o1"}), ErrTypeMismatch)
	_, err = orders.Update(ctx, tOrder{CustomerID: "c1", OrderID: "o1"}, Set("note", "x"))
	assert.ErrorIs(t, err, ErrTypeMismatch)
	typ, _ := sAttr(rawItem(t, tbl, "CUST#c1", "ORDER#o1"), "Type")
	assert.Equal(t, "Invoice", typ)
}

func TestDelete(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	_, err := orders.Put(ctx, order("c1", 1))
	require.NoError(t, err)
	require.NoError(t, orders.Delete(ctx, tOrder{CustomerID: "c1", OrderID: "o001"}))
	_, err = orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: "o001"})
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, orders.Delete(ctx, tOrder{CustomerID: "c1", OrderID: "o001"}), "deleting a missing item is fine")
}

func TestSparseIndexAndUpdateRecomputesIndexKeys(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	o := order("c1", 2)
	o.Status = ""
	_, err := orders.Put(ctx, o)
	require.NoError(t, err)
	raw := rawItem(t, tbl, "CUST#c1", "ORDER#o002")
	assert.NotContains(t, raw, "GSI1PK", "an empty index input leaves the item out of the index")
	assert.NotContains(t, raw, "GSI1SK")
	assert.Contains(t, raw, "GSI2PK")

	key := tOrder{CustomerID: "c1", OrderID: "o002"}
	_, err = orders.Update(ctx, key, Set("status", "SHIPPED"))
	require.ErrorIs(t, err, ErrInvalidKey)
	assert.Contains(t, err.Error(), "CreatedAt", "the error names the missing input")

	key.CreatedAt = o.CreatedAt
	got, err := orders.Update(ctx, key, Set("status", "SHIPPED"))
	require.NoError(t, err)
	assert.Equal(t, "SHIPPED", got.Status)
	raw = rawItem(t, tbl, "CUST#c1", "ORDER#o002")
	pk, _ := sAttr(raw, "GSI1PK")
	sk, _ := sAttr(raw, "GSI1SK")
	assert.Equal(t, "STATUS#SHIPPED", pk)
	assert.Equal(t, "2024-05-01T09:02:00.000000000Z#o002", sk)
	page, err := orders.Query(ctx, tOrder{Status: "SHIPPED"}, On("GSI1"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "o002", page.Items[0].OrderID)

	_, err = orders.Update(ctx, tOrder{CustomerID: "c1", OrderID: "o002"}, Remove("status"))
	require.NoError(t, err, "removing an input needs no other input: the index keys go")
	raw = rawItem(t, tbl, "CUST#c1", "ORDER#o002")
	assert.NotContains(t, raw, "GSI1PK")
	assert.NotContains(t, raw, "GSI1SK")
	assert.NotContains(t, raw, "status")
}

func TestUpdate(t *testing.T) {
	tbl, _ := newTestTable(t)
	_, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	o := order("c1", 3)
	o.Note = "fragile"
	_, err := orders.Put(ctx, o)
	require.NoError(t, err)
	key := tOrder{CustomerID: "c1", OrderID: "o003"}

	got, err := orders.Update(ctx, key, Set("total", 999), Remove("note"), Add("count", 2))
	require.NoError(t, err)
	assert.Equal(t, int64(999), got.Total)
	assert.Equal(t, "", got.Note)
	assert.Equal(t, 2, got.Count)
	got, err = orders.Update(ctx, key, Add("count", 3), Set("tags", []string{"a", "b"}))
	require.NoError(t, err)
	assert.Equal(t, 5, got.Count)
	assert.Equal(t, []string{"a", "b"}, got.Tags)

	for name, opts := range map[string][]UpdateOption{
		"base key input":  {Set("orderId", "o9")},
		"unknown":         {Set("nope", 1)},
		"wrong type":      {Set("total", "many")},
		"overflow":        {Set("count", uint64(1)<<63)},
		"twice":           {Set("total", 1), Set("total", 2)},
		"add to string":   {Add("note", "x")},
		"key attribute":   {Set("PK", "x")},
		"no changes":      {},
		"add index input": {Add("status", 1)},
	} {
		_, err := orders.Update(ctx, key, opts...)
		assert.ErrorIs(t, err, ErrInvalidInput, name)
	}
	_, err = orders.Update(ctx, tOrder{CustomerID: "c1", OrderID: "missing"}, Set("total", 1))
	assert.ErrorIs(t, err, ErrNotFound)

	created, err := orders.Update(ctx, tOrder{CustomerID: "c2", OrderID: "new"}, Set("total", 7), Upsert())
	require.NoError(t, err)
	assert.Equal(t, tOrder{CustomerID: "c2", OrderID: "new", Total: 7}, created)
}

func TestKeyErrorsSendNothing(t *testing.T) {
	tbl, client := newTestTable(t)
	customers, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	cases := map[string]struct {
		o     tOrder
		field string
	}{
		"delimiter":      {tOrder{CustomerID: "c1", OrderID: "o#1", CreatedAt: t0}, "OrderID"},
		"empty base key": {tOrder{CustomerID: "c1", CreatedAt: t0}, "OrderID"},
		"too long":       {tOrder{CustomerID: strings.Repeat("x", 2100), OrderID: "o1", CreatedAt: t0}, "CustomerID"},
		"index value":    {tOrder{CustomerID: "c1", OrderID: "o1", Status: "A#B", CreatedAt: t0}, "Status"},
	}
	for name, c := range cases {
		_, err := orders.Put(ctx, c.o)
		require.ErrorIs(t, err, ErrInvalidKey, name)
		var ke *KeyError
		require.ErrorAs(t, err, &ke, name)
		assert.Equal(t, "tOrder", ke.Entity)
		assert.Equal(t, c.field, ke.Field, name)
		if c.field != "" {
			assert.Contains(t, err.Error(), c.field)
		}
	}
	_, err := customers.Put(ctx, tCustomer{CustomerID: "c1", Name: strings.Repeat("n", 410*1024)})
	assert.ErrorIs(t, err, ErrInvalidInput, "items over 400 KB are refused before sending")
	assert.Equal(t, int64(0), client.count("PutItem"), "nothing was sent")
}

func TestTransactCreatesAllOrNothing(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	o := order("c1", 4)
	tx := []TxItem{orders.TxCreate(o)}
	for i := 1; i <= 3; i++ {
		tx = append(tx, items.TxCreate(tLineItem{CustomerID: "c1", OrderID: o.OrderID, Line: i, SKU: "sku" + itoa(i)}))
	}
	require.NoError(t, tbl.Transact(ctx, tx...))

	// A second order whose third line item exists already: nothing is written.
	o2 := order("c1", 5)
	_, err := items.Put(ctx, tLineItem{CustomerID: "c1", OrderID: o2.OrderID, Line: 2, SKU: "old"})
	require.NoError(t, err)
	err = tbl.Transact(ctx,
		orders.TxCreate(o2),
		items.TxCreate(tLineItem{CustomerID: "c1", OrderID: o2.OrderID, Line: 1, SKU: "new"}),
		items.TxCreate(tLineItem{CustomerID: "c1", OrderID: o2.OrderID, Line: 2, SKU: "new"}),
	)
	require.ErrorIs(t, err, ErrAlreadyExists)
	var txe *TxError
	require.ErrorAs(t, err, &txe)
	require.Len(t, txe.Reasons, 1)
	assert.Equal(t, 2, txe.Reasons[0].Index)
	assert.Equal(t, "tLineItem", txe.Reasons[0].Entity)
	assert.Equal(t, "ConditionalCheckFailed", txe.Reasons[0].Code)
	assert.Equal(t, "ORDER#o005#ITEM#0002", txe.Reasons[0].Key["SK"])
	_, err = orders.Get(ctx, tOrder{CustomerID: "c1", OrderID: o2.OrderID})
	assert.ErrorIs(t, err, ErrNotFound, "the order was rolled back")

	// A bad action is reported before anything is sent.
	before := client.count("TransactWriteItems")
	err = tbl.Transact(ctx, orders.TxCreate(order("c1", 6)), items.TxCreate(tLineItem{CustomerID: "c1", OrderID: "x#y", Line: 1}))
	require.ErrorIs(t, err, ErrInvalidKey)
	assert.Equal(t, before, client.count("TransactWriteItems"))
}

func TestParseKey(t *testing.T) {
	tbl := offlineTable(t)
	_, orders, items := registerAll(t, tbl)
	o, err := orders.ParseKey(map[string]string{"PK": "CUST#c1", "SK": "ORDER#o7"})
	require.NoError(t, err)
	assert.Equal(t, tOrder{CustomerID: "c1", OrderID: "o7"}, o)
	li, err := items.ParseKey(map[string]string{"PK": "CUST#c1", "SK": "ORDER#o7#ITEM#0012"})
	require.NoError(t, err)
	assert.Equal(t, tLineItem{CustomerID: "c1", OrderID: "o7", Line: 12}, li)
	_, err = items.ParseKey(map[string]string{"PK": "CUST#c1", "SK": "ORDER#o7"})
	assert.ErrorIs(t, err, ErrInvalidKey)
}

func TestItemErrorMessage(t *testing.T) {
	err := &ItemError{Op: "Get", Entity: "Order", Key: map[string]string{"SK": "ORDER#1", "PK": "CUST#1"}, Err: ErrNotFound}
	assert.Equal(t, `singletable: Get Order{PK="CUST#1", SK="ORDER#1"}: item not found`, err.Error())
	assert.True(t, errors.Is(err, ErrNotFound))
}

func TestEntityKey(t *testing.T) {
	tbl := offlineTable(t)
	_, orders, _ := registerAll(t, tbl)
	k, err := orders.Key(order("c1", 1))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"PK": "CUST#c1", "SK": "ORDER#o001", "GSI1PK": "STATUS#SHIPPED", "GSI1SK": "2024-05-01T09:01:00.000000000Z#o001",
		"GSI2PK": "CUST#c1", "GSI2SK": k["GSI2SK"],
	}, k)
	o := order("c1", 2)
	o.Status = ""
	k, err = orders.Key(o)
	require.NoError(t, err)
	assert.NotContains(t, k, "GSI1PK", "a sparse index key is left out")
	_, err = orders.Key(tOrder{CustomerID: "c1"})
	assert.ErrorIs(t, err, ErrInvalidKey)
}
