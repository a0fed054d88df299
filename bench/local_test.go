package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/singletable/singletable/dynamolocal"
	"github.com/singletable/singletable/internal/leakcheck"
)

// local is the DynamoDB Local of this test binary, started by the first benchmark that
// asks for it: BenchmarkLocal alone.
var local dynamolocal.Shared

// TestMain runs the tests and benchmarks, stops DynamoDB Local, and fails the run if
// a goroutine is left behind, as every test binary of the library does. The one
// goroutine it ignores is Testcontainers' connection to Ryuk, which stays open when
// Ryuk is enabled (the default with Docker).
func TestMain(m *testing.M) {
	os.Exit(leakcheck.After(local.Run(m),
		goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*Reaper).connect.func1")))
}

// BenchmarkLocal runs Get, Put and a Query of a 100-item page end to end against
// DynamoDB Local, the library and the raw SDK with attributevalue interleaved call by
// call (see [interleaved]); for Put also the raw SDK with the library's condition, for
// Get and Query also the library decoding the SDK's attribute values (as it did
// before the wire path).
// Over a real connection the library's microseconds should vanish into the round
// trip, so the benchmark table compares their median calls as a ratio. It is skipped when no DynamoDB
// Local can be had, and fails then under CI=true.
func BenchmarkLocal(b *testing.B) {
	client := local.Client(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	name := dynamolocal.TableName(b)
	f := newFixture(b, client, name)
	t := f.orders.Table()
	if err := t.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := t.DeleteTable(ctx); err != nil {
			b.Errorf("delete table: %v", err)
		}
	})
	// The partition Query reads: f.order, which Get reads and Put rewrites, and 99 more.
	for i := range queryItems {
		o := f.order
		if i > 0 {
			o.OrderID = fmt.Sprintf("%s-%02d", f.order.OrderID, i)
		}
		if _, err := f.orders.Put(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	// Fewer variants than through the canned transport: more rounds in the time.
	b.Run("Get", func(b *testing.B) {
		interleaved(b, pick(f.getVariants(ctx), "raw+av", "singletable-sdk", "singletable"), 1, 1, "op")
	})
	b.Run("Put", func(b *testing.B) {
		interleaved(b, pick(f.putVariants(ctx), "raw+av", "raw+av+guard", "singletable"), 1, 1, "op")
	})
	b.Run("Query100", func(b *testing.B) {
		interleaved(b, pick(f.queryVariants(ctx), "raw+av", "singletable-sdk", "singletable"), 1, 1, "op")
	})
}

// pick returns the named variants, in the order given.
func pick(vs []variant, names ...string) []variant {
	var out []variant
	for _, n := range names {
		for _, v := range vs {
			if v.name == n {
				out = append(out, v)
			}
		}
	}
	return out
}
