package singletable

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable/internal/wrap"
)

// ItemClient is the part of the DynamoDB API that every item operation of the
// package calls, and nothing more: what [NewTable] needs. *dynamodb.Client
// satisfies it, and so does any client that serves these calls: the DynamoDB
// Accelerator's (*dax.Dax of aws/aws-dax-go-v2), a wrapper that counts calls,
// caches or injects faults.
//
// Which clients get what. The library passes SDK middleware (APIOptions, through
// a call's optFns) only to a client known to accept it: a *dynamodb.Client, or a
// client that says so ([ClientTraits], through [TraitsClient] or
// [WithClientTraits]). Everything else gets only optFns that set plain
// dynamodb.Options fields (the retryer of conditional writes, which a client
// applying optFns to options of its own accepts; DAX does). So:
//
//   - Reads take the wire path (decoding items straight from the response's JSON,
//     see [WithWireDecoding]) only through a client that accepts middleware and
//     returns the SDK's outputs unchanged: a *dynamodb.Client, or a wrapper that
//     declares both traits. A wrapper that edits outputs (a cache, a fault
//     injector, a test that hides an item from QueryOutput.Items) must not declare
//     UnchangedOutputs: reads then decode the output's Items, and its edits are
//     seen. A wrapper that passes optFns on to a *dynamodb.Client and returns
//     its outputs as they are keeps the wire path by declaring both traits.
//   - [WithObserver] and [WithLogger] observe every call at this interface,
//     whatever the client: API, entity, latency, consumed capacity, error. SDK
//     attempts are counted where middleware is accepted (0 elsewhere).
//   - Table management ([Table.CreateTable], [Table.DeleteTable], and the
//     DescribeTable of their waits) needs the [TableClient] methods and
//     [Table.EnableTTL] the [TTLClient] ones; a client without them serves every
//     item operation, and those calls fail with [ErrInvalidInput] naming the
//     missing method.
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

// TableClient is the part of the DynamoDB API that table management calls
// ([Table.CreateTable], [Table.DeleteTable]). *dynamodb.Client satisfies it; DAX's
// client does not.
type TableClient interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Client is an [ItemClient] that manages tables too ([TableClient]), as
// *dynamodb.Client does: what [Table.Client] returns. Any Client may be given to
// [NewTable]; so may any ItemClient (see there for which clients get the wire
// path and SDK middleware).
type Client interface {
	ItemClient
	TableClient
}

var _ Client = (*dynamodb.Client)(nil)

// ClientTraits says what a client other than *dynamodb.Client does with the
// calls the library makes through it. The zero value, assumed for a client that
// declares nothing, is the safe one: no SDK middleware, outputs as edited.
type ClientTraits struct {
	// APIOptions: the client applies each call's optFns, APIOptions middleware
	// included, to a *dynamodb.Client call (a wrapper that passes them on). DAX's
	// client refuses APIOptions: false.
	APIOptions bool
	// UnchangedOutputs: the client returns the outputs of that call as the SDK
	// gave them, no item added, dropped or edited. With APIOptions it lets reads
	// take the wire path; the client then sees outputs without the items the
	// wire path decoded (their Count says how many there were).
	UnchangedOutputs bool
}

// TraitsClient is implemented by a client wrapper that declares its
// [ClientTraits]. A wrapper typically answers for itself and the client it wraps:
// for a plain pass-through, the traits of the wrapped client ([*dynamodb.Client]:
// both).
type TraitsClient interface {
	ClientTraits() ClientTraits
}

// traitsOf returns what c is known to do: everything for a *dynamodb.Client,
// what it declares for a TraitsClient, nothing otherwise.
func traitsOf(c ItemClient) ClientTraits {
	switch c := c.(type) {
	case *dynamodb.Client:
		return ClientTraits{APIOptions: true, UnchangedOutputs: true}
	case TraitsClient:
		return c.ClientTraits()
	}
	return ClientTraits{}
}

// wire reports whether reads through the client may take the wire path.
func (tr ClientTraits) wire() bool { return tr.APIOptions && tr.UnchangedOutputs }

// clientTraits resolves the table's traits: the option's, else the client's.
func clientTraits(o *TableOptions, c ItemClient) ClientTraits {
	if o.ClientTraits != nil {
		return *o.ClientTraits
	}
	return traitsOf(c)
}

// tableCalls returns the table management calls of the table's client, observed
// like every other call, or, when the client lacks one that op needs, an error
// naming it. op names the Table method for the error.
func (t *Table) tableCalls(op string, need ...string) (TableClient, error) {
	m := tableCallsOf(t.user)
	for _, name := range need {
		if !m.has(name) {
			return nil, errorf("%s %s: %w", op, t.name, m.missing(name))
		}
	}
	return t.observeTable(wrap.Tables{C: m, Around: t.sendTable}), nil
}

// tableCallsOf returns the table management methods c has.
func tableCallsOf(c ItemClient) missingTableCalls {
	m := missingTableCalls{c: c}
	if tc, ok := c.(interface {
		CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	}); ok {
		m.create = tc.CreateTable
	}
	if tc, ok := c.(interface {
		DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	}); ok {
		m.del = tc.DeleteTable
	}
	if tc, ok := c.(interface {
		DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	}); ok {
		m.describe = tc.DescribeTable
	}
	return m
}

// missingTableCalls is a TableClient of the methods a client has; the others
// fail with ErrInvalidInput naming them.
type missingTableCalls struct {
	c        ItemClient
	create   func(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	del      func(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	describe func(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

func (m missingTableCalls) has(name string) bool {
	switch name {
	case "CreateTable":
		return m.create != nil
	case "DeleteTable":
		return m.del != nil
	}
	return m.describe != nil
}

func (m missingTableCalls) missing(name string) error {
	return fmt.Errorf("the client (%T) has no %s method (TableClient): %w", m.c, name, ErrInvalidInput)
}

func (m missingTableCalls) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, f ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	if m.create == nil {
		return nil, m.missing("CreateTable")
	}
	return m.create(ctx, in, f...)
}

func (m missingTableCalls) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	if m.del == nil {
		return nil, m.missing("DeleteTable")
	}
	return m.del(ctx, in, f...)
}

func (m missingTableCalls) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, f ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if m.describe == nil {
		return nil, m.missing("DescribeTable")
	}
	return m.describe(ctx, in, f...)
}

// withoutTables is what [Table.Client] returns for a client that is not a
// [Client]: its item calls as they are, table calls failing with ErrInvalidInput.
type withoutTables struct {
	ItemClient
	missingTableCalls
}

// asClient returns c itself when it is a Client, else c with the table calls it
// has, the others failing.
func asClient(c ItemClient) Client {
	if full, ok := c.(Client); ok {
		return full
	}
	return withoutTables{ItemClient: c, missingTableCalls: tableCallsOf(c)}
}
