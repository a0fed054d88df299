package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/singletable/singletable"
)

// Order is one order of a customer. Its status moves through lifecycle, one
// step at a time; Step counts the changes, so that a change seen twice (the
// stream delivers at least once) is recognised.
type Order struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status"`
	Step       int       `dynamodbav:"step"`
	UpdatedAt  time.Time `dynamodbav:"updatedAt"`
}

// ID names the order for messages: "c01/o02".
func (o Order) ID() string { return o.CustomerID + "/" + o.OrderID }

// lifecycle is the order of statuses; RETURNED may follow DELIVERED.
var lifecycle = []string{"PLACED", "PAID", "PACKED", "SHIPPED", "DELIVERED", "RETURNED"}

// Fulfilment is what the stream keeps up to date: a downstream system that
// must see each order's statuses in order (it cannot pack an order that is not
// paid), and that takes a few milliseconds per change. It is safe for
// concurrent use: the stream consumer calls Handle from many goroutines, never
// for two changes of one order at once.
type Fulfilment struct {
	work time.Duration // how long one change takes downstream

	mu         sync.Mutex          // protects the fields below
	applied    map[string][]string // by order id, the statuses applied, in order
	steps      map[string]int      // by order id, the last step applied
	violations []string            // changes that came out of order
	handled    int                 // changes handled, repeats included
	repeats    int                 // changes seen before, skipped
	order      []string            // "order status" of every change applied, in the order applied

	active, maxActive atomic.Int32 // changes being handled now, and the most at once
	completed         int          // changes finished: applied or skipped as repeats
}

// NewFulfilment returns an empty Fulfilment whose changes each take work.
func NewFulfilment(work time.Duration) *Fulfilment {
	return &Fulfilment{work: work, applied: map[string][]string{}, steps: map[string]int{}}
}

// Handle applies one stream record: the new status of an order. It is
// idempotent: a record whose step was applied already is skipped.
func (f *Fulfilment) Handle(ctx context.Context, rec singletable.StreamRecord) error {
	before, after, ok := singletable.Images[Order](rec)
	if !ok || rec.Event == singletable.StreamRemove {
		return nil // not an order, or a deleted one
	}
	n := f.active.Add(1)
	defer f.active.Add(-1)
	for m := f.maxActive.Load(); n > m && !f.maxActive.CompareAndSwap(m, n); m = f.maxActive.Load() {
	}

	f.mu.Lock()
	last, seen := f.steps[after.ID()]
	f.handled++
	if seen && after.Step <= last {
		f.repeats++
		f.completed++
		f.mu.Unlock()
		return nil
	}
	want := 0
	if seen {
		want = last + 1
	}
	if after.Step != want || after.Status != lifecycle[after.Step] || (rec.Event == singletable.StreamModify && before.Step != after.Step-1) {
		f.violations = append(f.violations, fmt.Sprintf("%s: %s (step %d) after step %d", after.ID(), after.Status, after.Step, last))
	}
	f.mu.Unlock()

	select { // the downstream call
	case <-time.After(f.work):
	case <-ctx.Done():
		return ctx.Err() // not applied: the record comes again on the next run
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps[after.ID()] = after.Step
	f.completed++
	f.applied[after.ID()] = append(f.applied[after.ID()], after.Status)
	f.order = append(f.order, after.ID()+" "+after.Status)
	return nil
}

// Applied returns the first n changes applied, across orders, as "order status".
func (f *Fulfilment) Applied(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order[:min(n, len(f.order))])
}

// Repeats returns how many changes were seen before and skipped.
func (f *Fulfilment) Repeats() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.repeats
}

// Handled returns how many changes Handle has been given, repeats included.
func (f *Fulfilment) Handled() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handled
}

// Completed returns how many changes Handle has finished: applied, or skipped as
// repeats. A change being handled (or cut short by a stop) is not counted.
func (f *Fulfilment) Completed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.completed
}

// Timeline returns the statuses applied to an order: "PLACED → PAID → ...".
func (f *Fulfilment) Timeline(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.applied[id], " → ")
}

// Check returns an error naming the changes that came out of order, or the
// orders whose statuses are not exactly the first n of lifecycle.
func (f *Fulfilment) Check(ids []string, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.violations) > 0 {
		return fmt.Errorf("changes out of order: %s", strings.Join(f.violations, "; "))
	}
	for _, id := range ids {
		if got := f.applied[id]; !slices.Equal(got, lifecycle[:n]) {
			return fmt.Errorf("order %s went through %v, want %v", id, got, lifecycle[:n])
		}
	}
	return nil
}
