// Package wrap runs every call of a DynamoDB client through one function, so
// that what the table does at its client boundary (hinting the errors of old
// DynamoDB Local releases, recording calls under Explain, observing and
// tracing) is written once per concern, not once per API. The wrappers do not
// embed the client: a method added to the client interfaces without one here
// does not compile, rather than slip past the concern.
//
// Nothing here depends on SDK middleware: the wrappers work for any client
// with these methods (DAX's, a user's wrapper).
package wrap

import (
	"context"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Send makes the call the Around function was given, with ctx, in (of the
// call's input type) and the option functions f.
type Send func(ctx context.Context, in any, f []func(*dynamodb.Options)) (any, error)

// Around is the one function every call goes through: api is the DynamoDB API
// ("GetItem", "Query"...), in the call's input (a pointer to its input struct),
// f the caller's option functions. It sends the call with send (or answers it
// itself) and returns the output, a pointer to the API's output struct.
type Around func(ctx context.Context, api string, in any, f []func(*dynamodb.Options), send Send) (any, error)

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

// TableClient is the table management calls of DynamoDB's API (the root
// package's TableClient).
type TableClient interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// TTLClient is the time-to-live calls of DynamoDB's API (the root package's
// TTLClient).
type TTLClient interface {
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

// call runs one call of API api through around. An output of another type
// than O, which only a faulty Around returns, is returned as nil.
func call[I, O any](ctx context.Context, around Around, api string, do func(context.Context, *I, ...func(*dynamodb.Options)) (*O, error), in *I, f []func(*dynamodb.Options)) (*O, error) {
	out, err := around(ctx, api, in, f, func(ctx context.Context, in any, f []func(*dynamodb.Options)) (any, error) {
		return do(ctx, in.(*I), f...)
	})
	o, _ := out.(*O)
	return o, err
}

// Items is C with every call run through Around.
type Items struct {
	C      ItemClient
	Around Around
}

var _ ItemClient = Items{}

// GetItem runs C's GetItem through Around.
func (c Items) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return call(ctx, c.Around, "GetItem", c.C.GetItem, in, f)
}

// PutItem runs C's PutItem through Around.
func (c Items) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return call(ctx, c.Around, "PutItem", c.C.PutItem, in, f)
}

// UpdateItem runs C's UpdateItem through Around.
func (c Items) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return call(ctx, c.Around, "UpdateItem", c.C.UpdateItem, in, f)
}

// DeleteItem runs C's DeleteItem through Around.
func (c Items) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return call(ctx, c.Around, "DeleteItem", c.C.DeleteItem, in, f)
}

// Query runs C's Query through Around.
func (c Items) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return call(ctx, c.Around, "Query", c.C.Query, in, f)
}

// Scan runs C's Scan through Around.
func (c Items) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return call(ctx, c.Around, "Scan", c.C.Scan, in, f)
}

// BatchGetItem runs C's BatchGetItem through Around.
func (c Items) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return call(ctx, c.Around, "BatchGetItem", c.C.BatchGetItem, in, f)
}

// BatchWriteItem runs C's BatchWriteItem through Around.
func (c Items) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return call(ctx, c.Around, "BatchWriteItem", c.C.BatchWriteItem, in, f)
}

// TransactWriteItems runs C's TransactWriteItems through Around.
func (c Items) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return call(ctx, c.Around, "TransactWriteItems", c.C.TransactWriteItems, in, f)
}

// TransactGetItems runs C's TransactGetItems through Around.
func (c Items) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return call(ctx, c.Around, "TransactGetItems", c.C.TransactGetItems, in, f)
}

// Tables is C with every call run through Around.
type Tables struct {
	C      TableClient
	Around Around
}

var _ TableClient = Tables{}

// CreateTable runs C's CreateTable through Around.
func (c Tables) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, f ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return call(ctx, c.Around, "CreateTable", c.C.CreateTable, in, f)
}

// DeleteTable runs C's DeleteTable through Around.
func (c Tables) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return call(ctx, c.Around, "DeleteTable", c.C.DeleteTable, in, f)
}

// DescribeTable runs C's DescribeTable through Around.
func (c Tables) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return call(ctx, c.Around, "DescribeTable", c.C.DescribeTable, in, f)
}

// TTL is C with every call run through Around.
type TTL struct {
	C      TTLClient
	Around Around
}

var _ TTLClient = TTL{}

// UpdateTimeToLive runs C's UpdateTimeToLive through Around.
func (c TTL) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return call(ctx, c.Around, "UpdateTimeToLive", c.C.UpdateTimeToLive, in, f)
}

// DescribeTimeToLive runs C's DescribeTimeToLive through Around.
func (c TTL) DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return call(ctx, c.Around, "DescribeTimeToLive", c.C.DescribeTimeToLive, in, f)
}

// NilOutput reports whether out, a call's output, is nil: a nil interface or a
// nil pointer to the API's output struct.
func NilOutput(out any) bool {
	if out == nil {
		return true
	}
	v := reflect.ValueOf(out)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
