package singletable

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type bnOrder struct {
	_         struct{}  `Type:"BnOrder" PK:"BNC#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"BNS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
	Customer  string    `dynamodbav:"customerId"`
	OrderID   string    `dynamodbav:"orderId"`
	Status    string    `dynamodbav:"status,omitempty"`
	Total     int64     `dynamodbav:"total"`
	CreatedAt time.Time `dynamodbav:"createdAt"`
	Email     string    `dynamodbav:"email,omitempty" singletable:"unique"`
	Version   int64     `dynamodbav:"version" singletable:"version"`
}

// TestAnyEntityOffline: values built from key inputs and JSON attributes, and
// bad input named (byname.go).
func TestAnyEntityOffline(t *testing.T) {
	tbl := offlineTable(t)
	_, err := Register[bnOrder](tbl)
	require.NoError(t, err)
	assert.Equal(t, []string{"BnOrder"}, tbl.EntityTypes())

	_, err = tbl.AnyEntity("BnOrdr")
	require.ErrorIs(t, err, ErrUnknownType)
	assert.Contains(t, err.Error(), `did you mean "BnOrder"`)

	e, err := tbl.AnyEntity("BnOrder")
	require.NoError(t, err)
	assert.Equal(t, []string{"customerId", "orderId"}, e.KeyInputs())

	v, err := e.FromKeyInputs(map[string]string{"customerId": "c1", "orderId": "o1", "total": "42", "createdAt": "2026-01-02"})
	require.NoError(t, err)
	assert.Equal(t, bnOrder{Customer: "c1", OrderID: "o1", Total: 42, CreatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, v)

	v, err = e.FromKeyInputs(map[string]string{"PK": "BNC#c1", "SK": "ORDER#o1"})
	require.NoError(t, err)
	assert.Equal(t, bnOrder{Customer: "c1", OrderID: "o1"}, v)

	_, err = e.FromKeyInputs(map[string]string{"PK": "BNC#c1", "orderId": "o1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = e.FromKeyInputs(map[string]string{"customerID": "c1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `did you mean "customerId"`)
	_, err = e.FromKeyInputs(map[string]string{"total": "many"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "total (bnOrder.Total)")

	var attrs map[string]any
	d := json.NewDecoder(strings.NewReader(`{"customerId":"c1","orderId":"o2","total":7,"createdAt":"2026-01-02T03:04:05Z"}`))
	d.UseNumber()
	require.NoError(t, d.Decode(&attrs))
	v, err = e.FromAttributes(attrs)
	require.NoError(t, err)
	o := v.(bnOrder)
	assert.Equal(t, int64(7), o.Total)
	back, err := e.Attributes(o)
	require.NoError(t, err)
	assert.Equal(t, json.Number("7"), back["total"])
	assert.Equal(t, "c1", back["customerId"])

	_, err = e.FromAttributes(map[string]any{"total": "seven"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "total (bnOrder.Total)")
	_, err = e.Key(struct{}{})
	require.ErrorIs(t, err, ErrInvalidInput)
	k, err := e.Key(bnOrder{Customer: "c1", OrderID: "o1"})
	require.NoError(t, err)
	assert.Equal(t, "BNC#c1", k["PK"])
}

// TestAnyEntityCalls: an AnyEntity's writes go through the entity's pipeline
// (version, unique values), and its reads decode T values.
func TestAnyEntityCalls(t *testing.T) {
	tbl, _ := newTestTable(t)
	typed, err := Register[bnOrder](tbl)
	require.NoError(t, err)
	e, err := tbl.AnyEntity("BnOrder")
	require.NoError(t, err)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

	v, err := e.Put(ctx, bnOrder{Customer: "c1", OrderID: "o1", Status: "NEW", CreatedAt: at, Email: "a@x"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), v.(bnOrder).Version)
	_, err = e.Put(ctx, bnOrder{Customer: "c1", OrderID: "o1", Status: "NEW", CreatedAt: at})
	require.ErrorIs(t, err, ErrConflict, "version 0 against a stored 1")
	_, err = e.Put(ctx, bnOrder{Customer: "c1", OrderID: "o2", Status: "NEW", CreatedAt: at, Email: "a@x"})
	require.ErrorIs(t, err, ErrNotUnique)

	got, err := e.Get(ctx, bnOrder{Customer: "c1", OrderID: "o1"})
	require.NoError(t, err)
	want, err := typed.Get(ctx, bnOrder{Customer: "c1", OrderID: "o1"})
	require.NoError(t, err)
	assert.Equal(t, want, got)

	page, err := e.Query(ctx, bnOrder{Status: "NEW"}, On("GSI1"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	page, err = e.Scan(ctx)
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	n, err := e.ScanCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n.Items)

	rep, err := e.SweepUnique(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Items)
	_, err = e.Sweep(ctx)
	require.ErrorIs(t, err, ErrInvalidInput, "no migrations")

	require.NoError(t, e.Delete(ctx, got))
	_, err = e.Get(ctx, bnOrder{Customer: "c1", OrderID: "o1"})
	require.ErrorIs(t, err, ErrNotFound)
}

// TestAnyEntityUnset: a nil or zero AnyEntity refuses every call.
func TestAnyEntityUnset(t *testing.T) {
	ctx := context.Background()
	for _, e := range []*AnyEntity{nil, {}} {
		assert.Empty(t, e.Type())
		assert.Nil(t, e.GoType())
		assert.Nil(t, e.KeyInputs())
		_, err := e.Get(ctx, bnOrder{})
		require.ErrorIs(t, err, ErrInvalidInput)
		_, err = e.FromKeyInputs(map[string]string{"a": "b"})
		require.ErrorIs(t, err, ErrInvalidInput)
		_, err = e.Scan(ctx)
		require.ErrorIs(t, err, ErrInvalidInput)
		_, err = e.Sweep(ctx)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorIs(t, e.Delete(ctx, bnOrder{}), ErrInvalidInput)
	}
}

// TestRawItemJSON: an item of unknown type as JSON values, every attribute
// type, as Attributes gives a typed item's.
func TestRawItemJSON(t *testing.T) {
	got := RawItem{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1.5"},
		"b": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "t": &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true}, "ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{3}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "y"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "3"}}},
	}.JSON()
	out, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, `{"s":"x","n":1.5,"b":"AQI=","t":true,"null":null,"ss":["a"],"ns":[2],"bs":["Aw=="],"l":["y"],"m":{"k":3}}`, string(out))
}
