package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// newStore creates an empty table of the events model whose random shards are
// drawn from seed, deleted when the test ends. It returns the store and the
// counter every request goes through.
func newStore(t *testing.T, seed uint64) (*Store, *counter) {
	t.Helper()
	calls := newCounter(local.Client(t))
	s, err := NewStore(calls, exampleenv.TableName(t), seeded(seed))
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	return s, calls
}

// seededStore is newStore with events recorded (BatchPut).
func seededStore(t *testing.T, seed uint64, events []Event) (*Store, *counter) {
	t.Helper()
	s, calls := newStore(t, seed)
	left, err := s.RecordAll(t.Context(), events)
	require.NoError(t, err)
	require.Empty(t, left)
	return s, calls
}

// recount returns a store on the table of s that sends its requests through a
// counter of its own.
func recount(t *testing.T, s *Store) (*Store, *counter) {
	t.Helper()
	calls := newCounter(local.Client(t))
	s, err := NewStore(calls, s.Table.Name(), nil)
	require.NoError(t, err)
	return s, calls
}

// readAll reads every page of read, from cursor "" until the cursor is "", and
// returns the ids of each page.
func readAll(t *testing.T, read func(cursor string) (singletable.Page[Event], error)) [][]string {
	t.Helper()
	pages, err := readPages(read)
	require.NoError(t, err)
	out := make([][]string, len(pages))
	for i, pg := range pages {
		out[i] = ids(pg.Items)
	}
	return out
}

// chunk splits ids into pages of limit, the last one shorter. A fan-out page
// is full unless it is the last: a shard that runs dry is read again within
// the page, so no empty page ever follows a full one.
func chunk(ids []string, limit int) [][]string {
	var pages [][]string
	for len(ids) > limit {
		pages = append(pages, ids[:limit])
		ids = ids[limit:]
	}
	return append(pages, ids)
}

func day(n int) time.Time { return day1.AddDate(0, 0, n-1) }

func TestRun(t *testing.T) {
	t.Parallel()
	client := local.Client(t)
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), client, table, &out), out.String())
	got := out.String()
	for _, want := range []string{
		"created table " + table,
		"1. Record one event", "-> PK EVENTS#2024-03-01#SHARD", "(requests: 1 PutItem)",
		"2. Record the rest with BatchPut: 2999 more events of 2024-03-01, 400 of 2024-03-02 and 400 of 2024-03-03 (requests: 152 BatchWriteItem)",
		"3. Where the 3000 events of 2024-03-01 landed", "EVENTS#2024-03-01#SHARD1 ", "EVENTS#2024-03-01#SHARD8 ",
		"every shard within ±15% of the mean",
		"4. The 8 newest events of 2024-03-01",
		"5. All of 2024-03-01, newest first, 500 a page", "page 6: 500 events", "checked: the 3000 events in exact sort key order",
		"oldest first with AllShards, 500 a page, is the exact reverse; it keeps what each shard returned between pages, so reads each item once (requests: ",
		"6. 2024-03-01 to 2024-03-03", "reads 24 partitions, 8 a day (4 pages", "checked: 3800 events",
		"the ten minutes around midnight", "SK BETWEEN on the 16 partitions of both days",
		"7. The 3000 events of 2024-03-01 again, as HashedEvents", "(requests: 120 BatchWriteItem)", "HEVENTS#2024-03-01#SHARD8 ",
		"8. Point reads of", "(requests: 1 BatchGetItem)", "(requests: 1 GetItem): the shard is computed from the id",
		"e0301-missing:  not found (requests: 1 GetItem",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "page 7:", "3000 events at 500 a page are six pages")
	// Shares, not whole pages, from every shard: the 8 newest read 4 items from
	// each shard (more only from one that holds more than 4 of them); the day's
	// 3,000 events, 500 a page, read far fewer than 8 × 500 a page; AllShards reads
	// each item once.
	m := regexp.MustCompile(`4\. The 8 newest .*\(requests: (\d+) Query; (\d+) items read\)`).FindStringSubmatch(got)
	require.NotNil(t, m, "section 4's requests")
	assert.GreaterOrEqual(t, atoi(t, m[1]), 8)
	assert.Less(t, atoi(t, m[2]), 64, "8 × 8 is what whole pages would read")
	m = regexp.MustCompile(`(\d+) items read for 3000 returned`).FindStringSubmatch(got)
	require.NotNil(t, m, "section 5's items read")
	assert.Less(t, atoi(t, m[1]), 6000, "whole pages read 10,500")
	assert.Regexp(t, `each item once \(requests: \d+ Query; 3000 items read\)`, got)
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

func TestSampleData(t *testing.T) {
	t.Parallel()
	all := sampleData()
	require.Len(t, all, busy+2*quiet)
	seen := map[string]bool{}
	for _, e := range all {
		assert.False(t, seen[e.EventID], "id %s twice", e.EventID)
		seen[e.EventID] = true
		assert.Equal(t, e.At.Format("e0102-"), e.EventID[:6], "an id starts with its day")
	}
	assert.Equal(t, all[0].At, all[1].At, "events 0 and 1 share an instant")
	assert.Equal(t, sampleEvents(day1, 10), sampleEvents(day1, 10), "the same on every run")
}

func TestRecord(t *testing.T) {
	t.Parallel()
	s, calls := newStore(t, 7)
	ctx := t.Context()
	at := day1.Add(13*time.Hour + 14*time.Minute + 15*time.Second + 16*time.Millisecond)
	in := Event{At: at, EventID: "e0301-rec", Kind: "click", UserID: "u001"}

	before := calls.snapshot()
	got, err := s.Record(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"PutItem": 1}, calls.since(before).requests)
	assert.Equal(t, Event{At: at, EventID: "e0301-rec", Kind: "click", UserID: "u001"}, in, "Record does not modify its argument")
	assert.Equal(t, day1, got.Day, "Day is the UTC day of At")
	assert.GreaterOrEqual(t, got.Shard, 1)
	assert.LessOrEqual(t, got.Shard, Shards)

	pk, sk, err := keysOf(got)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("EVENTS#2024-03-01#SHARD%d", got.Shard), pk)
	assert.Equal(t, "2024-03-01T13:14:15.016000000Z#e0301-rec", sk)

	// With its shard known (as Put returned it) the event is one GetItem away.
	before = calls.snapshot()
	back, err := s.Events.Get(ctx, got)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"GetItem": 1}, calls.since(before).requests)
	assert.Equal(t, got, back)

	// Day comes from At in UTC, whatever At's zone.
	east := time.FixedZone("UTC+9", 9*3600)
	got, err = s.Record(ctx, Event{At: time.Date(2024, 3, 2, 8, 0, 0, 0, east), EventID: "e0301-tokyo"})
	require.NoError(t, err)
	assert.Equal(t, day1, got.Day, "08:00 in UTC+9 is 23:00 the day before in UTC")
}

func TestMergedOrderEqualsSortedList(t *testing.T) {
	t.Parallel()
	events := sampleEvents(day1, 2000)
	s, calls := seededStore(t, 11, events)
	tests := []struct {
		name        string
		newestFirst bool
		opts        []singletable.ShardQueryOption
	}{
		{"oldest first", false, nil},
		{"newest first", true, []singletable.ShardQueryOption{singletable.Descending()}},
		{"oldest first, 64 a page", false, []singletable.ShardQueryOption{singletable.Limit(64)}},
		{"newest first, 64 a page", true, []singletable.ShardQueryOption{singletable.Descending(), singletable.Limit(64)}},
		{"newest first, 2 partitions at a time", true, []singletable.ShardQueryOption{singletable.Descending(), singletable.Parallel(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			for e, err := range s.Events.AllShards(t.Context(), Event{Day: day1}, tt.opts...) {
				require.NoError(t, err)
				got = append(got, e)
			}
			assert.Equal(t, ids(sorted(events, tt.newestFirst)), ids(got))
		})
	}
	t.Run("one page holds the whole day", func(t *testing.T) {
		before := calls.snapshot()
		pg, err := s.Events.QueryShards(t.Context(), Event{Day: day1}, singletable.Descending(), singletable.Limit(len(events)+1))
		require.NoError(t, err)
		assert.Equal(t, ids(sorted(events, true)), ids(pg.Items))
		assert.Empty(t, pg.Cursor)
		assert.Equal(t, map[string]int{"Query": Shards}, calls.since(before).requests, "one Query per shard")
	})
	t.Run("events decode whole", func(t *testing.T) {
		pg, err := s.Latest(t.Context(), day1, 1, "")
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)
		want := sorted(events, true)[0]
		got := pg.Items[0]
		assert.NotZero(t, got.Shard)
		want.Day, want.Shard = day1, got.Shard
		assert.Equal(t, want, got)
	})
}

func TestPagesHaveNoGapsOrDuplicates(t *testing.T) {
	t.Parallel()
	events := sampleEvents(day1, 600)
	s, _ := seededStore(t, 12, events)
	for _, newestFirst := range []bool{true, false} {
		for _, limit := range []int{13, 64, 75, 599, 600, 601, 5000} {
			t.Run(fmt.Sprintf("newestFirst=%v limit=%d", newestFirst, limit), func(t *testing.T) {
				t.Parallel()
				opts := []singletable.ShardQueryOption{singletable.Limit(limit)}
				if newestFirst {
					opts = append(opts, singletable.Descending())
				}
				s, calls := recount(t, s) // a counter of its own: the subtests run in parallel
				pages := readAll(t, func(cursor string) (singletable.Page[Event], error) {
					return s.Events.QueryShards(t.Context(), Event{Day: day1}, append(opts, singletable.After(cursor))...)
				})
				want := ids(sorted(events, newestFirst))
				assert.Equal(t, chunk(want, limit), pages, "full pages, in order, each event once")
				all := slices.Concat(pages...)
				assert.Len(t, all, len(events))
				assert.Len(t, slices.Compact(slices.Sorted(slices.Values(all))), len(events), "no duplicates")
				assert.LessOrEqual(t, calls.snapshot().requests["Query"], len(pages)*Shards*2,
					"at most a Query per shard per page, and one more for a shard that runs dry within it")
			})
		}
	}
	t.Run("Latest", func(t *testing.T) {
		pages := readAll(t, func(cursor string) (singletable.Page[Event], error) { return s.Latest(t.Context(), day1, 100, cursor) })
		assert.Equal(t, chunk(ids(sorted(events, true)), 100), pages)
	})
	t.Run("a cursor of another day", func(t *testing.T) {
		pg, err := s.Latest(t.Context(), day1, 10, "")
		require.NoError(t, err)
		_, err = s.Latest(t.Context(), day(2), 10, pg.Cursor)
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
		_, err = s.Events.QueryShards(t.Context(), Event{Day: day1}, singletable.Limit(10), singletable.After(pg.Cursor))
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "the cursor of a newest-first read does not resume an oldest-first one")
	})
}

// TestPagingWhileRecording pages through a day, newest first, while events are
// recorded between the pages. Every event that was there when the pass began is
// read exactly once and in order. What a pass shows of the events recorded
// meanwhile is not exact, and this test does not pin it: an event newer than the
// cursor shows up later in the pass (out of order) if it lands in a shard the
// pass has not read from yet, and an event older than the cursor is missed if it
// lands in a shard the pass has read to its end; the library's cursor resumes
// each shard, not the merge.
func TestPagingWhileRecording(t *testing.T) {
	t.Parallel()
	events := sampleEvents(day1, 400)
	s, _ := seededStore(t, 13, events)
	ctx := t.Context()
	late := sampleEvents(day(2), 40) // moved to day1 below, interleaved with it
	var seen []Event
	cursor := ""
	for page := 0; page == 0 || cursor != ""; page++ {
		pg, err := s.Latest(ctx, day1, 50, cursor)
		require.NoError(t, err)
		seen = append(seen, pg.Items...)
		cursor = pg.Cursor
		if page < len(late)/5 {
			for _, e := range late[page*5 : page*5+5] {
				e.At = e.At.AddDate(0, 0, -1)
				e.EventID = "late-" + e.EventID
				_, err := s.Record(ctx, e)
				require.NoError(t, err)
			}
		}
	}
	var old []Event
	for _, e := range seen {
		if !strings.HasPrefix(e.EventID, "late-") {
			old = append(old, e)
		}
	}
	assert.Equal(t, ids(sorted(events, true)), ids(old), "the events there from the start: each once, in order")
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(ids(seen)))), len(seen), "no event twice")
}

func TestSpread(t *testing.T) {
	t.Parallel()
	const n = 3000
	mean := float64(n) / Shards
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("random, seed %d", seed), func(t *testing.T) {
			t.Parallel()
			s, _ := seededStore(t, seed, sampleEvents(day1, n))
			counts, err := s.Spread(t.Context(), day1)
			require.NoError(t, err)
			assertSpread(t, counts, n, mean)

			// Spread counts what the merged read shows: each event's Shard.
			fromRead := make([]int, Shards)
			for e, err := range s.Events.AllShards(t.Context(), Event{Day: day1}) {
				require.NoError(t, err)
				fromRead[e.Shard-1]++
			}
			assert.Equal(t, counts, fromRead)
		})
	}
	idStyles := []struct {
		name string
		id   func(i int) string
	}{
		{"hashed, random ids", nil}, // sampleEvents' own
		{"hashed, sequential ids", func(i int) string { return fmt.Sprintf("e0301-%06d", i) }},
	}
	for _, style := range idStyles {
		t.Run(style.name, func(t *testing.T) {
			t.Parallel()
			events := sampleEvents(day1, n)
			if style.id != nil {
				for i := range events {
					events[i].EventID = style.id(i)
				}
			}
			s, _ := newStore(t, 1)
			left, err := s.RecordAllHashed(t.Context(), events)
			require.NoError(t, err)
			require.Empty(t, left)
			counts, err := s.SpreadHashed(t.Context(), day1)
			require.NoError(t, err)
			assertSpread(t, counts, n, mean)
		})
	}
}

// assertSpread checks that the counts add up to n and that each shard is within
// tolerance of the mean.
func assertSpread(t *testing.T, counts []int, n int, mean float64) {
	t.Helper()
	require.Len(t, counts, Shards)
	total := 0
	for i, c := range counts {
		total += c
		assert.InDelta(t, mean, c, mean*tolerance, "shard %d holds %d of %d", i+1, c, n)
	}
	assert.Equal(t, n, total)
	assert.NoError(t, checkSpread(counts, n))
	t.Logf("events per shard: %v", counts)
}

func TestPointReads(t *testing.T) {
	t.Parallel()
	events := sampleEvents(day1, 300)
	s, calls := seededStore(t, 14, events)
	left, err := s.RecordAllHashed(t.Context(), events)
	require.NoError(t, err)
	require.Empty(t, left)

	tests := []struct {
		name string
		e    Event
	}{
		{"first", events[0]},
		{"same instant as the first", events[1]},
		{"middle", events[150]},
		{"last", events[299]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.e
			want.Day = day1

			before := calls.snapshot()
			h, err := s.FindHashed(t.Context(), tt.e.At, tt.e.EventID)
			require.NoError(t, err)
			assert.Equal(t, map[string]int{"GetItem": 1}, calls.since(before).requests, "a hashed shard is computed: exactly one GetItem")
			hw := want.Hashed()
			hw.Shard = h.Shard
			assert.Equal(t, hw, h)
			assert.NotZero(t, h.Shard)

			before = calls.snapshot()
			e, err := s.Find(t.Context(), tt.e.At, tt.e.EventID)
			require.NoError(t, err)
			assert.Equal(t, map[string]int{"BatchGetItem": 1}, calls.since(before).requests, "a random shard is looked up: one BatchGetItem over the shards returns the item")
			want.Shard = e.Shard
			assert.Equal(t, want, e)
		})
	}
	t.Run("missing", func(t *testing.T) {
		before := calls.snapshot()
		_, err := s.FindHashed(t.Context(), events[0].At, "e0301-missing")
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		assert.Equal(t, map[string]int{"GetItem": 1}, calls.since(before).requests)

		before = calls.snapshot()
		_, err = s.Find(t.Context(), events[0].At, "e0301-missing")
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		assert.Equal(t, map[string]int{"BatchGetItem": 1}, calls.since(before).requests, "not in any shard: no GetItem")

		_, err = s.FindHashed(t.Context(), events[0].At.Add(time.Millisecond), events[0].EventID)
		assert.ErrorIs(t, err, singletable.ErrNotFound, "the time is part of the key")
	})
}

func TestMultiDay(t *testing.T) {
	t.Parallel()
	var events []Event
	for d := 1; d <= 5; d++ {
		events = append(events, sampleEvents(day(d), 150)...)
	}
	s, calls := seededStore(t, 15, events)

	t.Run("Range", func(t *testing.T) {
		want := ids(sorted(inWindow(events, day(2), day(5).Add(-time.Nanosecond)), true))
		require.Len(t, want, 450)
		for _, limit := range []int{37, 450, 1000} {
			t.Run(fmt.Sprint(limit), func(t *testing.T) {
				before := calls.snapshot()
				pages := readAll(t, func(cursor string) (singletable.Page[Event], error) {
					return s.Range(t.Context(), day(2), day(4).Add(17*time.Hour), limit, cursor)
				})
				assert.Equal(t, chunk(want, limit), pages, "days 2 to 4, newest first; days 1 and 5 left out")
				assert.GreaterOrEqual(t, calls.since(before).requests["Query"], 3*Shards, "every shard of every day")
			})
		}
	})
	t.Run("one day", func(t *testing.T) {
		pages := readAll(t, func(cursor string) (singletable.Page[Event], error) {
			return s.Range(t.Context(), day(3), day(3), 1000, cursor)
		})
		assert.Equal(t, [][]string{ids(sorted(inWindow(events, day(3), day(4).Add(-time.Nanosecond)), true))}, pages)
	})
	t.Run("Window", func(t *testing.T) {
		tests := []struct{ from, to time.Time }{
			{day(2).Add(-10 * time.Minute), day(2).Add(10 * time.Minute)}, // across one midnight
			{day(2).Add(-3 * time.Hour), day(4).Add(3 * time.Hour)},       // across two
			{day(3).Add(6 * time.Hour), day(3).Add(7 * time.Hour)},        // within one day
			{events[0].At, events[0].At},                                  // one instant: events 0 and 1
		}
		for _, tt := range tests {
			t.Run(tt.from.Format(time.DateTime)+" to "+tt.to.Format(time.DateTime), func(t *testing.T) {
				want := ids(sorted(inWindow(events, tt.from, tt.to), true))
				require.NotEmpty(t, want)
				pages := readAll(t, func(cursor string) (singletable.Page[Event], error) {
					return s.Window(t.Context(), tt.from, tt.to, 10, cursor)
				})
				assert.Equal(t, chunk(want, 10), pages)
			})
		}
		pg, err := s.Window(t.Context(), events[0].At, events[0].At, 10, "")
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{events[0].EventID, events[1].EventID}, ids(pg.Items), "both events of the instant, whole-key bounds included")
	})
	t.Run("bad ranges", func(t *testing.T) {
		_, err := s.Range(t.Context(), day(3), day(2), 10, "")
		assert.ErrorIs(t, err, singletable.ErrInvalidInput, "from after to")
		_, err = s.Range(t.Context(), day(1), day(1).AddDate(2, 0, 0), 10, "")
		assert.ErrorIs(t, err, singletable.ErrInvalidInput, "over a year")
	})
}

func TestCounter(t *testing.T) {
	t.Parallel()
	u := usage{requests: map[string]int{"Query": 8, "GetItem": 1}, read: 64}
	assert.Equal(t, "requests: 1 GetItem, 8 Query; 64 items read", u.String())
	assert.Equal(t, "no requests", usage{}.String())
	c := newCounter(nil)
	c.add("Query", 3)
	before := c.snapshot()
	c.add("Query", 5)
	c.add("GetItem", 0)
	d := c.since(before)
	assert.Equal(t, map[string]int{"Query": 1, "GetItem": 1}, d.requests)
	assert.Equal(t, 5, d.read)
	assert.True(t, maps.Equal(map[string]int{"Query": 2, "GetItem": 1}, c.snapshot().requests))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
