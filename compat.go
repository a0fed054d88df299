package singletable

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
)

// Differences of old DynamoDB Local releases that a user meets as a bare
// ValidationException, turned into an error that names the cause.

// What DynamoDB Local 1.x releases from before the service accepted empty
// non-key strings (2020), such as 1.11.478, answer to an item holding one, or
// holding a string set with an empty member. Today's service and DynamoDB Local
// 3.x store both, and refuse an empty key attribute with other words.
const (
	oldEmptyString    = "An AttributeValue may not contain an empty string"
	oldEmptySetMember = "may not have a empty string as a member"
)

// oldLocalError is a ValidationException that an old DynamoDB Local gives
// where DynamoDB accepts the request; its message says so. It unwraps to the
// SDK's error, so errors.As finds the ValidationException.
type oldLocalError struct{ err error }

func (e *oldLocalError) Error() string {
	return e.err.Error() + " (this endpoint is an old DynamoDB Local release, such as 1.11.478, that refuses empty strings; " +
		"DynamoDB has accepted them in non-key attributes and string sets since 2020: run a current DynamoDB Local (3.x), " +
		"or tag the field omitempty)"
}

func (e *oldLocalError) Unwrap() error { return e.err }

// hintOldLocal returns err with the hint above when it is the old release's
// refusal of an empty string, and err itself otherwise.
func hintOldLocal(err error) error {
	var api smithy.APIError
	if err != nil && errors.As(err, &api) && api.ErrorCode() == "ValidationException" &&
		(strings.Contains(api.ErrorMessage(), oldEmptyString) || strings.Contains(api.ErrorMessage(), oldEmptySetMember)) {
		return &oldLocalError{err: err}
	}
	return err
}

// compatClient is the table's client with hintOldLocal applied to the errors of
// every call that carries attribute values. NewTable wraps the caller's client in
// it, below any observer, so that observers see the hinted error too.
type compatClient struct{ ItemClient }

func hinted[O any](out *O, err error) (*O, error) { return out, hintOldLocal(err) }

func (c compatClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return hinted(c.ItemClient.GetItem(ctx, in, f...))
}

func (c compatClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return hinted(c.ItemClient.PutItem(ctx, in, f...))
}

func (c compatClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return hinted(c.ItemClient.UpdateItem(ctx, in, f...))
}

func (c compatClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return hinted(c.ItemClient.DeleteItem(ctx, in, f...))
}

func (c compatClient) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return hinted(c.ItemClient.Query(ctx, in, f...))
}

func (c compatClient) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return hinted(c.ItemClient.Scan(ctx, in, f...))
}

func (c compatClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return hinted(c.ItemClient.BatchGetItem(ctx, in, f...))
}

func (c compatClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return hinted(c.ItemClient.BatchWriteItem(ctx, in, f...))
}

func (c compatClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return hinted(c.ItemClient.TransactWriteItems(ctx, in, f...))
}

func (c compatClient) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return hinted(c.ItemClient.TransactGetItems(ctx, in, f...))
}
