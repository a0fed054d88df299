package admin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/singletable/singletable"
)

// findingJSON is one finding of unique check or repair, as --json writes it
// (one line each).
type findingJSON struct {
	Type       string            `json:"type"`
	Kind       string            `json:"kind"` // orphan, missing or duplicate
	Constraint string            `json:"constraint"`
	Values     []string          `json:"values"`
	Item       map[string]string `json:"item,omitempty"`
	Holder     map[string]string `json:"holder,omitempty"`
	Repaired   bool              `json:"repaired"`
}

// unique is unique check and unique repair (SweepUnique).
func (c *cli) unique(args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(c.io.Err, "%s unique: missing subcommand: check or repair\n", c.prog)
		return ExitUsage
	}
	repair := false
	switch args[0] {
	case "check":
	case "repair":
		repair = true
	case "-h", "--help", "-help", "help":
		fmt.Fprintf(c.io.Out, "Usage: %s unique check [ENTITY] [--json]\n       %s unique repair [ENTITY] [--yes] [--dry-run] [--json]\n\n(%s unique check --help for more)\n\n%s", c.prog, c.prog, c.prog, exitCodes)
		return ExitOK
	default:
		fmt.Fprintf(c.io.Err, "%s unique: unknown subcommand %q: want check or repair\n", c.prog, args[0])
		return ExitUsage
	}
	c.entry = "unique " + args[0]
	about := "Checks the guards of each entity's unique values (or ENTITY's) against its items\n(Entity.SweepUnique) and writes each finding: an orphan guard (its owner gone or holding\nanother value), a missing guard (a value held without one: another item could claim it), a\nvalue held twice (never repaired: which item keeps it is yours to decide). Exit code 1 when\nanything is found (check), or left unrepaired (repair). Cost: a consistent Scan of the whole\ntable (1 RCU per 4 KB), one consistent GetItem per guard and value."
	if repair {
		about += "\nrepair frees orphan guards and restores missing ones, each a transaction conditioned on what\nwas read (2 WCU per action), so a concurrent write is never undone. Asks first unless --yes;\n--dry-run reports what it would repair (a check) and writes nothing."
	}
	f := c.newFlags("unique "+args[0]+" [ENTITY]", about)
	if repair {
		f.writer()
	}
	f.positional, f.optionalPos = []string{"ENTITY"}, 1
	pos, code, done := f.parse(args[1:], 1)
	if done {
		return code
	}
	var ents []string
	for _, e := range c.t.Describe().Entities {
		if len(e.Unique) > 0 && (len(pos) == 0 || pos[0] == e.Type) {
			ents = append(ents, e.Type)
		}
	}
	if len(pos) > 0 && len(ents) == 0 {
		if _, err := c.entity(pos[0]); err != nil {
			return c.fail(err)
		}
		return c.fail(usagef("%s has no unique values (singletable:\"unique\")", pos[0]))
	}
	if len(ents) == 0 {
		return c.fail(usagef("no entity of table %s has unique values", c.t.Name()))
	}
	sort.Strings(ents)
	if repair && *f.dry {
		repair = false
		fmt.Fprintln(c.io.Err, "dry run: checking only; nothing is written")
	}
	if repair && !c.confirm(*f.yes, fmt.Sprintf("repair the unique guards of %s in table %s?", strings.Join(ents, ", "), c.t.Name())) {
		return ExitDeclined
	}
	sz, _ := c.tableSize(c.ctx)
	found, left := 0, 0
	for _, name := range ents {
		e, err := c.entity(name)
		if err != nil {
			return c.fail(err)
		}
		rep, err := c.sweepUnique(e, repair, sz)
		if err != nil {
			return c.fail(err)
		}
		for _, l := range findings(name, rep) {
			found++
			if !l.Repaired {
				left++
			}
			if f.json {
				if err := c.writeJSON(l); err != nil {
					return c.fail(err)
				}
				continue
			}
			state := ""
			if l.Repaired {
				state = " (repaired)"
			}
			holder := ""
			if l.Holder != nil {
				holder = ", the guard names " + keyText(l.Holder)
			}
			fmt.Fprintf(c.io.Out, "%s %s %s=%s: item %s%s%s\n", name, l.Kind, l.Constraint, strings.Join(l.Values, "+"), keyText(l.Item), holder, state)
		}
		if !f.json {
			fmt.Fprintf(c.io.Out, "%s: %d items, %d guards read; %d orphan, %d missing, %d duplicate\n", name, rep.Items, rep.Guards, len(rep.Orphans), len(rep.Missing), len(rep.Duplicates))
		}
	}
	if (!repair && found > 0) || left > 0 {
		return ExitFound
	}
	return ExitOK
}

// sweepUnique runs SweepUnique with a progress display: the items its
// consistent scan has read (of every type) against the table's item count,
// with the guards and items of the entity read so far and the capacity used.
func (c *cli) sweepUnique(e *singletable.AnyEntity, repair bool, sz size) (singletable.UniqueSweepReport, error) {
	verb := "check"
	opts := []singletable.UniqueSweepOption{}
	if repair {
		verb = "repair"
		opts = append(opts, singletable.RepairUnique())
	}
	bar := c.newProgress("unique "+verb+" "+e.Type(), sz.items, "items")
	detail := func(r singletable.UniqueSweepReport) string {
		return fmt.Sprintf("%d %s items, %d guards; %d orphan, %d missing, %d duplicate; ~%.1f RCU",
			r.Items, e.Type(), r.Guards, len(r.Orphans), len(r.Missing), len(r.Duplicates), 2*sz.readUnits(int64(r.Scanned)))
	}
	opts = append(opts, singletable.OnUniqueSweepProgress(func(r singletable.UniqueSweepReport) {
		bar.set(int64(r.Scanned), detail(r))
	}))
	rep, err := e.SweepUnique(c.ctx, opts...)
	if err != nil {
		bar.stop(int64(rep.Scanned), detail(rep))
		return rep, err
	}
	bar.finish(int64(rep.Scanned), detail(rep))
	return rep, nil
}

// findings lists a report's findings.
func findings(typ string, rep singletable.UniqueSweepReport) []findingJSON {
	var out []findingJSON
	add := func(kind string, fs []singletable.UniqueFinding) {
		for _, f := range fs {
			out = append(out, findingJSON{Type: typ, Kind: kind, Constraint: f.Constraint, Values: f.Values, Item: f.Item, Holder: f.Holder, Repaired: f.Repaired})
		}
	}
	add("orphan", rep.Orphans)
	add("missing", rep.Missing)
	add("duplicate", rep.Duplicates)
	return out
}
