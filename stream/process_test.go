package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/localtest"
)

// Process-level tests of a fleet: the consumers are real processes (this test
// binary started again with procWorkerEnv set, see TestMain), sharing the
// stream's shard through a TableStore, and the test kills (SIGKILL), freezes
// (SIGSTOP past the lease, then SIGCONT) or stops (SIGTERM) the one holding the
// shard while a producer writes. Every handler appends the version it handles
// to the item's log, in DynamoDB (one Update per record, through the library,
// so fenced when fencing is on): DynamoDB orders the appends to one item, so
// the log is the order the changes were applied in, whoever applied them.
//
// A run of a scenario takes about 14 s (kill), 12 s (SIGSTOP) or 2.5 s
// (SIGTERM) on a quiet machine, more under load. Every wait is
// derived from the lease timing and fails with a message saying what did not
// happen; a wait for the handlers to catch up fails only when they make no
// progress for a while (procStall), so that a loaded machine slows the tests
// down without failing them. The times measured are logged, never asserted.
// PROC_RUNS=n runs each n times (the 20-run loops of issue 40); PROC_FENCE=0
// runs the workers without fencing, PROC_SCENARIO picks one scenario by name,
// PROC_SHOW=1 logs the workers' output and logs (every handler's events and
// the lease writes, procStore) even when a run passes, as a failed run does.

const procWorkerEnv = "SINGLETABLE_STREAM_PROC_WORKER"

// The entities of the process tests: the producer's items and their logs.
type pSrc struct {
	_  struct{} `Type:"PSrc" PK:"PSRC#{id}" SK:"SRC"`
	ID string   `dynamodbav:"id"`
	V  int      `dynamodbav:"v"`
}

type pLog struct {
	_   struct{} `Type:"PLog" PK:"PLOG#{id}" SK:"LOG"`
	ID  string   `dynamodbav:"id"`
	V   int      `dynamodbav:"v"`
	Log []int    `dynamodbav:"log"`
}

const (
	// procLease and procRenew: a lease of 6 s renewed every second leaves
	// a lease store room to be slow (a listing, a renewal taking seconds on a
	// loaded machine) before a holder's term lapses; 3 s did not, at load 14.
	procLease = 6 * time.Second
	procRenew = time.Second
	// procTakeover bounds the wait for another worker to take the shard: a
	// takeover after a crash takes the lease duration and a renewal
	// interval; the rest is room for a loaded machine.
	procTakeover = 5 * procLease
	// procStall is how long the handlers may make no progress at all before
	// a wait for them fails: more than a takeover, with room for load.
	procStall = 5 * procLease
	// procProduceEvery is the producer's pace: a new version of every item
	// this often (12 items: 40 records a second), which one worker's handlers
	// (8 at once, 80 to 160ms each: about 60 a second) keep up with, so that
	// the backlog after a takeover or the producer's stop is short.
	procProduceEvery = 300 * time.Millisecond
)

// procWorker is the main of a worker process: it consumes the stream of the
// table named by the environment until SIGTERM, and writes what its handlers
// do to its log file, a line each: "<unix ns> <event> <id> <v> <epoch>
// [error]", events start, ok (written, and the handler returned nil), refused
// (ErrLeaseLost), cut (context ended before the write), fail; and term (the
// SIGTERM) and exit (Consume returned). epoch is the lease's, from the
// handler's fencing token: it tells the terms of ownership apart.
func procWorker() int {
	if err := runProcWorker(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

func runProcWorker() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	inst, err := localtest.Open(ctx, nil)
	if err != nil {
		return err
	}
	defer inst.Close()
	tbl, err := singletable.NewTable(inst.Client(), os.Getenv("PROC_TABLE"), testTableOptions...)
	if err != nil {
		return err
	}
	if _, err := singletable.Register[pSrc](tbl); err != nil {
		return err
	}
	logs, err := singletable.Register[pLog](tbl)
	if err != nil {
		return err
	}
	ts, err := NewTableStore(tbl)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(os.Getenv("PROC_LOG"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	note := func(event, id string, v int, epoch int64, err error) {
		line := fmt.Sprintf("%d %s %s %d %d", time.Now().UnixNano(), event, id, v, epoch)
		if err != nil {
			line += " " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(f, line) // unbuffered: a kill -9 loses nothing written
	}
	store := &procStore{TableStore: ts, note: note}
	// frozen: the handler does not look at its context once it has begun (a
	// write already under way when the process froze); otherwise it returns
	// when its context ends during its work.
	frozen := os.Getenv("PROC_MODE") == "sigstop"
	handle := func(ctx context.Context, r StreamRecord) error {
		_, src, ok := singletable.Images[pSrc](r)
		if !ok || r.Type != "PSrc" || r.NewImage == nil {
			return nil // the logs' own changes
		}
		tok, _ := FencingTokenFrom(ctx)
		note("start", src.ID, src.V, tok.Epoch, nil)
		work := 80*time.Millisecond + rand.N(80*time.Millisecond)
		if frozen {
			time.Sleep(work)
		} else {
			select {
			case <-time.After(work):
			case <-ctx.Done():
				note("cut", src.ID, src.V, tok.Epoch, context.Cause(ctx)) // why: the stop, or the lease lost
				return ctx.Err()
			}
		}
		// The write is made to the end once begun, whatever the context
		// (WithoutCancel keeps its values, the fence among them): a handler
		// whose write landed has finished.
		_, err := logs.Update(context.WithoutCancel(ctx), pLog{ID: src.ID}, singletable.Set("v", src.V), singletable.Append("log", src.V), singletable.Upsert())
		switch {
		case err == nil:
			note("ok", src.ID, src.V, tok.Epoch, nil)
		case errors.Is(err, ErrLeaseLost):
			note("refused", src.ID, src.V, tok.Epoch, err)
		default:
			note("fail", src.ID, src.V, tok.Epoch, err)
		}
		return err
	}
	opts := []Option{
		Leases(store), Worker(os.Getenv("PROC_WORKER")), LeaseTiming(procLease, procRenew),
		CheckpointEvery(200 * time.Millisecond), Polling(50*time.Millisecond, 200*time.Millisecond),
		Rails(singletable.RailroadOptions{Concurrency: 8}),
	}
	opts = append(opts, procFenceOptions()...)
	context.AfterFunc(ctx, func() { note("term", "-", 0, 0, nil) })
	err = Consume(ctx, tbl, inst.StreamsClient(), handle, opts...)
	note("exit", "-", 0, 0, err)
	return err
}

// procStore is a worker's TableStore, which notes in the worker's log every
// lease write it makes (but renewals that succeed) and every failed listing,
// as events "lease-<call>" of id "-", v the lease's counter and epoch its
// epoch after the call (before it, when refused), the rest saying the shard,
// the owner and the error: what a failed run's log needs to tell a stop from a
// lapse.
type procStore struct {
	*TableStore
	note func(event, id string, v int, epoch int64, err error)
}

func (s *procStore) noted(call string, before, after Lease, err error) {
	x := after
	if err != nil || x.Shard == "" {
		x = before
	}
	if call == "renew" && err == nil {
		return
	}
	what := fmt.Errorf("shard=%s owner=%s checkpoint=%s handled=%d", x.Shard, x.Owner, x.Checkpoint, len(x.Handled))
	if err != nil {
		what = fmt.Errorf("%w: %w", what, err)
	}
	s.note("lease-"+call, "-", int(x.Counter), x.Epoch, what)
}

func (s *procStore) Leases(ctx context.Context, group string) ([]Lease, error) {
	ls, err := s.TableStore.Leases(ctx, group)
	if err != nil {
		s.note("lease-list", "-", 0, 0, err)
	}
	return ls, err
}

func (s *procStore) TakeLease(ctx context.Context, l Lease, owner string, expires time.Time) (Lease, error) {
	y, err := s.TableStore.TakeLease(ctx, l, owner, expires)
	s.noted("take", l, y, err)
	return y, err
}

func (s *procStore) RenewLease(ctx context.Context, l Lease, expires time.Time) (Lease, error) {
	y, err := s.TableStore.RenewLease(ctx, l, expires)
	s.noted("renew", l, y, err)
	return y, err
}

func (s *procStore) Checkpoint(ctx context.Context, l Lease, checkpoint string, finished bool) (Lease, error) {
	y, err := s.TableStore.Checkpoint(ctx, l, checkpoint, finished)
	s.noted("checkpoint", l, y, err)
	return y, err
}

func (s *procStore) CheckpointHandled(ctx context.Context, l Lease, checkpoint string, handled []string) (Lease, error) {
	y, err := s.TableStore.CheckpointHandled(ctx, l, checkpoint, handled)
	s.noted("checkpoint-handled", l, y, err)
	return y, err
}

func (s *procStore) ReleaseLease(ctx context.Context, l Lease) error {
	err := s.TableStore.ReleaseLease(ctx, l)
	s.noted("release", l, Lease{}, err)
	return err
}

func (s *procStore) HandOver(ctx context.Context, l Lease, expires time.Time) (Lease, error) {
	y, err := s.TableStore.HandOver(ctx, l, expires)
	s.noted("hand-over", l, y, err)
	return y, err
}

var (
	_ HandledStore = (*procStore)(nil)
	_ Fencer       = (*procStore)(nil)
)

// procWorkerOf is one worker process.
type procWorkerOf struct {
	id   string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// procFleet is a scenario's table, producer and workers.
type procFleet struct {
	t       *testing.T
	tbl     *Table
	src     *singletable.Entity[pSrc]
	logs    *singletable.Entity[pLog]
	store   *TableStore
	dir     string
	ids     []string
	workers map[string]*procWorkerOf

	mu      sync.Mutex // protects version
	version int        // the last version the producer wrote of every item
}

func newProcFleet(t *testing.T, mode string, n int) *procFleet {
	t.Helper()
	tbl := newStreamTable(t)
	src, err := singletable.Register[pSrc](tbl)
	require.NoError(t, err)
	logs, err := singletable.Register[pLog](tbl)
	require.NoError(t, err)
	store, err := NewTableStore(tbl)
	require.NoError(t, err)
	p := &procFleet{t: t, tbl: tbl, src: src, logs: logs, store: store, dir: t.TempDir(), workers: map[string]*procWorkerOf{}}
	for i := range 12 {
		p.ids = append(p.ids, "item"+strconv.Itoa(i))
	}
	endpoint := local.Get(t).Endpoint()
	for i := range n {
		id := fmt.Sprintf("w%d", i)
		w := &procWorkerOf{id: id, log: filepath.Join(p.dir, id+".log"), done: make(chan error, 1)}
		w.cmd = exec.Command(os.Args[0], "-test.run=^$")
		w.cmd.Env = append(os.Environ(), procWorkerEnv+"=1", "AWS_ENDPOINT_URL="+endpoint, "AWS_ENDPOINT_URL_DYNAMODB=", "PROC_TABLE="+tbl.Name(),
			"PROC_WORKER="+id, "PROC_LOG="+w.log, "PROC_MODE="+mode,
			// A race-enabled worker otherwise sleeps a second at exit.
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
		out, err := os.Create(filepath.Join(p.dir, id+".out"))
		require.NoError(t, err)
		w.cmd.Stdout, w.cmd.Stderr = out, out
		require.NoError(t, w.cmd.Start())
		go func() { w.done <- w.cmd.Wait(); out.Close() }()
		p.workers[id] = w
	}
	t.Cleanup(func() {
		for _, w := range p.workers {
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() || os.Getenv("PROC_SHOW") != "" {
			for _, w := range p.workers {
				b, _ := os.ReadFile(filepath.Join(p.dir, w.id+".out"))
				t.Logf("%s output:\n%s", w.id, b)
				if b, _ = os.ReadFile(w.log); len(b) > 0 {
					t.Logf("%s log:\n%s", w.id, b)
				}
			}
		}
	})
	return p
}

// produce writes a new version of every item every procProduceEvery until
// stop is closed.
func (p *procFleet) produce(ctx context.Context, stop <-chan struct{}) {
	tick := time.NewTicker(procProduceEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		v := p.version + 1
		p.mu.Unlock()
		for _, id := range p.ids {
			if _, err := p.src.Put(ctx, pSrc{ID: id, V: v}); err != nil {
				p.t.Errorf("produce %s v%d: %v", id, v, err)
				return
			}
		}
		p.mu.Lock()
		p.version = v
		p.mu.Unlock()
	}
}

// holder returns the worker that holds the shard's lease, once one does.
func (p *procFleet) holder(ctx context.Context, not string, within time.Duration) (string, time.Time) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		leases, err := p.leases(ctx)
		require.NoError(p.t, err)
		for _, x := range leases {
			if x.Owner != "" && x.Owner != not && !x.Finished {
				return x.Owner, time.Now()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if not == "" {
		p.t.Fatalf("no worker took the shard's lease within %s of the start", within)
	}
	p.t.Fatalf("no worker but %s took the shard's lease within %s", not, within)
	return "", time.Time{}
}

func (p *procFleet) leases(ctx context.Context) ([]Lease, error) {
	arn, err := latestStream(ctx, p.tbl)
	if err != nil {
		return nil, err
	}
	return p.store.Leases(ctx, arn)
}

// events reads a worker's log.
type procEvent struct {
	at     time.Time
	event  string
	id     string
	v      int
	epoch  int64
	worker string
	err    string
}

func (w *procWorkerOf) events(t *testing.T) []procEvent {
	t.Helper()
	f, err := os.Open(w.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []procEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 6)
		if len(parts) < 5 {
			continue // a line cut by a kill
		}
		ns, _ := strconv.ParseInt(parts[0], 10, 64)
		v, _ := strconv.Atoi(parts[3])
		epoch, _ := strconv.ParseInt(parts[4], 10, 64)
		e := procEvent{at: time.Unix(0, ns), event: parts[1], id: parts[2], v: v, epoch: epoch, worker: w.id}
		if len(parts) == 6 {
			e.err = parts[5]
		}
		out = append(out, e)
	}
	return out
}

// inFlight waits until worker w has a handler running (started, not ended)
// that began within the last 40ms, so still in its work (80ms at least) when
// the caller signals at once.
func (p *procFleet) inFlight(w string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		running := map[string]time.Time{}
		for _, e := range p.workers[w].events(p.t) {
			k := e.id + "/" + strconv.Itoa(e.v)
			switch e.event {
			case "start":
				running[k] = e.at
			default:
				delete(running, k)
			}
		}
		for _, at := range running {
			if time.Since(at) < 40*time.Millisecond {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.t.Fatalf("worker %s, holding the shard, began no handler within %s", w, within)
}

// firstOK is when worker w first wrote a record after t0.
func (p *procFleet) firstOK(w string, after time.Time) time.Time {
	for _, e := range p.workers[w].events(p.t) {
		if e.event == "ok" && e.at.After(after) {
			return e.at
		}
	}
	return time.Time{}
}

// settle waits until every item's log ends at the last version written. The
// handlers may be slow (a loaded machine, a takeover under way): it fails
// only when no item's log moves on for procStall.
func (p *procFleet) settle(ctx context.Context) {
	p.t.Helper()
	p.mu.Lock()
	last := p.version
	p.mu.Unlock()
	began := time.Now()
	moved := began
	seen := map[string]int{}
	for {
		done := true
		var behind []string
		for _, id := range p.ids {
			got, err := p.logs.Get(ctx, pLog{ID: id}, singletable.Consistent())
			if err != nil && !errors.Is(err, singletable.ErrNotFound) {
				p.t.Fatalf("settle: read the log of %s: %v", id, err)
			}
			if got.V != seen[id] {
				seen[id], moved = got.V, time.Now()
			}
			if got.V != last {
				done = false
				behind = append(behind, fmt.Sprintf("%s at %d", id, got.V))
			}
		}
		if done {
			p.t.Logf("the logs reached version %d %.1fs after the producer stopped", last, time.Since(began).Seconds())
			return
		}
		if time.Since(moved) > procStall {
			p.t.Fatalf("the handlers made no progress for %s (%.0fs after the producer stopped): the logs did not reach version %d: %s",
				procStall, time.Since(began).Seconds(), last, strings.Join(behind, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopAll stops every worker still running with SIGTERM and waits for it.
func (p *procFleet) stopAll() {
	for _, w := range p.workers {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for id, w := range p.workers {
		select {
		case <-w.done:
			w.done <- nil
		case <-time.After(procStall):
			p.t.Errorf("worker %s did not stop within %s of SIGTERM", id, procStall)
		}
	}
}

// check reads every item's log and checks it: it begins at version 1, ends at
// the last version written, and each step goes on by one or, where repeats
// are allowed, back to a version handled before (a replay from the
// checkpoint). A late write of an old version (a frozen process's) shows as a
// step back followed by a jump, or as a log that ends behind. It returns the
// number of repeats.
func (p *procFleet) check(ctx context.Context, repeats bool) int {
	p.t.Helper()
	p.mu.Lock()
	last := p.version
	p.mu.Unlock()
	n := 0
	for _, id := range p.ids {
		got, err := p.logs.Get(ctx, pLog{ID: id}, singletable.Consistent())
		require.NoError(p.t, err, id)
		l := got.Log
		if len(l) == 0 || l[0] != 1 || l[len(l)-1] != last {
			p.t.Errorf("item %s: log %v: want it to run from 1 to %d", id, l, last)
			continue
		}
		for i := 1; i < len(l); i++ {
			switch {
			case l[i] == l[i-1]+1:
			case l[i] <= l[i-1] && repeats:
				n++
			case l[i] <= l[i-1]:
				p.t.Errorf("item %s: log %v: version %d handled again after %d", id, l, l[i], l[i-1])
			default:
				p.t.Errorf("item %s: log %v: %d after %d: a change skipped or written late", id, l, l[i], l[i-1])
			}
		}
	}
	return n
}

// refused counts the writes of worker w refused as the lease was lost.
func (p *procFleet) count(w, event string) int {
	n := 0
	for _, e := range p.workers[w].events(p.t) {
		if e.event == event {
			n++
		}
	}
	return n
}

func procRuns(t *testing.T) int {
	if s := os.Getenv("PROC_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	return 1
}

// procScenario runs a scenario PROC_RUNS times, and logs how many runs failed.
func procScenario(t *testing.T, name string, run func(t *testing.T)) {
	if s := os.Getenv("PROC_SCENARIO"); s != "" && s != name {
		t.Skip("PROC_SCENARIO=" + s)
	}
	if testing.Short() {
		t.Skip("process tests take seconds: not with -short")
	}
	n := procRuns(t)
	failed := 0
	for i := range n {
		ok := t.Run(fmt.Sprintf("run%d", i+1), run)
		if !ok {
			failed++
		}
	}
	if n > 1 {
		t.Logf("%s: %d of %d runs failed", name, failed, n)
	}
}

// TestProcessKill kills the holder of the shard with SIGKILL while records
// flow: another process takes the shard after the lease duration and resumes
// after the checkpoint: nothing lost, each item's changes in order, repeats
// only of what followed the checkpoint.
func TestProcessKill(t *testing.T) {
	procScenario(t, "kill", func(t *testing.T) {
		ctx := context.Background()
		p := newProcFleet(t, "kill", 2)
		stop := make(chan struct{})
		produced := make(chan struct{})
		go func() { defer close(produced); p.produce(ctx, stop) }()
		holder, _ := p.holder(ctx, "", procTakeover)
		p.inFlight(holder, procStall)
		time.Sleep(500 * time.Millisecond)
		killed := time.Now()
		require.NoError(t, p.workers[holder].cmd.Process.Kill())
		next, took := p.holder(ctx, holder, procTakeover)
		time.Sleep(time.Second)
		close(stop)
		<-produced
		p.settle(ctx)
		first := p.firstOK(next, killed)
		p.stopAll()
		repeats := p.check(ctx, true)
		t.Logf("kill -9: %s took the shard %.2fs after the kill, wrote its first record at %.2fs; %d repeats", next, took.Sub(killed).Seconds(), first.Sub(killed).Seconds(), repeats)
	})
}

// TestProcessFreeze freezes the holder (SIGSTOP) with handlers running, past
// its lease: another process takes the shard; then thaws it (SIGCONT). Its
// handlers, which do not look at their context once begun, write late: with
// fencing, every late write is refused (ErrLeaseLost) and no item's log shows
// an old version after a newer one (check fails the run on one). A write the
// frozen process had sent before it froze may have landed in time, its answer
// read after the thaw: such answers are counted, not failed.
func TestProcessFreeze(t *testing.T) {
	procScenario(t, "sigstop", func(t *testing.T) {
		ctx := context.Background()
		p := newProcFleet(t, "sigstop", 2)
		stop := make(chan struct{})
		produced := make(chan struct{})
		go func() { defer close(produced); p.produce(ctx, stop) }()
		holder, _ := p.holder(ctx, "", procTakeover)
		p.inFlight(holder, procStall)
		frozen := time.Now()
		require.NoError(t, p.workers[holder].cmd.Process.Signal(syscall.SIGSTOP))
		next, took := p.holder(ctx, holder, procTakeover)
		// Let the new holder handle newer versions of every item than those
		// the frozen handlers hold, then thaw.
		time.Sleep(time.Second)
		require.NoError(t, p.workers[holder].cmd.Process.Signal(syscall.SIGCONT))
		time.Sleep(time.Second)
		close(stop)
		<-produced
		p.settle(ctx)
		first := p.firstOK(next, frozen)
		p.stopAll()
		repeats := p.check(ctx, true)
		late, refused := 0, p.count(holder, "refused")
		for _, e := range p.workers[holder].events(t) {
			if e.event == "ok" && e.at.After(took) {
				late++
			}
		}
		t.Logf("SIGSTOP: %s took the shard %.2fs after the freeze, wrote its first record at %.2fs; %d repeats; the thawed %s: %d writes answered ok after the takeover, %d refused",
			next, took.Sub(frozen).Seconds(), first.Sub(frozen).Seconds(), repeats, holder, late, refused)
		if procFenced() {
			require.NotZero(t, refused, "the thawed process had no write refused: the scenario did not freeze a handler before its write")
		}
	})
}

// TestProcessTerm stops the holder with SIGTERM while records flow: it stops
// reading, waits for its handlers (those still working are cut short),
// checkpoints with the records after the checkpoint whose handlers finished,
// and releases the lease; another process takes it at once. No record whose
// handler finished under the stopped term is handled again; the repeats
// allowed are those of docs/streams.md "Duplicates": a handler cut short by
// the stop (or that failed), and, should the machine be so loaded that the
// lease changed hands before the stop, the records after the checkpoint of
// that change. Each item's log runs in order, with nothing lost.
func TestProcessTerm(t *testing.T) {
	procScenario(t, "sigterm", func(t *testing.T) {
		ctx := context.Background()
		p := newProcFleet(t, "sigterm", 2)
		stop := make(chan struct{})
		produced := make(chan struct{})
		go func() { defer close(produced); p.produce(ctx, stop) }()
		holder, _ := p.holder(ctx, "", procTakeover)
		p.inFlight(holder, procStall)
		time.Sleep(300 * time.Millisecond)
		// The term the stop ends: the lease as it is just before the signal
		// (on a loaded machine it may have changed hands since the start).
		term := p.lease(ctx)
		holder = term.Owner
		p.inFlight(holder, procStall)
		stopped := time.Now()
		require.NoError(t, p.workers[holder].cmd.Process.Signal(syscall.SIGTERM))
		var exited time.Time
		select {
		case err := <-p.workers[holder].done:
			p.workers[holder].done <- err
			exited = time.Now()
			require.NoError(t, err, "the stopped worker's exit")
		case <-time.After(procStall):
			t.Fatalf("the worker %s did not stop within %s of SIGTERM", holder, procStall)
		}
		next, _ := p.holder(ctx, holder, procTakeover)
		time.Sleep(time.Second)
		close(stop)
		<-produced
		p.settle(ctx)
		p.stopAll()
		repeats := p.check(ctx, true)
		allowed, forbidden := p.duplicates(holder, term.Epoch)
		for _, d := range forbidden {
			t.Errorf("a record whose handler finished before the stop was handled again: %s", d)
		}
		if t.Failed() {
			for _, w := range p.workers {
				for _, e := range w.events(t) {
					if e.event != "start" && e.event != "ok" {
						t.Logf("%s: %.3fs after the signal: %s %s v%d epoch %d %s", w.id, e.at.Sub(stopped).Seconds(), e.event, e.id, e.v, e.epoch, e.err)
					}
				}
			}
		}
		var returned time.Time
		for _, e := range p.workers[holder].events(t) {
			if e.event == "exit" {
				returned = e.at
			}
		}
		first := p.firstStart(next, stopped)
		t.Logf("SIGTERM: %s's Consume returned %.3fs after the signal, the process exited at %.2fs (%d handlers cut short); %s handled its first record %.3fs after the signal; %d repeats in the logs: %d allowed %v, %d forbidden",
			holder, returned.Sub(stopped).Seconds(), exited.Sub(stopped).Seconds(), p.count(holder, "cut"), next, first.Sub(stopped).Seconds(),
			repeats, len(allowed), allowed, len(forbidden))
	})
}

// lease returns the shard's lease, once a worker holds it.
func (p *procFleet) lease(ctx context.Context) Lease {
	p.t.Helper()
	leases, err := p.leases(ctx)
	require.NoError(p.t, err)
	for _, x := range leases {
		if x.Owner != "" && !x.Finished {
			return x
		}
	}
	p.t.Fatalf("no worker holds the shard's lease: %+v", leases)
	return Lease{}
}

// firstStart is when worker w first began handling a record after t0.
func (p *procFleet) firstStart(w string, after time.Time) time.Time {
	for _, e := range p.workers[w].events(p.t) {
		if e.event == "start" && e.at.After(after) {
			return e.at
		}
	}
	return time.Time{}
}

// duplicates sorts the records handled more than once. A record whose
// handler finished (returned nil: event ok) under the term a graceful stop
// ended (worker stopped, at the lease's epoch) and that was handled again
// afterwards is forbidden; any other repeat is one the docs allow: the first
// handling was cut short by the stop or failed, or was under a term that ended
// by a lost lease, not by the stop. Each is described.
func (p *procFleet) duplicates(stopped string, epoch int64) (allowed, forbidden []string) {
	p.t.Helper()
	byRecord := map[string][]procEvent{}
	var keys []string
	for _, w := range p.workers {
		for _, e := range w.events(p.t) {
			if e.id == "-" {
				continue
			}
			k := fmt.Sprintf("%s v%d", e.id, e.v)
			if byRecord[k] == nil {
				keys = append(keys, k)
			}
			byRecord[k] = append(byRecord[k], e)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		evs := byRecord[k]
		slices.SortFunc(evs, func(a, b procEvent) int { return a.at.Compare(b.at) })
		starts := 0
		var finished *procEvent // an ok under the stopped term
		again := false
		var what []string
		for i, e := range evs {
			what = append(what, fmt.Sprintf("%s %s@%d", e.event, e.worker, e.epoch))
			switch {
			case e.event == "start":
				starts++
				if finished != nil {
					again = true
				}
			case e.event == "ok" && e.worker == stopped && e.epoch == epoch && finished == nil:
				finished = &evs[i]
			}
		}
		if starts < 2 {
			continue
		}
		d := k + ": " + strings.Join(what, ", ")
		if again {
			forbidden = append(forbidden, d)
		} else {
			allowed = append(allowed, d)
		}
	}
	return allowed, forbidden
}

// procFenced reports whether the workers fence their writes: unless PROC_FENCE=0.
func procFenced() bool { return os.Getenv("PROC_FENCE") != "0" }

// procFenceOptions are the workers' fencing options.
func procFenceOptions() []Option {
	if !procFenced() {
		return nil
	}
	return []Option{FenceWrites()}
}
