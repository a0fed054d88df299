package wire

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchOrder is bench/'s Order: 14 fields of the common kinds.
type benchOrder struct {
	CustomerID string            `dynamodbav:"customerId"`
	OrderID    string            `dynamodbav:"orderId"`
	Status     string            `dynamodbav:"status"`
	Currency   string            `dynamodbav:"currency"`
	Email      string            `dynamodbav:"email"`
	ShipTo     string            `dynamodbav:"shipTo"`
	CreatedAt  time.Time         `dynamodbav:"createdAt"`
	Tags       []string          `dynamodbav:"tags"`
	Attrs      map[string]string `dynamodbav:"attrs"`
	Version    int64             `dynamodbav:"version"`
	Quantity   int64             `dynamodbav:"quantity"`
	WeightG    int64             `dynamodbav:"weightG"`
	Total      float64           `dynamodbav:"total"`
	Paid       bool              `dynamodbav:"paid"`
}

func benchBody(tb testing.TB, n int) []byte {
	o := benchOrder{
		CustomerID: "cust-7d3f2a", OrderID: "ord-2024-000981", Status: "SHIPPED", Currency: "EUR",
		Email: "someone@example.com", ShipTo: "Rue de la Paix 1, 75002 Paris",
		CreatedAt: time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.UTC),
		Tags:      []string{"gift", "express", "fragile"}, Attrs: map[string]string{"channel": "web", "coupon": "SPRING24"},
		Version: 17, Quantity: 3, WeightG: 1250, Total: 129.95, Paid: true,
	}
	m, err := attributevalue.MarshalMap(o)
	if err != nil {
		tb.Fatal(err)
	}
	m["PK"] = &types.AttributeValueMemberS{Value: "CUST#cust-7d3f2a"}
	m["SK"] = &types.AttributeValueMemberS{Value: "ORDER#2024-03-09T14:05:07.123456789Z#ord-2024-000981"}
	m["Type"] = &types.AttributeValueMemberS{Value: "Order"}
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		items[i] = m
	}
	return queryBody(&jsonEnc{plain: true}, items, `,"LastEvaluatedKey":{"PK":{"S":"x"},"SK":{"S":"`+strconv.Itoa(n)+`"}}`)
}

// BenchmarkRead decodes a 100-item Query body with a Sink alone, without the SDK: the wire path's own
// cost per item.
func BenchmarkRead(b *testing.B) {
	body := benchBody(b, 100)
	p := planOf[benchOrder](b)
	tg, err := NewTarget(p, p.Ignore("PK", "SK", "Type", "_schema", "_wr0", "_wr1", "_wr2", "_wr3"), "Type", "Order", "", 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var sl slots[benchOrder]
		s := &Sink{Op: Query, Target: tg, Slots: &sl}
		if _, ok := s.read(body); !ok || len(sl.items) != 100 {
			b.Fatal("not decoded")
		}
	}
}
