package bench

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/wire"
)

// The scale curve: how the cost of a read grows with the items it returns, through
// the canned transport. Query pages of 1, 10, 100 and 1,000 items, and a Scan of
// 10,000 items in ten pages of 1,000 (DynamoDB's pages are at most 1 MB; these are
// about 650 KB). Variants: the raw SDK call with attributevalue, with the
// hand-written decoder, and the library (for the Scan, which the library does not
// offer as such, its wire decoder on the SDK's Scan call, as Sweep and fan-out reads
// would use it); "singletable-sdk" is the library decoding the SDK's attribute
// values.

var scaleSizes = []int{1, 10, 100, 1000}

const (
	scanItems = 10000
	scanPage  = 1000
)

// scaleVariants returns the variants of a Query page of n items.
func scaleVariants(tb testing.TB, n int) []variant {
	h := newCannedHTTP(map[string][]byte{"Query": itemsBody(tb, n, "")})
	f := newFixture(tb, cannedClient(h), "orders")
	ctx := context.Background()
	vs := f.queryVariants(ctx)
	return pick(vs, "raw+av", "raw+hand", "singletable-sdk", "singletable")
}

// scanVariants returns the variants of a 10,000-item Scan.
func scanVariants(tb testing.TB) []variant {
	h := newCannedHTTP(nil)
	for p := range scanItems / scanPage {
		last := ""
		if p < scanItems/scanPage-1 {
			last = "page#" + strconv.Itoa(p+1)
		}
		h.scan = append(h.scan, canned(itemsBody(tb, scanPage, last)))
	}
	client := cannedClient(h)
	ctx := context.Background()
	scan := func(optFns ...func(*dynamodb.Options)) func(each func(*dynamodb.ScanOutput) error) (int, error) {
		return func(each func(*dynamodb.ScanOutput) error) (int, error) {
			in := &dynamodb.ScanInput{TableName: aws.String("orders")}
			pages := 0
			for {
				out, err := client.Scan(ctx, in, optFns...)
				if err != nil {
					return 0, err
				}
				if err := each(out); err != nil {
					return 0, err
				}
				pages++
				if len(out.LastEvaluatedKey) == 0 {
					if pages != scanItems/scanPage {
						return 0, fmt.Errorf("scan: %d pages", pages)
					}
					return scanItems, nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		}
	}
	plan, err := codec.PlanFor(reflectOrder)
	if err != nil {
		tb.Fatal(err)
	}
	target, err := wire.NewTarget(plan, plan.Ignore(tablePK, tableSK, tableType, "_schema", "_wr0", "_wr1", "_wr2", "_wr3"), tableType, "Order", "", 0, nil, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return []variant{
		{"raw+av", func() (int, error) {
			n := 0
			_, err := scan()(func(out *dynamodb.ScanOutput) error {
				var items []Order
				err := attributevalue.UnmarshalListOfMaps(out.Items, &items)
				n += len(items)
				return err
			})
			return n, err
		}},
		{"raw+hand", func() (int, error) {
			n := 0
			_, err := scan()(func(out *dynamodb.ScanOutput) error {
				items := make([]Order, len(out.Items))
				for i, m := range out.Items {
					if err := handDecode(m, &items[i]); err != nil {
						return err
					}
				}
				n += len(items)
				return nil
			})
			return n, err
		}},
		{"singletable", func() (int, error) {
			n := 0
			var sl orderSlots
			s := &wire.Sink{Op: wire.Scan, Target: target, Slots: &sl}
			_, err := scan(s.Option())(func(out *dynamodb.ScanOutput) error {
				if !s.Decoded() || len(out.Items) != 0 {
					return fmt.Errorf("scan page not decoded on the wire")
				}
				n += len(sl.items)
				return nil
			})
			return n, err
		}},
	}
}

var reflectOrder = reflect.TypeFor[Order]()

// orderSlots keeps the Orders of one Scan page.
type orderSlots struct{ items []Order }

func (s *orderSlots) Hint(n int) { s.items = slices.Grow(s.items, n) }
func (s *orderSlots) Next(*wire.Target) unsafe.Pointer {
	s.items = append(s.items, Order{})
	return unsafe.Pointer(&s.items[len(s.items)-1])
}
func (s *orderSlots) Drop(*wire.Target) { s.items = s.items[:len(s.items)-1] }

// Reset starts a page: a new slice, as a caller keeping each page's items would.
func (s *orderSlots) Reset() { s.items = nil }

// BenchmarkScale runs each variant of each size as its own sub-benchmark, for exact
// allocation counts per call (the table divides by the items).
func BenchmarkScale(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run("Query"+strconv.Itoa(n), func(b *testing.B) { standard(b, scaleVariants(b, n)) })
	}
	b.Run("Scan10000", func(b *testing.B) { standard(b, scanVariants(b)) })
}

// BenchmarkScaleTime times the variants of each size interleaved (see [interleaved]),
// per item.
func BenchmarkScaleTime(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run("Query"+strconv.Itoa(n), func(b *testing.B) { interleaved(b, scaleVariants(b, n), 1, n, "item") })
	}
	b.Run("Scan10000", func(b *testing.B) { interleaved(b, scanVariants(b), 1, scanItems, "item") })
}

// TestScaleSameWork checks that every variant of every size reads every item.
func TestScaleSameWork(t *testing.T) {
	for _, n := range scaleSizes {
		for _, v := range scaleVariants(t, n) {
			if got, err := v.run(); err != nil || got != n {
				t.Errorf("Query%d %s: %d items, %v", n, v.name, got, err)
			}
		}
	}
	for _, v := range scanVariants(t) {
		if got, err := v.run(); err != nil || got != scanItems {
			t.Errorf("Scan %s: %d items, %v", v.name, got, err)
		}
	}
}
