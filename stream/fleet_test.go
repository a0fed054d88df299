package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
)

// fleetLog records what the handlers of a fleet of consumers did: the counts
// of each order, in the order handled (repeats included), and for each shard
// when each worker's handler ran.
type fleetLog struct {
	mu       sync.Mutex // protects every field below
	counts   map[string][]int
	busy     map[string]string // order -> worker handling it now
	spans    map[string][]span // shard -> handler runs
	errs     []string
	handled  int
	byWorker map[string]int
	delay    time.Duration
	slow     map[string]time.Duration // a worker's handler delay instead of delay; set before use
}

type span struct {
	worker     string
	start, end time.Time
}

func newFleetLog(delay time.Duration) *fleetLog {
	return &fleetLog{counts: map[string][]int{}, busy: map[string]string{}, spans: map[string][]span{}, byWorker: map[string]int{}, delay: delay}
}

// handler returns worker's handler.
func (l *fleetLog) handler(worker string) func(context.Context, StreamRecord) error {
	return func(ctx context.Context, r StreamRecord) error {
		_, o, ok := singletable.Images[tOrder](r)
		if !ok {
			return fmt.Errorf("record of type %q", r.Type)
		}
		id := o.CustomerID + "/" + o.OrderID
		start := time.Now()
		l.mu.Lock()
		if w, busy := l.busy[id]; busy {
			l.errs = append(l.errs, fmt.Sprintf("order %s handled by %s and %s at once", id, w, worker))
		}
		l.busy[id] = worker
		l.mu.Unlock()
		var err error
		delay := l.delay
		if d, ok := l.slow[worker]; ok {
			delay = d
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.busy, id)
		l.spans[r.ShardID] = append(l.spans[r.ShardID], span{worker: worker, start: start, end: time.Now()})
		if err != nil {
			return err // not handled: it comes again
		}
		l.counts[id] = append(l.counts[id], o.Count)
		l.handled++
		l.byWorker[worker]++
		return nil
	}
}

// complete reports whether every order has reached count n-1.
func (l *fleetLog) complete(orders []string, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range orders {
		c := l.counts[id]
		if len(c) == 0 || slices.Max(c) != n-1 {
			return false
		}
	}
	return true
}

// check asserts per-item order across the fleet: each order's counts start at
// 0, never skip one, and go back only to replay (at least once); and no
// shard's records were handled by two workers at overlapping times. It
// returns the number of repeats.
func (l *fleetLog) check(t *testing.T, orders []string, n int) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(t, l.errs)
	repeats := 0
	for _, id := range orders {
		c := l.counts[id]
		require.NotEmpty(t, c, id)
		assert.Equal(t, 0, c[0], "order %s begins at 0", id)
		seen := map[int]bool{c[0]: true}
		for i := 1; i < len(c); i++ {
			assert.LessOrEqual(t, c[i], c[i-1]+1, "order %s: %d after %d: a change skipped, or out of order", id, c[i], c[i-1])
			if seen[c[i]] {
				repeats++
			}
			seen[c[i]] = true
		}
		assert.Len(t, seen, n, "order %s: every change handled", id)
	}
	for shard, spans := range l.spans {
		sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
		var last span
		for _, s := range spans {
			if last.worker != "" && s.worker != last.worker {
				assert.False(t, s.start.Before(last.end), "shard %s: %s handled a record from %s while %s's handler ran until %s", shard, s.worker, s.start.Format(time.StampMicro), last.worker, last.end.Format(time.StampMicro))
			}
			if s.end.After(last.end) || s.worker != last.worker {
				last = s
			}
		}
	}
	return repeats
}

// fleetStream is a fake stream of shards each holding the changes of a few
// orders, fed while the consumers run.
type fleetStream struct {
	*fakeStreams
	orders []string
	shard  map[string]string // order -> shard it is written to
}

func newFleetStream(t *testing.T, shards, ordersPerShard int) *fleetStream {
	fs := &fleetStream{shard: map[string]string{}}
	var sh []*fakeShard
	for s := range shards {
		id := fmt.Sprintf("shard-%02d", s)
		sh = append(sh, &fakeShard{id: id})
		for o := range ordersPerShard {
			oid := fmt.Sprintf("c%d/o%d", s, o)
			fs.orders = append(fs.orders, oid)
			fs.shard[oid] = id
		}
	}
	fs.fakeStreams = newFakeStreams(nil, sh...)
	return fs
}

// write appends changes from to to-1 of every order to its shard, one round of
// orders at a time, pausing between rounds.
func (fs *fleetStream) write(t *testing.T, from, to int, pause time.Duration) {
	for n := from; n < to; n++ {
		for _, oid := range fs.orders {
			c, o, _ := strings.Cut(oid, "/")
			fs.append(fs.shard[oid], orderChanges(t, c, o, n, 1)...)
		}
		time.Sleep(pause)
	}
}

// owners returns the owner of every unfinished lease, by shard.
func owners(t *testing.T, store LeaseStore, group string) map[string]string {
	leases, err := store.Leases(context.Background(), group)
	require.NoError(t, err)
	m := map[string]string{}
	for _, l := range leases {
		if !l.Finished {
			m[l.Shard] = l.Owner
		}
	}
	return m
}

func countOwners(m map[string]string) map[string]int {
	c := map[string]int{}
	for _, o := range m {
		c[o]++
	}
	return c
}

// fleetMember is one consumer of a fleet test, running in a goroutine.
type fleetMember struct {
	worker string
	cancel context.CancelFunc
	done   chan error
}

func startMember(ctx context.Context, tbl *Table, client Client, log *fleetLog, worker string, opts ...Option) *fleetMember {
	ctx, cancel := context.WithCancel(ctx)
	m := &fleetMember{worker: worker, cancel: cancel, done: make(chan error, 1)}
	go func() {
		m.done <- Consume(ctx, tbl, client, log.handler(worker), append(opts, Worker(worker))...)
	}()
	return m
}

func (m *fleetMember) stop(t *testing.T) {
	t.Helper()
	m.cancel()
	select {
	case err := <-m.done:
		require.ErrorIs(t, err, context.Canceled, m.worker)
		assert.Equal(t, context.Canceled, err, "%s stopped cleanly", m.worker)
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop", m.worker)
	}
}

// waitFor polls cond every 10ms for up to limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestFleetThreeConsumers runs three consumers with their leases in DynamoDB
// Local on a stream of six shards fed while they run. The first starts alone
// and takes every shard; the two others join and are handed two each. Every
// change is handled once, each order's in order, no shard's records are handled
// by two workers at once (handler timing), and the lease history shows every
// write at the next counter, checkpoints moving only forward, and owners
// changing only by take, hand-over, release or finish.
func TestFleetThreeConsumers(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	ts, err := NewTableStore(tbl)
	require.NoError(t, err)
	store := newRecordingStore(ts)
	fs := newFleetStream(t, 6, 3)
	const n = 40
	log := newFleetLog(time.Millisecond)
	opts := []Option{fastPolls, FromARN("arn:fake"), Leases(store), LeaseTiming(4*time.Second, 300*time.Millisecond), CheckpointEvery(20 * time.Millisecond)}

	fs.write(t, 0, 5, 0)
	w1 := startMember(t.Context(), tbl, fs, log, "w1", opts...)
	waitFor(t, "w1 to take every shard", 30*time.Second, func() bool { return countOwners(owners(t, ts, "arn:fake"))["w1"] == 6 })
	writes := make(chan struct{})
	go func() { defer close(writes); fs.write(t, 5, 20, 100*time.Millisecond) }() // while the shards move
	w2 := startMember(t.Context(), tbl, fs, log, "w2", opts...)
	w3 := startMember(t.Context(), tbl, fs, log, "w3", opts...)
	took := waitFor(t, "two shards each", 60*time.Second, func() bool {
		c := countOwners(owners(t, ts, "arn:fake"))
		return c["w1"] == 2 && c["w2"] == 2 && c["w3"] == 2
	})
	t.Logf("FIGURES balanced 6 shards over 3 workers %s after the two joined", took.Round(time.Millisecond))
	<-writes
	fs.write(t, 20, n, 20*time.Millisecond)
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(fs.orders, n) })
	for _, m := range []*fleetMember{w1, w2, w3} {
		m.stop(t)
	}
	assert.Empty(t, fs.problems())
	repeats := log.check(t, fs.orders, n)
	assert.Zero(t, repeats, "hand-overs checkpoint first: nothing handled twice")
	byShard := checkHistory(t, store.writes())
	log.mu.Lock()
	for _, w := range []string{"w1", "w2", "w3"} {
		assert.Positive(t, log.byWorker[w], "%s handled changes", w)
	}
	log.mu.Unlock()
	handovers := 0
	for _, ws := range byShard {
		for _, w := range ws {
			if w.op == "handover" {
				handovers++
			}
		}
	}
	assert.GreaterOrEqual(t, handovers, 4, "w2 and w3 were handed two shards each")
	log.mu.Lock()
	t.Logf("FIGURES %d changes handled (%v by worker), %d repeats, %d lease writes, %d hand-overs", log.handled, log.byWorker, repeats, len(store.writes()), handovers)
	log.mu.Unlock()
	for shard, owner := range owners(t, ts, "arn:fake") {
		if !assert.Empty(t, owner, "shard %s released at stop", shard) {
			for _, w := range byShard[shard] {
				t.Logf("  %s %s counter %d owner %q", w.at.Format("15:04:05.000"), w.op, w.l.Counter, w.l.Owner)
			}
		}
	}
}

// crashStore is a lease store that stops answering when its process "dies":
// no renewal, checkpoint or release gets through, as when a process is killed.
type crashStore struct {
	LeaseStore
	mu      sync.Mutex // protects crashed
	crashed bool
}

var errCrashed = errors.New("process killed")

func (c *crashStore) dead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

func (c *crashStore) crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashed = true
}

func (c *crashStore) Leases(ctx context.Context, g string) ([]Lease, error) {
	if c.dead() {
		return nil, errCrashed
	}
	return c.LeaseStore.Leases(ctx, g)
}

func (c *crashStore) TakeLease(ctx context.Context, l Lease, o string, e time.Time) (Lease, error) {
	if c.dead() {
		return Lease{}, errCrashed
	}
	return c.LeaseStore.TakeLease(ctx, l, o, e)
}

func (c *crashStore) RenewLease(ctx context.Context, l Lease, e time.Time) (Lease, error) {
	if c.dead() {
		return Lease{}, errCrashed
	}
	return c.LeaseStore.RenewLease(ctx, l, e)
}

func (c *crashStore) Checkpoint(ctx context.Context, l Lease, cp string, f bool) (Lease, error) {
	if c.dead() {
		return Lease{}, errCrashed
	}
	return c.LeaseStore.Checkpoint(ctx, l, cp, f)
}

func (c *crashStore) ReleaseLease(ctx context.Context, l Lease) error {
	if c.dead() {
		return errCrashed
	}
	return c.LeaseStore.ReleaseLease(ctx, l)
}

func (c *crashStore) HandOver(ctx context.Context, l Lease, e time.Time) (Lease, error) {
	if c.dead() {
		return Lease{}, errCrashed
	}
	return c.LeaseStore.HandOver(ctx, l, e)
}

// TestFleetKilledConsumer kills one of three consumers (no release, no last
// checkpoint) while changes flow: the others take its shards within the lease
// duration plus one renewal interval, resume after its checkpoints, and every
// change is handled, in order per order (some twice: those the dead consumer
// handled after its last checkpoint).
func TestFleetKilledConsumer(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	ts, err := NewTableStore(tbl)
	require.NoError(t, err)
	store := newRecordingStore(ts)
	fs := newFleetStream(t, 6, 3)
	const n = 30
	const lease, renew = 2 * time.Second, 250 * time.Millisecond
	log := newFleetLog(time.Millisecond)
	opts := []Option{fastPolls, FromARN("arn:fake"), LeaseTiming(lease, renew), CheckpointEvery(200 * time.Millisecond)}
	fs.write(t, 0, 5, 0)
	crashing := &crashStore{LeaseStore: store}
	members := []*fleetMember{
		startMember(t.Context(), tbl, fs, log, "w1", append(opts, Leases(store))...),
		startMember(t.Context(), tbl, fs, log, "w2", append(opts, Leases(crashing))...),
		startMember(t.Context(), tbl, fs, log, "w3", append(opts, Leases(store))...),
	}
	waitFor(t, "two shards each", 60*time.Second, func() bool {
		c := countOwners(owners(t, ts, "arn:fake"))
		return c["w1"] == 2 && c["w2"] == 2 && c["w3"] == 2
	})
	writes := make(chan struct{})
	go func() { defer close(writes); fs.write(t, 5, n, 20*time.Millisecond) }()
	waitFor(t, "changes flowing", 30*time.Second, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return log.byWorker["w2"] > 30 })

	crashing.crash() // w2 "dies": from now on nothing it sends reaches the table
	killed := time.Now()
	members[1].cancel()
	err = <-members[1].done
	require.ErrorIs(t, err, errCrashed, "its last checkpoints and releases did not get through")
	waitFor(t, "w2's shards taken", 30*time.Second, func() bool { return countOwners(owners(t, ts, "arn:fake"))["w2"] == 0 })
	took := time.Since(killed)
	t.Logf("FIGURES w2 killed; its shards taken by the others %s later (lease %s, renewal %s)", took.Round(time.Millisecond), lease, renew)
	// The bound is lease + renew plus the time of the survivors' rounds (a
	// Query and a few writes each); the margin is for a loaded machine (2
	// cores shared with other test runs), where those rounds start late: the
	// test catches a lease that never expires or waits twice as long, and
	// FIGURES says how long it took.
	assert.Less(t, took, 2*lease+renew+5*time.Second, "taken within the lease duration plus one renewal interval, give or take a round")
	assert.Greater(t, took, lease-renew, "not before the lease could expire")
	<-writes
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(fs.orders, n) })
	members[0].stop(t)
	members[2].stop(t)
	repeats := log.check(t, fs.orders, n)
	checkHistory(t, store.writes())
	t.Logf("FIGURES after the kill every change was handled; %d handled twice (by w2 after its last checkpoint)", repeats)
}

// TestFleetStaleHolderFenced: a consumer whose lease was taken while it was
// stalled (its renewals and checkpoints held up past the lease duration) cannot
// checkpoint: the conditional write refuses it, it stops reading the shard, and
// it goes on with the rest.
func TestFleetStaleHolderFenced(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := &MemoryStore{}
	recs := orderChanges(t, "c1", "o1", 0, 4)
	f := newFakeStreams(nil, &fakeShard{id: "A", records: recs})
	log := newFleetLog(0)
	m := startMember(t.Context(), tbl, f, log, "w1", fastPolls, FromARN("arn:fake"), Leases(store), LeaseTiming(time.Hour, time.Minute))
	waitFor(t, "four records", 10*time.Second, func() bool { return log.complete([]string{"c1/o1"}, 4) })
	waitFor(t, "checkpoint", 10*time.Second, func() bool { return checkpoints(store, "arn:fake")["A"] == *recs[3].Dynamodb.SequenceNumber })
	// Another worker takes the lease behind w1's back (as after an expiry).
	leases, err := store.Leases(t.Context(), "arn:fake")
	require.NoError(t, err)
	_, err = store.TakeLease(t.Context(), leases[0], "w2", time.Now().Add(time.Hour))
	require.NoError(t, err)
	f.append("A", orderChanges(t, "c1", "o1", 4, 1)...)
	// w1 handles the new record but its checkpoint is refused: the lease is
	// w2's, at the checkpoint w1 last wrote. w1 stops reading the shard.
	waitFor(t, "w1 reads on", 10*time.Second, func() bool { return log.complete([]string{"c1/o1"}, 5) })
	time.Sleep(200 * time.Millisecond)
	f.append("A", orderChanges(t, "c1", "o1", 5, 1)...)
	time.Sleep(200 * time.Millisecond)
	assert.False(t, log.complete([]string{"c1/o1"}, 6), "w1 stopped reading the shard it lost")
	leases, err = store.Leases(t.Context(), "arn:fake")
	require.NoError(t, err)
	assert.Equal(t, "w2", leases[0].Owner)
	assert.Equal(t, *recs[3].Dynamodb.SequenceNumber, leases[0].Checkpoint, "w1's later checkpoint was refused")
	m.cancel()
	require.ErrorIs(t, <-m.done, context.Canceled)
}

// TestFleetLineageFake: a parent shard on one worker, its children taken by
// another: the children are read only once the parent is finished.
func TestFleetLineageFake(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := newRecordingStore(&MemoryStore{})
	o1 := orderChanges(t, "c1", "o1", 0, 10)
	o2 := orderChanges(t, "c1", "o2", 0, 10)
	f := newFakeStreams(nil, &fakeShard{id: "P", records: interleave(o1[:5], o2[:5])})
	log := newFleetLog(2 * time.Millisecond)
	opts := []Option{fastPolls, FromARN("arn:fake"), LeaseTiming(time.Minute, 50*time.Millisecond)}
	a := startMember(t.Context(), tbl, f, log, "A", append(opts, Leases(onlyShards{store, "P"}))...)
	waitFor(t, "A reads P", 10*time.Second, func() bool { return log.complete([]string{"c1/o1"}, 5) })
	b := startMember(t.Context(), tbl, f, log, "B", append(opts, Leases(store))...)
	// P splits: it closes, and the rest of each order goes to a child.
	f.mu.Lock()
	f.shard("P").closed = true
	f.shards = append(f.shards, &fakeShard{id: "Q1", parent: "P", records: o1[5:]}, &fakeShard{id: "Q2", parent: "P", records: o2[5:]})
	f.mu.Unlock()
	waitFor(t, "every change", 30*time.Second, func() bool { return log.complete([]string{"c1/o1", "c1/o2"}, 10) })
	a.stop(t)
	b.stop(t)
	log.check(t, []string{"c1/o1", "c1/o2"}, 10)
	byShard := checkHistory(t, store.writes())
	var pFinished time.Time
	for _, w := range byShard["P"] {
		if w.l.Owner != "" {
			assert.Equal(t, "A", w.l.Owner, "P is A's")
		}
		if w.l.Finished {
			pFinished = w.at
		}
	}
	require.False(t, pFinished.IsZero(), "P finished")
	for _, q := range []string{"Q1", "Q2"} {
		require.NotEmpty(t, byShard[q], q)
		assert.Equal(t, "B", byShard[q][0].l.Owner, "%s taken by B", q)
		assert.False(t, byShard[q][0].at.Before(pFinished), "%s taken after P finished", q)
		log.mu.Lock()
		for _, s := range log.spans[q] {
			assert.False(t, s.start.Before(pFinished), "%s read before P finished", q)
		}
		log.mu.Unlock()
	}
}

// onlyShards is a lease store through which a worker can take only some shards.
type onlyShards struct {
	LeaseStore
	shard string
}

func (o onlyShards) TakeLease(ctx context.Context, l Lease, owner string, e time.Time) (Lease, error) {
	if l.Shard != o.shard {
		return Lease{}, fmt.Errorf("test: %s may not take %s: %w", owner, l.Shard, ErrLeaseLost)
	}
	return o.LeaseStore.TakeLease(ctx, l, owner, e)
}

// lossyStore loses the response of every third renewal: the write lands, the
// caller sees an error that is not ErrLeaseLost, as when a call times out.
type lossyStore struct {
	LeaseStore
	mu     sync.Mutex // protects n
	n      int
	losses int
}

func (s *lossyStore) RenewLease(ctx context.Context, l Lease, e time.Time) (Lease, error) {
	x, err := s.LeaseStore.RenewLease(ctx, l, e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n++; err == nil && s.n%3 == 0 {
		s.losses++
		return Lease{}, errors.New("lossyStore: response lost")
	}
	return x, err
}

// TestFleetLostLeaseWrite: a renewal that landed but whose response was lost
// moved the stored counter on unseen. The next write of that lease reads it
// back and goes on from the stored counter (still this worker's): the worker
// keeps its shards, handles every change once, and releases every lease at
// stop. Without the read-back, its next checkpoint would be refused and the
// shard given up as lost.
func TestFleetLostLeaseWrite(t *testing.T) {
	tbl := newTestTable(t)
	registerAll(t, tbl)
	noLeaks(t)
	mem := &MemoryStore{}
	store := &lossyStore{LeaseStore: mem}
	fs := newFleetStream(t, 2, 2)
	const n = 20
	log := newFleetLog(time.Millisecond)
	m := startMember(t.Context(), tbl, fs, log, "w1", fastPolls, FromARN("arn:fake"), Leases(store), LeaseTiming(5*time.Second, 30*time.Millisecond), CheckpointEvery(10*time.Millisecond))
	fs.write(t, 0, n, 20*time.Millisecond)
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(fs.orders, n) })
	m.stop(t)
	store.mu.Lock()
	losses := store.losses
	store.mu.Unlock()
	require.Positive(t, losses, "renewals were lost")
	assert.Empty(t, fs.problems())
	assert.Zero(t, log.check(t, fs.orders, n), "nothing handled twice")
	for shard, owner := range owners(t, mem, "arn:fake") {
		assert.Empty(t, owner, "shard %s released at stop", shard)
	}
}
