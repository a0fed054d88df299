package design_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/design"
)

// The shop model of the definition tests: customers and their orders in one
// partition, an INCLUDE index of orders by status, a KEYS_ONLY index, an index
// sorted by a number key, a local index by date, a native (multi-attribute)
// index of orders by tenant and status sorted by total, and sessions that expire
// (a ttl field, so the table has a TTL attribute).
type shopCustomer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
}

type shopOrder struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}" KEYSPK:"ORDER#{orderId}" AMTPK:"CUST#{customerId}" AMTSK:"{total}" LSI1SK:"{createdAt:date}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status"`
	Total      int64     `dynamodbav:"total"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Tenant     string    `dynamodbav:"tenant,omitempty"`
}

type shopSession struct {
	_          struct{} `Type:"Session" PK:"CUST#{customerId}" SK:"SESSION#{id}"`
	CustomerID string   `dynamodbav:"customerId"`
	ID         string   `dynamodbav:"id"`
	ExpiresAt  int64    `dynamodbav:"expiresAt" singletable:"ttl"`
}

// shopTable describes the shop table named name on client (nil: one that is
// never called).
func shopTable(t *testing.T, client singletable.Client, name string) *singletable.Table {
	t.Helper()
	if client == nil {
		client = offlineClient()
	}
	table, err := singletable.NewTable(client, name,
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK", singletable.ProjectInclude("status", "total")),
		singletable.WithIndex("KEYS", "KEYSPK", "", singletable.ProjectKeysOnly()),
		singletable.WithIndex("AMOUNT", "AMTPK", "AMTSK"),
		singletable.WithKeyType("AMTSK", types.ScalarAttributeTypeN),
		singletable.WithLocalIndex("LSI1", "LSI1SK"),
		singletable.WithNativeIndex("ByTenantStatus", singletable.NativeKey{
			Partition: []singletable.KeyAttribute{singletable.S("tenant"), singletable.S("status")},
			Sort:      []singletable.KeyAttribute{singletable.N("total"), singletable.S("orderId")},
		}, singletable.ProjectKeysOnly()),
	)
	require.NoError(t, err)
	singletable.MustRegister[shopCustomer](table)
	singletable.MustRegister[shopOrder](table)
	singletable.MustRegister[shopSession](table)
	return table
}

// fullEdits are the edits of the full definition: a stream, deletion
// protection and tags, one with characters every format must quote.
func fullEdits() []func(*dynamodb.CreateTableInput) {
	return []func(*dynamodb.CreateTableInput){
		singletable.StreamView(types.StreamViewTypeNewAndOldImages),
		singletable.DeletionProtection(),
		singletable.Tags(map[string]string{"team": "orders", "cost center": `"42": yes ${var} %{x}`}),
	}
}

// definitions are the definitions the golden and structure tests render.
func definitions(t *testing.T) map[string]*design.Definition {
	t.Helper()
	full, err := shopTable(t, nil, "shop").Definition(fullEdits()...)
	require.NoError(t, err)
	provisioned, err := shopTable(t, nil, "shop-provisioned").Definition(singletable.Provisioned(5, 2))
	require.NoError(t, err)
	plain, err := singletable.NewTable(offlineClient(), "plain")
	require.NoError(t, err)
	minimal, err := plain.Definition()
	require.NoError(t, err)
	return map[string]*design.Definition{"shop": full, "shop-provisioned": provisioned, "plain": minimal}
}

// TestCloudFormationGolden renders the definitions as CloudFormation JSON and
// YAML and compares them with testdata/definition (go test -run
// 'CloudFormation|Terraform' -update rewrites them).
func TestCloudFormationGolden(t *testing.T) {
	for name, def := range definitions(t) {
		t.Run(name, func(t *testing.T) {
			j, err := def.CloudFormationJSON()
			require.NoError(t, err)
			require.True(t, json.Valid(j))
			goldenFile(t, filepath.Join("testdata", "definition", name+".cfn.json"), "CloudFormation", string(j))
			y, err := def.CloudFormationYAML()
			require.NoError(t, err)
			goldenFile(t, filepath.Join("testdata", "definition", name+".cfn.yaml"), "CloudFormation", string(y))
		})
	}
}

// TestCloudFormationYAMLIsTheJSON reads the YAML template back with a YAML
// parser and finds exactly the JSON template, strings that YAML would read as
// something else (yes, numbers, dates, colons, quotes) included.
func TestCloudFormationYAMLIsTheJSON(t *testing.T) {
	defs := definitions(t)
	odd := defs["plain"]
	odd.Input.Tags = nil
	for _, v := range []string{"yes", "No", "on", "null", "~", "123", "1e3", "0x1F", "2024-05-01", "a: b", "a #b", "-x", "? q", "- d", "[x]", "{y}", "*z", "&w", "!t", "|l", ">f",
		"@a", "`b", `q"uote`, `back\slash`, "new\nline", "tab\tx", "ünïcödé", "  padded ", "", ":", "x:", "%p", "AWS::DynamoDB::Table"} {
		odd.Input.Tags = append(odd.Input.Tags, types.Tag{Key: aws.String("k" + v), Value: aws.String(v)})
	}
	for name, def := range defs {
		t.Run(name, func(t *testing.T) {
			j, err := def.CloudFormationJSON()
			require.NoError(t, err)
			y, err := def.CloudFormationYAML()
			require.NoError(t, err)
			var fromJSON, fromYAML any
			require.NoError(t, json.Unmarshal(j, &fromJSON))
			require.NoError(t, json.Unmarshal(yamlToJSON(t, y), &fromYAML))
			require.Equal(t, fromJSON, fromYAML)
		})
	}
}

// TestTerraformGolden renders the definitions as Terraform and compares them
// with testdata/definition.
func TestTerraformGolden(t *testing.T) {
	for name, def := range definitions(t) {
		t.Run(name, func(t *testing.T) {
			h, err := def.Terraform()
			require.NoError(t, err)
			goldenFile(t, filepath.Join("testdata", "definition", name+".tf"), "Terraform", string(h))
		})
	}
}

// TestTableDefinitionUnsupported: a request field no format writes is refused,
// naming the field, never left out; so are resource names a format cannot hold,
// an SSE type Terraform cannot write, and a definition without a request.
func TestTableDefinitionUnsupported(t *testing.T) {
	renders := map[string]func(*design.Definition) ([]byte, error){
		"CloudFormationJSON": (*design.Definition).CloudFormationJSON,
		"CloudFormationYAML": (*design.Definition).CloudFormationYAML,
		"Terraform":          (*design.Definition).Terraform,
	}
	edits := map[string]func(*dynamodb.CreateTableInput){
		"WarmThroughput": func(in *dynamodb.CreateTableInput) {
			in.WarmThroughput = &types.WarmThroughput{ReadUnitsPerSecond: aws.Int64(20000)}
		},
		"OnDemandThroughput": func(in *dynamodb.CreateTableInput) {
			in.OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(10)}
		},
		"ResourcePolicy": func(in *dynamodb.CreateTableInput) { in.ResourcePolicy = aws.String("{}") },
		"VectorIndexes":  func(in *dynamodb.CreateTableInput) { in.VectorIndexes = []types.VectorIndex{{}} },
		"GlobalSecondaryIndexes[GSI1].OnDemandThroughput": func(in *dynamodb.CreateTableInput) {
			in.GlobalSecondaryIndexes[0].OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(10)}
		},
	}
	for field, edit := range edits {
		def, err := shopTable(t, nil, "shop").Definition(edit)
		require.NoError(t, err, "the root's check leaves these to DynamoDB")
		for format, render := range renders {
			out, err := render(def)
			require.ErrorIs(t, err, design.ErrUnsupported, "%s %s", format, field)
			require.ErrorContains(t, err, field)
			require.Nil(t, out)
		}
	}

	def, err := shopTable(t, nil, "shop").Definition()
	require.NoError(t, err)
	for _, bad := range []string{"has-dash", "under_score", "Ünï", strings.Repeat("x", 256)} {
		def.Resource = bad
		_, err = def.CloudFormationJSON()
		require.ErrorIs(t, err, design.ErrUnsupported, bad)
	}
	for _, bad := range []string{"1table", "-x", "has space", "a.b"} {
		def.Resource = bad
		_, err = def.Terraform()
		require.ErrorIs(t, err, design.ErrUnsupported, bad)
	}
	def.Resource = "Orders"
	cfn, err := def.CloudFormationJSON()
	require.NoError(t, err)
	require.Contains(t, string(cfn), `"Orders": {`)
	tf, err := def.Terraform()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(tf), `resource "aws_dynamodb_table" "Orders" {`))

	def.Resource = ""
	def.Input.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeAes256}
	_, err = def.Terraform()
	require.ErrorIs(t, err, design.ErrUnsupported)
	require.ErrorContains(t, err, "AES256")

	for format, render := range renders {
		_, err := render(&design.Definition{})
		require.Error(t, err, format)
	}
}

// TestTableDefinitionResourceNames: without a resource name, each format
// derives one from the table name that it can hold.
func TestTableDefinitionResourceNames(t *testing.T) {
	for _, tc := range []struct{ table, cfn, tf string }{
		{"orders", "OrdersTable", "orders"},
		{"my-app.orders_v2", "MyAppOrdersV2Table", "my_app_orders_v2"},
		{"2024-events", "2024EventsTable", "table_2024_events"},
	} {
		table, err := singletable.NewTable(offlineClient(), tc.table)
		require.NoError(t, err)
		def, err := table.Definition()
		require.NoError(t, err)
		cfn, err := def.CloudFormationJSON()
		require.NoError(t, err)
		require.Contains(t, string(cfn), `"`+tc.cfn+`": {`)
		tf, err := def.Terraform()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(tf), `resource "aws_dynamodb_table" "`+tc.tf+`" {`), "%s", tf)
	}
}

// yamlToJSON reads a YAML document with a YAML parser and writes what it read
// as JSON.
func yamlToJSON(t *testing.T, y []byte) []byte {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(y, &v), "%s", y)
	j, err := json.Marshal(v)
	require.NoError(t, err)
	return j
}
