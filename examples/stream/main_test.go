package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/examples/exampleenv"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it. Under CI=true a missing one fails the tests instead of
// skipping them.
var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

func TestRun(t *testing.T) {
	client := local.Client(t)
	streams := local.StreamsClient(t) // shares the instance's connections, closed by local.Run
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), client, streams, table, &out), out.String())
	got := out.String()
	for _, want := range []string{
		"created table " + table + " with a stream",
		"1. 40 orders go through 5 statuses each",
		"handled 200 changes: every order's in order, up to ",
		"the first changes applied, interleaved across orders: ",
		"c01/o1 PLACED → PAID → PACKED → SHIPPED → DELIVERED\n",
		"c10/o4 PLACED → PAID → PACKED → SHIPPED → DELIVERED\n",
		"checkpoints saved for 1 shard(s)",
		"2. While no consumer runs, 10 orders are RETURNED",
		"handled 10 changes, only the new ones",
		"c01/o1 PLACED → PAID → PACKED → SHIPPED → DELIVERED → RETURNED\n",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

// change is the stream record of an order moving from step-1 to step.
func change(id string, step int) singletable.StreamRecord {
	o := Order{CustomerID: "c01", OrderID: id, Step: step, Status: lifecycle[step]}
	if step == 0 {
		return singletable.StreamRecord{Event: singletable.StreamInsert, New: o}
	}
	prev := o
	prev.Step, prev.Status = step-1, lifecycle[step-1]
	return singletable.StreamRecord{Event: singletable.StreamModify, Old: prev, New: o}
}

func TestFulfilmentInOrder(t *testing.T) {
	f := NewFulfilment(0)
	for step := range 3 {
		require.NoError(t, f.Handle(t.Context(), change("o1", step)))
	}
	require.NoError(t, f.Handle(t.Context(), change("o1", 1)), "a repeat is not an error")
	assert.Equal(t, 1, f.Repeats(), "a repeat is skipped")
	assert.NoError(t, f.Check([]string{"c01/o1"}, 3))
	assert.Equal(t, "PLACED → PAID → PACKED", f.Timeline("c01/o1"))
	assert.Equal(t, []string{"c01/o1 PLACED", "c01/o1 PAID"}, f.Applied(2))
}

func TestFulfilmentOutOfOrder(t *testing.T) {
	f := NewFulfilment(0)
	require.NoError(t, f.Handle(t.Context(), change("o1", 0)))
	require.NoError(t, f.Handle(t.Context(), change("o1", 2)), "PACKED before PAID")
	err := f.Check([]string{"c01/o1"}, 3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c01/o1: PACKED (step 2) after step 0")
}

func TestFulfilmentHonoursContext(t *testing.T) {
	f := NewFulfilment(time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, f.Handle(ctx, change("o1", 0)), context.Canceled)
	assert.Empty(t, f.Timeline("c01/o1"), "a change whose context ended is not applied")
}
