package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRecordedEvent feeds the handler testdata/event.json, an INSERT, a MODIFY
// and a REMOVE recorded from DynamoDB Local's stream (by streamlambda's
// TestLambdaDecodesAsConsumeStream with STREAMLAMBDA_RECORD set): every record
// decodes into a Kitchen, and the response reports no failure.
func TestRecordedEvent(t *testing.T) {
	f, err := os.Open("testdata/event.json")
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	resp, err := run(t.Context(), f, &out, 0)
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	got := out.String()
	t.Log(got)
	for _, want := range []string{
		"3 records from arn:aws:dynamodb:ddblocal:",
		`INSERT K#k1 count=0 s="héllo" ss=[a b] ns=[1 20 300] bool=true null=false m=map[x:1 y:2] lm=[map[t:true] map[f:false]]`,
		`MODIFY K#k1 count=1 s="changed" ss=[c] ns=[1 20 300] bool=false null=true`,
		`REMOVE K#k1 count=1`,
		`response: {"batchItemFailures":[]}`,
	} {
		assert.Contains(t, got, want)
	}
}

// TestFailedRecord: the MODIFY fails downstream; the response names it, so
// Lambda retries from it, and the REMOVE after it on the same item is not run.
func TestFailedRecord(t *testing.T) {
	f, err := os.Open("testdata/event.json")
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	resp, err := run(t.Context(), f, &out, 1)
	require.NoError(t, err)
	require.Len(t, resp.BatchItemFailures, 1)
	assert.NotContains(t, out.String(), "REMOVE", "the item's later record waits for the retry")
	assert.Contains(t, out.String(), "INSERT")
	assert.Contains(t, out.String(), resp.BatchItemFailures[0].ItemIdentifier)
}
