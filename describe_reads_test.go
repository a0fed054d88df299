package singletable

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/design"
)

// TestDescribeScansCountsProjectionsLocalIndexes: the design lists scans with
// their cost, says how counts cost, shows index projections and local indexes,
// notes which reads are partial, and shows key types and partition-only keys.
func TestDescribeScansCountsProjectionsLocalIndexes(t *testing.T) {
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	tbl, err := NewTable(c, "shop", indexTableOptions...)
	require.NoError(t, err)
	MustRegister[iOrder](tbl)
	MustRegister[iCustomer](tbl)
	d := tbl.Describe()

	require.Len(t, d.Scans, 3)
	assert.Equal(t, []string{"iCustomer"}, d.Scans[0].Entities)
	assert.Equal(t, "Scan", d.Scans[0].Operation)
	assert.Equal(t, "Scan(); ScanAll(); ScanCount()", d.Scans[0].Call)
	assert.Contains(t, d.Scans[0].Cost, "every item of the table, of every type")
	assert.Equal(t, []string{"iCustomer", "iOrder"}, d.Scans[2].Entities)
	assert.Equal(t, "Table.Scan(); Table.ScanAll(); Table.ScanCount()", d.Scans[2].Call)

	costs := map[string]string{}
	for _, p := range d.Patterns {
		if p.Operation == "Query" && len(p.Entities) == 1 && p.Entities[0] == "iOrder" {
			costs[p.Index] = p.Cost
		}
		require.NotEmpty(t, p.Cost, "every pattern says its cost")
	}
	assert.Contains(t, costs["KEYS"], "partial: the index projects KEYS_ONLY")
	assert.Contains(t, costs["KEYS"], "eventually consistent")
	assert.Contains(t, costs["INCL"], `partial: the index projects INCLUDE "status", "total", "customerId", "orderId", "Type", "_schema"`)
	assert.Contains(t, costs["LSI1"], "1 consistent")
	assert.Contains(t, costs[""], "`Count(k)` counts them (Select COUNT) at the same cost")

	var local design.Index
	for _, ix := range d.Indexes {
		if ix.Name == "LSI1" {
			local = ix
		}
	}
	assert.Equal(t, design.Index{Name: "LSI1", PartitionKey: "PK", SortKey: "LSI1SK", Local: true}, local)
	notes := strings.Join(d.Notes, "\n")
	assert.Contains(t, notes, "Reads of iOrder through KEYS (KEYS_ONLY) are partial: without `customerId`, `orderId`, `status`, `total`, `note` and `migrated`")
	assert.Contains(t, notes, "Reads of iOrder through INCL")
	assert.NotContains(t, notes, "Reads of iCustomer through INCL", "iCustomer's fields are all included")
	assert.Contains(t, notes, "Index LSI1 is local")

	md := d.Markdown()
	assert.Contains(t, md, "| index | partition key | sort key | projection | entities |")
	assert.Contains(t, md, "| KEYS | `KEYSPK` | `KEYSSK` | global, KEYS_ONLY | iOrder |")
	assert.Contains(t, md, "| LSI1 | `PK` | `LSI1SK` | local, ALL | iOrder |")
	assert.Contains(t, md, "## Scans and counts")
	assert.Contains(t, md, "Every query above can be counted instead")
	assert.Contains(t, d.Mermaid(), `"LSI1 (local)<br/>PK, LSI1SK"`)
	assert.Contains(t, d.Mermaid(), `"KEYS<br/>KEYS_ONLY<br/>KEYSPK, KEYSSK"`)

	// Key types and a partition-only key.
	nt, err := NewTable(c, "events", WithKeys("acct", ""), WithKeyType("acct", types.ScalarAttributeTypeN))
	require.NoError(t, err)
	type ev struct {
		_ struct{} `Type:"Ev" acct:"{a}"`
		A int      `dynamodbav:"a"`
	}
	MustRegister[ev](nt)
	nd := nt.Describe()
	assert.Equal(t, "", nd.SortKey)
	assert.Equal(t, map[string]types.ScalarAttributeType{"acct": "N"}, nd.KeyTypes)
	require.Len(t, nd.Patterns, 1, "the get; a partition holds one item")
	assert.Equal(t, `acct = "{a}"`, nd.Patterns[0].KeyCondition)
	nmd := nd.Markdown()
	assert.Contains(t, nmd, "Base table key `acct` (number) (partition only)")
	assert.Contains(t, nd.Mermaid(), `base[("table events<br/>acct")]`)
}
