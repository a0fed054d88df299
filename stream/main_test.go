package stream

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/singletable/singletable/internal/localtest"
)

// The test harness of package stream: DynamoDB Local, tables, the entities the
// records are of, and the goroutine leak check.

// local is the one DynamoDB Local of this test binary, started on first use.
var local localtest.Shared

// TestMain runs the tests, stops DynamoDB Local, then fails the run if any
// goroutine is left behind (see internal/leakcheck).
// With procWorkerEnv set, the binary is a worker process of the process tests
// (process_test.go) instead.
func TestMain(m *testing.M) {
	if os.Getenv(procWorkerEnv) != "" {
		os.Exit(procWorker())
	}
	os.Exit(leakcheck.After(local.Run(m)))
}

// Aliases for the root package's names the tests use most.
type (
	Table        = singletable.Table
	StreamRecord = singletable.StreamRecord
	RawItem      = singletable.RawItem
)

// The entities the stream tests write and decode.
type tCustomer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE" GSI3PK:"EMAIL#{email}"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
	Email      string   `dynamodbav:"email,omitempty"`
}

type tOrder struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}" GSI2PK:"CUST#{customerId}" GSI2SK:"{createdAt:rev}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status,omitempty"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Total      int64     `dynamodbav:"total"`
	Tags       []string  `dynamodbav:"tags,omitempty"`
	Note       string    `dynamodbav:"note,omitempty"`
	Count      int       `dynamodbav:"count"`
}

var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// registerAll registers the test entities on tbl.
func registerAll(t testing.TB, tbl *Table) (*singletable.Entity[tCustomer], *singletable.Entity[tOrder]) {
	t.Helper()
	c, err := singletable.Register[tCustomer](tbl)
	require.NoError(t, err)
	o, err := singletable.Register[tOrder](tbl)
	require.NoError(t, err)
	return c, o
}

func order(cust string, n int) tOrder {
	return tOrder{CustomerID: cust, OrderID: "o" + string(rune('0'+n)), Status: "PENDING", CreatedAt: t0.Add(time.Duration(n) * time.Minute), Total: int64(100 * n)}
}

// testTableOptions is the table layout the tests use: PK/SK and three GSIs.
var testTableOptions = []singletable.TableOption{
	singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"),
	singletable.WithIndex("GSI2", "GSI2PK", "GSI2SK"),
	singletable.WithIndex("GSI3", "GSI3PK", ""),
}

// newTestTable creates a table unique to the test on DynamoDB Local, deleted
// when the test ends.
func newTestTable(t *testing.T, opts ...singletable.TableOption) *Table {
	t.Helper()
	return createTable(t, opts)
}

// newStreamTable is newTestTable with the table's stream on.
func newStreamTable(t *testing.T) *Table {
	t.Helper()
	return createTable(t, nil, singletable.EnableStream())
}

func createTable(t *testing.T, opts []singletable.TableOption, edits ...func(*dynamodb.CreateTableInput)) *Table {
	t.Helper()
	tbl, err := singletable.NewTable(local.Client(t), localtest.TableName(t), append(slices.Clone(testTableOptions), opts...)...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, tbl.CreateTable(ctx, edits...))
	localtest.DeleteAtCleanup(t, tbl)
	return tbl
}

// offlineTable is a table for tests that send nothing to DynamoDB.
func offlineTable(t testing.TB, opts ...singletable.TableOption) *Table {
	t.Helper()
	tbl, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "offline", append(slices.Clone(testTableOptions), opts...)...)
	require.NoError(t, err)
	return tbl
}

// noLeaks fails the test if it leaves goroutines behind. The keep-alive
// connections of the shared HTTP client are the client's pool, not the test's.
func noLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	opts = append(opts, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// eventually waits up to five seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func sAV(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
