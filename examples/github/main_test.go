package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/examples/exampleenv"
	"github.com/singletable/singletable/fault"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it. Under CI=true a missing one fails the tests instead of
// skipping them.
var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

// newStoreWith creates an empty table of the GitHub model through client,
// deleted when the test ends.
func newStoreWith(t *testing.T, client singletable.Client, opts ...func(*StoreOptions)) *Store {
	t.Helper()
	s, err := NewStore(client, exampleenv.TableName(t), opts...)
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	return s
}

// seededStore is a store with the sample repo and its issues #1, #2, #3 open.
func seededStore(t *testing.T) *Store {
	t.Helper()
	s := newStoreWith(t, local.Client(t))
	seed(t, s)
	return s
}

func seed(t *testing.T, s *Store) {
	t.Helper()
	_, err := s.CreateRepo(t.Context(), sampleRepo())
	require.NoError(t, err)
	for _, d := range sampleIssues() {
		_, err := s.OpenIssue(t.Context(), d)
		require.NoError(t, err)
	}
}

// issue is sample issue n (1-based) as stored: numbered, in status, with the
// priority of its labels.
func issue(n int64, status IssueStatus) Issue {
	is := sampleIssues()[n-1]
	is.Number, is.Status, is.Priority = n, status, PriorityOf(is.Labels)
	return is
}

func nums(issues []Issue) []int64 {
	out := []int64{}
	for _, is := range issues {
		out = append(out, is.Number)
	}
	return out
}

func TestRun(t *testing.T) {
	t.Parallel()
	client := local.Client(t)
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), client, table, &out), out.String())
	got := out.String()
	for _, want := range []string{
		"created table " + table,
		"1. Create repo acme/rocket", "created: \"A rocket, one issue at a time\", 0 issues", "again: refused, it exists",
		"2. Open issues", "#1 OPEN \"Launch checklist is out of date\" by ann (SK ISSUE#00000001, GSI4SK ISSUE#OPEN#00000001)",
		"#3 OPEN \"Add a countdown timer\" by cy", "refused, no such repo",
		"3. Issues of acme/rocket", "#2 OPEN   \"Fuel gauge reads empty when full\" by bob, 2024-05-01 11:00:00",
		"4. Issue #2", "#2 OPEN \"Fuel gauge reads empty when full\" by bob",
		"5. Open an issue and list the open issues on GSI4 right away", "opened #4 \"Countdown skips 7\"",
		// DynamoDB Local updates its indexes at once: each wait reads once.
		"WaitIndexed(GSI4, #4): 1 index read in ",
		"begins_with(GSI4SK, \"ISSUE#OPEN#\")): #4 #3 #2 #1",
		"6. Close #2", "ISSUE#OPEN#00000002 -> ISSUE#CLOSED#00000002",
		"WaitMoved(GSI4, open #2, closed #2): 2 index reads in ",
		"OPEN:   #4 #3 #1", "CLOSED: #2", "closing #2 again: refused, it is not OPEN",
		"7. Version 1 of the program wrote repo acme/launchpad and 240 issues",
		"issues by schema version (Query of the table, projecting _schema): 240 at version 1\n",
		"begins_with(GSI5SK, \"PRIORITY#high#\")): (none)\n",
		"8. Issue #32", "#32 \"Clamp 32 does not release\", labels [bug critical]: high (GSI5SK PRIORITY#high#00000032)",
		"WaitIndexed(GSI5, #32): 1 index read in ", "high priority on GSI5: #32\n",
		"issues by schema version: 239 at version 1, 1 at version 2\n",
		"9. Sweep", "at most 100 a second",
		"swept: seen 246, migrated 239, lost 0, failed 0 in ", // 240 + 1 repository of launchpad, 4 + 1 of rocket
		"issues by schema version: 240 at version 2\n",
		"again: seen 246, migrated 0, lost 0, failed 0 in ",
		"10. High priority issues of acme/launchpad on GSI5, newest first",
		"WaitFor(GSI5 lists 10): 1 index read in ",
		"   #232 #207 #182 #157 #132 #107 #82 #57 #32 #7\n",
		"medium: 58 issues", "low:    172 issues",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	sweepProgress(t, got)
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

// sweepProgress checks the sweep's progress lines in run's output: at least
// two, each after more migrations, the last at 239; and the rate cap of 100
// a second: k migrations take at least (k-1)/100 s (the first goes at once),
// so the rate shown is at most 100k/(k-1), and all 239 take at least 2.38 s.
func sweepProgress(t *testing.T, out string) {
	t.Helper()
	lines := regexp.MustCompile(`progress: seen +(\d+), migrated +(\d+) in +(\S+): +(\d+)/s\n`).FindAllStringSubmatch(out, -1)
	require.GreaterOrEqual(t, len(lines), 2, "progress lines in:\n%s", out)
	last := int64(0)
	for _, l := range lines {
		migrated, err := strconv.ParseInt(l[2], 10, 64)
		require.NoError(t, err)
		assert.Greater(t, migrated, last, "progress line %q", l[0])
		last = migrated
		perSecond, err := strconv.ParseFloat(l[4], 64)
		require.NoError(t, err)
		assert.LessOrEqual(t, perSecond, math.Round(100*float64(migrated)/float64(migrated-1)), "progress line %q: the rate is capped", l[0])
	}
	assert.Equal(t, int64(239), last)
	m := regexp.MustCompile(`swept: seen 246, migrated 239, lost 0, failed 0 in (\S+) \((\d+)/s\)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no swept line in:\n%s", out)
	took, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, took, 2380*time.Millisecond, "239 migrations at 100 a second")
}

// waitReads finds how many index reads a wait printed that it made.
func waitReads(t *testing.T, out, wait string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(wait) + `: (\d+) index reads? in \S+\n`).FindStringSubmatch(out)
	require.NotNil(t, m, "no %s line in:\n%s", wait, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// TestRunUnderGSILag runs the example through the fault injector with GSI4
// and GSI5 lagging behind the table, as they do on DynamoDB: 3 index reads
// miss each write. The status lists still show the new and the closed issue,
// and the priority lists the migrated issues, because the waits retried until
// the indexes showed them.
func TestRunUnderGSILag(t *testing.T) {
	t.Parallel()
	client, inj := fault.NewClient(local.Get(t))
	inj.SetGSILag(fault.Lag{Reads: 3})
	table := exampleenv.TableName(t)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), client, table, &out), out.String())
	got := out.String()

	indexed := waitReads(t, got, "WaitIndexed(GSI4, #4)")
	assert.Equal(t, 4, indexed, "3 index reads miss #4, the 4th shows it")
	moved := waitReads(t, got, "WaitMoved(GSI4, open #2, closed #2)")
	assert.Equal(t, 5, moved, "4 reads until the closed #2 shows under CLOSED, 1 to see it gone from OPEN")
	assert.Contains(t, got, "begins_with(GSI4SK, \"ISSUE#OPEN#\")): #4 #3 #2 #1", "the new issue is listed")
	assert.Contains(t, got, "OPEN:   #4 #3 #1")
	assert.Contains(t, got, "CLOSED: #2")
	assert.Equal(t, 4, waitReads(t, got, "WaitIndexed(GSI5, #32)"), "3 index reads miss the write-back of #32, the 4th shows it")
	assert.Contains(t, got, "high priority on GSI5: #32\n", "the migrated issue is listed")
	assert.Equal(t, 4, waitReads(t, got, "WaitFor(GSI5 lists 10)"), "3 index reads miss the sweep's last write-backs")
	assert.Contains(t, got, "   #232 #207 #182 #157 #132 #107 #82 #57 #32 #7\n", "every critical issue is listed")
	assert.Positive(t, inj.Stats().Requests["Query"])
}

// fakeClock is a clock that moves only when a wait sleeps on it. With it as
// both the injector's clock and the waits', a lag in time gives the same
// reads whatever the machine's speed, and the waits do not really sleep.
type fakeClock struct {
	mu  sync.Mutex // protects now
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return ctx.Err()
}

// TestStatusIndexUnderGSILag shows the lag itself: right after a write, GSI4
// does not show it; the wait retries until it does, and reports how many
// reads and how long that took.
func TestStatusIndexUnderGSILag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		lag  fault.Lag
		// The reads and time of WaitIndexed after opening #4 and of WaitMoved
		// after closing #2. The backoff's jitter is fixed at half its bound,
		// so the retries come after 12.5ms, 25ms, 50ms, 100ms...: reads at
		// 0, 12.5, 37.5, 87.5, 187.5ms.
		indexed, moved     int
		indexedIn, movedIn time.Duration
	}{
		{
			// 3 index reads miss each write: the read right after opening #4
			// and two of the wait's. Then three of WaitMoved's reads miss the
			// closed #2 under CLOSED, the 4th shows it, and a 5th finds it
			// gone from OPEN.
			name: "3 reads", lag: fault.Lag{Reads: 3},
			indexed: 3, indexedIn: 37500 * time.Microsecond,
			moved: 5, movedIn: 87500 * time.Microsecond,
		},
		{
			// The reads at 0, 12.5, 37.5 and 87.5ms after a write miss it;
			// the one at 187.5ms shows it.
			name: "150ms", lag: fault.Lag{Duration: 150 * time.Millisecond},
			indexed: 5, indexedIn: 187500 * time.Microsecond,
			moved: 6, movedIn: 187500 * time.Microsecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{now: t0}
			client, inj := fault.NewClient(local.Get(t), func(o *fault.ClientOptions) { o.Injector.Now = clk.Now })
			s := newStoreWith(t, client)
			seed(t, s)
			ctx := t.Context()
			retry := singletable.RetryBackoff(singletable.Backoff{Now: clk.Now, Sleep: clk.Sleep, Rand: func() float64 { return 0.5 }})
			inj.SetGSILag(tt.lag)

			four, err := s.OpenIssue(ctx, lateIssue())
			require.NoError(t, err)
			open, err := s.IssuesByStatus(ctx, "acme", "rocket", StatusOpen)
			require.NoError(t, err)
			assert.Equal(t, []int64{3, 2, 1}, nums(open), "without the wait, GSI4 does not show #4 yet")

			got, stats, err := s.Issues.WaitIndexed(ctx, indexByStatus, four, retry)
			require.NoError(t, err)
			assert.Equal(t, four, got, "the index shows #4 as written")
			assert.Equal(t, singletable.WaitStats{Attempts: tt.indexed, Elapsed: tt.indexedIn}, stats)
			open, err = s.IssuesByStatus(ctx, "acme", "rocket", StatusOpen)
			require.NoError(t, err)
			assert.Equal(t, []Issue{four, issue(3, StatusOpen), issue(2, StatusOpen), issue(1, StatusOpen)}, open, "after the wait, the status query returns the new issue")

			two, err := s.GetIssue(ctx, "acme", "rocket", 2)
			require.NoError(t, err)
			closed, err := s.CloseIssue(ctx, "acme", "rocket", 2)
			require.NoError(t, err)
			stats, err = s.Issues.WaitMoved(ctx, indexByStatus, two, closed, retry)
			require.NoError(t, err)
			assert.Equal(t, singletable.WaitStats{Attempts: tt.moved, Elapsed: tt.movedIn}, stats)
			open, err = s.IssuesByStatus(ctx, "acme", "rocket", StatusOpen)
			require.NoError(t, err)
			assert.Equal(t, []int64{4, 3, 1}, nums(open))
			closedList, err := s.IssuesByStatus(ctx, "acme", "rocket", StatusClosed)
			require.NoError(t, err)
			assert.Equal(t, []Issue{closed}, closedList)
		})
	}
}

func TestCreateRepo(t *testing.T) {
	t.Parallel()
	s := newStoreWith(t, local.Client(t))
	ctx := t.Context()
	in := sampleRepo()
	in.IssueCount = 99 // ignored: a new repository has no issues
	created, err := s.CreateRepo(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, sampleRepo(), created)
	assert.Equal(t, int64(99), in.IssueCount, "the argument is not modified")

	again := sampleRepo()
	again.Description = "impostor"
	_, err = s.CreateRepo(ctx, again)
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	got, err := s.GetRepo(ctx, "acme", "rocket")
	require.NoError(t, err)
	assert.Equal(t, sampleRepo(), got, "the second create changed nothing")

	_, err = s.GetRepo(ctx, "acme", "nothing")
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = s.CreateRepo(ctx, Repo{Owner: "acme", Name: "a#b", CreatedAt: t0})
	assert.ErrorIs(t, err, singletable.ErrInvalidKey, "a name holding the delimiter is refused")
}

func TestOpenIssue(t *testing.T) {
	t.Parallel()
	s := seededStore(t)
	ctx := t.Context()

	repo, err := s.GetRepo(ctx, "acme", "rocket")
	require.NoError(t, err)
	assert.Equal(t, int64(3), repo.IssueCount)
	for n := int64(1); n <= 3; n++ {
		got, err := s.GetIssue(ctx, "acme", "rocket", n)
		require.NoError(t, err)
		assert.Equal(t, issue(n, StatusOpen), got)
	}

	draft := lateIssue()
	draft.Number, draft.Status, draft.Priority = 77, StatusClosed, PriorityHigh // ignored
	four, err := s.OpenIssue(ctx, draft)
	require.NoError(t, err)
	want := lateIssue()
	want.Number, want.Status, want.Priority = 4, StatusOpen, PriorityMedium // a bug
	assert.Equal(t, want, four)
	got, err := s.GetIssue(ctx, "acme", "rocket", 4)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	raw := rawIssue(t, s, "acme", "rocket", 4)
	assert.Equal(t, avN(2), raw["_schema"], "a new issue is written at schema version 2")
	assert.Equal(t, avS("PRIORITY#medium#00000004"), raw["GSI5SK"])

	_, err = s.OpenIssue(ctx, Issue{Owner: "acme", Repo: "nothing", Title: "x", Author: "zoe", CreatedAt: t0})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	issues, err := s.ListIssues(ctx, "acme", "nothing")
	require.NoError(t, err)
	assert.Empty(t, issues, "no issue and no repository was created")
	_, err = s.GetRepo(ctx, "acme", "nothing")
	assert.ErrorIs(t, err, singletable.ErrNotFound, "the counter did not create the repository")
}

func TestOpenIssueConcurrently(t *testing.T) {
	t.Parallel()
	s := newStoreWith(t, local.Client(t))
	ctx := t.Context()
	_, err := s.CreateRepo(ctx, sampleRepo())
	require.NoError(t, err)

	const openers = 12
	var wg sync.WaitGroup
	errs := make([]error, openers)
	for i := range openers {
		wg.Go(func() {
			_, errs[i] = s.OpenIssue(ctx, Issue{Owner: "acme", Repo: "rocket", Title: fmt.Sprintf("issue from opener %d", i), Author: "bot", CreatedAt: t0})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	issues, err := s.ListIssues(ctx, "acme", "rocket")
	require.NoError(t, err)
	want := []int64{}
	for n := int64(1); n <= openers; n++ {
		want = append(want, n)
	}
	assert.Equal(t, want, nums(issues), "every opener got its own number, none skipped; #10-#12 sort after #9")
}

func TestListIssues(t *testing.T) {
	t.Parallel()
	s := seededStore(t)
	ctx := t.Context()
	// Another repository of the same owner, and a name that extends this one's.
	for _, name := range []string{"probe", "rocket-2"} {
		_, err := s.CreateRepo(ctx, Repo{Owner: "acme", Name: name, CreatedAt: t0})
		require.NoError(t, err)
		_, err = s.OpenIssue(ctx, Issue{Owner: "acme", Repo: name, Title: "elsewhere", Author: "zoe", CreatedAt: t0})
		require.NoError(t, err)
	}
	_, err := s.CloseIssue(ctx, "acme", "rocket", 1)
	require.NoError(t, err)

	got, err := s.ListIssues(ctx, "acme", "rocket")
	require.NoError(t, err)
	assert.Equal(t, []Issue{issue(1, StatusClosed), issue(2, StatusOpen), issue(3, StatusOpen)}, got, "open and closed, in number order, without the repository item")

	got, err = s.ListIssues(ctx, "acme", "nothing")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestGetIssue(t *testing.T) {
	t.Parallel()
	s := seededStore(t)
	got, err := s.GetIssue(t.Context(), "acme", "rocket", 2)
	require.NoError(t, err)
	assert.Equal(t, issue(2, StatusOpen), got)
	_, err = s.GetIssue(t.Context(), "acme", "rocket", 9)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = s.GetIssue(t.Context(), "acme", "rocket", 1_000_000_000)
	assert.ErrorIs(t, err, singletable.ErrInvalidKey, "a number wider than 8 digits does not fit the key")
}

func TestIssuesByStatus(t *testing.T) {
	t.Parallel()
	s := seededStore(t)
	ctx := t.Context()
	_, err := s.CreateRepo(ctx, Repo{Owner: "acme", Name: "probe", CreatedAt: t0})
	require.NoError(t, err)
	_, err = s.OpenIssue(ctx, Issue{Owner: "acme", Repo: "probe", Title: "elsewhere", Author: "zoe", CreatedAt: t0})
	require.NoError(t, err)
	for _, n := range []int64{1, 3} {
		_, err := s.CloseIssue(ctx, "acme", "rocket", n)
		require.NoError(t, err)
	}
	// DynamoDB Local updates the index at once; no wait is needed here.
	tests := []struct {
		repo   string
		status IssueStatus
		want   []Issue
	}{
		{"rocket", StatusOpen, []Issue{issue(2, StatusOpen)}},
		{"rocket", StatusClosed, []Issue{issue(3, StatusClosed), issue(1, StatusClosed)}}, // newest first
		{"probe", StatusOpen, []Issue{{Owner: "acme", Repo: "probe", Number: 1, Title: "elsewhere", Author: "zoe", Status: StatusOpen, Priority: PriorityLow, CreatedAt: t0}}},
		{"probe", StatusClosed, []Issue{}},
		{"nothing", StatusOpen, []Issue{}},
	}
	for _, tt := range tests {
		t.Run(tt.repo+"/"+string(tt.status), func(t *testing.T) {
			got, err := s.IssuesByStatus(ctx, "acme", tt.repo, tt.status)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCloseIssue(t *testing.T) {
	t.Parallel()
	s := seededStore(t)
	ctx := t.Context()
	closed, err := s.CloseIssue(ctx, "acme", "rocket", 2)
	require.NoError(t, err)
	assert.Equal(t, issue(2, StatusClosed), closed, "only the status changed")

	_, err = s.CloseIssue(ctx, "acme", "rocket", 2)
	assert.ErrorIs(t, err, singletable.ErrCondition, "a closed issue cannot be closed again")
	_, err = s.CloseIssue(ctx, "acme", "rocket", 9)
	assert.ErrorIs(t, err, singletable.ErrNotFound, "closing creates nothing")
	_, err = s.GetIssue(ctx, "acme", "rocket", 9)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestPriorityOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		labels []string
		want   Priority
	}{
		{[]string{"critical"}, PriorityHigh},
		{[]string{"bug", "critical"}, PriorityHigh},
		{[]string{"docs", "critical"}, PriorityHigh},
		{[]string{"bug"}, PriorityMedium},
		{[]string{"docs", "bug"}, PriorityMedium},
		{[]string{"docs"}, PriorityLow},
		{[]string{"enhancement", "question"}, PriorityLow},
		{[]string{"Critical", "BUG"}, PriorityLow}, // exact match only
		{[]string{}, PriorityLow},
		{nil, PriorityLow},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.labels), func(t *testing.T) {
			assert.Equal(t, tt.want, PriorityOf(tt.labels))
		})
	}
}
