package singletable

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/design"
	"github.com/singletable/singletable/internal/tabledef"
)

// The table's definition: the CreateTable request its model makes, the edits
// that add what the model does not say (stream, capacity, deletion protection,
// tags), and the definition for infrastructure as code (package design renders
// it as CloudFormation and Terraform).
//
// The edits are table-definition options; when the options move to one file
// (table.go), they go with them.

// CreateTableInput returns the CreateTable request [Table.CreateTable] sends for
// the table: its key attributes of their types (strings unless [WithKeyType]
// says otherwise) and every index key's, on-demand billing, the global and local
// secondary indexes with their projections (ALL unless declared otherwise; an
// INCLUDE list with the type and schema attributes added). Each edit then
// adjusts it, in order, as CreateTable's do: [EnableStream], [StreamView],
// [Provisioned], [DeletionProtection], [Tags] or a function of one's own.
//
// The result is checked before it is returned, so that CreateTable and
// [Table.Definition] never carry a request DynamoDB or the table would refuse:
// a nil edit, an edit that renames the table or changes its primary key,
// capacity that does not fit the billing mode, a stream without a view type or
// tags with an empty or repeated key fail with [ErrInvalidInput]. It calls
// nothing; every call returns a new input, which the caller may change.
func (t *Table) CreateTableInput(edits ...func(*dynamodb.CreateTableInput)) (*dynamodb.CreateTableInput, error) {
	if err := t.refused("Table.CreateTableInput"); err != nil {
		return nil, err
	}
	attrs := make([]types.AttributeDefinition, 0, len(t.keys))
	for _, name := range t.definedAttributes() { // multiattr.go: native index attributes too
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: t.keyType(name)})
	}
	in := &dynamodb.CreateTableInput{
		TableName:              aws.String(t.name),
		BillingMode:            types.BillingModePayPerRequest,
		AttributeDefinitions:   attrs,
		KeySchema:              tabledef.KeySchema(t.opts.PartitionKey, t.opts.SortKey),
		GlobalSecondaryIndexes: t.globalIndexes(), // indexes.go
		LocalSecondaryIndexes:  t.localIndexes(),
	}
	for i, e := range edits {
		if e == nil {
			return nil, errorf("table definition %s: edit %d is nil: %w", t.name, i+1, ErrInvalidInput)
		}
		e(in)
	}
	if err := tabledef.Check(in, t.name, t.opts.PartitionKey, t.opts.SortKey); err != nil {
		return nil, errorf("table definition %s: %w: %w", t.name, err, ErrInvalidInput)
	}
	return in, nil
}

// Definition returns the table's definition for infrastructure as code: the
// request [Table.CreateTableInput] returns with the same edits, and the TTL
// attribute CreateTable turns on ([Table.TTLAttribute]). Render it with the
// methods of [design.Definition]: CloudFormationJSON (which NoSQL Workbench
// imports), CloudFormationYAML and Terraform. It calls nothing.
func (t *Table) Definition(edits ...func(*dynamodb.CreateTableInput)) (*design.Definition, error) {
	if err := t.refused("Table.Definition"); err != nil {
		return nil, err
	}
	in, err := t.CreateTableInput(edits...)
	if err != nil {
		return nil, err
	}
	return &design.Definition{Input: in, TTLAttribute: t.ttlAttribute()}, nil // ttl.go
}

// CreateIndexInput returns the UpdateTable request that adds the declared global
// secondary index name to a table that exists without it: the index's key schema
// and projection as [Table.CreateTableInput] has them, and the definitions of its
// key attributes. This is how an index joins a populated table: DynamoDB fills it
// from the items that already store its key attributes (for a native index, the
// items' own attributes: nothing to write first; see docs/modelling.md, "Moving
// from synthetic keys"). It calls nothing; send it with the client's UpdateTable
// and wait for the index to become ACTIVE. A table under PROVISIONED billing needs
// the index's ProvisionedThroughput set on the returned input. A name the table
// does not declare, or a local index (which only CreateTable can add), fails with
// [ErrInvalidInput].
func (t *Table) CreateIndexInput(name string) (*dynamodb.UpdateTableInput, error) {
	if err := t.refused("Table.CreateIndexInput"); err != nil {
		return nil, err
	}
	in, err := t.CreateTableInput()
	if err != nil {
		return nil, err
	}
	up, local, names := tabledef.IndexInput(in, name)
	switch {
	case up != nil:
		return up, nil
	case local:
		return nil, errorf("CreateIndexInput(%q) on %s: a local secondary index can only be created with its table: %w", name, t.name, ErrInvalidInput)
	}
	return nil, errorf("CreateIndexInput(%q) on %s: the table declares no such global index%s: %w", name, t.name, didYouMean(name, names), ErrInvalidInput)
}

// StreamView is an edit for [Table.CreateTable], [Table.CreateTableInput] and
// [Table.Definition] that turns on the table's stream with the given view:
// KEYS_ONLY, NEW_IMAGE, OLD_IMAGE or NEW_AND_OLD_IMAGES ([EnableStream], which
// [ConsumeStream] and package streamlambda need for both images).
func StreamView(view types.StreamViewType) func(*dynamodb.CreateTableInput) {
	return func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view}
	}
}

// Provisioned is an edit for [Table.CreateTable], [Table.CreateTableInput] and
// [Table.Definition] that bills the table by provisioned capacity: read and
// write capacity units (at least 1 each) on the table and on every global
// secondary index. The default is on-demand (PAY_PER_REQUEST). An edit of
// one's own can give an index other figures after it.
func Provisioned(read, write int64) func(*dynamodb.CreateTableInput) {
	return func(in *dynamodb.CreateTableInput) {
		in.BillingMode = types.BillingModeProvisioned
		in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(read), WriteCapacityUnits: aws.Int64(write)}
		for i := range in.GlobalSecondaryIndexes {
			in.GlobalSecondaryIndexes[i].ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(read), WriteCapacityUnits: aws.Int64(write)}
		}
	}
}

// DeletionProtection is an edit for [Table.CreateTable], [Table.CreateTableInput]
// and [Table.Definition] that turns on the table's deletion protection: DeleteTable
// (and [Table.DeleteTable]) fails until it is turned off.
func DeletionProtection() func(*dynamodb.CreateTableInput) {
	return func(in *dynamodb.CreateTableInput) { in.DeletionProtectionEnabled = aws.Bool(true) }
}

// Tags is an edit for [Table.CreateTable], [Table.CreateTableInput] and
// [Table.Definition] that adds tags to the table, in the order of their keys. A
// key given twice, by two Tags edits or otherwise, is refused. tags is copied.
func Tags(tags map[string]string) func(*dynamodb.CreateTableInput) {
	tags = maps.Clone(tags)
	return func(in *dynamodb.CreateTableInput) {
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
		}
	}
}

// CreateTable calls CreateTable with the request [Table.CreateTableInput] returns
// for the same edits (key attributes, on-demand billing, the global and local
// secondary indexes with their projections, then each edit, checked); then waits
// (DescribeTable) until the table is ACTIVE or ctx ends, and turns TTL on when
// the table has a TTL attribute ([Table.EnableTTL]). Each edit may adjust the
// input before it is sent, for example to enable a stream ([EnableStream]).
func (t *Table) CreateTable(ctx context.Context, edits ...func(*dynamodb.CreateTableInput)) (err error) {
	if err := t.refused("Table.CreateTable"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "CreateTable")
	defer done(&err)
	if err := t.refuseExplain(ctx, "CreateTable"); err != nil { // explain.go
		return err
	}
	in, err := t.CreateTableInput(edits...) // definition.go
	if err != nil {
		return err
	}
	tc, err := t.tableCalls("CreateTable", "CreateTable", "DescribeTable") // client.go
	if err != nil {
		return err
	}
	if _, err := tc.CreateTable(ctx, in); err != nil {
		return errorf("CreateTable %s: %w", t.name, err)
	}
	return t.finishCreate(ctx, tc)
}

// finishCreate is what follows a CreateTable DynamoDB accepted, in
// CreateTable and EnsureTable: it waits until the table is ACTIVE, then turns
// its TTL on when the model has a TTL attribute.
func (t *Table) finishCreate(ctx context.Context, tc TableClient) error {
	if err := tabledef.WaitActive(ctx, tc, t.name); err != nil {
		return err
	}
	return t.enableTTLAfterCreate(ctx) // ttl.go
}

// DeleteTable calls DeleteTable and waits until the table is gone. A table that does
// not exist is not an error. Meant for tests.
func (t *Table) DeleteTable(ctx context.Context) (err error) {
	if err := t.refused("Table.DeleteTable"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "DeleteTable")
	defer done(&err)
	if err := t.refuseExplain(ctx, "DeleteTable"); err != nil { // explain.go
		return err
	}
	tc, err := t.tableCalls("DeleteTable", "DeleteTable", "DescribeTable") // client.go
	if err != nil {
		return err
	}
	_, err = tc.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.name)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return errorf("DeleteTable %s: %w", t.name, err)
	}
	return tabledef.WaitGone(ctx, tc, t.name)
}
