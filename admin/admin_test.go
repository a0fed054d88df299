package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

// The command line without DynamoDB: what sends nothing (describe,
// definition, explain) and what is refused before anything is sent. The
// example's tests (examples/admin) run every subcommand against DynamoDB Local.

type note struct {
	_      struct{} `Type:"Note" PK:"NOTE#{id}" SK:"N" GSI1PK:"TAG#{tag}" GSI1SK:"{id}"`
	ID     string   `dynamodbav:"id"`
	Tag    string   `dynamodbav:"tag,omitempty"`
	Text   string   `dynamodbav:"text"`
	Serial int64    `dynamodbav:"serial" singletable:"unique"`
}

func offline(t *testing.T) *singletable.Table {
	t.Helper()
	tbl, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "notes", singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := singletable.Register[note](tbl); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func run(t *testing.T, tbl *singletable.Table, input string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), tbl, args, Stdio{In: strings.NewReader(input), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestOffline(t *testing.T) {
	tbl := offline(t)
	for _, c := range []struct {
		args  []string
		input string
		code  int
		want  string // in the output or the errors
	}{
		{[]string{}, "", ExitUsage, "Usage: "},
		{[]string{"--help"}, "", ExitOK, "Exit codes:"},
		{[]string{"nope"}, "", ExitUsage, `unknown command "nope"`},
		{[]string{"describe"}, "", ExitOK, "note (type Note)"},
		{[]string{"describe", "--format", "mermaid"}, "", ExitOK, "flowchart"},
		{[]string{"describe", "extra"}, "", ExitUsage, `unexpected argument "extra"`},
		{[]string{"definition", "--format", "terraform"}, "", ExitOK, "aws_dynamodb_table"},
		{[]string{"definition", "--stream", "SOMETIMES"}, "", ExitUsage, `--stream "SOMETIMES"`},
		{[]string{"get"}, "", ExitUsage, "missing ENTITY"},
		{[]string{"get", "Nope", "--key", "id=1"}, "", ExitUsage, "no entity of type"},
		{[]string{"get", "Note", "--key", "id"}, "", ExitUsage, "want name=value"},
		{[]string{"get", "Note", "--key", "id=1", "--key", "id=2"}, "", ExitUsage, "--key id given twice"},
		{[]string{"get", "Note", "--key", "serial=x"}, "", ExitUsage, "serial (note.Serial)"},
		{[]string{"put", "Note", "--yes"}, "", ExitUsage, "no item on the input"},
		{[]string{"put", "Note", "--yes"}, `{"id":"1","txt":"x"}`, ExitUsage, `did you mean "text"`},
		{[]string{"put", "Note", "--yes"}, `{"id":"1"`, ExitUsage, "item 1 of the input"},
		{[]string{"put", "Note"}, `{"id":"1","text":"x"}`, ExitDeclined, "pass --yes"},
		{[]string{"put", "Note", "--dry-run"}, `{"id":"1","text":"x","serial":7}`, ExitOK, "TransactWriteItems"},
		{[]string{"scan", "--segments", "0"}, "", ExitUsage, "--segments 0"},
		{[]string{"explain", "Note", "query", "--key", "tag=a", "--index", "GSI1"}, "", ExitOK, "Query"},
		{[]string{"explain", "Note", "get", "--key", "id=1", "--limit", "3"}, "", ExitUsage, "--limit does not apply to get"},
		{[]string{"explain", "Note", "fly"}, "", ExitUsage, `unknown operation "fly"`},
		{[]string{"migrate"}, "", ExitUsage, "missing subcommand"},
		{[]string{"migrate", "status"}, "", ExitUsage, "no entity of table notes has migrations"},
		{[]string{"migrate", "run", "--segments", "-1"}, "", ExitUsage, "--segments -1"},
		{[]string{"unique", "check", "--yes"}, "", ExitUsage, "flag provided but not defined: -yes"},
		{[]string{"unique", "mend"}, "", ExitUsage, `unknown subcommand "mend"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := run(t, tbl, c.input, c.args...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Errorf("exit %d (want %d), want %q in\n%s%s", code, c.code, c.want, out, errs)
			}
		})
	}
	if code, _, _ := run(t, nil, "", "describe"); code != ExitUsage {
		t.Errorf("a nil table: exit %d", code)
	}
}

func TestExitCode(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		code int
	}{
		{ctx, usagef("x"), ExitUsage},
		{ctx, fmt.Errorf("get: %w", singletable.ErrNotFound), ExitNotFound},
		{ctx, fmt.Errorf("put: %w", singletable.ErrConflict), ExitRefused},
		{ctx, fmt.Errorf("put: %w", singletable.ErrNotUnique), ExitRefused},
		{ctx, fmt.Errorf("put: %w", singletable.ErrValidation), ExitRefused},
		{ctx, fmt.Errorf("q: %w", singletable.ErrInvalidCursor), ExitUsage},
		{cancelled, fmt.Errorf("sweep: %w", context.Canceled), ExitInterrupted},
		{ctx, fmt.Errorf("sweep: %w", context.Canceled), ExitFailed},
		{ctx, errors.New("throttled"), ExitFailed},
	} {
		if got := exitCode(c.ctx, c.err); got != c.code {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}
