package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
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

// countingClient counts the BatchWriteItem calls on the way to DynamoDB Local.
type countingClient struct {
	singletable.Client
	batchWrites atomic.Int64
}

func (c *countingClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.batchWrites.Add(1)
	return c.Client.BatchWriteItem(ctx, in, opts...)
}

// newStore creates an empty table of the feed model with the sample follow
// graph, deleted when the test ends.
func newStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	client := &countingClient{Client: local.Client(t)}
	s, err := NewStore(client, exampleenv.TableName(t))
	require.NoError(t, err)
	require.NoError(t, s.Table.CreateTable(t.Context()))
	exampleenv.DeleteAtCleanup(t, s.Table)
	left, err := s.Follows.BatchPut(t.Context(), sampleFollows())
	require.NoError(t, err)
	require.Empty(t, left)
	return s, client
}

// seededStore is newStore with the twelve sample posts published.
func seededStore(t *testing.T) (*Store, *countingClient) {
	t.Helper()
	s, c := newStore(t)
	for _, p := range samplePosts() {
		_, err := s.Publish(t.Context(), p)
		require.NoError(t, err)
	}
	return s, c
}

// readAll reads a user's feed page by page and returns the post ids of each page.
func readAll(t *testing.T, s *Store, user string, limit int) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for {
		pg, err := s.ReadFeed(t.Context(), user, limit, cursor)
		require.NoError(t, err)
		pages = append(pages, postIDs(pg.Items))
		if pg.Cursor == "" {
			return pages
		}
		cursor = pg.Cursor
	}
}

// chunk splits ids into pages of limit. DynamoDB stops a page when it reaches
// the limit and hands out a cursor even if nothing follows, so when the last
// page is full an empty page follows it.
func chunk(ids []string, limit int) [][]string {
	var pages [][]string
	for len(ids) >= limit {
		pages = append(pages, ids[:limit])
		ids = ids[limit:]
	}
	return append(pages, append([]string{}, ids...))
}

func fanIDs() []string {
	var out []string
	for i := 1; i <= fans; i++ {
		out = append(out, fmt.Sprintf("fan%02d", i))
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
		"1. Follow graph (34 Follow rows",
		"2. Publish", `p01 09:00 ada  "good morning"`, "-> 33 feeds", "-> 1 feed\n",
		"3. Sort keys in FEED#cy", "SK = 2516877421799999999#p12",
		"4. cy's feed, 4 per page", "page 1:", "page 3:", "(meanwhile bo publishes p13",
		"checked: 10 entries, newest first, each post once, none missing",
		"5. cy reloads: page 1 is now p13 p12 p11 p10",
		"6. Every feed", "cy    11 entries: p13 p12 p11 p10 p07 p08 p06 p05 p04 p02 p01",
		"deleted table " + table,
	} {
		assert.Contains(t, got, want)
	}
	_, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &notFound, "run deletes its table")
}

func TestFollowers(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	tests := []struct {
		user string
		want []string
	}{
		{"ada", append([]string{"bo", "cy"}, fanIDs()...)},
		{"bo", []string{"cy"}},
		{"dee", []string{"bo"}},
		{"cy", nil},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			got, err := s.Followers(t.Context(), tt.user)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPublishFansOut(t *testing.T) {
	t.Parallel()
	everyone := append([]string{"ada", "bo", "cy", "dee"}, fanIDs()...)
	tests := []struct {
		author   string
		readers  []string
		requests int64 // BatchWriteItem calls: 25 entries each
	}{
		{"ada", append([]string{"ada", "bo", "cy"}, fanIDs()...), 2},
		{"bo", []string{"bo", "cy"}, 1},
		{"dee", []string{"dee", "bo"}, 1},
		{"cy", []string{"cy"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.author, func(t *testing.T) {
			t.Parallel()
			s, client := newStore(t)
			ctx := t.Context()
			post := Post{ID: "p1", AuthorID: tt.author, PostedAt: t0, Text: "hello"}

			before := client.batchWrites.Load()
			n, err := s.Publish(ctx, post)
			require.NoError(t, err)
			assert.Equal(t, len(tt.readers), n)
			assert.Equal(t, tt.requests, client.batchWrites.Load()-before)

			for _, u := range everyone {
				got, err := s.Feed.Get(ctx, FeedEntry{UserID: u, PostID: "p1", PostedAt: t0})
				if slices.Contains(tt.readers, u) {
					require.NoError(t, err, u)
					assert.Equal(t, FeedEntry{UserID: u, PostID: "p1", AuthorID: tt.author, PostedAt: t0, Text: "hello"}, got)
				} else {
					assert.ErrorIs(t, err, singletable.ErrNotFound, "%s does not follow %s", u, tt.author)
				}
			}

			// Publishing again (a retried fan-out) rewrites the same entries.
			_, err = s.Publish(ctx, post)
			require.NoError(t, err)
			for _, u := range tt.readers {
				assert.Equal(t, [][]string{{"p1"}}, readAll(t, s, u, 10), u)
			}
		})
	}
}

func TestFeedPagesNewestFirst(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	posts := samplePosts()
	follows := sampleFollows()
	for _, user := range []string{"cy", "bo", "ada", "dee", "fan07", "nobody"} {
		want := expectedFeed(user, follows, posts)
		for _, limit := range []int{1, 3, 4, 5, 10, 20} {
			t.Run(fmt.Sprintf("%s by %d", user, limit), func(t *testing.T) {
				assert.Equal(t, chunk(want, limit), readAll(t, s, user, limit))
			})
		}
	}
	// The expected feeds, spelled out for the readers that matter.
	assert.Equal(t, []string{"p12", "p11", "p10", "p07", "p08", "p06", "p05", "p04", "p02", "p01"}, expectedFeed("cy", follows, posts))
	assert.Equal(t, []string{"p11", "p10", "p09", "p07", "p06", "p05", "p03", "p02", "p01"}, expectedFeed("bo", follows, posts))
	assert.Equal(t, []string{"p11", "p07", "p05", "p01"}, expectedFeed("fan07", follows, posts))
}

func TestSameInstantPostsAreBothKept(t *testing.T) {
	t.Parallel()
	s, _ := seededStore(t)
	posts := samplePosts()
	require.True(t, posts[6].PostedAt.Equal(posts[7].PostedAt))

	pg, err := s.ReadFeed(t.Context(), "cy", 20, "")
	require.NoError(t, err)
	i := slices.IndexFunc(pg.Items, func(e FeedEntry) bool { return e.PostID == "p07" })
	require.GreaterOrEqual(t, i, 0)
	require.Less(t, i+1, len(pg.Items))
	assert.Equal(t, "p08", pg.Items[i+1].PostID, "the post id orders posts of one instant")
	assert.Equal(t, pg.Items[i].PostedAt, pg.Items[i+1].PostedAt)
}

func TestPostsPublishedWhilePaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		late Post
		// want is what the reader sees across the pages of one pass.
		want []string
	}{
		{
			// Newer than the cursor: it sorts before page 1, so this pass
			// neither shows it nor repeats an entry because of it.
			name: "newer post",
			late: latePost(),
			want: []string{"p12", "p11", "p10", "p07", "p08", "p06", "p05", "p04", "p02", "p01"},
		},
		{
			// A fan-out that arrives late for an old post lands in its place in
			// time, after the cursor, so this pass shows it there.
			name: "older post delivered late",
			late: Post{ID: "p00", AuthorID: "ada", PostedAt: t0.Add(-time.Minute), Text: "delayed"},
			want: []string{"p12", "p11", "p10", "p07", "p08", "p06", "p05", "p04", "p02", "p01", "p00"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := seededStore(t)
			ctx := t.Context()
			first, err := s.ReadFeed(ctx, "cy", 4, "")
			require.NoError(t, err)
			require.Equal(t, []string{"p12", "p11", "p10", "p07"}, postIDs(first.Items))

			_, err = s.Publish(ctx, tt.late)
			require.NoError(t, err)

			seen := postIDs(first.Items)
			for cursor := first.Cursor; cursor != ""; {
				pg, err := s.ReadFeed(ctx, "cy", 4, cursor)
				require.NoError(t, err)
				seen = append(seen, postIDs(pg.Items)...)
				cursor = pg.Cursor
			}
			assert.Equal(t, tt.want, seen, "no duplicates, no gaps")

			all := expectedFeed("cy", sampleFollows(), append(samplePosts(), tt.late))
			assert.Equal(t, chunk(all, 4), readAll(t, s, "cy", 4), "a fresh pass sees every post")
		})
	}
}
