package singletable

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// keyBenchOrder has a three-part key: two strings and a fixed-width time.
type keyBenchOrder struct {
	_          struct{}  `Type:"KeyBenchOrder" PK:"ORDER#{customerId}#{createdAt:time}#{orderId}" SK:"META"`
	CustomerID string    `dynamodbav:"customerId"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status"`
}

var (
	sinkKey    string
	sinkKeyMap map[string]typesAV
)

// BenchmarkKeyRender renders the three-part key
// "ORDER#{customerId}#{createdAt:time}#{orderId}" from a struct, the way every Get,
// Put and Query does (keyTemplate.render), against the same key written by hand in
// the same run; and, for reference, from a map (Template.Render) and as a whole
// primary key with its attribute maps (entityInfo.primaryKey). The target is the
// entity path: at most 100 ns and 1 allocation, the string itself.
func BenchmarkKeyRender(b *testing.B) {
	tbl, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "bench")
	if err != nil {
		b.Fatal(err)
	}
	e, err := Register[keyBenchOrder](tbl)
	if err != nil {
		b.Fatal(err)
	}
	o := keyBenchOrder{CustomerID: "cust-7d3f2a", CreatedAt: time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.UTC), OrderID: "ord-2024-000981"}
	const want = "ORDER#cust-7d3f2a#2024-03-09T14:05:07.123456789Z#ord-2024-000981"
	sv := reflect.ValueOf(&o).Elem()
	info := e.info

	b.Run("entity", func(b *testing.B) {
		if k, _, err := info.pk.render(info, sv, false); err != nil || k != want {
			b.Fatalf("render = %q, %v; want %q", k, err, want)
		}
		b.ReportAllocs()
		for b.Loop() {
			k, _, err := info.pk.render(info, sv, false)
			if err != nil {
				b.Fatal(err)
			}
			sinkKey = k
		}
	})
	b.Run("hand", func(b *testing.B) {
		// The same checks and the same single allocation, written for this key alone.
		render := func(o *keyBenchOrder) string {
			var buf [128]byte
			k := append(buf[:0], "ORDER#"...)
			k = append(k, o.CustomerID...)
			k = append(k, '#')
			k = o.CreatedAt.UTC().AppendFormat(k, timeLayout)
			k = append(k, '#')
			k = append(k, o.OrderID...)
			return string(k)
		}
		if k := render(&o); k != want {
			b.Fatalf("hand = %q, want %q", k, want)
		}
		b.ReportAllocs()
		for b.Loop() {
			sinkKey = render(&o)
		}
	})
	b.Run("map", func(b *testing.B) {
		values := map[string]any{"customerId": o.CustomerID, "createdAt": o.CreatedAt, "orderId": o.OrderID}
		b.ReportAllocs()
		for b.Loop() {
			k, err := info.pk.tmpl.Render(values)
			if err != nil {
				b.Fatal(err)
			}
			sinkKey = k
		}
	})
	b.Run("primaryKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k, _, err := info.primaryKey(sv)
			if err != nil {
				b.Fatal(err)
			}
			sinkKeyMap = k
		}
	})
}
