// Package admin turns a table's model into a command-line program that
// operates the table: it describes the design, writes the table's definition,
// checks the deployed table for drift, reads and writes items by entity type
// through each entity's write pipeline, migrates items to their current schema
// and checks unique values, with progress on a terminal and JSON for scripts.
//
// The user's own command is five lines:
//
//	func main() {
//		cfg, err := config.LoadDefaultConfig(context.Background()) // credentials, region, AWS_ENDPOINT_URL
//		...
//		admin.Main(myapp.Table(dynamodb.NewFromConfig(cfg)))
//	}
//
// admin.Main receives the *singletable.Table the program built, with its
// entities registered: the client, and so the credentials, region and
// endpoint, are the program's (the AWS SDK's standard configuration, as the
// AWS CLI's). See docs/operations.md for a session of each subcommand.
//
// The package is a module of its own (github.com/singletable/singletable/admin),
// so that its dependencies (a progress bar, terminal detection) never enter
// the library's module graph.
package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/singletable/singletable"
)

// Exit codes of every subcommand (each --help lists them).
const (
	ExitOK          = 0   // done; nothing found that needs attention
	ExitFound       = 1   // done, and found something: drift, unique findings, items at an old schema version
	ExitUsage       = 2   // bad command line or bad input: nothing was sent
	ExitNotFound    = 3   // the item does not exist (get)
	ExitRefused     = 4   // the entity's write pipeline refused the write: a version conflict, a value not unique, validation, a condition
	ExitFailed      = 5   // an error talking to DynamoDB, or another failure
	ExitDeclined    = 6   // the confirmation was declined, or could not be asked (no terminal and no --yes): nothing was written
	ExitInterrupted = 130 // stopped by Ctrl-C (or SIGTERM); a migration resumes where it stopped when run again
)

// exitCodes is the table every --help ends with.
const exitCodes = `Exit codes:
  0    done
  1    found something: drift, unique findings, items at an old schema version
  2    usage error or bad input (nothing sent)
  3    item not found
  4    refused by the entity's write pipeline (version conflict, not unique, validation, condition)
  5    DynamoDB or other failure
  6    not confirmed: nothing written (answer y, or pass --yes)
  130  interrupted (Ctrl-C); run again to resume
`

// Stdio is where a command reads and writes: its input (put's items, the
// answer to a confirmation), its output (results: text, or JSON with --json)
// and its errors (messages, prompts and progress). Progress is drawn as a bar
// when Err is a terminal, written as plain lines otherwise; a confirmation is
// asked only when In is a terminal.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs the command line of os.Args on t, with the process's standard
// input, output and error, and exits with the command's exit code. Ctrl-C
// (SIGINT) or SIGTERM cancels the command's context: a long operation stops
// cleanly (a migration saves where it stood).
func Main(t *singletable.Table) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, t, os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name, args, summary string
	run                 func(c *cli, args []string) int
}

func commands() []command {
	return []command{
		{"describe", "[--format text|markdown|mermaid|json]", "the design: entities, keys, indexes, access patterns and their costs", (*cli).describe},
		{"definition", "--format cloudformation|cloudformation-yaml|terraform|json", "the table as infrastructure as code (json: the CreateTable request)", (*cli).definition},
		{"drift", "[--json]", "the deployed table against the model; exit 1 when they differ", (*cli).drift},
		{"ensure", "[--yes] [--dry-run]", "create the table when it is missing; else check it as drift does", (*cli).ensure},
		{"get", "ENTITY --key k=v ...", "one item, by its key's inputs", (*cli).get},
		{"query", "ENTITY [--index I] --key k=v ... [--limit N] [--cursor C]", "the entity's items under a key, as JSON lines", (*cli).query},
		{"scan", "[--type ENTITY] [--segments N] [--limit N]", "every item of the table (or of one entity), decoded by type, as JSON lines", (*cli).scan},
		{"put", "ENTITY [--create] < item.json", "write items (JSON objects) through the entity's write pipeline", (*cli).put},
		{"delete", "ENTITY --key k=v ...", "delete an item through the entity's write pipeline", (*cli).delete},
		{"migrate", "status|run [ENTITY] ...", "items per schema version; migrate them all (resumable)", (*cli).migrate},
		{"unique", "check|repair [ENTITY]", "unique values against their guards; repair orphan and missing guards", (*cli).unique},
		{"explain", "ENTITY get|put|create|delete|query|scan|count ...", "what a call would send and its cost, sending nothing", (*cli).explain},
	}
}

// cli is one run of the command line.
type cli struct {
	ctx   context.Context
	t     *singletable.Table
	io    Stdio
	prog  string
	entry string // the subcommand, for messages
}

// Run runs one command line (args, without the program's name) on t and
// returns its exit code (see the Exit constants). It never exits the process;
// Main does.
func Run(ctx context.Context, t *singletable.Table, args []string, stdio Stdio) int {
	if stdio.In == nil {
		stdio.In = strings.NewReader("")
	}
	if stdio.Out == nil {
		stdio.Out = io.Discard
	}
	if stdio.Err == nil {
		stdio.Err = io.Discard
	}
	c := &cli{ctx: ctx, t: t, io: stdio, prog: progName()}
	if t == nil {
		fmt.Fprintln(stdio.Err, "admin: the *singletable.Table is nil (was the error of NewTable ignored?)")
		return ExitUsage
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w := stdio.Err
		code := ExitUsage
		if len(args) > 0 {
			w, code = stdio.Out, ExitOK
		}
		c.usage(w)
		return code
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			c.entry = cmd.name
			return cmd.run(c, args[1:])
		}
	}
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	fmt.Fprintf(stdio.Err, "%s: unknown command %q; the commands: %s (%s --help)\n", c.prog, args[0], strings.Join(names, ", "), c.prog)
	return ExitUsage
}

// progName is the program's name for messages and usage.
func progName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		name := os.Args[0]
		if i := strings.LastIndexAny(name, `/\`); i >= 0 {
			name = name[i+1:]
		}
		if !strings.HasSuffix(name, ".test") {
			return name
		}
	}
	return "tableadmin"
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "%s operates table %s from its model (entities: %s).\n\nUsage: %s COMMAND [flags]\n\nCommands:\n", c.prog, c.t.Name(), strings.Join(c.t.EntityTypes(), ", "), c.prog)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n              %s\n", cmd.name, cmd.args, cmd.summary)
	}
	fmt.Fprintf(w, "\nEach command takes --help. Credentials, region and endpoint are the program's\n(the AWS SDK's configuration: environment, profiles, AWS_ENDPOINT_URL).\n\n%s", exitCodes)
}

// fail reports err and returns its exit code: an interrupted command is 130,
// bad input 2, a missing item 3, a refused write 4, anything else 5.
func (c *cli) fail(err error) int {
	code := exitCode(c.ctx, err)
	msg := err.Error()
	if code == ExitInterrupted {
		msg = "interrupted: " + msg
	}
	fmt.Fprintf(c.io.Err, "%s %s: %s\n", c.prog, c.entry, msg)
	return code
}

// exitCode maps an error to its exit code.
func exitCode(ctx context.Context, err error) int {
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return ExitUsage
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return ExitInterrupted
	case errors.Is(err, singletable.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, singletable.ErrConflict), errors.Is(err, singletable.ErrNotUnique), errors.Is(err, singletable.ErrValidation),
		errors.Is(err, singletable.ErrCondition), errors.Is(err, singletable.ErrTypeMismatch):
		return ExitRefused
	case errors.Is(err, singletable.ErrInvalidInput), errors.Is(err, singletable.ErrInvalidKey), errors.Is(err, singletable.ErrInvalidCursor),
		errors.Is(err, singletable.ErrUnknownType):
		return ExitUsage
	}
	return ExitFailed
}

// usageError is bad input to the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// entity returns the untyped access to the entity named typ, its discriminator.
func (c *cli) entity(typ string) (*singletable.AnyEntity, error) {
	e, err := c.t.AnyEntity(typ)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	return e, nil
}
