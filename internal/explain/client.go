package explain

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemClient is the item operations of DynamoDB's API (the root package's
// ItemClient).
type ItemClient interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
}

// Client is C with calls that Record takes recorded and answered as by an empty
// table that accepts every write, not sent. It does not embed C: a method added
// to ItemClient without one here does not compile, rather than be sent while
// explaining.
type Client struct {
	C ItemClient
	// Record records the input of a call made with ctx and reports true when
	// ctx is explaining; false sends the call to C.
	Record func(ctx context.Context, api string, in any) bool
}

var _ ItemClient = Client{}

// GetItem records in when ctx is explaining and answers that no item is there; otherwise it calls C.
func (c Client) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if c.Record(ctx, "GetItem", in) {
		return &dynamodb.GetItemOutput{}, nil
	}
	return c.C.GetItem(ctx, in, f...)
}

// PutItem records in when ctx is explaining and answers as if it was written; otherwise it calls C.
func (c Client) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.Record(ctx, "PutItem", in) {
		return &dynamodb.PutItemOutput{}, nil
	}
	return c.C.PutItem(ctx, in, f...)
}

// UpdateItem records in when ctx is explaining and answers as if it was applied; otherwise it calls C.
func (c Client) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if c.Record(ctx, "UpdateItem", in) {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return c.C.UpdateItem(ctx, in, f...)
}

// DeleteItem records in when ctx is explaining and answers as if it was applied; otherwise it calls C.
func (c Client) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if c.Record(ctx, "DeleteItem", in) {
		return &dynamodb.DeleteItemOutput{}, nil
	}
	return c.C.DeleteItem(ctx, in, f...)
}

// Query records in when ctx is explaining and answers an empty page; otherwise it calls C.
func (c Client) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if c.Record(ctx, "Query", in) {
		return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{}}, nil
	}
	return c.C.Query(ctx, in, f...)
}

// Scan records in when ctx is explaining and answers an empty page; otherwise it calls C.
func (c Client) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if c.Record(ctx, "Scan", in) {
		return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{}}, nil
	}
	return c.C.Scan(ctx, in, f...)
}

// BatchGetItem records in when ctx is explaining and answers no item for any table; otherwise it calls C.
func (c Client) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if c.Record(ctx, "BatchGetItem", in) {
		out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
		for table := range in.RequestItems {
			out.Responses[table] = []map[string]types.AttributeValue{}
		}
		return out, nil
	}
	return c.C.BatchGetItem(ctx, in, f...)
}

// BatchWriteItem records in when ctx is explaining and answers every item processed; otherwise it calls C.
func (c Client) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if c.Record(ctx, "BatchWriteItem", in) {
		return &dynamodb.BatchWriteItemOutput{}, nil
	}
	return c.C.BatchWriteItem(ctx, in, f...)
}

// TransactWriteItems records in when ctx is explaining and answers as if it was applied; otherwise it calls C.
func (c Client) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if c.Record(ctx, "TransactWriteItems", in) {
		return &dynamodb.TransactWriteItemsOutput{}, nil
	}
	return c.C.TransactWriteItems(ctx, in, f...)
}

// TransactGetItems records in when ctx is explaining and answers no item for any key; otherwise it calls C.
func (c Client) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	if c.Record(ctx, "TransactGetItems", in) {
		// One response per item, none holding an item: what DynamoDB answers
		// when none of the keys has an item.
		return &dynamodb.TransactGetItemsOutput{Responses: make([]types.ItemResponse, len(in.TransactItems))}, nil
	}
	return c.C.TransactGetItems(ctx, in, f...)
}
