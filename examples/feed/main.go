// Command feed is a newest-first feed keyed by reverse time: each post is copied
// into the feed of its author and of every follower (fan-out on write, with
// BatchPut), and a feed is read page by page with a cursor, newest first, with
// neither gaps nor duplicates, even while new posts arrive. The key map is in
// feed.go.
//
// Run it with
//
//	go run ./examples/feed
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own and deletes it when done.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/singletable/singletable"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "feed:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("feed", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// t0 is the time of the first sample post; the sample data is fixed so that the
// output is the same on every run.
var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// fans is how many followers ada has besides bo and cy: enough that one of her
// posts fills more than one BatchWriteItem request (25 items).
const fans = 30

// sampleFollows: bo, cy and 30 fans follow ada; cy follows bo; bo follows dee.
// Nobody follows cy.
func sampleFollows() []Follow {
	f := []Follow{
		{UserID: "ada", FollowerID: "bo"},
		{UserID: "ada", FollowerID: "cy"},
		{UserID: "bo", FollowerID: "cy"},
		{UserID: "dee", FollowerID: "bo"},
	}
	for i := 1; i <= fans; i++ {
		f = append(f, Follow{UserID: "ada", FollowerID: fmt.Sprintf("fan%02d", i)})
	}
	return f
}

// samplePosts are twelve posts, seven minutes apart, except p07 and p08, which
// are posted in the same instant (and p09 fourteen minutes after them).
func samplePosts() []Post {
	texts := []struct{ author, text string }{
		{"ada", "good morning"}, {"bo", "coffee first"}, {"dee", "rain again"}, {"cy", "new bike!"},
		{"ada", "reading about DynamoDB"}, {"bo", "standup in 5"}, {"ada", "single-table design, day 1"},
		{"cy", "posted at the same instant as p07"}, {"dee", "umbrella found"}, {"bo", "lunch, anyone?"},
		{"ada", "reverse time sorts newest first"}, {"cy", "off to the mountains"},
	}
	posts := make([]Post, len(texts))
	for i, t := range texts {
		at := t0.Add(time.Duration(i) * 7 * time.Minute)
		if i == 7 {
			at = posts[6].PostedAt
		}
		posts[i] = Post{ID: fmt.Sprintf("p%02d", i+1), AuthorID: t.author, PostedAt: at, Text: t.text}
	}
	return posts
}

// latePost is published while a reader is paging through a feed.
func latePost() Post {
	return Post{ID: "p13", AuthorID: "bo", PostedAt: t0.Add(13 * 7 * time.Minute), Text: "who took my stapler"}
}

// expectedFeed works out, without the database, the post ids a user's feed must
// hold: the user's own posts and those of the users they follow, newest first,
// ties by post id.
func expectedFeed(user string, follows []Follow, posts []Post) []string {
	authors := map[string]bool{user: true}
	for _, f := range follows {
		if f.FollowerID == user {
			authors[f.UserID] = true
		}
	}
	var mine []Post
	for _, p := range posts {
		if authors[p.AuthorID] {
			mine = append(mine, p)
		}
	}
	slices.SortFunc(mine, func(a, b Post) int {
		return cmp.Or(b.PostedAt.Compare(a.PostedAt), cmp.Compare(a.ID, b.ID))
	})
	ids := make([]string, len(mine))
	for i, p := range mine {
		ids[i] = p.ID
	}
	return ids
}

// checkFeed reports how entries differ from the post ids wanted, or an entry
// older than the one after it.
func checkFeed(entries []FeedEntry, want []string) error {
	got := postIDs(entries)
	if !slices.Equal(got, want) {
		return fmt.Errorf("feed holds %v, want %v", got, want)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].PostedAt.After(entries[i-1].PostedAt) {
			return fmt.Errorf("feed entry %s is newer than %s before it", entries[i].PostID, entries[i-1].PostID)
		}
	}
	return nil
}

// run creates a table named tableName, fans out the sample posts, reads a feed
// page by page, printing each step to out, and deletes the table. It fails if a
// step goes wrong or a feed is not exactly what it must be.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	s, err := NewStore(client, tableName)
	if err != nil {
		return err
	}
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, s.Table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s (PK/SK, no index: every read here is one partition)", tableName)

	// 1. Follows.
	follows := sampleFollows()
	if _, err := s.Follows.BatchPut(ctx, follows); err != nil {
		return err
	}
	p("\n1. Follow graph (%d Follow rows in one BatchPut): bo, cy and %d fans follow ada; cy follows bo; bo follows dee", len(follows), fans)

	// 2. Fan-out.
	p("\n2. Publish: each post goes to its author's feed and every follower's (BatchPut: 25 per BatchWriteItem request)")
	posts := samplePosts()
	for _, post := range posts {
		n, err := s.Publish(ctx, post)
		if err != nil {
			return err
		}
		p("   %s %s %-4s %-36q -> %s", post.ID, post.PostedAt.Format("15:04"), post.AuthorID, post.Text, feeds(n))
	}

	// 3. What the keys look like.
	sk, err := singletable.ParseTemplate("{postedAt:rev}#{postId}", singletable.DefaultDelimiter)
	if err != nil {
		return err
	}
	p("\n3. Sort keys in FEED#cy: {postedAt:rev}#{postId}, newer posts get smaller keys")
	for _, post := range []Post{posts[11], posts[7], posts[6], posts[0]} {
		key, err := sk.Render(map[string]any{"postedAt": post.PostedAt, "postId": post.ID})
		if err != nil {
			return err
		}
		p("   %s %s  SK = %s", post.ID, post.PostedAt.Format("15:04"), key)
	}

	// 4. Page through cy's feed while bo posts.
	const limit = 4
	want := expectedFeed("cy", follows, posts)
	p("\n4. cy's feed, %d per page: an ascending Query on FEED#cy, so newest first", limit)
	var read []FeedEntry
	cursor := ""
	for page := 1; ; page++ {
		pg, err := s.ReadFeed(ctx, "cy", limit, cursor)
		if err != nil {
			return err
		}
		if len(pg.Items) > limit {
			return fmt.Errorf("page %d holds %d entries, over the limit of %d", page, len(pg.Items), limit)
		}
		p("   page %d:", page)
		for _, e := range pg.Items {
			p("     %s %s %-4s %q", e.PostID, e.PostedAt.Format("15:04"), e.AuthorID, e.Text)
		}
		read = append(read, pg.Items...)
		if page == 1 {
			late := latePost()
			n, err := s.Publish(ctx, late)
			if err != nil {
				return err
			}
			p("   (meanwhile %s publishes %s at %s -> %s, cy's among them)", late.AuthorID, late.ID, late.PostedAt.Format("15:04"), feeds(n))
		}
		if pg.Cursor == "" {
			break
		}
		cursor = pg.Cursor
	}
	if err := checkFeed(read, want); err != nil {
		return err
	}
	p("   checked: %d entries, newest first, each post once, none missing; p13, newer than the cursor, did not shift the pages", len(read))

	// 5. The next reader sees the new post on top.
	first, err := s.ReadFeed(ctx, "cy", limit, "")
	if err != nil {
		return err
	}
	allPosts := append(slices.Clone(posts), latePost())
	wantFirst := expectedFeed("cy", follows, allPosts)[:limit]
	if err := checkFeed(first.Items, wantFirst); err != nil {
		return err
	}
	p("\n5. cy reloads: page 1 is now %s", strings.Join(postIDs(first.Items), " "))

	// 6. Every feed holds exactly what it must.
	p("\n6. Every feed, checked against the follow graph:")
	users := []string{"ada", "bo", "cy", "dee", "fan01", fmt.Sprintf("fan%02d", fans)}
	for _, u := range users {
		var all []FeedEntry
		for e, err := range s.Feed.All(ctx, FeedEntry{UserID: u}, singletable.Limit(limit)) {
			if err != nil {
				return err
			}
			all = append(all, e)
		}
		if err := checkFeed(all, expectedFeed(u, follows, allPosts)); err != nil {
			return fmt.Errorf("%s's feed: %w", u, err)
		}
		p("   %-5s %2d entries: %s", u, len(all), strings.Join(postIDs(all), " "))
	}
	return nil
}

func postIDs(entries []FeedEntry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.PostID
	}
	return ids
}

func feeds(n int) string {
	if n == 1 {
		return "1 feed"
	}
	return fmt.Sprintf("%d feeds", n)
}
