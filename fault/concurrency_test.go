package fault

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrent runs many goroutines through one Injector with every kind
// of fault and a GSI lag, while rules are added and removed and stats read.
// Run it with -race.
func TestConcurrent(t *testing.T) {
	client, inj := newClient(t, func(o *ClientOptions) {
		o.DynamoDB = append(o.DynamoDB, func(o *dynamodb.Options) {
			// Without a retry quota: a storm of faults must not fail calls.
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = 20
				so.RateLimiter = ratelimit.None
				so.Backoff = retry.NewExponentialJitterBackoff(time.Millisecond)
			})
		})
	})
	table := createTable(t, true)
	inj.SetGSILag(Lag{Reads: 2, Duration: 5 * time.Millisecond})
	for _, r := range []Rule{
		{Fault: Throttle(), Rate: 0.1},
		{Fault: ServerError(), Rate: 0.05},
		{Fault: Reset(), Rate: 0.05},
		{Ops: []string{"GetItem", "Query", "PutItem"}, Fault: LoseResponse(), Rate: 0.05},
		{Fault: Unprocessed(0.3), Rate: 0.5},
		{Ops: []string{"TransactWriteItems"}, Fault: TxConflict(), Rate: 0.2},
		{Fault: Delay(time.Millisecond), Rate: 0.1},
	} {
		inj.Add(r)
	}

	const workers, rounds = 8, 8
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				pk := fmt.Sprintf("w%d-%d", w, r)
				_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: entity(pk, fmt.Sprint("P", w), fmt.Sprint(r), "v1")})
				assert.NoError(t, err)
				_, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(pk, "A")})
				assert.NoError(t, err)
				_, err = client.Query(ctx, &dynamodb.QueryInput{
					TableName: aws.String(table), IndexName: aws.String("GSI1"),
					KeyConditionExpression:    aws.String("GSI1PK = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(fmt.Sprint("P", w))},
				})
				assert.NoError(t, err)
				assert.NoError(t, batchWriteAll(ctx, client, table, pk, 5))
				assert.NoError(t, transactUntilDone(ctx, client, table, pk))
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			remove := inj.Add(Rule{Ops: []string{"DescribeTable"}, Fault: Throttle()})
			_ = inj.Stats()
			remove()
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()

	// Every item is there, once, as written.
	got := map[string]string{}
	p := dynamodb.NewScanPaginator(raw(t), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		for _, it := range page.Items {
			got[pkOf(t, it)] = it["v"].(*types.AttributeValueMemberS).Value
		}
	}
	want := map[string]string{}
	for w := range workers {
		for r := range rounds {
			pk := fmt.Sprintf("w%d-%d", w, r)
			want[pk] = "tx"
			for b := range 5 {
				want[fmt.Sprintf("%s-b%d", pk, b)] = "v1"
			}
		}
	}
	require.Equal(t, want, got)
	inj.SetGSILag(Lag{})
	out, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("P0")},
	})
	require.NoError(t, err)
	require.Len(t, out.Items, rounds)

	st := inj.Stats()
	t.Logf("stats: %+v", st)
	for _, k := range []Kind{KindThrottle, KindServerError, KindReset, KindLoseResponse, KindUnprocessed, KindTxConflict, KindDelay} {
		require.Positive(t, st.Faults[k], k)
	}
	for op, n := range st.Forwarded {
		require.LessOrEqual(t, n, st.Requests[op], op)
	}
}

// batchWriteAll puts n items pk-b0.. with BatchWriteItem, sending
// unprocessed items again until none is left.
func batchWriteAll(ctx context.Context, c *dynamodb.Client, table, pk string, n int) error {
	var ws []types.WriteRequest
	for b := range n {
		ws = append(ws, types.WriteRequest{PutRequest: &types.PutRequest{Item: entity(fmt.Sprintf("%s-b%d", pk, b), "B", fmt.Sprint(b), "v1")}})
	}
	items := map[string][]types.WriteRequest{table: ws}
	for range 50 {
		out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: items})
		if err != nil {
			return err
		}
		if len(out.UnprocessedItems) == 0 {
			return nil
		}
		items = out.UnprocessedItems
	}
	return errors.New("unprocessed items left after 50 rounds")
}

// transactUntilDone sets v=tx on pk (and checks the item exists) with
// TransactWriteItems, again while it is cancelled by a conflict.
func transactUntilDone(ctx context.Context, c *dynamodb.Client, table, pk string) error {
	for range 50 {
		_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String(table), Key: key(pk, "A"),
				UpdateExpression:          aws.String("SET v = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("tx")}}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: key(pk+"-b0", "A"),
				ConditionExpression: aws.String("attribute_exists(PK)")}},
		}})
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return err
		}
	}
	return errors.New("transaction still cancelled after 50 tries")
}
