package stream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
)

func TestStreamAttributeValues(t *testing.T) {
	every := map[string]types.AttributeValue{
		"s":    &types.AttributeValueMemberS{Value: "x"},
		"n":    &types.AttributeValueMemberN{Value: "-1.5e3"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"bool": &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "in a list"},
			&types.AttributeValueMemberL{Value: []types.AttributeValue{}},
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "7"}}},
		}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"deep": &types.AttributeValueMemberBOOL{}}},
			"empty":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		}},
	}
	for name, av := range every {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, av, fromStreamAV(toStreamAV(av)))
		})
	}
	assert.Equal(t, RawItem(every), fromStreamImage(toStreamImage(every)))
	assert.Nil(t, fromStreamImage(nil))
	assert.Nil(t, fromStreamImage(map[string]streamtypes.AttributeValue{}))
	assert.Nil(t, fromStreamAV(nil))
	assert.Equal(t, &types.UnknownUnionMember{Tag: "future", Value: []byte("v")},
		fromStreamAV(&streamtypes.UnknownUnionMember{Tag: "future", Value: []byte("v")}))
}

// orderLog records what a handler saw, per order, and checks that each order's
// changes come one at a time and in order.
type orderLog struct {
	mu        sync.Mutex // protects counts, records and errs
	counts    map[string][]int
	records   []StreamRecord
	errs      []string
	busy      map[string]*atomic.Int32
	active    atomic.Int32
	maxActive atomic.Int32
	delay     time.Duration
}

func newOrderLog(delay time.Duration) *orderLog {
	return &orderLog{counts: map[string][]int{}, busy: map[string]*atomic.Int32{}, delay: delay}
}

func (l *orderLog) handle(ctx context.Context, r StreamRecord) error {
	before, after, ok := singletable.Images[tOrder](r)
	if !ok {
		return fmt.Errorf("record of type %q", r.Type)
	}
	o := after
	if r.Event == singletable.StreamRemove {
		o = before
	}
	id := o.CustomerID + "/" + o.OrderID
	l.mu.Lock()
	busy := l.busy[id]
	if busy == nil {
		busy = &atomic.Int32{}
		l.busy[id] = busy
	}
	l.mu.Unlock()
	if busy.Add(1) != 1 {
		l.fail("order %s: two changes handled at once", id)
	}
	defer busy.Add(-1)
	n := l.active.Add(1)
	defer l.active.Add(-1)
	for m := l.maxActive.Load(); n > m && !l.maxActive.CompareAndSwap(m, n); m = l.maxActive.Load() {
	}
	if r.Event == singletable.StreamModify && before.Count != after.Count-1 {
		l.fail("order %s: MODIFY from count %d to %d", id, before.Count, after.Count)
	}
	if l.delay > 0 {
		select {
		case <-time.After(l.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Event != singletable.StreamRemove {
		if c := l.counts[id]; len(c) > 0 && c[len(c)-1] != o.Count-1 {
			l.errs = append(l.errs, fmt.Sprintf("order %s: count %d after %d", id, o.Count, c[len(c)-1]))
		}
		l.counts[id] = append(l.counts[id], o.Count)
	}
	l.records = append(l.records, r)
	return nil
}

func (l *orderLog) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
}

func (l *orderLog) handled() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.records)
}

func (l *orderLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(t, l.errs)
}

// consume runs ConsumeStream in a goroutine until want records have been
// handled, then stops it and returns what it returned.
func consume(t *testing.T, tbl *Table, client Client, log *orderLog, want int, opts ...Option) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Consume(ctx, tbl, client, log.handle, opts...) }()
	deadline := time.After(60 * time.Second)
	for log.handled() < want {
		select {
		case err := <-done:
			return err
		case <-deadline:
			cancel()
			<-done
			t.Fatalf("handled %d records of %d in 60s", log.handled(), want)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	return <-done
}

// fastPolls makes a consumer poll, refresh and checkpoint every few milliseconds.
var fastPolls = optionFunc(func(o *options) error {
	o.poll, o.maxPoll, o.shardRefresh, o.checkpointInterval = time.Millisecond, 5*time.Millisecond, 20*time.Millisecond, 5*time.Millisecond
	return nil
})

// shardEnd stands for a finished shard in the maps checkpoints returns.
const shardEnd = "END"

// checkpoints returns each shard's checkpoint in store, shardEnd for a
// finished shard.
// With group "", store must be a *MemoryStore of one group, whatever it is.
func checkpoints(store LeaseStore, group string) map[string]string {
	if m, ok := store.(*MemoryStore); ok && group == "" {
		m.mu.Lock()
		for g := range m.leases {
			group = g
		}
		m.mu.Unlock()
	}
	leases, _ := store.Leases(context.Background(), group)
	m := map[string]string{}
	for _, l := range leases {
		if l.Finished {
			m[l.Shard] = shardEnd
		} else if l.Checkpoint != "" {
			m[l.Shard] = l.Checkpoint
		}
	}
	return m
}

// TestStreamShardLineage reads a stream of five shards, in pages of two: A,
// closed, has children B (closed) and C (open); B has a child D (open); Z's
// parent is gone. Each order's changes run through A, B and D, or A and C,
// and must be handled in order, children only after their parent is done.
func TestStreamShardLineage(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := &MemoryStore{}
	o1 := orderChanges(t, "c1", "o1", 0, 15)
	o2 := orderChanges(t, "c1", "o2", 0, 10)
	o3 := orderChanges(t, "c2", "o3", 0, 4)
	f := newFakeStreams(store,
		&fakeShard{id: "D", parent: "B", records: o1[10:15]},
		&fakeShard{id: "A", closed: true, records: interleave(o1[:5], o2[:3])},
		&fakeShard{id: "C", parent: "A", records: o2[3:8]},
		&fakeShard{id: "B", parent: "A", closed: true, records: o1[5:10]},
		&fakeShard{id: "Z", parent: "gone", closed: true, records: o3},
	)
	f.expire["C"] = true
	log := newOrderLog(time.Millisecond)
	err := consume(t, tbl, f, log, 27, fastPolls, Leases(store), BatchSize(3), FromARN("arn:fake"), Rails(singletable.RailroadOptions{Concurrency: 4}))
	require.ErrorIs(t, err, context.Canceled)
	log.check(t)
	assert.Empty(t, f.problems())
	assert.Equal(t, seqRange(0, 15), log.counts["c1/o1"])
	assert.Equal(t, seqRange(0, 8), log.counts["c1/o2"])
	assert.Equal(t, seqRange(0, 4), log.counts["c2/o3"])
	assert.Greater(t, log.maxActive.Load(), int32(1), "orders were handled concurrently")
	eventually(t, "checkpoints", func() bool { return len(checkpoints(store, "arn:fake")) == 5 })
	assert.Equal(t, map[string]string{
		"A": shardEnd, "B": shardEnd, "Z": shardEnd,
		"C": *o2[7].Dynamodb.SequenceNumber, "D": *o1[14].Dynamodb.SequenceNumber,
	}, checkpoints(store, "arn:fake"))

	// More changes arrive; a new consumer with the same store goes on from the
	// checkpoints, and handles nothing twice.
	f.append("C", o2[8:10]...)
	f.append("D", orderChanges(t, "c1", "o1", 15, 2)...)
	log2 := newOrderLog(0)
	err = consume(t, tbl, f, log2, 4, fastPolls, Leases(store), FromARN("arn:fake"))
	require.ErrorIs(t, err, context.Canceled)
	log2.check(t)
	assert.Empty(t, f.problems())
	assert.Equal(t, []int{15, 16}, log2.counts["c1/o1"])
	assert.Equal(t, []int{8, 9}, log2.counts["c1/o2"])
	assert.Len(t, log2.records, 4)
}

func seqRange(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestStreamHandlerFails: a handler that keeps failing is retried, then stops
// the consumer, leaving its record and the ones after it for the next run.
func TestStreamHandlerFails(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := &MemoryStore{}
	recs := orderChanges(t, "c1", "o1", 0, 6)
	f := newFakeStreams(store, &fakeShard{id: "A", records: recs})
	boom := errors.New("boom")
	var attempts atomic.Int32
	var seen []int
	var mu sync.Mutex
	handle := func(_ context.Context, r StreamRecord) error {
		o := r.New.(tOrder)
		if o.Count == 3 {
			attempts.Add(1)
			if attempts.Load() == 1 {
				panic("first attempt panics")
			}
			return boom
		}
		mu.Lock()
		seen = append(seen, o.Count)
		mu.Unlock()
		return nil
	}
	err := Consume(t.Context(), tbl, f, handle, fastPolls, Leases(store), FromARN("arn:fake"), HandlerRetry(singletable.Backoff{MaxAttempts: 3, Base: time.Millisecond}))
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "MODIFY")
	assert.Equal(t, int32(3), attempts.Load(), "three attempts, the first a panic")
	assert.Equal(t, []int{0, 1, 2}, seen, "nothing after the failed record on its key")
	assert.Equal(t, *recs[2].Dynamodb.SequenceNumber, checkpoints(store, "arn:fake")["A"])

	log := newOrderLog(0)
	err = consume(t, tbl, f, log, 3, fastPolls, Leases(store), FromARN("arn:fake"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []int{3, 4, 5}, log.counts["c1/o1"], "the next run resumes at the failed record")
}

func TestStreamUnknownTypes(t *testing.T) {
	tbl := offlineTable(t)
	registerAll(t, tbl)
	mystery := map[string]types.AttributeValue{"PK": sAV("X"), "SK": sAV("Y"), "Type": sAV("Mystery")}
	records := func() []streamtypes.Record {
		r := orderChanges(t, "c1", "o1", 0, 2)
		return []streamtypes.Record{r[0], fakeRecord(t, singletable.StreamInsert, nil, mystery), r[1]}
	}
	t.Run("fail", func(t *testing.T) {
		noLeaks(t)
		store := &MemoryStore{}
		recs := records()
		f := newFakeStreams(store, &fakeShard{id: "A", records: recs})
		err := Consume(t.Context(), tbl, f, newOrderLog(0).handle, fastPolls, Leases(store), FromARN("arn:fake"))
		var ute *singletable.UnknownTypeError
		require.ErrorAs(t, err, &ute)
		assert.Equal(t, "Mystery", ute.Type)
		assert.Equal(t, *recs[0].Dynamodb.SequenceNumber, checkpoints(store, "arn:fake")["A"], "the records before it were handled")
	})
	t.Run("skip", func(t *testing.T) {
		noLeaks(t)
		store := &MemoryStore{}
		recs := records()
		f := newFakeStreams(store, &fakeShard{id: "A", records: recs})
		log := newOrderLog(0)
		err := consume(t, tbl, f, log, 2, fastPolls, Leases(store), FromARN("arn:fake"), OnUnknown(singletable.UnknownSkip))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []int{0, 1}, log.counts["c1/o1"])
		assert.Equal(t, *recs[2].Dynamodb.SequenceNumber, checkpoints(store, "arn:fake")["A"])
	})
	t.Run("collect", func(t *testing.T) {
		noLeaks(t)
		f := newFakeStreams(&MemoryStore{}, &fakeShard{id: "A", records: records()})
		var mu sync.Mutex
		var got []any
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		handle := func(_ context.Context, r StreamRecord) error {
			mu.Lock()
			defer mu.Unlock()
			if got = append(got, r.New); len(got) == 3 {
				cancel()
			}
			return nil
		}
		err := Consume(ctx, tbl, f, handle, fastPolls, FromARN("arn:fake"), OnUnknown(singletable.UnknownCollect))
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, got, 3)
		assert.Contains(t, got, RawItem(mystery))
	})
}

// TestStreamStartLatest: closed shards are passed over, open ones begin after
// the records already there; a child of a shard read begins at its start.
func TestStreamStartLatest(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := &MemoryStore{}
	old := orderChanges(t, "c1", "o1", 0, 6)
	f := newFakeStreams(store,
		&fakeShard{id: "A", closed: true, records: old[:2]},
		&fakeShard{id: "B", parent: "A", records: old[2:4]},
	)
	log := newOrderLog(0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Consume(ctx, tbl, f, log.handle, fastPolls, Leases(store), FromARN("arn:fake"), StartAt(StartLatest))
	}()
	eventually(t, "B read", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.calls["GetRecords"] > 2 })
	f.append("B", old[4:6]...)
	eventually(t, "two records", func() bool { return log.handled() == 2 })
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, []int{4, 5}, log.counts["c1/o1"])
	assert.Equal(t, map[string]string{"A": shardEnd, "B": *old[5].Dynamodb.SequenceNumber}, checkpoints(store, "arn:fake"), "A was passed over, not read")
}

// TestStreamEnds: a disabled stream whose shards are all read ends the consumer
// with nil.
func TestStreamEnds(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	f := newFakeStreams(&MemoryStore{}, &fakeShard{id: "A", closed: true, records: orderChanges(t, "c1", "o1", 0, 3)})
	f.status = streamtypes.StreamStatusDisabled
	log := newOrderLog(0)
	require.NoError(t, Consume(t.Context(), tbl, f, log.handle, fastPolls, FromARN("arn:fake")))
	assert.Equal(t, []int{0, 1, 2}, log.counts["c1/o1"])
}

func TestStreamOptionErrors(t *testing.T) {
	tbl := offlineTable(t)
	f := newFakeStreams(&MemoryStore{})
	nop := func(context.Context, StreamRecord) error { return nil }
	for name, opt := range map[string]Option{
		"batch":    BatchSize(1001),
		"unknown":  OnUnknown(9),
		"start":    StartAt(9),
		"timing":   LeaseTiming(time.Second, time.Second),
		"worker":   Worker(""),
		"leases":   Leases(nil),
		"polling":  Polling(time.Second, time.Millisecond),
		"arn":      FromARN(""),
		"key":      RecordKey(nil),
		"refresh":  ShardRefresh(0),
		"interval": CheckpointEvery(0),
		"clock":    Clock(nil),
	} {
		assert.ErrorIs(t, Consume(t.Context(), tbl, f, nop, opt), singletable.ErrInvalidInput, name)
	}
	assert.ErrorIs(t, Consume(t.Context(), tbl, f, nil), singletable.ErrInvalidInput)
}

// localStreams returns a DynamoDB Streams client of the test binary's DynamoDB
// Local: the same endpoint as its DynamoDB clients.
func localStreams(t testing.TB) *dynamodbstreams.Client {
	t.Helper()
	inst := local.Get(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(inst.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:   &http.Client{Transport: tr},
	})
}

// seqLess compares sequence numbers as the numbers they are.
func seqLess(a, b string) bool {
	return len(a) < len(b) || (len(a) == len(b) && a < b)
}

// TestStreamLocal writes N versions of several orders concurrently to DynamoDB
// Local and consumes the table's stream: each order's changes are handled in
// order, orders concurrently; the checkpoint advances; a second consumer on the
// same checkpoints handles only what came after, including a delete.
func TestStreamLocal(t *testing.T) {
	tbl := newStreamTable(t)
	streams := localStreams(t)
	noLeaks(t)
	_, orders := registerAll(t, tbl)
	const nOrders, nUpdates = 6, 15
	write := func(from, to int) {
		var wg sync.WaitGroup
		for i := range nOrders {
			wg.Go(func() {
				for n := from; n < to; n++ {
					o := tOrder{CustomerID: fmt.Sprint("c", i%3), OrderID: fmt.Sprint("o", i), Status: fmt.Sprint("S", n), CreatedAt: t0, Count: n}
					_, err := orders.Put(t.Context(), o)
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
	}

	store := &MemoryStore{}
	opts := []Option{fastPolls, Leases(store), CheckpointEvery(10 * time.Millisecond), Rails(singletable.RailroadOptions{Concurrency: 4})}
	log := newOrderLog(5 * time.Millisecond)
	stop := make(chan struct{})
	sampled := make(chan []string)
	go func() { // the checkpoints seen while the consumer runs
		var seen []string
		for {
			for _, seq := range checkpoints(store, "") {
				if len(seen) == 0 || seen[len(seen)-1] != seq {
					seen = append(seen, seq)
				}
			}
			select {
			case <-stop:
				sampled <- seen
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	writes := make(chan struct{})
	go func() { write(0, nUpdates); close(writes) }()
	err := consume(t, tbl, streams, log, nOrders*nUpdates, opts...)
	<-writes
	close(stop)
	seen := <-sampled
	require.ErrorIs(t, err, context.Canceled)
	log.check(t)
	for i := range nOrders {
		assert.Equal(t, seqRange(0, nUpdates), log.counts[fmt.Sprintf("c%d/o%d", i%3, i)])
	}
	var last string
	for _, r := range log.records {
		if last == "" || seqLess(last, r.SequenceNumber) {
			last = r.SequenceNumber
		}
		switch r.Event {
		case singletable.StreamInsert:
			assert.Nil(t, r.Old)
			assert.Equal(t, 0, r.New.(tOrder).Count)
		case singletable.StreamModify:
			assert.Equal(t, r.Old.(tOrder).Count+1, r.New.(tOrder).Count)
		default:
			t.Errorf("event %s", r.Event)
		}
		assert.Equal(t, "Order", r.Type)
		assert.Equal(t, "CUST#"+r.New.(tOrder).CustomerID, r.Key["PK"])
		assert.NotEmpty(t, r.NewImage["status"])
		assert.False(t, r.ApproximateTime.IsZero())
	}
	t.Logf("%d records, at most %d handled at once", len(log.records), log.maxActive.Load())
	assert.Greater(t, log.maxActive.Load(), int32(1), "orders were handled concurrently")
	cps := checkpoints(store, "")
	require.Len(t, cps, 1, "DynamoDB Local has one shard")
	for _, seq := range cps {
		assert.Equal(t, last, seq, "the checkpoint is the last record handled")
	}
	t.Logf("checkpoints seen while running: %v", seen)
	require.Greater(t, len(seen), 1, "the checkpoint was saved while records flowed")
	assert.True(t, slices.IsSortedFunc(seen, func(a, b string) int {
		if seqLess(a, b) {
			return -1
		}
		return 1
	}), "the checkpoint only moves forward")

	// Three more versions of each order, and one order deleted: a new consumer
	// with the same checkpoints handles only those.
	write(nUpdates, nUpdates+3)
	require.NoError(t, orders.Delete(t.Context(), tOrder{CustomerID: "c0", OrderID: "o0"}))
	log2 := newOrderLog(0)
	err = consume(t, tbl, streams, log2, nOrders*3+1, opts...)
	require.ErrorIs(t, err, context.Canceled)
	log2.check(t)
	assert.Len(t, log2.records, nOrders*3+1, "nothing handled twice")
	for i := range nOrders {
		assert.Equal(t, seqRange(nUpdates, nUpdates+3), log2.counts[fmt.Sprintf("c%d/o%d", i%3, i)])
	}
	i := slices.IndexFunc(log2.records, func(r StreamRecord) bool { return r.Event == singletable.StreamRemove })
	require.GreaterOrEqual(t, i, 0, "the delete was handled")
	rm := log2.records[i]
	assert.Nil(t, rm.New)
	assert.Equal(t, nUpdates+2, rm.Old.(tOrder).Count)
}

func TestStreamLocalNoStream(t *testing.T) {
	tbl := newTestTable(t)
	err := Consume(t.Context(), tbl, localStreams(t), func(context.Context, StreamRecord) error { return nil })
	assert.ErrorIs(t, err, singletable.ErrInvalidInput)
	assert.Contains(t, err.Error(), "has no stream")
}

// TestStreamBackpressure: while handlers are stuck, the reader stops reading
// once the railroad is full, instead of piling records up in memory.
func TestStreamBackpressure(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	var recs []streamtypes.Record
	for i := range 100 {
		recs = append(recs, orderChanges(t, "c1", fmt.Sprint("o", i), 0, 1)...)
	}
	f := newFakeStreams(&MemoryStore{}, &fakeShard{id: "A", records: recs})
	gate := make(chan struct{})
	var started, handled atomic.Int32
	handle := func(ctx context.Context, r StreamRecord) error {
		started.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		handled.Add(1)
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Consume(ctx, tbl, f, handle, fastPolls, FromARN("arn:fake"), BatchSize(10), Rails(singletable.RailroadOptions{Concurrency: 2, MaxPending: 5}))
	}()
	eventually(t, "two handlers stuck", func() bool { return started.Load() == 2 })
	time.Sleep(50 * time.Millisecond) // time to read on, if it would
	f.mu.Lock()
	reads := f.calls["GetRecords"]
	f.mu.Unlock()
	assert.Equal(t, 1, reads, "one batch read; the reader waits for room")
	assert.Equal(t, int32(2), started.Load())
	close(gate)
	eventually(t, "every record handled", func() bool { return handled.Load() == 100 })
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

// failingStore fails every checkpoint.
type failingStore struct{ MemoryStore }

var errStore = errors.New("store down")

func (*failingStore) Checkpoint(context.Context, Lease, string, bool) (Lease, error) {
	return Lease{}, errStore
}

func TestStreamCheckpointStoreFails(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	f := newFakeStreams(&MemoryStore{}, &fakeShard{id: "A", records: orderChanges(t, "c1", "o1", 0, 3)})
	err := Consume(t.Context(), tbl, f, newOrderLog(0).handle, fastPolls, FromARN("arn:fake"), Leases(&failingStore{}))
	require.ErrorIs(t, err, errStore)
	assert.Contains(t, err.Error(), "checkpoint")
}

// flakyListing is a MemoryStore whose Leases fails with err while now is before
// until, counting the failures.
type flakyListing struct {
	MemoryStore
	mu     sync.Mutex // protects err and until
	err    error
	until  time.Time
	failed atomic.Int32
}

func (s *flakyListing) failFor(err error, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err, s.until = err, time.Now().Add(d)
}

func (s *flakyListing) Leases(ctx context.Context, group string) ([]Lease, error) {
	s.mu.Lock()
	err, until := s.err, s.until
	s.mu.Unlock()
	if err != nil && time.Now().Before(until) {
		s.failed.Add(1)
		return nil, fmt.Errorf("flaky listing: %w", err)
	}
	return s.MemoryStore.Leases(ctx, group)
}

// A lease listing that fails for a while, for a reason that may pass (timed
// out, throttled past the SDK's retries), does not end the run: the consumer
// lists again after a backoff, keeps renewing the lease it holds meanwhile (for
// several lease durations: no other worker could take it, nor did its epoch
// move), and its shard's records go on being handled.
func TestStreamListingFailsTransiently(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	for name, cause := range map[string]error{
		"timeout":  fmt.Errorf("operation error DynamoDB: Query: %w", context.DeadlineExceeded),
		"throttle": &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")},
	} {
		t.Run(name, func(t *testing.T) {
			store := &flakyListing{}
			f := newFakeStreams(&store.MemoryStore, &fakeShard{id: "A", records: orderChanges(t, "c1", "o1", 0, 3)})
			log := newOrderLog(0)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- Consume(ctx, tbl, f, log.handle, fastPolls, Leases(store), FromARN("arn:fake"), Worker("w1"),
					LeaseTiming(200*time.Millisecond, 50*time.Millisecond))
			}()
			waitHandled := func(n int) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for log.handled() < n {
					select {
					case err := <-done:
						t.Fatalf("Consume returned %v with %d records of %d handled", err, log.handled(), n)
					case <-time.After(5 * time.Millisecond):
					}
					require.True(t, time.Now().Before(deadline), "handled %d records of %d in 30s", log.handled(), n)
				}
			}
			waitHandled(3)
			before, err := store.MemoryStore.Leases(t.Context(), "arn:fake")
			require.NoError(t, err)
			require.Len(t, before, 1)

			store.failFor(cause, time.Second) // five lease durations
			f.append("A", orderChanges(t, "c1", "o1", 3, 3)...)
			waitHandled(6)
			time.Sleep(time.Second)
			f.append("A", orderChanges(t, "c1", "o1", 6, 2)...)
			waitHandled(8)
			assert.Greater(t, store.failed.Load(), int32(3), "the listings failed, and were made again")

			after, err := store.MemoryStore.Leases(t.Context(), "arn:fake")
			require.NoError(t, err)
			require.Len(t, after, 1)
			assert.Equal(t, "w1", after[0].Owner)
			assert.Equal(t, before[0].Epoch, after[0].Epoch, "the lease was held throughout: renewed, never lost and taken again")
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			log.check(t)
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, log.counts["c1/o1"])
			assert.Empty(t, f.problems())
		})
	}
}

// A listing refused for a reason that does not pass (an error of the store's
// own, a validation error) ends the run with it.
func TestStreamListingFailsForGood(t *testing.T) {
	noLeaks(t)
	tbl := offlineTable(t)
	registerAll(t, tbl)
	store := &flakyListing{}
	store.failFor(errStore, time.Hour)
	f := newFakeStreams(&store.MemoryStore, &fakeShard{id: "A", records: orderChanges(t, "c1", "o1", 0, 3)})
	err := Consume(t.Context(), tbl, f, newOrderLog(0).handle, fastPolls, Leases(store), FromARN("arn:fake"))
	require.ErrorIs(t, err, errStore)
	assert.Contains(t, err.Error(), "list leases")
	assert.EqualValues(t, 2, store.failed.Load(), "the round's listing, not made again, and the stop's (for leases to release)")
}
