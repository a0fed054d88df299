package stream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"

	"github.com/singletable/singletable/fault"
)

// leaseStores returns a MemoryStore and a TableStore in a new DynamoDB Local
// table, for tests that hold both to the same conditions.
func leaseStores(t *testing.T) map[string]LeaseStore {
	tbl := newTestTable(t)
	ts, err := NewTableStore(tbl)
	require.NoError(t, err)
	return map[string]LeaseStore{"memory": &MemoryStore{}, "table": ts}
}

func TestLeaseCompareSeq(t *testing.T) {
	big := "1" + strings.Repeat("0", 39) // 40 digits, past DynamoDB's 38
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1}, // as text "9" > "10"
		{"10", "9", 1},
		{"000100", "100", 0},
		{"", CheckpointLatest, -1},
		{CheckpointLatest, "1", -1},
		{"", "0", -1},
		{big, "9" + strings.Repeat("9", 38), 1},
		{CheckpointLatest, LatestAt(t0), -1}, // pinned after it was found
		{LatestAt(t0), LatestAt(t0.Add(time.Millisecond)), -1},
		{LatestAt(t0), "0", -1},
		{"", LatestAt(t0), -1},
	} {
		got := compareSeq(c.a, c.b)
		assert.Equal(t, c.want, min(max(got, -1), 1), "%s vs %s", c.a, c.b)
		assert.Equal(t, c.want, strings.Compare(seqOrder(c.a), seqOrder(c.b)), "seqOrder %s vs %s", c.a, c.b)
	}
	assert.ErrorIs(t, checkSeq("12a"), singletable.ErrInvalidInput)
	assert.NoError(t, checkSeq(LatestAt(t0)))
	assert.ErrorIs(t, checkSeq(CheckpointLatest+"@yesterday"), singletable.ErrInvalidInput)
	at, ok := latestPin(LatestAt(t0.Add(123 * time.Millisecond)))
	assert.True(t, ok)
	assert.True(t, at.Equal(t0.Add(123*time.Millisecond)))
	assert.ErrorIs(t, checkSeq(strings.Repeat("9", seqWidth+1)), singletable.ErrInvalidInput)
}

// TestLeaseConditions holds both stores to every condition: takes on a stale
// counter, renewals and checkpoints by a holder whose counter moved on (a stale
// lease holder cannot checkpoint), checkpoints that would move backwards
// (compared as numbers), hand-over, release and finish.
func TestLeaseConditions(t *testing.T) {
	for name, store := range leaseStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			const g = "arn:aws:dynamodb:us-east-1:1:table/x/stream/2026"
			exp := time.Now().Add(time.Minute)
			require.NoError(t, store.CreateLease(ctx, Lease{Group: g, Shard: "shard-2", Parents: []string{"shard-1"}}))
			require.NoError(t, store.CreateLease(ctx, Lease{Group: g, Shard: "shard-1"}))
			assert.ErrorIs(t, store.CreateLease(ctx, Lease{Group: g, Shard: "shard-1"}), ErrLeaseExists)
			leases, err := store.Leases(ctx, g)
			require.NoError(t, err)
			require.Len(t, leases, 2)
			assert.Equal(t, Lease{Group: g, Shard: "shard-2", Parents: []string{"shard-1"}}, leases[1])
			free := leases[0]
			assert.Equal(t, Lease{Group: g, Shard: "shard-1"}, free)

			// A takes it; B's take on the same (now stale) counter is refused.
			a, err := store.TakeLease(ctx, free, "A", exp)
			require.NoError(t, err)
			assert.Equal(t, int64(1), a.Counter)
			assert.Equal(t, "A", a.Owner)
			assert.Equal(t, exp.UnixMilli(), a.Expires.UnixMilli())
			_, err = store.TakeLease(ctx, free, "B", exp)
			require.ErrorIs(t, err, ErrLeaseLost)

			// A renews and checkpoints; each write moves the counter on.
			a, err = store.RenewLease(ctx, a, exp)
			require.NoError(t, err)
			a, err = store.Checkpoint(ctx, a, "9", false)
			require.NoError(t, err)
			a, err = store.Checkpoint(ctx, a, "10", false) // behind "9" as text, ahead as a number
			require.NoError(t, err)
			assert.Equal(t, int64(4), a.Counter)
			_, err = store.Checkpoint(ctx, a, "9", false)
			require.ErrorIs(t, err, ErrLeaseLost, "a checkpoint never moves backwards")
			big := "4" + strings.Repeat("0", 39)
			a, err = store.Checkpoint(ctx, a, big, false)
			require.NoError(t, err)
			assert.Equal(t, big, a.Checkpoint)

			// A stale holder: B takes the lease (A stopped renewing); A's
			// checkpoint, renewal and release are all refused.
			stale := a
			b, err := store.TakeLease(ctx, a, "B", exp)
			require.NoError(t, err)
			_, err = store.Checkpoint(ctx, stale, "4"+strings.Repeat("0", 38)+"1", false)
			require.ErrorIs(t, err, ErrLeaseLost, "a holder whose counter moved on cannot checkpoint")
			_, err = store.RenewLease(ctx, stale, exp)
			require.ErrorIs(t, err, ErrLeaseLost)
			require.ErrorIs(t, store.ReleaseLease(ctx, stale), ErrLeaseLost)
			// Nor can a forged lease with the right counter and another owner.
			forged := b
			forged.Owner = "A"
			_, err = store.Checkpoint(ctx, forged, big, false)
			require.ErrorIs(t, err, ErrLeaseLost)
			leases, err = store.Leases(ctx, g)
			require.NoError(t, err)
			assert.Equal(t, big, leases[0].Checkpoint, "the stale holder wrote nothing")
			assert.Equal(t, "B", leases[0].Owner)

			// C asks B for it; B's renewal sees the request, the counter
			// unchanged by the asking; D cannot ask too; B hands over to C.
			require.NoError(t, store.AskHandOff(ctx, b, "C"))
			require.ErrorIs(t, store.AskHandOff(ctx, b, "D"), ErrLeaseLost)
			b, err = store.RenewLease(ctx, b, exp)
			require.NoError(t, err)
			assert.Equal(t, "C", b.HandOff)
			c, err := store.HandOver(ctx, b, exp)
			require.NoError(t, err)
			assert.Equal(t, "C", c.Owner)
			assert.Empty(t, c.HandOff)
			_, err = store.Checkpoint(ctx, b, big, false)
			require.ErrorIs(t, err, ErrLeaseLost, "B handed it over")

			// C finishes the shard: the lease is freed and cannot be taken.
			c, err = store.Checkpoint(ctx, c, big, true)
			require.NoError(t, err)
			assert.True(t, c.Finished)
			assert.Empty(t, c.Owner)
			_, err = store.TakeLease(ctx, c, "D", exp)
			require.ErrorIs(t, err, ErrLeaseLost, "a finished lease is not taken")

			// Release frees a lease for anyone, at once.
			two := leases[1]
			d, err := store.TakeLease(ctx, two, "D", exp)
			require.NoError(t, err)
			require.NoError(t, store.ReleaseLease(ctx, d))
			leases, err = store.Leases(ctx, g)
			require.NoError(t, err)
			assert.Empty(t, leases[1].Owner)
			assert.Equal(t, d.Counter+1, leases[1].Counter)
		})
	}
}

// TestLeaseReservedKeys: the table store's items live under a prefix no
// registered entity can render; singletable.Register refuses entities that could.
func TestLeaseReservedKeys(t *testing.T) {
	tbl := offlineTable(t)
	type hash struct {
		_  struct{} `Type:"Hash" PK:"#singletable#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err := singletable.Register[hash](tbl)
	require.ErrorIs(t, err, singletable.ErrInvalidEntity)
	assert.Contains(t, err.Error(), "#singletable#")
	type lead struct {
		_  struct{} `Type:"Lead" PK:"#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err = singletable.Register[lead](tbl)
	require.ErrorIs(t, err, singletable.ErrInvalidEntity, "a template beginning with the delimiter could render the prefix")
	type sneaky struct {
		_  struct{} `Type:"_singletable.Lease" PK:"S#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err = singletable.Register[sneaky](tbl)
	require.ErrorIs(t, err, singletable.ErrInvalidEntity)
	type plain struct {
		_  struct{} `Type:"Plain" PK:"{id}" SK:"{id}"`
		ID string   `dynamodbav:"id"`
	}
	_, err = singletable.Register[plain](tbl)
	require.NoError(t, err, "a template beginning with a placeholder cannot render the delimiter first")

	// The store's items share a table with the entities, and collection reads
	// and Decode do not mistake them for entities.
	live := newTestTable(t)
	_, orders := registerAll(t, live)
	ts, err := NewTableStore(live)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, ts.CreateLease(ctx, Lease{Group: "g", Shard: "s"}))
	_, err = orders.Put(ctx, order("c1", 1))
	require.NoError(t, err)
	page, err := live.Query(ctx, "CUST#c1")
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)
	_, err = NewTableStore(offlineTable(t, singletable.WithTypeAttribute("checkpoint")))
	require.ErrorIs(t, err, singletable.ErrInvalidInput)
}

// recordingStore is a LeaseStore that records every lease write that
// succeeded, with its time, in order: the lease table's history.
type recordingStore struct {
	LeaseStore
	mu      chan struct{} // a one-slot semaphore: writes are recorded in the order they returned
	history []leaseWrite
}

type leaseWrite struct {
	op string
	at time.Time
	l  Lease
}

func newRecordingStore(s LeaseStore) *recordingStore {
	return &recordingStore{LeaseStore: s, mu: make(chan struct{}, 1)}
}

func (r *recordingStore) note(op string, l Lease) {
	r.mu <- struct{}{}
	r.history = append(r.history, leaseWrite{op: op, at: time.Now(), l: l})
	<-r.mu
}

func (r *recordingStore) writes() []leaseWrite {
	r.mu <- struct{}{}
	defer func() { <-r.mu }()
	return append([]leaseWrite(nil), r.history...)
}

func (r *recordingStore) TakeLease(ctx context.Context, l Lease, owner string, exp time.Time) (Lease, error) {
	x, err := r.LeaseStore.TakeLease(ctx, l, owner, exp)
	if err == nil {
		r.note("take", x)
	}
	return x, err
}

func (r *recordingStore) RenewLease(ctx context.Context, l Lease, exp time.Time) (Lease, error) {
	x, err := r.LeaseStore.RenewLease(ctx, l, exp)
	if err == nil {
		r.note("renew", x)
	}
	return x, err
}

func (r *recordingStore) Checkpoint(ctx context.Context, l Lease, cp string, finished bool) (Lease, error) {
	x, err := r.LeaseStore.Checkpoint(ctx, l, cp, finished)
	if err == nil {
		r.note("checkpoint", x)
	}
	return x, err
}

func (r *recordingStore) ReleaseLease(ctx context.Context, l Lease) error {
	err := r.LeaseStore.ReleaseLease(ctx, l)
	if err == nil {
		l.Owner, l.Counter = "", l.Counter+1
		r.note("release", l)
	}
	return err
}

func (r *recordingStore) HandOver(ctx context.Context, l Lease, exp time.Time) (Lease, error) {
	x, err := r.LeaseStore.HandOver(ctx, l, exp)
	if err == nil {
		r.note("handover", x)
	}
	return x, err
}

// checkHistory checks the lease writes of each shard: counters move on by one
// at each write (every write was seen, and none went to a stale counter),
// checkpoints never move backwards, and an owner changes only by a take, a
// hand-over, a release or a finish.
func checkHistory(t *testing.T, history []leaseWrite) map[string][]leaseWrite {
	t.Helper()
	byShard := map[string][]leaseWrite{}
	for _, w := range history {
		byShard[w.l.Shard] = append(byShard[w.l.Shard], w)
	}
	for shard, ws := range byShard {
		// Sort by counter: writes to one lease are serialised by it.
		for i := 1; i < len(ws); i++ {
			for j := i; j > 0 && ws[j].l.Counter < ws[j-1].l.Counter; j-- {
				ws[j], ws[j-1] = ws[j-1], ws[j]
			}
		}
		for i := 1; i < len(ws); i++ {
			prev, cur := ws[i-1], ws[i]
			assert.NotEqual(t, prev.l.Counter, cur.l.Counter, "shard %s: two writes at counter %d", shard, cur.l.Counter)
			assert.LessOrEqual(t, compareSeq(prev.l.Checkpoint, cur.l.Checkpoint), 0, "shard %s: checkpoint %s after %s", shard, cur.l.Checkpoint, prev.l.Checkpoint)
			if cur.l.Counter == prev.l.Counter+1 && cur.l.Owner != prev.l.Owner && prev.l.Owner != "" {
				assert.Contains(t, []string{"take", "handover", "release", "checkpoint"}, cur.op, "shard %s: owner %s → %s by %s", shard, prev.l.Owner, cur.l.Owner, cur.op)
				if cur.op == "checkpoint" {
					assert.True(t, cur.l.Finished, "shard %s: a checkpoint changed the owner without finishing", shard)
				}
			}
		}
		byShard[shard] = ws
	}
	return byShard
}

// TestLeaseStoreLostAnswers: a TableStore judges its own conditional writes as
// the entity pipeline judges its writes. A lease write of any kind whose answer
// is lost after DynamoDB Local applied it is not resent by the SDK (one request
// each) and returns the lease as written, read back, rather than ErrLeaseLost;
// one that a 5xx answered without applying it is sent again; one that another
// worker's write overtook before it could be read back is refused with
// ErrLeaseLost. A create whose answer is lost counts as done.
func TestLeaseStoreLostAnswers(t *testing.T) {
	tbl := newTestTable(t)
	ts, inj, _ := faultStore(t, tbl)
	other, err := NewTableStore(tbl) // another worker, whose answers arrive
	require.NoError(t, err)
	ctx := t.Context()
	const g = "arn:lost-answers"
	exp := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	lose := func() {
		inj.Add(fault.Rule{Ops: []string{"PutItem", "UpdateItem"}, Fault: fault.LoseResponse(), Times: 1})
	}
	updates := func() int { return inj.Stats().Requests["UpdateItem"] }

	lose()
	require.NoError(t, ts.CreateLease(ctx, Lease{Group: g, Shard: "s1", Checkpoint: CheckpointLatest}), "a create that landed is done")
	leases, err := ts.Leases(ctx, g)
	require.NoError(t, err)
	require.Len(t, leases, 1)
	assert.Equal(t, CheckpointLatest, leases[0].Checkpoint)

	steps := []struct {
		kind  string
		write func(Lease) (Lease, error)
		check func(Lease)
	}{
		{"take", func(l Lease) (Lease, error) { return ts.TakeLease(ctx, l, "A", exp) }, func(l Lease) { assert.Equal(t, "A", l.Owner) }},
		{"renew", func(l Lease) (Lease, error) { return ts.RenewLease(ctx, l, exp.Add(time.Second)) }, func(l Lease) {
			assert.Equal(t, exp.Add(time.Second).UnixMilli(), l.Expires.UnixMilli())
		}},
		{"pin", func(l Lease) (Lease, error) { return ts.Checkpoint(ctx, l, LatestAt(exp), false) }, func(l Lease) { assert.Equal(t, LatestAt(exp), l.Checkpoint) }},
		{"checkpoint", func(l Lease) (Lease, error) { return ts.Checkpoint(ctx, l, "100", false) }, func(l Lease) { assert.Equal(t, "100", l.Checkpoint) }},
		{"ask", func(l Lease) (Lease, error) { return l, ts.AskHandOff(ctx, l, "B") }, func(Lease) {}},
		{"renew seeing the ask", func(l Lease) (Lease, error) { return ts.RenewLease(ctx, l, exp) }, func(l Lease) { assert.Equal(t, "B", l.HandOff) }},
		{"hand-over", func(l Lease) (Lease, error) { return ts.HandOver(ctx, l, exp) }, func(l Lease) { assert.Equal(t, "B", l.Owner) }},
		{"finish", func(l Lease) (Lease, error) { return ts.Checkpoint(ctx, l, "200", true) }, func(l Lease) { assert.True(t, l.Finished) }},
	}
	l := leases[0]
	for _, s := range steps {
		lose()
		before := updates()
		x, err := s.write(l)
		require.NoError(t, err, "%s: a lost answer is judged, not taken for a refusal", s.kind)
		assert.Equal(t, before+1, updates(), "%s: sent once: the SDK resends no conditional write", s.kind)
		stored, err := ts.Leases(ctx, g)
		require.NoError(t, err)
		if s.kind != "ask" {
			assert.Equal(t, stored[0], x, "%s: the lease as stored", s.kind)
		}
		s.check(stored[0])
		l = stored[0]
	}
	assert.Equal(t, 1+len(steps), inj.Stats().LostWrites)

	// A release whose answer is lost is done too.
	require.NoError(t, other.CreateLease(ctx, Lease{Group: g, Shard: "s2"}))
	leases, err = ts.Leases(ctx, g)
	require.NoError(t, err)
	a, err := ts.TakeLease(ctx, leases[1], "A", exp)
	require.NoError(t, err)
	lose()
	require.NoError(t, ts.ReleaseLease(ctx, a))
	leases, err = ts.Leases(ctx, g)
	require.NoError(t, err)
	assert.Empty(t, leases[1].Owner)
	assert.Equal(t, a.Counter+1, leases[1].Counter)

	// A 5xx that applied nothing: read back, not landed, sent again.
	a, err = ts.TakeLease(ctx, leases[1], "A", exp)
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.ServerError(), Times: 1})
	before := updates()
	a2, err := ts.RenewLease(ctx, a, exp)
	require.NoError(t, err)
	assert.Equal(t, a.Counter+1, a2.Counter, "applied once")
	assert.Equal(t, before+2, updates(), "sent again once the lease read back showed it had not landed")

	// Overtaken: A's renewal lands, its answer is lost, and B takes the lease
	// (as after an expiry) before A reads it back: refused, the lease is B's.
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse().Then(func() {
		_, err := other.TakeLease(context.Background(), Lease{Group: g, Shard: "s2", Counter: a2.Counter + 1}, "B", exp)
		assert.NoError(t, err)
	}), Times: 1})
	_, err = ts.RenewLease(ctx, a2, exp)
	require.ErrorIs(t, err, ErrLeaseLost)
	leases, err = ts.Leases(ctx, g)
	require.NoError(t, err)
	assert.Equal(t, "B", leases[1].Owner)
}

// The epoch moves on when a lease changes hands (take, hand-over), not while
// its owner holds it; the records handled after a checkpoint are kept beside
// it until the next such write, and refused unless after it.
func TestLeaseEpochAndHandled(t *testing.T) {
	for name, store := range leaseStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			const g = "arn:aws:dynamodb:us-east-1:1:table/x/stream/epoch"
			exp := time.Now().Add(time.Minute)
			require.NoError(t, store.CreateLease(ctx, Lease{Group: g, Shard: "s"}))
			leases, err := store.Leases(ctx, g)
			require.NoError(t, err)
			a, err := store.TakeLease(ctx, leases[0], "A", exp)
			require.NoError(t, err)
			assert.EqualValues(t, 1, a.Epoch)
			a, err = store.RenewLease(ctx, a, exp)
			require.NoError(t, err)
			assert.EqualValues(t, 1, a.Epoch, "a renewal keeps the epoch")
			hs := store.(HandledStore)
			_, err = hs.CheckpointHandled(ctx, a, "20", []string{"15"})
			require.ErrorIs(t, err, singletable.ErrInvalidInput, "handled records are after the checkpoint")
			a, err = hs.CheckpointHandled(ctx, a, "10", []string{"12", "11"})
			require.NoError(t, err)
			assert.Equal(t, []string{"11", "12"}, a.Handled)
			a, err = store.Checkpoint(ctx, a, "11", false)
			require.NoError(t, err)
			assert.Equal(t, []string{"11", "12"}, a.Handled, "a plain checkpoint keeps them")
			require.NoError(t, store.AskHandOff(ctx, a, "B"))
			a, err = store.RenewLease(ctx, a, exp)
			require.NoError(t, err)
			b, err := store.HandOver(ctx, a, exp)
			require.NoError(t, err)
			assert.Equal(t, "B", b.Owner)
			assert.EqualValues(t, 2, b.Epoch, "a hand-over moves the epoch on")
			b, err = store.TakeLease(ctx, b, "C", exp)
			require.NoError(t, err)
			assert.EqualValues(t, 3, b.Epoch)
			b, err = hs.CheckpointHandled(ctx, b, "12", nil)
			require.NoError(t, err)
			assert.Empty(t, b.Handled)
			leases, err = store.Leases(ctx, g)
			require.NoError(t, err)
			assert.Empty(t, leases[0].Handled)
			assert.EqualValues(t, 3, leases[0].Epoch)
		})
	}
}

// A TableStore's fence holds for the lease's owner at its epoch, and for no
// one once another worker has taken it; a MemoryStore cannot fence, and
// FenceWrites with it is refused.
func TestLeaseFence(t *testing.T) {
	tbl := newTestTable(t)
	store, err := NewTableStore(tbl)
	require.NoError(t, err)
	ctx := t.Context()
	const g = "arn:aws:dynamodb:us-east-1:1:table/x/stream/fence"
	exp := time.Now().Add(time.Minute)
	require.NoError(t, store.CreateLease(ctx, Lease{Group: g, Shard: "s"}))
	leases, err := store.Leases(ctx, g)
	require.NoError(t, err)
	a, err := store.TakeLease(ctx, leases[0], "A", exp)
	require.NoError(t, err)
	f, err := store.Fence(a)
	require.NoError(t, err)
	customers, _ := registerAll(t, tbl)
	_, err = customers.Put(singletable.WithFence(ctx, f), tCustomer{CustomerID: "c", Name: "a"})
	require.NoError(t, err)
	a, err = store.RenewLease(ctx, a, exp)
	require.NoError(t, err)
	_, err = customers.Put(singletable.WithFence(ctx, f), tCustomer{CustomerID: "c", Name: "renewed"})
	require.NoError(t, err, "a renewal keeps the fence")
	_, err = store.TakeLease(ctx, a, "B", exp)
	require.NoError(t, err)
	_, err = customers.Put(singletable.WithFence(ctx, f), tCustomer{CustomerID: "c", Name: "late"})
	require.ErrorIs(t, err, ErrLeaseLost)
	require.ErrorIs(t, err, singletable.ErrFenced)
	assert.Contains(t, err.Error(), `the lease of shard s (owner "A", epoch 1) does not hold`)
	got, err := customers.Get(ctx, tCustomer{CustomerID: "c"}, singletable.Consistent())
	require.NoError(t, err)
	assert.Equal(t, "renewed", got.Name)

	_, err = store.Fence(Lease{Group: g, Shard: "s"})
	require.ErrorIs(t, err, singletable.ErrInvalidInput)
	err = Consume(ctx, tbl, local.StreamsClient(t), func(context.Context, StreamRecord) error { return nil }, FenceWrites())
	require.ErrorIs(t, err, singletable.ErrInvalidInput)
	assert.Contains(t, err.Error(), "a *stream.MemoryStore, cannot fence writes")
}

// A lease write of the holder's whose context ended while it was out (a stop
// cancels the periodic checkpoint, or the leader's renewal) may land after
// the holder's next write was sent, even after that write read the lease back:
// the counter moves on under it and it is refused. The lease is still the
// holder's, at the same epoch: the write reads it again and goes on (before,
// a graceful stop's last checkpoint, with the records after it already
// handled, was lost so, and the next holder repeated finished records). A
// lease that changed hands (a new epoch) still fails the write.
func TestHeldWriteAfterOwnLateWrite(t *testing.T) {
	for name, store := range leaseStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			g := "arn:aws:dynamodb:us-east-1:1:table/x/stream/late-" + name
			o := defaultOptions()
			o.leaseDuration = time.Minute
			require.NoError(t, store.CreateLease(ctx, Lease{Group: g, Shard: "s"}))
			leases, err := store.Leases(ctx, g)
			require.NoError(t, err)
			sent := time.Now()
			a, err := store.TakeLease(ctx, leases[0], "A", sent.Add(o.leaseDuration))
			require.NoError(t, err)
			h := newHeld(ctx, a, sent, &o)
			defer h.term.close()
			checkpoint := func(seq string) error {
				h.mu.Lock()
				defer h.mu.Unlock()
				_, err := h.write(ctx, store, time.Now, func(ctx context.Context, l Lease) (Lease, error) { return store.Checkpoint(ctx, l, seq, false) })
				return err
			}

			// The late write: a checkpoint the holder sent, abandoned, that lands now.
			_, err = store.Checkpoint(ctx, a, "10", false)
			require.NoError(t, err)
			require.NoError(t, checkpoint("20"), "the lease is still A's at its epoch")
			assert.Equal(t, "20", h.lease().Checkpoint)
			leases, err = store.Leases(ctx, g)
			require.NoError(t, err)
			assert.Equal(t, "20", leases[0].Checkpoint)

			// Another worker takes the lease: a new epoch; A's write fails.
			_, err = store.TakeLease(ctx, leases[0], "B", time.Now().Add(o.leaseDuration))
			require.NoError(t, err)
			require.ErrorIs(t, checkpoint("30"), ErrLeaseLost)
			// A itself taking it again (a restart with the same worker id) is a
			// new epoch too.
			leases, err = store.Leases(ctx, g)
			require.NoError(t, err)
			_, err = store.TakeLease(ctx, leases[0], "A", time.Now().Add(o.leaseDuration))
			require.NoError(t, err)
			require.ErrorIs(t, checkpoint("30"), ErrLeaseLost, "a new epoch, though the owner's name is the same")
		})
	}
}
