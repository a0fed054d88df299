// Command commerce is the commerce model of a single-table design: customer
// profiles, orders and their line items in one DynamoDB table, with three global
// secondary indexes for a customer's timeline, the global status feed and the
// customer + status feed. Orders are versioned, and each status change is one
// transaction that also appends an immutable row to the order's status
// history; a writer holding a stale version is refused. It runs every read and
// write pattern of the model once and prints what each did. The key map is in
// model.go, one method per access pattern in store.go.
//
// Run it with
//
//	go run ./examples/commerce
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own and deletes it when done.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

func main() {
	describe := flag.Bool("describe", false, "print the table design (Table.Describe) as Markdown and exit, without DynamoDB Local")
	flag.Parse()
	if *describe {
		s, err := NewStore(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "commerce")
		if err != nil {
			fmt.Fprintln(os.Stderr, "commerce:", err)
			os.Exit(1)
		}
		fmt.Print(s.Table.Describe().Markdown())
		return
	}
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "commerce:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("commerce", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// t0 is the time of the first sample order; the sample data is fixed so that the
// output is the same on every run.
var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// sampleCustomers are the customers the example creates.
func sampleCustomers() []Customer {
	return []Customer{
		{CustomerID: "ann", Name: "Ann Lee", Email: "ann@example.com"},
		{CustomerID: "bob", Name: "Bob Ray", Email: "bob@example.com"},
	}
}

// sampleOrder is an order with its line items, before it is placed.
type sampleOrder struct {
	Order Order
	Items []OrderItem
}

// sampleOrders are the orders the example places: five of Ann's, one a day from
// 1 May, and two of Bob's, one of them between Ann's o2 and o3.
func sampleOrders() []sampleOrder {
	day := func(d, hour int) time.Time { return t0.AddDate(0, 0, d-1).Add(time.Duration(hour-9) * time.Hour) }
	item := func(sku string, qty int, cents int64) OrderItem {
		return OrderItem{SKU: sku, Quantity: qty, PriceCents: cents}
	}
	return []sampleOrder{
		{Order{OrderID: "o1", CustomerID: "ann", Status: StatusDelivered, CreatedAt: day(1, 9)},
			[]OrderItem{item("book", 1, 3900)}},
		{Order{OrderID: "o2", CustomerID: "ann", Status: StatusShipped, CreatedAt: day(2, 9)},
			[]OrderItem{item("mug", 2, 1250), item("tea", 1, 800)}},
		{Order{OrderID: "o6", CustomerID: "bob", Status: StatusShipped, CreatedAt: day(2, 15)},
			[]OrderItem{item("kettle", 1, 4200)}},
		{Order{OrderID: "o3", CustomerID: "ann", Status: StatusShipped, CreatedAt: day(3, 9)},
			[]OrderItem{item("lamp", 1, 4500)}},
		{Order{OrderID: "o4", CustomerID: "ann", Status: StatusPlaced, CreatedAt: day(4, 9)},
			[]OrderItem{item("desk", 1, 25000), item("chair", 1, 18000)}},
		{Order{OrderID: "o5", CustomerID: "ann", Status: StatusPlaced, CreatedAt: day(5, 9)},
			[]OrderItem{item("pen", 10, 120), item("notebook", 3, 450), item("ink", 2, 600)}},
		{Order{OrderID: "o7", CustomerID: "bob", Status: StatusPlaced, CreatedAt: day(6, 9)},
			[]OrderItem{item("socks", 3, 500)}},
	}
}

// seed creates the sample customers and places the sample orders.
func seed(ctx context.Context, s *Store) error {
	for _, c := range sampleCustomers() {
		if _, err := s.CreateCustomer(ctx, c); err != nil {
			return err
		}
	}
	for _, so := range sampleOrders() {
		if _, err := s.PlaceOrder(ctx, so.Order, so.Items); err != nil {
			return err
		}
	}
	return nil
}

// run creates a table named tableName, runs every access pattern on it, printing
// each step to out, and deletes the table. It fails if a step goes wrong or shows
// something other than what the model promises.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	s, err := NewStore(client, tableName)
	if err != nil {
		return err
	}
	s.Now = clock(t0.AddDate(0, 0, 9), time.Hour) // status changes from 10 May, an hour apart
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, s.Table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s: PK/SK, GSI1 (customer timeline), GSI2 (status feed), GSI3 (customer + status feed)", tableName)

	if err := createCustomers(ctx, s, p); err != nil { // 1
		return err
	}
	if err := placeOrders(ctx, s, p); err != nil { // 2
		return err
	}
	if err := pointReads(ctx, s, p); err != nil { // 3
		return err
	}
	if err := readOrder(ctx, s, p); err != nil { // 4 and 5
		return err
	}
	if err := timeline(ctx, s, p); err != nil { // 6
		return err
	}
	p("\n7. Status feeds")
	if err := printFeeds(ctx, s, p, ""); err != nil {
		return err
	}
	if err := shipOneLine(ctx, s, p); err != nil { // 8
		return err
	}
	shipped, err := shipOrder(ctx, s, p) // 9
	if err != nil {
		return err
	}
	if err := deleteLine(ctx, s, p); err != nil { // 10
		return err
	}
	if err := createRolledBack(ctx, s, p); err != nil { // 11
		return err
	}
	return statusHistory(ctx, s, p, shipped) // 12
}

// createCustomers creates the sample customers, then Ann again: the second
// create is a success that changes nothing.
func createCustomers(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n1. Create customers (conditional PutItem: idempotent)")
	for _, c := range sampleCustomers() {
		created, err := s.CreateCustomer(ctx, c)
		if err != nil {
			return err
		}
		p("   %-4s created=%v", c.CustomerID, created)
	}
	retry := Customer{CustomerID: "ann", Name: "Ann L. (retried sign-up)", Email: "other@example.com"}
	created, err := s.CreateCustomer(ctx, retry)
	if err != nil {
		return err
	}
	ann, err := s.GetCustomer(ctx, "ann")
	if err != nil {
		return err
	}
	if created || ann.Name != "Ann Lee" {
		return fmt.Errorf("second create of ann: created=%v, profile now %+v", created, ann)
	}
	p("   ann again (a retried sign-up): already exists, treated as success; profile unchanged: %s <%s>", ann.Name, ann.Email)
	return nil
}

// placeOrders places the sample orders, each with its line items.
func placeOrders(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n2. Place orders: each order and its line items in one transaction")
	for _, so := range sampleOrders() {
		agg, err := s.PlaceOrder(ctx, so.Order, so.Items)
		if err != nil {
			return err
		}
		o := agg.Order
		p("   %-3s %-4s %s  %-9s  %d item(s)  %s", o.OrderID, o.CustomerID, o.CreatedAt.Format("2006-01-02 15:04"), o.Status, len(agg.Items), money(agg.Total()))
	}
	return nil
}

// pointReads reads a customer, an order and a line item by their full primary
// keys, and an order that does not exist.
func pointReads(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n3. Point reads (GetItem on the full primary key)")
	bob, err := s.GetCustomer(ctx, "bob")
	if err != nil {
		return err
	}
	p("   customer bob:  %s <%s>", bob.Name, bob.Email)
	o5, err := s.GetOrder(ctx, "o5")
	if err != nil {
		return err
	}
	p("   order o5:      customer %s, %s, created %s", o5.CustomerID, o5.Status, o5.CreatedAt.Format(time.DateTime))
	it, err := s.GetItem(ctx, "o5", 2)
	if err != nil {
		return err
	}
	p("   item o5 #2:    %s x%d at %s, %s", it.SKU, it.Quantity, money(it.PriceCents), it.Status)
	if _, err := s.GetOrder(ctx, "o99"); !errors.Is(err, singletable.ErrNotFound) {
		return fmt.Errorf("get order o99: want ErrNotFound, got %v", err)
	}
	p("   order o99:     not found (errors.Is(err, singletable.ErrNotFound))")
	return nil
}

// readOrder reads o5's line items by prefix, then the whole order with its
// items in one Query.
func readOrder(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n4. Line items of o5: Query PK = ORDER#o5 AND begins_with(SK, \"ITEM#\")")
	items, err := s.OrderItems(ctx, "o5")
	if err != nil {
		return err
	}
	for _, it := range items {
		p("   #%d %-8s x%-2d %s", it.Line, it.SKU, it.Quantity, money(it.Subtotal()))
	}

	p("\n5. Order aggregate of o5 in one Query on PK = ORDER#o5")
	agg, err := s.OrderAggregate(ctx, "o5")
	if err != nil {
		return err
	}
	p("   order %s (%s) with lines %s, total %s", agg.Order.OrderID, agg.Order.Status, lines(agg.Items), money(agg.Total()))
	return nil
}

// timeline reads Ann's orders newest first, page by page.
func timeline(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n6. Ann's timeline, newest first, 3 per page (GSI1, sort key {createdAt:rev}, no Descending needed)")
	pages, err := collect(func(cursor string) (singletable.Page[Order], error) {
		return s.CustomerTimeline(ctx, "ann", 3, cursor)
	})
	if err != nil {
		return err
	}
	for i, pg := range pages {
		more := "cursor for the next page"
		if pg.Cursor == "" {
			more = "no cursor: the end"
		}
		p("   page %d: %-10s (%s)", i+1, orderIDs(pg.Items), more)
	}
	return nil
}

// shipOneLine ships o4's first line item on its own.
func shipOneLine(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n8. Partial fulfilment: o4 line 1 ships before line 2 (UpdateItem on one line item)")
	if _, err := s.ChangeItemStatus(ctx, "o4", 1, ItemShipped); err != nil {
		return err
	}
	o4items, err := s.OrderItems(ctx, "o4")
	if err != nil {
		return err
	}
	for _, it := range o4items {
		p("   o4 #%d %-6s %s", it.Line, it.SKU, it.Status)
	}
	return nil
}

// shipOrder ships o4, shows the feeds it moved in, and ships it again from
// the stale copy, which is refused. It returns the shipped order.
func shipOrder(ctx context.Context, s *Store, p func(string, ...any)) (Order, error) {
	p("\n9. Ship o4: PLACED -> SHIPPED in one transaction: update the order (status, version, GSI2 and GSI3 keys) if its version is unchanged, and append a history row")
	o4, err := s.GetOrder(ctx, "o4")
	if err != nil {
		return Order{}, err
	}
	shipped, err := s.ChangeOrderStatus(ctx, o4, StatusShipped)
	if err != nil {
		return Order{}, err
	}
	p("   o4 is now %s, version %d -> %d; history row ORDER_STATUS_EVT#o4#V#%08d", shipped.Status, o4.Version, shipped.Version, o4.Version)
	// Indexes are eventually consistent: on DynamoDB the move shows a moment
	// later (on DynamoDB Local at once). Wait for it before reading the feeds.
	reads := 0
	for _, index := range []string{indexByStatus, indexByCustomerStatus} {
		stats, err := s.Orders.WaitMoved(ctx, index, o4, shipped)
		if err != nil {
			return Order{}, err
		}
		reads += stats.Attempts
	}
	p("   waited until GSI2 and GSI3 show the move (WaitMoved: %d index reads)", reads)
	if err := printFeeds(ctx, s, p, "o4"); err != nil {
		return Order{}, err
	}
	_, err = s.ChangeOrderStatus(ctx, o4, StatusShipped)
	if !errors.Is(err, singletable.ErrConflict) {
		return Order{}, fmt.Errorf("second transition of o4 from version %d: want ErrConflict, got %v", o4.Version, err)
	}
	p("   shipping o4 again from the stale copy (version %d): refused (errors.Is(err, singletable.ErrConflict)), nothing written:", o4.Version)
	printReasons(p, err)
	return shipped, nil
}

// deleteLine deletes o5's second line item.
func deleteLine(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n10. Delete o5 line 2 (DeleteItem)")
	if err := s.DeleteItem(ctx, "o5", 2); err != nil {
		return err
	}
	agg, err := s.OrderAggregate(ctx, "o5")
	if err != nil {
		return err
	}
	p("   o5 now has lines %s, total %s", lines(agg.Items), money(agg.Total()))
	return nil
}

// createRolledBack places an order whose id is taken: the transaction is
// cancelled, and neither the order nor its items are visible afterwards.
func createRolledBack(ctx context.Context, s *Store, p func(string, ...any)) error {
	p("\n11. Atomic create that rolls back: Bob submits order o3, an id Ann's order already has, with 2 items")
	before, err := s.OrderAggregate(ctx, "o3")
	if err != nil {
		return err
	}
	bobBefore, err := s.CustomerTimeline(ctx, "bob", 10, "")
	if err != nil {
		return err
	}
	_, err = s.PlaceOrder(ctx,
		Order{OrderID: "o3", CustomerID: "bob", CreatedAt: t0.AddDate(0, 0, 6)},
		[]OrderItem{{SKU: "hat", Quantity: 1, PriceCents: 2000}, {SKU: "scarf", Quantity: 1, PriceCents: 3000}})
	var txErr *singletable.TxError
	if !errors.As(err, &txErr) || !errors.Is(err, singletable.ErrAlreadyExists) {
		return fmt.Errorf("placing a second o3: want a cancelled transaction, got %v", err)
	}
	p("   transaction cancelled, nothing written:")
	for _, r := range txErr.Reasons {
		p("     action %d (%s %s PK=%s SK=%s): %s", r.Index, r.Op, r.Entity, r.Key["PK"], r.Key["SK"], r.Code)
	}
	after, err := s.OrderAggregate(ctx, "o3")
	if err != nil {
		return err
	}
	bobAfter, err := s.CustomerTimeline(ctx, "bob", 10, "")
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(before, after) || !reflect.DeepEqual(bobBefore.Items, bobAfter.Items) {
		return fmt.Errorf("the failed transaction left rows: o3 %+v -> %+v, bob's orders %s -> %s",
			before, after, orderIDs(bobBefore.Items), orderIDs(bobAfter.Items))
	}
	p("   nothing of it is visible: o3 is still %s's with lines %s; Bob's timeline is still %s",
		after.Order.CustomerID, lines(after.Items), orderIDs(bobAfter.Items))
	return nil
}

// statusHistory delivers the shipped o4, lets two clerks change it from the
// same version (the second is refused), and lists its status history.
func statusHistory(ctx context.Context, s *Store, p func(string, ...any), shipped Order) error {
	p("\n12. Status history of o4 (reference 002): deliver it, then list its history newest first")
	delivered, err := s.ChangeOrderStatus(ctx, shipped, StatusDelivered)
	if err != nil {
		return err
	}
	p("   o4 is now %s, version %d", delivered.Status, delivered.Version)
	// Two clerks read o4 at the same version; the first to write wins.
	clerk1, err := s.GetOrder(ctx, "o4")
	if err != nil {
		return err
	}
	clerk2 := clerk1
	returned, err := s.ChangeOrderStatus(ctx, clerk1, StatusReturned)
	if err != nil {
		return err
	}
	p("   clerk 1 marks o4 %s (from version %d): done, version %d", returned.Status, clerk1.Version, returned.Version)
	_, err = s.ChangeOrderStatus(ctx, clerk2, StatusCancelled)
	var txErr *singletable.TxError
	if !errors.Is(err, singletable.ErrConflict) || !errors.As(err, &txErr) {
		return fmt.Errorf("clerk 2's stale write: want a TxError matching ErrConflict, got %v", err)
	}
	p("   clerk 2 cancels o4 from the same version %d: refused (errors.Is(err, singletable.ErrConflict)):", clerk2.Version)
	printReasons(p, err)
	history, err := s.OrderHistory(ctx, "o4")
	if err != nil {
		return err
	}
	p("   history, newest first: Query PK = ORDER#o4 AND begins_with(SK, \"ORDER_STATUS_EVT#o4#V#\"), ScanIndexForward=false")
	for _, e := range history {
		p("     V#%08d  %-9s -> %-9s  %s", e.OrderVersion, e.From, e.To, e.At.Format("2006-01-02 15:04"))
	}
	if len(history) != 3 || history[0].To != StatusReturned {
		return fmt.Errorf("o4's history after 3 changes and a refused one: %+v", history)
	}
	return nil
}

// printReasons prints why each action of a cancelled transaction failed, and
// for a failed version condition the versions held and found.
func printReasons(p func(string, ...any), err error) {
	var txErr *singletable.TxError
	if !errors.As(err, &txErr) {
		p("     %v", err)
		return
	}
	for _, r := range txErr.Reasons {
		why := r.Code
		if c := r.Conflict; c != nil {
			why += fmt.Sprintf(": version conflict, expected %d, found %d", c.Expected, c.Current)
		}
		p("     action %d (%s %s SK=%s): %s", r.Index, r.Op, r.Entity, r.Key["SK"], why)
	}
}

// clock returns a clock that reads start, then start+step, start+2·step... It
// is safe for concurrent use.
func clock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex // protects next
	next := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(step)
		return t
	}
}

// printFeeds prints the status feeds that the shipping of an order changes,
// marking moved, the order that moved, where it joined or left.
func printFeeds(ctx context.Context, s *Store, p func(string, ...any), moved string) error {
	feeds := []struct {
		title    string
		customer string
		status   OrderStatus
	}{
		{"SHIPPED, every customer, oldest first (GSI2)", "", StatusShipped},
		{"ann + PLACED, newest first (GSI3)", "ann", StatusPlaced},
		{"ann + SHIPPED, newest first (GSI3)", "ann", StatusShipped},
	}
	for _, f := range feeds {
		pages, err := collect(func(cursor string) (singletable.Page[Order], error) {
			if f.customer == "" {
				return s.OrdersByStatus(ctx, f.status, 25, cursor)
			}
			return s.CustomerOrdersByStatus(ctx, f.customer, f.status, 25, cursor)
		})
		if err != nil {
			return err
		}
		var all []Order
		for _, pg := range pages {
			all = append(all, pg.Items...)
		}
		note := ""
		if moved != "" {
			note = "   (" + moved + " left)"
			for _, o := range all {
				if o.OrderID == moved {
					note = "   (" + moved + " joined)"
				}
			}
		}
		p("   %-47s %s%s", f.title+":", orderIDs(all), note)
	}
	return nil
}

// collect reads every page of a paged query, following the cursors.
func collect[T any](page func(cursor string) (singletable.Page[T], error)) ([]singletable.Page[T], error) {
	var pages []singletable.Page[T]
	cursor := ""
	for {
		pg, err := page(cursor)
		if err != nil {
			return nil, err
		}
		pages = append(pages, pg)
		if pg.Cursor == "" {
			return pages, nil
		}
		cursor = pg.Cursor
	}
}

func orderIDs(orders []Order) string {
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.OrderID
	}
	return strings.Join(ids, " ")
}

func lines(items []OrderItem) string {
	ls := make([]string, len(items))
	for i, it := range items {
		ls[i] = fmt.Sprintf("%d (%s)", it.Line, it.SKU)
	}
	return strings.Join(ls, ", ")
}
