package backoff

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	errUnprocessed = errors.New("unprocessed")
	errInvalid     = errors.New("invalid input")
	errConflict    = errors.New("replicated write conflict")
)

func puts(n int) []types.WriteRequest {
	reqs := make([]types.WriteRequest, n)
	for i := range reqs {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: strconv.Itoa(i)}}}}
	}
	return reqs
}

func writes(send func(*dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error)) *Writes[string] {
	return &Writes[string]{Table: "t", What: "BatchPut X",
		Rounds: &Rounds{MaxAttempts: 3, Wait: func(context.Context, int) error { return nil }, Event: func(context.Context, int, int) {}},
		Send: func(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
			return send(in)
		},
		ID: func(r types.WriteRequest) string {
			return r.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value
		},
		Conflict:       func(err error) bool { return errors.Is(err, errConflict) },
		ErrUnprocessed: errUnprocessed, ErrInvalid: errInvalid}
}

func TestWrites(t *testing.T) {
	ctx := context.Background()
	// Rounds of 25; the first round's last item unprocessed once, the second
	// round refused by a conflict once: everything is written.
	var sizes []int
	calls := 0
	w := writes(func(in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		calls++
		chunk := in.RequestItems["t"]
		sizes = append(sizes, len(chunk))
		switch calls {
		case 1:
			return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{"t": chunk[24:]}}, nil
		case 2:
			return nil, errConflict
		}
		return &dynamodb.BatchWriteItemOutput{}, nil
	})
	left, err := w.Run(ctx, puts(30))
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.Equal(t, []int{25, 6, 6}, sizes)

	// Two requests of one item: refused before anything is sent.
	reqs := append(puts(3), puts(2)[1])
	_, err = writes(func(*dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		t.Fatal("sent")
		return nil, nil
	}).Run(ctx, reqs)
	require.ErrorIs(t, err, errInvalid)
	assert.Contains(t, err.Error(), "items 1 and 3 have the same key")

	// A refusal: the requests not written, with its error, not unprocessed.
	boom := errors.New("ValidationException")
	left, err = writes(func(*dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) { return nil, boom }).Run(ctx, puts(3))
	require.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, errUnprocessed)
	assert.Equal(t, []int{0, 1, 2}, left)

	// Always unprocessed, conflicts among them: given up after MaxAttempts
	// rounds, the conflict kept in the error.
	n := 0
	left, err = writes(func(in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		if n++; n == 1 {
			return nil, errConflict
		}
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: in.RequestItems}, nil
	}).Run(ctx, puts(2))
	require.ErrorIs(t, err, errUnprocessed)
	require.ErrorIs(t, err, errConflict)
	assert.ElementsMatch(t, []int{0, 1}, left)

	// An unprocessed item that was not sent.
	_, err = writes(func(*dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{"t": puts(9)[8:]}}, nil
	}).Run(ctx, puts(2))
	require.ErrorContains(t, err, "an unprocessed item that was not sent")
}
