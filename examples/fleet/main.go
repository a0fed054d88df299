// Command fleet runs three stream consumers in one program, as three
// instances of a service would run them: each has its own worker id, and all
// keep their leases and checkpoints in the same DynamoDB table (the single
// table itself, under keys no entity can render). Orders change status while
// they run; half-way, the consumer reading the stream is killed: it stops
// without releasing its lease or writing its last checkpoint. Another takes the
// lease once it expires, resumes after the dead one's checkpoint, and every
// change is handled, each order's in order; the few handled twice are those the
// dead consumer handled after its last checkpoint.
//
// DynamoDB Local gives a table's stream one shard, so one consumer reads at a
// time and the others stand by; on DynamoDB a table has a shard per partition
// and the consumers share them (see the fleet tests).
//
// Run it with
//
//	go run ./examples/fleet
//
// It uses the DynamoDB Local at DYNAMODB_ENDPOINT when that is set, and
// otherwise starts one (Testcontainers, else the jar with Java) and stops it at
// the end. It creates a table of its own, with a stream, and deletes it when
// done.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/stream"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg) and dynamodbstreams.NewFromConfig(cfg).
func start() error {
	return runLocal("fleet", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), localStreamsClient(endpoint), tableName, os.Stdout)
	})
}

// Order moves through its statuses one step at a time; Step counts them.
type Order struct {
	_          struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Step       int      `dynamodbav:"step"`
}

// ID names the order: "c1/o2".
func (o Order) ID() string { return o.CustomerID + "/" + o.OrderID }

const (
	orders = 12
	steps  = 20
	lease  = 3 * time.Second
	renew  = 500 * time.Millisecond
)

// Log is what the consumers' handler records: who handled which change, in
// the order handled. It is safe for concurrent use.
type Log struct {
	mu        sync.Mutex       // protects the fields below
	steps     map[string][]int // by order, the steps handled, repeats included
	byWorker  map[string]int
	completed int
}

func (l *Log) handler(worker string) func(context.Context, singletable.StreamRecord) error {
	return func(ctx context.Context, rec singletable.StreamRecord) error {
		_, o, ok := singletable.Images[Order](rec)
		if !ok {
			return nil
		}
		select { // the downstream call
		case <-time.After(2 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.steps[o.ID()] = append(l.steps[o.ID()], o.Step)
		l.byWorker[worker]++
		l.completed++
		return nil
	}
}

// done reports whether every order's last step has been handled.
func (l *Log) done() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range orders {
		s := l.steps[orderID(i)]
		if len(s) == 0 || slices.Max(s) != steps-1 {
			return false
		}
	}
	return true
}

// check returns an error if an order's steps skip one or go back other than
// to replay, and the number of repeats.
func (l *Log) check() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	repeats := 0
	for i := range orders {
		id := orderID(i)
		s := l.steps[id]
		seen := map[int]bool{}
		for k, step := range s {
			if k == 0 && step != 0 || k > 0 && step > s[k-1]+1 {
				return 0, fmt.Errorf("order %s: steps %v: out of order", id, s)
			}
			if seen[step] {
				repeats++
			}
			seen[step] = true
		}
		if len(seen) != steps {
			return 0, fmt.Errorf("order %s: %d of %d steps handled", id, len(seen), steps)
		}
	}
	return repeats, nil
}

func orderID(i int) string { return fmt.Sprintf("c%d/o%d", i%3, i) }

// mortal is a lease store that stops getting through when its process dies,
// as a killed process's requests stop: no renewal, checkpoint or release.
type mortal struct {
	stream.LeaseStore
	mu   sync.Mutex // protects dead
	dead bool
}

var errKilled = errors.New("killed")

func (m *mortal) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dead = true
}

func (m *mortal) alive() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return errKilled
	}
	return nil
}

func (m *mortal) Leases(ctx context.Context, g string) ([]stream.Lease, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.LeaseStore.Leases(ctx, g)
}

func (m *mortal) RenewLease(ctx context.Context, l stream.Lease, e time.Time) (stream.Lease, error) {
	if err := m.alive(); err != nil {
		return stream.Lease{}, err
	}
	return m.LeaseStore.RenewLease(ctx, l, e)
}

func (m *mortal) Checkpoint(ctx context.Context, l stream.Lease, cp string, f bool) (stream.Lease, error) {
	if err := m.alive(); err != nil {
		return stream.Lease{}, err
	}
	return m.LeaseStore.Checkpoint(ctx, l, cp, f)
}

func (m *mortal) ReleaseLease(ctx context.Context, l stream.Lease) error {
	if err := m.alive(); err != nil {
		return err
	}
	return m.LeaseStore.ReleaseLease(ctx, l)
}

// worker is one consumer of the fleet, running in a goroutine.
type worker struct {
	id     string
	store  *mortal
	cancel context.CancelFunc
	done   chan error
}

// run creates a table with a stream, writes orders' steps while three
// consumers run, kills the one holding the shard half-way, waits for every
// change, prints each step to out, and deletes the table.
func run(ctx context.Context, client singletable.Client, streams stream.Client, tableName string, out io.Writer) (err error) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	table, err := singletable.NewTable(client, tableName)
	if err != nil {
		return err
	}
	if err := table.CreateTable(ctx, singletable.EnableStream()); err != nil {
		return err
	}
	defer func() {
		del, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, table.DeleteTable(del))
		p("deleted table %s", tableName)
	}()
	p("created table %s with a stream", tableName)
	ordersE, err := singletable.Register[Order](table)
	if err != nil {
		return err
	}
	leases, err := stream.NewTableStore(table) // in the single table itself
	if err != nil {
		return err
	}

	log := &Log{steps: map[string][]int{}, byWorker: map[string]int{}}
	workers := startWorkers(ctx, table, streams, leases, log)
	defer func() { err = errors.Join(err, stopWorkers(workers)) }()
	p("1. three consumers (blue, green, red) share the stream; leases in table %s (lease %s, renewed every %s)", tableName, lease, renew)
	if err := writeSteps(ctx, ordersE, 0, steps/2); err != nil {
		return err
	}
	owner, err := waitOwner(ctx, leases, table, "", 50*time.Millisecond)
	if err != nil {
		return err
	}
	p("   %d orders × %d steps written; %s holds the shard", orders, steps/2, owner)
	if err := waitHandled(ctx, log, owner, orders*steps/4); err != nil {
		return err
	}

	// 2. Kill the holder: no release, no last checkpoint.
	kill(workers, owner)
	killed := time.Now()
	p("\n2. %s is killed after handling %d changes: it releases nothing and writes no last checkpoint", owner, log.handledBy(owner))
	written := make(chan error, 1)
	go func() { written <- writeSteps(ctx, ordersE, steps/2, steps) }()
	next, err := waitOwner(ctx, leases, table, owner, 20*time.Millisecond)
	if err != nil {
		return err
	}
	took := time.Since(killed)
	p("   %s took the shard %s after the kill (at most the lease, %s, plus a renewal interval, %s, give or take a round)", next, took.Round(100*time.Millisecond), lease, renew)
	if err := <-written; err != nil {
		return err
	}
	p("   the other %d steps of every order were written meanwhile", steps-steps/2)

	if err := waitDone(ctx, log, killed); err != nil {
		return err
	}
	return report(p, log, owner)
}

// startWorkers starts the three consumers, each in a goroutine of its own,
// with its own worker id and lease store (over leases).
func startWorkers(ctx context.Context, table *singletable.Table, streams stream.Client, leases stream.LeaseStore, log *Log) []*worker {
	var workers []*worker
	for _, id := range []string{"blue", "green", "red"} {
		w := &worker{id: id, store: &mortal{LeaseStore: leases}, done: make(chan error, 1)}
		wctx, cancel := context.WithCancel(ctx)
		w.cancel = cancel
		go func() {
			w.done <- stream.Consume(wctx, table, streams, log.handler(id),
				stream.Worker(id), stream.Leases(w.store), stream.LeaseTiming(lease, renew),
				stream.CheckpointEvery(200*time.Millisecond), stream.Polling(20*time.Millisecond, 200*time.Millisecond))
		}()
		workers = append(workers, w)
	}
	return workers
}

// stopWorkers stops the consumers and waits for them; it returns what they
// failed with, other than being stopped or killed.
func stopWorkers(workers []*worker) error {
	var err error
	for _, w := range workers {
		w.cancel()
		if werr := <-w.done; werr != nil && !errors.Is(werr, context.Canceled) && !errors.Is(werr, errKilled) {
			err = errors.Join(err, fmt.Errorf("%s: %w", w.id, werr))
		}
	}
	return err
}

// kill kills the consumer named id: its lease store stops getting through,
// and it stops.
func kill(workers []*worker, id string) {
	for _, w := range workers {
		if w.id == id {
			w.store.kill()
			w.cancel()
		}
	}
}

// writeSteps writes the steps from up to to of every order, a step of each
// order at a time.
func writeSteps(ctx context.Context, ordersE *singletable.Entity[Order], from, to int) error {
	for step := from; step < to; step++ {
		for i := range orders {
			c, o, _ := strings.Cut(orderID(i), "/")
			if _, err := ordersE.Put(ctx, Order{CustomerID: c, OrderID: o, Step: step}); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitOwner waits, looking every interval, until a consumer other than not
// holds the stream's shard, and returns it.
func waitOwner(ctx context.Context, leases stream.LeaseStore, table *singletable.Table, not string, every time.Duration) (string, error) {
	var owner string
	for owner == "" || owner == not {
		var err error
		if owner, err = shardOwner(ctx, leases, table); err != nil {
			return "", err
		}
		if err := sleep(ctx, every); err != nil {
			return "", err
		}
	}
	return owner, nil
}

// waitHandled waits until worker w has handled n changes.
func waitHandled(ctx context.Context, log *Log, w string, n int) error {
	for log.handledBy(w) < n {
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// waitDone waits until every change is handled, for two minutes at most
// after killed.
func waitDone(ctx context.Context, log *Log, killed time.Time) error {
	for !log.done() {
		if time.Since(killed) > 2*time.Minute {
			return errors.New("not every change was handled in two minutes")
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// report checks that every change was handled, each order's in order, and
// prints who handled how many and how many twice (those the killed owner
// handled after its last checkpoint).
func report(p func(string, ...any), log *Log, owner string) error {
	repeats, err := log.check()
	if err != nil {
		return err
	}
	p("\n3. every change handled: %d orders × %d steps, each order's in order", orders, steps)
	log.mu.Lock()
	defer log.mu.Unlock()
	names := make([]string, 0, len(log.byWorker))
	for w := range log.byWorker {
		names = append(names, w)
	}
	sort.Strings(names)
	for _, w := range names {
		p("   %-5s handled %d", w, log.byWorker[w])
	}
	p("   %d handled twice: those %s handled after its last checkpoint (delivery is at least once)", repeats, owner)
	p("   c0/o0: %v", log.steps["c0/o0"])
	return nil
}

// shardOwner returns the owner of the stream's open shard, "" when none.
func shardOwner(ctx context.Context, store stream.LeaseStore, table *singletable.Table) (string, error) {
	arn, err := streamARN(ctx, table)
	if err != nil {
		return "", err
	}
	ls, err := store.Leases(ctx, arn)
	if err != nil {
		return "", err
	}
	for _, l := range ls {
		if !l.Finished && l.Owner != "" {
			return l.Owner, nil
		}
	}
	return "", nil
}

// streamARN returns the table's stream ARN (DescribeTable): the group of its
// leases.
func streamARN(ctx context.Context, table *singletable.Table) (string, error) {
	out, err := table.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table.Name())})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Table.LatestStreamArn), nil
}

func (l *Log) handledBy(w string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byWorker[w]
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
