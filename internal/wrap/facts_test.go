package wrap

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAskCapacityCopies(t *testing.T) {
	in := &dynamodb.QueryInput{TableName: aws.String("t")}
	got := AskCapacity(in)
	assert.Empty(t, in.ReturnConsumedCapacity, "the caller's input is not modified")
	require.IsType(t, in, got)
	assert.Equal(t, types.ReturnConsumedCapacityTotal, got.(*dynamodb.QueryInput).ReturnConsumedCapacity)
	assert.Equal(t, "t", *got.(*dynamodb.QueryInput).TableName)

	asked := &dynamodb.GetItemInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
	assert.Same(t, asked, AskCapacity(asked), "an input that asks already is left as it is")
	desc := &dynamodb.DescribeTableInput{}
	assert.Same(t, desc, AskCapacity(desc), "an input without the field is left as it is")

	assert.Equal(t, 3.0, Consumed(&dynamodb.BatchGetItemOutput{ConsumedCapacity: []types.ConsumedCapacity{{CapacityUnits: aws.Float64(1)}, {CapacityUnits: aws.Float64(2)}}}))
	assert.Equal(t, 1.5, Consumed(&dynamodb.PutItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(1.5)}}))
	assert.Zero(t, Consumed(&dynamodb.DescribeTableOutput{}))
	assert.Zero(t, Consumed(nil))
}

func TestIndexAndReturned(t *testing.T) {
	assert.Equal(t, "GSI1", Index(&dynamodb.QueryInput{IndexName: aws.String("GSI1")}))
	assert.Equal(t, "LSI1", Index(&dynamodb.ScanInput{IndexName: aws.String("LSI1")}))
	assert.Empty(t, Index(&dynamodb.QueryInput{}))
	assert.Empty(t, Index(&dynamodb.GetItemInput{}))

	assert.Equal(t, 3, Returned(&dynamodb.QueryOutput{Count: 3}))
	assert.Equal(t, 2, Returned(&dynamodb.ScanOutput{Count: 2}))
	assert.Equal(t, 0, Returned(&dynamodb.GetItemOutput{}))
	assert.Equal(t, 1, Returned(&dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: "x"}, "b": &types.AttributeValueMemberS{Value: "y"}}}))
	item := map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: "x"}}
	assert.Equal(t, 3, Returned(&dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{"t": {item, item}, "u": {item}}}))
	assert.Equal(t, 1, Returned(&dynamodb.TransactGetItemsOutput{Responses: []types.ItemResponse{{Item: item}, {}}}))
	assert.Equal(t, -1, Returned(&dynamodb.PutItemOutput{}))
	assert.Equal(t, -1, Returned((*dynamodb.QueryOutput)(nil)), "a failed call's nil output holds none")
}
