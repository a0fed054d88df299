package singletable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mIssue is at schema version 3. Version 1 issues have no priority and keep their
// text in "desc"; version 2 added the priority (and its GSI1 keys); version 3
// renamed "desc" to "body".
type mIssue struct {
	_          struct{} `Type:"MIssue" PK:"REPO#{owner}#{repo}" SK:"ISSUE#{number:08}" GSI1PK:"PRIO#{owner}#{repo}#{priority}" GSI1SK:"ISSUE#{number:08}"`
	Owner      string   `dynamodbav:"owner"`
	Repo       string   `dynamodbav:"repo"`
	Number     int      `dynamodbav:"number"`
	Title      string   `dynamodbav:"title"`
	Labels     []string `dynamodbav:"labels,omitempty"`
	Priority   string   `dynamodbav:"priority,omitempty"`
	Body       string   `dynamodbav:"body,omitempty"`
	Migrations int      `dynamodbav:"migrations"` // counts typed steps run, to prove exactly once
}

func issueSteps(fail *atomic.Bool) []Step[mIssue] {
	return []Step[mIssue]{
		{ // 1 -> 2: priority from the labels, unless an Update already set one.
			Typed: func(v *mIssue) error {
				if fail != nil && fail.Load() {
					return errors.New("step refused")
				}
				if v.Priority == "" {
					v.Priority = "low"
					if slices.Contains(v.Labels, "critical") {
						v.Priority = "high"
					} else if len(v.Labels) > 0 {
						v.Priority = "medium"
					}
				}
				v.Migrations++
				return nil
			},
		},
		{ // 2 -> 3: "desc" becomes "body".
			Raw: func(item RawItem) error {
				if d, ok := item["desc"]; ok {
					if _, has := item["body"]; !has {
						item["body"] = d
					}
					delete(item, "desc")
				}
				return nil
			},
			Typed: func(v *mIssue) error { v.Migrations++; return nil },
		},
	}
}

// putV1 writes a version 1 issue as an old program would have.
func putV1(t testing.TB, tbl *Table, n int, labels ...string) {
	t.Helper()
	_, err := tbl.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: v1Item(n, labels...)})
	require.NoError(t, err)
}

func v1Item(n int, labels ...string) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"PK": sAV("REPO#aws#sdk"), "SK": sAV(fmt.Sprintf("ISSUE#%08d", n)), "Type": sAV("MIssue"),
		"owner": sAV("aws"), "repo": sAV("sdk"), "number": &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
		"title": sAV(fmt.Sprintf("issue %d", n)), "desc": sAV("text"), "migrations": &types.AttributeValueMemberN{Value: "0"},
	}
	if len(labels) > 0 {
		item["labels"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		for _, l := range labels {
			item["labels"].(*types.AttributeValueMemberL).Value = append(item["labels"].(*types.AttributeValueMemberL).Value, sAV(l))
		}
	}
	return item
}

func issueKey(n int) mIssue { return mIssue{Owner: "aws", Repo: "sdk", Number: n} }

func TestMigrateOnReadWriteBackModes(t *testing.T) {
	for _, mode := range []WriteBack{WriteBackSync, WriteBackAsync, WriteBackOff} {
		t.Run(map[WriteBack]string{WriteBackSync: "sync", WriteBackAsync: "async", WriteBackOff: "off"}[mode], func(t *testing.T) {
			tbl, _ := newTestTable(t)
			var reported []error
			var mu sync.Mutex
			issues, err := Register[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: mode, OnError: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			}}))
			require.NoError(t, err)
			t.Cleanup(tbl.Close)
			ctx := context.Background()
			putV1(t, tbl, 1, "bug", "critical")

			got, err := issues.Get(ctx, issueKey(1))
			require.NoError(t, err)
			assert.Equal(t, mIssue{Owner: "aws", Repo: "sdk", Number: 1, Title: "issue 1", Labels: []string{"bug", "critical"}, Priority: "high", Body: "text", Migrations: 2}, got,
				"a version 1 item is read at version 3")

			tbl.Close() // drains the async queue
			raw := rawItem(t, tbl, "REPO#aws#sdk", "ISSUE#00000001")
			if mode == WriteBackOff {
				assert.NotContains(t, raw, "_schema", "off: nothing written")
				assert.Contains(t, raw, "desc")
				return
			}
			assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, raw["_schema"])
			assert.Equal(t, sAV("PRIO#aws#sdk#high"), raw["GSI1PK"], "index keys recomputed from the migrated item")
			assert.NotContains(t, raw, "desc")
			assert.Equal(t, sAV("text"), raw["body"])
			page, err := issues.Query(ctx, mIssue{Owner: "aws", Repo: "sdk", Priority: "high"}, On("GSI1"))
			require.NoError(t, err)
			require.Len(t, page.Items, 1, "the migrated issue now appears in the new index")
			again, err := issues.Get(ctx, issueKey(1))
			require.NoError(t, err)
			assert.Equal(t, 2, again.Migrations, "read again: already current, not migrated twice")
			assert.Empty(t, reported)
		})
	}
}

func TestMigrateChainsAndEveryReadPath(t *testing.T) {
	tbl, _ := newTestTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: WriteBackOff}))
	ctx := context.Background()
	putV1(t, tbl, 1)
	// An item at version 2 only runs the second step.
	v2 := v1Item(2, "docs")
	v2["_schema"] = &types.AttributeValueMemberN{Value: "2"}
	v2["priority"] = sAV("medium")
	v2["migrations"] = &types.AttributeValueMemberN{Value: "1"}
	_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: v2})
	require.NoError(t, err)
	stored, err := issues.Put(ctx, mIssue{Owner: "aws", Repo: "sdk", Number: 3, Title: "new", Priority: "low", Migrations: 2})
	require.NoError(t, err)

	want := []mIssue{
		{Owner: "aws", Repo: "sdk", Number: 1, Title: "issue 1", Priority: "low", Body: "text", Migrations: 2},
		{Owner: "aws", Repo: "sdk", Number: 2, Title: "issue 2", Labels: []string{"docs"}, Priority: "medium", Body: "text", Migrations: 2},
		stored,
	}
	page, err := issues.Query(ctx, mIssue{Owner: "aws", Repo: "sdk"})
	require.NoError(t, err)
	assert.Equal(t, want, page.Items, "Query migrates")
	res, err := issues.BatchGet(ctx, []mIssue{issueKey(1), issueKey(2), issueKey(3)})
	require.NoError(t, err)
	assert.Equal(t, want, res.Items, "BatchGet migrates")
	type repoIssues struct {
		Issues []mIssue `singletable:"MIssue"`
	}
	coll, err := NewCollection[repoIssues](tbl)
	require.NoError(t, err)
	all, err := coll.Load(ctx, "REPO#aws#sdk")
	require.NoError(t, err)
	assert.Equal(t, want, all.Issues, "collections migrate")
	tp, err := tbl.Query(ctx, "REPO#aws#sdk")
	require.NoError(t, err)
	assert.Equal(t, want[0], tp.Items[0])
	raw := rawItem(t, tbl, "REPO#aws#sdk", "ISSUE#00000003")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, raw["_schema"], "whole-item writes store the current schema")
}

func TestMigrationStepFailureWritesNothing(t *testing.T) {
	tbl, _ := newTestTable(t)
	var fail atomic.Bool
	fail.Store(true)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(&fail)}))
	ctx := context.Background()
	putV1(t, tbl, 7)
	_, err := issues.Get(ctx, issueKey(7))
	var me *MigrationError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, "mIssue", me.Entity)
	assert.Equal(t, 1, me.From)
	assert.Equal(t, 2, me.To)
	assert.Equal(t, "ISSUE#00000007", me.Key["SK"])
	assert.Contains(t, err.Error(), "schema version 1 to 2")
	assert.NotContains(t, rawItem(t, tbl, "REPO#aws#sdk", "ISSUE#00000007"), "_schema", "nothing was written")

	// An item newer than the program's schema is refused, not mangled.
	newer := v1Item(8)
	newer["_schema"] = &types.AttributeValueMemberN{Value: "9"}
	_, err = tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: newer})
	require.NoError(t, err)
	_, err = issues.Get(ctx, issueKey(8))
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 9, me.From)
}

// TestMigratingReaderNeverLosesAWrite races a reader that migrates and writes back
// against a writer that updates the same old item, 100 times.
func TestMigratingReaderNeverLosesAWrite(t *testing.T) {
	tbl, _ := newTestTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil)}))
	ctx := context.Background()
	for i := range 100 {
		putV1(t, tbl, i)
		var wg sync.WaitGroup
		wg.Add(2)
		var readErr, writeErr error
		go func() {
			defer wg.Done()
			_, readErr = issues.Get(ctx, issueKey(i))
		}()
		go func() {
			defer wg.Done()
			_, writeErr = issues.Update(ctx, issueKey(i), Set("title", fmt.Sprintf("edited %d", i)))
		}()
		wg.Wait()
		require.NoError(t, readErr)
		require.NoError(t, writeErr)
		got, err := issues.Get(ctx, issueKey(i), Consistent())
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("edited %d", i), got.Title, "race %d: the writer's update survived the write-back", i)
	}
}

func TestSweepMigratesOnceAndResumes(t *testing.T) {
	t.Parallel() // owns its table, and is slow by its volume of writes: runs beside the other such tests
	tbl, _ := newTestTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: WriteBackOff}))
	ctx := context.Background()
	const n = 5000
	var reqs []types.WriteRequest
	for i := range n {
		labels := []string{}
		if i%3 == 0 {
			labels = []string{"critical"}
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: v1Item(i, labels...)}})
	}
	_, err := tbl.batchWrite(ctx, "seed", reqs)
	require.NoError(t, err)
	_, err = issues.Put(ctx, mIssue{Owner: "aws", Repo: "sdk", Number: n + 1, Title: "current", Migrations: 2})
	require.NoError(t, err)

	cps := &MemoryStore{}
	half, cancel := context.WithCancel(ctx)
	var progress []SweepStats
	first, err := issues.Sweep(half, Segments(4), PageSize(100), SweepProgressIn(cps), OnSweepProgress(func(s SweepStats) {
		progress = append(progress, s)
		if s.Migrated >= n/2 {
			cancel()
		}
	}))
	require.ErrorIs(t, err, context.Canceled)
	assert.GreaterOrEqual(t, first.Migrated, int64(n/2))
	assert.Less(t, first.Migrated, int64(n))
	second, err := issues.Sweep(ctx, Segments(4), PageSize(100), SweepProgressIn(cps))
	require.NoError(t, err)
	t.Logf("first sweep %+v (%.0f items/s), resumed %+v (%.0f items/s)", first, first.PerSecond(), second, second.PerSecond())
	assert.Equal(t, int64(n), first.Migrated+second.Migrated+first.Lost+second.Lost, "every old item once")
	assert.Zero(t, first.Failed+second.Failed)
	assert.NotEmpty(t, progress)

	// Every item is at version 3, migrated exactly once.
	count := 0
	for v, err := range issues.All(ctx, mIssue{Owner: "aws", Repo: "sdk"}, Consistent()) {
		require.NoError(t, err)
		require.Equal(t, 2, v.Migrations, "issue %d", v.Number)
		count++
	}
	assert.Equal(t, n+1, count)
	again, err := issues.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, again.Migrated, "a sweep of a migrated table changes nothing")
}

func TestSweepRateLimit(t *testing.T) {
	tbl, _ := newTestTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: WriteBackOff}))
	for i := range 40 {
		putV1(t, tbl, i)
	}
	start := time.Now()
	stats, err := issues.Sweep(context.Background(), SweepRate(200))
	require.NoError(t, err)
	assert.Equal(t, int64(40), stats.Migrated)
	assert.GreaterOrEqual(t, time.Since(start), 190*time.Millisecond, "40 items at 200/s take about 200 ms")
}

// TestSweepSplitFourWorkers splits a sweep of 2,000 old items in 40
// partitions over four workers, each taking two of eight segments, with their
// progress in DynamoDB (a TableStore in the same table). One worker is
// cancelled midway and started again: it resumes its segments from their last
// page. Every item is migrated exactly once, and the counts come per segment.
func TestSweepSplitFourWorkers(t *testing.T) {
	t.Parallel() // owns its table, and is slow by its volume of writes: runs beside the other such tests
	tbl, _ := newTestTable(t)
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), WriteBack: WriteBackOff}))
	store, err := NewTableStore(tbl)
	require.NoError(t, err)
	ctx := context.Background()
	const repos, perRepo = 40, 50
	var reqs []types.WriteRequest
	for r := range repos {
		for i := range perRepo {
			item := v1Item(i)
			repo := fmt.Sprintf("repo%02d", r)
			item["PK"], item["repo"] = sAV("REPO#aws#"+repo), sAV(repo)
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
	}
	_, err = tbl.batchWrite(ctx, "seed", reqs)
	require.NoError(t, err)

	const segments, workers = 8, 4
	opts := func(w int) []SweepOption {
		return []SweepOption{Segments(segments), SegmentRange(w*segments/workers, (w+1)*segments/workers), PageSize(25), SweepProgressIn(store)}
	}
	var wg sync.WaitGroup
	results := make([]SweepStats, workers)
	errs := make([]error, workers)
	half, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range workers {
		wg.Go(func() {
			o := opts(w)
			c := ctx
			if w == 2 {
				c = half
				o = append(o, OnSweepProgress(func(s SweepStats) {
					if s.Migrated >= 100 {
						cancel() // worker 2 stops midway
					}
				}))
			}
			results[w], errs[w] = issues.Sweep(c, o...)
		})
	}
	wg.Wait()
	for w, err := range errs {
		if w == 2 {
			require.ErrorIs(t, err, context.Canceled)
			continue
		}
		require.NoError(t, err, "worker %d", w)
	}
	stopped := results[2]
	require.Less(t, stopped.Migrated, int64(2*repos*perRepo/workers), "worker 2 stopped before the end")
	again, err := issues.Sweep(ctx, opts(2)...)
	require.NoError(t, err)

	var migrated, lost, failed int64
	perSegment := map[int]int64{}
	names := []string{"worker 0", "worker 1", "worker 2 (cancelled)", "worker 3", "worker 2 (restarted)"}
	for w, st := range append(results, again) {
		t.Logf("FIGURES %s: %d migrated in %s; per segment %+v", names[w], st.Migrated, st.Elapsed.Round(time.Millisecond), st.Segments)
		migrated, lost, failed = migrated+st.Migrated, lost+st.Lost, failed+st.Failed
		var sum int64
		for _, sg := range st.Segments {
			perSegment[sg.Segment] += sg.Migrated
			sum += sg.Migrated
		}
		assert.Equal(t, st.Migrated, sum, "the segments' counts add up")
		assert.Len(t, st.Segments, segments/workers)
	}
	assert.Equal(t, int64(repos*perRepo), migrated, "every item migrated once, over the five calls")
	assert.Zero(t, lost+failed)
	for _, sg := range again.Segments {
		assert.True(t, sg.Done)
	}
	assert.True(t, slices.ContainsFunc(again.Segments, func(s SegmentStats) bool { return s.Resumed }), "the restarted worker resumed from saved progress")
	var stored int64
	for seg := range segments {
		p, err := store.LoadSweep(ctx, "MIssue", seg, segments)
		require.NoError(t, err)
		assert.True(t, p.Done, "segment %d done", seg)
		assert.Equal(t, perSegment[seg], p.Migrated, "segment %d's stored count", seg)
		stored += p.Migrated
	}
	assert.Equal(t, int64(repos*perRepo), stored)
	count := 0
	for r := range repos {
		for v, err := range issues.All(ctx, mIssue{Owner: "aws", Repo: fmt.Sprintf("repo%02d", r)}, Consistent()) {
			require.NoError(t, err)
			require.Equal(t, 2, v.Migrations, "issue %s#%d migrated exactly once", v.Repo, v.Number)
			count++
		}
	}
	assert.Equal(t, repos*perRepo, count)
	// A sweep run again with the same store reads nothing: every segment is done.
	done, err := issues.Sweep(ctx, Segments(segments), SweepProgressIn(store))
	require.NoError(t, err)
	assert.Zero(t, done.Seen)
	_, err = issues.Sweep(ctx, Segments(4), SegmentRange(2, 6))
	assert.ErrorIs(t, err, ErrInvalidInput)
}
