package codec

import (
	"maps"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The baselines: what a careful person would write by hand for Order, once with one allocation per
// attribute value and once with the members taken from one backing array per kind.

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

var sinkMap map[string]types.AttributeValue

func BenchmarkEncodeOrder(b *testing.B) {
	o := sampleOrder()
	p, err := PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		v := reflect.ValueOf(&o).Elem()
		for b.Loop() {
			m, err := p.Encode(v)
			if err != nil {
				b.Fatal(err)
			}
			sinkMap = m
		}
	})
	b.Run("attributevalue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := attributevalue.MarshalMap(&o)
			if err != nil {
				b.Fatal(err)
			}
			sinkMap = m
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkMap = handEncode(&o)
		}
	})
	b.Run("hand-slab", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkMap = handEncodeSlab(&o)
		}
	})
}

// BenchmarkDecodeOrder decodes into one heap-allocated Order, reset each time, as a caller decoding into
// its result would: with a stack variable the hand-written decoder would not pay for write barriers.
func BenchmarkDecodeOrder(b *testing.B) {
	m := mustMarshal(b, sampleOrder())
	p, err := PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		b.Fatal(err)
	}
	o := new(Order)
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		v := reflect.ValueOf(o).Elem()
		for b.Loop() {
			*o = Order{}
			if err := p.Decode(m, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A single-table item also carries key attributes that no field has.
	withKeys := maps.Clone(m)
	for _, k := range []string{"PK", "SK", "GSI1PK", "GSI1SK", "Type"} {
		withKeys[k] = &types.AttributeValueMemberS{Value: "CUST#cust-7d3f2a#ORDER#ord-2024-000981"}
	}
	b.Run("codec+keys", func(b *testing.B) {
		b.ReportAllocs()
		v := reflect.ValueOf(o).Elem()
		for b.Loop() {
			*o = Order{}
			if err := p.Decode(withKeys, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("attributevalue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			*o = Order{}
			if err := attributevalue.UnmarshalMap(m, o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			*o = Order{}
			if err := handDecode(m, o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
