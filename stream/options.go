package stream

import (
	"fmt"
	"time"

	"github.com/singletable/singletable"
)

// Option configures [Consume]. Options are made by the functions below; each
// checks its value, and Consume fails with [singletable.ErrInvalidInput]
// before it sends anything when one is out of range.
type Option interface {
	applyStream(*options) error
}

type optionFunc func(*options) error

func (f optionFunc) applyStream(o *options) error { return f(o) }

type options struct {
	arn                string
	start              Start
	leases             LeaseStore
	worker             string
	leaseDuration      time.Duration
	renewInterval      time.Duration
	now                func() time.Time
	checkpointInterval time.Duration
	key                func(singletable.StreamRecord) string
	unknown            singletable.UnknownTypes
	retry              singletable.Backoff
	poll, maxPoll      time.Duration
	shardRefresh       time.Duration
	batchSize          int
	railroad           singletable.RailroadOptions
	fence              bool
}

func defaultOptions() options {
	return options{
		leaseDuration:      10 * time.Second,
		renewInterval:      3 * time.Second,
		now:                time.Now,
		checkpointInterval: time.Second,
		poll:               250 * time.Millisecond,
		maxPoll:            2 * time.Second,
		shardRefresh:       30 * time.Second,
		batchSize:          1000,
	}
}

// FromARN reads the stream with this ARN. Default: the table's latest
// stream, which Consume finds with one DescribeTable call.
func FromARN(arn string) Option {
	return optionFunc(func(o *options) error {
		if arn == "" {
			return fmt.Errorf("FromARN: empty ARN: %w", singletable.ErrInvalidInput)
		}
		o.arn = arn
		return nil
	})
}

// StartAt says where the shards of a stream met for the first time begin: the
// shards found when the lease store has no lease of the stream yet. Shards that
// appear later, and the children of shards read, always begin at their oldest
// record, so that no record between a parent and its children is missed. With
// [StartLatest], closed shards found then are not read at all, and an open
// one is pinned by its first reader to the records written from then on
// ([LatestAt]), which every later reader resumes from. Default
// [StartTrimHorizon].
func StartAt(s Start) Option {
	return optionFunc(func(o *options) error {
		if s > StartLatest {
			return fmt.Errorf("StartAt(%d): %w", s, singletable.ErrInvalidInput)
		}
		o.start = s
		return nil
	})
}

// Leases keeps the consumer's leases and checkpoints in store, shared by every
// consumer of the fleet: a [TableStore] for consumers in several processes. A
// consumer that runs again with the same store resumes after each shard's
// checkpoint. Default: a new [MemoryStore], so that a consumer that runs again
// begins again at [StartAt]'s position.
func Leases(store LeaseStore) Option {
	return optionFunc(func(o *options) error {
		if store == nil {
			return fmt.Errorf("Leases(nil): %w", singletable.ErrInvalidInput)
		}
		o.leases = store
		return nil
	})
}

// Worker names the consumer in its leases. Every consumer running at once on
// a stream needs its own id; a consumer that starts with the id of one that
// died takes that one's leases back at once, without waiting for them to
// expire. Default: the host name and a random suffix.
func Worker(id string) Option {
	return optionFunc(func(o *options) error {
		if id == "" {
			return fmt.Errorf("Worker: empty id: %w", singletable.ErrInvalidInput)
		}
		o.worker = id
		return nil
	})
}

// LeaseTiming sets how long a lease lasts without renewal, and how often the
// consumer renews its leases, lists the leases, takes free or expired ones and
// balances. A consumer that dies loses its leases after about duration: others
// take its shards within duration plus one renewal interval; a consumer that
// cannot renew a lease (its store hangs) gives it up, cancelling its handlers,
// a twentieth of duration before others may take it. Defaults 10s and 3s.
// renew must be less than half of duration, so that one late renewal does not
// lose a lease.
func LeaseTiming(duration, renew time.Duration) Option {
	return optionFunc(func(o *options) error {
		if duration <= 0 || renew <= 0 || 2*renew >= duration {
			return fmt.Errorf("LeaseTiming(%s, %s): want 0 < 2·renew < duration: %w", duration, renew, singletable.ErrInvalidInput)
		}
		o.leaseDuration, o.renewInterval = duration, renew
		return nil
	})
}

// Clock sets the clock leases are timed by; default time.Now. Only its rate
// matters: no consumer compares its clock with another's. (The timers that end
// a lease's term run in real time, set from durations measured by it.)
func Clock(now func() time.Time) Option {
	return optionFunc(func(o *options) error {
		if now == nil {
			return fmt.Errorf("Clock(nil): %w", singletable.ErrInvalidInput)
		}
		o.now = now
		return nil
	})
}

// CheckpointEvery is the least time between two checkpoint writes of one
// shard while records flow; default 1s. A shard's checkpoint is also written
// when the shard ends, when its lease is handed over and when the consumer
// stops. Each write is one write to the lease store.
func CheckpointEvery(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("CheckpointEvery(%s): %w", d, singletable.ErrInvalidInput)
		}
		o.checkpointInterval = d
		return nil
	})
}

// RecordKey names the rail a record is handled on: records with equal keys are
// handled one at a time, in stream order. Default: the item's primary key, so
// the changes to one item are handled in order. A coarser key (the partition
// key, a customer id) orders more, and runs less at once. Order holds across
// shards of one lineage (a child is read after its parent), not across
// unrelated shards: keys that span items in different shards get no order
// between those shards.
func RecordKey(key func(singletable.StreamRecord) string) Option {
	return optionFunc(func(o *options) error {
		if key == nil {
			return fmt.Errorf("RecordKey(nil): %w", singletable.ErrInvalidInput)
		}
		o.key = key
		return nil
	})
}

// HandlerRetry is how often, and after what pause, a record whose handler
// fails is tried again, on its rail, so the records after it on the same key
// wait. Zero fields take [singletable.Backoff]'s defaults: 10 attempts in all;
// MaxAttempts 1 means no retry. When the attempts are spent the consumer
// stops and returns the handler's error.
func HandlerRetry(b singletable.Backoff) Option {
	return optionFunc(func(o *options) error {
		o.retry = b
		return nil
	})
}

// Polling sets the pause after a read of an open shard that found no new
// record; it doubles while reads stay empty, up to max. Defaults 250ms and 2s.
// A read that finds records is followed at once by the next.
func Polling(interval, max time.Duration) Option {
	return optionFunc(func(o *options) error {
		if interval <= 0 || max < interval {
			return fmt.Errorf("Polling(%s, %s): %w", interval, max, singletable.ErrInvalidInput)
		}
		o.poll, o.maxPoll = interval, max
		return nil
	})
}

// ShardRefresh is how often DescribeStream is called to find new shards;
// default 30s. A shard that ends triggers a call at once.
func ShardRefresh(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("ShardRefresh(%s): %w", d, singletable.ErrInvalidInput)
		}
		o.shardRefresh = d
		return nil
	})
}

// BatchSize is the most records one GetRecords call returns: 1 to 1000, the
// default. It also bounds the records of one shard in flight.
func BatchSize(n int) Option {
	return optionFunc(func(o *options) error {
		if n < 1 || n > 1000 {
			return fmt.Errorf("BatchSize %d is not in 1-1000: %w", n, singletable.ErrInvalidInput)
		}
		o.batchSize = n
		return nil
	})
}

// Rails configures the railroad records are handled on: how many handlers run
// at once (Concurrency) and how many records are held, per key and in all,
// before reading pauses. See [singletable.RailroadOptions].
func Rails(r singletable.RailroadOptions) Option {
	return optionFunc(func(o *options) error {
		o.railroad = r
		return nil
	})
}

// FenceWrites fences the writes the handlers make through the library with
// their context ([singletable.Entity.Put], Create, Update, Delete, Mutate, and
// [singletable.Table.Transact] and TransactWith): each is sent as one
// TransactWriteItems with a ConditionCheck that the lease of the record's
// shard is still held by this consumer at the epoch the record was read under
// (see [singletable.WithFence]). A write made after the lease moved on (a
// process frozen past its lease, cut off from DynamoDB, or whose timers fired
// late) is refused, applying nothing, with an error matching [ErrLeaseLost]; a
// handler that returns it stops the reading of the shard, without retry, and
// the consumer goes on. It works through any client: the check is part of the
// request. The lease store must be a [Fencer] ([TableStore]) whose table the
// handlers' table client can write to in one transaction (the same account and
// Region); Consume refuses FenceWrites with another store.
//
// Cost: a fenced write is a transaction, 2 WCU per KB of the item, plus 2 WCU
// for the lease's check, where the write alone costs 1 WCU per KB: a 1 KB
// item's write goes from 1 WCU to 4 (see docs/streams.md). Batch writes take no condition and are refused
// under a fence; [singletable.WithoutFence] lifts it for writes that need none.
// Writes made elsewhere (another store, a queue, an API) are not fenced: see
// [FencingTokenFrom].
func FenceWrites() Option {
	return optionFunc(func(o *options) error {
		o.fence = true
		return nil
	})
}

// OnUnknown sets what the consumer does with a record whose images are of no
// registered entity type: fail (the default), skip it, or hand it on with the
// image as a [singletable.RawItem]; see [singletable.OnUnknown], whose rules it
// follows.
func OnUnknown(m singletable.UnknownTypes) Option {
	return optionFunc(func(o *options) error {
		if m > singletable.UnknownCollect {
			return fmt.Errorf("OnUnknown(%d): %w", m, singletable.ErrInvalidInput)
		}
		o.unknown = m
		return nil
	})
}
