// Command stream processes a table's DynamoDB Stream in order per item and
// concurrently across items: forty orders move through PLACED, PAID, PACKED,
// SHIPPED and DELIVERED, written by forty goroutines at once, and a consumer
// feeds every status change to a slow downstream system (Fulfilment, in
// fulfilment.go) that must see each order's changes in order. The consumer
// runs the changes of one order one after another and those of different
// orders side by side, checkpoints each shard as records are handled, and,
// stopped and started again, resumes from its checkpoints.
//
// Run it with
//
//	go run ./examples/stream
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own, with a stream, and deletes it when done.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/stream"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg) and dynamodbstreams.NewFromConfig(cfg).
func start() error {
	return runLocal("stream", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), localStreamsClient(endpoint), tableName, os.Stdout)
	})
}

const (
	customers, ordersPerCustomer = 10, 4
	concurrency                  = 8                    // handlers at once
	work                         = 5 * time.Millisecond // per change, downstream
)

// sampleOrders are forty orders: c01/o1 ... c10/o4.
func sampleOrders() []Order {
	var orders []Order
	for c := 1; c <= customers; c++ {
		for o := 1; o <= ordersPerCustomer; o++ {
			orders = append(orders, Order{CustomerID: fmt.Sprintf("c%02d", c), OrderID: fmt.Sprintf("o%d", o)})
		}
	}
	return orders
}

// run creates a table named tableName with a stream, writes the orders'
// status changes while a consumer handles them, restarts the consumer, prints
// each step to out, and deletes the table. It fails if a change was handled
// out of order or a step goes wrong.
func run(ctx context.Context, client singletable.Client, streams stream.Client, tableName string, out io.Writer) (err error) {
	table, err := singletable.NewTable(client, tableName)
	if err != nil {
		return err
	}
	orders, err := singletable.Register[Order](table)
	if err != nil {
		return err
	}
	if err := table.CreateTable(ctx, singletable.EnableStream()); err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := table.DeleteTable(ctx); derr != nil {
			err = errors.Join(err, derr)
			return
		}
		fmt.Fprintf(out, "\ndeleted table %s\n", tableName)
	}()
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s with a stream (NEW_AND_OLD_IMAGES)", tableName)

	sample := sampleOrders()
	ids := make([]string, len(sample))
	for i, o := range sample {
		ids[i] = o.ID()
	}
	// Leases and checkpoints live in the store: the restarted consumer resumes
	// where the first one stopped (a TableStore keeps them in DynamoDB, for a fleet).
	store := &stream.MemoryStore{}
	store.RecordHistory()
	options := []stream.Option{
		stream.Leases(store),
		stream.Worker("fulfilment"),
		stream.CheckpointEvery(100 * time.Millisecond),
		stream.Polling(20*time.Millisecond, 200*time.Millisecond),
		stream.Rails(singletable.RailroadOptions{Concurrency: concurrency}),
	}

	// 1. Orders change status while the consumer runs.
	steps := 5 // PLACED ... DELIVERED
	p("\n1. %d orders go through %d statuses each, written by %d goroutines at once; a consumer feeds every change to Fulfilment (%s each, %d at once)",
		len(sample), steps, len(sample), work, concurrency)
	f := NewFulfilment(work)
	c := startConsumer(ctx, table, streams, f, options)
	if err := writeSteps(ctx, orders, sample, 0, steps); err != nil {
		return errors.Join(err, c.stop())
	}
	if err := waitFor(ctx, f, len(sample)*steps, c); err != nil {
		return err
	}
	if err := c.stop(); err != nil {
		return err
	}
	if err := f.Check(ids, steps); err != nil {
		return err
	}
	if f.maxActive.Load() < 2 {
		return errors.New("no two orders were handled at once")
	}
	p("   handled %d changes: every order's in order, up to %d orders at once", f.Handled(), f.maxActive.Load())
	p("   the first changes applied, interleaved across orders: %s ...", strings.Join(f.Applied(6), ", "))
	for _, id := range []string{ids[0], ids[len(ids)-1]} {
		p("   %-6s %s", id, f.Timeline(id))
	}
	p("   consumer stopped; checkpoints saved for %d shard(s), each at its last record handled", checkpointed(store))

	// 2. More changes while no consumer runs; a new one resumes from the checkpoints.
	returned := sample[:customers]
	if err := writeSteps(ctx, orders, returned, steps, steps+1); err != nil {
		return err
	}
	p("\n2. While no consumer runs, %d orders are RETURNED; then a new consumer starts with the same checkpoints", len(returned))
	before := f.Completed()
	c = startConsumer(ctx, table, streams, f, options)
	if err := waitFor(ctx, f, before+len(returned), c); err != nil {
		return err
	}
	time.Sleep(200 * time.Millisecond) // would anything more come?
	if err := c.stop(); err != nil {
		return err
	}
	if n := f.Completed() - before; n != len(returned) {
		return fmt.Errorf("the second consumer handled %d changes, want the %d new ones", n, len(returned))
	}
	if err := f.Check(ids[:len(returned)], steps+1); err != nil {
		return err
	}
	p("   handled %d changes, only the new ones: it resumed after the checkpoint", f.Handled()-before)
	p("   %-6s %s", ids[0], f.Timeline(ids[0]))
	return nil
}

// writeSteps moves each order from step from to step to, one Put per step,
// each order in a goroutine of its own.
func writeSteps(ctx context.Context, orders *singletable.Entity[Order], sample []Order, from, to int) error {
	var wg sync.WaitGroup
	errs := make([]error, len(sample))
	for i, o := range sample {
		wg.Go(func() {
			for step := from; step < to; step++ {
				o.Step, o.Status, o.UpdatedAt = step, lifecycle[step], time.Now().UTC()
				if _, err := orders.Put(ctx, o); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// consumer is a stream.Consume running in a goroutine.
type consumer struct {
	cancel context.CancelFunc
	done   chan error
}

func startConsumer(ctx context.Context, table *singletable.Table, streams stream.Client, f *Fulfilment, opts []stream.Option) *consumer {
	ctx, cancel := context.WithCancel(ctx)
	c := &consumer{cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- stream.Consume(ctx, table, streams, f.Handle, opts...) }()
	return c
}

// stop stops the consumer and waits for it: its checkpoints are saved then.
func (c *consumer) stop() error {
	c.cancel()
	if err := <-c.done; !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// waitFor waits until f has finished handling n changes, the consumer fails, or a
// minute passes.
func waitFor(ctx context.Context, f *Fulfilment, n int, c *consumer) error {
	deadline := time.After(time.Minute)
	for f.Completed() < n {
		select {
		case err := <-c.done:
			return fmt.Errorf("the consumer stopped: %w", err)
		case <-deadline:
			return errors.Join(fmt.Errorf("%d changes handled in a minute, want %d", f.Handled(), n), c.stop())
		case <-ctx.Done():
			return errors.Join(ctx.Err(), c.stop())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// checkpointed counts the shards whose lease holds a checkpoint.
func checkpointed(store *stream.MemoryStore) int {
	shards := map[string]bool{}
	for _, l := range store.History() {
		if l.Checkpoint != "" {
			shards[l.Shard] = true
		}
	}
	return len(shards)
}
