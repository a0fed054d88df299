// Command customer-orders is the item collection of reference 001: a
// customer's "A record" and their orders share the partition
// CUSTOMER#{customerId}, and the orders' sort keys start with '#' so that they
// sort before the A record. It runs the four access patterns of the model and
// prints, for each, what it read, how many requests it took and the read
// capacity DynamoDB reported:
//
//  1. a customer by id (GetItem);
//  2. a customer and all their orders (one Query, decoded by type);
//  3. a customer and their N most recent orders (one Query, read backwards,
//     Limit N+1);
//  4. the orders alone (one Query on the sort key prefix "#ORDER#").
//
// The key map is in model.go, one method per access pattern in store.go.
//
// Run it with
//
//	go run ./examples/customer-orders
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own and deletes it when done.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/singletable/singletable"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "customer-orders:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("customer-orders", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// recent is the N of "the customer and their N most recent orders".
const recent = 3

// sampleCustomers are the customers the example creates; the sample data is
// fixed so that the output is the same on every run.
func sampleCustomers() []Customer {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	return []Customer{
		{CustomerID: "ann", Name: "Ann Lee", Email: "ann@example.com", Since: day(2021, time.November, 2)},
		{CustomerID: "bob", Name: "Bob Ray", Email: "bob@example.com", Since: day(2023, time.March, 1)},
		{CustomerID: "cy", Name: "Cy Moss", Email: "cy@example.com", Since: day(2024, time.January, 9)},
	}
}

// catalogue is what the sample orders are made of.
var catalogue = []Line{
	{SKU: "BK-0101", Title: "The DynamoDB Book", PriceCents: 3900},
	{SKU: "MG-0202", Title: "Stoneware mug, blue", PriceCents: 1250},
	{SKU: "TE-0303", Title: "Breakfast tea, 100 bags", PriceCents: 800},
	{SKU: "LP-0404", Title: "Desk lamp, brass", PriceCents: 4500},
	{SKU: "PN-0505", Title: "Fountain pen, medium nib", PriceCents: 2600},
	{SKU: "NB-0606", Title: "Notebook, dotted, A5", PriceCents: 450},
}

// sampleOrders are the orders the example places: ann's 24, one a month from
// January 2022 to December 2023 (the last one still PLACED, the one before
// SHIPPED, the rest DELIVERED); bob's 3, two of them in the same instant (a
// double submit), told apart by their ids; none for cy.
func sampleOrders() []Order {
	lines := func(i int) []Line {
		var ls []Line
		for k := range 2 + i%3 {
			l := catalogue[(i+k)%len(catalogue)]
			l.Quantity = 1 + (i+k)%3
			ls = append(ls, l)
		}
		return ls
	}
	var orders []Order
	for i := range 24 {
		status := "DELIVERED"
		switch i {
		case 22:
			status = "SHIPPED"
		case 23:
			status = "PLACED"
		}
		orders = append(orders, Order{
			CustomerID: "ann",
			OrderID:    fmt.Sprintf("o%d", 1001+i),
			PlacedAt:   time.Date(2022, time.January+time.Month(i), 5, 10, 0, 0, 0, time.UTC),
			Status:     status,
			ShipTo:     "Ann Lee, 12 Harbour Street, Flat 3, Leith, Edinburgh EH6 6QB, United Kingdom",
			Lines:      lines(i),
		})
	}
	bobAt := time.Date(2023, time.June, 1, 12, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{time.Date(2023, time.March, 14, 8, 30, 0, 0, time.UTC), bobAt, bobAt} {
		orders = append(orders, Order{
			CustomerID: "bob",
			OrderID:    fmt.Sprintf("o%d", 2001+i),
			PlacedAt:   at,
			Status:     "DELIVERED",
			ShipTo:     "Bob Ray, 4 Mill Lane, Hebden Bridge HX7 8AD, United Kingdom",
			Lines:      lines(i + 1),
		})
	}
	return orders
}

// seed creates the sample customers and places the sample orders.
func seed(ctx context.Context, s *Store) error {
	for _, c := range sampleCustomers() {
		if err := s.CreateCustomer(ctx, c); err != nil {
			return err
		}
	}
	for _, o := range sampleOrders() {
		if err := s.PlaceOrder(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// run creates a table named tableName, runs every access pattern on it, printing
// each step to out, and deletes the table. It fails if a step goes wrong or shows
// something other than what the model promises. The reads go through a meter,
// which counts them and adds up the capacity they consumed.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	m := newMeter(client)
	s, err := NewStore(m, tableName)
	if err != nil {
		return err
	}
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, s.Table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s: PK/SK, no indexes", tableName)

	if err := seed(ctx, s); err != nil {
		return err
	}
	perCustomer := map[string]int{}
	for _, o := range sampleOrders() {
		perCustomer[o.CustomerID]++
	}
	p("seeded %d customers and %d orders: ann %d, bob %d, cy %d", len(sampleCustomers()), len(sampleOrders()), perCustomer["ann"], perCustomer["bob"], perCustomer["cy"])
	first, last := sampleOrders()[0], sampleOrders()[perCustomer["ann"]-1]
	p("partition CUSTOMER#ann in sort key order: %s ... %s, then A ('#' sorts before 'A')", orderSK(first), orderSK(last))

	// 1. Customer by id.
	p("\n1. Customer by id: GetItem PK=CUSTOMER#ann SK=A (Entity.Get)")
	before := m.Snapshot()
	ann, err := s.GetCustomer(ctx, "ann")
	if err != nil {
		return err
	}
	p("   %s: %s <%s>, customer since %s", ann.CustomerID, ann.Name, ann.Email, ann.Since.Format(time.DateOnly))
	p("   cost: %s", cost(m.Snapshot().Sub(before), "meter: Entity.Get takes no ReturnCapacity"))
	if _, err := s.GetCustomer(ctx, "zoe"); !errors.Is(err, singletable.ErrNotFound) {
		return fmt.Errorf("get customer zoe: want ErrNotFound, got %v", err)
	}
	p("   zoe: not found (errors.Is(err, singletable.ErrNotFound))")

	// 2. Customer and all orders.
	p("\n2. Customer and all orders: one Query PK=CUSTOMER#ann, rows decoded by Type into CustomerOrders (Collection.Load)")
	before = m.Snapshot()
	all, err := s.CustomerWithOrders(ctx, "ann")
	if err != nil {
		return err
	}
	used := m.Snapshot().Sub(before)
	var total int64
	for _, o := range all.Orders {
		total += o.TotalCents()
	}
	p("   %s: %s, %d orders, oldest first: %s, together %s", all.Customer.CustomerID, all.Customer.Name, len(all.Orders), span(all.Orders), money(total))
	p("   cost: %s", cost(used, "meter: Collection.Load returns no capacity"))
	if len(all.Orders) != perCustomer["ann"] || used.Requests["Query"] != 1 {
		return fmt.Errorf("ann's collection: %d orders in %d queries, want %d in 1", len(all.Orders), used.Requests["Query"], perCustomer["ann"])
	}

	// 3. Customer and the N most recent orders.
	p("\n3. Customer and the %d most recent orders in one request: Query PK=CUSTOMER#ann, ScanIndexForward=false, Limit=%d (Collection.Query)", recent, recent+1)
	before = m.Snapshot()
	page, err := s.CustomerWithRecentOrders(ctx, "ann", recent)
	if err != nil {
		return err
	}
	used = m.Snapshot().Sub(before)
	p("   %s: %s", page.Value.Customer.CustomerID, page.Value.Customer.Name)
	for _, o := range page.Value.Orders {
		p("     %s  %s  %-9s  %d lines  %s", o.OrderID, o.PlacedAt.Format(time.DateOnly), o.Status, len(o.Lines), money(o.TotalCents()))
	}
	if err := agree(page.Capacity, used); err != nil {
		return err
	}
	p("   cost: %s", cost(used, "CollectionPage.Capacity; the meter agrees"))
	older, err := s.OlderOrders(ctx, "ann", recent, page.Cursor)
	if err != nil {
		return err
	}
	p("   the next %d (the same Query resumed after the page's cursor): %s", recent, orderIDs(older.Value.Orders))
	for _, id := range []string{"bob", "cy"} {
		pg, err := s.CustomerWithRecentOrders(ctx, id, recent)
		if err != nil {
			return err
		}
		orders := orderIDs(pg.Value.Orders)
		if orders == "" {
			orders = "no orders"
		}
		p("   %s: %s; %s", id, pg.Value.Customer.Name, orders)
	}

	// 4. Only the orders.
	p("\n4. Only the orders: Query PK=CUSTOMER#ann AND begins_with(SK, \"#ORDER#\") (Entity.Query)")
	before = m.Snapshot()
	orders, err := s.OrdersOf(ctx, "ann", 100, "")
	if err != nil {
		return err
	}
	used = m.Snapshot().Sub(before)
	p("   %d orders, oldest first: %s; items read: %d (the A record is outside the key condition)", len(orders.Items), span(orders.Items), orders.Scanned)
	if err := agree(orders.Capacity, used); err != nil {
		return err
	}
	p("   cost: %s", cost(used, "Page.Capacity; the meter agrees"))
	return nil
}

// orderSK is the sort key of an order, as the table holds it.
func orderSK(o Order) string {
	return "#ORDER#" + o.PlacedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + o.OrderID
}

// cost describes what a pattern used: its requests and the capacity reported,
// and where the number comes from.
func cost(u usage, source string) string {
	var reqs []string
	n := 0
	for _, op := range slices.Sorted(maps.Keys(u.Requests)) {
		reqs = append(reqs, op)
		n += u.Requests[op]
	}
	s := fmt.Sprintf("%d request", n)
	if n != 1 {
		s += "s"
	}
	s += " (" + strings.Join(reqs, ", ") + "), "
	if u.Reports == 0 {
		return s + "no consumed capacity reported by this DynamoDB"
	}
	return s + fmt.Sprintf("%.1f RCU (%s)", u.Capacity, source)
}

// agree checks that the capacity the library reported is what the meter saw.
func agree(reported float64, u usage) error {
	if u.Reports > 0 && reported != u.Capacity {
		return fmt.Errorf("the page reports %.1f RCU, the meter saw %.1f", reported, u.Capacity)
	}
	return nil
}

// span names the first and last of a list of orders.
func span(orders []Order) string {
	switch len(orders) {
	case 0:
		return "none"
	case 1:
		return orders[0].OrderID
	}
	f, l := orders[0], orders[len(orders)-1]
	return fmt.Sprintf("%s (%s) ... %s (%s)", f.OrderID, f.PlacedAt.Format(time.DateOnly), l.OrderID, l.PlacedAt.Format(time.DateOnly))
}

func orderIDs(orders []Order) string {
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.OrderID
	}
	return strings.Join(ids, " ")
}
