package wire

import (
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// FuzzResponse runs arbitrary response bodies through the SDK's path and the wire path of every
// operation: never a panic, and never a difference (values, errors, the rest of the output), whatever
// the body. Seeds: generated kitchen items in each operation's response, plain and mutated.
func FuzzResponse(f *testing.F) {
	for i := range 24 {
		r := rand.New(rand.NewPCG(uint64(i), 22))
		g := &gen{r: r}
		items := make([]map[string]types.AttributeValue, 1+r.IntN(3))
		for j := range items {
			items[j] = g.kitchenItem(i%2 == 1)
		}
		op := ops[i%len(ops)]
		f.Add(uint8(op), bodyFor(&jsonEnc{r: r, plain: i%3 == 0}, op, items))
	}
	f.Add(uint8(Query), []byte(`{"Count":1,"Items":[{"Type":{"S":"Kitchen"},"SK":{"S":"s"},"s":{"S":"a\u00e9\ud83d\ude00"},"strs":{"L":[{"S":"x"},{"NULL":true}]},"m":{"M":{"k":{"N":"1"}}}}],"ScannedCount":1}`))
	x := newHarness(f)
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		o := ops[int(op)%len(ops)]
		x.compare(t, o, body)
	})
}
