package singletable

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable/internal/keytmpl"
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
	info := e.x.info

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
			k = o.CreatedAt.UTC().AppendFormat(k, keytmpl.TimeLayout)
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

// keyDirectOrder has placeholders of every kind keytmpl.Direct reads by offset.
type keyDirectOrder struct {
	_  struct{}  `Type:"KeyDirect" PK:"K#{s}#{i:08}#{u}#{i8}" SK:"{t:time}#{d:date}{x:unix}{r:rev}{ms:unixms}#{n}"`
	S  string    `dynamodbav:"s"`
	I  int32     `dynamodbav:"i"`
	U  uint8     `dynamodbav:"u"`
	I8 int8      `dynamodbav:"i8"`
	T  time.Time `dynamodbav:"t"`
	D  time.Time `dynamodbav:"d"`
	X  time.Time `dynamodbav:"x"`
	R  time.Time `dynamodbav:"r"`
	MS time.Time `dynamodbav:"ms"`
	N  int64     `dynamodbav:"n"`
}

// TestRenderDirect checks that reading inputs by offset (keytmpl.Direct) renders the
// same keys, and the same errors, as reading them through reflect.
func TestRenderDirect(t *testing.T) {
	tbl, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "bench")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Register[keyDirectOrder](tbl)
	if err != nil {
		t.Fatal(err)
	}
	info := e.x.info
	for _, kt := range []*keyTemplate{info.pk, info.sk} {
		if kt.direct == nil {
			t.Fatalf("%s: not rendered directly", kt.attr)
		}
	}
	tm := time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.FixedZone("Y", 3600))
	good := keyDirectOrder{S: "cust-7d3f2a", I: 42, U: 200, I8: -3, T: tm, D: tm, X: tm, R: tm, MS: tm, N: -17}
	cases := []func(o *keyDirectOrder){
		func(o *keyDirectOrder) {},
		func(o *keyDirectOrder) { o.S = "" },
		func(o *keyDirectOrder) { o.S = "a#b" },
		func(o *keyDirectOrder) { o.S = "abcdefghijk#" },
		func(o *keyDirectOrder) { o.S = "caf\xe9" },
		func(o *keyDirectOrder) { o.S = "café-ünïcode" },
		func(o *keyDirectOrder) { o.S = strings.Repeat("x", 3000) },
		func(o *keyDirectOrder) { o.I = -1 },
		func(o *keyDirectOrder) { o.I = 1 << 30 },
		func(o *keyDirectOrder) { o.I, o.U, o.I8, o.N = 0, 0, 0, 0 },
		func(o *keyDirectOrder) { o.T = time.Time{} },
		func(o *keyDirectOrder) { o.D = time.Time{} },
		func(o *keyDirectOrder) { o.X = time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC) },
		func(o *keyDirectOrder) { o.R = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC) },
		func(o *keyDirectOrder) { o.T = time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC) },
		func(o *keyDirectOrder) { o.T = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		func(o *keyDirectOrder) { o.T = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) },
		func(o *keyDirectOrder) { o.D = time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("Z", 7200)) },
		func(o *keyDirectOrder) { o.MS = time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC) },
		func(o *keyDirectOrder) { o.X = time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	for i, change := range cases {
		o := good
		change(&o)
		sv := reflect.ValueOf(&o).Elem()
		for _, kt := range []*keyTemplate{info.pk, info.sk} {
			for _, prefix := range []bool{false, true} {
				k, complete, err := kt.render(info, sv, prefix)
				vals := make([]keytmpl.Value, len(kt.fields))
				for j, f := range kt.fields {
					vals[j] = keytmpl.ValueOfField(f, sv)
				}
				wk, wcomplete, werr := kt.renderValues(info, vals, nil, prefix)
				if k != wk || complete != wcomplete || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Errorf("case %d, %s, prefix %v: render = %q, %v, %v; through reflect %q, %v, %v", i, kt.attr, prefix, k, complete, err, wk, wcomplete, werr)
				}
			}
		}
	}
}
