package singletable

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testClock is a clock tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2025, 3, 1, 9, 30, 0, 123456789, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on and returns the new time.
func (c *testClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// tsDoc has both timestamps, each feeding an index key.
type tsDoc struct {
	_         struct{}  `Type:"TsDoc" PK:"DOC#{id}" SK:"DOC" GSI1PK:"DOCS" GSI1SK:"{createdAt:time}#{id}" GSI2PK:"OWNER#{owner}" GSI2SK:"{updatedAt:time}"`
	ID        string    `dynamodbav:"id"`
	Owner     string    `dynamodbav:"owner,omitempty"`
	Title     string    `dynamodbav:"title"`
	CreatedAt time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	UpdatedAt time.Time `dynamodbav:"updatedAt" singletable:"updatedAt"`
}

// tsNote has timestamps that feed no key: Put keeps the stored createdAt whatever
// the value holds.
type tsNote struct {
	_         struct{}   `Type:"TsNote" PK:"NOTE#{id}" SK:"NOTE"`
	ID        string     `dynamodbav:"id"`
	Text      string     `dynamodbav:"text"`
	CreatedAt *time.Time `dynamodbav:"createdAt,unixtime" singletable:"createdAt"`
	UpdatedAt time.Time  `dynamodbav:"updatedAt" singletable:"updatedAt"`
}

// tsCounter is versioned, with epoch timestamps (seconds and milliseconds) and a
// counter.
type tsCounter struct {
	_       struct{} `Type:"TsCounter" PK:"TC#{id}" SK:"TC"`
	ID      string   `dynamodbav:"id"`
	N       int      `dynamodbav:"n"`
	Created int64    `dynamodbav:"created" singletable:"createdAt"`
	Updated int64    `dynamodbav:"updated" singletable:"updatedAt,unixms"`
	Edits   int      `dynamodbav:"edits" singletable:"counter"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

func storedTime(t *testing.T, item map[string]types.AttributeValue, attr string) time.Time {
	t.Helper()
	switch av := item[attr].(type) {
	case *types.AttributeValueMemberS:
		tm, err := time.Parse(time.RFC3339Nano, av.Value)
		require.NoError(t, err)
		return tm
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(av.Value, 10, 64)
		require.NoError(t, err)
		return time.Unix(n, 0)
	}
	t.Fatalf("attribute %s is %T", attr, item[attr])
	return time.Time{}
}

func storedInt(t *testing.T, item map[string]types.AttributeValue, attr string) int64 {
	t.Helper()
	av, ok := item[attr].(*types.AttributeValueMemberN)
	require.True(t, ok, "attribute %s is %T", attr, item[attr])
	n, err := strconv.ParseInt(av.Value, 10, 64)
	require.NoError(t, err)
	return n
}

// TestTimestampsCreatedOnceUpdatedEveryWrite follows one item through every write
// path with an injected clock, asserting the stored item each time: createdAt is
// set by the write that creates the item and kept by Put, Update, Mutate,
// transactions and BatchPut of the value as read; updatedAt moves with each.
func TestTimestampsCreatedOnceUpdatedEveryWrite(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	docs := MustRegister[tsDoc](tbl)
	ctx := context.Background()
	t0 := clk.Now()

	created, err := docs.Create(ctx, tsDoc{ID: "d1", Owner: "ann", Title: "one"})
	require.NoError(t, err)
	assert.True(t, created.CreatedAt.Equal(t0) && created.UpdatedAt.Equal(t0), "Create returns the stamps it stored")
	item := rawItem(t, tbl, "DOC#d1", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0))
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t0))
	wantGSI1 := t0.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#d1"
	assert.Equal(t, wantGSI1, item["GSI1SK"].(*types.AttributeValueMemberS).Value, "the index key renders the stored createdAt")

	// Put of the item as read: createdAt kept, updatedAt moved, GSI2SK recomputed.
	t1 := clk.Advance(time.Minute)
	next := created
	next.Title = "two"
	put, err := docs.Put(ctx, next)
	require.NoError(t, err)
	item = rawItem(t, tbl, "DOC#d1", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0), "Put keeps createdAt")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t1), "Put moves updatedAt")
	assert.Equal(t, t1.UTC().Format("2006-01-02T15:04:05.000000000Z"), item["GSI2SK"].(*types.AttributeValueMemberS).Value)
	assert.True(t, put.UpdatedAt.Equal(t1) && put.CreatedAt.Equal(t0))

	// A fresh value without createdAt cannot be Put over the item: createdAt feeds
	// GSI1SK, which would be rendered from a time that is not stored.
	clk.Advance(time.Minute)
	_, err = docs.Put(ctx, tsDoc{ID: "d1", Owner: "ann", Title: "stale"})
	var ke *KeyError
	require.ErrorAs(t, err, &ke, "a createdAt that feeds an index key must be the stored one")
	assert.Equal(t, "CreatedAt", ke.Field)
	assert.Equal(t, "two", rawItem(t, tbl, "DOC#d1", "DOC")["title"].(*types.AttributeValueMemberS).Value, "nothing written")

	// Update: updatedAt moved, and the index key it feeds recomputed (owner comes
	// from the key value, conditioned on the stored one); createdAt untouched.
	t3 := clk.Advance(time.Minute)
	upd, err := docs.Update(ctx, tsDoc{ID: "d1", Owner: "ann"}, Set("title", "three"))
	require.NoError(t, err)
	item = rawItem(t, tbl, "DOC#d1", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0), "Update keeps createdAt")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t3), "Update moves updatedAt")
	assert.Equal(t, t3.UTC().Format("2006-01-02T15:04:05.000000000Z"), item["GSI2SK"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, wantGSI1, item["GSI1SK"].(*types.AttributeValueMemberS).Value)
	assert.True(t, upd.UpdatedAt.Equal(t3) && upd.CreatedAt.Equal(t0))
	_, err = docs.Update(ctx, tsDoc{ID: "d1"}, Set("title", "x"))
	assert.ErrorIs(t, err, ErrInvalidKey, "recomputing GSI2 needs owner in the key value")
	for _, opt := range []UpdateOption{Set("createdAt", t3), Set("updatedAt", t3), Remove("createdAt")} {
		_, err = docs.Update(ctx, tsDoc{ID: "d1", Owner: "ann"}, opt)
		assert.ErrorIs(t, err, ErrInvalidInput, "the library owns the timestamps")
	}

	// Transactions: TxPut and TxUpdate stamp one time for the transaction.
	t4 := clk.Advance(time.Minute)
	cur, err := docs.Get(ctx, tsDoc{ID: "d1"}, Consistent())
	require.NoError(t, err)
	cur.Title = "four"
	require.NoError(t, tbl.Transact(ctx, docs.TxPut(cur), docs.TxCreate(tsDoc{ID: "d2", Title: "new"})))
	item = rawItem(t, tbl, "DOC#d1", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0), "TxPut keeps createdAt")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t4))
	item2 := rawItem(t, tbl, "DOC#d2", "DOC")
	assert.True(t, storedTime(t, item2, "createdAt").Equal(t4), "TxCreate stamps createdAt")
	t5 := clk.Advance(time.Minute)
	require.NoError(t, tbl.Transact(ctx, docs.TxUpdate(tsDoc{ID: "d2"}, Set("title", "newer"))))
	item2 = rawItem(t, tbl, "DOC#d2", "DOC")
	assert.True(t, storedTime(t, item2, "createdAt").Equal(t4), "TxUpdate keeps createdAt")
	assert.True(t, storedTime(t, item2, "updatedAt").Equal(t5))

	// BatchPut of the items as read keeps their createdAt and moves updatedAt.
	t6 := clk.Advance(time.Minute)
	cur, err = docs.Get(ctx, tsDoc{ID: "d1"}, Consistent())
	require.NoError(t, err)
	_, err = docs.BatchPut(ctx, []tsDoc{cur, {ID: "d3", Title: "batch"}})
	require.NoError(t, err)
	item = rawItem(t, tbl, "DOC#d1", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0), "BatchPut of the value as read keeps createdAt")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t6))
	assert.True(t, storedTime(t, rawItem(t, tbl, "DOC#d3", "DOC"), "createdAt").Equal(t6), "BatchPut of a new value stamps createdAt")

	// Upsert creates with createdAt = now.
	t7 := clk.Advance(time.Minute)
	_, err = docs.Update(ctx, tsDoc{ID: "d4"}, Set("title", "upserted"), Upsert())
	require.NoError(t, err)
	item = rawItem(t, tbl, "DOC#d4", "DOC")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t7), "an Upsert that creates the item stamps createdAt")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t7))
}

// TestTimestampsPutKeepsStoredCreatedAt: where createdAt feeds no key, Put of any
// value keeps the stored one (if_not_exists) and returns it; a time.Time stored as
// Unix seconds is stamped to the second, as stored.
func TestTimestampsPutKeepsStoredCreatedAt(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	notes := MustRegister[tsNote](tbl)
	ctx := context.Background()
	t0 := clk.Now()

	first, err := notes.Put(ctx, tsNote{ID: "n", Text: "a"})
	require.NoError(t, err)
	require.NotNil(t, first.CreatedAt)
	assert.True(t, first.CreatedAt.Equal(t0.Truncate(time.Second)), "unixtime stores seconds: the value returned is what is stored")
	t1 := clk.Advance(time.Hour)
	second, err := notes.Put(ctx, tsNote{ID: "n", Text: "b"}) // a fresh value
	require.NoError(t, err)
	require.NotNil(t, second.CreatedAt)
	assert.True(t, second.CreatedAt.Equal(t0.Truncate(time.Second)), "Put returns the createdAt kept")
	item := rawItem(t, tbl, "NOTE#n", "NOTE")
	assert.Equal(t, strconv.FormatInt(t0.Unix(), 10), item["createdAt"].(*types.AttributeValueMemberN).Value)
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t1))
	assert.Equal(t, "b", item["text"].(*types.AttributeValueMemberS).Value)
	// A value holding another createdAt does not move it either.
	old := t0.Add(-240 * time.Hour)
	_, err = notes.Put(ctx, tsNote{ID: "n", Text: "c", CreatedAt: &old})
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatInt(t0.Unix(), 10), rawItem(t, tbl, "NOTE#n", "NOTE")["createdAt"].(*types.AttributeValueMemberN).Value)
}

// TestTimestampsVersionedCounterMutateMigration: a versioned entity with epoch
// timestamps and a counter, through Put, Update, Mutate, transactions and a
// migration write-back (which stamps nothing).
func TestTimestampsVersionedCounterMutateMigration(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	steps := Migration[tsCounter]{Steps: []Step[tsCounter]{{Typed: func(v *tsCounter) error { v.N += 1000; return nil }}}}
	ctrs := MustRegister[tsCounter](tbl, Migrations(steps))
	ctx := context.Background()
	t0 := clk.Now()

	c, err := ctrs.Create(ctx, tsCounter{ID: "c", Edits: 7})
	require.NoError(t, err)
	assert.Equal(t, 0, c.Edits, "a new item's count is 0, whatever the value held")
	item := rawItem(t, tbl, "TC#c", "TC")
	assert.Equal(t, t0.Unix(), storedInt(t, item, "created"))
	assert.Equal(t, t0.UnixMilli(), storedInt(t, item, "updated"))
	assert.Equal(t, int64(0), storedInt(t, item, "edits"))

	t1 := clk.Advance(time.Second)
	c.N = 1
	c, err = ctrs.Put(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Edits)
	t2 := clk.Advance(time.Second)
	c, err = ctrs.Update(ctx, c, Set("n", 2))
	require.NoError(t, err)
	assert.Equal(t, 2, c.Edits)
	assert.Equal(t, t2.UnixMilli(), c.Updated)
	t3 := clk.Advance(time.Second)
	c, err = ctrs.Mutate(ctx, tsCounter{ID: "c"}, func(v *tsCounter) error { v.N++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 3, c.Edits)
	assert.Equal(t, t3.UnixMilli(), c.Updated)
	t4 := clk.Advance(time.Second)
	require.NoError(t, tbl.Transact(ctx, ctrs.TxUpdate(c, Set("n", 4))))
	item = rawItem(t, tbl, "TC#c", "TC")
	assert.Equal(t, t0.Unix(), storedInt(t, item, "created"), "createdAt kept through Put, Update, Mutate and a transaction")
	assert.Equal(t, t4.UnixMilli(), storedInt(t, item, "updated"))
	assert.Equal(t, int64(4), storedInt(t, item, "edits"))
	assert.Equal(t, int64(5), storedInt(t, item, "version"))
	_ = t1

	// An Update with no change but the counter's counts a view.
	c, err = ctrs.Update(ctx, tsCounter{ID: "c", Version: 5})
	require.NoError(t, err)
	assert.Equal(t, 5, c.Edits)

	// Migration write-back stamps nothing: an item at schema 1 is read, migrated
	// and written back with its timestamps as they were.
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("TC#old"), "SK": sAV("TC"), "Type": sAV("TsCounter"),
		"id": sAV("old"), "n": nAV(1), "created": nAV(100), "updated": nAV(200000), "edits": nAV(9), "version": nAV(3)})
	clk.Advance(time.Hour)
	got, err := ctrs.Get(ctx, tsCounter{ID: "old"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 1001, got.N)
	item = rawItem(t, tbl, "TC#old", "TC")
	assert.Equal(t, int64(1001), storedInt(t, item, "n"), "written back")
	assert.Equal(t, int64(100), storedInt(t, item, "created"), "write-back keeps createdAt")
	assert.Equal(t, int64(200000), storedInt(t, item, "updated"), "write-back does not stamp updatedAt")
	assert.Equal(t, int64(9), storedInt(t, item, "edits"), "write-back counts nothing")
}

// TestTimestampsRegistrationErrors: bad timestamp, counter and default tags are
// refused at Register, naming the entity, the field and the attribute.
func TestTimestampsRegistrationErrors(t *testing.T) {
	tbl := offlineTable(t)
	type strStamp struct {
		_  struct{} `PK:"A#{id}" SK:"A"`
		ID string   `dynamodbav:"id"`
		At string   `dynamodbav:"at" singletable:"createdAt"`
	}
	type twoCreated struct {
		_  struct{}  `PK:"B#{id}" SK:"B"`
		ID string    `dynamodbav:"id"`
		A  time.Time `dynamodbav:"a" singletable:"createdAt"`
		B  time.Time `dynamodbav:"b" singletable:"createdAt"`
	}
	type updatedInPK struct {
		_  struct{}  `PK:"C#{at:time}" SK:"C"`
		At time.Time `dynamodbav:"at" singletable:"updatedAt"`
	}
	type msOnTime struct {
		_  struct{}  `PK:"D#{id}" SK:"D"`
		ID string    `dynamodbav:"id"`
		At time.Time `dynamodbav:"at" singletable:"updatedAt,unixms"`
	}
	type counterInKey struct {
		_  struct{} `PK:"E#{id}" SK:"E#{n}"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"counter"`
	}
	type unknownRole struct {
		_  struct{} `PK:"F#{id}" SK:"F"`
		ID string   `dynamodbav:"id"`
		X  int      `dynamodbav:"x" singletable:"created"`
	}
	cases := []struct {
		name, field string
		reg         func() error
	}{
		{"string createdAt", "At", func() error { _, err := Register[strStamp](tbl); return err }},
		{"two createdAt", "B", func() error { _, err := Register[twoCreated](tbl); return err }},
		{"updatedAt in the primary key", "At", func() error { _, err := Register[updatedInPK](tbl); return err }},
		{"unixms on a time", "At", func() error { _, err := Register[msOnTime](tbl); return err }},
		{"counter in a key", "N", func() error { _, err := Register[counterInKey](tbl); return err }},
		{"unknown role", "X", func() error { _, err := Register[unknownRole](tbl); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.reg()
			require.ErrorIs(t, err, ErrInvalidEntity)
			var ee *EntityError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, c.field, ee.Field)
			t.Log(err)
		})
	}
}
