package singletable_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

// Every example here runs offline: describing a table and registering entities send
// nothing, so a client that is never called is enough.

// A template renders a key from values, renders the prefix of a partly known key
// for begins_with, and parses a key back into its values.
func ExampleParseTemplate() {
	tmpl, err := singletable.ParseTemplate("ORDER#{orderId}#ITEM#{line:04}", singletable.DefaultDelimiter)
	if err != nil {
		fmt.Println(err)
		return
	}
	key, _ := tmpl.Render(map[string]any{"orderId": "o1", "line": 7})
	prefix, _ := tmpl.Prefix(map[string]any{"orderId": "o1"})
	values, _ := tmpl.Extract("ORDER#o2#ITEM#0012")
	fmt.Println(key)
	fmt.Println(prefix)
	fmt.Println(values["orderId"], values["line"])
	fmt.Println(tmpl.Placeholders(), tmpl.StaticPrefix())

	// A value holding the delimiter would make two inputs render one key.
	_, err = tmpl.Render(map[string]any{"orderId": "o1#ITEM#0001", "line": 2})
	fmt.Println(err)
	fmt.Println(errors.Is(err, singletable.ErrInvalidKey))
	// Output:
	// ORDER#o1#ITEM#0007
	// ORDER#o1#ITEM#
	// o2 12
	// [orderId line] ORDER#
	// singletable: invalid key (field orderId): {orderId}: value "o1#ITEM#0001" contains the delimiter '#'
	// true
}

// Formats make keys sort as their values do: fixed-width UTC times, epoch forms,
// zero-padded numbers, and reverse time, which sorts newest first in ascending
// order.
func ExampleTemplate_Render() {
	at := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	for _, text := range []string{"{t:time}", "{t:date}", "{t:unix}", "{t:unixms}", "{t:rev}", "SEQ#{n:08}"} {
		tmpl, err := singletable.ParseTemplate(text, '#')
		if err != nil {
			fmt.Println(err)
			return
		}
		key, _ := tmpl.Render(map[string]any{"t": at, "n": 42})
		fmt.Printf("%-11s %s\n", text, key)
	}

	rev, _ := singletable.ParseTemplate("{t:rev}", '#')
	a, _ := rev.Render(map[string]any{"t": at})
	b, _ := rev.Render(map[string]any{"t": later})
	fmt.Println("later sorts first:", b < a)
	back, _ := rev.Extract(b)
	fmt.Println(back["t"])
	// Output:
	// {t:time}    2024-05-01T09:30:00.000000000Z
	// {t:date}    2024-05-01
	// {t:unix}    1714555800
	// {t:unixms}  1714555800000
	// {t:rev}     2516877449999999999
	// SEQ#{n:08}  SEQ#00000042
	// later sorts first: true
	// 2024-05-01 10:30:00 +0000 UTC
}

// Register checks every tag once and names the type and field at fault.
func ExampleRegister_errors() {
	table, _ := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "app",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))

	type Typo struct {
		_          struct{} `Type:"Typo" PK:"CUST#{customerID}" SK:"PROFILE"`
		CustomerID string   `dynamodbav:"customerId"`
	}
	_, err := singletable.Register[Typo](table)
	fmt.Println(err)

	var ee *singletable.EntityError
	if errors.As(err, &ee) {
		fmt.Printf("entity %s, field %s, matches ErrInvalidEntity: %v\n", ee.Entity, ee.Field, errors.Is(err, singletable.ErrInvalidEntity))
	}

	type HalfIndex struct {
		_      struct{} `Type:"HalfIndex" PK:"H#{id}" SK:"H" GSI1PK:"STATUS#{status}"`
		ID     string   `dynamodbav:"id"`
		Status string   `dynamodbav:"status"`
	}
	_, err = singletable.Register[HalfIndex](table)
	fmt.Println(err)

	type BadOption struct {
		_       struct{} `Type:"BadOption" PK:"B#{id}" SK:"B"`
		ID      string   `dynamodbav:"id"`
		Version int64    `dynamodbav:"version" singletable:"versoin"`
	}
	_, err = singletable.Register[BadOption](table)
	fmt.Println(err)

	// A setting named "PROFILE" would be the profile's key.
	type Profile struct {
		_  struct{} `Type:"Profile" PK:"USER#{id}" SK:"PROFILE"`
		ID string   `dynamodbav:"id"`
	}
	type Setting struct {
		_      struct{} `Type:"Setting" PK:"USER#{userId}" SK:"{name}"`
		UserID string   `dynamodbav:"userId"`
		Name   string   `dynamodbav:"name"`
	}
	_, err = singletable.Register[Profile](table)
	fmt.Println(err)
	_, err = singletable.Register[Setting](table)
	fmt.Println(err)
	// Output:
	// singletable: register Typo.PK: template "CUST#{customerID}" names {customerID}, which is not a stored attribute of Typo (did you mean "customerId"?)
	// entity Typo, field PK, matches ErrInvalidEntity: true
	// singletable: register HalfIndex.GSI1SK: index GSI1 needs templates for both of its key attributes; GSI1SK is missing
	// singletable: register BadOption.Version: unknown singletable tag option "versoin" (want version, shard, createdAt, updatedAt, counter, ttl, unique, default=... or generate=...)
	// <nil>
	// singletable: register Setting.SK: key templates "USER#{userId}" / "{name}" collide with Profile's "USER#{id}" / "PROFILE": both render PK "USER#a", SK "PROFILE", so a batch write of one would overwrite the other's item; give one of them a distinct static prefix, e.g. Setting's SK "SETTING#{name}"
}

// Describe turns the registered entities into a design document: key templates,
// the access patterns they serve, and a Mermaid key map.
func ExampleTable_Describe() {
	type Customer struct {
		_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
		CustomerID string   `dynamodbav:"customerId"`
		Name       string   `dynamodbav:"name"`
	}
	type Order struct {
		_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:rev}#{orderId}"`
		CustomerID string    `dynamodbav:"customerId"`
		OrderID    string    `dynamodbav:"orderId"`
		Status     string    `dynamodbav:"status,omitempty"`
		CreatedAt  time.Time `dynamodbav:"createdAt"`
		Version    int64     `dynamodbav:"version" singletable:"version"`
	}
	table, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "shop",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
	if err != nil {
		fmt.Println(err)
		return
	}
	singletable.MustRegister[Customer](table)
	singletable.MustRegister[Order](table)

	fmt.Print(table.Describe().Markdown())
	// Output:
	// # Table `shop`
	//
	// Base table keys `PK` (partition) and `SK` (sort); entity type in `Type`; key parts separated by `#`.
	//
	// | index | partition key | sort key | entities |
	// |---|---|---|---|
	// | table | `PK` | `SK` | Customer, Order |
	// | GSI1 | `GSI1PK` | `GSI1SK` | Order |
	//
	// ## Entities
	//
	// | entity | `Type` | version | shards | schema |
	// |---|---|---|---|---|
	// | Customer | `Customer` | - | - | - |
	// | Order | `Order` | `version` | - | - |
	//
	// ## Key templates
	//
	// | entity | `PK` | `SK` | `GSI1PK` | `GSI1SK` |
	// |---|---|---|---|---|
	// | Customer | `CUST#{customerId}` | `PROFILE` | - | - |
	// | Order | `CUST#{customerId}` | `ORDER#{orderId}` | `STATUS#{status}` | `{createdAt:rev}#{orderId}` |
	//
	// An index key with an empty input is left out of the item, which is then not in that index (a sparse index).
	//
	// ## Access patterns
	//
	// | # | entities | index | pattern | key | DynamoDB | call |
	// |---|---|---|---|---|---|---|
	// | 1 | Customer | table | get one by its primary key | `PK = "CUST#{customerId}" AND SK = "PROFILE"` | GetItem | `Get(k)`<br>`BatchGet(ks)` |
	// | 2 | Order | table | get one by its primary key | `PK = "CUST#{customerId}" AND SK = "ORDER#{orderId}"` | GetItem | `Get(k)`<br>`BatchGet(ks)` |
	// | 3 | Order | table | query the partition `CUST#{customerId}` by prefix `ORDER#`, sorted by `{orderId}` | `PK = "CUST#{customerId}" AND begins_with(SK, "ORDER#")` | Query | `Query(k)` |
	// | 4 | Order | GSI1 | query GSI1 partition `STATUS#{status}`, sorted by `{createdAt:rev}` (newest first), then `{orderId}` | `GSI1PK = "STATUS#{status}"` | Query | `Query(k, On("GSI1"))`<br>`Query(k, On("GSI1"), SKBetween(lo, hi))` |
	// | 5 | Customer, Order | table | read the item collection in partition `CUST#{customerId}`: Customer and Order items, each decoded by its type | `PK = "CUST#{customerId}"` | Query | `Table.Query(k)`<br>`Collection[C].Load(k)` |
	//
	// Reads of the base table are strongly consistent with `Consistent()`. Index reads are eventually consistent: `WaitIndexed` and `WaitMoved` wait until a write shows.
	//
	// ## Scans and counts
	//
	// | entities | index | pattern | DynamoDB | call | cost |
	// |---|---|---|---|---|---|
	// | Customer | table | scan the whole table for Customer items (a filter on the type attribute); in parallel with `Segments(n), Segment(i)` | Scan | `Scan()`<br>`ScanAll()`<br>`ScanCount()` | every item of the table, of every type: 0.5 RCU per 4 KB of the whole table (1 consistent), whatever it returns; filters save none |
	// | Order | table | scan the whole table for Order items (a filter on the type attribute); in parallel with `Segments(n), Segment(i)` | Scan | `Scan()`<br>`ScanAll()`<br>`ScanCount()` | every item of the table, of every type: 0.5 RCU per 4 KB of the whole table (1 consistent), whatever it returns; filters save none |
	// | Customer, Order | table | scan every item of the table, each decoded by its type; in parallel with `Segments(n), Segment(i)` | Scan | `Table.Scan()`<br>`Table.ScanAll()`<br>`Table.ScanCount()` | every item of the table, of every type: 0.5 RCU per 4 KB of the whole table (1 consistent), whatever it returns; filters save none |
	//
	// Every query above can be counted instead (`Count(k, ...)`, `Table.Count(k, ...)`: Select COUNT, every page, no item returned or decoded) at the cost of reading its items: 0.5 RCU per 4 KB read, 1 consistent.
	//
	// ## Key map
	//
	// ```mermaid
	// flowchart LR
	//   base[("table shop<br/>PK, SK")]
	//   ix1[("GSI1<br/>GSI1PK, GSI1SK")]
	//   e1["Customer"]
	//   e1 -->|"PK CUST#{customerId}<br/>SK PROFILE"| base
	//   e2["Order<br/>versioned"]
	//   e2 -->|"PK CUST#{customerId}<br/>SK ORDER#{orderId}"| base
	//   e2 -->|"GSI1PK STATUS#{status}<br/>GSI1SK {createdAt:rev}#{orderId}"| ix1
	// ```
}

// A Railroad runs the tasks of one key one after another, in the order they were
// submitted, and the tasks of different keys side by side.
func ExampleRailroad() {
	rr := singletable.NewRailroad[string](singletable.RailroadOptions{Concurrency: 4})
	ctx := context.Background()

	var mu sync.Mutex // protects seen
	seen := map[string][]int{}
	var results []<-chan error
	for i := range 5 {
		for _, key := range []string{"order-1", "order-2"} {
			errc, err := rr.Submit(ctx, key, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				seen[key] = append(seen[key], i)
				return nil
			})
			if err != nil {
				fmt.Println(err)
				return
			}
			results = append(results, errc)
		}
	}
	for _, errc := range results {
		if err := <-errc; err != nil {
			fmt.Println(err)
		}
	}
	if err := rr.Close(ctx); err != nil {
		fmt.Println(err)
	}

	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Println(k, seen[k])
	}
	_, err := rr.Submit(ctx, "order-1", func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, singletable.ErrRailroadClosed))
	// Output:
	// order-1 [0 1 2 3 4]
	// order-2 [0 1 2 3 4]
	// true
}

// A task that panics fails alone: its rail goes on with the next task.
func ExampleRailroad_Do() {
	rr := singletable.NewRailroad[int]()
	ctx := context.Background()
	err := rr.Do(ctx, 7, func(context.Context) error { panic("boom") })
	var pe *singletable.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value)
	fmt.Println(rr.Do(ctx, 7, func(context.Context) error { return nil }))
	// Output:
	// true boom
	// <nil>
}

// WaitFor retries a read until its result is what the caller waits for; the
// sleeps and the clock come in through the Backoff, here made instant.
func ExampleWaitFor() {
	reads := 0
	read := func(context.Context) (int, error) {
		reads++
		return reads * 10, nil
	}
	instant := singletable.Backoff{
		MaxAttempts: 5,
		Sleep:       func(context.Context, time.Duration) error { return nil },
	}
	v, stats, err := singletable.WaitFor(context.Background(), read, func(v int) bool { return v >= 30 },
		singletable.RetryBackoff(instant))
	fmt.Println(v, stats.Attempts, err)

	_, stats, err = singletable.WaitFor(context.Background(), read, func(v int) bool { return v < 0 },
		singletable.RetryBackoff(instant))
	fmt.Println(stats.Attempts, errors.Is(err, singletable.ErrConsistencyTimeout))
	// Output:
	// 30 3 <nil>
	// 5 true
}

// Backoff bounds grow exponentially up to the cap; each delay is drawn at random
// below its bound (full jitter).
func ExampleBackoff_Bound() {
	b := singletable.Backoff{Base: 25 * time.Millisecond, Cap: 300 * time.Millisecond}
	for n := 1; n <= 6; n++ {
		fmt.Print(b.Bound(n), " ")
	}
	fmt.Println()
	// Output:
	// 25ms 50ms 100ms 200ms 300ms 300ms
}

// ParseKey rebuilds the key fields of an entity from a rendered key, such as the
// keys of a stream record.
func ExampleEntity_ParseKey() {
	type Reading struct {
		_        struct{}  `Type:"Reading" PK:"SENSOR#{sensorId}" SK:"{at:unix}#{seq:04}"`
		SensorID string    `dynamodbav:"sensorId"`
		At       time.Time `dynamodbav:"at"`
		Seq      int       `dynamodbav:"seq"`
		Value    float64   `dynamodbav:"value"`
	}
	table, _ := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "sensors")
	readings := singletable.MustRegister[Reading](table)

	r, err := readings.ParseKey(map[string]string{"PK": "SENSOR#s7", "SK": "1714555800#0003"})
	fmt.Println(r.SensorID, r.At, r.Seq, err)

	_, err = readings.ParseKey(map[string]string{"PK": "SENSOR#s7", "SK": "yesterday#0003"})
	fmt.Println(errors.Is(err, singletable.ErrInvalidKey))
	// Output:
	// s7 2024-05-01 09:30:00 +0000 UTC 3 <nil>
	// true
}

// TestExportedNamesDocumented holds the package to its style: every exported name
// of every package in this module (this one, internal/...) has a doc
// comment, starting with the name, and every package has a package comment. Main
// packages (examples, commands) and nested modules are left out.
func TestExportedNamesDocumented(t *testing.T) {
	fset := token.NewFileSet()
	var missing []string
	packageDoc := map[string]bool{} // directory -> has a package comment
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipNonPackageDir(path, d)
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		dir := filepath.Dir(path)
		packageDoc[dir] = packageDoc[dir] || f.Doc != nil
		missing = append(missing, undocumented(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, ok := range packageDoc {
		if !ok {
			missing = append(missing, dir+": package has no package comment")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d exported names lack documentation:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// skipNonPackageDir returns filepath.SkipDir for a directory whose packages
// TestExportedNamesDocumented leaves out (hidden, testdata, examples, another
// module), nil for the others.
func skipNonPackageDir(path string, d fs.DirEntry) error {
	if path == "." {
		return nil
	}
	if n := d.Name(); strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "examples" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir // another module
	}
	return nil
}

// undocumented returns, one line each, the exported names of f without a doc
// comment or with one that does not start with the name.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var missing []string
	check := func(pos token.Pos, what, name string, doc *ast.CommentGroup) {
		where := fset.Position(pos).String()
		words := strings.Fields(doc.Text())
		switch {
		case doc == nil:
			missing = append(missing, where+": "+what+" has no doc comment")
		case !(len(words) > 0 && words[0] == name) && !(len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") && words[1] == name):
			missing = append(missing, where+": the doc comment of "+what+" does not start with "+name)
		}
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if what, ok := exportedFunc(decl); ok {
				check(decl.Pos(), what, decl.Name.Name, decl.Doc)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					doc := spec.Doc
					if doc == nil && !decl.Lparen.IsValid() {
						doc = decl.Doc
					}
					if spec.Name.IsExported() {
						check(spec.Pos(), "type "+spec.Name.Name, spec.Name.Name, doc)
					}
				case *ast.ValueSpec:
					// A constant or variable may share its group's comment.
					doc := cmp.Or(spec.Doc, spec.Comment, decl.Doc)
					for _, name := range spec.Names {
						if name.IsExported() && doc == nil {
							missing = append(missing, fset.Position(name.Pos()).String()+": "+decl.Tok.String()+" "+name.Name+" has no doc comment")
						}
					}
				}
			}
		}
	}
	return missing
}

// exportedFunc names decl as undocumented reports it ("func F", "method T.M"),
// and reports whether it is part of the API: an exported function, or an
// exported method of an exported type.
func exportedFunc(decl *ast.FuncDecl) (string, bool) {
	if !decl.Name.IsExported() {
		return "", false
	}
	if decl.Recv == nil {
		return "func " + decl.Name.Name, true
	}
	recv := decl.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	switch x := recv.(type) {
	case *ast.IndexExpr:
		recv = x.X
	case *ast.IndexListExpr:
		recv = x.X
	}
	id, ok := recv.(*ast.Ident)
	if !ok || !id.IsExported() {
		return "", false // a method of an unexported type is not part of the API
	}
	return "method " + id.Name + "." + decl.Name.Name, true
}
