package singletable

import (
	"context"
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/singletable/singletable/internal/localtest"
)

// local is the one DynamoDB Local of this test binary, started on first use.
var local localtest.Shared

// TestMain runs the tests, stops DynamoDB Local, then fails the run if any
// goroutine is left behind (see internal/leakcheck).
func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }

// countingClient counts calls per operation on the way to a real client.
type countingClient struct {
	Client
	calls map[string]*atomic.Int64
}

func newCountingClient(c Client) *countingClient {
	cc := &countingClient{Client: c, calls: map[string]*atomic.Int64{}}
	for _, op := range []string{"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "BatchGetItem", "BatchWriteItem", "TransactWriteItems"} {
		cc.calls[op] = &atomic.Int64{}
	}
	return cc
}

// ClientTraits declares the wrapped client's traits: countingClient passes
// optFns and outputs through unchanged.
func (c *countingClient) ClientTraits() ClientTraits { return traitsOf(c.Client) }

func (c *countingClient) count(op string) int64 { return c.calls[op].Load() }

func (c *countingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.calls["GetItem"].Add(1)
	return c.Client.GetItem(ctx, in, o...)
}

func (c *countingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.calls["PutItem"].Add(1)
	return c.Client.PutItem(ctx, in, o...)
}

func (c *countingClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.calls["UpdateItem"].Add(1)
	return c.Client.UpdateItem(ctx, in, o...)
}

func (c *countingClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.calls["DeleteItem"].Add(1)
	return c.Client.DeleteItem(ctx, in, o...)
}

func (c *countingClient) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.calls["Query"].Add(1)
	return c.Client.Query(ctx, in, o...)
}

func (c *countingClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.calls["BatchGetItem"].Add(1)
	return c.Client.BatchGetItem(ctx, in, o...)
}

func (c *countingClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.calls["BatchWriteItem"].Add(1)
	return c.Client.BatchWriteItem(ctx, in, o...)
}

func (c *countingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.calls["TransactWriteItems"].Add(1)
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// testTableOptions is the table layout most tests use: PK/SK and three GSIs.
var testTableOptions TableOption = tableOptionFunc(func(o *TableOptions) error {
	o.Indexes = []Index{
		{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"},
		{Name: "GSI2", PartitionKey: "GSI2PK", SortKey: "GSI2SK"},
		{Name: "GSI3", PartitionKey: "GSI3PK"},
	}
	return nil
})

// createTestTable creates tbl on DynamoDB Local, with 30 s to do it, and
// deletes it when the test ends.
func createTestTable(t *testing.T, tbl *Table) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, tbl.CreateTable(ctx))
	localtest.DeleteAtCleanup(t, tbl)
}

// newTestTable creates a table unique to the test on DynamoDB Local, deleted when
// the test ends, and returns it with the counting client it calls through.
func newTestTable(t *testing.T, opts ...TableOption) (*Table, *countingClient) {
	t.Helper()
	client := newCountingClient(local.Client(t))
	tbl, err := NewTable(client, localtest.TableName(t), append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	createTestTable(t, tbl)
	return tbl, client
}

// offlineTable is a table for tests that send nothing (registration, rendering).
func offlineTable(t testing.TB, opts ...TableOption) *Table {
	t.Helper()
	tbl, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "offline", append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	return tbl
}

type typesAV = types.AttributeValue

func sAV(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func reflectValue[T any](p *T) reflect.Value { return reflect.ValueOf(p).Elem() }
