package singletable

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/localtest"
)

// Reliability: what the library survives, with faults injected between the SDK
// and a real DynamoDB Local (package fault), and with DynamoDB Local itself
// killed. Each test logs a line "FIGURES ..." with the counts the README's table
// shows; `go test -race -run '^TestName$' -v .` reproduces it.
//
// Index (test -> the behaviour it tests, where that lives):
//
// reliability_test.go: the shared harness (relTable, opStats, relLedger) and
//   - TestBatchUnprocessed10k -> unprocessed items of BatchWriteItem and
//     BatchGetItem resent until done, each item once (batch.go, backoff.go)
//
// reliability_storm_test.go:
//   - TestStormThrottlingAnd5xx -> throttling and HTTP 500s on every call kind:
//     clean errors, acknowledged writes exactly once, the SDK's retry budget
//     (pipeline.go, batch.go, tx.go, occ.go, counter.go)
//
// reliability_cancel_test.go:
//   - TestCancelReturnsWithin50ms -> cancellation in every wait (in flight, SDK
//     and batch backoff, versioned resend, transaction retry, index wait,
//     fan-out) (backoff.go, pipeline.go, tx.go, fanout.go)
//
// reliability_lost_test.go:
//   - TestLostResponsesEveryWriteKind -> lost responses of applied writes, every
//     write kind: which are exactly-once, the receipts' judgement (pipeline.go,
//     receipt.go, version.go)
//
// reliability_restart_test.go:
//   - TestKillAndRestartDynamoDBLocal -> DynamoDB Local killed and restarted
//     under load: clean errors during the outage, the same Table works after it,
//     acknowledged writes found once (table.go, pipeline.go)

// relItem is one item written by the reliability runs: one partition per worker.
type relItem struct {
	_      struct{} `Type:"RelItem" PK:"REL#{worker:03}" SK:"ITEM#{seq:08}"`
	Worker int      `dynamodbav:"worker"`
	Seq    int      `dynamodbav:"seq"`
	Op     string   `dynamodbav:"op,omitempty"`
	Hits   int      `dynamodbav:"hits"`
}

type relKey struct{ worker, seq int }

func (v relItem) key() relKey { return relKey{v.Worker, v.Seq} }

// attemptsKey carries, in a request's context, the counter of the HTTP attempts
// made for one library call.
type attemptsKey struct{}

func withAttempts(ctx context.Context) (context.Context, *atomic.Int64) {
	n := &atomic.Int64{}
	return context.WithValue(ctx, attemptsKey{}, n), n
}

// attemptCounter sits between the SDK and the fault injector and counts every
// HTTP attempt against the library call that made it.
type attemptCounter struct{ next dynamodb.HTTPClient }

func (a attemptCounter) Do(req *http.Request) (*http.Response, error) {
	if n, ok := req.Context().Value(attemptsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return a.next.Do(req)
}

const relSDKAttempts = 3 // the SDK's attempts per call in these tests

// relTable creates a table on the shared DynamoDB Local behind a fault injector,
// called through a countingClient (calls the library made) with an
// attemptCounter under the SDK (HTTP attempts). The SDK retries as
// faultTable's does unless sdk says otherwise.
func relTable(t *testing.T, sdk func(*retry.StandardOptions), opts ...TableOption) (*Table, *fault.Injector, *countingClient) {
	t.Helper()
	inst := local.Get(t)
	client, inj := fault.NewClient(inst, func(o *fault.ClientOptions) {
		o.Injector.Seed = 20240501
		o.DynamoDB = append(o.DynamoDB, func(d *dynamodb.Options) {
			d.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = relSDKAttempts
				so.Backoff = retry.NewExponentialJitterBackoff(2 * time.Millisecond)
				so.MaxBackoff = 2 * time.Millisecond
				so.RateLimiter = ratelimit.None
				if sdk != nil {
					sdk(so)
				}
			})
			d.HTTPClient = attemptCounter{next: d.HTTPClient}
		})
	})
	counting := newCountingClient(client)
	tbl, err := NewTable(counting, localtest.TableName(t), append([]TableOption{testTableOptions,
		WithBackoff(Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 50})}, opts...)...)
	require.NoError(t, err)
	createTestTable(t, tbl)
	return tbl, inj, counting
}

// errClass sorts an operation's error for the figures, and says whether it is
// clean: it names the package, and wraps the SDK's operation error (which holds
// the AWS or transport error), a context error, or one of the package's
// sentinels for what was left undone.
func errClass(err error) (class string, clean bool) {
	var throttle *types.ProvisionedThroughputExceededException
	var server *types.InternalServerError
	var op *smithy.OperationError
	clean = strings.HasPrefix(err.Error(), "singletable: ") &&
		(errors.As(err, &op) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		class = "context"
	case errors.Is(err, ErrAmbiguous):
		class = "ambiguous"
	case errors.As(err, &throttle):
		class = "throttled"
	case errors.As(err, &server):
		class = "5xx"
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrCondition):
		class = "condition"
		clean = false // never expected here: a write reported as failing a check
	case errors.As(err, &op):
		class = "transport"
	default:
		class = "other"
	}
	return class, clean
}

// opStats gathers what the operations of a run did, by kind.
type opStats struct {
	mu          sync.Mutex // protects the fields below
	ok, failed  map[string]int
	classes     map[string]int
	maxAttempts map[string]int64
	maxLatency  map[string]time.Duration
	unclean     []string
}

func newOpStats() *opStats {
	return &opStats{ok: map[string]int{}, failed: map[string]int{}, classes: map[string]int{},
		maxAttempts: map[string]int64{}, maxLatency: map[string]time.Duration{}}
}

// run runs one operation of kind with a fresh attempt counter, recovering a
// panic as a failure, and records its outcome.
func (s *opStats) run(ctx context.Context, kind string, op func(ctx context.Context) error) (err error) {
	ctx, attempts := withAttempts(ctx)
	began := time.Now()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		elapsed := time.Since(began)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.maxAttempts[kind] = max(s.maxAttempts[kind], attempts.Load())
		s.maxLatency[kind] = max(s.maxLatency[kind], elapsed)
		if err == nil {
			s.ok[kind]++
			return
		}
		s.failed[kind]++
		class, clean := errClass(err)
		s.classes[class]++
		if !clean && len(s.unclean) < 20 {
			s.unclean = append(s.unclean, kind+": "+err.Error())
		}
	}()
	return op(ctx)
}

func (s *opStats) total() (ok, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.ok {
		ok += n
	}
	for _, n := range s.failed {
		failed += n
	}
	return ok, failed
}

// relLedger records which items and increments were acknowledged.
type relLedger struct {
	mu       sync.Mutex      // protects the fields below
	acked    map[relKey]bool // writes reported as done
	failed   map[relKey]bool // writes reported as failed
	hits     map[relKey]int  // acknowledged ADDs
	counters map[string]int  // acknowledged Mutate increments, by counter
	unknown  map[string]int  // Mutate increments whose outcome is unknown (ErrAmbiguous, a cancel)
}

func newLedger() *relLedger {
	return &relLedger{acked: map[relKey]bool{}, failed: map[relKey]bool{}, hits: map[relKey]int{}, counters: map[string]int{}, unknown: map[string]int{}}
}

func (l *relLedger) wrote(err error, items ...relItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, it := range items {
		if err == nil {
			l.acked[it.key()] = true
		} else {
			l.failed[it.key()] = true
		}
	}
}

// readBack reads every item of the workers' partitions, consistently, with no
// faults, and compares it with the ledger.
type readBackResult struct {
	read, lost, phantom, overApplied, underApplied int
}

func (l *relLedger) readBack(t *testing.T, items *Entity[relItem], workers []int) readBackResult {
	t.Helper()
	ctx := context.Background()
	var r readBackResult
	seen := map[relKey]relItem{}
	for _, w := range workers {
		for it, err := range items.All(ctx, relItem{Worker: w}, Consistent()) {
			require.NoError(t, err)
			_, dup := seen[it.key()]
			require.False(t, dup, "one key read twice")
			seen[it.key()] = it
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r.read = len(seen)
	for k := range l.acked {
		if _, ok := seen[k]; !ok && slices.Contains(workers, k.worker) {
			r.lost++
		}
	}
	for k, it := range seen {
		if !l.acked[k] {
			r.phantom++
		}
		switch {
		case it.Hits > l.hits[k]:
			r.overApplied++
		case it.Hits < l.hits[k]:
			r.underApplied++
		}
	}
	return r
}

func sumValues[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// batchAudit counts, per item key, how often the library sent it in a
// BatchWriteItem and how often DynamoDB (here, the fault injector) handed it
// back unprocessed: sent minus unprocessed is how many times it was written.
type batchAudit struct {
	ItemClient
	mu                sync.Mutex // protects the maps
	sent, unprocessed map[string]int
	requests          int
}

func auditKey(item map[string]types.AttributeValue) string {
	pk, _ := item["PK"].(*types.AttributeValueMemberS)
	sk, _ := item["SK"].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return "?"
	}
	return pk.Value + "\x00" + sk.Value
}

func (a *batchAudit) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	a.mu.Lock()
	a.requests++
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			a.sent[auditKey(r.PutRequest.Item)]++
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
			a.unprocessed[auditKey(r.PutRequest.Item)]++
		}
	}
	return out, err
}

// TestBatchUnprocessed10k writes 10,000 items with BatchPut while 30% of the
// items of every BatchWriteItem are left unprocessed, then reads them back with
// BatchGet under the same fault on BatchGetItem, and with queries: each arrives
// exactly once.
func TestBatchUnprocessed10k(t *testing.T) {
	t.Parallel() // owns its table, and is slow by its volume of writes: runs beside the other such tests
	const n, partitions = 10_000, 10
	// A last round of one or two items is all withheld 30% of the time, which
	// DynamoDB answers with a throttle: give the SDK room to retry those.
	tbl, inj, _ := relTable(t, func(so *retry.StandardOptions) { so.MaxAttempts = 10 }, WithBackoff(Backoff{Base: time.Millisecond, Cap: 4 * time.Millisecond, MaxAttempts: 50}))
	audit := &batchAudit{ItemClient: tbl.client, sent: map[string]int{}, unprocessed: map[string]int{}}
	tbl.client = audit
	items := MustRegister[relItem](tbl)
	ctx := context.Background()

	want := make([]relItem, n)
	for i := range want {
		want[i] = relItem{Worker: i % partitions, Seq: i, Op: "batch", Hits: i * 7}
	}
	inj.Add(fault.Rule{Ops: []string{"BatchWriteItem", "BatchGetItem"}, Fault: fault.Unprocessed(0.3)})
	began := time.Now()
	left, err := items.BatchPut(ctx, want)
	require.NoError(t, err)
	require.Empty(t, left)
	wrote := time.Since(began)
	st := inj.Stats()

	// Each item was written exactly once: sent once more than it came back
	// unprocessed.
	audit.mu.Lock()
	require.Len(t, audit.sent, n)
	withheld, twice := 0, 0
	for k, s := range audit.sent {
		withheld += audit.unprocessed[k]
		if s-audit.unprocessed[k] != 1 {
			twice++
		}
	}
	batchRequests := audit.requests
	audit.mu.Unlock()
	assert.Zero(t, twice, "items written other than once")
	assert.InDelta(t, 0.3, float64(withheld)/float64(withheld+n), 0.02, "about 30%% of the items sent were withheld")

	// Read back by key, under the same fault.
	res, err := items.BatchGet(ctx, want)
	require.NoError(t, err)
	assert.Empty(t, res.Missing)
	assert.Empty(t, res.Unprocessed)
	assert.Equal(t, want, res.Items, "every item, as written, in the order asked")
	getStats := inj.Stats()

	// And by partition, without faults: nothing more.
	inj2 := 0
	for p := range partitions {
		for it, err := range items.All(ctx, relItem{Worker: p}, Consistent()) {
			require.NoError(t, err)
			require.Equal(t, want[it.Seq], it)
			inj2++
		}
	}
	assert.Equal(t, n, inj2)
	t.Logf("BatchPut of %d items: %d BatchWriteItem requests (%d items withheld, %.1f%% of those sent), %s", n, batchRequests, withheld, 100*float64(withheld)/float64(withheld+n), wrote.Round(time.Millisecond))
	t.Logf("BatchGet of %d keys: %d BatchGetItem requests; faults %v", n, getStats.Requests["BatchGetItem"], st.Faults)
	t.Logf("FIGURES batch: items written %d, read back %d (BatchGet) and %d (Query), lost %d, duplicated %d", n, len(res.Items), inj2, len(res.Missing), twice)
}

// relWorker is one worker of a reliability run (TestStormThrottlingAnd5xx,
// TestKillAndRestartDynamoDBLocal): its partition (w), its counter, its random
// source and the items it was told were written. Its operations record their
// outcomes in stats and led, and return their error.
type relWorker struct {
	items    *Entity[relItem]
	counters *Entity[vCounter]
	led      *relLedger
	stats    *opStats
	w        int
	rng      *rand.Rand
	counter  string
	seq      int
	mine     []relItem // acknowledged items, for reads and ADDs
}

// next returns the worker's next item, written by op.
func (rw *relWorker) next(op string) relItem {
	rw.seq++
	return relItem{Worker: rw.w, Seq: rw.seq, Op: op}
}

// pick returns one of the worker's acknowledged items, drawn at random; false
// when there is none yet.
func (rw *relWorker) pick() (relItem, bool) {
	if len(rw.mine) == 0 {
		return relItem{}, false
	}
	return rw.mine[rw.rng.IntN(len(rw.mine))], true
}

// create creates the worker's next item.
func (rw *relWorker) create(ctx context.Context) error {
	v := rw.next("create")
	err := rw.stats.run(ctx, "Create", func(ctx context.Context) error { _, err := rw.items.Create(ctx, v); return err })
	rw.led.wrote(err, v)
	if err == nil {
		rw.mine = append(rw.mine, v)
	}
	return err
}

// batchPut puts the worker's next n items in one BatchPut; the items it
// returns as left unwritten take its error, the others are written.
func (rw *relWorker) batchPut(ctx context.Context, n int) error {
	batch := make([]relItem, n)
	for i := range batch {
		batch[i] = rw.next("batch")
	}
	var left []relItem
	err := rw.stats.run(ctx, "BatchPut", func(ctx context.Context) error {
		var err error
		left, err = rw.items.BatchPut(ctx, batch)
		return err
	})
	for _, v := range batch {
		if slices.Contains(left, v) {
			rw.led.wrote(err, v)
		} else {
			rw.led.wrote(nil, v)
			rw.mine = append(rw.mine, v)
		}
	}
	return err
}

// mutate adds 1 to the worker's counter with Mutate (a versioned
// read-modify-write). An increment that fails with ErrAmbiguous, or with any
// error when failedMayLand (the server may have died after applying it), is
// counted as of unknown outcome.
func (rw *relWorker) mutate(ctx context.Context, failedMayLand bool) error {
	err := rw.stats.run(ctx, "Mutate", func(ctx context.Context) error {
		_, err := rw.counters.Mutate(ctx, vCounter{ID: rw.counter}, func(c *vCounter) error { c.N++; return nil })
		return err
	})
	rw.led.mu.Lock()
	switch {
	case err == nil:
		rw.led.counters[rw.counter]++
	case failedMayLand || errors.Is(err, ErrAmbiguous):
		rw.led.unknown[rw.counter]++
	}
	rw.led.mu.Unlock()
	return err
}

// get reads v, one of the worker's acknowledged items, which must be there.
func (rw *relWorker) get(ctx context.Context, v relItem) error {
	return rw.stats.run(ctx, "Get", func(ctx context.Context) error {
		_, err := rw.items.Get(ctx, v, Consistent())
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("singletable: test: acknowledged item %v not found: %w", v.key(), err)
		}
		return err
	})
}
