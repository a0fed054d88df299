package fanout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/cursor"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// partitions holds k partitions' items, sorted by SK, served a page at a time.
type partitions struct {
	mu    sync.Mutex
	items [][]Item
	calls []int // the limit of each fetch
	fail  map[int]error
}

func newPartitions(k, n int) *partitions {
	p := &partitions{fail: map[int]error{}}
	for i := range k {
		var items []Item
		for j := range n {
			items = append(items, Item{"PK": s(fmt.Sprintf("P%d", i)), "SK": s(fmt.Sprintf("%03d-%d", j*k+i, i))})
		}
		p.items = append(p.items, items)
	}
	return p
}

func (p *partitions) fetch(_ context.Context, i int, start Item, limit int) (Page, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, limit)
	if err := p.fail[i]; err != nil {
		return Page{}, err
	}
	items := p.items[i]
	from := 0
	if start != nil {
		for from < len(items) && items[from]["SK"].(*types.AttributeValueMemberS).Value <= start["SK"].(*types.AttributeValueMemberS).Value {
			from++
		}
	}
	to := len(items)
	if limit > 0 {
		to = min(to, from+limit)
	}
	pg := Page{Items: items[from:to], Units: 0.5}
	if to < len(items) {
		pg.Last = Item{"PK": items[to-1]["PK"], "SK": items[to-1]["SK"]}
	}
	return pg, nil
}

func (p *partitions) query(limit int) *Query {
	q := &Query{PartitionKey: "PK", SortKey: "SK", KeyAttrs: []string{"PK", "SK"}, Limit: limit, Parallel: 4, Name: "Event", Fetch: p.fetch,
		Fail: func(parts []string, errs []error) error {
			return fmt.Errorf("%s: %w", strings.Join(parts, ","), errors.Join(errs...))
		}}
	for i := range p.items {
		q.Streams = append(q.Streams, &Stream{Partition: fmt.Sprintf("P%d", i)})
	}
	return q
}

func sk(_ context.Context, _ int, item Item) (string, bool, error) {
	return item["SK"].(*types.AttributeValueMemberS).Value, true, nil
}

func TestShare(t *testing.T) {
	assert.Equal(t, 0, Share(0, 8))
	assert.Equal(t, 21, Share(100, 8), "1.5·100/8 rounded up, and two more")
	assert.Equal(t, 10, Share(10, 1), "never more than the page")
}

// TestPagesMergeInOrder pages through 4 partitions with a cursor after every
// page: every item once, in sort key order.
func TestPagesMergeInOrder(t *testing.T) {
	p := newPartitions(4, 25)
	var got []string
	c := ""
	kt := keyTypes{}
	for range 100 {
		q := p.query(7)
		if c != "" {
			require.NoError(t, q.Open(nil, kt, cursor.ID{}, c, errInvalid))
		}
		res, err := Next(context.Background(), q, sk)
		require.NoError(t, err)
		got = append(got, res.Items...)
		if !res.More {
			break
		}
		c, err = q.Seal(nil, kt, cursor.ID{})
		require.NoError(t, err)
	}
	require.Len(t, got, 100)
	for i := 1; i < len(got); i++ {
		assert.Less(t, got[i-1], got[i])
	}
}

// TestFirstRoundAsksShares: the first round asks each partition for its share,
// not the whole page.
func TestFirstRoundAsksShares(t *testing.T) {
	p := newPartitions(8, 50)
	res, err := Next(context.Background(), p.query(40), sk)
	require.NoError(t, err)
	assert.Len(t, res.Items, 40)
	assert.Equal(t, 4.0, res.Capacity, "the units of 8 fetches")
	assert.Equal(t, Share(40, 8), p.calls[0])
	assert.Len(t, p.calls, 8, "evenly spread: one request a partition")
}

func TestFailures(t *testing.T) {
	p := newPartitions(3, 5)
	boom := errors.New("boom")
	p.fail[1] = boom
	_, err := Next(context.Background(), p.query(10), sk)
	require.ErrorIs(t, err, boom)
	assert.True(t, strings.HasPrefix(err.Error(), "P1: "), err.Error())
	assert.Contains(t, err.Error(), "singletable: QueryShards Event on P1: boom")

	q := p.query(10)
	q.Partial = true
	res, err := Next(context.Background(), q, sk)
	require.NoError(t, err, "the failure is the caller's to report")
	assert.Len(t, res.Items, 10)
	require.ErrorIs(t, q.Failure(), boom)
	c, err := q.Seal(nil, keyTypes{}, cursor.ID{})
	require.NoError(t, err)
	// Resumed, the failed partition is read from its start, exempt from the boundary.
	delete(p.fail, 1)
	q = p.query(0)
	require.NoError(t, q.Open(nil, keyTypes{}, cursor.ID{}, c, errInvalid))
	res, err = Next(context.Background(), q, sk)
	require.NoError(t, err)
	assert.Len(t, res.Items, 5)
	assert.False(t, res.More)
}

func TestNoProgress(t *testing.T) {
	q := &Query{PartitionKey: "PK", SortKey: "SK", Parallel: 1, Name: "Event", Streams: []*Stream{{Partition: "P0"}},
		Fail: func(_ []string, errs []error) error { return errors.Join(errs...) }}
	stuck := Item{"PK": s("P0"), "SK": s("x")}
	q.Streams[0].Start = stuck
	q.Fetch = func(context.Context, int, Item, int) (Page, error) {
		return Page{Last: Item{"PK": s("P0"), "SK": s("x")}}, nil
	}
	_, err := Next(context.Background(), q, sk)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "3 pages in a row ended where they started: no progress")
}

func TestCursorRefused(t *testing.T) {
	p := newPartitions(2, 5)
	q := p.query(3)
	_, err := Next(context.Background(), q, sk)
	require.NoError(t, err)
	c, err := q.Seal(nil, keyTypes{}, cursor.ID{1})
	require.NoError(t, err)
	assert.ErrorIs(t, p.query(3).Open(nil, keyTypes{}, cursor.ID{2}, c, errInvalid), errInvalid, "another query's")
	one := newPartitions(1, 5).query(3)
	assert.ErrorIs(t, one.Open(nil, keyTypes{}, cursor.ID{1}, c, errInvalid), errInvalid, "another number of partitions")
	swapped := p.query(3)
	swapped.Streams[0].Partition, swapped.Streams[1].Partition = "P1", "P0"
	err = swapped.Open(nil, keyTypes{}, cursor.ID{1}, c, errInvalid)
	assert.ErrorIs(t, err, errInvalid)
	assert.Contains(t, err.Error(), "another partition")
}

func TestAll(t *testing.T) {
	pages := [][]int{{1, 2}, {3}, {4, 5}}
	var got []int
	n := 0
	All(func() ([]int, bool, error) { n++; return pages[n-1], n < len(pages), nil }, func(v int, err error) bool {
		require.NoError(t, err)
		got = append(got, v)
		return true
	})
	assert.Equal(t, []int{1, 2, 3, 4, 5}, got)

	boom := errors.New("boom")
	var errs []error
	got = nil
	All(func() ([]int, bool, error) { return []int{7}, true, boom }, func(v int, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			got = append(got, v)
		}
		return true
	})
	assert.Equal(t, []int{7}, got, "the items of a failed page come first")
	assert.Equal(t, []error{boom}, errs)
}

var errInvalid = errors.New("invalid cursor")

// keyTypes keys by strings.
type keyTypes struct{}

func (keyTypes) KeyText(key Item, a string) (string, bool) {
	v, ok := key[a].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return v.Value, true
}
func (keyTypes) KeyValue(_, text string) (types.AttributeValue, bool) { return s(text), true }
func (keyTypes) KeyTypeName(string) string                            { return "string" }
