package singletable_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/localtest"
)

// The examples of the calls people look up first. Each one but ExampleRegister
// runs against DynamoDB Local: `make test` starts one and exports
// AWS_ENDPOINT_URL; so does `go -C dynamolocal run ./cmd/dynamodb-local run
// -dir .. -- go test .`. Each example makes a table of its own with
// exampleTable (the set-up, written once here) and deletes it at the end.
//
// An example cannot skip itself as a test can, so when AWS_ENDPOINT_URL is not
// set the examples that need it are left out of the run with the -test.skip
// flag, and say so on standard error; under CI=true they run, and fail, as
// every test that finds no DynamoDB Local does (see internal/localtest).

// localExamples are the examples of this file that need DynamoDB Local.
var localExamples = []string{
	"ExampleEntity_Put",
	"ExampleEntity_Get",
	"ExampleEntity_Query",
	"ExampleEntity_Update",
	"ExampleEntity_Mutate",
	"ExampleTable_Transact",
	"ExampleCollection",
	"ExampleEntity_QueryShards",
	"ExampleMigrations",
	"ExampleEntity_WaitIndexed",
}

// init leaves localExamples out of the run when there is no DynamoDB Local to
// run them on (and CI is not true), unless -test.skip is given on the command
// line, which then wins.
func init() {
	if endpoint, _ := localtest.EndpointFrom(os.Getenv); endpoint != "" {
		return
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		return
	}
	testing.Init() // registers -test.skip; go test's own call to it then does nothing
	skip := flag.Lookup("test.skip")
	if skip == nil || skip.Value.String() != "" {
		return
	}
	if err := flag.Set("test.skip", localExamplesPattern()); err == nil {
		fmt.Fprintf(os.Stderr, "singletable_test: AWS_ENDPOINT_URL is not set: the %d Examples that need DynamoDB Local are skipped\n", len(localExamples))
	}
}

// localExamplesPattern matches the names of localExamples and nothing else.
func localExamplesPattern() string {
	quoted := make([]string, len(localExamples))
	for i, name := range localExamples {
		quoted[i] = regexp.QuoteMeta(name)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// TestLocalExamplesListed holds localExamples true: it names exactly the
// Example functions of this package that call exampleTable.
func TestLocalExamplesListed(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "singletable_test" {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "exampleTable" {
						uses = append(uses, fn.Name.Name)
						return false
					}
				}
				return true
			})
		}
	}
	slices.Sort(uses)
	uses = slices.Compact(uses)
	if listed := slices.Sorted(slices.Values(localExamples)); !slices.Equal(uses, listed) {
		t.Errorf("localExamples = %v, but the examples that call exampleTable are %v", listed, uses)
	}
}

// exampleTable returns a new table on the DynamoDB Local at AWS_ENDPOINT_URL,
// with the index GSI1 (GSI1PK, GSI1SK) and opts, created for one example, and
// the function that deletes it and closes the connections. On AWS the table
// would be singletable.NewTable(dynamodb.NewFromConfig(cfg), "app", ...).
func exampleTable(name string, opts ...singletable.TableOption) (*singletable.Table, func()) {
	ctx := context.Background()
	local, err := localtest.Open(ctx, nil)
	if err != nil {
		panic(err)
	}
	opts = append([]singletable.TableOption{singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK")}, opts...)
	table, err := singletable.NewTable(local.Client(), localtest.TableName(exampleName(name)), opts...)
	if err == nil {
		err = table.CreateTable(ctx)
	}
	if err != nil {
		_ = local.Close()
		panic(err)
	}
	return table, func() {
		table.Close() // stops the table's background work (async migration write-backs)
		if err := table.DeleteTable(ctx); err != nil {
			fmt.Println("delete table:", err)
		}
		_ = local.Close()
	}
}

// exampleName names a table after its example.
type exampleName string

func (n exampleName) Name() string { return string(n) }

// Order is the entity of most examples: a customer's order, with a status
// index (GSI1) that lists orders of a status newest first, and a version.
type Order struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:rev}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status,omitempty"`
	Total      int64     `dynamodbav:"total"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Version    int64     `dynamodbav:"version" singletable:"version"`
}

// Customer shares its partition with the customer's orders.
type Customer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
	Orders     int      `dynamodbav:"orders"`
}

// day is the first of May 2024 at hour h, UTC.
func day(d, h int) time.Time { return time.Date(2024, 5, d, h, 0, 0, 0, time.UTC) }

// Register checks an entity's tags once and binds its key templates; the
// entity then renders every key a write of a value stores. An index key with
// an empty input is left out: the item is not in that index.
func ExampleRegister() {
	table, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "app",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
	if err != nil {
		fmt.Println(err)
		return
	}
	orders, err := singletable.Register[Order](table) // sends nothing
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(orders.Type())

	placed := Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", CreatedAt: day(1, 9)}
	keys, _ := orders.Key(placed)
	for _, attr := range slices.Sorted(maps.Keys(keys)) {
		fmt.Printf("%s %s\n", attr, keys[attr])
	}
	draft := Order{CustomerID: "c1", OrderID: "o2"} // no status: not in GSI1
	keys, _ = orders.Key(draft)
	fmt.Println(slices.Sorted(maps.Keys(keys)))
	// Output:
	// Order
	// GSI1PK STATUS#PLACED
	// GSI1SK 2516877467999999999#o1
	// PK CUST#c1
	// SK ORDER#o1
	// [PK SK]
}

// Put writes a whole item (PutItem, or an UpdateItem for entities with fields
// it must keep). On a versioned entity it checks the version the value holds
// and stores the next: a Put from a stale copy fails with a *ConflictError.
func ExampleEntity_Put() {
	table, done := exampleTable("ExampleEntity_Put")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()

	stored, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", Total: 4200, CreatedAt: day(1, 9)})
	fmt.Println(stored.Version, err) // version 0: "no item yet"

	stored.Total = 3900
	again, err := orders.Put(ctx, stored)
	fmt.Println(again.Version, err)

	_, err = orders.Put(ctx, stored) // stored holds version 1; version 2 is stored
	var ce *singletable.ConflictError
	fmt.Println(errors.As(err, &ce), ce.Expected, ce.Current, errors.Is(err, singletable.ErrConflict))
	// Output:
	// 1 <nil>
	// 2 <nil>
	// true 1 2 true
}

// Get reads one item by its key: the key's inputs are enough. A missing item
// is ErrNotFound; Consistent makes it a strongly consistent read.
func ExampleEntity_Get() {
	table, done := exampleTable("ExampleEntity_Get")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()
	if _, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", Total: 4200, CreatedAt: day(1, 9)}); err != nil {
		fmt.Println(err)
		return
	}

	o, err := orders.Get(ctx, Order{CustomerID: "c1", OrderID: "o1"}, singletable.Consistent())
	fmt.Println(o.Status, o.Total, o.CreatedAt.Format(time.DateOnly), o.Version, err)

	_, err = orders.Get(ctx, Order{CustomerID: "c1", OrderID: "o9"})
	fmt.Println(errors.Is(err, singletable.ErrNotFound))
	// Output:
	// PLACED 4200 2024-05-01 1 <nil>
	// true
}

// Query reads a partition in sort key order, a page at a time: the key names
// the partition (and, partly filled, narrows the sort key); the cursor resumes
// after the page. On queries an index: here GSI1, whose reverse-time sort key
// lists the newest orders of a status first.
func ExampleEntity_Query() {
	table, done := exampleTable("ExampleEntity_Query")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()
	for i, status := range []string{"PLACED", "SHIPPED", "PLACED", "PLACED"} {
		o := Order{CustomerID: "c1", OrderID: fmt.Sprintf("o%d", i+1), Status: status, CreatedAt: day(i+1, 9)}
		if _, err := orders.Put(ctx, o); err != nil {
			fmt.Println(err)
			return
		}
	}

	// The customer's orders, two at a time.
	var cursor string
	for {
		page, err := orders.Query(ctx, Order{CustomerID: "c1"}, singletable.Limit(2), singletable.After(cursor))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, o := range page.Items {
			fmt.Print(o.OrderID, " ")
		}
		fmt.Println("| more:", page.Cursor != "")
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}

	// Placed orders, newest first, through the index.
	page, err := orders.Query(ctx, Order{Status: "PLACED"}, singletable.On("GSI1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range page.Items {
		fmt.Println(o.OrderID, o.CreatedAt.Format(time.DateOnly))
	}
	// Output:
	// o1 o2 | more: true
	// o3 o4 | more: true
	// | more: false
	// o4 2024-05-04
	// o3 2024-05-03
	// o1 2024-05-01
}

// Update changes some attributes of an item (UpdateItem) and returns the item
// as stored. It recomputes the index keys whose inputs change, from stored
// values, and on a versioned entity checks and moves the version.
func ExampleEntity_Update() {
	table, done := exampleTable("ExampleEntity_Update")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()
	o, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", Total: 4200, CreatedAt: day(1, 9)})
	if err != nil {
		fmt.Println(err)
		return
	}

	o, err = orders.Update(ctx, o, singletable.Set("status", "SHIPPED"), singletable.Add("total", 500))
	fmt.Println(o.Status, o.Total, o.Version, err)

	page, _ := orders.Query(ctx, Order{Status: "SHIPPED"}, singletable.On("GSI1"))
	fmt.Println(len(page.Items), "shipped")

	_, err = orders.Update(ctx, o, singletable.Set("orderId", "o2"))
	fmt.Println(errors.Is(err, singletable.ErrInvalidInput)) // a primary key input cannot change
	// Output:
	// SHIPPED 4700 2 <nil>
	// 1 shipped
	// true
}

// Mutate reads an item consistently, applies a function to it and writes it
// back under its version, from a fresh read when another writer got there
// first: a read-modify-write that loses no update.
func ExampleEntity_Mutate() {
	table, done := exampleTable("ExampleEntity_Mutate")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()
	if _, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", Total: 4200, CreatedAt: day(1, 9)}); err != nil {
		fmt.Println(err)
		return
	}

	errNoOrder := errors.New("no such order")
	discount := func(o *Order) error { // may run more than once
		if o.Version == 0 { // no item: Mutate would create one from the key
			return errNoOrder
		}
		o.Total -= o.Total / 10
		return nil
	}
	o, err := orders.Mutate(ctx, Order{CustomerID: "c1", OrderID: "o1"}, discount)
	fmt.Println(o.Total, o.Version, err)

	_, err = orders.Mutate(ctx, Order{CustomerID: "c1", OrderID: "o9"}, discount)
	fmt.Println(errors.Is(err, errNoOrder)) // nothing written
	// Output:
	// 3780 2 <nil>
	// true
}

// Transact writes items of any entities atomically (TransactWriteItems): all
// or none. A cancelled transaction is a *TxError naming each action that failed.
func ExampleTable_Transact() {
	table, done := exampleTable("ExampleTable_Transact")
	defer done()
	orders := singletable.MustRegister[Order](table)
	customers := singletable.MustRegister[Customer](table)
	ctx := context.Background()
	if _, err := customers.Put(ctx, Customer{CustomerID: "c1", Name: "Ann"}); err != nil {
		fmt.Println(err)
		return
	}

	place := func(orderID string) error {
		return table.Transact(ctx,
			orders.TxCreate(Order{CustomerID: "c1", OrderID: orderID, Status: "PLACED", CreatedAt: day(1, 9)}),
			customers.TxUpdate(Customer{CustomerID: "c1"}, singletable.Add("orders", 1)))
	}
	fmt.Println(place("o1"))
	err := place("o1") // the order exists: nothing is written, the count stays
	var te *singletable.TxError
	fmt.Println(errors.As(err, &te), te.Reasons[0].Index, te.Reasons[0].Op, errors.Is(err, singletable.ErrAlreadyExists))

	c, _ := customers.Get(ctx, Customer{CustomerID: "c1"})
	fmt.Println(c.Orders)
	// Output:
	// <nil>
	// true 0 Create true
	// 1
}

// A Collection loads an item collection, the items of several entity types
// that share a partition, into a struct whose fields are tagged with the types
// they hold: one Query, each item decoded by its type attribute.
func ExampleCollection() {
	table, done := exampleTable("ExampleCollection")
	defer done()
	customers := singletable.MustRegister[Customer](table)
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()
	if _, err := customers.Put(ctx, Customer{CustomerID: "c1", Name: "Ann"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"o1", "o2"} {
		if _, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: id, Status: "PLACED", CreatedAt: day(1, 9)}); err != nil {
			fmt.Println(err)
			return
		}
	}

	type CustomerOrders struct {
		Customer *Customer `singletable:"Customer"`
		Orders   []Order   `singletable:"Order"`
	}
	coll, err := singletable.NewCollection[CustomerOrders](table)
	if err != nil {
		fmt.Println(err)
		return
	}
	co, err := coll.Load(ctx, Customer{CustomerID: "c1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(co.Customer.Name, len(co.Orders), co.Orders[0].OrderID, co.Orders[1].OrderID)
	// Output:
	// Ann 2 o1 o2
}

// Event is a write-sharded entity: a day's events spread over 4 partitions, the
// shard chosen at random on each write.
type Event struct {
	_       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#S{shard}" SK:"{at:time}#{eventId}" singletable:"shards=4"`
	Day     time.Time `dynamodbav:"day"`
	At      time.Time `dynamodbav:"at"`
	EventID string    `dynamodbav:"eventId"`
	Shard   int       `dynamodbav:"shard" singletable:"shard"`
}

// QueryShards reads every shard of a sharded partition concurrently and merges
// them in sort key order, as if they were one partition; its cursor resumes
// every shard.
func ExampleEntity_QueryShards() {
	table, done := exampleTable("ExampleEntity_QueryShards")
	defer done()
	events := singletable.MustRegister[Event](table)
	ctx := context.Background()
	for i := range 6 {
		e := Event{Day: day(1, 0), At: day(1, 9).Add(time.Duration(i) * time.Minute), EventID: fmt.Sprintf("e%d", i+1)}
		if _, err := events.Put(ctx, e); err != nil {
			fmt.Println(err)
			return
		}
	}

	var cursor string
	for {
		page, err := events.QueryShards(ctx, Event{Day: day(1, 0)}, singletable.Limit(4), singletable.After(cursor))
		if err != nil {
			fmt.Println(err)
			return
		}
		var line []string
		for _, e := range page.Items {
			line = append(line, e.EventID+"@"+e.At.Format("15:04"))
		}
		fmt.Println(strings.Join(line, " "))
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	// Output:
	// e1@09:00 e2@09:01 e3@09:02 e4@09:03
	// e5@09:04 e6@09:05
}

// Migrations gives an entity a schema history: an item written before a step
// existed is migrated when it is read, and written back (here at once).
func ExampleMigrations() {
	table, done := exampleTable("ExampleMigrations")
	defer done()
	ctx := context.Background()

	// What the code stored before the name was split in two.
	type ProfileV1 struct {
		_    struct{} `Type:"Profile" PK:"USER#{id}" SK:"PROFILE"`
		ID   string   `dynamodbav:"id"`
		Name string   `dynamodbav:"name"`
	}
	old := singletable.MustRegister[ProfileV1](table)
	if _, err := old.Put(ctx, ProfileV1{ID: "u1", Name: "Ann Lee"}); err != nil {
		fmt.Println(err)
		return
	}

	// The code of today reads the same table through a Table of its own.
	type Profile struct {
		_     struct{} `Type:"Profile" PK:"USER#{id}" SK:"PROFILE"`
		ID    string   `dynamodbav:"id"`
		First string   `dynamodbav:"first"`
		Last  string   `dynamodbav:"last"`
	}
	current, err := singletable.NewTable(table.Client(), table.Name())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer current.Close()
	profiles := singletable.MustRegister[Profile](current, singletable.Migrations(singletable.Migration[Profile]{
		Steps: []singletable.Step[Profile]{{ // version 1 to 2
			Raw: func(item singletable.RawItem) error { // the stored attributes
				name, ok := item["name"].(*types.AttributeValueMemberS)
				if !ok {
					return errors.New("no name")
				}
				first, last, _ := strings.Cut(name.Value, " ")
				item["first"] = &types.AttributeValueMemberS{Value: first}
				item["last"] = &types.AttributeValueMemberS{Value: last}
				delete(item, "name")
				return nil
			},
		}},
	}))

	p, err := profiles.Get(ctx, Profile{ID: "u1"})
	fmt.Printf("%q %q %v\n", p.First, p.Last, err)

	// The item as stored now: migrated, at schema version 2.
	out, err := table.Client().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table.Name()),
		Key:       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#u1"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(slices.Sorted(maps.Keys(out.Item)), out.Item["_schema"].(*types.AttributeValueMemberN).Value)
	// Output:
	// "Ann" "Lee" <nil>
	// [PK SK Type _schema first id last] 2
}

// WaitIndexed waits until a global secondary index, which DynamoDB updates
// after the write returns, shows the item as written: read your own write
// through an index.
func ExampleEntity_WaitIndexed() {
	table, done := exampleTable("ExampleEntity_WaitIndexed")
	defer done()
	orders := singletable.MustRegister[Order](table)
	ctx := context.Background()

	o, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "PLACED", CreatedAt: day(1, 9)})
	if err != nil {
		fmt.Println(err)
		return
	}
	seen, stats, err := orders.WaitIndexed(ctx, "GSI1", o)
	fmt.Println(seen.OrderID, seen.Status, stats.Attempts > 0, err)
	// Output:
	// o1 PLACED true <nil>
}
