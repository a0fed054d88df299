// Command tickets keeps support tickets in a native (multi-attribute) index: the
// index is keyed by the tickets' own attributes, tenant and status as its
// partition, priority and opening time (numbers) as its sort, so no synthetic
// "TENANT#acme#STATUS#open" key is rendered, nothing is recomputed when a
// ticket's status changes, and priorities sort as numbers without padding.
//
// Run it with
//
//	go run ./examples/tickets
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
	"os"
	"time"

	"github.com/singletable/singletable"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "tickets:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on a
// table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("tickets", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// The index: partition tenant + status, sort priority then opened.
const byTenantStatus = "ByTenantStatus"

// Ticket is a support ticket. A draft has no status yet (omitempty leaves the
// attribute out), so it is not in the index: native membership is sparse.
type Ticket struct {
	_        struct{}  `Type:"Ticket" PK:"TICKET#{ticketId}" SK:"TICKET"`
	TicketID string    `dynamodbav:"ticketId"`
	Tenant   string    `dynamodbav:"tenant"`
	Status   string    `dynamodbav:"status,omitempty"`
	Priority int       `dynamodbav:"priority"`
	Opened   time.Time `dynamodbav:"opened,unixtime"`
	Title    string    `dynamodbav:"title"`
}

// NewTable declares the table and its native index and registers Ticket. It
// sends nothing.
func NewTable(client singletable.Client, name string) (*singletable.Table, *singletable.Entity[Ticket], error) {
	table, err := singletable.NewTable(client, name,
		singletable.WithNativeIndex(byTenantStatus, singletable.NativeKey{
			Partition: []singletable.KeyAttribute{singletable.S("tenant"), singletable.S("status")},
			Sort:      []singletable.KeyAttribute{singletable.N("priority"), singletable.N("opened")},
		}))
	if err != nil {
		return nil, nil, err
	}
	tickets, err := singletable.Register[Ticket](table)
	if err != nil {
		return nil, nil, err
	}
	return table, tickets, nil
}

// t0 dates the sample tickets, so that the output is the same on every run.
var t0 = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

func sampleTickets() []Ticket {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	return []Ticket{
		{TicketID: "t1", Tenant: "acme", Status: "open", Priority: 2, Opened: at(0), Title: "invoice shows the wrong VAT"},
		{TicketID: "t2", Tenant: "acme", Status: "open", Priority: 1, Opened: at(1), Title: "checkout is down"},
		{TicketID: "t3", Tenant: "acme", Status: "open", Priority: 10, Opened: at(2), Title: "typo on the pricing page"},
		{TicketID: "t4", Tenant: "acme", Status: "open", Priority: 1, Opened: at(3), Title: "login fails for SSO users"},
		{TicketID: "t5", Tenant: "acme", Status: "closed", Priority: 1, Opened: at(4), Title: "password reset mail missing"},
		{TicketID: "t6", Tenant: "globex", Status: "open", Priority: 1, Opened: at(5), Title: "export times out"},
		{TicketID: "t7", Tenant: "acme", Priority: 3, Opened: at(6), Title: "draft: dark mode"}, // no status: a draft
	}
}

// run creates a table named tableName, runs the access patterns on it, printing
// each step to out, and deletes the table.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	table, tickets, err := NewTable(client, tableName)
	if err != nil {
		return err
	}
	if err := table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s with the native index %s: HASH tenant S, status S; RANGE priority N, opened N", tableName, byTenantStatus)

	for _, tk := range sampleTickets() {
		if _, err := tickets.Put(ctx, tk); err != nil {
			return err
		}
	}
	p("\n1. Put %d tickets: no index key is rendered; the item stores tenant, status, priority, opened", len(sampleTickets()))

	show := func(title string, key Ticket, opts ...singletable.QueryOption) error {
		p("\n%s", title)
		for tk, err := range tickets.All(ctx, key, append([]singletable.QueryOption{singletable.On(byTenantStatus)}, opts...)...) {
			if err != nil {
				return err
			}
			p("   %s  P%-2d %s  %s", tk.TicketID, tk.Priority, tk.Opened.Format("15:04"), tk.Title)
		}
		return nil
	}
	if err := show("2. acme's open tickets: tenant = acme AND status = open (priority as a number: 10 after 2; the draft t7 is not in the index)",
		Ticket{Tenant: "acme", Status: "open"}); err != nil {
		return err
	}
	if err := show("3. acme's open P1 tickets, oldest first: ... AND priority = 1 (a partial sort key from the filled fields)",
		Ticket{Tenant: "acme", Status: "open", Priority: 1}); err != nil {
		return err
	}
	if err := show("4. acme's open tickets of priority 2 or more, highest number first: ... AND priority >= 2, descending",
		Ticket{Tenant: "acme", Status: "open"}, singletable.SK[Ticket]().GreaterThanEqual(Ticket{Priority: 2}), singletable.Descending()); err != nil {
		return err
	}

	// 5. Closing a ticket moves it between partitions of the index: one
	// UpdateItem of the status, nothing recomputed.
	if _, err := tickets.Update(ctx, Ticket{TicketID: "t2"}, singletable.Set("status", "closed")); err != nil {
		return err
	}
	if err := show("5. Close t2 (Update status): acme's closed tickets now", Ticket{Tenant: "acme", Status: "closed"}); err != nil {
		return err
	}

	// 6. A query that breaks DynamoDB's rules is refused before sending.
	p("\n6. A query without the status (a partition attribute) is refused before sending:")
	_, err = tickets.Query(ctx, Ticket{Tenant: "acme"}, singletable.On(byTenantStatus))
	if !errors.Is(err, singletable.ErrInvalidInput) {
		return fmt.Errorf("query without status: want ErrInvalidInput, got %v", err)
	}
	p("   %v", err)

	// 7. A status that is an empty string (not left out) could not be indexed:
	// DynamoDB would refuse the write, so the library refuses it first.
	p("\n7. A ticket whose tenant is \"\" is refused before sending, naming the field:")
	_, err = tickets.Put(ctx, Ticket{TicketID: "t8", Tenant: "", Status: "open", Priority: 1, Opened: t0, Title: "no tenant"})
	var verr *singletable.ValidationError
	if !errors.As(err, &verr) || verr.Field != "Tenant" {
		return fmt.Errorf("put with an empty tenant: want a ValidationError naming Tenant, got %v", err)
	}
	p("   %v", err)
	return nil
}
