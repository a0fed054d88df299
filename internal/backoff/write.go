package backoff

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxBatchWrite is DynamoDB's limit of write requests per BatchWriteItem.
const MaxBatchWrite = 25

// Writes is a batch write of the requests of one table, sent in rounds.
type Writes[K comparable] struct {
	Table, What string // the table; the call, for messages ("BatchPut Order")
	Rounds      *Rounds
	// Send sends one BatchWriteItem.
	Send func(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	// ID identifies the item of a request.
	ID func(types.WriteRequest) K
	// Conflict reports an error that applied nothing and is sent again like
	// unprocessed items (a ReplicatedWriteConflictException).
	Conflict func(error) bool
	// ErrUnprocessed and ErrInvalid are the errors the messages wrap when
	// requests stay unprocessed, and when two requests are of one item.
	ErrUnprocessed, ErrInvalid error
}

// Run sends reqs in rounds of MaxBatchWrite, the unprocessed ones again, paced by
// Rounds, and returns the indexes of the requests not written. Two requests of
// one item are refused before anything is sent.
func (w *Writes[K]) Run(ctx context.Context, reqs []types.WriteRequest) ([]int, error) {
	byID := make(map[K]int, len(reqs))
	for i, r := range reqs {
		id := w.ID(r)
		if j, dup := byID[id]; dup {
			return nil, fmt.Errorf("singletable: %s: items %d and %d have the same key: %w", w.What, j, i, w.ErrInvalid)
		}
		byID[id] = i
	}
	queue := make([]int, len(reqs))
	for i := range queue {
		queue[i] = i
	}
	var lastConflict error // the last conflict, sent again like unprocessed items
	for len(queue) > 0 {
		n := min(len(queue), MaxBatchWrite)
		chunk := make([]types.WriteRequest, n)
		for i, j := range queue[:n] {
			chunk[i] = reqs[j]
		}
		out, err := w.Send(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{w.Table: chunk}})
		if err != nil && w.Conflict(err) { // refused, applied nothing: sent again
			lastConflict, err = err, nil
			out = &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{w.Table: chunk}}
		}
		if err != nil && !Unprocessed(err) {
			return queue, fmt.Errorf("singletable: %s: %d items not written: %w", w.What, len(queue), err)
		}
		if err != nil {
			return queue, fmt.Errorf("singletable: %s: %d items unprocessed: %w: %w", w.What, len(queue), w.ErrUnprocessed, err)
		}
		var again []int
		for _, r := range out.UnprocessedItems[w.Table] {
			j, ok := byID[w.ID(r)]
			if !ok {
				return queue, fmt.Errorf("singletable: %s: DynamoDB returned an unprocessed item that was not sent", w.What)
			}
			again = append(again, j)
		}
		queue = append(again, queue[n:]...)
		if err := w.Rounds.After(ctx, n, len(again)); err != nil {
			if lastConflict != nil {
				err = errors.Join(err, lastConflict)
			}
			return queue, fmt.Errorf("singletable: %s: %d items unprocessed: %w: %w", w.What, len(queue), w.ErrUnprocessed, err)
		}
	}
	return nil, nil
}
