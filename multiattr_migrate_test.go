package singletable

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Moving a design from synthetic index keys to a native index (issue 27 item 5):
// mvOrderV1 is the design before, with a synthetic copy of tenant and status in
// GSI1; mvOrderV2 the design after, in the native index ByTenantStatus on the
// attributes every item already stores, with a migration step that retires the
// synthetic copies.
type mvOrderV1 struct {
	_          struct{} `Type:"MVOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"T#{tenant}#S#{status}" GSI1SK:"{orderId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Tenant     string   `dynamodbav:"tenant"`
	Status     string   `dynamodbav:"status"`
	Created    int64    `dynamodbav:"created"`
}

type mvOrderV2 struct {
	_          struct{} `Type:"MVOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	CustomerID string   `dynamodbav:"customerId"`
	OrderID    string   `dynamodbav:"orderId"`
	Tenant     string   `dynamodbav:"tenant"`
	Status     string   `dynamodbav:"status"`
	Created    int64    `dynamodbav:"created"`
}

// retireGSI1 is the migration step that drops the synthetic copies.
var retireGSI1 = Migration[mvOrderV2]{Steps: []Step[mvOrderV2]{{Raw: func(item RawItem) error {
	delete(item, "GSI1PK")
	delete(item, "GSI1SK")
	return nil
}}}}

// TestMultiAttrMigrateFromSyntheticKeys walks the documented path on a populated
// table, on DynamoDB Local: (1) items written with synthetic GSI1 keys; (2) the
// native index added with UpdateTable (CreateIndexInput) on the attributes they
// already store: it serves every item at once, in the order of its numeric sort
// attribute, without a write of the library's (no backfill); (3) a sweep retires
// the synthetic attributes with a migration step, after which GSI1 holds none of
// the items and the native index still holds them all; (4) writes of the new
// design go to the native index without a key rendered or recomputed.
func TestMultiAttrMigrateFromSyntheticKeys(t *testing.T) {
	ctx := context.Background()
	tbl1, counted := newTestTable(t)
	v1 := MustRegister[mvOrderV1](tbl1)
	const n = 24
	want := map[string][]string{} // tenant#status → order ids by created
	for i := range n {
		o := mvOrderV1{CustomerID: "c" + strconv.Itoa(i%5), OrderID: fmt.Sprintf("o%02d", i),
			Tenant: "t" + strconv.Itoa(i%2), Status: []string{"open", "paid", "shipped"}[i%3], Created: int64(1000 - 10*i)}
		_, err := v1.Put(ctx, o)
		require.NoError(t, err)
		k := o.Tenant + "#" + o.Status
		want[k] = append([]string{o.OrderID}, want[k]...) // created falls as i grows
	}
	synthetic := func() int {
		t.Helper()
		out, err := tbl1.Client().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(tbl1.Name()), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": sAV("T#t0#S#open")}})
		require.NoError(t, err)
		return len(out.Items)
	}
	require.Equal(t, len(want["t0#open"]), synthetic())

	// (2) The new design declares the native index; UpdateTable adds it.
	tbl2, err := NewTable(counted, tbl1.Name(), testTableOptions, WithNativeIndex("ByTenantStatus", NativeKey{
		Partition: []KeyAttribute{S("tenant"), S("status")},
		Sort:      []KeyAttribute{N("created"), S("orderId")},
	}))
	require.NoError(t, err)
	up, err := tbl2.CreateIndexInput("ByTenantStatus")
	require.NoError(t, err)
	_, err = local.Client(t).UpdateTable(ctx, up)
	require.NoError(t, err)
	waitIndexActive(t, counted, tbl1.Name(), "ByTenantStatus")
	v2 := MustRegister[mvOrderV2](tbl2, Migrations(retireGSI1))

	writes := func() int64 {
		return counted.count("PutItem") + counted.count("UpdateItem") + counted.count("BatchWriteItem") + counted.count("TransactWriteItems")
	}
	before := writes()
	ids := func(tenant, status string) []string {
		t.Helper()
		var out []string
		for o, err := range v2.All(ctx, mvOrderV2{Tenant: tenant, Status: status}, On("ByTenantStatus")) {
			require.NoError(t, err)
			out = append(out, o.OrderID)
		}
		return out
	}
	for k, ws := range want {
		tenant, status, _ := strings.Cut(k, "#")
		assert.Equal(t, ws, ids(tenant, status), k)
	}
	assert.Equal(t, before, writes(), "the native index serves the stored items: nothing was written (index reads never write back)")

	// (3) A sweep retires the synthetic attributes.
	stats, err := v2.Sweep(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, n, stats.Migrated)
	assert.Zero(t, synthetic(), "GSI1 holds none of the items")
	raw, err := counted.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl1.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": sAV("CUST#c0"), "SK": sAV("ORDER#o00")}})
	require.NoError(t, err)
	assert.NotContains(t, raw.Item, "GSI1PK")
	assert.NotContains(t, raw.Item, "GSI1SK")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1000"}, raw.Item["created"], "the item's own attributes stay")
	for k, ws := range want {
		tenant, status, _ := strings.Cut(k, "#")
		assert.Equal(t, ws, ids(tenant, status), k)
	}

	// (4) The new design's writes: a Put is in the index at once; an Update of
	// the status moves it, with no key rendered.
	_, err = v2.Put(ctx, mvOrderV2{CustomerID: "c9", OrderID: "new", Tenant: "t0", Status: "open", Created: 5000})
	require.NoError(t, err)
	assert.Equal(t, append(append([]string{}, want["t0#open"]...), "new"), ids("t0", "open"))
	_, err = v2.Update(ctx, mvOrderV2{CustomerID: "c9", OrderID: "new"}, Set("status", "paid"))
	require.NoError(t, err)
	assert.Equal(t, want["t0#open"], ids("t0", "open"))
	assert.Equal(t, append(append([]string{}, want["t0#paid"]...), "new"), ids("t0", "paid"))
	raw, err = counted.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl1.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": sAV("CUST#c9"), "SK": sAV("ORDER#new")}})
	require.NoError(t, err)
	assert.NotContains(t, raw.Item, "GSI1PK", "the new design renders no synthetic key")
}

// TestMultiAttrCreateIndexInputRefused: CreateIndexInput names what it cannot add.
func TestMultiAttrCreateIndexInputRefused(t *testing.T) {
	tbl := offlineTable(t, WithLocalIndex("LSI1", "LSI1SK"))
	_, err := tbl.CreateIndexInput("GSI9")
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, `"GSI9"`)
	_, err = tbl.CreateIndexInput("LSI1")
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "local secondary index")
	in, err := tbl.CreateIndexInput("GSI3")
	require.NoError(t, err)
	require.Len(t, in.GlobalSecondaryIndexUpdates, 1)
	assert.Equal(t, "GSI3", aws.ToString(in.GlobalSecondaryIndexUpdates[0].Create.IndexName))
	assert.Len(t, in.AttributeDefinitions, 1, "the index key's definition only")
}

// waitIndexActive waits until the index of the table is ACTIVE.
func waitIndexActive(t *testing.T, c Client, table, index string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		require.NoError(t, err)
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == index && g.IndexStatus == types.IndexStatusActive {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("index %s of %s not ACTIVE after 30s", index, table)
}
