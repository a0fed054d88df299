package sweep

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/sweepstore"
)

// table serves segments of n items each, pages of the input's Limit.
type table struct {
	n     int
	mu    sync.Mutex
	scans []*dynamodb.ScanInput
}

func (t *table) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	t.mu.Lock()
	t.scans = append(t.scans, in)
	t.mu.Unlock()
	seg := int(*in.Segment)
	from := 0
	if k := in.ExclusiveStartKey; k != nil {
		from, _ = strconv.Atoi(k["SK"].(*types.AttributeValueMemberS).Value)
		from++
	}
	to := min(t.n, from+int(*in.Limit))
	out := &dynamodb.ScanOutput{ScannedCount: int32(to - from)}
	for i := from; i < to; i++ {
		out.Items = append(out.Items, map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: strconv.Itoa(seg)}, "SK": &types.AttributeValueMemberS{Value: strconv.Itoa(i)}, "x": &types.AttributeValueMemberS{}})
	}
	if to < t.n {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"PK": out.Items[len(out.Items)-1]["PK"], "SK": out.Items[len(out.Items)-1]["SK"]}
	}
	return out, nil
}

func config(tb *table, store *sweepstore.Memory, item func(Item) Result) Config {
	var c Config
	c.Total, c.Scan = 4, Scan{Client: tb, Table: "t", TypeAttribute: "type", Type: "Order", SchemaAttribute: "v", Current: 3, PageSize: 10}
	c.Load = func(_ context.Context, seg int) (sweepstore.Progress, error) {
		return store.Load("Order", seg, c.Total), nil
	}
	c.Save = func(_ context.Context, p sweepstore.Progress) error { return store.Save(p, errors.New("condition")) }
	c.Item = func(_ context.Context, it Item) Result { return item(it) }
	c.Encode = func(key Item) (string, error) {
		return key["PK"].(*types.AttributeValueMemberS).Value + "/" + key["SK"].(*types.AttributeValueMemberS).Value, nil
	}
	c.Decode = func(cur string) (Item, error) {
		var pk, sk int
		if _, err := fmt.Sscanf(cur, "%d/%d", &pk, &sk); err != nil {
			return nil, err
		}
		return Item{"PK": &types.AttributeValueMemberS{Value: strconv.Itoa(pk)}, "SK": &types.AttributeValueMemberS{Value: strconv.Itoa(sk)}}, nil
	}
	c.KeyOf = func(it Item) Item { return Item{"PK": it["PK"], "SK": it["SK"]} }
	c.From, c.To = 0, c.Total
	return c
}

func TestOptions(t *testing.T) {
	invalid := errors.New("invalid")
	var c Config
	assert.EqualError(t, c.SetRange(2, 2, invalid), "SegmentRange(2, 2): want 0 <= from < to: invalid")
	assert.EqualError(t, c.SetRate(0, invalid), "SweepRate(0): want a positive rate: invalid")
	assert.EqualError(t, c.SetPageSize(10001, invalid), "PageSize(10001): want 1 to 10,000: invalid")
	c.Total = 4
	require.NoError(t, c.CheckRange(invalid))
	assert.Equal(t, [2]int{0, 4}, [2]int{c.From, c.To}, "every segment by default")
	require.NoError(t, c.SetRange(2, 6, invalid))
	assert.EqualError(t, c.CheckRange(invalid), "SegmentRange(2, 6) is outside Segments(4): invalid")
}

// TestRunCountsAndResumes sweeps 4 segments of 25 items, stops one midway, and
// resumes it from its saved progress.
func TestRunCountsAndResumes(t *testing.T) {
	tb := &table{n: 25}
	store := &sweepstore.Memory{}
	var mu sync.Mutex
	seen := map[string]int{}
	item := func(it Item) Result {
		mu.Lock()
		defer mu.Unlock()
		k := it["PK"].(*types.AttributeValueMemberS).Value + "/" + it["SK"].(*types.AttributeValueMemberS).Value
		seen[k]++
		switch n, _ := strconv.Atoi(it["SK"].(*types.AttributeValueMemberS).Value); {
		case n%5 == 1:
			return Lost
		case n%5 == 2:
			return Failed
		case n%5 == 3:
			return Current
		}
		return Migrated
	}
	c := config(tb, store, item)
	var calls int
	c.Progress = func(Stats) { calls++ }
	st, err := Run(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, int64(100), st.Seen)
	assert.Equal(t, int64(40), st.Migrated)
	assert.Equal(t, int64(20), st.Lost)
	assert.Equal(t, int64(20), st.Failed)
	assert.Equal(t, 12, calls, "three pages a segment")
	require.Len(t, st.Segments, 4)
	for i, sg := range st.Segments {
		assert.Equal(t, SegmentStats{Segment: i, Seen: 25, Migrated: 10, Lost: 5, Failed: 5, Done: true}, sg)
	}
	assert.Len(t, seen, 100)
	in := tb.scans[0]
	assert.Equal(t, "#n0 = :v0 AND (attribute_not_exists(#n1) OR #n1 < :v1)", aws.ToString(in.FilterExpression))
	assert.Equal(t, int32(4), *in.TotalSegments)

	// Run again: every segment is done, nothing is scanned.
	tb.scans = nil
	st, err = Run(context.Background(), c)
	require.NoError(t, err)
	assert.Empty(t, tb.scans)
	assert.True(t, st.Segments[0].Done && st.Segments[0].Resumed)

	// A segment stopped midway saves its progress up to the last item done.
	store2 := &sweepstore.Memory{}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	c = config(tb, store2, func(Item) Result {
		if n++; n == 13 {
			cancel()
		}
		return Migrated
	})
	c.From, c.To, c.Rate = 0, 1, 1e9
	st, err = Run(ctx, c)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "segment 0: ")
	assert.Equal(t, int64(13), st.Seen)
	assert.Equal(t, int64(13), st.Migrated)
	p := store2.Load("Order", 0, 4)
	assert.Equal(t, sweepstore.Progress{Entity: "Order", Segment: 0, Total: 4, Cursor: "0/12", Pages: 2, Seen: 13, Migrated: 13}, p)
	st, err = Run(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, int64(12), st.Seen, "resumed after the 13th item")
	assert.True(t, st.Segments[0].Resumed)
}

func TestRate(t *testing.T) {
	tb := &table{n: 5}
	c := config(tb, &sweepstore.Memory{}, func(Item) Result { return Migrated })
	c.Total, c.To, c.Rate = 1, 1, 50
	var slept time.Duration
	c.Sleep = func(_ context.Context, d time.Duration) error { slept += max(d, 0); return nil }
	_, err := Run(context.Background(), c)
	require.NoError(t, err)
	assert.Greater(t, slept, 40*time.Millisecond, "5 items at 50 a second take 80 ms")
}
