package main

// The tests of lazy migration and sweeps: old issues read and written back,
// counted at the client; the sweep, cancelled and resumed.

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
)

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
