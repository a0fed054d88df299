package fault

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// HTTPClient is what the SDK sends requests with (dynamodb.HTTPClient);
// *http.Client satisfies it, and so does [Injector].
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

var (
	_ HTTPClient          = (*Injector)(nil)
	_ dynamodb.HTTPClient = (*Injector)(nil)
)

// Options configure [New]. The zero value of every field means its
// documented default.
type Options struct {
	// Seed seeds the random source that decides whether a rule with a Rate
	// fires, which items [Unprocessed] withholds and which action
	// [TxConflict] blames. The same seed and the same sequence of requests
	// give the same faults (requests sent concurrently arrive in no fixed
	// order, so only sequential tests replay exactly). Default: a random
	// seed, which [Injector.Seed] reports so a failing test can log it.
	Seed uint64

	// Rand, when set, is the random source instead of one seeded with Seed.
	// The Injector serializes its calls.
	Rand rand.Source

	// Now is the clock of Rule.For and Lag.Duration. Default: time.Now.
	// Delay always waits in real time.
	Now func() time.Time
}

// Injector is an HTTP client for the SDK that injects the faults of the real
// DynamoDB service into the traffic to another client, normally the one
// talking to DynamoDB Local. Install it as dynamodb.Options.HTTPClient (or
// use [NewClient]): it then sits below the SDK's retry middleware, so every
// attempt the retryer makes passes through it and the real retry logic
// decides what the caller sees.
//
// It answers a request with the first of its rules that fires ([Injector.Add]),
// or forwards it; with a GSI lag set ([Injector.SetGSILag]) it also rewrites
// the responses of index reads. All methods are safe for concurrent use.
type Injector struct {
	next HTTPClient
	now  func() time.Time
	seed uint64

	mu       sync.Mutex // protects the fields below
	rng      *rand.Rand
	rules    []*rule
	stats    Stats
	lag      Lag
	tables   map[string]*tableInfo // key schemas learnt by DescribeTable, by table name
	lagState map[string]*tableLag  // pending writes and index reads, by table name
	requests uint64                // synthetic responses made, for their request IDs
}

// New returns an Injector that forwards to next what its rules let through.
// It has no rules and no GSI lag: until told otherwise it forwards every
// request unchanged and only counts them.
func New(next HTTPClient, optFns ...func(*Options)) *Injector {
	if next == nil {
		panic("fault: New with a nil HTTPClient")
	}
	var o Options
	for _, fn := range optFns {
		if fn != nil {
			fn(&o)
		}
	}
	i := &Injector{next: next, now: o.Now, tables: map[string]*tableInfo{}, lagState: map[string]*tableLag{}}
	if i.now == nil {
		i.now = time.Now
	}
	src := o.Rand
	if src == nil {
		i.seed = o.Seed
		if i.seed == 0 {
			i.seed = rand.Uint64() | 1
		}
		src = rand.NewPCG(i.seed, 0x9e3779b97f4a7c15)
	}
	i.rng = rand.New(src)
	i.stats = newStats()
	return i
}

// Seed returns the seed of the Injector's random source: [Options.Seed], or
// the random one chosen when that was zero; 0 when [Options.Rand] was given.
func (i *Injector) Seed() uint64 { return i.seed }

// Rule says which requests get which fault.
type Rule struct {
	// Ops are the operations the rule applies to, as named in the
	// X-Amz-Target header ("PutItem", "TransactWriteItems", ...). Empty: every
	// operation (to which Fault applies: see [Unprocessed] and [TxConflict]).
	Ops []string

	// Match, when set, must also return true for the rule to apply. It gets
	// the operation and the request body as the SDK sent it, which it must
	// not modify, and must not call the Injector.
	Match func(op string, body []byte) bool

	// Fault is what the rule does. Required.
	Fault Fault

	// Rate is the probability that the rule fires on a request it applies
	// to, drawn from the Injector's random source. 0 means 1 (always).
	Rate float64

	// Times is how many times the rule fires at most; 0 means no limit.
	Times int

	// For is how long after Add the rule stays active, by [Options.Now];
	// 0 means for ever.
	For time.Duration
}

// rule is a Rule as added, with its state.
type rule struct {
	Rule
	ops   map[string]bool // nil: every operation
	until time.Time       // zero: for ever
	fired int
}

// Add appends r to the Injector's rules and returns a function that removes
// it (idempotent). For each request the rules are tried in the order they
// were added; the first that applies and fires answers it, and the others
// are not tried, so one request gets at most one fault. Add panics on an
// invalid rule: a zero Fault, an unknown operation name, a Rate outside
// [0, 1], a negative Times or For.
func (i *Injector) Add(r Rule) (remove func()) {
	if r.Fault.kind == "" {
		panic("fault: Add: Rule.Fault is not set")
	}
	if r.Rate < 0 || r.Rate > 1 || math.IsNaN(r.Rate) {
		panic(fmt.Sprintf("fault: Add: Rule.Rate %g is outside [0, 1]", r.Rate))
	}
	if r.Times < 0 || r.For < 0 {
		panic("fault: Add: negative Rule.Times or Rule.For")
	}
	ru := &rule{Rule: r}
	ru.Ops = slices.Clone(r.Ops)
	if len(r.Ops) > 0 {
		ru.ops = map[string]bool{}
		for _, op := range r.Ops {
			if !knownOp(op) {
				panic(fmt.Sprintf("fault: Add: unknown operation %q in Rule.Ops", op))
			}
			ru.ops[op] = true
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if r.For > 0 {
		ru.until = i.now().Add(r.For)
	}
	i.rules = append(i.rules, ru)
	return func() {
		i.mu.Lock()
		defer i.mu.Unlock()
		i.rules = slices.DeleteFunc(i.rules, func(x *rule) bool { return x == ru })
	}
}

// pick returns the fault of the first rule that fires on op, if any, and
// counts the request and the fault.
func (i *Injector) pick(op string, body []byte) (Fault, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.stats.Requests[op]++
	if len(i.rules) == 0 {
		return Fault{}, false
	}
	now := i.now()
	for _, r := range i.rules {
		switch {
		case r.ops != nil && !r.ops[op],
			!r.Fault.appliesTo(op),
			r.Times > 0 && r.fired >= r.Times,
			!r.until.IsZero() && !now.Before(r.until),
			r.Match != nil && !r.Match(op, body),
			r.Rate > 0 && r.Rate < 1 && i.rng.Float64() >= r.Rate:
			continue
		}
		r.fired++
		i.stats.Faults[r.Fault.kind]++
		return r.Fault, true
	}
	return Fault{}, false
}

// random runs fn with the Injector's random source, serialized.
func (i *Injector) random(fn func(r *rand.Rand)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	fn(i.rng)
}

// Stats are counts of what an Injector saw and did.
type Stats struct {
	// Requests counts the requests the SDK sent through the Injector, per
	// operation: one per attempt, so retries show here.
	Requests map[string]int
	// Forwarded counts the requests sent on to the next client, per
	// operation, including rewritten ones ([Unprocessed]) and those whose
	// response was then lost, but not the Injector's own probes.
	Forwarded map[string]int
	// Faults counts the faults fired, per kind.
	Faults map[Kind]int
	// LostWrites counts the writes (PutItem, UpdateItem, DeleteItem,
	// BatchWriteItem, TransactWriteItems) that DynamoDB Local applied
	// (answered 2xx) but whose response [LoseResponse] dropped.
	LostWrites int
	// Probes counts the requests the Injector sent itself for the GSI lag:
	// DescribeTable to learn a key schema, GetItem and BatchGetItem to read
	// the images items had before a write.
	Probes int
}

func newStats() Stats {
	return Stats{Requests: map[string]int{}, Forwarded: map[string]int{}, Faults: map[Kind]int{}}
}

// Stats returns a copy of the counts so far.
func (i *Injector) Stats() Stats {
	i.mu.Lock()
	defer i.mu.Unlock()
	s := i.stats
	s.Requests = maps.Clone(s.Requests)
	s.Forwarded = maps.Clone(s.Forwarded)
	s.Faults = maps.Clone(s.Faults)
	return s
}

// SetGSILag makes new writes invisible to global secondary index reads for a
// while, as DynamoDB's asynchronous index propagation does; the zero Lag
// turns it off and forgets every pending write. See [Lag] for the model and
// its approximations. The new lag applies to writes already pending too.
func (i *Injector) SetGSILag(l Lag) {
	if l.Duration < 0 || l.Reads < 0 {
		panic("fault: SetGSILag with a negative Duration or Reads")
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.lag = l
	if !l.enabled() {
		clear(i.lagState)
	}
}

func (i *Injector) gsiLag() Lag {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.lag
}

// Operation names, as in X-Amz-Target.
const (
	opGet           = "GetItem"
	opPut           = "PutItem"
	opUpdate        = "UpdateItem"
	opDelete        = "DeleteItem"
	opQuery         = "Query"
	opScan          = "Scan"
	opBatchGet      = "BatchGetItem"
	opBatchWrite    = "BatchWriteItem"
	opTransactGet   = "TransactGetItems"
	opTransactWrite = "TransactWriteItems"
	opDescribeTable = "DescribeTable"
)

// isWrite reports whether op writes items.
func isWrite(op string) bool {
	switch op {
	case opPut, opUpdate, opDelete, opBatchWrite, opTransactWrite:
		return true
	}
	return false
}

// knownOps lists DynamoDB's operations (service/dynamodb v1.74.0, as v1.73.1), each
// between spaces.
const knownOps = "" +
	" BatchExecuteStatement BatchGetItem BatchWriteItem CancelBulkOperation CreateBackup CreateGlobalTable " +
	"CreateTable DeleteBackup DeleteItem DeleteResourcePolicy DeleteTable DescribeBackup DescribeBulkOperation " +
	"DescribeContinuousBackups DescribeContributorInsights DescribeEndpoints DescribeExport DescribeGlobalTable " +
	"DescribeGlobalTableSettings DescribeImport DescribeKinesisStreamingDestination DescribeLimits DescribeTable " +
	"DescribeTableReplicaAutoScaling DescribeTimeToLive DisableKinesisStreamingDestination " +
	"EnableKinesisStreamingDestination ExecuteStatement ExecuteTransaction ExportTableToPointInTime GetItem " +
	"GetResourcePolicy ImportTable ListBackups ListBulkOperations ListContributorInsights ListExports " +
	"ListGlobalTables ListImports ListTables ListTagsOfResource PutItem PutResourcePolicy Query " +
	"RestoreTableFromBackup RestoreTableToPointInTime Scan SearchVectors StartBulkPutItems TagResource " +
	"TransactGetItems TransactWriteItems UntagResource UpdateContinuousBackups UpdateContributorInsights " +
	"UpdateGlobalTable UpdateGlobalTableSettings UpdateItem UpdateKinesisStreamingDestination UpdateTable " +
	"UpdateTableReplicaAutoScaling UpdateTimeToLive "

// knownOp reports whether op is one of DynamoDB's operations.
func knownOp(op string) bool {
	return op != "" && !strings.Contains(op, " ") && strings.Contains(knownOps, " "+op+" ")
}
