package design_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/design"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// offlineClient is a client that is never called: describing a table sends nothing.
func offlineClient() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1"})
}

// commerceTable is examples/commerce's model (model.go), copied so that the golden
// file follows the library rather than the example's edits.
func commerceTable(t testing.TB) *singletable.Table {
	type Customer struct {
		_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
		CustomerID string   `dynamodbav:"customerId"`
		Name       string   `dynamodbav:"name"`
		Email      string   `dynamodbav:"email"`
	}
	type Order struct {
		_          struct{}  `Type:"Order" PK:"ORDER#{orderId}" SK:"ORDER" GSI1PK:"CUST#{customerId}" GSI1SK:"{createdAt:rev}#{orderId}" GSI2PK:"STATUS#{status}" GSI2SK:"{createdAt:time}#{orderId}" GSI3PK:"CUST#{customerId}#STATUS#{status}" GSI3SK:"{createdAt:time}#{orderId}"`
		OrderID    string    `dynamodbav:"orderId"`
		CustomerID string    `dynamodbav:"customerId"`
		Status     string    `dynamodbav:"status"`
		CreatedAt  time.Time `dynamodbav:"createdAt"`
		Version    int64     `dynamodbav:"version" singletable:"version"`
	}
	type OrderStatusEvent struct {
		_            struct{}  `Type:"OrderStatusEvent" PK:"ORDER#{orderId}" SK:"ORDER_STATUS_EVT#{orderId}#V#{orderVersion:08}"`
		OrderID      string    `dynamodbav:"orderId"`
		OrderVersion int64     `dynamodbav:"orderVersion"`
		From         string    `dynamodbav:"from"`
		To           string    `dynamodbav:"to"`
		At           time.Time `dynamodbav:"at"`
	}
	type OrderItem struct {
		_          struct{} `Type:"OrderItem" PK:"ORDER#{orderId}" SK:"ITEM#{line:04}"`
		OrderID    string   `dynamodbav:"orderId"`
		Line       int      `dynamodbav:"line"`
		SKU        string   `dynamodbav:"sku"`
		Quantity   int      `dynamodbav:"quantity"`
		PriceCents int64    `dynamodbav:"priceCents"`
		Status     string   `dynamodbav:"itemStatus"`
	}
	table, err := singletable.NewTable(offlineClient(), "commerce",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"),
		singletable.WithIndex("GSI2", "GSI2PK", "GSI2SK"),
		singletable.WithIndex("GSI3", "GSI3PK", "GSI3SK"),
	)
	require.NoError(t, err)
	_, err = singletable.Register[Customer](table)
	require.NoError(t, err)
	_, err = singletable.Register[Order](table)
	require.NoError(t, err)
	_, err = singletable.Register[OrderItem](table)
	require.NoError(t, err)
	_, err = singletable.Register[OrderStatusEvent](table)
	require.NoError(t, err)
	return table
}

// githubTable is examples/github's model (model.go), issues at schema version 2.
func githubTable(t testing.TB) *singletable.Table {
	type Repo struct {
		_           struct{}  `Type:"Repo" PK:"REPO#{owner}#{name}" SK:"REPO#{owner}#{name}"`
		Owner       string    `dynamodbav:"owner"`
		Name        string    `dynamodbav:"name"`
		Description string    `dynamodbav:"description,omitempty"`
		CreatedAt   time.Time `dynamodbav:"createdAt"`
		IssueCount  int64     `dynamodbav:"issueCount"`
	}
	type Issue struct {
		_         struct{}  `Type:"Issue" PK:"REPO#{owner}#{repo}" SK:"ISSUE#{number:08}" GSI4PK:"REPO#{owner}#{repo}" GSI4SK:"ISSUE#{status}#{number:08}" GSI5PK:"REPO#{owner}#{repo}" GSI5SK:"PRIORITY#{priority}#{number:08}"`
		Owner     string    `dynamodbav:"owner"`
		Repo      string    `dynamodbav:"repo"`
		Number    int64     `dynamodbav:"number"`
		Title     string    `dynamodbav:"title"`
		Author    string    `dynamodbav:"author"`
		Status    string    `dynamodbav:"status"`
		Labels    []string  `dynamodbav:"labels,omitempty"`
		Priority  string    `dynamodbav:"priority,omitempty"`
		CreatedAt time.Time `dynamodbav:"createdAt"`
	}
	table, err := singletable.NewTable(offlineClient(), "github",
		singletable.WithIndex("GSI4", "GSI4PK", "GSI4SK"),
		singletable.WithIndex("GSI5", "GSI5PK", "GSI5SK"),
	)
	require.NoError(t, err)
	t.Cleanup(table.Close)
	_, err = singletable.Register[Repo](table)
	require.NoError(t, err)
	_, err = singletable.Register[Issue](table, singletable.Migrations(singletable.Migration[Issue]{
		Steps: []singletable.Step[Issue]{{Typed: func(is *Issue) error {
			if is.Priority == "" {
				is.Priority = "low"
			}
			return nil
		}}},
	}))
	require.NoError(t, err)
	return table
}

// ticket is examples/tickets' model (main.go): a native index keyed by the
// tickets' own attributes.
type ticket struct {
	_        struct{}  `Type:"Ticket" PK:"TICKET#{ticketId}" SK:"TICKET"`
	TicketID string    `dynamodbav:"ticketId"`
	Tenant   string    `dynamodbav:"tenant"`
	Status   string    `dynamodbav:"status,omitempty"`
	Priority int       `dynamodbav:"priority"`
	Opened   time.Time `dynamodbav:"opened,unixtime"`
	Title    string    `dynamodbav:"title"`
}

func ticketsTable(t testing.TB) *singletable.Table {
	t.Helper()
	table, err := singletable.NewTable(offlineClient(), "tickets",
		singletable.WithNativeIndex("ByTenantStatus", singletable.NativeKey{
			Partition: []singletable.KeyAttribute{singletable.S("tenant"), singletable.S("status")},
			Sort:      []singletable.KeyAttribute{singletable.N("priority"), singletable.N("opened")},
		}))
	require.NoError(t, err)
	singletable.MustRegister[ticket](table)
	return table
}

// golden compares got with testdata/describe/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", "describe", name), "Describe", got)
}

// goldenFile compares got with the file at path, or rewrites it with -update;
// run names the tests that write it.
func goldenFile(t *testing.T, path, run, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update to create it", run)
	require.Equal(t, string(want), got, "%s is stale: run go test -run %s -update and review the diff", path, run)
}

func TestDescribeGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table func(testing.TB) *singletable.Table
	}{
		{"commerce", commerceTable},
		{"github", githubTable},
		{"tickets", ticketsTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.table(t).Describe()
			golden(t, tc.name+".md.golden", d.Markdown())
			golden(t, tc.name+".mmd.golden", d.Mermaid())
			require.Equal(t, d.Markdown(), d.String())
			require.Contains(t, d.Markdown(), "```mermaid\n"+d.Mermaid()+"```\n")
		})
	}
}

// patternsOf returns the patterns that read exactly these entities.
func patternsOf(d *design.Design, entities ...string) []design.AccessPattern {
	var out []design.AccessPattern
	for _, p := range d.Patterns {
		if slices.Equal(p.Entities, entities) {
			out = append(out, p)
		}
	}
	return out
}

// TestDescribeReference002 describes reference 002's own design, which nests an
// order's line items under the order's sort key in the customer's partition: the
// aggregate is an SKTree read, and a query of orders also reads their line items.
func TestDescribeReference002(t *testing.T) {
	type CustomerProfile struct {
		_          struct{} `Type:"CustomerProfile" PK:"CUST#{customerId}" SK:"PROFILE#{customerId}"`
		CustomerID string   `dynamodbav:"customerId"`
	}
	type CustomerOrder struct {
		_          struct{}  `Type:"CustomerOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"CUST#{customerId}" GSI1SK:"ORDER#{createdAt}#{orderId}" GSI2PK:"STATUS#{status}" GSI2SK:"ORDER#{createdAt}#CUST#{customerId}#{orderId}"`
		CustomerID string    `dynamodbav:"customerId"`
		OrderID    string    `dynamodbav:"orderId"`
		Status     string    `dynamodbav:"status"`
		CreatedAt  time.Time `dynamodbav:"createdAt"`
		Version    int       `dynamodbav:"version" singletable:"version"`
	}
	type OrderLineItem struct {
		_          struct{} `Type:"OrderLineItem" PK:"CUST#{customerId}" SK:"ORDER#{orderId}#ITEM#{itemId}"`
		CustomerID string   `dynamodbav:"customerId"`
		OrderID    string   `dynamodbav:"orderId"`
		ItemID     string   `dynamodbav:"itemId"`
	}
	type StatusEvent struct {
		_          struct{} `Type:"StatusEvent" PK:"CUST#{customerId}" SK:"ORDER_STATUS_EVT#{orderId}#V#{orderVersion}"`
		CustomerID string   `dynamodbav:"customerId"`
		OrderID    string   `dynamodbav:"orderId"`
		Version    int      `dynamodbav:"orderVersion"`
	}
	table, err := singletable.NewTable(offlineClient(), "ref002",
		singletable.WithIndex("gsi_customer_orders", "GSI1PK", "GSI1SK"),
		singletable.WithIndex("gsi_status_orders", "GSI2PK", "GSI2SK"))
	require.NoError(t, err)
	_, err = singletable.Register[CustomerProfile](table)
	require.NoError(t, err)
	_, err = singletable.Register[CustomerOrder](table)
	require.NoError(t, err)
	_, err = singletable.Register[OrderLineItem](table)
	require.NoError(t, err)
	_, err = singletable.Register[StatusEvent](table, singletable.Migrations(singletable.Migration[StatusEvent]{
		Steps: []singletable.Step[StatusEvent]{{}, {}}, WriteBack: singletable.WriteBackOff,
	}))
	require.NoError(t, err)
	d := table.Describe()

	t.Run("entities", func(t *testing.T) {
		var names []string
		for _, e := range d.Entities {
			names = append(names, e.Name)
		}
		require.Equal(t, []string{"CustomerOrder", "CustomerProfile", "OrderLineItem", "StatusEvent"}, names)
		order := d.Entities[0]
		require.Equal(t, "version", order.Version)
		require.Equal(t, []design.Key{
			{PartitionKey: "PK", Partition: "CUST#{customerId}", SortKey: "SK", Sort: "ORDER#{orderId}"},
			{Index: "gsi_customer_orders", PartitionKey: "GSI1PK", Partition: "CUST#{customerId}", SortKey: "GSI1SK", Sort: "ORDER#{createdAt}#{orderId}"},
			{Index: "gsi_status_orders", PartitionKey: "GSI2PK", Partition: "STATUS#{status}", SortKey: "GSI2SK", Sort: "ORDER#{createdAt}#CUST#{customerId}#{orderId}"},
		}, order.Keys)
		ev := d.Entities[3]
		require.Equal(t, 3, ev.Schema)
		require.Equal(t, "off", ev.WriteBack)
		require.Empty(t, ev.Version)
	})

	t.Run("patterns", func(t *testing.T) {
		tests := []struct {
			entities  []string
			index     string
			operation string
			key       string
			call      string
		}{
			{[]string{"CustomerProfile"}, "", "GetItem", `PK = "CUST#{customerId}" AND SK = "PROFILE#{customerId}"`, "Get(k); BatchGet(ks)"},
			{[]string{"CustomerOrder"}, "", "Query", `PK = "CUST#{customerId}" AND begins_with(SK, "ORDER#")`, "Query(k)"},
			{[]string{"CustomerOrder"}, "gsi_customer_orders", "Query", `GSI1PK = "CUST#{customerId}" AND begins_with(GSI1SK, "ORDER#")`, `Query(k, On("gsi_customer_orders")); Query(k, On("gsi_customer_orders"), SKBetween(lo, hi))`},
			{[]string{"StatusEvent"}, "", "Query", `PK = "CUST#{customerId}" AND begins_with(SK, "ORDER_STATUS_EVT#")`, "Query(k)"},
			{[]string{"StatusEvent"}, "", "Query", `PK = "CUST#{customerId}" AND begins_with(SK, "ORDER_STATUS_EVT#{orderId}#V#")`, "Query(k, SKBeginsWith(k))"},
			{[]string{"CustomerOrder", "CustomerProfile", "OrderLineItem", "StatusEvent"}, "", "Query", `PK = "CUST#{customerId}"`, "Table.Query(k); Collection[C].Load(k)"},
			{[]string{"CustomerOrder", "OrderLineItem"}, "", "Query", `PK = "CUST#{customerId}" AND SK BETWEEN "ORDER#{orderId}" AND "ORDER#{orderId}#U+10FFFF"`, "Table.Query(k, SKTree(k)); Collection[C].Load(k, SKTree(k))"},
		}
		for _, tc := range tests {
			t.Run(strings.Join(tc.entities, "+")+"/"+tc.key, func(t *testing.T) {
				found := false
				for _, p := range patternsOf(d, tc.entities...) {
					if p.Index == tc.index && p.KeyCondition == tc.key {
						found = true
						require.Equal(t, tc.operation, p.Operation)
						require.Equal(t, tc.call, p.Call)
					}
				}
				require.True(t, found, "no pattern %v %q in %+v", tc.entities, tc.key, d.Patterns)
			})
		}
		// The global status feed is one query: {status} is in the partition key.
		require.Len(t, slices.DeleteFunc(patternsOf(d, "CustomerOrder"), func(p design.AccessPattern) bool { return p.Index != "gsi_status_orders" }), 1)
	})

	t.Run("notes", func(t *testing.T) {
		notes := strings.Join(d.Notes, "\n")
		require.Contains(t, notes, `A query of CustomerOrder items in the partition `+"`CUST#{customerId}`"+` (begins_with SK "ORDER#") also reads the OrderLineItem items there`)
		require.Contains(t, notes, "StatusEvent's SK `ORDER_STATUS_EVT#{orderId}#V#{orderVersion}`: {orderVersion} is an integer without zero padding")
		require.NotContains(t, notes, "hot partition")
	})
}

func TestDescribeSharding(t *testing.T) {
	type Event struct {
		_       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8"`
		Day     time.Time `dynamodbav:"day"`
		At      time.Time `dynamodbav:"at"`
		EventID string    `dynamodbav:"eventId"`
		Shard   int       `dynamodbav:"shard" singletable:"shard"`
	}
	type HashedEvent struct {
		_       struct{}  `Type:"HashedEvent" PK:"HEVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" GSI1PK:"ALL" GSI1SK:"{at:unixms}#{eventId}" singletable:"shards=4,shardBy=eventId"`
		Day     time.Time `dynamodbav:"day"`
		At      time.Time `dynamodbav:"at"`
		EventID string    `dynamodbav:"eventId"`
		Shard   int       `dynamodbav:"shard" singletable:"shard"`
	}
	table, err := singletable.NewTable(offlineClient(), "events", singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
	require.NoError(t, err)
	_, err = singletable.Register[Event](table)
	require.NoError(t, err)
	_, err = singletable.Register[HashedEvent](table)
	require.NoError(t, err)
	d := table.Describe()

	require.Equal(t, 8, d.Entities[0].Shards)
	require.Equal(t, "shard", d.Entities[0].ShardAttribute)
	require.Empty(t, d.Entities[0].ShardBy)
	require.Equal(t, []string{"eventId"}, d.Entities[1].ShardBy)

	ev := patternsOf(d, "Event")
	require.Len(t, ev, 2)
	require.Contains(t, ev[0].Description, "one BatchGetItem over the 8 shards")
	require.Equal(t, "Query per shard (8), merged", ev[1].Operation)
	require.Equal(t, `QueryShards(k, Days("day", from, to)); QueryShards(k, Days("day", from, to), SKBetween(lo, hi))`, ev[1].Call)

	hashed := patternsOf(d, "HashedEvent")
	require.Len(t, hashed, 3)
	require.Contains(t, hashed[0].Description, "the shard is the hash of `eventId`")
	require.Equal(t, "GSI1", hashed[2].Index)
	require.Equal(t, "Query", hashed[2].Operation, "GSI1's partition key holds no shard: one query")

	require.Contains(t, strings.Join(d.Notes, "\n"), "Every HashedEvent item is in the one GSI1 partition `ALL`")
	md := d.Markdown()
	require.Contains(t, md, "| Event | `Event` | - | 8 in `{shard}`, random | - |")
	require.Contains(t, md, "| HashedEvent | `HashedEvent` | - | 4 in `{shard}`, hash of `eventId` | - |")
	require.Contains(t, d.Mermaid(), `e1["Event<br/>8 shards"]`)
}

// TestDescribeEscaping checks that templates holding Markdown or Mermaid syntax
// cannot break the tables or the diagram.
func TestDescribeEscaping(t *testing.T) {
	type Odd struct {
		_  struct{} `Type:"odd\"type" PK:"A|<b>;{id}" SK:"S|x"`
		ID string   `dynamodbav:"id"`
	}
	table, err := singletable.NewTable(offlineClient(), "odd-table", singletable.WithDelimiter(';'))
	require.NoError(t, err)
	_, err = singletable.Register[Odd](table)
	require.NoError(t, err)
	d := table.Describe()
	md, mm := d.Markdown(), d.Mermaid()
	require.Contains(t, md, "| Odd | `odd\"type` | - | - | - |")
	require.Contains(t, md, "| Odd | `A\\|<b>;{id}` | `S\\|x` |")
	require.Contains(t, mm, `e1["Odd (Type odd#quot;type)"]`)
	require.Contains(t, mm, `e1 -->|"PK A|#lt;b#gt;#59;{id}<br/>SK S|x"| base`)
	for _, line := range strings.Split(strings.TrimSpace(md), "\n") {
		if strings.HasPrefix(line, "| ") {
			cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
			require.GreaterOrEqual(t, cells, 3, line)
		}
	}
}

func TestDescribeEmpty(t *testing.T) {
	table, err := singletable.NewTable(offlineClient(), "empty")
	require.NoError(t, err)
	d := table.Describe()
	require.Empty(t, d.Entities)
	require.Empty(t, d.Patterns)
	require.Contains(t, d.Markdown(), "No entity is registered.")
	require.Equal(t, "flowchart LR\n  base[(\"table empty<br/>PK, SK\")]\n", d.Mermaid())
}

// TestDescribeNewOddInput: design.New takes data from anywhere, so data no
// registration would pass (no base key, broken or empty templates, unknown
// fields, an index that does not exist) gives a design, never a panic.
func TestDescribeNewOddInput(t *testing.T) {
	table := design.Table{Name: "odd", PartitionKey: "PK", SortKey: "SK", TypeAttribute: "Type", Delimiter: '#',
		Indexes: []design.Index{{Name: "GSI1", PartitionKey: "G1PK", SortKey: "G1SK", Projection: "INCLUDE", NonKeyAttributes: []string{"a"}}}}
	entities := []design.Entity{
		{Name: "NoKeys", Type: "NoKeys"},
		{Name: "IndexOnly", Type: "IndexOnly", Keys: []design.Key{{Index: "GSI1", PartitionKey: "G1PK", Partition: "X#{a}", SortKey: "G1SK", Sort: "{b"}}},
		{Name: "Broken", Type: "Broken", Keys: []design.Key{
			{PartitionKey: "PK", Partition: "}{", SortKey: "SK", Sort: ""},
			{Index: "NOPE", PartitionKey: "NPK", Partition: "{}", SortKey: "NSK", Sort: "{x:}#{y:0}"},
		}, Fields: []design.Field{{Name: "x", Kind: design.KindInt}, {Name: "", Kind: "weird"}}},
		{Name: "Broken", Type: "Broken2", Keys: []design.Key{{PartitionKey: "PK", Partition: "P", SortKey: "SK", Sort: "{n}#"}}, Shards: 3, ShardAttribute: "n"},
	}
	d := design.New(table, entities)
	require.Len(t, d.Entities, 4)
	require.NotEmpty(t, d.Markdown())
	require.NotEmpty(t, d.Mermaid())
	entities[2].Keys[0].Partition = "changed"
	require.Equal(t, "}{", d.Entities[0].Keys[0].Partition, "New copies what it keeps")
}
