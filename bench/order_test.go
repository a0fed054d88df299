package bench

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Order is the 14-field item every benchmark here uses: strings, a time, a []string, a
// map[string]string, int64s, a float64 and a bool. The blank field makes it a
// singletable entity; the dynamo tags give guregu/dynamo the same attribute names.
type Order struct {
	_          struct{}          `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{createdAt:time}#{orderId}"`
	CustomerID string            `dynamodbav:"customerId" dynamo:"customerId"`
	OrderID    string            `dynamodbav:"orderId" dynamo:"orderId"`
	Status     string            `dynamodbav:"status" dynamo:"status"`
	Currency   string            `dynamodbav:"currency" dynamo:"currency"`
	Email      string            `dynamodbav:"email" dynamo:"email"`
	ShipTo     string            `dynamodbav:"shipTo" dynamo:"shipTo"`
	CreatedAt  time.Time         `dynamodbav:"createdAt" dynamo:"createdAt"`
	Tags       []string          `dynamodbav:"tags" dynamo:"tags"`
	Attrs      map[string]string `dynamodbav:"attrs" dynamo:"attrs"`
	Version    int64             `dynamodbav:"version" dynamo:"version"`
	Quantity   int64             `dynamodbav:"quantity" dynamo:"quantity"`
	WeightG    int64             `dynamodbav:"weightG" dynamo:"weightG"`
	Total      float64           `dynamodbav:"total" dynamo:"total"`
	Paid       bool              `dynamodbav:"paid" dynamo:"paid"`
}

// sampleOrder is the same value internal/codec's benchmarks use.
func sampleOrder() Order {
	return Order{
		CustomerID: "cust-7d3f2a",
		OrderID:    "ord-2024-000981",
		Status:     "SHIPPED",
		Currency:   "EUR",
		Email:      "someone@example.com",
		ShipTo:     "Rue de la Paix 1, 75002 Paris",
		CreatedAt:  time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.UTC),
		Tags:       []string{"gift", "express", "fragile"},
		Attrs:      map[string]string{"channel": "web", "coupon": "SPRING24"},
		Version:    17,
		Quantity:   3,
		WeightG:    1250,
		Total:      129.95,
		Paid:       true,
	}
}

// The table layout of the raw SDK baselines, written by hand as a user of the bare SDK
// would: the same attribute names and key formats as Order's templates.
const (
	tablePK   = "PK"
	tableSK   = "SK"
	tableType = "Type"
	keyTime   = "2006-01-02T15:04:05.000000000Z" // singletable's {t:time}
)

func rawPK(o *Order) string { return "CUST#" + o.CustomerID }
func rawSK(o *Order) string {
	return "ORDER#" + o.CreatedAt.UTC().Format(keyTime) + "#" + o.OrderID
}

// rawKey is the primary key a raw SDK user builds for GetItem.
func rawKey(o *Order) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tablePK: &types.AttributeValueMemberS{Value: rawPK(o)},
		tableSK: &types.AttributeValueMemberS{Value: rawSK(o)},
	}
}

// addKeys adds the key and type attributes to an encoded item, as singletable does.
func addKeys(item map[string]types.AttributeValue, o *Order) {
	item[tablePK] = &types.AttributeValueMemberS{Value: rawPK(o)}
	item[tableSK] = &types.AttributeValueMemberS{Value: rawSK(o)}
	item[tableType] = &types.AttributeValueMemberS{Value: "Order"}
}

// The hand-written baselines, copied from internal/codec/bench_test.go: what a careful
// person writes for Order, once with one allocation per attribute value and once with
// the members taken from one backing array per kind.

func handEncode(o *Order) map[string]types.AttributeValue {
	tags := make([]types.AttributeValue, len(o.Tags))
	for i, t := range o.Tags {
		tags[i] = &types.AttributeValueMemberS{Value: t}
	}
	attrs := make(map[string]types.AttributeValue, len(o.Attrs))
	for k, v := range o.Attrs {
		attrs[k] = &types.AttributeValueMemberS{Value: v}
	}
	return map[string]types.AttributeValue{
		"customerId": &types.AttributeValueMemberS{Value: o.CustomerID},
		"orderId":    &types.AttributeValueMemberS{Value: o.OrderID},
		"status":     &types.AttributeValueMemberS{Value: o.Status},
		"currency":   &types.AttributeValueMemberS{Value: o.Currency},
		"email":      &types.AttributeValueMemberS{Value: o.Email},
		"shipTo":     &types.AttributeValueMemberS{Value: o.ShipTo},
		"createdAt":  &types.AttributeValueMemberS{Value: o.CreatedAt.Format(time.RFC3339Nano)},
		"tags":       &types.AttributeValueMemberL{Value: tags},
		"attrs":      &types.AttributeValueMemberM{Value: attrs},
		"version":    &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Version, 10)},
		"quantity":   &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Quantity, 10)},
		"weightG":    &types.AttributeValueMemberN{Value: strconv.FormatInt(o.WeightG, 10)},
		"total":      &types.AttributeValueMemberN{Value: strconv.FormatFloat(o.Total, 'f', -1, 64)},
		"paid":       &types.AttributeValueMemberBOOL{Value: o.Paid},
	}
}

func handEncodeSlab(o *Order) map[string]types.AttributeValue {
	s := make([]types.AttributeValueMemberS, 7+len(o.Tags)+len(o.Attrs))
	n := make([]types.AttributeValueMemberN, 4)
	tags := make([]types.AttributeValue, len(o.Tags))
	for i, t := range o.Tags {
		s[7+i].Value = t
		tags[i] = &s[7+i]
	}
	attrs := make(map[string]types.AttributeValue, len(o.Attrs))
	i := 7 + len(o.Tags)
	for k, v := range o.Attrs {
		s[i].Value = v
		attrs[k] = &s[i]
		i++
	}
	s[0].Value, s[1].Value, s[2].Value, s[3].Value, s[4].Value, s[5].Value = o.CustomerID, o.OrderID, o.Status, o.Currency, o.Email, o.ShipTo
	s[6].Value = o.CreatedAt.Format(time.RFC3339Nano)
	n[0].Value = strconv.FormatInt(o.Version, 10)
	n[1].Value = strconv.FormatInt(o.Quantity, 10)
	n[2].Value = strconv.FormatInt(o.WeightG, 10)
	n[3].Value = strconv.FormatFloat(o.Total, 'f', -1, 64)
	return map[string]types.AttributeValue{
		"customerId": &s[0], "orderId": &s[1], "status": &s[2], "currency": &s[3], "email": &s[4], "shipTo": &s[5],
		"createdAt": &s[6], "tags": &types.AttributeValueMemberL{Value: tags}, "attrs": &types.AttributeValueMemberM{Value: attrs},
		"version": &n[0], "quantity": &n[1], "weightG": &n[2], "total": &n[3],
		"paid": &types.AttributeValueMemberBOOL{Value: o.Paid},
	}
}

func handDecode(m map[string]types.AttributeValue, o *Order) error {
	str := func(name string, dst *string) {
		if s, ok := m[name].(*types.AttributeValueMemberS); ok {
			*dst = s.Value
		}
	}
	num := func(name string, dst *int64) error {
		if n, ok := m[name].(*types.AttributeValueMemberN); ok {
			i, err := strconv.ParseInt(n.Value, 10, 64)
			if err != nil {
				return err
			}
			*dst = i
		}
		return nil
	}
	str("customerId", &o.CustomerID)
	str("orderId", &o.OrderID)
	str("status", &o.Status)
	str("currency", &o.Currency)
	str("email", &o.Email)
	str("shipTo", &o.ShipTo)
	if s, ok := m["createdAt"].(*types.AttributeValueMemberS); ok {
		t, err := time.Parse(time.RFC3339, s.Value)
		if err != nil {
			return err
		}
		o.CreatedAt = t
	}
	if l, ok := m["tags"].(*types.AttributeValueMemberL); ok {
		o.Tags = make([]string, len(l.Value))
		for i, x := range l.Value {
			if s, ok := x.(*types.AttributeValueMemberS); ok {
				o.Tags[i] = s.Value
			}
		}
	}
	if mm, ok := m["attrs"].(*types.AttributeValueMemberM); ok {
		o.Attrs = make(map[string]string, len(mm.Value))
		for k, x := range mm.Value {
			if s, ok := x.(*types.AttributeValueMemberS); ok {
				o.Attrs[k] = s.Value
			}
		}
	}
	if err := num("version", &o.Version); err != nil {
		return err
	}
	if err := num("quantity", &o.Quantity); err != nil {
		return err
	}
	if err := num("weightG", &o.WeightG); err != nil {
		return err
	}
	if n, ok := m["total"].(*types.AttributeValueMemberN); ok {
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return err
		}
		o.Total = f
	}
	if b, ok := m["paid"].(*types.AttributeValueMemberBOOL); ok {
		o.Paid = b.Value
	}
	return nil
}
