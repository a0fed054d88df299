package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/singletable/singletable"
)

// Leases and checkpoints.
//
// A fleet of consumers shares the shards of a stream through leases, one per
// shard, kept in a [LeaseStore]: the shard's owner (a worker id), a counter,
// the checkpoint (the sequence number up to which every record has been
// handled), the shard's parents and whether it is finished. The design is the
// Kinesis Client Library's: no coordinator, only conditional writes.
//
// The counter is a fencing token. Every write to a lease (take, renew,
// checkpoint, release, hand-over) is conditional on the counter the writer
// last saw, and on its being the owner, and moves the counter on; so a worker
// whose lease was taken, or lapsed and was taken, can no longer write anything
// to it, its checkpoint included. A checkpoint is also conditional on not
// being behind the stored one, compared as the decimal numbers sequence
// numbers are (a 40-digit number exceeds DynamoDB's 38 digits, so the store
// keeps a zero-padded copy that sorts as text in number order).
//
// A lease is expired, for the others, when its counter has not moved for a
// lease duration by their own clock (the owner renews it every renewal
// interval, which moves the counter). No clock is compared with another
// host's: only their rates need agree. The owner gives it up sooner, by a
// timer: a lease duration less a twentieth after it sent the last write that
// landed (see [Consume]). Lease.Expires, the owner's own deadline, is
// kept for people and tools to read.

var (
	// ErrLeaseLost means a lease write was refused because the lease moved on: its
	// counter or owner is no longer what the writer last saw (another worker took
	// it, or it was handed over or released), or a checkpoint would move it
	// backwards. The writer must stop working on the shard.
	ErrLeaseLost = errors.New("singletable: stream: lease lost")
	// ErrLeaseExists is returned by [LeaseStore.CreateLease] when the lease
	// exists already: another worker created it first, which is not a failure.
	ErrLeaseExists = errors.New("singletable: stream: lease exists")
)

// Lease is one shard's lease and checkpoint, as a [LeaseStore] keeps it. A
// Lease is a value: a store's methods return a new one and never change the
// one they are given.
type Lease struct {
	// Group names the set of leases the shard belongs to: the stream's ARN.
	Group string
	// Shard is the shard id, unique within Group.
	Shard string
	// Owner is the worker id that holds the lease; "" when no worker does.
	Owner string
	// Counter is the fencing token of lease writes: every write moves it on by
	// one, and is conditional on the value the writer read.
	Counter int64
	// Epoch moves on by one each time the lease changes hands (TakeLease,
	// HandOver), and stays while its owner holds it: with Owner, the fencing
	// token of the holder's writes to other items ([FenceWrites],
	// [FencingTokenFrom]).
	Epoch int64
	// Expires is when the owner's lease lapses unless renewed, by the owner's
	// clock; zero when free. Others judge expiry by the counter (see above).
	Expires time.Time
	// Checkpoint is the sequence number of the last record handled such that
	// it and every record before it in the shard have been handled; "" before
	// the first record. A shard that begins at the records written after it
	// was found ([StartLatest]) has [CheckpointLatest] until it is first read;
	// its first reader pins it then, before it hands on any record, to
	// "LATEST@<time>" (see [LatestAt]), which every later reader resumes from
	// until a record moves the checkpoint on.
	Checkpoint string
	// Parents are the ids of the shard's parent shards (DynamoDB Streams has
	// at most one). A shard is read only when its parents are finished.
	Parents []string
	// Finished is set once the shard has been read to its end and every one
	// of its records handled, or passed over. A finished lease has no owner.
	Finished bool
	// HandOff names a worker that asked the owner to hand the lease over, to
	// balance the shards; "" when none did.
	HandOff string
	// Handled are the sequence numbers, after Checkpoint, of records already
	// handled when the last holder stopped, or handed the lease over: their
	// handlers had returned nil while records before them were cut short. The
	// next reader passes over them ([HandledStore]). Numbers at or behind
	// Checkpoint mean nothing.
	Handled []string
}

// HandledStore is a [LeaseStore] that keeps, beside a checkpoint, the records
// after it already handled: a consumer that stops (or hands a lease over)
// writes them with its last checkpoint, and the next reader of the shard
// passes over them, so that a graceful stop repeats no record whose handler
// finished. [MemoryStore] and [TableStore] are; with a store that is not, a
// stop repeats the records after the checkpoint, finished or not.
type HandledStore interface {
	// CheckpointHandled is Checkpoint, not finished, that also sets the
	// lease's Handled to handled (sequence numbers after checkpoint).
	CheckpointHandled(ctx context.Context, l Lease, checkpoint string, handled []string) (Lease, error)
}

// checkHandled refuses handled sequence numbers that are not after checkpoint.
func checkHandled(checkpoint string, handled []string) error {
	for _, s := range handled {
		if err := checkSeq(s); err != nil {
			return err
		}
		if seqRank(s) != 3 || compareSeq(s, checkpoint) <= 0 {
			return fmt.Errorf("singletable: handled record %q is not a sequence number after the checkpoint %q: %w", s, checkpoint, singletable.ErrInvalidInput)
		}
	}
	return nil
}

// CheckpointLatest is the checkpoint of a lease made for a shard that is to
// be read from the records written after it was found ([StartLatest]), and
// that nobody has read yet. It is behind every sequence number.
const CheckpointLatest = "LATEST"

// LatestAt returns the checkpoint that pins a [StartLatest] shard to the
// records written from t on: a shard's first reader writes it, with the time
// it asked for the shard's latest position, before it hands on any record.
// A reader that finds it (the first one, after a stop, or the next holder,
// after a crash) reads the shard from its oldest record and passes over, as
// handled, the records that DynamoDB Streams dates (ApproximateCreationDateTime)
// before t less [LatestSlack], until the first record that is not: so no record
// written from t on is skipped, whoever reads the shard and however often it
// changes hands. It sorts after [CheckpointLatest] and before every sequence
// number.
func LatestAt(t time.Time) string { return latestPrefix + t.UTC().Format(latestFormat) }

// LatestSlack is how much earlier than a [LatestAt] pin a record may be dated
// and still be handled: stream records are dated to the second by DynamoDB
// (to the minute by DynamoDB Local), by a clock other than the consumer's. So
// a reader that resumes from a pin may also hand on records written up to
// this long before it, which a reader that stayed at the latest position would
// not have seen.
const LatestSlack = 2 * time.Minute

const (
	latestPrefix = CheckpointLatest + "@"
	latestFormat = "2006-01-02T15:04:05.000Z07:00" // fixed width in UTC: sorts as text in time order
)

// latestPin returns the time of a [LatestAt] checkpoint; ok is false for any
// other checkpoint.
func latestPin(checkpoint string) (t time.Time, ok bool) {
	rest, ok := strings.CutPrefix(checkpoint, latestPrefix)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(latestFormat, rest)
	return t, err == nil && LatestAt(t) == checkpoint
}

// LeaseStore keeps the leases of a fleet of stream consumers. Every write is
// conditional as its doc says and fails with an error matching [ErrLeaseLost]
// when the condition does not hold; any other error means the write may or may
// not have happened (read the leases again). Implementations must be safe for
// concurrent use. [MemoryStore] keeps them in memory, for one process;
// [TableStore] in DynamoDB, for a fleet.
type LeaseStore interface {
	// Leases returns every lease of group, in shard id order, read
	// consistently.
	Leases(ctx context.Context, group string) ([]Lease, error)
	// CreateLease creates l with no owner and counter 0, if no lease of its
	// shard exists; else it fails with [ErrLeaseExists].
	CreateLease(ctx context.Context, l Lease) error
	// TakeLease makes owner the owner of l, with Expires expires, if the
	// stored counter is still l.Counter; it clears HandOff and moves Epoch on.
	TakeLease(ctx context.Context, l Lease, owner string, expires time.Time) (Lease, error)
	// RenewLease moves l's counter on and sets Expires, if l.Owner still owns
	// it at l.Counter. The lease returned shows a HandOff asked for since.
	RenewLease(ctx context.Context, l Lease, expires time.Time) (Lease, error)
	// Checkpoint sets l's checkpoint, if l.Owner still owns it at l.Counter
	// and checkpoint is not behind the stored one. With finished, the lease
	// is also marked finished and freed.
	Checkpoint(ctx context.Context, l Lease, checkpoint string, finished bool) (Lease, error)
	// ReleaseLease frees l, if l.Owner still owns it at l.Counter.
	ReleaseLease(ctx context.Context, l Lease) error
	// AskHandOff asks l's owner to hand l over to worker, if l.Owner still
	// owns it (at any counter: the owner's checkpoints move it often) and no
	// other worker has asked. It leaves the counter as it is, so the owner's
	// next renewal succeeds and sees it.
	AskHandOff(ctx context.Context, l Lease, worker string) error
	// HandOver gives l to l.HandOff, if l.Owner still owns it at l.Counter
	// and l.HandOff is still the worker that asked; it moves Epoch on.
	HandOver(ctx context.Context, l Lease, expires time.Time) (Lease, error)
}

// compareSeq compares two checkpoints as the non-negative decimal numbers that
// sequence numbers are, of any length; "", [CheckpointLatest] and [LatestAt]
// pins come before every number, in that order, and pins in time order.
func compareSeq(a, b string) int {
	ra, rb := seqRank(a), seqRank(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 2:
		return strings.Compare(a, b)
	case 3:
	default:
		return 0
	}
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func seqRank(s string) int {
	switch {
	case s == "":
		return 0
	case s == CheckpointLatest:
		return 1
	case strings.HasPrefix(s, latestPrefix):
		return 2
	}
	return 3
}

// checkSeq refuses a checkpoint that is not a sequence number (digits only),
// "", [CheckpointLatest] or a [LatestAt] pin.
func checkSeq(s string) error {
	if s == "" || s == CheckpointLatest {
		return nil
	}
	if strings.HasPrefix(s, latestPrefix) {
		if _, ok := latestPin(s); !ok {
			return fmt.Errorf("singletable: checkpoint %q is not a LatestAt pin: %w", s, singletable.ErrInvalidInput)
		}
		return nil
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("singletable: checkpoint %q is not a sequence number: %w", s, singletable.ErrInvalidInput)
		}
	}
	if len(s) > seqWidth {
		return fmt.Errorf("singletable: checkpoint %q has over %d digits: %w", s, seqWidth, singletable.ErrInvalidInput)
	}
	return nil
}

// seqWidth is the width sequence numbers are padded to for comparison:
// DynamoDB Streams' are at most 40 digits.
const seqWidth = 48

// seqOrder is a checkpoint as text that sorts in compareSeq's order: "" and
// LATEST first, then pins ("1@" and the time), then the number zero-padded
// to seqWidth digits.
func seqOrder(s string) string {
	switch seqRank(s) {
	case 0:
		return "0"
	case 1:
		return "1"
	case 2:
		return "1@" + strings.TrimPrefix(s, latestPrefix)
	}
	s = strings.TrimLeft(s, "0")
	return "2" + strings.Repeat("0", max(0, seqWidth-len(s))) + s
}

// MemoryStore is a [LeaseStore] in memory: the leases of the consumers of one
// process, lost when it exits. It keeps to the same conditions as
// [TableStore], so it also serves tests. The zero value is an empty store; it
// is safe for concurrent use.
type MemoryStore struct {
	mu     sync.Mutex                  // protects leases and history
	leases map[string]map[string]Lease // group -> shard -> lease
	// History, when set before use, records every lease as written, in order.
	history []Lease
	record  bool
}

var (
	_ LeaseStore   = (*MemoryStore)(nil)
	_ HandledStore = (*MemoryStore)(nil)
)

// RecordHistory makes the store keep every lease write from now on, for
// [MemoryStore.History].
func (m *MemoryStore) RecordHistory() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record = true
}

// History returns the leases as written since [MemoryStore.RecordHistory], in
// the order written.
func (m *MemoryStore) History() []Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.history)
}

// put stores l; m.mu is held.
func (m *MemoryStore) put(l Lease) Lease {
	if m.leases == nil {
		m.leases = map[string]map[string]Lease{}
	}
	if m.leases[l.Group] == nil {
		m.leases[l.Group] = map[string]Lease{}
	}
	l.Parents, l.Handled = slices.Clone(l.Parents), slices.Clone(l.Handled)
	m.leases[l.Group][l.Shard] = l
	if m.record {
		m.history = append(m.history, l)
	}
	return l
}

// owned returns the stored lease if l.Owner owns it at l.Counter; m.mu is held.
func (m *MemoryStore) owned(l Lease) (Lease, error) {
	cur, ok := m.leases[l.Group][l.Shard]
	if !ok || cur.Counter != l.Counter || cur.Owner != l.Owner || l.Owner == "" {
		return cur, fmt.Errorf("singletable: lease %s of %s (owner %q, counter %d): %w", l.Shard, l.Group, l.Owner, l.Counter, ErrLeaseLost)
	}
	return cur, nil
}

// Leases returns the group's leases in shard id order.
func (m *MemoryStore) Leases(_ context.Context, group string) ([]Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.leases[group]
	out := make([]Lease, 0, len(g))
	for _, id := range slices.Sorted(maps.Keys(g)) {
		l := g[id]
		l.Parents, l.Handled = slices.Clone(l.Parents), slices.Clone(l.Handled)
		out = append(out, l)
	}
	return out, nil
}

// CreateLease creates l, free and at counter 0, unless its shard has a lease.
func (m *MemoryStore) CreateLease(_ context.Context, l Lease) error {
	if err := checkSeq(l.Checkpoint); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.leases[l.Group][l.Shard]; ok {
		return fmt.Errorf("singletable: lease %s of %s: %w", l.Shard, l.Group, ErrLeaseExists)
	}
	l.Owner, l.Counter, l.Expires, l.HandOff = "", 0, time.Time{}, ""
	m.put(l)
	return nil
}

// TakeLease gives l to owner if its counter is still l.Counter.
func (m *MemoryStore) TakeLease(_ context.Context, l Lease, owner string, expires time.Time) (Lease, error) {
	if owner == "" {
		return Lease{}, fmt.Errorf("singletable: TakeLease: empty owner: %w", singletable.ErrInvalidInput)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.leases[l.Group][l.Shard]
	if !ok || cur.Counter != l.Counter || cur.Finished {
		return Lease{}, fmt.Errorf("singletable: take lease %s of %s at counter %d: %w", l.Shard, l.Group, l.Counter, ErrLeaseLost)
	}
	cur.Owner, cur.Counter, cur.Epoch, cur.Expires, cur.HandOff = owner, cur.Counter+1, cur.Epoch+1, expires, ""
	return m.put(cur), nil
}

// RenewLease moves l's counter on if l.Owner owns it at l.Counter.
func (m *MemoryStore) RenewLease(_ context.Context, l Lease, expires time.Time) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.owned(l)
	if err != nil {
		return Lease{}, err
	}
	cur.Counter, cur.Expires = cur.Counter+1, expires
	return m.put(cur), nil
}

// Checkpoint sets l's checkpoint if l.Owner owns it at l.Counter and the
// checkpoint does not move backwards.
func (m *MemoryStore) Checkpoint(_ context.Context, l Lease, checkpoint string, finished bool) (Lease, error) {
	return m.checkpoint(l, checkpoint, finished, nil)
}

// CheckpointHandled is Checkpoint that also sets the records after it handled.
func (m *MemoryStore) CheckpointHandled(_ context.Context, l Lease, checkpoint string, handled []string) (Lease, error) {
	if err := checkHandled(checkpoint, handled); err != nil {
		return Lease{}, err
	}
	return m.checkpoint(l, checkpoint, false, &handled)
}

func (m *MemoryStore) checkpoint(l Lease, checkpoint string, finished bool, handled *[]string) (Lease, error) {
	if err := checkSeq(checkpoint); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.owned(l)
	if err != nil {
		return Lease{}, err
	}
	if compareSeq(checkpoint, cur.Checkpoint) < 0 {
		return Lease{}, fmt.Errorf("singletable: checkpoint %s of shard %s is behind %s: %w", checkpoint, l.Shard, cur.Checkpoint, ErrLeaseLost)
	}
	cur.Counter, cur.Checkpoint = cur.Counter+1, checkpoint
	if handled != nil {
		cur.Handled = slices.Compact(slices.SortedFunc(slices.Values(*handled), compareSeq)) // as TableStore's set reads back
	}
	if finished {
		cur.Finished, cur.Owner, cur.Expires, cur.HandOff = true, "", time.Time{}, ""
	}
	return m.put(cur), nil
}

// ReleaseLease frees l if l.Owner owns it at l.Counter.
func (m *MemoryStore) ReleaseLease(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.owned(l)
	if err != nil {
		return err
	}
	cur.Counter, cur.Owner, cur.Expires, cur.HandOff = cur.Counter+1, "", time.Time{}, ""
	m.put(cur)
	return nil
}

// AskHandOff records worker's request for l, if l.Owner owns it and no other
// worker asked.
func (m *MemoryStore) AskHandOff(_ context.Context, l Lease, worker string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.leases[l.Group][l.Shard]
	if !ok || cur.Owner != l.Owner || l.Owner == "" || cur.Finished {
		return fmt.Errorf("singletable: ask for lease %s of %s: not owned by %q: %w", l.Shard, l.Group, l.Owner, ErrLeaseLost)
	}
	if cur.HandOff != "" && cur.HandOff != worker {
		return fmt.Errorf("singletable: lease %s of %s: %s asked first: %w", l.Shard, l.Group, cur.HandOff, ErrLeaseLost)
	}
	cur.HandOff = worker
	m.put(cur)
	return nil
}

// HandOver gives l to the worker that asked for it.
func (m *MemoryStore) HandOver(_ context.Context, l Lease, expires time.Time) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.owned(l)
	if err != nil {
		return Lease{}, err
	}
	if cur.HandOff == "" || cur.HandOff != l.HandOff {
		return Lease{}, fmt.Errorf("singletable: hand over lease %s of %s to %q: %w", l.Shard, l.Group, l.HandOff, ErrLeaseLost)
	}
	cur.Owner, cur.Counter, cur.Epoch, cur.Expires, cur.HandOff = cur.HandOff, cur.Counter+1, cur.Epoch+1, expires, ""
	return m.put(cur), nil
}
