package stream

// The fleet under faults at the HTTP layer, each with the lease store in
// DynamoDB Local (a TableStore) reached through a fault injector:
//
//   - TestFleetHungLeaseStore: a consumer whose lease-store calls hang gives its
//     shard up (handlers cancelled, reading stopped) at its lease's local
//     expiry, before another consumer takes it.
//   - TestFleetLostLeaseWriteAnswers: lost answers on every kind of lease write
//     (take, renew, checkpoint, release, ask, hand-over) are judged by reading
//     the lease back: nobody drops a lease it holds, nothing is handled twice.
//   - TestFleetStartLatestRestart: a StartLatest shard is pinned when first
//     read; a restart after a graceful stop, and the next holder after a crash
//     before the first checkpoint, resume from the pin and lose nothing.

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"

	"github.com/singletable/singletable/fault"
)

// faultStore returns a TableStore in tbl's table reached through a fault
// injector (the SDK's standard retryer: 3 attempts, 2 ms backoff, no retry
// quota), with stall in front of the injector, for a consumer whose lease
// store misbehaves while the others' does not.
func faultStore(t *testing.T, tbl *Table) (*TableStore, *fault.Injector, *stall) {
	t.Helper()
	st := &stall{}
	client, inj := fault.NewClient(local.Get(t), func(o *fault.ClientOptions) {
		o.DynamoDB = append(o.DynamoDB, func(d *dynamodb.Options) {
			d.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = 3
				so.Backoff = retry.NewExponentialJitterBackoff(2 * time.Millisecond)
				so.MaxBackoff = 2 * time.Millisecond
				so.RateLimiter = ratelimit.None
			})
			st.next = d.HTTPClient
			d.HTTPClient = st
		})
	})
	t.Cleanup(st.release)
	view, err := singletable.NewTable(client, tbl.Name(), append(slices.Clone(testTableOptions), singletable.WithBackoff(singletable.Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 50}))...)
	require.NoError(t, err)
	ts, err := NewTableStore(view)
	require.NoError(t, err)
	return ts, inj, st
}

// stall is an HTTP client in front of another that, once stalled, holds every
// request without forwarding or answering it, whatever its context says, until
// released: a half-open connection under a client that does not give up. A
// request held fails, once released, as a reset connection; later ones pass.
type stall struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	mu       sync.Mutex    // protects gate and released
	gate     chan struct{} // nil: requests pass; else closed on release
	released bool
	held     atomic.Int32 // requests held so far
}

func (s *stall) hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil || s.released {
		s.gate, s.released = make(chan struct{}), false
	}
}

func (s *stall) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil && !s.released {
		close(s.gate)
		s.released = true
	}
}

func (s *stall) Do(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	gate, released := s.gate, s.released
	s.mu.Unlock()
	if gate == nil || released {
		return s.next.Do(req)
	}
	s.held.Add(1)
	<-gate
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// countingStreams counts one consumer's GetRecords calls.
type countingStreams struct {
	Client
	reads atomic.Int64
}

func (c *countingStreams) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	c.reads.Add(1)
	return c.Client.GetRecords(ctx, in, o...)
}

// TestFleetHungLeaseStore: w1 handles a record whose handler takes long when
// every call to its lease store starts to hang, sent and never answered, even
// past its context (a half-open connection under a client that does not give
// up): its leader is stuck in a call, and so may be its reader's checkpoint.
// w2, whose store answers, takes the shard once w1's lease has not moved for a
// lease duration, and handles the record again. w1's handler must have been
// cancelled, and its reading stopped, before: at the lease's local expiry,
// which a timer enforces whatever the leader is doing. No order is handled by
// two workers at once; every change is handled, in order.
func TestFleetHungLeaseStore(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	healthy, err := NewTableStore(tbl)
	require.NoError(t, err)
	hung, _, st := faultStore(t, tbl)
	fs := newFleetStream(t, 1, 1)
	const n = 4
	fs.write(t, 0, n, 0)
	log := newFleetLog(10 * time.Millisecond)
	log.slow = map[string]time.Duration{"w1": time.Minute} // w1's handler runs until its context ends
	const lease, renew = 2 * time.Second, 200 * time.Millisecond
	opts := []Option{fastPolls, FromARN("arn:fake"), LeaseTiming(lease, renew), CheckpointEvery(20 * time.Millisecond)}
	s1 := &countingStreams{Client: fs}
	w1 := startMember(t.Context(), tbl, s1, log, "w1", append(opts, Leases(hung))...)
	waitFor(t, "w1 handling the first change", 30*time.Second, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return log.busy["c0/o0"] == "w1" })

	st.hang()
	hungAt := time.Now()
	w2 := startMember(t.Context(), tbl, fs, log, "w2", append(opts, Leases(healthy))...)
	waitFor(t, "w2 takes the shard", 30*time.Second, func() bool { return owners(t, healthy, "arn:fake")["shard-00"] == "w2" })
	took := time.Since(hungAt)
	reads := s1.reads.Load()
	waitFor(t, "every change, by w2", 30*time.Second, func() bool { return log.complete(fs.orders, n) })
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, reads, s1.reads.Load(), "w1 stopped reading the shard when its lease lapsed")
	assert.Positive(t, st.held.Load(), "w1's store calls hung")

	log.check(t, fs.orders, n) // no order handled by two workers at once, no overlap on the shard
	log.mu.Lock()
	var w1End time.Time
	for _, s := range log.spans["shard-00"] {
		if s.worker == "w1" && s.end.After(w1End) {
			w1End = s.end
		}
	}
	assert.Less(t, w1End.Sub(hungAt), lease+time.Second, "w1's handler was cancelled at its lease's expiry, not when w1 stopped")
	assert.Zero(t, log.byWorker["w1"], "w1's handler never finished")
	log.mu.Unlock()
	t.Logf("FIGURES store hung; w1's handler cancelled %s later; w2 took the shard %s later (lease %s, renewal %s)",
		w1End.Sub(hungAt).Round(time.Millisecond), took.Round(time.Millisecond), lease, renew)

	st.release()
	w2.stop(t)
	w1.cancel()
	select {
	case <-w1.done: // an error of its store, or its context's
	case <-time.After(time.Minute):
		t.Fatal("w1 did not stop once its store answered again")
	}
}

// leaseWriteKind classifies a lease write by its request body, for rules that
// lose the answers of one kind: take, renew, checkpoint, release, ask or
// handover ("" for anything else).
func leaseWriteKind(op string, body []byte) string {
	if op != "UpdateItem" {
		return ""
	}
	var in struct {
		UpdateExpression, ConditionExpression string
		ExpressionAttributeNames              map[string]string
	}
	if json.Unmarshal(body, &in) != nil {
		return ""
	}
	names := regexp.MustCompile(`#[A-Za-z0-9_]+`)
	resolve := func(s string) string {
		return names.ReplaceAllStringFunc(s, func(p string) string { return in.ExpressionAttributeNames[p] })
	}
	update, cond := resolve(in.UpdateExpression), resolve(in.ConditionExpression)
	set, remove, _ := strings.Cut(update, " REMOVE ")
	switch {
	case !strings.Contains(set, attrCounter):
		if strings.Contains(set, attrHandOff) {
			return "ask"
		}
	case strings.Contains(set, attrCPOrder):
		return "checkpoint"
	case strings.Contains(set, attrOwner+" = ") && strings.Contains(cond, attrHandOff+" = "):
		return "handover"
	case strings.Contains(set, attrOwner+" = "):
		return "take"
	case strings.Contains(remove, attrOwner):
		return "release"
	case strings.Contains(set, attrExpires):
		return "renew"
	}
	return ""
}

// TestFleetLostLeaseWriteAnswers loses, after DynamoDB Local applied them, the
// answers of the first few lease writes of every kind: takes, renewals and
// checkpoints while w1 runs alone, asks and hand-overs when w2 joins and the
// shards are balanced, releases when both stop. The store judges each by
// reading the lease back, so no consumer takes a write of its own for another
// worker's: nobody drops a lease it holds, nothing is handled twice, every
// change is handled in order, each lease's history moves one counter at a
// time, and every lease is released at the stop.
func TestFleetLostLeaseWriteAnswers(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	ts, inj, _ := faultStore(t, tbl)
	store := newRecordingStore(ts)
	kinds := []string{"take", "renew", "checkpoint", "ask", "handover", "release"}
	var mu sync.Mutex // protects lost
	lost := map[string]int{}
	for _, kind := range kinds {
		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Times: 3, Match: func(op string, body []byte) bool {
			if leaseWriteKind(op, body) != kind {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			lost[kind]++ // Match is asked only while the rule has fires left, and it fires when Match says so
			return true
		}})
	}
	fs := newFleetStream(t, 4, 2)
	const n = 30
	log := newFleetLog(time.Millisecond)
	opts := []Option{fastPolls, FromARN("arn:fake"), Leases(store), LeaseTiming(4*time.Second, 200*time.Millisecond), CheckpointEvery(20 * time.Millisecond)}
	fs.write(t, 0, 5, 0)
	w1 := startMember(t.Context(), tbl, fs, log, "w1", opts...)
	waitFor(t, "w1 takes every shard", 30*time.Second, func() bool { return countOwners(owners(t, ts, "arn:fake"))["w1"] == 4 })
	fs.write(t, 5, 15, 20*time.Millisecond)
	w2 := startMember(t.Context(), tbl, fs, log, "w2", opts...)
	waitFor(t, "two shards each", 60*time.Second, func() bool {
		c := countOwners(owners(t, ts, "arn:fake"))
		return c["w1"] == 2 && c["w2"] == 2
	})
	fs.write(t, 15, n, 20*time.Millisecond)
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(fs.orders, n) })
	w1.stop(t)
	w2.stop(t)

	mu.Lock()
	for _, kind := range kinds {
		assert.Positive(t, lost[kind], "answers of %s writes were lost", kind)
	}
	t.Logf("FIGURES lost answers by kind %v; %d writes landed unanswered", lost, inj.Stats().LostWrites)
	mu.Unlock()
	assert.Empty(t, fs.problems())
	assert.Zero(t, log.check(t, fs.orders, n), "no lost answer made a consumer give up a lease it held: nothing handled twice")
	checkHistory(t, store.writes())
	for shard, owner := range owners(t, ts, "arn:fake") {
		assert.Empty(t, owner, "shard %s released at stop", shard)
	}
}

// TestFleetLeaseWritesMeetTransactions: every kind of lease write refused, a
// few times each, with TransactionConflictException, as DynamoDB refuses a
// write to an item that a transaction in progress holds: with FenceWrites,
// every handler's write is a transaction checking the lease item, so a
// renewal or a checkpoint meets one often. Each is sent again (it applied
// nothing): no consumer stops, gives up a lease or handles a record twice.
func TestFleetLeaseWritesMeetTransactions(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	ts, inj, _ := faultStore(t, tbl)
	store := newRecordingStore(ts)
	kinds := []string{"take", "renew", "checkpoint", "ask", "handover", "release"}
	var mu sync.Mutex // protects refused
	refused := map[string]int{}
	for _, kind := range kinds {
		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.TxConflict(), Times: 3, Match: func(op string, body []byte) bool {
			if leaseWriteKind(op, body) != kind {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			refused[kind]++
			return true
		}})
	}
	fs := newFleetStream(t, 4, 2)
	const n = 30
	log := newFleetLog(time.Millisecond)
	opts := []Option{fastPolls, FromARN("arn:fake"), Leases(store), LeaseTiming(4*time.Second, 200*time.Millisecond), CheckpointEvery(20 * time.Millisecond)}
	fs.write(t, 0, 5, 0)
	w1 := startMember(t.Context(), tbl, fs, log, "w1", opts...)
	waitFor(t, "w1 takes every shard", 30*time.Second, func() bool { return countOwners(owners(t, ts, "arn:fake"))["w1"] == 4 })
	fs.write(t, 5, 15, 20*time.Millisecond)
	w2 := startMember(t.Context(), tbl, fs, log, "w2", opts...)
	waitFor(t, "two shards each", 60*time.Second, func() bool {
		c := countOwners(owners(t, ts, "arn:fake"))
		return c["w1"] == 2 && c["w2"] == 2
	})
	fs.write(t, 15, n, 20*time.Millisecond)
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(fs.orders, n) })
	w1.stop(t)
	w2.stop(t)

	mu.Lock()
	for _, kind := range kinds {
		assert.Positive(t, refused[kind], "%s writes were refused for a transaction in progress", kind)
	}
	t.Logf("FIGURES lease writes refused for a transaction in progress, by kind: %v", refused)
	mu.Unlock()
	assert.Empty(t, fs.problems())
	assert.Zero(t, log.check(t, fs.orders, n), "no refusal made a consumer give up a lease it held: nothing handled twice")
	checkHistory(t, store.writes())
	for shard, owner := range owners(t, ts, "arn:fake") {
		assert.Empty(t, owner, "shard %s released at stop", shard)
	}
}

// TestFleetStartLatestRestart: StartLatest on DynamoDB Local's stream, leases
// in a TableStore.
//
// graceful: a first run sees no record and stops gracefully; the changes
// written while no consumer runs are all handled by the next run on the same
// store, which resumes from the pin the first run wrote when it first read the
// shard rather than from the stream's latest position.
//
// crash: a holder that handles no change to its end (its handler waits) dies
// before its first checkpoint, its store cut off; the next holder takes the
// shard once the lease expires and handles every change written since the
// pin: those the dead holder had begun, and those written while nobody held
// the shard.
func TestFleetStartLatestRestart(t *testing.T) {
	write := func(t *testing.T, orders *singletable.Entity[tOrder], from, to int) {
		for n := from; n < to; n++ {
			_, err := orders.Put(t.Context(), tOrder{CustomerID: "c0", OrderID: "o0", Status: "S", CreatedAt: t0, Count: n})
			require.NoError(t, err)
		}
	}
	const lease, renew = 2 * time.Second, 200 * time.Millisecond
	opts := []Option{fastPolls, StartAt(StartLatest), LeaseTiming(lease, renew)}
	ids := []string{"c0/o0"}

	t.Run("graceful", func(t *testing.T) {
		tbl := newStreamTable(t)
		_, orders := registerAll(t, tbl)
		noLeaks(t)
		store, err := NewTableStore(tbl)
		require.NoError(t, err)
		streams := &countingStreams{Client: localStreams(t)}
		log := newFleetLog(0)
		first := startMember(t.Context(), tbl, streams, log, "w1", append(opts, Leases(store))...)
		waitFor(t, "the first run reading", 30*time.Second, func() bool {
			return owners(t, store, streamARNOf(t, tbl))[firstShard(t, store, tbl)] == "w1" && streams.reads.Load() >= 3
		})
		first.stop(t)
		log.mu.Lock()
		assert.Zero(t, log.handled, "the first run saw no change")
		log.mu.Unlock()

		write(t, orders, 0, 5) // while no consumer runs
		second := startMember(t.Context(), tbl, localStreams(t), log, "w2", append(opts, Leases(store))...)
		waitFor(t, "the changes made while no consumer ran", 30*time.Second, func() bool { return log.complete(ids, 5) })
		second.stop(t)
		assert.Zero(t, log.check(t, ids, 5))
	})

	t.Run("crash", func(t *testing.T) {
		tbl := newStreamTable(t)
		_, orders := registerAll(t, tbl)
		noLeaks(t)
		healthy, err := NewTableStore(tbl)
		require.NoError(t, err)
		dying, inj, _ := faultStore(t, tbl)
		log := newFleetLog(0)
		log.slow = map[string]time.Duration{"w1": time.Minute} // w1 finishes nothing
		first := startMember(t.Context(), tbl, localStreams(t), log, "w1", append(opts, Leases(dying), CheckpointEvery(time.Hour))...)
		arn := streamARNOf(t, tbl)
		waitFor(t, "w1 holds the shard", 30*time.Second, func() bool { return owners(t, healthy, arn)[firstShard(t, healthy, tbl)] == "w1" })
		time.Sleep(300 * time.Millisecond) // w1 reads at the latest position
		write(t, orders, 0, 3)
		waitFor(t, "w1 handling the first change", 30*time.Second, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return log.busy["c0/o0"] == "w1" })

		inj.Add(fault.Rule{Fault: fault.Reset()}) // w1 dies: nothing it sends reaches the table any more
		first.cancel()
		select {
		case err := <-first.done:
			require.Error(t, err, "w1's last checkpoint and release did not get through")
		case <-time.After(time.Minute):
			t.Fatal("w1 did not stop")
		}
		write(t, orders, 3, 5) // while nobody holds the shard
		second := startMember(t.Context(), tbl, localStreams(t), log, "w2", append(opts, Leases(healthy))...)
		waitFor(t, "every change since the pin, by w2", 30*time.Second, func() bool { return log.complete(ids, 5) })
		second.stop(t)
		log.check(t, ids, 5)
		log.mu.Lock()
		assert.Zero(t, log.byWorker["w1"])
		log.mu.Unlock()
	})
}

// firstShard returns the shard of the stream's first lease ("" before any).
func firstShard(t *testing.T, store LeaseStore, tbl *Table) string {
	leases, err := store.Leases(t.Context(), streamARNOf(t, tbl))
	require.NoError(t, err)
	if len(leases) == 0 {
		return ""
	}
	return leases[0].Shard
}
