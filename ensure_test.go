package singletable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

// ensureOrder is an entity with a TTL field, so that EnsureTable turns TTL on.
type ensureOrder struct {
	_       struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{orderId}"`
	ID      string   `dynamodbav:"customerId"`
	OrderID string   `dynamodbav:"orderId"`
	Status  string   `dynamodbav:"status,omitempty"`
	Expires int64    `dynamodbav:"expires,omitempty" singletable:"ttl"`
}

// ensureModel is a table of ensureOrder with GSI1 at name, on DynamoDB Local.
func ensureModel(t *testing.T, name string, opts ...TableOption) *Table {
	tbl, _ := ensureEntity(t, name, opts...)
	return tbl
}

// ensureEntity is ensureModel with its entity.
func ensureEntity(t *testing.T, name string, opts ...TableOption) (*Table, *Entity[ensureOrder]) {
	t.Helper()
	tbl, err := NewTable(local.Client(t), name, append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	e, err := Register[ensureOrder](tbl)
	require.NoError(t, err)
	localtest.DeleteAtCleanup(t, tbl)
	return tbl, e
}

// TestEnsureTableTwice: the first call creates the table (with TTL on), the
// second finds it as the model says and returns nil; Drift finds nothing; a
// write then works (issue 38: the quick start runs twice).
func TestEnsureTableTwice(t *testing.T) {
	ctx := t.Context()
	tbl, orders := ensureEntity(t, localtest.TableName(t))
	require.NoError(t, tbl.EnsureTable(ctx))
	again := ensureModel(t, tbl.Name()) // a second run of the program
	require.NoError(t, again.EnsureTable(ctx), "the second run")
	diffs, err := tbl.Drift(ctx)
	require.NoError(t, err)
	assert.Empty(t, diffs)
	ttl, err := tbl.Client().(*dynamodb.Client).DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	assert.Equal(t, "expires", aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	_, err = orders.Put(ctx, ensureOrder{ID: "c1", OrderID: "o1", Status: "NEW"})
	require.NoError(t, err)
}

// TestEnsureTableConcurrent: processes starting at once each call EnsureTable;
// every call succeeds, one table is made.
func TestEnsureTableConcurrent(t *testing.T) {
	ctx := t.Context()
	name := localtest.TableName(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		tbl := ensureModel(t, name)
		wg.Go(func() { errs[i] = tbl.EnsureTable(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "caller %d", i)
	}
}

// TestEnsureTableDrift: a table that exists and differs from the model is left
// as it is, and EnsureTable's error names every difference and its fix: an
// index removed by hand, then a table made by hand with another projection,
// key type, stream and no TTL.
func TestEnsureTableDrift(t *testing.T) {
	ctx := t.Context()
	tbl := ensureModel(t, localtest.TableName(t))
	require.NoError(t, tbl.EnsureTable(ctx))
	c := tbl.Client().(*dynamodb.Client)
	_, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(tbl.Name()),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("GSI1")}}}})
	require.NoError(t, err)
	waitIndexGone(t, c, tbl.Name(), "GSI1")

	err = tbl.EnsureTable(ctx)
	require.ErrorIs(t, err, ErrDrift)
	var de *DriftError
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Differences, 1, err.Error())
	d := de.Differences[0]
	assert.Equal(t, "index GSI1", d.What)
	assert.Equal(t, "global index: GSI1PK HASH, GSI1SK RANGE; ALL", d.Model)
	assert.Empty(t, d.Table)
	assert.Contains(t, d.Fix, `Table.CreateIndexInput("GSI1")`)
	assert.Contains(t, err.Error(), `singletable: EnsureTable: table "`+tbl.Name()+`" exists and differs from the model in 1 way; index GSI1: the model has global index`)

	// The index added back as the fix says: no drift.
	add, err := tbl.CreateIndexInput("GSI1")
	require.NoError(t, err)
	_, err = c.UpdateTable(ctx, add)
	require.NoError(t, err)
	require.NoError(t, tbl.EnsureTable(ctx))

	// A table made by other means: GSI1 keys only, GSI1SK a number, a stream
	// and an extra index, no TTL.
	other := localtest.TableName(t)
	s, n := types.ScalarAttributeTypeS, types.ScalarAttributeTypeN
	_, err = c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(other),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: s}, {AttributeName: aws.String("SK"), AttributeType: s},
			{AttributeName: aws.String("GSI1PK"), AttributeType: s}, {AttributeName: aws.String("GSI1SK"), AttributeType: n},
			{AttributeName: aws.String("GSI9PK"), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("GSI1"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
				KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange}}},
			{IndexName: aws.String("GSI9"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"b", "a"}},
				KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("GSI9PK"), KeyType: types.KeyTypeHash}}},
		},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly},
	})
	require.NoError(t, err)
	byHand := ensureModel(t, other)
	err = byHand.EnsureTable(ctx, EnableStream())
	require.ErrorAs(t, err, &de)
	assert.Equal(t, []string{
		"attribute GSI1SK: the model has type S, the table has type N",
		"index GSI1 projection: the model has ALL, the table has KEYS_ONLY",
		"index GSI2: the model has global index: GSI2PK HASH, GSI2SK RANGE; ALL, the table has none",
		"index GSI3: the model has global index: GSI3PK HASH; ALL, the table has none",
		"index GSI9: the model has none, the table has global index: GSI9PK HASH; INCLUDE a, b",
		"stream: the model has NEW_AND_OLD_IMAGES, the table has KEYS_ONLY",
		"TTL: the model has expires, the table has none",
	}, diffTexts(de.Differences), err.Error())
	assert.Contains(t, err.Error(), "turn it on with Table.EnableTTL")
	for _, d := range de.Differences {
		assert.NotEmpty(t, d.Fix, d.What)
	}
	diffs, err := byHand.Drift(ctx, EnableStream())
	require.NoError(t, err)
	assert.Equal(t, de.Differences, diffs, "Drift reports what EnsureTable does")
	_, err = c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(other)})
	require.NoError(t, err, "the table is left as it is")
}

// TestDriftMissingTable: Drift of a table that does not exist names it and how
// to create it, and unwraps to the SDK's ResourceNotFoundException.
func TestDriftMissingTable(t *testing.T) {
	tbl := ensureModel(t, localtest.TableName(t))
	_, err := tbl.Drift(t.Context())
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), `table "`+tbl.Name()+`" does not exist`)
	assert.Contains(t, err.Error(), "create it with Table.EnsureTable")
	assert.False(t, errors.Is(err, ErrDrift))
}

func diffTexts(ds []Difference) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// waitIndexGone waits until DescribeTable of table lists no index name.
func waitIndexGone(t *testing.T, c *dynamodb.Client, table, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		require.NoError(t, err)
		gone := true
		for _, ix := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(ix.IndexName) == name {
				gone = false
			}
		}
		if gone {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("index %s of %s not gone: %v", name, table, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestEnsureTableFinishesTTL: a table the model made whose creator stopped
// before turning TTL on (CreateTable's last step) differs only in its TTL:
// EnsureTable turns it on, as the creator would have; Drift, which changes
// nothing, reports it until then.
func TestEnsureTableFinishesTTL(t *testing.T) {
	ctx := t.Context()
	tbl := ensureModel(t, localtest.TableName(t))
	in, err := tbl.CreateTableInput()
	require.NoError(t, err)
	c := tbl.Client().(*dynamodb.Client)
	_, err = c.CreateTable(ctx, in) // the table alone, as a creator that stopped there leaves it
	require.NoError(t, err)
	diffs, err := tbl.Drift(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"TTL: the model has expires, the table has none"}, diffTexts(diffs))
	require.NoError(t, tbl.EnsureTable(ctx))
	diffs, err = tbl.Drift(ctx)
	require.NoError(t, err)
	assert.Empty(t, diffs)
}
