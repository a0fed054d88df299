package sortcond

import (
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

type order struct {
	Customer string `dynamodbav:"customer"`
	OrderID  string `dynamodbav:"orderId"`
	N        int    `dynamodbav:"n"`
}

var (
	errInvalid    = errors.New("invalid input")
	errInvalidKey = errors.New("invalid key")
)

// condition is an entity query's condition on sk, rendered from "ORDER#{orderId}".
func condition(t *testing.T) Condition {
	t.Helper()
	plan, err := codec.PlanFor(reflect.TypeFor[order]())
	require.NoError(t, err)
	tmpl, err := keytmpl.Parse("ORDER#{orderId}", '#')
	require.NoError(t, err)
	id, _ := plan.Field("orderId")
	cust, _ := plan.Field("customer")
	return Condition{What: "Order", Attr: "sk", Tmpl: tmpl, TmplAttr: "sk", Inputs: []*codec.Field{id}, PKInputs: []*codec.Field{cust},
		Entity: "Order", HasInfo: true, KeyError: func(err error) error { return err }, Delim: '#', Invalid: errInvalid, InvalidKey: errInvalidKey, MaxBytes: 1024}
}

// TestBuild renders each comparison and its identity.
func TestBuild(t *testing.T) {
	c := condition(t)
	for _, tc := range []struct {
		op          Op
		values      [2]Value
		cond, ident string
	}{
		{0, [2]Value{}, "begins_with(#n0, :v0)", "\x00^ORDER#"},
		{Equal, [2]Value{{V: "ORDER#o1"}}, "#n0 = :v0", "\x00=ORDER#o1"},
		{Between, [2]Value{{V: "ORDER#a"}, {V: "ORDER#b"}}, "#n0 BETWEEN :v0 AND :v1", "\x00BORDER#a\x00ORDER#b"},
		{BeginsWith, [2]Value{{V: "ORDER#"}}, "begins_with(#n0, :v0)", "\x00^ORDER#"},
		{Tree, [2]Value{{V: "ORDER#o1"}}, "#n0 BETWEEN :v0 AND :v1", "\x00TORDER#o1"},
		{LessEqual, [2]Value{{V: order{}, Rendered: true, Key: "ORDER#", Missing: 0}}, "#n0 <= :v0", "\x00<=ORDER#" + MaxRune},
	} {
		var b expr.Builder
		cond, ident, err := c.Build(&b, tc.op, tc.values)
		require.NoError(t, err, tc.op)
		assert.Equal(t, tc.cond, cond, tc.op)
		assert.Equal(t, tc.ident, ident, tc.op)
	}
}

// TestBuildRefused names what is wrong with each refused value.
func TestBuildRefused(t *testing.T) {
	c := condition(t)
	for want, tc := range map[string]struct {
		op     Op
		values [2]Value
		err    error
	}{
		`Query Order: SKBetween bounds "ORDER#b" > "ORDER#a"`:                                     {Between, [2]Value{{V: "ORDER#b"}, {V: "ORDER#a"}}, errInvalid},
		`SKEqual("X") matches no Order, whose sk is rendered from "ORDER#{orderId}"`:              {Equal, [2]Value{{V: "X"}}, nil},
		`SKBeginsWith("X") matches no Order, whose sk always begins "ORDER#"`:                     {BeginsWith, [2]Value{{V: "X"}}, errInvalidKey},
		`SKEqual(""): a sort key value must be 1-1024 bytes of UTF-8`:                             {Equal, [2]Value{{V: ""}}, errInvalidKey},
		`SKEqual(5): a value of type int is not a sort key of Order`:                              {Equal, [2]Value{{V: 5}}, errInvalid},
		`orderId (Order.OrderID), a string`:                                                       {Less, [2]Value{{V: []int{1}}}, errInvalid},
		`SKEqual needs every input of sk "ORDER#{orderId}", and orderId (Order.OrderID) is unset`: {Equal, [2]Value{{V: order{}, Rendered: true, Key: "ORDER#", Missing: 0}}, errInvalidKey},
	} {
		var b expr.Builder
		_, _, err := c.Build(&b, tc.op, tc.values)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, want)
		}
	}
	c.Typ = types.ScalarAttributeTypeN
	var b expr.Builder
	_, _, err := c.Build(&b, Tree, [2]Value{{V: "1"}})
	assert.ErrorContains(t, err, "sk holds numbers, which have no prefixes")
	_, _, err = c.Build(&b, Equal, [2]Value{{V: "x"}})
	assert.ErrorContains(t, err, `SKEqual("x"): sk holds numbers, and this is not one`)
	_, _, err = c.Build(&b, Between, [2]Value{{V: "10"}, {V: "9"}})
	assert.ErrorContains(t, err, `SKBetween bounds "10" > "9"`, "numbers by value")
	assert.Equal(t, "…", QuoteValue([]int{1}))
	assert.Equal(t, `"x"`, QuoteValue("x"))
}

// TestNarrows narrows by a key value that sets an input of the sort key only.
func TestNarrows(t *testing.T) {
	c := condition(t)
	assert.True(t, c.Narrows(reflect.ValueOf(order{OrderID: "o1"})))
	assert.False(t, c.Narrows(reflect.ValueOf(order{Customer: "c1"})))
	assert.False(t, c.Narrows(reflect.Value{}))
	assert.Equal(t, BeginsWith, c.NarrowedOp(false))
	assert.Equal(t, Equal, c.NarrowedOp(true))
	c.Collection = true
	assert.Equal(t, Tree, c.NarrowedOp(true))
	assert.Equal(t, keytmpl.KindMissing, Input(c.Inputs[0], reflect.ValueOf(order{})).Kind)
	n, _ := codec.PlanFor(reflect.TypeFor[order]())
	nf, _ := n.Field("n")
	assert.Equal(t, keytmpl.KindMissing, Input(nf, reflect.ValueOf(order{})).Kind, "a zero number is unset")
}
