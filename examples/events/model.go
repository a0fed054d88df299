package main

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/singletable/singletable"
)

// Key map (reference 000, "Hot partitions: sharding writes"): one day of events
// would be one hot partition, so it is spread over Shards partitions, and a read
// of the day asks all of them and merges what they return.
//
//	entity       PK                                SK                    shard
//	Event        EVENTS#{day:date}#SHARD{shard}    {at:time}#{eventId}   random, 1-8
//	HashedEvent  HEVENTS#{day:date}#SHARD{shard}   {at:time}#{eventId}   a hash of eventId, 1-8
//
// For example EVENTS#2024-03-01#SHARD3 / 2024-03-01T04:36:35.169000000Z#e0301-0a0366cb.
// {day:date} is the UTC day of At, which [Store.Record] fills in; {at:time} is a
// fixed-width UTC time, so sort keys sort as times do (the reference's epoch
// milliseconds do too), and the event id after it keeps two events of the same
// instant apart.
//
// A random shard gives the most even spread whatever the ids look like, but a
// point read must first find the shard: one BatchGetItem over the 8 possible
// keys, then the GetItem. A shard hashed from the event id spreads only as well
// as the ids vary (random ids, as here, like random draws), and a point read
// computes it: one GetItem. Both read a day the same way, with
// [singletable.Entity.QueryShards].
//
// Kind and UserID are omitempty because DynamoDB Local 1.x refuses an empty
// string in any attribute.

// Shards is how many partitions one day of events is spread over: the N of
// `singletable:"shards=N"` on both entities below.
const Shards = 8

// Event is one event, written to a random shard of its day.
type Event struct {
	_       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8"`
	Day     time.Time `dynamodbav:"day"` // midnight UTC of At's day; set by Store.Record
	At      time.Time `dynamodbav:"at"`
	EventID string    `dynamodbav:"eventId"`
	Shard   int       `dynamodbav:"shard" singletable:"shard"` // 1-8; 0 until written
	Kind    string    `dynamodbav:"kind,omitempty"`
	UserID  string    `dynamodbav:"userId,omitempty"`
}

// HashedEvent is the same event with its shard computed from its id, so that
// it can be read back with one GetItem.
type HashedEvent struct {
	_       struct{}  `Type:"HashedEvent" PK:"HEVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8,shardBy=eventId"`
	Day     time.Time `dynamodbav:"day"`
	At      time.Time `dynamodbav:"at"`
	EventID string    `dynamodbav:"eventId"`
	Shard   int       `dynamodbav:"shard" singletable:"shard"`
	Kind    string    `dynamodbav:"kind,omitempty"`
	UserID  string    `dynamodbav:"userId,omitempty"`
}

// Hashed returns e as a HashedEvent; its shard is left for the library to compute.
func (e Event) Hashed() HashedEvent {
	return HashedEvent{Day: e.Day, At: e.At, EventID: e.EventID, Kind: e.Kind, UserID: e.UserID}
}

// dayOf is the partition day of t: midnight UTC of t's day.
func dayOf(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// The key templates of Event, parsed again to print the keys an event is
// stored under.
var (
	pkTemplate = must(singletable.ParseTemplate("EVENTS#{day:date}#SHARD{shard}", singletable.DefaultDelimiter))
	skTemplate = must(singletable.ParseTemplate("{at:time}#{eventId}", singletable.DefaultDelimiter))
)

// keysOf renders the primary key of a stored Event (one with Day and Shard set).
func keysOf(e Event) (pk, sk string, err error) {
	if pk, err = pkTemplate.Render(map[string]any{"day": e.Day, "shard": e.Shard}); err != nil {
		return "", "", err
	}
	sk, err = skTemplate.Render(map[string]any{"at": e.At, "eventId": e.EventID})
	return pk, sk, err
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Store is the events model on one table. It is safe for concurrent use.
type Store struct {
	Table  *singletable.Table
	Events *singletable.Entity[Event]
	Hashed *singletable.Entity[HashedEvent]
}

// NewStore describes the table (PK/SK, no indexes) and registers the entities.
// random draws the shards of Events (it is called from concurrent writes, so
// it must be safe for concurrent use); nil means math/rand/v2.Uint64. It sends
// nothing; call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string, random func() uint64) (*Store, error) {
	table, err := singletable.NewTable(client, tableName, singletable.WithRandom(random))
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table}
	if s.Events, err = singletable.Register[Event](table); err != nil {
		return nil, err
	}
	if s.Hashed, err = singletable.Register[HashedEvent](table); err != nil {
		return nil, err
	}
	return s, nil
}

// seeded returns a random source that draws the same numbers on every run for
// one seed, for sample data and output that do not change. It is safe for
// concurrent use.
func seeded(seed uint64) func() uint64 {
	var mu sync.Mutex // protects r
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Uint64()
	}
}
