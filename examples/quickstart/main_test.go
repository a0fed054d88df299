package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/examples/exampleenv"
)

var local exampleenv.Shared

// TestMain runs the program itself when the test binary is started again by
// TestRunsTwice, and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("QUICKSTART_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(local.Run(m))
}

// TestReadmeIsThisProgram: the README's quick start is this program, byte for
// byte, so what the README shows is what TestRunsTwice runs.
func TestReadmeIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	program, err := os.ReadFile("main.go")
	require.NoError(t, err)
	section := string(readme)
	i := strings.Index(section, "## Quick start")
	require.GreaterOrEqual(t, i, 0, "README.md has no Quick start section")
	section = section[i:]
	j := strings.Index(section, "```go\n")
	require.GreaterOrEqual(t, j, 0, "the Quick start section has no Go block")
	block := section[j+len("```go\n"):]
	block = block[:strings.Index(block, "```\n")]
	assert.Equal(t, string(program), block, "README.md's quick start and examples/quickstart/main.go differ: keep them the same")
}

// TestRunsTwice runs the program twice on the DynamoDB Local the environment
// names, as the README says: the first run creates the table, the second finds
// it as the model says; both print the README's line.
func TestRunsTwice(t *testing.T) {
	client := local.Client(t)
	dropApp(t, client)
	t.Cleanup(func() { dropApp(t, client) })
	for run := 1; run <= 2; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "QUICKSTART_RUN_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "run %d: %s", run, stderr.String())
		assert.Equal(t, "1 DELIVERED 3\n", string(out), "run %d", run)
	}
}

// dropApp deletes the quick start's table "app", when there is one, and waits
// until it is gone.
func dropApp(t *testing.T, client *dynamodb.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("app")})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return
	}
	require.NoError(t, err, "delete table app")
	waiter := dynamodb.NewTableNotExistsWaiter(client, func(o *dynamodb.TableNotExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	require.NoError(t, waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("app")}, 30*time.Second))
}
