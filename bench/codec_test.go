package bench

import (
	"maps"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"

	"github.com/singletable/singletable/internal/codec"
)

var sinkItem map[string]types.AttributeValue

// encoders encode o with singletable's compiled codec (internal/codec, which this
// module may import: its path is under the library's), attributevalue, guregu/dynamo
// and the two hand-written encoders.
func encoders(tb testing.TB, o *Order) []variant {
	plan, err := codec.PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		tb.Fatal(err)
	}
	keep := func(m map[string]types.AttributeValue, err error) (int, error) {
		sinkItem = m
		return 1, err
	}
	return []variant{
		{"singletable", func() (int, error) { return keep(plan.Encode(reflect.ValueOf(o).Elem())) }},
		{"attributevalue", func() (int, error) { return keep(attributevalue.MarshalMap(o)) }},
		{"guregu", func() (int, error) { return keep(dynamo.MarshalItem(o)) }},
		{"hand", func() (int, error) { return keep(handEncode(o), nil) }},
		{"hand-slab", func() (int, error) { return keep(handEncodeSlab(o), nil) }},
	}
}

// decoders decode item into one heap-allocated Order, reset each time, as a caller
// decoding into its result would; it returns that Order too.
func decoders(tb testing.TB, item map[string]types.AttributeValue) ([]variant, *Order) {
	plan, err := codec.PlanFor(reflect.TypeFor[Order]())
	if err != nil {
		tb.Fatal(err)
	}
	// The attributes a stored Order carries beside its fields, which the library
	// passes as ignored (entityInfo.ignored): the table's keys and type attribute,
	// then its schema attribute and receipt slots.
	ignored := plan.Ignore(tablePK, tableSK, tableType, "_schema", "_wr0", "_wr1", "_wr2", "_wr3")
	o := new(Order)
	dec := func(f func() error) func() (int, error) {
		return func() (int, error) {
			*o = Order{}
			return 1, f()
		}
	}
	return []variant{
		{"singletable", dec(func() error { return plan.DecodeIgnoring(item, reflect.ValueOf(o).Elem(), ignored) })},
		{"attributevalue", dec(func() error { return attributevalue.UnmarshalMap(item, o) })},
		{"guregu", dec(func() error { return dynamo.UnmarshalItem(item, o) })},
		{"hand", dec(func() error { return handDecode(item, o) })},
	}, o
}

// BenchmarkCodec encodes and decodes one Order with each codec, one sub-benchmark per
// codec: the allocation counts of the benchmark table come from here.
func BenchmarkCodec(b *testing.B) {
	o := sampleOrder()
	b.Run("Encode", func(b *testing.B) { standard(b, encoders(b, &o)) })
	b.Run("Decode", func(b *testing.B) {
		vs, _ := decoders(b, storedItem(b))
		standard(b, vs)
	})
}

// BenchmarkCodecTime times the same codecs interleaved (see [interleaved]), 64 calls
// per batch: the time ratios of the benchmark table come from here.
func BenchmarkCodecTime(b *testing.B) {
	o := sampleOrder()
	b.Run("Encode", func(b *testing.B) { interleaved(b, encoders(b, &o), 64, 1, "op") })
	b.Run("Decode", func(b *testing.B) {
		vs, _ := decoders(b, storedItem(b))
		interleaved(b, vs, 64, 1, "op")
	})
}

// storedItem is sampleOrder as singletable stores it: fields, keys and type, which no
// field takes when decoding.
func storedItem(tb testing.TB) map[string]types.AttributeValue {
	o := sampleOrder()
	item, err := attributevalue.MarshalMap(&o)
	if err != nil {
		tb.Fatal(err)
	}
	addKeys(item, &o)
	return item
}

// TestCodecsAgree checks that the codecs compared do the same work: every encoder
// writes the same attributes, and every decoder gives back the same Order.
func TestCodecsAgree(t *testing.T) {
	o := sampleOrder()
	want, err := attributevalue.MarshalMap(&o)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range encoders(t, &o) {
		if _, err := v.run(); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if !maps.EqualFunc(sinkItem, want, func(a, b types.AttributeValue) bool { return reflect.DeepEqual(a, b) }) {
			t.Errorf("%s encodes\n%s\nwant (attributevalue)\n%s", v.name, dump(sinkItem), dump(want))
		}
	}
	decs, got := decoders(t, storedItem(t))
	for _, v := range decs {
		if _, err := v.run(); err != nil {
			t.Errorf("%s: %v", v.name, err)
		} else if !sameOrder(*got, o) {
			t.Errorf("%s decodes %+v, want %+v", v.name, *got, o)
		}
	}
}

func sameOrder(a, b Order) bool {
	ta, tb := a.CreatedAt, b.CreatedAt
	a.CreatedAt, b.CreatedAt = ta.UTC(), tb.UTC()
	return ta.Equal(tb) && reflect.DeepEqual(a, b)
}

func dump(m map[string]types.AttributeValue) string {
	j, err := attributevalue.MarshalMapJSON(m)
	if err != nil {
		return err.Error()
	}
	return string(j)
}
