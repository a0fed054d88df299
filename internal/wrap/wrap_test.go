package wrap

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake answers every call with an output naming the call, and records the
// input and the number of option functions it was given.
type fake struct {
	in    any
	nopts int
}

func (f *fake) GetItem(_ context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.GetItemOutput{}, nil
}

func (f *fake) PutItem(_ context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return nil, errors.New("put failed")
}

func (f *fake) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.UpdateItemOutput{}, nil
}

func (f *fake) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.DeleteItemOutput{}, nil
}

func (f *fake) Query(_ context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.QueryOutput{Count: 7}, nil
}

func (f *fake) Scan(_ context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.ScanOutput{}, nil
}

func (f *fake) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.BatchGetItemOutput{}, nil
}

func (f *fake) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func (f *fake) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (f *fake) TransactGetItems(_ context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	f.in, f.nopts = in, len(o)
	return &dynamodb.TransactGetItemsOutput{}, nil
}

// TestItemsRunEveryCallThroughAround calls each of Items' methods and checks
// that Around saw the call's API and input, that send reached the client with
// the input and options Around passed on, and that the output and error come
// back typed.
func TestItemsRunEveryCallThroughAround(t *testing.T) {
	f := &fake{}
	var apis []string
	c := Items{C: f, Around: func(ctx context.Context, api string, in any, o []func(*dynamodb.Options), send Send) (any, error) {
		apis = append(apis, api)
		return send(ctx, in, append(o, func(*dynamodb.Options) {}))
	}}
	ctx := context.Background()
	in := &dynamodb.QueryInput{TableName: aws.String("t")}
	out, err := c.Query(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, int32(7), out.Count)
	assert.Same(t, in, f.in)
	assert.Equal(t, 1, f.nopts, "the option Around added reached the client")

	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{})
	assert.EqualError(t, err, "put failed")

	_, _ = c.GetItem(ctx, &dynamodb.GetItemInput{})
	_, _ = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{})
	_, _ = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{})
	_, _ = c.Scan(ctx, &dynamodb.ScanInput{})
	_, _ = c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{})
	_, _ = c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{})
	_, _ = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{})
	_, _ = c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{})
	assert.Equal(t, []string{"Query", "PutItem", "GetItem", "UpdateItem", "DeleteItem", "Scan", "BatchGetItem",
		"BatchWriteItem", "TransactWriteItems", "TransactGetItems"}, apis)

	// Every method of ItemClient is wrapped: the wrapper has no other methods.
	assert.Equal(t, reflect.TypeFor[ItemClient]().NumMethod(), reflect.TypeFor[Items]().NumMethod())
}

// TestAroundAnswersWithoutSending: an Around may answer a call itself (as
// Explain does); the client is not called, and an answer of the wrong type
// comes back as a nil output, never a panic.
func TestAroundAnswersWithoutSending(t *testing.T) {
	f := &fake{}
	c := Items{C: f, Around: func(_ context.Context, api string, _ any, _ []func(*dynamodb.Options), _ Send) (any, error) {
		if api == "GetItem" {
			return &dynamodb.GetItemOutput{Item: nil}, nil
		}
		return &dynamodb.ScanOutput{}, nil // the wrong type for anything but a Scan
	}}
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{})
	require.NoError(t, err)
	assert.NotNil(t, out)
	assert.Nil(t, f.in, "the client was not called")
	q, err := c.Query(context.Background(), &dynamodb.QueryInput{})
	require.NoError(t, err)
	assert.Nil(t, q)
}

type tables struct{ calls []string }

func (c *tables) CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	c.calls = append(c.calls, "create")
	return &dynamodb.CreateTableOutput{}, nil
}

func (c *tables) DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	c.calls = append(c.calls, "delete")
	return &dynamodb.DeleteTableOutput{}, nil
}

func (c *tables) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	c.calls = append(c.calls, "describe")
	return &dynamodb.DescribeTableOutput{}, nil
}

func (c *tables) UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	c.calls = append(c.calls, "updateTTL")
	return &dynamodb.UpdateTimeToLiveOutput{}, nil
}

func (c *tables) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	c.calls = append(c.calls, "describeTTL")
	return &dynamodb.DescribeTimeToLiveOutput{}, nil
}

// TestTablesAndTTL: the table management and TTL wrappers run their calls
// through Around as Items does.
func TestTablesAndTTL(t *testing.T) {
	c := &tables{}
	var apis []string
	around := func(ctx context.Context, api string, in any, o []func(*dynamodb.Options), send Send) (any, error) {
		apis = append(apis, api)
		return send(ctx, in, o)
	}
	ctx := context.Background()
	tb := Tables{C: c, Around: around}
	ttl := TTL{C: c, Around: around}
	_, err := tb.CreateTable(ctx, &dynamodb.CreateTableInput{})
	require.NoError(t, err)
	_, _ = tb.DescribeTable(ctx, &dynamodb.DescribeTableInput{})
	_, _ = tb.DeleteTable(ctx, &dynamodb.DeleteTableInput{})
	_, _ = ttl.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{})
	_, _ = ttl.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{})
	assert.Equal(t, []string{"CreateTable", "DescribeTable", "DeleteTable", "UpdateTimeToLive", "DescribeTimeToLive"}, apis)
	assert.Equal(t, []string{"create", "describe", "delete", "updateTTL", "describeTTL"}, c.calls)
}
