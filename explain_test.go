package singletable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/fanout"
)

// sentRequest is one request as the SDK sent it, seen at the HTTP layer.
type sentRequest struct {
	api  string
	body []byte
}

// explainTable is a table on DynamoDB Local whose requests are recorded at the
// HTTP layer (a rule of the fault injector that only looks), with the clock,
// the random shards and the id source fixed, so that a call made twice sends
// the same request but for its receipts, incarnation ids and tokens.
type explainTable struct {
	*Table
	mu   sync.Mutex // protects sent
	sent []sentRequest
	inj  *fault.Injector
}

func newExplainTable(t *testing.T, opts ...TableOption) *explainTable {
	t.Helper()
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tbl, inj := faultTable(t, append([]TableOption{WithClock(func() time.Time { return clock }), WithRandom(func() uint64 { return 2 }),
		WithIDSource(zeroReader{})}, opts...)...)
	et := &explainTable{Table: tbl, inj: inj}
	inj.Add(fault.Rule{Fault: fault.Throttle(), Match: func(op string, body []byte) bool {
		et.mu.Lock()
		defer et.mu.Unlock()
		et.sent = append(et.sent, sentRequest{op, bytes.Clone(body)})
		return false // never fires: it only records
	}})
	return et
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// capture runs fn and returns the requests it sent.
func (et *explainTable) capture(t *testing.T, fn func(ctx context.Context) error) ([]sentRequest, error) {
	t.Helper()
	et.mu.Lock()
	et.sent = nil
	et.mu.Unlock()
	err := fn(t.Context())
	et.mu.Lock()
	defer et.mu.Unlock()
	return et.sent, err
}

var (
	hexToken = regexp.MustCompile(`^[0-9a-f]{32}$`)      // incarnation ids, ClientRequestTokens
	receipt  = regexp.MustCompile(`^[A-Za-z0-9_-]{16}$`) // receipts
)

// normalized returns a request body with the values drawn afresh for each
// call (receipts, incarnation ids, tokens) replaced by what they are.
func normalized(t *testing.T, body []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			switch {
			case hexToken.MatchString(x):
				return "<token>"
			case receipt.MatchString(x):
				return "<receipt>"
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	require.NoError(t, err)
	return string(out)
}

// explainCase is one call: set up for real (not compared), then explained and
// made for real, the requests of both compared.
type explainCase struct {
	name  string
	setup func(ctx context.Context) error
	call  func(ctx context.Context) error
	// apis are the requests the call sends, in order.
	apis []string
	// concurrent: the call sends its requests concurrently (a fan-out), in no
	// fixed order; Explain shows them in shard order.
	concurrent bool
}

// TestExplainIsWhatIsSent: for every call kind, the requests Explain shows are
// the ones the call then sends for real (their bodies at the HTTP layer, the
// values drawn afresh for each call set aside), in the same order; and Explain
// itself sends nothing.
func TestExplainIsWhatIsSent(t *testing.T) {
	et := newExplainTable(t)
	customers, orders, _ := registerAll(t, et.Table)
	counters := MustRegister[vCounter](et.Table)
	events := MustRegister[sEvent](et.Table)
	o1 := order("c1", 1)
	put := func(ctx context.Context) error { _, err := orders.Put(ctx, o1); return err }
	cases := []explainCase{
		{name: "Get", call: func(ctx context.Context) error { _, err := orders.Get(ctx, o1, Consistent()); return err }, apis: []string{"GetItem"}},
		{name: "Put", call: put, apis: []string{"PutItem"}},
		{name: "Put versioned", call: func(ctx context.Context) error {
			_, err := counters.Put(ctx, vCounter{ID: "p", Name: "n", N: 1})
			return err
		}, apis: []string{"UpdateItem"}}, // keeps what T does not model
		{name: "Create", call: func(ctx context.Context) error {
			_, err := customers.Create(ctx, tCustomer{CustomerID: "new", Name: "N", Email: "n@x"})
			return err
		}, apis: []string{"PutItem"}},
		{name: "Update", setup: put, call: func(ctx context.Context) error {
			_, err := orders.Update(ctx, o1, Set("note", "gift"), Add("count", 2))
			return err
		}, apis: []string{"UpdateItem"}},
		{name: "Upsert", call: func(ctx context.Context) error {
			_, err := counters.Update(ctx, vCounter{ID: "u"}, Upsert(), Set("n", 5))
			return err
		}, apis: []string{"UpdateItem"}},
		{name: "Delete", setup: put, call: func(ctx context.Context) error { return orders.Delete(ctx, o1) }, apis: []string{"DeleteItem"}},
		{name: "Query", call: func(ctx context.Context) error {
			_, err := orders.Query(ctx, tOrder{CustomerID: "c1"}, SKBeginsWith("ORDER#o"), Limit(5), Descending(),
				Filter(expression.Name("total").GreaterThan(expression.Value(100))))
			return err
		}, apis: []string{"Query"}},
		{name: "Query index", call: func(ctx context.Context) error {
			_, err := orders.Query(ctx, tOrder{Status: "PENDING"}, On("GSI1"))
			return err
		}, apis: []string{"Query"}},
		{name: "All", call: func(ctx context.Context) error {
			for _, err := range orders.All(ctx, tOrder{CustomerID: "c2"}) {
				if err != nil {
					return err
				}
			}
			return nil
		}, apis: []string{"Query"}},
		{name: "Scan", call: func(ctx context.Context) error {
			_, err := orders.Scan(ctx, Segments(4), Segment(1), Limit(10))
			return err
		}, apis: []string{"Scan"}},
		{name: "Count", call: func(ctx context.Context) error { _, err := orders.Count(ctx, tOrder{CustomerID: "c1"}); return err }, apis: []string{"Query"}},
		{name: "BatchGet", call: func(ctx context.Context) error {
			_, err := orders.BatchGet(ctx, []tOrder{order("c1", 1), order("c1", 2), order("c9", 3)})
			return err
		}, apis: []string{"BatchGetItem"}},
		{name: "BatchPut", call: func(ctx context.Context) error {
			_, err := orders.BatchPut(ctx, []tOrder{order("b1", 1), order("b1", 2)})
			return err
		}, apis: []string{"BatchWriteItem"}},
		{name: "Table.BatchGet", call: func(ctx context.Context) error {
			_, err := et.BatchGet(ctx, []ItemRef{orders.Ref(o1), customers.Ref(tCustomer{CustomerID: "c1"})})
			return err
		}, apis: []string{"BatchGetItem"}},
		{name: "Transact", setup: put, call: func(ctx context.Context) error {
			return et.Transact(ctx, orders.TxUpdate(o1, Set("note", "tx")), customers.TxPut(tCustomer{CustomerID: "t1", Name: "T"}),
				counters.TxCreate(vCounter{ID: "tx"}), orders.TxCheck(o1, expression.Name("total").GreaterThanEqual(expression.Value(0))))
		}, apis: []string{"TransactWriteItems"}},
		{name: "TransactWith token", call: func(ctx context.Context) error {
			return et.TransactWith(ctx, TxOptions{Token: "order-c7-o1", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
				counters.TxCreate(vCounter{ID: "tok"}), orders.TxPut(order("c7", 1)))
		}, apis: []string{"TransactWriteItems"}},
		{name: "TransactGet", call: func(ctx context.Context) error {
			return et.TransactGet(ctx, orders.Ref(o1), customers.Ref(tCustomer{CustomerID: "c1"}))
		}, apis: []string{"TransactGetItems"}},
		{name: "Mutate", call: func(ctx context.Context) error {
			_, err := counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.N++; return nil })
			return err
		}, apis: []string{"GetItem", "UpdateItem"}},
		{name: "QueryShards", call: func(ctx context.Context) error {
			_, err := events.QueryShards(ctx, sEvent{Day: day0}, Limit(10))
			return err
		}, apis: []string{"Query", "Query", "Query", "Query", "Query", "Query", "Query", "Query"}, concurrent: true},
		{name: "AllShards", call: func(ctx context.Context) error {
			for _, err := range events.AllShards(ctx, sEvent{Day: day0.AddDate(0, 0, 1)}) {
				if err != nil {
					return err
				}
			}
			return nil
		}, apis: []string{"Query", "Query", "Query", "Query", "Query", "Query", "Query", "Query"}, concurrent: true},
		{name: "Collection", call: func(ctx context.Context) error {
			_, err := et.Query(ctx, "CUST#c1", Limit(50))
			return err
		}, apis: []string{"Query"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			if c.setup != nil {
				require.NoError(t, c.setup(ctx))
			}
			var x *Explanation
			sent, err := et.capture(t, func(ctx context.Context) error {
				var err error
				x, err = Explain(ctx, c.call)
				return err
			})
			require.NoError(t, err)
			require.Empty(t, sent, "Explain sends nothing")
			sent, _ = et.capture(t, c.call) // its outcome does not matter: its requests do
			var apis []string
			for _, r := range x.Requests {
				apis = append(apis, r.API)
			}
			require.Equal(t, c.apis, apis, "what Explain shows\n%s", x)
			require.Len(t, sent, len(x.Requests), "what was sent")
			var shown, got []string
			for i, r := range x.Requests {
				assert.Equal(t, r.API, sent[i].api)
				require.NotNil(t, r.Input, r.InputErr)
				assert.Equal(t, et.Name(), r.Table)
				shown, got = append(shown, normalized(t, r.Input)), append(got, normalized(t, sent[i].body))
			}
			if c.concurrent {
				slices.Sort(shown)
				slices.Sort(got)
			}
			for i := range shown {
				assert.JSONEq(t, got[i], shown[i], "request %d", i+1)
			}
		})
	}
}

// TestExplainSendsNothing: under Explain no call reaches the table's client,
// not even through a client that would fail every call (this one panics), and
// no observer hears of the calls; the table stays empty.
func TestExplainSendsNothing(t *testing.T) {
	var observed []Operation
	tbl, err := NewTable(offlineClient{}, "offline", testTableOptions, WithObserver(func(op Operation) { observed = append(observed, op) }))
	require.NoError(t, err)
	customers := MustRegister[tCustomer](tbl)
	orders := MustRegister[tOrder](tbl)
	counters := MustRegister[vCounter](tbl)
	o1 := order("c1", 1)
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		_, err := orders.Get(ctx, o1)
		require.ErrorIs(t, err, ErrNotFound, "an empty table's answer")
		got, err := orders.Put(ctx, o1)
		require.NoError(t, err)
		assert.Equal(t, o1, got)
		_, err = orders.Update(ctx, o1, Set("note", "n"))
		require.NoError(t, err)
		require.NoError(t, orders.Delete(ctx, o1))
		page, err := orders.Query(ctx, tOrder{CustomerID: "c1"})
		require.NoError(t, err)
		assert.Empty(t, page.Items)
		assert.Empty(t, page.Cursor)
		res, err := orders.BatchGet(ctx, []tOrder{o1})
		require.NoError(t, err)
		assert.Empty(t, res.Items)
		ref := customers.Ref(tCustomer{CustomerID: "c1"})
		require.NoError(t, tbl.TransactGet(ctx, ref))
		assert.False(t, ref.Found())
		require.NoError(t, tbl.Transact(ctx, orders.TxPut(o1), customers.TxDelete(tCustomer{CustomerID: "c1"})))
		n, err := counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.N = 7; return nil })
		require.NoError(t, err)
		assert.Equal(t, 7, n.N)
		_, err = orders.Get(ctx, o1)
		return err // ErrNotFound: no error of Explain's
	})
	require.NoError(t, err)
	assert.Len(t, x.Requests, 11)
	assert.Empty(t, observed, "nothing was sent, so nothing was observed")
	for _, r := range x.Requests {
		assert.NotNil(t, r.Input, "%s: %s", r.API, r.InputErr)
	}
	assert.Equal(t, "tOrder", x.Requests[0].Entity, "an entity's call is named")
	assert.Equal(t, "", x.Requests[6].Entity, "TransactGet is the table's")
	assert.Equal(t, "vCounter", x.Requests[8].Entity, "Mutate's read")
}

// TestExplainObservedTable: with an observer, the requests carry
// ReturnConsumedCapacity, as they are sent; Explain shows that too, and the
// observer hears only of the real call.
func TestExplainObservedTable(t *testing.T) {
	var mu sync.Mutex
	var ops []string
	et := newExplainTable(t, WithObserver(func(op Operation) { mu.Lock(); ops = append(ops, op.Name); mu.Unlock() }))
	orders := MustRegister[tOrder](et.Table)
	call := func(ctx context.Context) error { _, err := orders.Put(ctx, order("c1", 1)); return err }
	mu.Lock()
	ops = nil
	mu.Unlock()
	x, err := Explain(t.Context(), call)
	require.NoError(t, err)
	mu.Lock()
	assert.Empty(t, ops)
	mu.Unlock()
	sent, err := et.capture(t, call)
	require.NoError(t, err)
	require.Len(t, sent, 1)
	assert.Contains(t, string(x.Requests[0].Input), `"ReturnConsumedCapacity":"TOTAL"`)
	assert.JSONEq(t, normalized(t, sent[0].body), normalized(t, x.Requests[0].Input))
	mu.Lock()
	assert.Equal(t, []string{"PutItem"}, ops)
	mu.Unlock()
}

// TestExplainReadable: keys, expressions resolved (names and values), options
// and the rendering, the same from run to run.
func TestExplainReadable(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	counters := MustRegister[vCounter](tbl)
	explain := func(versioned bool) *Explanation {
		x, err := Explain(t.Context(), func(ctx context.Context) error {
			if _, err := orders.Query(ctx, tOrder{CustomerID: "c1"}, SKBeginsWith("ORDER#o"), Limit(5), Descending(), Filter(expression.Name("total").GreaterThan(expression.Value(100)))); err != nil {
				return err
			}
			if !versioned { // a versioned write's receipt is drawn afresh each time
				_, err := orders.Update(ctx, order("c1", 1), Set("note", "gift"))
				return err
			}
			_, err := counters.Update(ctx, vCounter{ID: "a", Version: 3}, Set("n", 4))
			return err
		})
		require.NoError(t, err)
		return x
	}
	x := explain(true)
	require.Len(t, x.Requests, 2)
	q := x.Requests[0].Actions[0]
	assert.Equal(t, "Query", q.Op)
	assert.Equal(t, `PK = "CUST#c1" AND begins_with(SK, "ORDER#o")`, q.KeyCondition.Text)
	assert.Contains(t, q.KeyCondition.Raw, "#")
	assert.Equal(t, "total > 100", q.Filter.Text)
	assert.True(t, q.Descending)
	assert.Equal(t, 5, q.Limit)
	u := x.Requests[1].Actions[0]
	assert.Equal(t, `PK = "CTR#a", SK = "CTR"`, u.Key)
	assert.Contains(t, u.Condition.Text, "version = 3", "the version condition, resolved")
	assert.Contains(t, u.Update.Text, "n = 4")
	assert.Contains(t, u.Update.Text, "version = 4")
	assert.Contains(t, x.String(), "2. UpdateItem offline (vCounter)")
	s := explain(false).String()
	assert.Equal(t, s, explain(false).String(), "rendered the same every time")
	for _, want := range []string{"1. Query offline (tOrder)", "2. UpdateItem offline (tOrder)", `= SET note = "gift"`, `= PK = "CUST#c1" AND begins_with(SK, "ORDER#o")`, "descending", "limit 5", "total: 2 requests"} {
		assert.Contains(t, s, want)
	}
}

// TestExplainCost: capacity units by item size: writes 1 WCU per KB (and per
// KB of each index holding the item), transactional 2x; reads 1 RCU per 4 KB
// consistent, 0.5 eventually, transactional 2x; a page up to Limit items or 1 MB.
func TestExplainCost(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	customers := MustRegister[tCustomer](tbl)
	big := order("c1", 1)
	big.Note = strings.Repeat("x", 2500) // in the table, GSI1 (status) and GSI2 (customer): 3 KB each
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		if _, err := orders.Put(ctx, big); err != nil {
			return err
		}
		if _, err := customers.Put(ctx, tCustomer{CustomerID: "c1", Name: "small"}); err != nil { // no email: in no index
			return err
		}
		_, _ = orders.Get(ctx, big, Consistent())
		_, _ = orders.Get(ctx, big)
		if _, err := orders.Query(ctx, tOrder{CustomerID: "c1"}, Limit(10)); err != nil {
			return err
		}
		if _, err := orders.Query(ctx, tOrder{CustomerID: "c1"}); err != nil {
			return err
		}
		if err := tbl.Transact(ctx, orders.TxPut(big), orders.TxDelete(big)); err != nil {
			return err
		}
		return tbl.TransactGet(ctx, orders.Ref(big), customers.Ref(tCustomer{CustomerID: "c1"}))
	})
	require.NoError(t, err)
	require.Len(t, x.Requests, 8)
	item := x.Requests[0].Actions[0].Bytes
	assert.Greater(t, item, 2500)
	assert.LessOrEqual(t, item, 3072)
	assert.Equal(t, 9.0, x.Requests[0].Cost(0).WriteUnits, "3 KB in the table and in each of two indexes")
	assert.Equal(t, 1.0, x.Requests[1].Cost(0).WriteUnits)
	assert.Equal(t, 2.0, x.Requests[2].Cost(5000).ReadUnits, "consistent: 1 RCU per 4 KB")
	assert.Equal(t, 1.0, x.Requests[3].Cost(5000).ReadUnits, "eventually consistent: half")
	assert.Equal(t, 0.5, x.Requests[3].Cost(0).ReadUnits, "at least one 4 KB block")
	assert.Equal(t, 1.5, x.Requests[4].Cost(1000).ReadUnits, "10 items of 1000 bytes: 3 blocks of 4 KB, eventually")
	assert.Equal(t, 128.0, x.Requests[5].Cost(1000).ReadUnits, "no limit: a 1 MB page, eventually")
	assert.Equal(t, 2*(9.0+3+3*3), x.Requests[6].Cost(3000).WriteUnits,
		"transactional: twice the put's 9 and the delete's 3 (3000 bytes) and its entries, 3 in each of the three indexes (a transaction's Delete names no entity: every index may hold it)")
	assert.Equal(t, 8.0, x.Requests[7].Cost(5000).ReadUnits, "transactional: 2 RCU per 4 KB, two items of 5000 bytes")
	total := x.Cost(5000)
	assert.Equal(t, 9.0+1+2*(9+5+3*5)*1.0, total.WriteUnits)
	assert.Equal(t, 1+0.5+1.5+128+4.0, x.Cost(1000).ReadUnits, "reads summed: two Gets, two pages, a TransactGet of two")
	assert.Contains(t, x.Requests[0].Cost(0).Basis, "more if it replaces a larger item", "what is an estimate is said")
	assert.Equal(t, attrvalue.Size(map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: "bc"}}), 3)
}

// TestExplainFanOut: QueryShards sends one Query per shard; Explain shows each,
// in shard order, one at a time, every partition once.
func TestExplainFanOut(t *testing.T) {
	tbl := offlineTable(t)
	events := MustRegister[sEvent](tbl)
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		_, err := events.QueryShards(ctx, sEvent{Day: day0}, Limit(16))
		return err
	})
	require.NoError(t, err)
	require.Len(t, x.Requests, 8)
	for i, r := range x.Requests {
		assert.Equal(t, "Query", r.API)
		assert.Equal(t, `PK = "EVENTS#2024-03-01#SHARD`+itoa(i+1)+`"`, r.Actions[0].KeyCondition.Text)
		assert.Equal(t, fanout.Share(16, 8), r.Actions[0].Limit, "each shard asked for its share of the page")
	}
	assert.Equal(t, 8*x.Requests[0].Cost(100).ReadUnits, x.Cost(100).ReadUnits)
}

// TestExplainReadThenWrite: Mutate shows its consistent read, then the write it
// sends when it finds nothing (the item created at version 1), once: fn runs
// once and no conflict loop spins.
func TestExplainReadThenWrite(t *testing.T) {
	tbl := offlineTable(t)
	counters := MustRegister[vCounter](tbl)
	calls := 0
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		got, err := counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error {
			calls++
			assert.Zero(t, c.Version, "found nothing: version 0")
			c.N += 5
			return nil
		})
		assert.Equal(t, int64(1), got.Version)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	require.Len(t, x.Requests, 2)
	get, write := x.Requests[0], x.Requests[1]
	assert.Equal(t, "GetItem", get.API)
	assert.True(t, get.Actions[0].Consistent)
	assert.Equal(t, `PK = "CTR#m", SK = "CTR"`, get.Actions[0].Key)
	assert.Equal(t, "UpdateItem", write.API, "a Put of an entity that keeps what T does not model")
	assert.Contains(t, write.Actions[0].Condition.Text, "attribute_not_exists(PK)", "created: nothing was there")
	assert.Contains(t, write.Actions[0].Update.Text, `n = 5`)
	assert.Contains(t, write.Actions[0].Update.Text, `version = 1`)
}

// TestExplainWaits: a wait stops at its first wait: WaitIndexed shows its first
// Query and a note, and never sleeps, whatever its backoff.
func TestExplainWaits(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	slept := false
	bo := Backoff{Base: time.Hour, Cap: time.Hour, MaxAttempts: 100, Sleep: func(context.Context, time.Duration) error { slept = true; return nil }}
	start := time.Now()
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		_, err := orders.Put(ctx, order("c1", 1))
		if err != nil {
			return err
		}
		_, _, err = orders.WaitIndexed(ctx, "GSI1", order("c1", 1), RetryBackoff(bo))
		return err
	})
	require.NoError(t, err)
	assert.False(t, slept)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Len(t, x.Requests, 2)
	assert.Equal(t, "Query", x.Requests[1].API)
	assert.Equal(t, "GSI1", x.Requests[1].Actions[0].Index)
	require.Len(t, x.Notes, 1)
	assert.Contains(t, x.Notes[0], "after request 2: the call would wait")
	assert.Contains(t, x.String(), "note:")
}

// TestExplainBadInput: a nil function, a nil context and an Explain inside an
// Explain are refused; a call's bad input fails Explain as it fails the call,
// with what was recorded before it; table management is refused, and sends
// nothing.
func TestExplainBadInput(t *testing.T) {
	ctx := t.Context()
	_, err := Explain(ctx, nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "nil function")
	//lint:ignore SA1012 a nil context is the point
	_, err = Explain(nil, func(context.Context) error { return nil }) //nolint:staticcheck
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = Explain(ctx, func(ctx context.Context) error {
		_, err := Explain(ctx, func(context.Context) error { return nil })
		return err
	})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "Explain inside an Explain")

	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	x, err := Explain(ctx, func(ctx context.Context) error {
		if _, err := orders.Put(ctx, order("c1", 1)); err != nil {
			return err
		}
		_, err := orders.Put(ctx, tOrder{CustomerID: "c#1", OrderID: "o1"})
		return err
	})
	require.ErrorIs(t, err, ErrInvalidKey)
	assert.Contains(t, err.Error(), "customerId")
	require.Len(t, x.Requests, 1, "what was recorded before")

	for name, call := range map[string]func(context.Context) error{"CreateTable": func(ctx context.Context) error { return tbl.CreateTable(ctx) },
		"DeleteTable": tbl.DeleteTable, "EnableTTL": tbl.EnableTTL} {
		x, err := Explain(ctx, call)
		require.ErrorIs(t, err, ErrInvalidInput, name)
		assert.Contains(t, err.Error(), name+" offline under Explain")
		assert.Empty(t, x.Requests)
	}
	_, err = Explain(ctx, func(ctx context.Context) error { return errors.New("mine") })
	require.EqualError(t, err, "singletable: Explain: mine")
}

// TestExplainBatchesAndTokens: a batch of more items than one request holds
// shows each request; a transaction's token is shown, and with TransactWith's
// Token and At the request is the same from one Explain to the next.
func TestExplainBatchesAndTokens(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)
	counters := MustRegister[vCounter](tbl)
	many := make([]tOrder, 30)
	for i := range many {
		many[i] = order("b", i)
	}
	tx := func(ctx context.Context) error {
		return tbl.TransactWith(ctx, TxOptions{Token: "tok-1", At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, counters.TxCreate(vCounter{ID: "a"}))
	}
	x, err := Explain(t.Context(), func(ctx context.Context) error {
		if _, err := orders.BatchPut(ctx, many); err != nil {
			return err
		}
		return tx(ctx)
	})
	require.NoError(t, err)
	require.Len(t, x.Requests, 3)
	assert.Len(t, x.Requests[0].Actions, 25)
	assert.Len(t, x.Requests[1].Actions, 5)
	assert.Equal(t, "tok-1", x.Requests[2].Token)
	y, err := Explain(t.Context(), tx)
	require.NoError(t, err)
	assert.Equal(t, string(x.Requests[2].Input), string(y.Requests[0].Input), "a token's transaction is planned the same, byte for byte")
	_ = aws.String
	_ = dynamodb.Options{}
}

// TestExplainWaitStopKeepsItsError: a wait stopped by its Backoff.Sleep while
// its context goes on (as Explain stops waits) returns that error, wrapped; it
// was lost before (a nil context error was wrapped instead).
func TestExplainWaitStopKeepsItsError(t *testing.T) {
	stop := errors.New("stop")
	bo := Backoff{MaxAttempts: 5, Sleep: func(context.Context, time.Duration) error { return stop }}
	_, stats, err := WaitFor(t.Context(), func(context.Context) (int, error) { return 0, nil }, func(int) bool { return false }, RetryBackoff(bo))
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, stats.Attempts)
	assert.Contains(t, err.Error(), "wait stopped after 1 attempts")
}

// TestExplainNothingRecorded: a function that sends nothing explains to nil
// requests and notes (as a recorder that recorded nothing always returned).
func TestExplainNothingRecorded(t *testing.T) {
	x, err := Explain(context.Background(), func(context.Context) error { return nil })
	require.NoError(t, err)
	assert.Nil(t, x.Requests)
	assert.Nil(t, x.Notes)
	assert.Equal(t, Cost{}.ReadUnits, x.Cost(0).ReadUnits)
}

// TestExplainIndexWritesAndDeterminism: the cost of an Update or a Delete counts
// the index writes it causes in the indexes that can hold the entity's items,
// and the same calls explain the same, byte for byte, receipts and transaction
// tokens included, so an Explanation can be kept as a golden file (issue 37,
// scenario 17).
func TestExplainIndexWritesAndDeterminism(t *testing.T) {
	tbl := offlineTable(t, WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	orders := MustRegister[tOrder](tbl)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	o := tOrder{CustomerID: "c1", OrderID: "o1", Status: "open", CreatedAt: time.Unix(1600000000, 0)}
	cost := func(fn func(ctx context.Context) error) Cost {
		x, err := Explain(ctx, fn)
		require.NoError(t, err)
		require.Len(t, x.Requests, 1)
		return x.Requests[0].Cost(0)
	}
	// tOrder is in GSI1 (STATUS#{status}) and GSI2 (CUST#{customerId}), both
	// projecting ALL; not in GSI3.
	c := cost(func(ctx context.Context) error { _, err := orders.Update(ctx, o, Set("status", "paid")); return err })
	assert.Equal(t, 4.0, c.WriteUnits, "the item, GSI1's entry moved (2), GSI2's changed (1): %s", c.Basis)
	c = cost(func(ctx context.Context) error { _, err := orders.Update(ctx, o, Set("note", "n")); return err })
	assert.Equal(t, 3.0, c.WriteUnits, "the item, and a projected attribute in GSI1 and GSI2: %s", c.Basis)
	c = cost(func(ctx context.Context) error { return orders.Delete(ctx, o) })
	assert.Equal(t, 3.0, c.WriteUnits, "the item and its entries in GSI1 and GSI2: %s", c.Basis)
	assert.Contains(t, c.Basis, "a Delete 1 write")

	explainText := func(fn func(ctx context.Context) error) string {
		x, err := Explain(ctx, fn)
		require.NoError(t, err)
		return x.String()
	}
	for name, fn := range map[string]func(ctx context.Context) error{
		"versioned Put": func(ctx context.Context) error {
			_, err := counters.Put(ctx, vCounter{ID: "a", Version: 3})
			return err
		},
		"versioned Update": func(ctx context.Context) error {
			_, err := counters.Update(ctx, vCounter{ID: "a", Version: 3}, Set("n", 1))
			return err
		},
		"Create": func(ctx context.Context) error { _, err := counters.Create(ctx, vCounter{ID: "b"}); return err },
		"Transact": func(ctx context.Context) error {
			return tbl.Transact(ctx, counters.TxPut(vCounter{ID: "a", Version: 3}), orders.TxDelete(o))
		},
	} {
		first := explainText(fn)
		assert.Equal(t, first, explainText(fn), name)
	}
}
