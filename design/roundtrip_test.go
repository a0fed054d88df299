package design_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/localtest"
)

// The round trips: a template read back into a CreateTable request, by code
// that knows only the format, creates on DynamoDB Local the table that
// Table.CreateTable creates.

// cfnTemplate is what the round trip reads of a CloudFormation template: every
// property the renderer may write, and nothing else (unknown fields fail).
type cfnTemplate struct {
	AWSTemplateFormatVersion string
	Description              string
	Resources                map[string]struct {
		Type       string
		Properties cfnProperties
	}
}

type cfnKey struct{ AttributeName, KeyType string }

type cfnThroughput struct{ ReadCapacityUnits, WriteCapacityUnits int64 }

type cfnProjection struct {
	ProjectionType   string
	NonKeyAttributes []string
}

type cfnProperties struct {
	TableName              string
	BillingMode            string
	ProvisionedThroughput  *cfnThroughput
	TableClass             string
	AttributeDefinitions   []struct{ AttributeName, AttributeType string }
	KeySchema              []cfnKey
	GlobalSecondaryIndexes []struct {
		IndexName             string
		KeySchema             []cfnKey
		Projection            cfnProjection
		ProvisionedThroughput *cfnThroughput
	}
	LocalSecondaryIndexes []struct {
		IndexName  string
		KeySchema  []cfnKey
		Projection cfnProjection
	}
	StreamSpecification     *struct{ StreamViewType string }
	TimeToLiveSpecification *struct {
		AttributeName string
		Enabled       bool
	}
	SSESpecification *struct {
		SSEEnabled     bool
		SSEType        string
		KMSMasterKeyId string
	}
	DeletionProtectionEnabled *bool
	Tags                      []struct{ Key, Value string }
}

// fromCloudFormation reads a template's one table back into a CreateTable
// request and the TTL attribute it turns on.
func fromCloudFormation(t *testing.T, template []byte) (*dynamodb.CreateTableInput, string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(template))
	dec.DisallowUnknownFields()
	var tmpl cfnTemplate
	require.NoError(t, dec.Decode(&tmpl))
	require.Equal(t, "2010-09-09", tmpl.AWSTemplateFormatVersion)
	require.Len(t, tmpl.Resources, 1)
	var p cfnProperties
	for _, r := range tmpl.Resources {
		require.Equal(t, "AWS::DynamoDB::Table", r.Type)
		p = r.Properties
	}
	keys := func(ks []cfnKey) []types.KeySchemaElement {
		var out []types.KeySchemaElement
		for _, k := range ks {
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
		}
		return out
	}
	throughput := func(c *cfnThroughput) *types.ProvisionedThroughput {
		if c == nil {
			return nil
		}
		return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(c.ReadCapacityUnits), WriteCapacityUnits: aws.Int64(c.WriteCapacityUnits)}
	}
	projection := func(c cfnProjection) *types.Projection {
		return &types.Projection{ProjectionType: types.ProjectionType(c.ProjectionType), NonKeyAttributes: c.NonKeyAttributes}
	}
	in := &dynamodb.CreateTableInput{
		TableName:             aws.String(p.TableName),
		BillingMode:           types.BillingMode(p.BillingMode),
		ProvisionedThroughput: throughput(p.ProvisionedThroughput),
		TableClass:            types.TableClass(p.TableClass),
		KeySchema:             keys(p.KeySchema),
	}
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, ix := range p.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.IndexName), KeySchema: keys(ix.KeySchema), Projection: projection(ix.Projection), ProvisionedThroughput: throughput(ix.ProvisionedThroughput),
		})
	}
	for _, ix := range p.LocalSecondaryIndexes {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{IndexName: aws.String(ix.IndexName), KeySchema: keys(ix.KeySchema), Projection: projection(ix.Projection)})
	}
	if s := p.StreamSpecification; s != nil {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(s.StreamViewType)}
	}
	if s := p.SSESpecification; s != nil {
		in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(s.SSEEnabled), SSEType: types.SSEType(s.SSEType)}
		if s.KMSMasterKeyId != "" {
			in.SSESpecification.KMSMasterKeyId = aws.String(s.KMSMasterKeyId)
		}
	}
	in.DeletionProtectionEnabled = p.DeletionProtectionEnabled
	for _, tag := range p.Tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(tag.Key), Value: aws.String(tag.Value)})
	}
	ttl := ""
	if s := p.TimeToLiveSpecification; s != nil {
		require.True(t, s.Enabled)
		ttl = s.AttributeName
	}
	return in, ttl
}

// tableShape is what the round trip compares of a created table.
type tableShape struct {
	KeySchema     []types.KeySchemaElement
	Attributes    []types.AttributeDefinition
	Billing       types.BillingMode
	Read, Write   int64
	Global, Local []indexShape
	Stream        *types.StreamSpecification
	Deletion      bool
	TTL           string
	TTLStatus     types.TimeToLiveStatus
}

type indexShape struct {
	Name        string
	KeySchema   []types.KeySchemaElement
	Projection  types.ProjectionType
	NonKey      []string
	Read, Write int64
}

// shapeOf describes a table as DynamoDB has it: DescribeTable and
// DescribeTimeToLive. (DynamoDB Local keeps no tags: ListTagsOfResource is
// "not currently supported". The tags are compared in the requests.)
func shapeOf(t *testing.T, client *dynamodb.Client, name string) tableShape {
	t.Helper()
	ctx := t.Context()
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	td := out.Table
	s := tableShape{KeySchema: td.KeySchema, Attributes: td.AttributeDefinitions, Stream: td.StreamSpecification, Deletion: aws.ToBool(td.DeletionProtectionEnabled)}
	s.Billing = types.BillingModeProvisioned
	if td.BillingModeSummary != nil && td.BillingModeSummary.BillingMode != "" {
		s.Billing = td.BillingModeSummary.BillingMode
	}
	if p := td.ProvisionedThroughput; p != nil {
		s.Read, s.Write = aws.ToInt64(p.ReadCapacityUnits), aws.ToInt64(p.WriteCapacityUnits)
	}
	slices.SortFunc(s.Attributes, func(a, b types.AttributeDefinition) int {
		return strings.Compare(aws.ToString(a.AttributeName), aws.ToString(b.AttributeName))
	})
	for _, ix := range td.GlobalSecondaryIndexes {
		is := indexShape{Name: aws.ToString(ix.IndexName), KeySchema: ix.KeySchema, Projection: ix.Projection.ProjectionType, NonKey: ix.Projection.NonKeyAttributes}
		if p := ix.ProvisionedThroughput; p != nil {
			is.Read, is.Write = aws.ToInt64(p.ReadCapacityUnits), aws.ToInt64(p.WriteCapacityUnits)
		}
		s.Global = append(s.Global, is)
	}
	for _, ix := range td.LocalSecondaryIndexes {
		s.Local = append(s.Local, indexShape{Name: aws.ToString(ix.IndexName), KeySchema: ix.KeySchema, Projection: ix.Projection.ProjectionType, NonKey: ix.Projection.NonKeyAttributes})
	}
	for _, ixs := range [][]indexShape{s.Global, s.Local} {
		slices.SortFunc(ixs, func(a, b indexShape) int { return strings.Compare(a.Name, b.Name) })
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	require.NoError(t, err)
	if d := ttl.TimeToLiveDescription; d != nil {
		s.TTL, s.TTLStatus = aws.ToString(d.AttributeName), d.TimeToLiveStatus
	}
	return s
}

// createFrom creates a table from a request read back from a template, as a
// deployment of the template would, and turns on its TTL.
func createFrom(t *testing.T, client *dynamodb.Client, in *dynamodb.CreateTableInput, ttl string) {
	t.Helper()
	ctx := t.Context()
	_, err := client.CreateTable(ctx, in)
	require.NoError(t, err)
	t.Cleanup(func() { dropTable(client, aws.ToString(in.TableName)) })
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	require.NoError(t, waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, time.Minute))
	if ttl != "" {
		_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: in.TableName, TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(ttl), Enabled: aws.Bool(true)}})
		require.NoError(t, err)
	}
}

// dropTable turns deletion protection off and deletes a test's table.
func dropTable(client *dynamodb.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(false)})
	_, _ = client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
}

// roundTrips are the tables the round trips create: the shop with a stream,
// deletion protection, tags and TTL; the shop billed by provisioned capacity.
func roundTrips() map[string][]func(*dynamodb.CreateTableInput) {
	return map[string][]func(*dynamodb.CreateTableInput){
		"full":        fullEdits(),
		"provisioned": {singletable.Provisioned(5, 2)},
	}
}

// TestCloudFormationRoundTrip creates the shop table with Table.CreateTable and
// again from its CloudFormation template read back into a CreateTable request
// (and TTL): the request read back is the one CreateTable sends, tags
// included, and DynamoDB Local describes the two tables alike: key schema,
// attributes, indexes and projections, billing and capacity, stream, deletion
// protection and TTL.
func TestCloudFormationRoundTrip(t *testing.T) {
	for name, edits := range roundTrips() {
		t.Run(name, func(t *testing.T) {
			client := local.Client(t)
			table := shopTable(t, client, localtest.TableName(t))
			require.NoError(t, table.CreateTable(t.Context(), edits...))
			t.Cleanup(func() { dropTable(client, table.Name()) })
			want := shapeOf(t, client, table.Name())
			require.Equal(t, "expiresAt", want.TTL, "CreateTable turned TTL on")

			def, err := table.Definition(edits...)
			require.NoError(t, err)
			for format, render := range map[string]func() ([]byte, error){"JSON": def.CloudFormationJSON, "YAML": def.CloudFormationYAML} {
				out, err := render()
				require.NoError(t, err)
				if format == "YAML" {
					out = yamlToJSON(t, out)
				}
				in, ttl := fromCloudFormation(t, out)
				require.Equal(t, def.Input, in, "%s: the template holds the request", format)
				in.TableName = aws.String(table.Name() + "-" + format)
				createFrom(t, client, in, ttl)
				require.Equal(t, want, shapeOf(t, client, aws.ToString(in.TableName)), format)
			}
		})
	}
}

// TestTerraformRoundTrip does as TestCloudFormationRoundTrip with the Terraform
// resource, read back by a parser of the HCL it is written in.
func TestTerraformRoundTrip(t *testing.T) {
	for name, edits := range roundTrips() {
		t.Run(name, func(t *testing.T) {
			client := local.Client(t)
			table := shopTable(t, client, localtest.TableName(t))
			require.NoError(t, table.CreateTable(t.Context(), edits...))
			t.Cleanup(func() { dropTable(client, table.Name()) })
			want := shapeOf(t, client, table.Name())

			def, err := table.Definition(edits...)
			require.NoError(t, err)
			hcl, err := def.Terraform()
			require.NoError(t, err)
			in, ttl := fromTerraform(t, hcl)
			require.Equal(t, def.Input, in, "the resource holds the request")
			require.Equal(t, def.TTLAttribute, ttl)
			in.TableName = aws.String(table.Name() + "-tf")
			createFrom(t, client, in, ttl)
			require.Equal(t, want, shapeOf(t, client, aws.ToString(in.TableName)))
		})
	}
}

// TestTableDefinitionMatchesDesign: the definition and the design of one table
// agree on its indexes and TTL attribute.
func TestTableDefinitionMatchesDesign(t *testing.T) {
	table := shopTable(t, nil, "shop")
	def, err := table.Definition()
	require.NoError(t, err)
	d := table.Describe()
	require.Equal(t, d.TTLAttribute, def.TTLAttribute)
	var names []string
	for _, ix := range d.Indexes {
		names = append(names, ix.Name)
		var proj *types.Projection
		for _, g := range def.Input.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == ix.Name {
				proj = g.Projection
			}
		}
		for _, l := range def.Input.LocalSecondaryIndexes {
			if aws.ToString(l.IndexName) == ix.Name {
				proj = l.Projection
			}
		}
		require.NotNil(t, proj, ix.Name)
		require.Equal(t, ix.NonKeyAttributes, proj.NonKeyAttributes, "%s: the design shows the INCLUDE list the table is created with", ix.Name)
	}
	require.Equal(t, []string{"GSI1", "KEYS", "AMOUNT", "LSI1", "ByTenantStatus"}, names)
}
