package singletable

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// note is what a new user writes first: a string field that may be empty,
// without omitempty.
type note struct {
	_     struct{} `Type:"Note" PK:"NOTE#{id}" SK:"NOTE"`
	ID    string   `dynamodbav:"id"`
	Title string   `dynamodbav:"title"`
	Body  string   `dynamodbav:"body"`
}

// TestEmptyStringRoundTrip puts an item whose non-key string is empty and reads it
// back. DynamoDB (since 2020) and DynamoDB Local 3.x store the empty string; DynamoDB
// Local 1.11.478 (DYNAMODB_LOCAL_VERSION=1.11.478) refuses it, and the error must then
// say that the old release is the cause.
func TestEmptyStringRoundTrip(t *testing.T) {
	tbl, _ := newTestTable(t)
	notes := MustRegister[note](tbl)
	ctx := t.Context()
	version := local.Get(t).Version()

	_, err := notes.Put(ctx, note{ID: "n1", Title: "empty body"})
	if version == "1.11.478" || (version == "" && err != nil) {
		require.Error(t, err, "DynamoDB Local %s stored an empty string", version)
		var api smithy.APIError
		require.ErrorAs(t, err, &api, "the SDK's error stays wrapped")
		assert.Equal(t, "ValidationException", api.ErrorCode())
		assert.ErrorContains(t, err, "old DynamoDB Local release", "the error names the cause")
		t.Logf("DynamoDB Local %q refuses the empty string, as expected: %v", version, err)
		return
	}
	require.NoError(t, err, "DynamoDB Local %q", version)

	got, err := notes.Get(ctx, note{ID: "n1"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, note{ID: "n1", Title: "empty body"}, got)

	// Stored as an empty string, not left out.
	out, err := local.Client(t).GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(tbl.Name()),
		Key:            map[string]types.AttributeValue{"PK": sAV("NOTE#n1"), "SK": sAV("NOTE")},
		ConsistentRead: aws.Bool(true),
	})
	require.NoError(t, err)
	assert.Equal(t, sAV(""), out.Item["body"])

	// An update to an empty string, and a query that reads it back.
	_, err = notes.Update(ctx, got, Set("title", ""))
	require.NoError(t, err)
	page, err := notes.Query(ctx, note{ID: "n1"})
	require.NoError(t, err)
	assert.Equal(t, []note{{ID: "n1"}}, page.Items)
}

func TestHintOldLocal(t *testing.T) {
	old := &smithy.GenericAPIError{Code: "ValidationException",
		Message: "One or more parameter values were invalid: An AttributeValue may not contain an empty string"}
	err := hintOldLocal(fmt.Errorf("operation error DynamoDB: PutItem: %w", old))
	assert.ErrorIs(t, err, old, "the SDK's error stays wrapped")
	assert.ErrorContains(t, err, "old DynamoDB Local release")
	assert.ErrorContains(t, err, oldEmptyString)
	set := &smithy.GenericAPIError{Code: "ValidationException",
		Message: "One or more parameter values were invalid: An string set may not have a empty string as a member"}
	assert.ErrorContains(t, hintOldLocal(set), "old DynamoDB Local release")

	for _, other := range []error{
		nil,
		context.Canceled,
		&smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: PK"},
		&types.ConditionalCheckFailedException{Message: aws.String(oldEmptyString)},
	} {
		assert.Equal(t, other, hintOldLocal(other), "%v is left as it is", other)
	}
	var hinted *oldLocalError
	assert.False(t, errors.As(hintOldLocal(context.Canceled), &hinted))
}
