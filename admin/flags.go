package admin

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// flags is a subcommand's flag set, with its usage text.
type flags struct {
	*flag.FlagSet
	c           *cli
	use, about  string
	positional  []string // the names of the positional arguments, for messages
	optionalPos int      // how many of the last positional arguments may be left out
	json        bool
	yes, dry    *bool
	writes      bool
}

// newFlags makes the flag set of subcommand use ("get ENTITY --key k=v ...").
// Every subcommand takes --json.
func (c *cli) newFlags(use, about string) *flags {
	name := strings.Fields(use)[0]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := &flags{FlagSet: fs, c: c, use: use, about: about}
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.json, "json", false, "write the result as JSON (JSON lines for items), for scripts")
	return f
}

// writer adds --yes and --dry-run, for a subcommand that writes.
func (f *flags) writer() {
	f.writes = true
	f.yes = f.Bool("yes", false, "write without asking for confirmation")
	f.dry = f.Bool("dry-run", false, "show what would be sent and what it would cost, and send nothing (Explain)")
}

// printUsage writes the subcommand's help.
func (f *flags) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\nFlags:\n", f.c.prog, f.use, f.about)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprintf(w, "\n%s", exitCodes)
}

// parse parses args, flags and positional arguments in any order, into the
// positional arguments (want: their count, of which optionalPos may be left
// out). --help prints the usage to the output and returns done with ExitOK; a
// bad command line prints the error and the usage and returns ExitUsage.
func (f *flags) parse(args []string, want int) (pos []string, code int, done bool) {
	rest := args
	for {
		if err := f.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printUsage(f.c.io.Out)
				return nil, ExitOK, true
			}
			return nil, f.usageErr("%v", err), true
		}
		rest = f.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
	if len(pos) > want {
		return nil, f.usageErr("unexpected argument %q", pos[want]), true
	}
	if len(pos) < want-f.optionalPos {
		return nil, f.usageErr("missing %s", f.positional[len(pos)]), true
	}
	return pos, 0, false
}

// usageErr reports a usage error with the subcommand's usage line, and
// returns ExitUsage.
func (f *flags) usageErr(format string, args ...any) int {
	fmt.Fprintf(f.c.io.Err, "%s %s: %s\nUsage: %s %s (--help for more)\n", f.c.prog, f.c.entry, fmt.Sprintf(format, args...), f.c.prog, f.use)
	return ExitUsage
}

// keyFlags is a repeated --key name=value.
type keyFlags map[string]string

func (k keyFlags) String() string { return "" }

func (k keyFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("--key %q: want name=value, e.g. --key customerId=c1", s)
	}
	if _, dup := k[name]; dup {
		return fmt.Errorf("--key %s given twice", name)
	}
	k[name] = value
	return nil
}

// isTerminal says whether v is a terminal (an *os.File on one).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirm asks "question [y/N]" on the error stream and reads the answer from
// the input: true for y or yes. Without a terminal on the input it asks
// nothing and returns false, saying to pass --yes.
func (c *cli) confirm(yes bool, question string) bool {
	if yes {
		return true
	}
	if !isTerminal(c.io.In) {
		fmt.Fprintf(c.io.Err, "%s %s: %s: not confirmed (the input is not a terminal to ask on); pass --yes to write without asking\n", c.prog, c.entry, question)
		return false
	}
	fmt.Fprintf(c.io.Err, "%s [y/N] ", question)
	var answer string
	buf := make([]byte, 1)
	for {
		n, err := c.io.In.Read(buf)
		if n == 1 && buf[0] != '\n' {
			answer += string(buf)
			continue
		}
		if n == 1 || err != nil {
			break
		}
	}
	answer = strings.ToLower(strings.TrimSpace(answer))
	if answer == "y" || answer == "yes" {
		return true
	}
	fmt.Fprintf(c.io.Err, "not confirmed: nothing written\n")
	return false
}

// writeJSON writes v as one line of JSON to the output.
func (c *cli) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = c.io.Out.Write(b)
	return err
}

// writeJSONIndent writes v as indented JSON to the output.
func (c *cli) writeJSONIndent(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = c.io.Out.Write(b)
	return err
}

// flagT is a flag of a flag set.
type flagT = flag.Flag
