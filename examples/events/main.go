// Command events is reference 000's write-sharding pattern: the events of one
// day would all go to one partition, EVENTS#{date}, which then takes every
// write and throttles; instead each event goes to one of 8 partitions,
// EVENTS#{date}#SHARD{n}, drawn at random, and a read of the day queries all 8
// at once and merges them by sort key ({timestamp}#{eventId}), newest first,
// page by page with one cursor. It writes a busy day and two quiet ones, prints
// how evenly the busy day spread, reads it back whole and in pages, reads
// several days and a window across midnight, and compares a point read of a
// randomly sharded event (one BatchGetItem over the shards, which returns it) with
// one whose shard is a hash of its id (one GetItem). Every read is checked
// against the sample data, sorted. The key map is in model.go, one method per
// access pattern in store.go.
//
// Run it with
//
//	go run ./examples/events
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own and deletes it when done.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/singletable/singletable"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("events", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// day1 is the busy day of the sample data; the two quiet days follow it. The
// sample data and the shards drawn are fixed, so that the output is the same
// on every run.
var day1 = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

const (
	busy  = 3000 // events on day1
	quiet = 400  // events on each of the two days after it

	// shardSeed seeds the draw of the shards in run; leave the source out
	// (nil) in production.
	shardSeed = 1

	// tolerance is how far a shard's count may be from the mean, as a fraction
	// of it: with 3,000 events, 375 a shard, random draws stay well within it.
	tolerance = 0.15
)

var kinds = []string{"view", "view", "view", "click", "click", "add_to_cart", "purchase"}

// sampleEvents returns n events of day at times spread over it to the
// millisecond, with random ids such as e0301-8c1f20a3, the same on every run.
// Events 0 and 1 share an instant.
func sampleEvents(day time.Time, n int) []Event {
	r := rand.New(rand.NewPCG(uint64(day.Unix()), 2))
	events := make([]Event, n)
	seen := map[string]bool{}
	for i := range events {
		id := ""
		for id == "" || seen[id] {
			id = fmt.Sprintf("%s%08x", day.Format("e0102-"), r.Uint32())
		}
		seen[id] = true
		at := day.Add(time.Duration(r.Int64N(int64(24*time.Hour/time.Millisecond))) * time.Millisecond)
		events[i] = Event{At: at, EventID: id, Kind: kinds[r.IntN(len(kinds))], UserID: fmt.Sprintf("u%03d", r.IntN(250))}
	}
	if n > 1 {
		events[1].At = events[0].At
	}
	return events
}

// sampleData is the events of the three sample days.
func sampleData() []Event {
	return slices.Concat(sampleEvents(day1, busy), sampleEvents(day1.AddDate(0, 0, 1), quiet), sampleEvents(day1.AddDate(0, 0, 2), quiet))
}

// sorted returns the events in sort key order, At then EventID (what the sort
// key {at:time}#{eventId} compares as text), or the reverse when newestFirst.
func sorted(events []Event, newestFirst bool) []Event {
	out := slices.Clone(events)
	slices.SortFunc(out, func(a, b Event) int { return cmp.Or(a.At.Compare(b.At), strings.Compare(a.EventID, b.EventID)) })
	if newestFirst {
		slices.Reverse(out)
	}
	return out
}

// inWindow returns the events from from to to, both included.
func inWindow(events []Event, from, to time.Time) []Event {
	var out []Event
	for _, e := range events {
		if !e.At.Before(from) && !e.At.After(to) {
			out = append(out, e)
		}
	}
	return out
}

// ids returns the events' ids.
func ids(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.EventID
	}
	return out
}

// checkOrder reports the first place where got differs from want, by id.
func checkOrder(got, want []Event) error {
	g, w := ids(got), ids(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Errorf("event %d is %s, want %s", i, g[i], w[i])
		}
	}
	if len(g) != len(w) {
		return fmt.Errorf("%d events, want %d", len(g), len(w))
	}
	return nil
}

// checkSpread reports a shard whose count is more than tolerance from the mean.
func checkSpread(counts []int, total int) error {
	mean := float64(total) / float64(len(counts))
	for i, n := range counts {
		if dev := (float64(n) - mean) / mean; dev > tolerance || dev < -tolerance {
			return fmt.Errorf("shard %d holds %d events, %+.1f%% from the mean of %.0f", i+1, n, 100*dev, mean)
		}
	}
	return nil
}

// readPages reads every page that read returns, from cursor "" until the cursor
// is "", and returns them.
func readPages(read func(cursor string) (singletable.Page[Event], error)) ([]singletable.Page[Event], error) {
	var pages []singletable.Page[Event]
	cursor := ""
	for {
		pg, err := read(cursor)
		if err != nil {
			return pages, err
		}
		pages = append(pages, pg)
		if cursor = pg.Cursor; cursor == "" {
			return pages, nil
		}
	}
}

// concat returns the items of the pages, in order.
func concat(pages []singletable.Page[Event]) []Event {
	var out []Event
	for _, pg := range pages {
		out = append(out, pg.Items...)
	}
	return out
}

// run creates a table named tableName, writes the sample events, runs every
// access pattern, printing each step to out, and deletes the table. It fails if
// a step goes wrong or a read is not exactly what the sample data says.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	calls := newCounter(client)
	s, err := NewStore(calls, tableName, seeded(shardSeed))
	if err != nil {
		return err
	}
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, s.Table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s (PK/SK, no index); events spread over %d shards a day", tableName, Shards)

	w := &walk{s: s, calls: calls, p: p, all: sampleData()}
	if err := w.write(ctx); err != nil { // 1, 2 and 3
		return err
	}
	if err := w.newest(ctx); err != nil { // 4
		return err
	}
	if err := w.wholeDay(ctx); err != nil { // 5
		return err
	}
	if err := w.severalDays(ctx); err != nil { // 6
		return err
	}
	if err := w.hashed(ctx); err != nil { // 7
		return err
	}
	return w.pointReads(ctx) // 8
}

// walk is what the steps of run share: the store, the counter of its calls,
// the printer and the sample data.
type walk struct {
	s     *Store
	calls *counter
	p     func(format string, args ...any)
	all   []Event // the busy day's events (busy of them), then the quiet days'
}

// busyDay returns the sample events of day1.
func (w *walk) busyDay() []Event { return w.all[:busy] }

// write records one event, then the rest in batches, and prints how the busy
// day spread over its shards.
func (w *walk) write(ctx context.Context) error {
	s, calls, p, all := w.s, w.calls, w.p, w.all
	day2, day3 := day1.AddDate(0, 0, 1), day1.AddDate(0, 0, 2)

	// 1. One write.
	before := calls.snapshot()
	first, err := s.Record(ctx, all[0])
	if err != nil {
		return err
	}
	pk, sk, err := keysOf(first)
	if err != nil {
		return err
	}
	p("\n1. Record one event (PutItem; the library draws its shard, and Put returns it):")
	p("   %s %s %s -> PK %s, SK %s (%s)", first.EventID, first.At.Format("15:04:05.000"), first.Kind, pk, sk, calls.since(before))

	// 2. Many writes.
	before = calls.snapshot()
	if _, err := s.RecordAll(ctx, all[1:]); err != nil {
		return err
	}
	p("\n2. Record the rest with BatchPut: %d more events of %s, %d of %s and %d of %s (%s)",
		busy-1, day1.Format(time.DateOnly), quiet, day2.Format(time.DateOnly), quiet, day3.Format(time.DateOnly), calls.since(before))

	// 3. The spread.
	before = calls.snapshot()
	counts, err := s.Spread(ctx, day1)
	if err != nil {
		return err
	}
	p("\n3. Where the %d events of %s landed (a Query on each partition: %s):", busy, day1.Format(time.DateOnly), calls.since(before))
	printSpread(p, "EVENTS#"+day1.Format(time.DateOnly)+"#SHARD", counts, busy)
	if err := checkSpread(counts, busy); err != nil {
		return err
	}
	p("   every shard within ±%.0f%% of the mean: no partition takes more than its share of the writes", 100*tolerance)
	return nil
}

// newest reads the busy day's newest events across its shards.
func (w *walk) newest(ctx context.Context) error {
	s, calls, p := w.s, w.calls, w.p
	const newest = 8
	before := calls.snapshot()
	latest, err := s.Latest(ctx, day1, newest, "")
	if err != nil {
		return err
	}
	p("\n4. The %d newest events of %s: each shard asked for its share, newest first (1.5×%d/8+2 items; a shard that holds more of them is read on), merged (%s)", newest, day1.Format(time.DateOnly), newest, calls.since(before))
	for _, e := range latest.Items {
		p("   %s %s %-11s %s  shard %d", e.At.Format("15:04:05.000"), e.EventID, e.Kind, e.UserID, e.Shard)
	}
	if err := checkOrder(latest.Items, sorted(w.busyDay(), true)[:newest]); err != nil {
		return fmt.Errorf("newest events: %w", err)
	}
	return nil
}

// wholeDay reads the busy day page by page, newest first, then oldest first
// with AllShards.
func (w *walk) wholeDay(ctx context.Context) error {
	s, calls, p, all := w.s, w.calls, w.p, w.all
	const limit = 500
	p("\n5. All of %s, newest first, %d a page: each page queries every shard from where the cursor says it stopped, for its share of the page (1.5×%d/8+2 items), reading on in shards that hold more", day1.Format(time.DateOnly), limit, limit)
	var pages []singletable.Page[Event]
	whole := calls.snapshot()
	for cursor := ""; len(pages) == 0 || cursor != ""; {
		before := calls.snapshot()
		pg, err := s.Latest(ctx, day1, limit, cursor)
		if err != nil {
			return err
		}
		if len(pg.Items) == 0 {
			return fmt.Errorf("page %d is empty", len(pages)+1)
		}
		pages = append(pages, pg)
		cursor = pg.Cursor
		p("   page %d: %3d events, %s back to %s (%s)", len(pages), len(pg.Items), pg.Items[0].At.Format("15:04:05.000"), pg.Items[len(pg.Items)-1].At.Format("15:04:05.000"), calls.since(before))
	}
	if err := checkOrder(concat(pages), sorted(w.busyDay(), true)); err != nil {
		return fmt.Errorf("%s by pages: %w", day1.Format(time.DateOnly), err)
	}
	p("   checked: the %d events in exact sort key order, each once, none missing", busy)
	p("   %d items read for %d returned: the cursor keeps each shard's position, not what a page read beyond it, so the next page reads that again", calls.since(whole).read, busy)
	before := calls.snapshot()
	var oldestFirst []Event
	for e, err := range s.Events.AllShards(ctx, Event{Day: day1}, singletable.Limit(limit)) {
		if err != nil {
			return err
		}
		oldestFirst = append(oldestFirst, e)
	}
	if err := checkOrder(oldestFirst, sorted(w.busyDay(), false)); err != nil {
		return fmt.Errorf("%s oldest first: %w", day1.Format(time.DateOnly), err)
	}
	p("   oldest first with AllShards, %d a page, is the exact reverse; it keeps what each shard returned between pages, so reads each item once (%s)", limit, calls.since(before))
	p("   %s and %s share the instant %s: both kept, ordered by id", all[0].EventID, all[1].EventID, all[0].At.Format("15:04:05.000"))
	return nil
}

// severalDays reads the three days, newest first, then the ten minutes around
// the first midnight.
func (w *walk) severalDays(ctx context.Context) error {
	s, calls, p, all := w.s, w.calls, w.p, w.all
	day2, day3 := day1.AddDate(0, 0, 1), day1.AddDate(0, 0, 2)
	before := calls.snapshot()
	pages, err := readPages(func(cursor string) (singletable.Page[Event], error) { return s.Range(ctx, day1, day3, 1000, cursor) })
	if err != nil {
		return err
	}
	got := concat(pages)
	p("\n6. %s to %s, newest first, 1000 a page: Days(\"day\", from, to) reads %d partitions, %d a day (%d pages, %s)",
		day1.Format(time.DateOnly), day3.Format(time.DateOnly), 3*Shards, Shards, len(pages), calls.since(before))
	if err := checkOrder(got, sorted(all, true)); err != nil {
		return fmt.Errorf("three days: %w", err)
	}
	p("   checked: %d events, from %s %s back to %s %s, in order, each once", len(got), got[0].EventID, got[0].At.Format(time.DateTime), got[len(got)-1].EventID, got[len(got)-1].At.Format(time.DateTime))

	from, to := day2.Add(-5*time.Minute), day2.Add(5*time.Minute)
	before = calls.snapshot()
	pages, err = readPages(func(cursor string) (singletable.Page[Event], error) { return s.Window(ctx, from, to, 100, cursor) })
	if err != nil {
		return err
	}
	window := concat(pages)
	p("   the ten minutes around midnight, %s to %s: SK BETWEEN on the %d partitions of both days (%s):", from.Format(time.DateTime), to.Format(time.DateTime), 2*Shards, calls.since(before))
	for _, e := range window {
		p("     %s %s %-11s shard %d of %s", e.At.Format(time.DateTime+".000"), e.EventID, e.Kind, e.Shard, e.Day.Format(time.DateOnly))
	}
	if err := checkOrder(window, sorted(inWindow(all, from, to), true)); err != nil {
		return fmt.Errorf("window: %w", err)
	}
	return nil
}

// hashed writes the busy day again as HashedEvents and prints how they spread.
func (w *walk) hashed(ctx context.Context) error {
	s, calls, p := w.s, w.calls, w.p
	before := calls.snapshot()
	if _, err := s.RecordAllHashed(ctx, w.busyDay()); err != nil {
		return err
	}
	p("\n7. The %d events of %s again, as HashedEvents: shardBy=eventId, so each goes to the shard its id hashes to (%s)", busy, day1.Format(time.DateOnly), calls.since(before))
	hcounts, err := s.SpreadHashed(ctx, day1)
	if err != nil {
		return err
	}
	printSpread(p, "HEVENTS#"+day1.Format(time.DateOnly)+"#SHARD", hcounts, busy)
	if err := checkSpread(hcounts, busy); err != nil {
		return fmt.Errorf("hashed: %w", err)
	}
	p("   as even as random draws here, because these ids are random; a hash spreads only as well as the ids vary")
	return nil
}

// pointReads reads one event of the busy day by its time and id, randomly
// sharded and hashed, and a hashed event that does not exist.
func (w *walk) pointReads(ctx context.Context) error {
	s, calls, p := w.s, w.calls, w.p
	target := w.busyDay()[busy/2]
	p("\n8. Point reads of %s at %s (its day, time and id known)", target.EventID, target.At.Format(time.DateTime+".000"))
	before := calls.snapshot()
	found, err := s.Find(ctx, target.At, target.EventID)
	if err != nil {
		return err
	}
	cost := calls.since(before)
	if !maps.Equal(cost.requests, map[string]int{"BatchGetItem": 1}) || found.EventID != target.EventID {
		return fmt.Errorf("point read of %s: %s, found %+v", target.EventID, cost, found)
	}
	p("   Event, random shard:       found in shard %d (%s): nothing says which shard, so all %d are asked first", found.Shard, cost, Shards)
	before = calls.snapshot()
	hfound, err := s.FindHashed(ctx, target.At, target.EventID)
	if err != nil {
		return err
	}
	cost = calls.since(before)
	if !maps.Equal(cost.requests, map[string]int{"GetItem": 1}) || hfound.EventID != target.EventID {
		return fmt.Errorf("hashed point read of %s: %s, found %+v", target.EventID, cost, hfound)
	}
	p("   HashedEvent, hashed shard: found in shard %d (%s): the shard is computed from the id", hfound.Shard, cost)
	before = calls.snapshot()
	if _, err := s.FindHashed(ctx, target.At, "e0301-missing"); !errors.Is(err, singletable.ErrNotFound) {
		return fmt.Errorf("hashed point read of a missing event: want ErrNotFound, got %v", err)
	}
	p("   HashedEvent e0301-missing:  not found (%s; errors.Is(err, singletable.ErrNotFound))", calls.since(before))
	return nil
}

// printSpread prints each shard's partition key (prefix and shard number) and
// count, as a bar, with its distance from the mean.
func printSpread(p func(string, ...any), prefix string, counts []int, total int) {
	mean := float64(total) / float64(len(counts))
	for i, n := range counts {
		p("   %s%d %4d %-20s %+5.1f%%", prefix, i+1, n, strings.Repeat("#", int(float64(n)/mean*16+0.5)), 100*(float64(n)-mean)/mean)
	}
}
