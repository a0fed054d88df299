package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/admin"
	"github.com/singletable/singletable/examples/exampleenv"
)

// The admin command's subcommands against DynamoDB Local: each runs in
// process (admin.Run, the function admin.Main calls), on a table of the
// test's own; progress_test.go runs the built command under a pseudo-terminal.

// local is the DynamoDB Local the environment names (AWS_ENDPOINT_URL, which
// `make test` sets), reached through the SDK's configuration. Without one the
// tests skip, but fail under CI=true.
var local exampleenv.Shared

// fixture is a commerce table of the test's own, deleted when it ends.
type fixture struct {
	client *dynamodb.Client
	name   string
	table  *singletable.Table
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	client := local.Client(t)
	name := fmt.Sprintf("singletable-admin-%08x", rand.Uint32())
	table, err := NewTable(client, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := table.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = table.DeleteTable(ctx)
	})
	return &fixture{client: client, name: name, table: table}
}

// result is one run of the command.
type result struct {
	code     int
	out, err string
}

// run runs the command line args on the fixture's table with input as its
// standard input.
func (f *fixture) run(t *testing.T, input string, args ...string) result {
	t.Helper()
	return f.runCtx(t, context.Background(), input, nil, args...)
}

func (f *fixture) runCtx(t *testing.T, ctx context.Context, input string, errw io.Writer, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	var ew io.Writer = &errb
	if errw != nil {
		ew = io.MultiWriter(&errb, errw)
	}
	code := admin.Run(ctx, f.table, args, admin.Stdio{In: strings.NewReader(input), Out: &out, Err: ew})
	t.Logf("$ tableadmin %s -> exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return result{code: code, out: out.String(), err: errb.String()}
}

func (r result) want(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.out, r.err)
	}
	return r
}

// line is a line of item output.
type line struct {
	Type    string            `json:"type"`
	Key     map[string]string `json:"key"`
	Item    map[string]any    `json:"item"`
	Unknown bool              `json:"unknown"`
	Cursor  string            `json:"cursor"`
}

// lines parses JSON lines.
func lines(t *testing.T, s string) []line {
	t.Helper()
	var out []line
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		out = append(out, x)
	}
	return out
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

// TestDescribeAndDefinition: the design and the definition, sending nothing.
func TestDescribeAndDefinition(t *testing.T) {
	f := newFixture(t)
	r := f.run(t, "", "describe").want(t, admin.ExitOK)
	contains(t, r.out, "Order (type Order)")
	contains(t, r.out, "schema v2")
	contains(t, f.run(t, "", "describe", "--format", "markdown").want(t, admin.ExitOK).out, "| GSI1 |")
	var d struct{ Entities []struct{ Type string } }
	if err := json.Unmarshal([]byte(f.run(t, "", "describe", "--json").want(t, admin.ExitOK).out), &d); err != nil || len(d.Entities) != 3 {
		t.Fatalf("describe --json: %v %+v", err, d)
	}
	var cf map[string]any
	if err := json.Unmarshal([]byte(f.run(t, "", "definition", "--format", "cloudformation").want(t, admin.ExitOK).out), &cf); err != nil {
		t.Fatal(err)
	}
	contains(t, f.run(t, "", "definition", "--format", "cloudformation-yaml").want(t, admin.ExitOK).out, "AWS::DynamoDB::Table")
	contains(t, f.run(t, "", "definition", "--format", "terraform").want(t, admin.ExitOK).out, `resource "aws_dynamodb_table"`)
	var in struct{ TableName string }
	if err := json.Unmarshal([]byte(f.run(t, "", "definition", "--format", "json").want(t, admin.ExitOK).out), &in); err != nil || in.TableName != f.name {
		t.Fatalf("definition json: %v %+v", err, in)
	}
	contains(t, f.run(t, "", "definition", "--format", "pulumi").want(t, admin.ExitUsage).err, `--format "pulumi"`)
	contains(t, f.run(t, "", "describe", "--help").want(t, admin.ExitOK).out, "Exit codes:")
	contains(t, f.run(t, "", "describe", "--yes").want(t, admin.ExitUsage).err, "flag provided but not defined: -yes")
	contains(t, f.run(t, "", "frobnicate").want(t, admin.ExitUsage).err, "unknown command")
	f.run(t, "").want(t, admin.ExitUsage)
	contains(t, f.run(t, "", "--help").want(t, admin.ExitOK).out, "migrate")
}

// TestItems: put, get, query, scan, delete and explain, through the entities'
// write pipeline.
func TestItems(t *testing.T) {
	f := newFixture(t)
	// put: the pipeline sets the version and createdAt, and guards the email.
	r := f.run(t, `{"customerId":"c1","name":"Ada","email":"ada@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitOK)
	got := lines(t, r.out)
	if len(got) != 1 || got[0].Type != "Customer" || got[0].Item["version"] != float64(1) || got[0].Item["createdAt"] == nil || got[0].Key["PK"] != "CUST#c1" {
		t.Fatalf("put: %+v", got)
	}
	// What the pipeline refuses is refused: a stale version, an email held, a
	// line that fails validation.
	contains(t, f.run(t, `{"customerId":"c1","name":"Ada L.","email":"ada@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitRefused).err, "version")
	contains(t, f.run(t, `{"customerId":"c2","name":"Bob","email":"ada@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitRefused).err, "email")
	contains(t, f.run(t, `{"orderId":"o1","line":1,"sku":"","quantity":1}`, "put", "OrderItem", "--yes").want(t, admin.ExitRefused).err, "sku is empty")
	// The version held: the line get wrote, put back with a change.
	g := f.run(t, "", "get", "Customer", "--key", "customerId=c1").want(t, admin.ExitOK)
	edited := strings.Replace(g.out, `"Ada"`, `"Ada Lovelace"`, 1)
	r = f.run(t, edited, "put", "Customer", "--yes").want(t, admin.ExitOK)
	if l := lines(t, r.out); l[0].Item["version"] != float64(2) || l[0].Item["name"] != "Ada Lovelace" {
		t.Fatalf("put of get's line: %+v", l)
	}
	// Not confirmed: no terminal to ask on and no --yes.
	contains(t, f.run(t, `{"customerId":"c3","name":"Cy","email":"cy@example.com"}`, "put", "Customer").want(t, admin.ExitDeclined).err, "--yes")
	f.run(t, "", "get", "Customer", "--key", "customerId=c3").want(t, admin.ExitNotFound)
	// --dry-run sends nothing: it shows the transaction and its cost.
	r = f.run(t, `{"customerId":"c3","name":"Cy","email":"cy@example.com"}`, "put", "Customer", "--dry-run").want(t, admin.ExitOK)
	contains(t, r.out, "TransactWriteItems")
	contains(t, r.out, "cost:")
	f.run(t, "", "get", "Customer", "--key", "customerId=c3").want(t, admin.ExitNotFound)

	// Orders, several at once (JSON objects one after another).
	var orders strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&orders, `{"orderId":"o%d","customerId":"c1","status":"PLACED","createdAt":"2026-01-0%dT10:00:00Z","totalCents":%d00,"currency":"EUR"}`+"\n", i, i, i)
	}
	if n := len(lines(t, f.run(t, orders.String(), "put", "Order", "--yes").want(t, admin.ExitOK).out)); n != 5 {
		t.Fatalf("put 5 orders wrote %d lines", n)
	}
	f.run(t, `{"orderId":"o1","line":1,"sku":"BOOK-1","quantity":2,"priceCents":50}`, "put", "OrderItem", "--create", "--yes").want(t, admin.ExitOK)
	f.run(t, `{"orderId":"o1","line":1,"sku":"BOOK-1","quantity":2,"priceCents":50}`, "put", "OrderItem", "--create", "--yes").want(t, admin.ExitRefused)

	// query: the customer's orders, newest first (GSI1), all pages; then one
	// page at a time with its cursor.
	all := lines(t, f.run(t, "", "query", "Order", "--index", "GSI1", "--key", "customerId=c1").want(t, admin.ExitOK).out)
	if len(all) != 5 || all[0].Item["orderId"] != "o5" {
		t.Fatalf("query GSI1: %+v", all)
	}
	page := lines(t, f.run(t, "", "query", "Order", "--index", "GSI1", "--key", "customerId=c1", "--limit", "2").want(t, admin.ExitOK).out)
	if len(page) != 3 || page[2].Cursor == "" {
		t.Fatalf("query --limit 2: %+v", page)
	}
	next := lines(t, f.run(t, "", "query", "Order", "--index", "GSI1", "--key", "customerId=c1", "--limit", "2", "--cursor", page[2].Cursor).want(t, admin.ExitOK).out)
	if next[0].Item["orderId"] != "o3" {
		t.Fatalf("second page: %+v", next)
	}
	f.run(t, "", "query", "Order", "--index", "GSI1", "--key", "customerId=c1", "--cursor", "garbage").want(t, admin.ExitUsage)
	// Bad input names the entity and the attribute.
	contains(t, f.run(t, "", "get", "Order", "--key", "orderID=o1").want(t, admin.ExitUsage).err, `did you mean "orderId"`)
	contains(t, f.run(t, "", "get", "Order").want(t, admin.ExitUsage).err, "--key orderId=... is missing")
	contains(t, f.run(t, "", "get", "Ordr", "--key", "orderId=o1").want(t, admin.ExitUsage).err, `did you mean "Order"`)
	contains(t, f.run(t, "", "get", "OrderItem", "--key", "orderId=o1", "--key", "line=one").want(t, admin.ExitUsage).err, "line (OrderItem.Line)")

	// scan: every item decoded by type, the unique guards of no type written raw.
	types := map[string]int{}
	for _, l := range lines(t, f.run(t, "", "scan").want(t, admin.ExitOK).out) {
		if !l.Unknown {
			types[l.Type]++
		}
	}
	if types["Customer"] != 1 || types["Order"] != 5 || types["OrderItem"] != 1 {
		t.Fatalf("scan: %v", types)
	}
	if n := len(lines(t, f.run(t, "", "scan", "--type", "Order", "--segments", "3").want(t, admin.ExitOK).out)); n != 5 {
		t.Fatalf("scan --type Order --segments 3: %d lines", n)
	}
	if n := len(lines(t, f.run(t, "", "scan", "--limit", "2").want(t, admin.ExitOK).out)); n != 2 {
		t.Fatalf("scan --limit 2: %d lines", n)
	}

	// explain: what a call would send, and nothing sent.
	r = f.run(t, "", "explain", "Order", "get", "--key", "orderId=o1").want(t, admin.ExitOK)
	contains(t, r.out, "GetItem")
	var x struct {
		Requests []struct{ API string }
		Cost     struct{ ReadUnits float64 }
	}
	if err := json.Unmarshal([]byte(f.run(t, "", "explain", "Order", "query", "--index", "GSI2", "--key", "status=PLACED", "--json").want(t, admin.ExitOK).out), &x); err != nil || len(x.Requests) != 1 || x.Requests[0].API != "Query" {
		t.Fatalf("explain --json: %v %+v", err, x)
	}
	contains(t, f.run(t, "", "explain", "Order", "get", "--index", "GSI1", "--key", "orderId=o1").want(t, admin.ExitUsage).err, "--index does not apply to get")
	contains(t, f.run(t, `{"orderId":"o9","customerId":"c1","status":"PLACED","createdAt":"2026-01-09T10:00:00Z"}`, "explain", "Order", "put").want(t, admin.ExitOK).out, "UpdateItem")

	// delete: through the pipeline (the guard of the email freed), asked first.
	f.run(t, "", "delete", "Customer", "--key", "customerId=c1").want(t, admin.ExitDeclined)
	contains(t, f.run(t, "", "delete", "Customer", "--key", "customerId=c1", "--dry-run").want(t, admin.ExitOK).out, "TransactWriteItems")
	contains(t, f.run(t, "", "delete", "Customer", "--key", "customerId=c1", "--yes").want(t, admin.ExitRefused).err, "version conflict")
	f.run(t, "", "delete", "Customer", "--key", "customerId=c1", "--key", "version=2", "--yes").want(t, admin.ExitOK)
	f.run(t, "", "delete", "Order", "--key", "orderId=o5", "--any-version", "--yes").want(t, admin.ExitOK)
	f.run(t, "", "get", "Customer", "--key", "customerId=c1").want(t, admin.ExitNotFound)
	f.run(t, `{"customerId":"c2","name":"Bob","email":"ada@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitOK)
	f.run(t, "", "unique", "check", "Customer").want(t, admin.ExitOK)
}

// TestDrift: the table as created agrees with the model; after an index is
// removed by hand, drift names it, with exit code 1.
func TestDrift(t *testing.T) {
	f := newFixture(t)
	contains(t, f.run(t, "", "drift").want(t, admin.ExitOK).out, "agrees with the model")
	ctx := context.Background()
	_, err := f.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:                   aws.String(f.name),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("GSI2")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.run(t, "", "drift").want(t, admin.ExitFound)
	contains(t, r.out, "index GSI2")
	var diffs []struct{ What, Model, Table, Fix string }
	if err := json.Unmarshal([]byte(f.run(t, "", "drift", "--json").want(t, admin.ExitFound).out), &diffs); err != nil || len(diffs) != 1 || diffs[0].What != "index GSI2" || diffs[0].Fix == "" {
		t.Fatalf("drift --json: %v %+v", err, diffs)
	}
}

// TestEnsure: ensure creates a missing table as the model says, after asking
// (not confirmed without a terminal or --yes; --dry-run sends nothing); run
// again, it finds the table as the model says; after an index is removed by
// hand it reports the drift and changes nothing.
func TestEnsure(t *testing.T) {
	client := local.Client(t)
	name := fmt.Sprintf("singletable-admin-ensure-%08x", rand.Uint32())
	table, err := NewTable(client, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = table.DeleteTable(ctx)
	})
	f := &fixture{client: client, name: name, table: table}
	exists := func() bool {
		_, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		return err == nil
	}
	contains(t, f.run(t, "", "ensure", "--dry-run").want(t, admin.ExitOK).out, "ensure would create it")
	f.run(t, "", "ensure").want(t, admin.ExitDeclined)
	if exists() {
		t.Fatal("the table was created without --yes or --dry-run")
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(f.run(t, "", "ensure", "--yes", "--json").want(t, admin.ExitOK).out), &created); err != nil || created["created"] != true {
		t.Fatalf("ensure --yes --json: %v %v", err, created)
	}
	if !exists() {
		t.Fatal("no table after ensure --yes")
	}
	contains(t, f.run(t, "", "ensure", "--yes").want(t, admin.ExitOK).out, "agrees with the model")
	_, err = client.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{
		TableName:                   aws.String(name),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("GSI2")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	contains(t, f.run(t, "", "ensure", "--yes").want(t, admin.ExitFound).out, "index GSI2")
}

// seedV1 writes n orders as the application did before schema 2 (no
// currency, schema 1), and a few customers.
func (f *fixture) seedV1(t *testing.T, n int) {
	t.Helper()
	ctx := context.Background()
	v1, err := newTable(f.client, f.name, false)
	if err != nil {
		t.Fatal(err)
	}
	e, err := v1.AnyEntity("Order")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		o := Order{OrderID: fmt.Sprintf("v1-%03d", i), CustomerID: "c" + strconv.Itoa(i%7), Status: "DELIVERED", CreatedAt: time.Date(2025, 3, 1, 0, i, 0, 0, time.UTC), TotalCents: int64(100 * i)}
		if _, err := e.Put(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

var progressLine = regexp.MustCompile(`(\d+) migrated`)

// lineWatcher calls fn with each complete line written to it.
type lineWatcher struct {
	mu  sync.Mutex
	buf []byte
	fn  func(string)
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

type runResult struct {
	Type         string
	Segments     int
	SegmentsDone int
	Resumed      bool
	Run, Total   struct{ Seen, Migrated, Lost, Failed int64 }
}

// TestMigrate: status counts the old items; a run interrupted half-way
// (Ctrl-C) saves its progress, and the next run resumes it: every item
// migrated once, none twice.
func TestMigrate(t *testing.T) {
	f := newFixture(t)
	const n = 60
	f.seedV1(t, n)
	var st struct {
		Entities []struct {
			Type     string
			Current  int
			Versions map[string]int
			Old      int
		}
	}
	r := f.run(t, "", "migrate", "status", "--json").want(t, admin.ExitFound)
	contains(t, r.err, "cost: a count reads every item of the table")
	if err := json.Unmarshal([]byte(r.out), &st); err != nil || st.Entities[0].Versions["1"] != n || st.Entities[0].Old != n {
		t.Fatalf("migrate status: %v %+v", err, st)
	}
	contains(t, f.run(t, "", "migrate", "status", "--sample", "10").want(t, admin.ExitFound).err, "a sample reads the first 10 items")
	contains(t, f.run(t, "", "migrate", "status", "Customer").want(t, admin.ExitUsage).err, "Customer has no migrations")
	f.run(t, "", "migrate", "run").want(t, admin.ExitDeclined)
	contains(t, f.run(t, "", "migrate", "run", "--dry-run").want(t, admin.ExitOK).out, "Scan")

	// The first run, stopped (as by Ctrl-C) once a progress line shows items
	// migrated.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := &lineWatcher{fn: func(l string) {
		if m := progressLine.FindStringSubmatch(l); m != nil {
			if k, _ := strconv.Atoi(m[1]); k >= n/3 {
				cancel()
			}
		}
	}}
	args := []string{"migrate", "run", "--segments", "2", "--rate", "20", "--page-size", "5", "--yes", "--json"}
	r = f.runCtx(t, ctx, "", watch, args...)
	r.want(t, admin.ExitInterrupted)
	contains(t, r.err, "progress saved")
	var first runResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &first); err != nil {
		t.Fatal(err)
	}
	if first.Run.Migrated < n/3 || first.Run.Migrated >= n {
		t.Fatalf("the first run migrated %d of %d: not stopped half-way", first.Run.Migrated, n)
	}
	// The items the first run migrated are at schema 2 already.
	if err := json.Unmarshal([]byte(f.run(t, "", "migrate", "status", "--json").want(t, admin.ExitFound).out), &st); err != nil || int64(st.Entities[0].Versions["2"]) != first.Run.Migrated {
		t.Fatalf("after the first run: %v %+v, first migrated %d", err, st, first.Run.Migrated)
	}

	// The second run resumes: it migrates the rest, and nothing twice.
	r = f.run(t, "", args...).want(t, admin.ExitOK)
	var second runResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &second); err != nil {
		t.Fatal(err)
	}
	if !second.Resumed || first.Run.Migrated+second.Run.Migrated != n || second.Total.Migrated != n || second.Run.Lost != 0 || first.Run.Lost != 0 || second.SegmentsDone != 2 {
		t.Fatalf("resumed run: first %+v, second %+v", first, second)
	}
	if err := json.Unmarshal([]byte(f.run(t, "", "migrate", "status", "--json").want(t, admin.ExitOK).out), &st); err != nil || st.Entities[0].Versions["2"] != n || st.Entities[0].Old != 0 {
		t.Fatalf("after the second run: %v %+v", err, st)
	}
	// A third run finds the migration done: nothing scanned again.
	r = f.run(t, "", args...).want(t, admin.ExitOK)
	var third runResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &third); err != nil || third.Run.Seen != 0 || third.Total.Migrated != n {
		t.Fatalf("third run: %v %+v", err, third)
	}
	// Every order holds the currency its migration set.
	for _, l := range lines(t, f.run(t, "", "scan", "--type", "Order").want(t, admin.ExitOK).out) {
		if l.Item["currency"] != "EUR" {
			t.Fatalf("not migrated: %+v", l)
		}
	}
}

// holds says whether a string attribute of item contains s.
func holds(item map[string]types.AttributeValue, s string) bool {
	for _, av := range item {
		if v, ok := av.(*types.AttributeValueMemberS); ok && strings.Contains(v.Value, s) {
			return true
		}
	}
	return false
}

// TestUniqueRepair: a guard deleted by hand is found missing, and repaired.
func TestUniqueRepair(t *testing.T) {
	f := newFixture(t)
	f.run(t, `{"customerId":"c1","name":"Ada","email":"ada@example.com"}{"customerId":"c2","name":"Bob","email":"bob@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitOK)
	f.run(t, "", "unique", "check").want(t, admin.ExitOK)
	// Delete Bob's guard by hand: the library's own item (scan leaves those
	// out) whose partition key is a guard of Customer's unique values, owned by c2.
	out, err := f.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.name)})
	if err != nil {
		t.Fatal(err)
	}
	var guard map[string]types.AttributeValue
	for _, item := range out.Items {
		pk, _ := item["PK"].(*types.AttributeValueMemberS)
		if pk != nil && strings.HasPrefix(pk.Value, "#singletable#unique#Customer#") && holds(item, "CUST#c2") {
			guard = item
		}
	}
	if guard == nil {
		t.Fatalf("no guard item of c2 among %d items", len(out.Items))
	}
	if _, err := f.client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.name), Key: map[string]types.AttributeValue{"PK": guard["PK"], "SK": guard["SK"]}}); err != nil {
		t.Fatal(err)
	}
	r := f.run(t, "", "unique", "check", "Customer", "--json").want(t, admin.ExitFound)
	var fd struct {
		Kind       string
		Constraint string
		Values     []string
		Repaired   bool
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &fd); err != nil || fd.Kind != "missing" || fd.Values[0] != "bob@example.com" || fd.Repaired {
		t.Fatalf("unique check: %v %+v", err, fd)
	}
	// The missing guard lets another customer claim the email.
	f.run(t, "", "unique", "repair", "Customer").want(t, admin.ExitDeclined)
	f.run(t, "", "unique", "repair", "Customer", "--dry-run").want(t, admin.ExitFound)
	r = f.run(t, "", "unique", "repair", "Customer", "--yes", "--json").want(t, admin.ExitOK)
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &fd); err != nil || !fd.Repaired {
		t.Fatalf("unique repair: %v %+v", err, fd)
	}
	f.run(t, "", "unique", "check").want(t, admin.ExitOK)
	contains(t, f.run(t, `{"customerId":"c3","name":"Eve","email":"bob@example.com"}`, "put", "Customer", "--yes").want(t, admin.ExitRefused).err, "email")
	contains(t, f.run(t, "", "unique", "check", "Order").want(t, admin.ExitUsage).err, "Order has no unique values")
}
