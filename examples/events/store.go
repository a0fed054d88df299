package main

import (
	"context"
	"time"

	"github.com/singletable/singletable"
)

// One method per access pattern. Reads are eventually consistent: 0.5 RCU per
// 4 KB read. A read of a day asks all of its Shards partitions, concurrently,
// and merges them by sort key; its cursor records where each partition stopped.

// Record writes one event to a random shard of its day (PutItem: 1 WCU per
// 1 KB) and returns it as stored, with Day and Shard set. e is not modified.
func (s *Store) Record(ctx context.Context, e Event) (Event, error) {
	e.Day = dayOf(e.At)
	return s.Events.Put(ctx, e)
}

// RecordAll writes many events, each to a random shard of its day
// (BatchWriteItem, 25 a request, unprocessed ones resent). It returns the
// events not written, with an error. It cannot return the shards it drew:
// read the events back to learn them. events is not modified.
func (s *Store) RecordAll(ctx context.Context, events []Event) ([]Event, error) {
	return s.Events.BatchPut(ctx, withDays(events))
}

// RecordAllHashed writes the events as HashedEvents, each to the shard its id
// hashes to (BatchWriteItem, 25 a request). It returns the events not written,
// with an error. events is not modified.
func (s *Store) RecordAllHashed(ctx context.Context, events []Event) ([]HashedEvent, error) {
	hashed := make([]HashedEvent, len(events))
	for i, e := range withDays(events) {
		hashed[i] = e.Hashed()
	}
	return s.Hashed.BatchPut(ctx, hashed)
}

// withDays returns a copy of events with each Day set from At.
func withDays(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e.Day = dayOf(e.At)
		out[i] = e
	}
	return out
}

// Latest reads one page of a day's events, newest first: a Query on each of
// the day's partitions (Descending, Limit limit), merged, at most limit events
// in all. Pass "" as cursor for the first page, then the page's Cursor until it
// is "". Each page reads up to limit items in every partition to return limit,
// from where each partition stopped.
func (s *Store) Latest(ctx context.Context, day time.Time, limit int, cursor string) (singletable.Page[Event], error) {
	return s.Events.QueryShards(ctx, Event{Day: dayOf(day)},
		singletable.Descending(), singletable.Limit(limit), singletable.After(cursor))
}

// Range reads one page of the events of every day from the day of from to the
// day of to, newest first: Latest over Shards partitions a day, all merged.
func (s *Store) Range(ctx context.Context, from, to time.Time, limit int, cursor string) (singletable.Page[Event], error) {
	return s.Events.QueryShards(ctx, Event{}, singletable.Days("day", from, to),
		singletable.Descending(), singletable.Limit(limit), singletable.After(cursor))
}

// Window reads one page of the events from from to to (both included), newest
// first, wherever the days start: every partition of every day the window
// touches is queried with SK BETWEEN from AND to, and all are merged.
func (s *Store) Window(ctx context.Context, from, to time.Time, limit int, cursor string) (singletable.Page[Event], error) {
	return s.Events.QueryShards(ctx, Event{}, singletable.Days("day", from, to),
		singletable.SKBetween(Event{At: from}, Event{At: to}),
		singletable.Descending(), singletable.Limit(limit), singletable.After(cursor))
}

// Find reads one event by its time and id. Its shard was drawn at random, so
// the library first asks all of the day's partitions for the key in one
// BatchGetItem (Shards keys, projecting PK alone), then reads the item with
// GetItem. A missing event matches [singletable.ErrNotFound].
func (s *Store) Find(ctx context.Context, at time.Time, eventID string) (Event, error) {
	return s.Events.Get(ctx, Event{Day: dayOf(at), At: at, EventID: eventID})
}

// FindHashed reads one HashedEvent by its time and id: the shard is the hash of
// the id, so this is one GetItem. A missing event matches
// [singletable.ErrNotFound].
func (s *Store) FindHashed(ctx context.Context, at time.Time, eventID string) (HashedEvent, error) {
	return s.Hashed.Get(ctx, HashedEvent{Day: dayOf(at), At: at, EventID: eventID})
}

// Spread counts a day's Events in each shard: a Query on each partition
// EVENTS#{day}#SHARD{n} alone, every page. counts[n-1] is shard n's.
func (s *Store) Spread(ctx context.Context, day time.Time) ([]int, error) {
	return countShards(ctx, s.Events, func(n int) Event { return Event{Day: dayOf(day), Shard: n} })
}

// SpreadHashed is Spread for the day's HashedEvents.
func (s *Store) SpreadHashed(ctx context.Context, day time.Time) ([]int, error) {
	return countShards(ctx, s.Hashed, func(n int) HashedEvent { return HashedEvent{Day: dayOf(day), Shard: n} })
}

// countShards counts the items in each shard partition that key(n) names.
func countShards[T any](ctx context.Context, e *singletable.Entity[T], key func(shard int) T) ([]int, error) {
	counts := make([]int, Shards)
	for n := 1; n <= Shards; n++ {
		for _, err := range e.All(ctx, key(n)) {
			if err != nil {
				return nil, err
			}
			counts[n-1]++
		}
	}
	return counts, nil
}
