package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/fault"
	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/singletable/singletable/internal/localtest"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it. Under CI=true a missing one fails the tests instead of
// skipping them.
var local localtest.Shared

func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }

// newStoreWith creates an empty table of the GitHub model through client,
// deleted when the test ends.
func newStoreWith(t *testing.T, client singletable.Client, opts ...func(*StoreOptions)) *Store {
	t.Helper()
	s, err := NewStore(client, localtest.TableName(t), opts...)
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	localtest.DeleteAtCleanup(t, s.Table)
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
	table := localtest.TableName(t)
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
	table := localtest.TableName(t)
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

// writeCounter is a client that counts, by item key, the write-backs of
// migrated issues that succeed: conditional UpdateItems that set the schema
// version (a write-back changes only what the migration changed), and the
// conditional PutItems of whole items, once the version 1 items (unconditional
// PutItems) are in. It is safe for concurrent use.
type writeCounter struct {
	singletable.Client
	mu   sync.Mutex     // protects puts
	puts map[string]int // "PK SK" -> successful conditional PutItems
}

// PutItem sends in, letting it finish even if ctx ends: a request cancelled
// in flight may still have been applied, and then it would not be counted.
func (c *writeCounter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := c.Client.PutItem(context.WithoutCancel(ctx), in, optFns...)
	if err == nil && in.ConditionExpression != nil {
		pk, sk := in.Item["PK"].(*types.AttributeValueMemberS), in.Item["SK"].(*types.AttributeValueMemberS)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.puts == nil {
			c.puts = map[string]int{}
		}
		c.puts[pk.Value+" "+sk.Value]++
	}
	return out, err
}

// UpdateItem sends in as PutItem does, counting the write-backs among updates.
func (c *writeCounter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := c.Client.UpdateItem(context.WithoutCancel(ctx), in, optFns...)
	if err == nil && in.ConditionExpression != nil && slices.Contains(slices.Collect(maps.Values(in.ExpressionAttributeNames)), "_schema") &&
		strings.Contains(aws.ToString(in.UpdateExpression), "SET") {
		pk, sk := in.Key["PK"].(*types.AttributeValueMemberS), in.Key["SK"].(*types.AttributeValueMemberS)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.puts == nil {
			c.puts = map[string]int{}
		}
		c.puts[pk.Value+" "+sk.Value]++
	}
	return out, err
}

// writes is how many times issue number of owner/repo was written back.
func (c *writeCounter) writes(owner, repo string, number int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.puts[fmt.Sprintf("REPO#%s#%s ISSUE#%08d", owner, repo, number)]
}

// total is how many conditional PutItems succeeded.
func (c *writeCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.puts {
		n += k
	}
	return n
}

// oldStore is a store whose table holds oldRepo and its first n oldIssues as
// version 1 of the program wrote them, through a client that counts
// write-backs. The test fails if a migration error is reported.
func oldStore(t *testing.T, n int) (*Store, *writeCounter) {
	t.Helper()
	wc := &writeCounter{Client: local.Client(t)}
	var errs errorList
	s := newStoreWith(t, wc, func(o *StoreOptions) { o.OnMigrationError = errs.add })
	t.Cleanup(func() { assert.NoError(t, errs.err(), "migration errors") })
	require.NoError(t, putVersion1(t.Context(), wc, s.Table.Name(), oldRepo(), oldIssues()[:n]))
	return s, wc
}

// rawIssue is an issue's item as stored (a strongly consistent GetItem).
func rawIssue(t *testing.T, s *Store, owner, repo string, number int64) map[string]types.AttributeValue {
	t.Helper()
	out, err := s.Table.Client().GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      aws.String(s.Table.Name()),
		Key:            map[string]types.AttributeValue{"PK": avS("REPO#" + owner + "#" + repo), "SK": avS(fmt.Sprintf("ISSUE#%08d", number))},
		ConsistentRead: aws.Bool(true),
	})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "no issue %s/%s#%d", owner, repo, number)
	return out.Item
}

// migrated is old issue n (1-based) as version 2 reads it.
func migrated(n int64, priority Priority) Issue {
	is := oldIssues()[n-1]
	is.Priority = priority
	return is
}

// highNumbers are the numbers of oldIssues' critical issues, newest first.
var highNumbers = []int64{232, 207, 182, 157, 132, 107, 82, 57, 32, 7}

func TestOldIssues(t *testing.T) {
	t.Parallel()
	var high []int64
	counts := map[Priority]int{}
	for _, is := range slices.Backward(oldIssues()) {
		p := PriorityOf(is.Labels)
		counts[p]++
		if p == PriorityHigh {
			high = append(high, is.Number)
		}
	}
	assert.Equal(t, highNumbers, high)
	assert.Equal(t, map[Priority]int{PriorityHigh: 10, PriorityMedium: 58, PriorityLow: 172}, counts)
}

// TestReadMigratesOldIssue reads version 1 issues: each is returned at
// version 2 with the priority its labels call for, written back once with
// _schema = 2 and its GSI5 keys, and listed on GSI5 from then on.
func TestReadMigratesOldIssue(t *testing.T) {
	t.Parallel()
	s, wc := oldStore(t, 100)
	ctx := t.Context()
	launched := oldRepo().CreatedAt
	tests := []struct {
		name string
		want Issue
	}{
		{"critical", Issue{Owner: "acme", Repo: "launchpad", Number: 32, Title: "Clamp 32 does not release", Author: "dee", Status: StatusOpen,
			Labels: []string{"bug", "critical"}, Priority: PriorityHigh, CreatedAt: launched.Add(32 * 24 * time.Hour)}},
		{"critical and closed", Issue{Owner: "acme", Repo: "launchpad", Number: 57, Title: "Clamp 57 does not release", Author: "ann", Status: StatusClosed,
			Labels: []string{"bug", "critical"}, Priority: PriorityHigh, CreatedAt: launched.Add(57 * 24 * time.Hour)}},
		{"bug", Issue{Owner: "acme", Repo: "launchpad", Number: 1, Title: "Sensor 1 reads high", Author: "ann", Status: StatusOpen,
			Labels: []string{"bug"}, Priority: PriorityMedium, CreatedAt: launched.Add(24 * time.Hour)}},
		{"docs", Issue{Owner: "acme", Repo: "launchpad", Number: 10, Title: "Document procedure 10", Author: "bob", Status: StatusOpen,
			Labels: []string{"docs"}, Priority: PriorityLow, CreatedAt: launched.Add(10 * 24 * time.Hour)}},
		{"no labels", Issue{Owner: "acme", Repo: "launchpad", Number: 2, Title: "Idea 2", Author: "bob", Status: StatusOpen,
			Priority: PriorityLow, CreatedAt: launched.Add(2 * 24 * time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.want.Number
			before := rawIssue(t, s, "acme", "launchpad", n)
			for _, attr := range []string{"_schema", "priority", "GSI5PK", "GSI5SK"} {
				assert.NotContains(t, before, attr, "version 1 wrote no %s", attr)
			}

			got, err := s.GetIssue(ctx, "acme", "launchpad", n)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)

			after := rawIssue(t, s, "acme", "launchpad", n)
			assert.Equal(t, avN(2), after["_schema"])
			assert.Equal(t, avS(string(tt.want.Priority)), after["priority"])
			assert.Equal(t, avS("REPO#acme#launchpad"), after["GSI5PK"])
			assert.Equal(t, avS(fmt.Sprintf("PRIORITY#%s#%08d", tt.want.Priority, n)), after["GSI5SK"])
			assert.Equal(t, before["GSI4SK"], after["GSI4SK"], "GSI4 keys unchanged")
			for attr, av := range before {
				assert.Equal(t, av, after[attr], "version 1 attribute %s kept", attr)
			}
			assert.Equal(t, 1, wc.writes("acme", "launchpad", n), "one write-back")

			_, _, err = s.Issues.WaitIndexed(ctx, indexByPriority, got)
			require.NoError(t, err)
			list, err := s.IssuesByPriority(ctx, "acme", "launchpad", tt.want.Priority)
			require.NoError(t, err)
			assert.Contains(t, list, tt.want, "listed on GSI5 once migrated")

			again, err := s.GetIssue(ctx, "acme", "launchpad", n)
			require.NoError(t, err)
			assert.Equal(t, tt.want, again)
			assert.Equal(t, 1, wc.writes("acme", "launchpad", n), "a version 2 issue is not written back")
		})
	}

	t.Run("an update returns the issue migrated; the next read writes it back", func(t *testing.T) {
		// A version 1 bug (medium by its labels) raised to high by an
		// UpdateItem. Update returns the item migrated in memory, keeping the
		// priority the update set; the stored item stays at version 1 (with
		// the GSI5 keys the update recomputed) until a read writes it back.
		got, err := s.Issues.Update(ctx, Issue{Owner: "acme", Repo: "launchpad", Number: 5}, singletable.Set("priority", PriorityHigh))
		require.NoError(t, err)
		assert.Equal(t, migrated(5, PriorityHigh), got)
		raw := rawIssue(t, s, "acme", "launchpad", 5)
		assert.Nil(t, raw["_schema"])
		assert.Equal(t, avS("PRIORITY#high#00000005"), raw["GSI5SK"])
		assert.Equal(t, 0, wc.writes("acme", "launchpad", 5), "no write-back after the UpdateItem")
		again, err := s.GetIssue(ctx, "acme", "launchpad", 5)
		require.NoError(t, err)
		assert.Equal(t, migrated(5, PriorityHigh), again)
		assert.Equal(t, avN(2), rawIssue(t, s, "acme", "launchpad", 5)["_schema"])
		assert.Equal(t, 1, wc.writes("acme", "launchpad", 5), "written back once, by the read")

		closed, err := s.CloseIssue(ctx, "acme", "launchpad", 11)
		require.NoError(t, err)
		want := migrated(11, PriorityLow)
		want.Status = StatusClosed
		assert.Equal(t, want, closed)
		raw = rawIssue(t, s, "acme", "launchpad", 11)
		assert.Equal(t, avS("ISSUE#CLOSED#00000011"), raw["GSI4SK"])
		_, err = s.GetIssue(ctx, "acme", "launchpad", 11)
		require.NoError(t, err)
		raw = rawIssue(t, s, "acme", "launchpad", 11)
		assert.Equal(t, avN(2), raw["_schema"])
		assert.Equal(t, avS("PRIORITY#low#00000011"), raw["GSI5SK"])
	})

	t.Run("concurrent readers", func(t *testing.T) {
		// Eight readers of the same version 1 issue: each gets it
		// migrated, and the write-backs are conditional on the item being
		// at version 1, so exactly one is written.
		const readers = 8
		got := make([]Issue, readers)
		errs := make([]error, readers)
		var wg sync.WaitGroup
		for i := range readers {
			wg.Go(func() { got[i], errs[i] = s.GetIssue(ctx, "acme", "launchpad", 100) })
		}
		wg.Wait()
		for i := range readers {
			require.NoError(t, errs[i])
			assert.Equal(t, migrated(100, PriorityLow), got[i])
		}
		assert.Equal(t, 1, wc.writes("acme", "launchpad", 100))
	})
}

// TestSweep reads three old issues, then sweeps: the sweep migrates the
// other issues, each written back once, and GSI5 lists exactly the critical
// issues, newest first. A second sweep migrates nothing.
func TestSweep(t *testing.T) {
	t.Parallel()
	s, wc := oldStore(t, oldIssueCount)
	ctx := t.Context()
	read := []int64{7, 32, 100}
	for _, n := range read {
		_, err := s.GetIssue(ctx, "acme", "launchpad", n)
		require.NoError(t, err)
	}
	var progress []singletable.SweepStats
	stats, err := s.Issues.Sweep(ctx, singletable.PageSize(50),
		singletable.OnSweepProgress(func(st singletable.SweepStats) { progress = append(progress, st) })) // one call at a time
	require.NoError(t, err)
	assert.Equal(t, int64(oldIssueCount-len(read)), stats.Migrated, "every old issue but those read")
	assert.Equal(t, int64(oldIssueCount+1), stats.Seen, "the scans read every item: the issues and the repository")
	assert.Zero(t, stats.Lost)
	assert.Zero(t, stats.Failed)
	require.NotEmpty(t, progress)
	for i := 1; i < len(progress); i++ {
		assert.GreaterOrEqual(t, progress[i].Migrated, progress[i-1].Migrated, "progress %d", i)
		assert.GreaterOrEqual(t, progress[i].Seen, progress[i-1].Seen, "progress %d", i)
	}
	last := progress[len(progress)-1]
	assert.Equal(t, stats.Migrated, last.Migrated)
	assert.Equal(t, stats.Seen, last.Seen)

	versions, err := schemaVersions(ctx, s.Table, "acme", "launchpad")
	require.NoError(t, err)
	assert.Equal(t, map[int]int{2: oldIssueCount}, versions)
	for n := int64(1); n <= oldIssueCount; n++ {
		assert.Equal(t, 1, wc.writes("acme", "launchpad", n), "issue #%d written back once", n)
	}

	high, err := s.IssuesByPriority(ctx, "acme", "launchpad", PriorityHigh)
	require.NoError(t, err)
	assert.Equal(t, highNumbers, nums(high))
	want := []Issue{}
	for _, n := range highNumbers {
		want = append(want, migrated(n, PriorityHigh))
	}
	assert.Equal(t, want, high)
	for pr, count := range map[Priority]int{PriorityMedium: 58, PriorityLow: 172} {
		list, err := s.IssuesByPriority(ctx, "acme", "launchpad", pr)
		require.NoError(t, err)
		assert.Len(t, list, count, "%s", pr)
	}

	again, err := s.Issues.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, again.Migrated, "a sweep of a migrated table migrates nothing")
	assert.Equal(t, int64(oldIssueCount+1), again.Seen)
	assert.Equal(t, oldIssueCount, wc.total(), "nothing written again")
}

// TestSweepCancelledAndResumed cancels a sweep from its Progress callback
// once it has migrated about half of the old issues, then runs it again with
// the same checkpoints: the second sweep migrates the rest, and every old
// issue is written back exactly once. With the old issues in one repository,
// one partition, only one scan segment finds them, and the cancellation
// comes between its pages; with several repositories the segments work in
// parallel, and the others are stopped in the middle of a page.
func TestSweepCancelledAndResumed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		repos int // more repositories of 30 version 1 issues, besides oldRepo
	}{
		{"one repo", 0},
		{"five repos", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, wc := oldStore(t, oldIssueCount)
			ctx := t.Context()
			issues := map[string]int64{"launchpad": oldIssueCount} // repo -> issues
			for i := range tt.repos {
				r := oldRepo()
				r.Name, r.IssueCount = fmt.Sprintf("pad-%d", i+1), 30
				var more []Issue
				for _, is := range oldIssues()[:r.IssueCount] {
					is.Repo = r.Name
					more = append(more, is)
				}
				require.NoError(t, putVersion1(ctx, wc, s.Table.Name(), r, more))
				issues[r.Name] = r.IssueCount
			}
			_, err := s.GetIssue(ctx, "acme", "launchpad", 32)
			require.NoError(t, err)
			old := -1 // #32 was migrated by the read
			for _, n := range issues {
				old += int(n)
			}

			cps := &singletable.MemoryStore{}
			opts := []singletable.SweepOption{singletable.Segments(4), singletable.PageSize(20), singletable.SweepProgressIn(cps)}
			half, cancel := context.WithCancel(ctx)
			defer cancel()
			first, err := s.Issues.Sweep(half, append(opts, singletable.OnSweepProgress(func(st singletable.SweepStats) {
				if st.Migrated >= int64(old/2) {
					cancel()
				}
			}))...)
			require.ErrorIs(t, err, context.Canceled)
			firstWrites := wc.total() - 1 // but the read's
			assert.GreaterOrEqual(t, first.Migrated, int64(old/2))
			assert.Less(t, firstWrites, old, "cancelled before the end")

			second, err := s.Issues.Sweep(ctx, opts...)
			require.NoError(t, err)
			t.Logf("%d old issues; cancelled sweep %+v, %d written; resumed sweep %+v", old, first, firstWrites, second)
			assert.Equal(t, int64(old-firstWrites), second.Migrated, "the resumed sweep migrated the rest")
			if tt.repos == 0 {
				assert.Equal(t, int64(firstWrites), first.Migrated, "the cancelled sweep counted what it wrote")
			} else {
				// A segment stopped in the middle of a page leaves that
				// page's write-backs out of the cancelled sweep's stats
				// (they are in the table, and the resumed sweep skips
				// them), so Migrated can be less than what was written.
				assert.LessOrEqual(t, first.Migrated, int64(firstWrites))
			}
			assert.Zero(t, first.Lost+second.Lost+first.Failed+second.Failed)
			assert.Less(t, second.Seen, int64(old), "the resumed sweep started from the checkpoints")
			for repo, count := range issues {
				versions, err := schemaVersions(ctx, s.Table, "acme", repo)
				require.NoError(t, err)
				assert.Equal(t, map[int]int{2: int(count)}, versions, repo)
				for n := int64(1); n <= count; n++ {
					assert.Equal(t, 1, wc.writes("acme", repo, n), "%s#%d written back exactly once", repo, n)
				}
			}

			third, err := s.Issues.Sweep(ctx, opts...)
			require.NoError(t, err)
			assert.Equal(t, singletable.SweepStats{}, singletable.SweepStats{Seen: third.Seen, Migrated: third.Migrated},
				"the checkpoints say every segment is done: nothing is read or migrated")
		})
	}
}
