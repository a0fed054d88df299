package main

import (
	"context"
	"time"

	"github.com/singletable/singletable"
)

// Key map (reference 004: partition by user, range key "ticks to judgement day"):
//
//	entity     PK              SK
//	Follow     USER#{userId}   FOLLOWER#{followerId}
//	FeedEntry  FEED#{userId}   {postedAt:rev}#{postId}
//
// {postedAt:rev} is 3155378975999999999 (.NET's DateTime.MaxValue in 100 ns ticks)
// minus the post's ticks, zero-padded to 19 digits: the newer the post, the
// smaller the key, so a plain ascending Query reads a feed newest first. The post
// id after it keeps two posts of the same instant apart, so a post is never lost
// to another with the same time (the reference relies on ticks alone being
// unique); among them, the lower id comes first.

// Follow records that FollowerID follows UserID. A user's followers are one
// partition, read when a post is fanned out.
type Follow struct {
	_          struct{} `Type:"Follow" PK:"USER#{userId}" SK:"FOLLOWER#{followerId}"`
	UserID     string   `dynamodbav:"userId"`
	FollowerID string   `dynamodbav:"followerId"`
}

// FeedEntry is one post in one user's feed: a copy per reader (fan-out on write),
// so reading a feed is one Query on one partition.
type FeedEntry struct {
	_        struct{}  `Type:"FeedEntry" PK:"FEED#{userId}" SK:"{postedAt:rev}#{postId}"`
	UserID   string    `dynamodbav:"userId"` // whose feed
	PostID   string    `dynamodbav:"postId"`
	AuthorID string    `dynamodbav:"authorId"`
	PostedAt time.Time `dynamodbav:"postedAt"`
	Text     string    `dynamodbav:"text"`
}

// Post is what an author publishes.
type Post struct {
	ID       string
	AuthorID string
	PostedAt time.Time
	Text     string
}

// Store is the feed model on one table. It is safe for concurrent use.
type Store struct {
	Table   *singletable.Table
	Follows *singletable.Entity[Follow]
	Feed    *singletable.Entity[FeedEntry]
}

// NewStore describes the table (base keys only) and registers the entities. It
// sends nothing; call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string) (*Store, error) {
	table, err := singletable.NewTable(client, tableName)
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table}
	if s.Follows, err = singletable.Register[Follow](table); err != nil {
		return nil, err
	}
	if s.Feed, err = singletable.Register[FeedEntry](table); err != nil {
		return nil, err
	}
	return s, nil
}

// Follow makes follower follow user (PutItem; following twice is harmless).
func (s *Store) Follow(ctx context.Context, user, follower string) error {
	_, err := s.Follows.Put(ctx, Follow{UserID: user, FollowerID: follower})
	return err
}

// Followers lists a user's followers (Query on USER#{userId}, every page).
func (s *Store) Followers(ctx context.Context, user string) ([]string, error) {
	var out []string
	for f, err := range s.Follows.All(ctx, Follow{UserID: user}) {
		if err != nil {
			return nil, err
		}
		out = append(out, f.FollowerID)
	}
	return out, nil
}

// Publish writes a post into its author's own feed and into the feed of each of
// the author's followers (fan-out on write): one Query for the followers, then
// BatchPut, which sends 25 entries per BatchWriteItem request and retries the
// ones DynamoDB leaves unprocessed. It returns the number of feeds written.
// Publishing the same post again rewrites the same entries: no duplicates.
func (s *Store) Publish(ctx context.Context, p Post) (int, error) {
	followers, err := s.Followers(ctx, p.AuthorID)
	if err != nil {
		return 0, err
	}
	readers := []string{p.AuthorID}
	for _, f := range followers {
		if f != p.AuthorID { // BatchPut refuses two entries with one key
			readers = append(readers, f)
		}
	}
	entries := make([]FeedEntry, len(readers))
	for i, r := range readers {
		entries[i] = FeedEntry{UserID: r, PostID: p.ID, AuthorID: p.AuthorID, PostedAt: p.PostedAt, Text: p.Text}
	}
	left, err := s.Feed.BatchPut(ctx, entries)
	return len(entries) - len(left), err
}

// ReadFeed reads one page of a user's feed, newest first: Query FEED#{userId}
// with at most limit entries. Pass "" as cursor for the first page, then the
// page's Cursor until it is "". The cursor marks the last entry read, not an
// offset, so posts published meanwhile (which sort before it) neither repeat nor
// skip an entry on the following pages.
func (s *Store) ReadFeed(ctx context.Context, user string, limit int, cursor string) (singletable.Page[FeedEntry], error) {
	return s.Feed.Query(ctx, FeedEntry{UserID: user}, singletable.Limit(limit), singletable.After(cursor))
}
