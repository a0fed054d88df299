package explain

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Answer is what an empty table that accepts every write answers to a call of
// API api with input in: no item for a read (one empty response per key of a
// TransactGetItems, an empty page of a Query or Scan), every write applied, a
// batch write fully processed. It is nil for an API the table does not call.
// The root package's client boundary (internal/wrap) answers a call recorded
// under Explain with it instead of sending it.
func Answer(api string, in any) any {
	switch api {
	case "GetItem":
		return &dynamodb.GetItemOutput{}
	case "PutItem":
		return &dynamodb.PutItemOutput{}
	case "UpdateItem":
		return &dynamodb.UpdateItemOutput{}
	case "DeleteItem":
		return &dynamodb.DeleteItemOutput{}
	case "Query":
		return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{}}
	case "Scan":
		return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{}}
	case "BatchGetItem":
		out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
		if in, ok := in.(*dynamodb.BatchGetItemInput); ok {
			for table := range in.RequestItems {
				out.Responses[table] = []map[string]types.AttributeValue{}
			}
		}
		return out
	case "BatchWriteItem":
		return &dynamodb.BatchWriteItemOutput{}
	case "TransactWriteItems":
		return &dynamodb.TransactWriteItemsOutput{}
	case "TransactGetItems":
		// One response per item, none holding an item: what DynamoDB answers
		// when none of the keys has an item.
		out := &dynamodb.TransactGetItemsOutput{}
		if in, ok := in.(*dynamodb.TransactGetItemsInput); ok {
			out.Responses = make([]types.ItemResponse, len(in.TransactItems))
		}
		return out
	}
	return nil
}
