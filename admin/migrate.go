package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/design"
)

// migrate is migrate status and migrate run.
func (c *cli) migrate(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "status":
			c.entry = "migrate status"
			return c.migrateStatus(args[1:])
		case "run":
			c.entry = "migrate run"
			return c.migrateRun(args[1:])
		case "-h", "--help", "-help", "help":
			fmt.Fprintf(c.io.Out, "Usage: %s migrate status [ENTITY] [--sample N] [--json]\n       %s migrate run [ENTITY] [--segments N] [--workers W] [--rate R] [--yes] [--dry-run]\n\n(%s migrate status --help, %s migrate run --help for more)\n\n%s", c.prog, c.prog, c.prog, c.prog, exitCodes)
			return ExitOK
		}
		fmt.Fprintf(c.io.Err, "%s migrate: unknown subcommand %q: want status or run\n", c.prog, args[0])
		return ExitUsage
	}
	fmt.Fprintf(c.io.Err, "%s migrate: missing subcommand: status or run\n", c.prog)
	return ExitUsage
}

// migrating returns the entities with migrations (Migrations): the one named,
// or every one.
func (c *cli) migrating(name string) ([]design.Entity, error) {
	var out []design.Entity
	for _, e := range c.t.Describe().Entities {
		if e.Schema == 0 {
			continue
		}
		if name == "" || e.Type == name {
			out = append(out, e)
		}
	}
	if name != "" && len(out) == 0 {
		if _, err := c.entity(name); err != nil {
			return nil, err
		}
		return nil, usagef("%s has no migrations (singletable.Migrations): it has no schema versions to migrate", name)
	}
	if len(out) == 0 {
		return nil, usagef("no entity of table %s has migrations (singletable.Migrations)", c.t.Name())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out, nil
}

// statusJSON is migrate status --json.
type statusJSON struct {
	Table    string             `json:"table"`
	Scanned  int64              `json:"scanned"`
	Sample   bool               `json:"sample"`
	Capacity float64            `json:"readUnits"`
	Entities []entityStatusJSON `json:"entities"`
}

type entityStatusJSON struct {
	Type     string         `json:"type"`
	Current  int            `json:"current"`
	Versions map[string]int `json:"versions"`
	Old      int            `json:"old"`
	Items    int            `json:"items"`
}

// migrateStatus counts the entities' items per schema version: every item of
// the table, or a sample.
func (c *cli) migrateStatus(args []string) int {
	f := c.newFlags("migrate status [ENTITY] [--sample N] [--json]",
		"Counts the items of each entity with migrations (or of ENTITY) per schema version, from a Scan\nof the whole table (its type and schema attributes only), or of its first N items with --sample\n(a sample's counts are of those items only). The cost is printed first (from DescribeTable's\nsize, which DynamoDB updates about every six hours): 0.5 RCU per 4 KB scanned. Exit code 1\nwhen items at an older schema version were found: run `migrate run`.")
	sample := f.Int64("sample", 0, "read only the first N items of the table")
	f.positional, f.optionalPos = []string{"ENTITY"}, 1
	pos, code, done := f.parse(args, 1)
	if done {
		return code
	}
	if *sample < 0 {
		return f.usageErr("--sample %d: want a positive number", *sample)
	}
	name := ""
	if len(pos) > 0 {
		name = pos[0]
	}
	ents, err := c.migrating(name)
	if err != nil {
		return c.fail(err)
	}
	sz, err := c.tableSize(c.ctx)
	if err != nil {
		return c.fail(err)
	}
	n := sz.items
	what := "a count reads every item of the table"
	if *sample > 0 && *sample < n {
		n, what = *sample, fmt.Sprintf("a sample reads the first %d items of the table", *sample)
	}
	fmt.Fprintf(c.io.Err, "cost: %s: ~%.1f RCU (%d items, %d bytes per DescribeTable)\n", what, sz.readUnits(n), sz.items, sz.bytes)

	want := map[string]bool{}
	for _, e := range ents {
		want[e.Type] = true
	}
	counts := map[string]map[int]int{}
	opts := c.t.Options()
	bar := c.newProgress("migrate status", n, "items")
	in := &dynamodb.ScanInput{
		TableName:                aws(c.t.Name()),
		ProjectionExpression:     aws("#t, #s"),
		ExpressionAttributeNames: map[string]string{"#t": opts.TypeAttribute, "#s": opts.SchemaAttribute},
	}
	var scanned int64
	for {
		if *sample > 0 {
			left := *sample - scanned
			if left <= 0 {
				break
			}
			in.Limit = aws(int32(min(left, 1000)))
		}
		out, err := c.t.Client().Scan(c.ctx, in)
		if err != nil {
			bar.stop(scanned, "")
			return c.fail(err)
		}
		scanned += int64(out.ScannedCount)
		for _, item := range out.Items {
			typ := attrString(item[opts.TypeAttribute])
			if !want[typ] {
				continue
			}
			v := 1
			if n, ok := item[opts.SchemaAttribute].(*types.AttributeValueMemberN); ok {
				if x, err := strconv.Atoi(n.Value); err == nil {
					v = x
				}
			}
			if counts[typ] == nil {
				counts[typ] = map[int]int{}
			}
			counts[typ][v]++
		}
		bar.set(scanned, fmt.Sprintf("~%.1f RCU", sz.readUnits(scanned)))
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	bar.finish(scanned, fmt.Sprintf("~%.1f RCU", sz.readUnits(scanned)))

	res := statusJSON{Table: c.t.Name(), Scanned: scanned, Sample: *sample > 0, Capacity: sz.readUnits(scanned)}
	anyOld := false
	for _, e := range ents {
		es := entityStatusJSON{Type: e.Type, Current: e.Schema, Versions: map[string]int{}}
		for v, k := range counts[e.Type] {
			es.Versions[strconv.Itoa(v)] = k
			es.Items += k
			if v < e.Schema {
				es.Old += k
			}
		}
		anyOld = anyOld || es.Old > 0
		res.Entities = append(res.Entities, es)
	}
	if f.json {
		if err := c.writeJSONIndent(res); err != nil {
			return c.fail(err)
		}
	} else {
		of := "every item"
		if res.Sample {
			of = fmt.Sprintf("a sample of %d items", scanned)
		}
		fmt.Fprintf(c.io.Out, "table %s, %s scanned:\n", c.t.Name(), of)
		for _, es := range res.Entities {
			fmt.Fprintf(c.io.Out, "  %s (current schema %d): %d items", es.Type, es.Current, es.Items)
			if es.Old > 0 {
				fmt.Fprintf(c.io.Out, ", %d at an older version", es.Old)
			}
			fmt.Fprintln(c.io.Out)
			versions := make([]int, 0, len(es.Versions))
			for v := range es.Versions {
				x, _ := strconv.Atoi(v)
				versions = append(versions, x)
			}
			sort.Ints(versions)
			for _, v := range versions {
				fmt.Fprintf(c.io.Out, "    version %d: %d\n", v, es.Versions[strconv.Itoa(v)])
			}
		}
	}
	if anyOld {
		return ExitFound
	}
	return ExitOK
}

func attrString(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func aws[T any](v T) *T { return &v }

// schemaStore keeps a sweep's progress under the entity's type and its
// current schema version ("Order.v3"), in the table (singletable.TableStore):
// a sweep stopped midway resumes, and a sweep to a newer schema starts afresh.
type schemaStore struct {
	inner  singletable.SweepStore
	suffix string
}

func (s schemaStore) LoadSweep(ctx context.Context, entity string, segment, total int) (singletable.SweepProgress, error) {
	p, err := s.inner.LoadSweep(ctx, entity+s.suffix, segment, total)
	p.Entity = strings.TrimSuffix(p.Entity, s.suffix)
	return p, err
}

func (s schemaStore) SaveSweep(ctx context.Context, p singletable.SweepProgress) error {
	p.Entity += s.suffix
	return s.inner.SaveSweep(ctx, p)
}

// sweepCounts are a sweep's counts.
type sweepCounts struct {
	Seen     int64 `json:"seen"`
	Migrated int64 `json:"migrated"`
	Lost     int64 `json:"lost"`
	Failed   int64 `json:"failed"`
}

func (s *sweepCounts) add(o sweepCounts) {
	s.Seen += o.Seen
	s.Migrated += o.Migrated
	s.Lost += o.Lost
	s.Failed += o.Failed
}

// runJSON is migrate run --json, one per entity.
type runJSON struct {
	Type         string      `json:"type"`
	Schema       int         `json:"schema"`
	Segments     int         `json:"segments"`
	SegmentsDone int         `json:"segmentsDone"`
	Resumed      bool        `json:"resumed"`
	Run          sweepCounts `json:"run"`
	Total        sweepCounts `json:"total"`
	ReadUnits    float64     `json:"readUnits"`
	WriteUnits   float64     `json:"writeUnits"`
	Seconds      float64     `json:"seconds"`
}

// migrateRun sweeps the entities' items to their current schema (Sweep).
func (c *cli) migrateRun(args []string) int {
	f := c.newFlags("migrate run [ENTITY] [--segments N] [--workers W] [--rate R] [--page-size P] [--yes] [--dry-run]",
		"Migrates every item of each entity with migrations (or of ENTITY) to its current schema version\n(Entity.Sweep): a Scan of the table in N segments, W at a time, whose older items are migrated\nand written back, each on the condition that it is still as read, so no item is migrated twice.\nEach segment's progress is saved in the table after every page (TableStore, under the entity\nand its schema version): Ctrl-C stops cleanly, and running the same command again (the same\n--segments) resumes each segment where it stopped; a finished migration is not scanned again.\nProgress on a terminal: a bar with the items scanned, rate, capacity used and time left; plain\nlines otherwise. Asks first unless --yes. Cost: every item of the table, of every type, 0.5 RCU\nper 4 KB; 1 WCU per KB migrated; one write per page saved. Exit code 1 when items failed to migrate.")
	segments := f.Int("segments", 4, "scan the table in N segments (keep the same N to resume)")
	workers := f.Int("workers", 0, "sweep W segments at a time; default all N")
	rate := f.Float64("rate", 0, "migrate at most R items a second, across the workers; default no cap")
	pageSize := f.Int("page-size", 100, "items a Scan page reads; progress is saved after each")
	f.writer()
	f.positional, f.optionalPos = []string{"ENTITY"}, 1
	pos, code, done := f.parse(args, 1)
	if done {
		return code
	}
	switch {
	case *segments < 1 || *segments > 1000000:
		return f.usageErr("--segments %d: want 1 to 1000000", *segments)
	case *workers < 0:
		return f.usageErr("--workers %d: want a positive number", *workers)
	case *rate < 0:
		return f.usageErr("--rate %g: want a positive number", *rate)
	case *pageSize < 1:
		return f.usageErr("--page-size %d: want a positive number", *pageSize)
	}
	if *workers == 0 || *workers > *segments {
		*workers = *segments
	}
	name := ""
	if len(pos) > 0 {
		name = pos[0]
	}
	ents, err := c.migrating(name)
	if err != nil {
		return c.fail(err)
	}
	ts, err := singletable.NewTableStore(c.t)
	if err != nil {
		return c.fail(err)
	}
	sz, err := c.tableSize(c.ctx)
	if err != nil {
		return c.fail(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, fmt.Sprintf("%s (schema %d)", e.Type, e.Schema))
	}
	if *f.dry {
		return c.explainCall(f.json, 0, func(ctx context.Context) error {
			for _, de := range ents {
				e, err := c.entity(de.Type)
				if err != nil {
					return err
				}
				store := schemaStore{ts, ".v" + strconv.Itoa(de.Schema)}
				if _, err := e.Sweep(ctx, singletable.Segments(*segments), singletable.PageSize(*pageSize), singletable.SweepProgressIn(store)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	fmt.Fprintf(c.io.Err, "cost: each entity's sweep scans the whole table: ~%.1f RCU (%d items, %d bytes per DescribeTable), plus 1 WCU per KB migrated\n", sz.readUnits(sz.items), sz.items, sz.bytes)
	if !c.confirm(*f.yes, fmt.Sprintf("migrate %s in table %s?", strings.Join(names, ", "), c.t.Name())) {
		return ExitDeclined
	}
	exit := ExitOK
	for _, de := range ents {
		res, err := c.sweepEntity(de, schemaStore{ts, ".v" + strconv.Itoa(de.Schema)}, sz, *segments, *workers, *rate, *pageSize)
		if f.json && (err == nil || res.Run.Seen > 0) {
			if jerr := c.writeJSON(res); jerr != nil && err == nil {
				err = jerr
			}
		} else if err == nil {
			resumed := ""
			if res.Resumed {
				resumed = fmt.Sprintf(" (resumed: in all runs %d migrated, %d lost, %d failed)", res.Total.Migrated, res.Total.Lost, res.Total.Failed)
			}
			fmt.Fprintf(c.io.Out, "%s: schema %d: %d items scanned, %d migrated, %d lost to newer writes, %d failed, in %s%s\n",
				de.Type, de.Schema, res.Run.Seen, res.Run.Migrated, res.Run.Lost, res.Run.Failed, time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond), resumed)
		}
		if err != nil {
			code := c.fail(err)
			if code == ExitInterrupted {
				fmt.Fprintf(c.io.Err, "progress saved: %d of %d segments done; run `%s migrate run %s --segments %d` again to resume\n", res.SegmentsDone, res.Segments, c.prog, de.Type, *segments)
			}
			return code
		}
		if res.Total.Failed > 0 {
			exit = ExitFound
		}
	}
	return exit
}

// sweepEntity sweeps one entity, the segments W at a time, with progress.
func (c *cli) sweepEntity(de design.Entity, store schemaStore, sz size, segments, workers int, rate float64, pageSize int) (runJSON, error) {
	res := runJSON{Type: de.Type, Schema: de.Schema, Segments: segments}
	e, err := c.entity(de.Type)
	if err != nil {
		return res, err
	}
	// What earlier runs did: the resumed segments' counts.
	var base sweepCounts
	var todo []int
	for seg := range segments {
		p, err := store.LoadSweep(c.ctx, de.Type, seg, segments)
		if err != nil {
			return res, err
		}
		base.add(sweepCounts{p.Seen, p.Migrated, p.Lost, p.Failed})
		if p.Pages > 0 {
			res.Resumed = true
		}
		if p.Done {
			res.SegmentsDone++
		} else {
			todo = append(todo, seg)
		}
	}
	start := time.Now()
	bar := c.newProgress("migrate "+de.Type, sz.items, "items")
	bar.base = base.Seen
	if bar.bar != nil && base.Seen > 0 {
		_ = bar.bar.Set64(base.Seen)
	}
	var (
		mu   sync.Mutex
		cur  = map[int]sweepCounts{}
		done = res.SegmentsDone
	)
	total := func() (run, all sweepCounts) {
		for _, s := range cur {
			run.add(s)
		}
		all = base
		all.add(run)
		return run, all
	}
	detail := func(run, all sweepCounts) string {
		return fmt.Sprintf("%d migrated, %d lost, %d failed, %d/%d segments, ~%.1f RCU ~%.0f WCU", all.Migrated, all.Lost, all.Failed, done, segments,
			sz.readUnits(run.Seen), sz.writeUnits(run.Migrated))
	}
	queue := make(chan int, len(todo))
	for _, s := range todo {
		queue <- s
	}
	close(queue)
	perWorker := 0.0
	if rate > 0 {
		perWorker = rate / float64(min(workers, max(1, len(todo))))
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for seg := range queue {
				if c.ctx.Err() != nil {
					errs[w] = c.ctx.Err()
					return
				}
				opts := []singletable.SweepOption{singletable.Segments(segments), singletable.SegmentRange(seg, seg+1),
					singletable.SweepProgressIn(store), singletable.PageSize(pageSize),
					singletable.OnSweepProgress(func(s singletable.SweepStats) {
						mu.Lock()
						cur[seg] = sweepCounts{s.Seen, s.Migrated, s.Lost, s.Failed}
						run, all := total()
						text := detail(run, all)
						mu.Unlock()
						bar.set(all.Seen, text)
					})}
				if perWorker > 0 {
					opts = append(opts, singletable.SweepRate(perWorker))
				}
				st, err := e.Sweep(c.ctx, opts...)
				mu.Lock()
				cur[seg] = sweepCounts{st.Seen, st.Migrated, st.Lost, st.Failed}
				if err == nil {
					done++
				}
				mu.Unlock()
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	run, all := total()
	if err := errors.Join(errs...); err != nil {
		bar.stop(all.Seen, detail(run, all))
	} else {
		bar.finish(all.Seen, detail(run, all))
	}
	res.Run, res.Total, res.SegmentsDone = run, all, done
	res.ReadUnits, res.WriteUnits = sz.readUnits(run.Seen), sz.writeUnits(run.Migrated)
	res.Seconds = time.Since(start).Seconds()
	return res, errors.Join(errs...)
}
