package singletable

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// mixedAudit counts, per item key, how often the library sent it in a batch
// request and how often DynamoDB (the fault injector) left it unprocessed.
type mixedAudit struct {
	ItemClient
	mu                sync.Mutex // protects the maps
	sent, unprocessed map[string]int
}

func newMixedAudit(c ItemClient) *mixedAudit {
	return &mixedAudit{ItemClient: c, sent: map[string]int{}, unprocessed: map[string]int{}}
}

func (a *mixedAudit) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	key := func(r types.WriteRequest) string {
		if r.PutRequest != nil {
			return "put " + auditKey(r.PutRequest.Item)
		}
		return "delete " + auditKey(r.DeleteRequest.Key)
	}
	a.mu.Lock()
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			a.sent[key(r)]++
		}
	}
	a.mu.Unlock()
	out, err := a.ItemClient.BatchWriteItem(ctx, in, o...)
	if err != nil {
		return out, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, reqs := range out.UnprocessedItems {
		for _, r := range reqs {
			a.unprocessed[key(r)]++
		}
	}
	return out, err
}

func (a *mixedAudit) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	a.mu.Lock()
	for _, ka := range in.RequestItems {
		for _, k := range ka.Keys {
			a.sent[auditKey(k)]++
		}
	}
	a.mu.Unlock()
	out, err := a.ItemClient.BatchGetItem(ctx, in, o...)
	if err != nil {
		return out, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ka := range out.UnprocessedKeys {
		for _, k := range ka.Keys {
			a.unprocessed[auditKey(k)]++
		}
	}
	return out, err
}

// onceEach checks that every key was sent exactly once more than it came back
// unprocessed, and returns how many were withheld.
func (a *mixedAudit) onceEach(t *testing.T, want int) int {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	require.Len(t, a.sent, want)
	withheld := 0
	for k, s := range a.sent {
		withheld += a.unprocessed[k]
		require.Equal(t, 1, s-a.unprocessed[k], "%s handled other than once", k)
	}
	return withheld
}

func mixedTable(t *testing.T) (*Table, *fault.Injector, *mixedAudit) {
	t.Helper()
	tbl, inj, _ := relTable(t, func(so *retry.StandardOptions) { so.MaxAttempts = 10 }, WithBackoff(Backoff{Base: time.Millisecond, Cap: 4 * time.Millisecond, MaxAttempts: 50}))
	audit := newMixedAudit(tbl.client)
	tbl.client = audit
	return tbl, inj, audit
}

// TestBatchGetMixed250 reads 250 keys of 3 entity types in one BatchGet while
// 30% of the keys of every request are left unprocessed: every item comes back
// once, decoded into its type; missing keys say so.
func TestBatchGetMixed250(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(fmt.Sprintf("wire=%v", wire), func(t *testing.T) {
			tbl, inj, audit := mixedTable(t)
			on := wire
			tbl.opts.WireDecoding = &on
			customers, orders, lines := registerAll(t, tbl)
			ctx := context.Background()
			var cs []tCustomer
			var os []tOrder
			var ls []tLineItem
			for i := range 80 {
				cs = append(cs, tCustomer{CustomerID: fmt.Sprintf("c%d", i), Name: "n"})
			}
			for i := range 90 {
				os = append(os, tOrder{CustomerID: fmt.Sprintf("c%d", i%10), OrderID: fmt.Sprintf("o%d", i), CreatedAt: t0, Total: int64(i)})
			}
			for i := range 70 {
				ls = append(ls, tLineItem{CustomerID: "c1", OrderID: "o1", Line: i + 1, SKU: fmt.Sprint(i)})
			}
			_, err := customers.BatchPut(ctx, cs)
			require.NoError(t, err)
			_, err = orders.BatchPut(ctx, os)
			require.NoError(t, err)
			_, err = lines.BatchPut(ctx, ls)
			require.NoError(t, err)
			audit.mu.Lock()
			audit.sent, audit.unprocessed = map[string]int{}, map[string]int{}
			audit.mu.Unlock()

			var refs []ItemRef
			var rc []*Ref[tCustomer]
			var ro []*Ref[tOrder]
			var rl []*Ref[tLineItem]
			for i := range 80 {
				r := customers.Ref(tCustomer{CustomerID: fmt.Sprintf("c%d", i)})
				rc, refs = append(rc, r), append(refs, r)
				o := orders.Ref(tOrder{CustomerID: fmt.Sprintf("c%d", i%10), OrderID: fmt.Sprintf("o%d", i)})
				ro, refs = append(ro, o), append(refs, o)
			}
			for i := range 80 {
				l := lines.Ref(tLineItem{CustomerID: "c1", OrderID: "o1", Line: i + 1}) // 70 exist, 10 missing
				rl, refs = append(rl, l), append(refs, l)
			}
			for i := 80; i < 90; i++ {
				o := orders.Ref(tOrder{CustomerID: fmt.Sprintf("c%d", i%10), OrderID: fmt.Sprintf("o%d", i)})
				ro, refs = append(ro, o), append(refs, o)
			}
			require.Len(t, refs, 250)
			remove30 := inj.Add(fault.Rule{Ops: []string{"BatchGetItem"}, Fault: fault.Unprocessed(0.3)})
			left, err := tbl.BatchGet(ctx, refs)
			require.NoError(t, err)
			require.Empty(t, left)
			for i, r := range rc {
				v, err := r.Value()
				require.NoError(t, err)
				require.Equal(t, cs[i], v)
			}
			for i, r := range ro {
				v, err := r.Value()
				require.NoError(t, err)
				require.Equal(t, os[i], v)
			}
			for i, r := range rl {
				v, err := r.Value()
				if i < 70 {
					require.NoError(t, err)
					require.Equal(t, ls[i], v)
				} else {
					require.ErrorIs(t, err, ErrNotFound)
				}
			}
			withheld := audit.onceEach(t, 250)
			assert.Positive(t, withheld)
			t.Logf("FIGURES mixed BatchGet: 250 keys, %d withheld and asked again, every key answered once", withheld)

			// Every key withheld: the call gives up and returns them all.
			remove30()
			inj.Add(fault.Rule{Ops: []string{"BatchGetItem"}, Fault: fault.Unprocessed(1)})
			left, err = tbl.BatchGet(ctx, refs[:30])
			require.ErrorIs(t, err, ErrUnprocessed)
			assert.Equal(t, refs[:30], left)
			_, err = ro[0].Value()
			require.ErrorIs(t, err, ErrUnprocessed)
		})
	}
}

// TestBatchWriteMixed1000 writes 1,000 puts and deletes of 3 entity types in
// one BatchWrite while 30% of the items of every request are left unprocessed:
// every write is applied exactly once. Then a batch whose requests are all
// withheld gives up and returns exactly the writes not applied.
func TestBatchWriteMixed1000(t *testing.T) {
	tbl, inj, audit := mixedTable(t)
	customers, orders, lines := registerAll(t, tbl)
	ctx := context.Background()
	var gone []tOrder
	for i := range 200 {
		gone = append(gone, tOrder{CustomerID: "old", OrderID: fmt.Sprintf("o%d", i), CreatedAt: t0})
	}
	_, err := orders.BatchPut(ctx, gone)
	require.NoError(t, err)
	audit.mu.Lock()
	audit.sent, audit.unprocessed = map[string]int{}, map[string]int{}
	audit.mu.Unlock()

	var items []BatchItem
	for i := range 300 {
		items = append(items, customers.BatchPutItem(tCustomer{CustomerID: fmt.Sprintf("c%d", i), Name: "n"}))
	}
	for i := range 300 {
		items = append(items, orders.BatchPutItem(tOrder{CustomerID: fmt.Sprintf("c%d", i%30), OrderID: fmt.Sprintf("o%d", i), CreatedAt: t0, Total: int64(i)}))
	}
	for i := range 200 {
		items = append(items, lines.BatchPutItem(tLineItem{CustomerID: "c1", OrderID: "o1", Line: i + 1, SKU: "s"}))
	}
	for _, g := range gone {
		items = append(items, orders.BatchDeleteItem(g))
	}
	require.Len(t, items, 1000)
	remove30 := inj.Add(fault.Rule{Ops: []string{"BatchWriteItem"}, Fault: fault.Unprocessed(0.3)})
	left, err := tbl.BatchWrite(ctx, items...)
	require.NoError(t, err)
	require.Empty(t, left)
	withheld := audit.onceEach(t, 1000)
	assert.Positive(t, withheld)

	n := map[string]int{}
	for v, err := range tbl.ScanAll(ctx, Consistent()) {
		require.NoError(t, err)
		n[fmt.Sprintf("%T", v)]++
	}
	assert.Equal(t, map[string]int{"singletable.tCustomer": 300, "singletable.tOrder": 300, "singletable.tLineItem": 200}, n, "every put applied, every delete applied")
	t.Logf("FIGURES mixed BatchWrite: 1,000 writes, %d withheld and sent again, each applied once", withheld)

	// Give up: the first two requests go through with 30% withheld, then every
	// item is withheld (DynamoDB answers that with a throttle, which the SDK
	// retries, then gives up).
	remove30()
	inj2 := inj
	var more []BatchItem
	for i := range 100 {
		more = append(more, orders.BatchPutItem(tOrder{CustomerID: "late", OrderID: fmt.Sprintf("o%03d", i), CreatedAt: t0}))
	}
	var mu sync.Mutex
	calls := 0
	removeAll := inj2.Add(fault.Rule{Ops: []string{"BatchWriteItem"}, Fault: fault.Unprocessed(1), Match: func(string, []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return calls > 2
	}})
	defer removeAll()
	// Tried after the rule above, which leaves the first two requests to it.
	remove30 = inj2.Add(fault.Rule{Ops: []string{"BatchWriteItem"}, Fault: fault.Unprocessed(0.3)})
	defer remove30()
	left, err = tbl.BatchWrite(ctx, more...)
	require.ErrorIs(t, err, ErrUnprocessed)
	require.NotEmpty(t, left)
	require.Less(t, len(left), 100)
	notWritten := map[string]bool{}
	for _, it := range left {
		assert.Equal(t, "tOrder", it.Entity())
		assert.Equal(t, "Put", it.Op())
		notWritten[it.Value().(tOrder).OrderID] = true
	}
	removeAll()
	present := 0
	for o, err := range orders.All(ctx, tOrder{CustomerID: "late"}, Consistent()) {
		require.NoError(t, err)
		require.False(t, notWritten[o.OrderID], "%s was written but returned as unprocessed", o.OrderID)
		present++
	}
	assert.Equal(t, 100, present+len(left), "exactly the writes not applied are returned")
	t.Logf("give-up: %d written, %d returned unprocessed", present, len(left))
}

// TestMixedBatchRefusedBeforeSending: duplicate keys, zero items, bad keys.
func TestMixedBatchRefusedBeforeSending(t *testing.T) {
	tbl, client := newTestTable(t)
	customers, orders, _ := registerAll(t, tbl)
	ctx := context.Background()
	_, err := tbl.BatchWrite(ctx, orders.BatchPutItem(tOrder{CustomerID: "c1", OrderID: "o1"}), customers.BatchPutItem(tCustomer{CustomerID: "c1"}), orders.BatchDeleteItem(tOrder{CustomerID: "c1", OrderID: "o1"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `items 0 (Put tOrder) and 2 (Delete tOrder) have the same key {PK="CUST#c1", SK="ORDER#o1"}`)
	_, err = tbl.BatchWrite(ctx, BatchItem{})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = tbl.BatchWrite(ctx, orders.BatchPutItem(tOrder{CustomerID: "c#1", OrderID: "o1"}))
	require.ErrorIs(t, err, ErrInvalidKey)
	_, err = tbl.BatchGet(ctx, []ItemRef{orders.Ref(tOrder{CustomerID: "c1", OrderID: "o1"}), customers.Ref(tCustomer{CustomerID: "c1"}), orders.Ref(tOrder{CustomerID: "c1", OrderID: "o1"})})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `refs 0 (tOrder) and 2 (tOrder) name the same item`)
	_, err = tbl.BatchGet(ctx, []ItemRef{nil})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Zero(t, client.count("BatchWriteItem")+client.count("BatchGetItem"), "nothing sent")
	left, err := tbl.BatchWrite(ctx)
	require.NoError(t, err)
	assert.Empty(t, left)
}
