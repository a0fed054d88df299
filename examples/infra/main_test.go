package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/examples/exampleenv"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it.
var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

// TestDefinitions renders the definitions without a database and writes them
// into a directory with -out.
func TestDefinitions(t *testing.T) {
	files, err := definitions()
	require.NoError(t, err)
	require.True(t, json.Valid(files["shop.cfn.json"]))
	assert.Contains(t, string(files["shop.cfn.json"]), `"Type": "AWS::DynamoDB::Table"`)
	assert.Contains(t, string(files["shop.cfn.yaml"]), "StreamViewType: NEW_AND_OLD_IMAGES")
	assert.Contains(t, string(files["shop.tf"]), `resource "aws_dynamodb_table" "shop" {`)
	assert.Contains(t, string(files["shop.md"]), "# Table `shop`")

	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, write(files, dir, &out))
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), name)
	}
	assert.Contains(t, out.String(), "shop.tf (")
}

// TestDeploy deploys the CloudFormation template to DynamoDB Local: the table
// matches the model, and the check names what a model change adds.
func TestDeploy(t *testing.T) {
	files, err := definitions()
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, deploy(t.Context(), local.Client(t), files["shop.cfn.json"], exampleenv.TableName(t), &out))
	t.Log(out.String())
	assert.Contains(t, out.String(), "check against the model: the deployed table matches it")
	assert.Contains(t, out.String(), "check against the next model (with GSI2): 1 difference")
	assert.Contains(t, out.String(), "  index GSI2: the model has global index: GSI2PK HASH, GSI2SK RANGE; KEYS_ONLY, the table has none\n    fix: add it with the UpdateTable request of Table.CreateIndexInput(\"GSI2\")")
}

// TestCheckFindsDrift: a table created without the stream and TTL the model
// gives it differs from the model in both.
func TestCheckFindsDrift(t *testing.T) {
	client := local.Client(t)
	table, err := NewTable(client, exampleenv.TableName(t))
	require.NoError(t, err)
	require.NoError(t, table.CreateTable(t.Context())) // no edits: no stream; CreateTable turns TTL on
	exampleenv.DeleteAtCleanup(t, table)
	drift, err := table.Drift(t.Context(), edits()...)
	require.NoError(t, err)
	require.Len(t, drift, 1)
	assert.Equal(t, "stream: the model has NEW_AND_OLD_IMAGES, the table has none", drift[0].String())
}
