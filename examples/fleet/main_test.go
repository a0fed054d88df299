package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/examples/exampleenv"
)

var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

func TestRun(t *testing.T) {
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), local.Client(t), local.StreamsClient(t), table, &out), out.String())
	got := out.String()
	t.Log(got)
	for _, want := range []string{
		"1. three consumers (blue, green, red) share the stream",
		"holds the shard",
		"is killed after handling",
		"took the shard",
		"3. every change handled: 12 orders × 20 steps, each order's in order",
		"c0/o0: [0 1 2",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
}
