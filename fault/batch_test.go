package fault

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// batchWrite returns a BatchWriteItem putting items PK=p00..p<n-1>.
func batchWrite(table string, n int) *dynamodb.BatchWriteItemInput {
	var ws []types.WriteRequest
	for k := range n {
		ws = append(ws, types.WriteRequest{PutRequest: &types.PutRequest{Item: key(fmt.Sprintf("p%02d", k), "A")}})
	}
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: ws}}
}

func pkOf(t *testing.T, it map[string]types.AttributeValue) string {
	t.Helper()
	v, ok := it["PK"].(*types.AttributeValueMemberS)
	require.True(t, ok, "PK of %v", it)
	return v.Value
}

func TestUnprocessedBatchWrite(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Fault: Unprocessed(0.3), Times: 1})
	out, err := client.BatchWriteItem(t.Context(), batchWrite(table, 25))
	require.NoError(t, err)
	unprocessed := out.UnprocessedItems[table]
	require.Contains(t, []int{7, 8}, len(unprocessed), "0.3 x 25 = 7.5, rounded at random")
	held := map[string]bool{}
	for _, w := range unprocessed {
		require.NotNil(t, w.PutRequest)
		held[pkOf(t, w.PutRequest.Item)] = true
	}
	for k := range 25 {
		pk := fmt.Sprintf("p%02d", k)
		if held[pk] {
			require.Nil(t, itemAt(t, table, pk, "A"), "%s is unprocessed, so not written", pk)
		} else {
			require.NotNil(t, itemAt(t, table, pk, "A"), "%s is processed", pk)
		}
	}
	// Sending the unprocessed items again, as callers must, writes them.
	out, err = client.BatchWriteItem(t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems})
	require.NoError(t, err)
	require.Empty(t, out.UnprocessedItems)
	for pk := range held {
		require.NotNil(t, itemAt(t, table, pk, "A"))
	}
	st := inj.Stats()
	require.Equal(t, 2, st.Forwarded["BatchWriteItem"])
	require.Equal(t, 1, st.Faults[KindUnprocessed])
}

func TestUnprocessedSameSeedSameItems(t *testing.T) {
	table := createTable(t, false)
	var runs [][]string
	for range 2 {
		client, inj := newClient(t, func(o *ClientOptions) { o.Injector.Seed = 42 })
		require.Equal(t, uint64(42), inj.Seed())
		inj.Add(Rule{Fault: Unprocessed(0.5), Rate: 0.9})
		out, err := client.BatchWriteItem(t.Context(), batchWrite(table, 20))
		require.NoError(t, err)
		var pks []string
		for _, w := range out.UnprocessedItems[table] {
			pks = append(pks, pkOf(t, w.PutRequest.Item))
		}
		slices.Sort(pks)
		runs = append(runs, pks)
	}
	require.NotEmpty(t, runs[0])
	require.Equal(t, runs[0], runs[1])
}

func TestUnprocessedBatchGet(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	_, err := client.BatchWriteItem(t.Context(), batchWrite(table, 20))
	require.NoError(t, err)
	var keys []map[string]types.AttributeValue
	for k := range 20 {
		keys = append(keys, key(fmt.Sprintf("p%02d", k), "A"))
	}
	inj.Add(Rule{Ops: []string{"BatchGetItem"}, Fault: Unprocessed(0.5), Times: 1})
	out, err := client.BatchGetItem(t.Context(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		table: {Keys: keys, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("#pk"),
			ExpressionAttributeNames: map[string]string{"#pk": "PK"}},
	}})
	require.NoError(t, err)
	left, ok := out.UnprocessedKeys[table]
	require.True(t, ok)
	require.Len(t, left.Keys, 10)
	require.True(t, aws.ToBool(left.ConsistentRead), "the table's parameters come back with its keys")
	require.Equal(t, "#pk", aws.ToString(left.ProjectionExpression))
	require.Equal(t, map[string]string{"#pk": "PK"}, left.ExpressionAttributeNames)
	got := map[string]bool{}
	for _, it := range out.Responses[table] {
		require.Len(t, it, 1, "projected to PK")
		got[pkOf(t, it)] = true
	}
	for _, k := range left.Keys {
		require.False(t, got[pkOf(t, k)], "a key is either answered or unprocessed")
		got[pkOf(t, k)] = true
	}
	require.Len(t, got, 20)
}

func TestUnprocessedAllIsThrottle(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Fault: Unprocessed(1), Times: 1})
	out, err := client.BatchWriteItem(t.Context(), batchWrite(table, 3))
	require.NoError(t, err, "the SDK retried the throttled batch")
	require.Empty(t, out.UnprocessedItems)
	st := inj.Stats()
	require.Equal(t, 2, st.Requests["BatchWriteItem"])
	require.Equal(t, 1, st.Forwarded["BatchWriteItem"])

	inj.Add(Rule{Fault: Unprocessed(1)})
	_, err = client.BatchWriteItem(t.Context(), batchWrite(table, 3))
	require.ErrorAs(t, err, new(*types.ProvisionedThroughputExceededException))
}

func TestUnprocessedOnlyOnBatches(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Fault: Unprocessed(1)})
	_, err := client.PutItem(t.Context(), putInput(table, "a"))
	require.NoError(t, err)
	require.Zero(t, inj.Stats().Faults[KindUnprocessed])
}
