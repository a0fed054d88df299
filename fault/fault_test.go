package fault

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"
)

func TestThrottle(t *testing.T) {
	t.Run("exhausted", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Throttle()})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		var ptee *types.ProvisionedThroughputExceededException
		require.ErrorAs(t, err, &ptee)
		require.Contains(t, ptee.ErrorMessage(), "provisioned throughput")
		var maxErr *retry.MaxAttemptsError
		require.ErrorAs(t, err, &maxErr)
		require.Equal(t, 3, maxErr.Attempt, "the SDK's default is 3 attempts")
		st := inj.Stats()
		require.Equal(t, 3, st.Requests["PutItem"])
		require.Zero(t, st.Forwarded["PutItem"])
		require.Equal(t, 3, st.Faults[KindThrottle])
		require.Nil(t, itemAt(t, table, "a", "A"), "a throttled write is not written")
	})
	t.Run("transient", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Throttle(), Times: 2})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.NoError(t, err, "the third attempt goes through")
		st := inj.Stats()
		require.Equal(t, 3, st.Requests["PutItem"])
		require.Equal(t, 1, st.Forwarded["PutItem"])
		require.NotNil(t, itemAt(t, table, "a", "A"))
	})
	t.Run("MaxAttempts", func(t *testing.T) {
		client, inj := newClient(t, func(o *ClientOptions) { o.MaxAttempts = 5 })
		table := createTable(t, false)
		inj.Add(Rule{Fault: Throttle()})
		_, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("a", "A")})
		require.ErrorAs(t, err, new(*types.ProvisionedThroughputExceededException))
		require.Equal(t, 5, inj.Stats().Requests["GetItem"])
	})
}

// TestSDKRetries shows which error answers the SDK's standard retryer
// retries: what the caller sees after how many attempts.
func TestSDKRetries(t *testing.T) {
	table := createTable(t, false)
	tests := []struct {
		name     string
		fault    Fault
		attempts int
		as       any // a pointer to the error type errors.As must find
	}{
		{"ProvisionedThroughputExceeded", Throttle(), 3, new(*types.ProvisionedThroughputExceededException)},
		{"ThrottlingException", APIError(400, "ThrottlingException", "Rate of requests exceeds the allowed throughput."), 3, new(*types.ThrottlingException)},
		{"RequestLimitExceeded", APIError(400, "RequestLimitExceeded", "Throughput exceeds the current throughput limit for your account."), 3, new(*types.RequestLimitExceeded)},
		{"TransactionInProgress is a throttle code", APIError(400, "TransactionInProgressException", "in progress"), 3, new(*types.TransactionInProgressException)},
		{"LimitExceeded is a throttle code", APIError(400, "LimitExceededException", "too many tables"), 3, new(*types.LimitExceededException)},
		{"InternalServerError", ServerError(), 3, new(*types.InternalServerError)},
		{"503 by status", APIError(503, "ServiceUnavailable", "unavailable"), 3, new(*smithy.GenericAPIError)},
		{"TransactionConflict not retried", TxConflict(), 1, new(*types.TransactionConflictException)},
		{"ItemCollectionSizeLimitExceeded not retried", APIError(400, "ItemCollectionSizeLimitExceededException", "too big"), 1, new(*types.ItemCollectionSizeLimitExceededException)},
		{"ValidationException not retried", APIError(400, "ValidationException", "bad"), 1, new(*smithy.GenericAPIError)},
		{"connection reset", Reset(), 3, new(*smithyhttp.RequestSendError)},
		{"lost response", LoseResponse(), 3, new(*smithyhttp.RequestSendError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, inj := newClient(t)
			inj.Add(Rule{Ops: []string{"PutItem"}, Fault: tt.fault})
			_, err := client.PutItem(t.Context(), putInput(table, tt.name))
			require.Error(t, err)
			require.ErrorAs(t, err, tt.as)
			require.Equal(t, tt.attempts, inj.Stats().Requests["PutItem"], "attempts")
			if tt.attempts > 1 {
				require.ErrorAs(t, err, new(*retry.MaxAttemptsError))
			}
		})
	}
}

func TestServerError(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Ops: []string{"PutItem"}, Fault: ServerError(), Times: 1})
	_, err := client.PutItem(t.Context(), putInput(table, "a"))
	require.NoError(t, err)
	require.Equal(t, 2, inj.Stats().Requests["PutItem"])
	require.NotNil(t, itemAt(t, table, "a", "A"))
}

func TestReset(t *testing.T) {
	t.Run("exhausted", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Reset()})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.ErrorIs(t, err, syscall.ECONNRESET)
		require.ErrorContains(t, err, "connection reset by peer")
		st := inj.Stats()
		require.Equal(t, 3, st.Requests["PutItem"])
		require.Zero(t, st.Forwarded["PutItem"])
		require.Nil(t, itemAt(t, table, "a", "A"), "a reset request never reaches DynamoDB Local")
	})
	t.Run("transient", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Reset(), Times: 1})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.NoError(t, err)
		require.Equal(t, 2, inj.Stats().Requests["PutItem"])
		require.Equal(t, 1, inj.Stats().Forwarded["PutItem"])
	})
	t.Run("timeout", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Fault: Reset().WithTimeout()})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		require.Equal(t, 3, inj.Stats().Requests["PutItem"])
	})
}

func TestLoseResponse(t *testing.T) {
	t.Run("unconditional write lands twice, silently", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: LoseResponse(), Times: 1})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.NoError(t, err)
		st := inj.Stats()
		require.Equal(t, 2, st.Requests["PutItem"])
		require.Equal(t, 2, st.Forwarded["PutItem"])
		require.Equal(t, 1, st.LostWrites)
		require.NotNil(t, itemAt(t, table, "a", "A"))
	})
	t.Run("conditional create fails its condition on retry", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: LoseResponse(), Times: 1})
		in := putInput(table, "a", "v", "mine")
		in.ConditionExpression = aws.String("attribute_not_exists(PK)")
		_, err := client.PutItem(t.Context(), in)
		// The first attempt created the item; the SDK's retry then finds it
		// there. The caller sees "already exists" for its own write.
		var ccf *types.ConditionalCheckFailedException
		require.ErrorAs(t, err, &ccf)
		require.Equal(t, 1, inj.Stats().LostWrites)
		require.Equal(t, s("mine"), itemAt(t, table, "a", "A")["v"])
	})
	t.Run("counter increment applied twice", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"UpdateItem"}, Fault: LoseResponse(), Times: 1})
		_, err := client.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
			TableName: aws.String(table), Key: key("c", "A"),
			UpdateExpression:          aws.String("ADD #n :one"),
			ExpressionAttributeNames:  map[string]string{"#n": "n"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")},
		})
		require.NoError(t, err)
		require.Equal(t, n("2"), itemAt(t, table, "c", "A")["n"])
	})
	t.Run("exhausted", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: LoseResponse().WithTimeout()})
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		require.Equal(t, 3, inj.Stats().LostWrites)
		require.NotNil(t, itemAt(t, table, "a", "A"), "the write landed although the caller got an error")
	})
	t.Run("failed write is not a lost write", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		_, err := client.PutItem(t.Context(), putInput(table, "a"))
		require.NoError(t, err)
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: LoseResponse(), Times: 1})
		in := putInput(table, "a")
		in.ConditionExpression = aws.String("attribute_not_exists(PK)")
		_, err = client.PutItem(t.Context(), in)
		require.ErrorAs(t, err, new(*types.ConditionalCheckFailedException))
		require.Zero(t, inj.Stats().LostWrites)
		require.Equal(t, 1, inj.Stats().Faults[KindLoseResponse])
	})
}

func TestTxConflict(t *testing.T) {
	t.Run("TransactWriteItems", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Fault: TxConflict()})
		var actions []types.TransactWriteItem
		for _, pk := range []string{"a", "b", "c"} {
			actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: key(pk, "A")}})
		}
		_, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: actions})
		var tce *types.TransactionCanceledException
		require.ErrorAs(t, err, &tce)
		require.Len(t, tce.CancellationReasons, 3)
		conflicts := 0
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "TransactionConflict":
				conflicts++
				require.NotEmpty(t, aws.ToString(r.Message))
			case "None":
				require.Nil(t, r.Message)
			default:
				t.Errorf("reason %q", aws.ToString(r.Code))
			}
		}
		require.Equal(t, 1, conflicts)
		require.Contains(t, tce.ErrorMessage(), "Transaction cancelled")
		require.Equal(t, 1, inj.Stats().Requests["TransactWriteItems"], "the SDK does not retry a cancelled transaction")
		require.Nil(t, itemAt(t, table, "a", "A"))
	})
	t.Run("single-item write", func(t *testing.T) {
		client, inj := newClient(t)
		table := createTable(t, false)
		inj.Add(Rule{Fault: TxConflict()})
		_, err := client.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("a", "A")})
		require.ErrorAs(t, err, new(*types.TransactionConflictException))
		require.Equal(t, 1, inj.Stats().Requests["DeleteItem"])
		// Reads are never answered with a conflict.
		_, err = client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("a", "A")})
		require.NoError(t, err)
		require.Zero(t, inj.Stats().Faults[KindTxConflict]-1)
	})
}

func TestDelay(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Ops: []string{"GetItem"}, Fault: Delay(100 * time.Millisecond)})
	in := &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("a", "A")}
	began := time.Now()
	_, err := client.GetItem(t.Context(), in)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(began), 100*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	began = time.Now()
	_, err = client.GetItem(ctx, in)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorAs(t, err, new(*smithy.CanceledError), "an ended context is not retried")
	require.Less(t, time.Since(began), 90*time.Millisecond, "the delay honours the context")
	st := inj.Stats()
	require.Equal(t, 2, st.Requests["GetItem"])
	require.Equal(t, 1, st.Forwarded["GetItem"])
}

// TestRetryQuota shows the SDK's retry quota: 500 tokens per client, 5 per
// retry (10 after a timeout) given back when the retry succeeds, 1 more per
// successful attempt. Once a storm has drained it, operations fail after
// their first attempt, even when a retry would have succeeded.
func TestRetryQuota(t *testing.T) {
	table := createTable(t, false)
	// storm makes calls that each exhaust their 3 attempts, then one that
	// runs out of quota after last attempts, then one that gets no retry.
	storm := func(t *testing.T, f Fault, calls, last int) (*dynamodb.Client, *Injector, func()) {
		client, inj := newClient(t, func(o *ClientOptions) { o.MaxBackoff = time.Microsecond })
		remove := inj.Add(Rule{Ops: []string{"PutItem"}, Fault: f})
		for call := range calls {
			before := inj.Stats().Requests["PutItem"]
			_, err := client.PutItem(t.Context(), putInput(table, fmt.Sprint(call)))
			require.ErrorAs(t, err, new(*retry.MaxAttemptsError))
			require.Equal(t, 3, inj.Stats().Requests["PutItem"]-before, "call %d", call)
		}
		for _, want := range []int{last, 1} {
			before := inj.Stats().Requests["PutItem"]
			_, err := client.PutItem(t.Context(), putInput(table, "x"))
			var quota ratelimit.QuotaExceededError
			require.ErrorAs(t, err, &quota)
			require.Equal(t, want, inj.Stats().Requests["PutItem"]-before, "no retry without quota")
		}
		return client, inj, remove
	}

	t.Run("throttles", func(t *testing.T) {
		// 500 tokens / (2 retries x 5) = 50 calls.
		client, inj, remove := storm(t, Throttle(), 50, 1)
		remove()
		put := func() error { _, err := client.PutItem(t.Context(), putInput(table, "y")); return err }
		for range 4 {
			require.NoError(t, put()) // +1 each: 4 tokens
		}
		// The storm is over, but one transient throttle still fails the call.
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Throttle(), Times: 1})
		err := put()
		require.ErrorAs(t, err, new(ratelimit.QuotaExceededError))
		require.ErrorAs(t, err, new(*types.ProvisionedThroughputExceededException), "joined to the quota error")
		require.NoError(t, put()) // 5 tokens
		// Now a retry is affordable, and its success gives its tokens back.
		for range 3 {
			inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Throttle(), Times: 1})
			require.NoError(t, put())
		}
	})
	t.Run("timeouts", func(t *testing.T) {
		// A retry after a timeout costs 14 tokens, as after any error but a
		// throttle: 500 / (2 retries x 14) = 17 calls, and 24 tokens left
		// buy the 18th call one retry of its two.
		storm(t, LoseResponse().WithTimeout(), 17, 2)
	})
}

// TestChecksum shows that this SDK only logs a response whose X-Amz-Crc32
// does not match its body: the operation still succeeds.
func TestChecksum(t *testing.T) {
	bad := smithyhttp.ClientDoFunc(func(req *http.Request) (*http.Response, error) {
		resp := okResponse(req, `{"TableNames":[]}`)
		resp.Header.Set("X-Amz-Crc32", "1")
		return resp, nil
	})
	var logged []string
	client := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: aws.AnonymousCredentials{},
		HTTPClient:  New(bad),
		Logger: logging.LoggerFunc(func(_ logging.Classification, format string, v ...any) {
			logged = append(logged, fmt.Sprintf(format, v...))
		}),
	})
	_, err := client.ListTables(t.Context(), &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	require.Len(t, logged, 1)
	require.Contains(t, logged[0], "response did not match expected checksum")
}

func TestLoseResponseNotOnReads(t *testing.T) {
	// A lost read response is retried like a lost write, but counts no lost write.
	client, inj := newClient(t)
	table := createTable(t, false)
	inj.Add(Rule{Ops: []string{"GetItem"}, Fault: LoseResponse(), Times: 1})
	_, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("a", "A")})
	require.NoError(t, err)
	st := inj.Stats()
	require.Zero(t, st.LostWrites)
	require.Equal(t, 2, st.Forwarded["GetItem"])
}
