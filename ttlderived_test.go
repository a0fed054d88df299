package singletable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type dtCreated struct {
	_       struct{}  `PK:"DTC#{id}" SK:"DTC"`
	ID      string    `dynamodbav:"id"`
	Created time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	TTL     int64     `dynamodbav:"ttl,omitempty" singletable:"ttl,from=createdAt,after=30d"`
	Note    string    `dynamodbav:"note,omitempty"`
}

type dtUpdated struct {
	_       struct{}  `PK:"DTU#{id}" SK:"DTU"`
	ID      string    `dynamodbav:"id"`
	Updated int64     `dynamodbav:"updatedAt" singletable:"updatedAt,unixms"`
	TTL     time.Time `dynamodbav:"ttl,unixtime,omitempty" singletable:"ttl,from=updatedAt,after=1h"`
	Note    string    `dynamodbav:"note,omitempty"`
}

type dtBase struct {
	_    struct{}  `PK:"DTB#{id}" SK:"DTB"`
	ID   string    `dynamodbav:"id"`
	From time.Time `dynamodbav:"expiresFrom,omitempty"`
	TTL  int64     `dynamodbav:"ttl,omitempty" singletable:"ttl"`
	Note string    `dynamodbav:"note,omitempty"`
}

// dtClock is a clock a test moves.
type dtClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *dtClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *dtClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var dtStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestDerivedTTLFromCreatedAt(t *testing.T) {
	clock := &dtClock{t: dtStart}
	tbl, _ := newTestTable(t, WithClock(clock.now))
	items := MustRegister[dtCreated](tbl)
	ctx := context.Background()
	want := dtStart.Add(30 * 24 * time.Hour).Unix()

	got, err := items.Create(ctx, dtCreated{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL, "ttl = createdAt + 30 days")

	clock.set(dtStart.Add(time.Hour))
	put, err := items.Put(ctx, dtCreated{ID: "a", Note: "n"})
	require.NoError(t, err)
	assert.Equal(t, dtStart, put.Created.UTC(), "a Put keeps createdAt")
	assert.Equal(t, want, put.TTL, "and the ttl stored with it, returned")
	up, err := items.Update(ctx, dtCreated{ID: "a"}, Set("note", "m"))
	require.NoError(t, err)
	assert.Equal(t, want, up.TTL, "an Update of another field keeps it")

	ups, err := items.Update(ctx, dtCreated{ID: "b"}, Set("note", "x"), Upsert())
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(time.Hour+30*24*time.Hour).Unix(), ups.TTL, "an Upsert creating the item writes the ttl with createdAt")
	stored, err := items.Get(ctx, dtCreated{ID: "b"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, ups.TTL, stored.TTL)
}

func TestDerivedTTLFromUpdatedAtSlides(t *testing.T) {
	clock := &dtClock{t: dtStart}
	tbl, _ := newTestTable(t, WithClock(clock.now))
	items := MustRegister[dtUpdated](tbl)
	ctx := context.Background()

	got, err := items.Put(ctx, dtUpdated{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(time.Hour).Unix(), got.TTL.Unix())

	clock.set(dtStart.Add(10 * time.Minute))
	up, err := items.Update(ctx, dtUpdated{ID: "a"}, Set("note", "x"))
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(70*time.Minute).Unix(), up.TTL.Unix(), "every Update slides the expiry")

	clock.set(dtStart.Add(20 * time.Minute))
	require.NoError(t, tbl.Transact(ctx, items.TxUpdate(dtUpdated{ID: "a"}, Set("note", "y"))))
	stored, err := items.Get(ctx, dtUpdated{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(80*time.Minute).Unix(), stored.TTL.Unix(), "TxUpdate too")

	_, err = items.Update(ctx, dtUpdated{ID: "a"}, Set("ttl", time.Now()))
	require.ErrorIs(t, err, ErrInvalidInput, "the library owns a derived ttl")
}

func TestDerivedTTLFollowsBaseOnUpdate(t *testing.T) {
	tbl, _ := newTestTable(t)
	items := MustRegister[dtBase](tbl, DeriveTTL("expiresFrom", 2*time.Hour))
	ctx := context.Background()

	got, err := items.Put(ctx, dtBase{ID: "a", From: dtStart})
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(2*time.Hour).Unix(), got.TTL)

	moved, err := items.Update(ctx, dtBase{ID: "a"}, Set("expiresFrom", dtStart.Add(time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(3*time.Hour).Unix(), moved.TTL, "Set of the base moves the ttl")

	other, err := items.Update(ctx, dtBase{ID: "a"}, Set("note", "x"))
	require.NoError(t, err)
	assert.Equal(t, moved.TTL, other.TTL, "a change of another field leaves it")

	_, err = items.Update(ctx, dtBase{ID: "a"}, Remove("expiresFrom"))
	require.ErrorIs(t, err, ErrInvalidInput, "removing the base would leave the ttl behind")
	_, err = items.Update(ctx, dtBase{ID: "a"}, Set("ttl", 5))
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = items.Update(ctx, dtBase{ID: "a"}, Remove("ttl"))
	require.ErrorIs(t, err, ErrInvalidInput)
	stored, err := items.Get(ctx, dtBase{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, other, stored, "nothing written by the refused updates")
}

func TestDerivedTTLCallerValueReplaced(t *testing.T) {
	tbl, _ := newTestTable(t)
	items := MustRegister[dtBase](tbl, DeriveTTL("expiresFrom", time.Hour))
	ctx := context.Background()
	want := dtStart.Add(time.Hour).Unix()

	got, err := items.Put(ctx, dtBase{ID: "a", From: dtStart, TTL: 12345})
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL, "a stale ttl in the value is replaced by the derived one")

	_, err = items.BatchPut(ctx, []dtBase{{ID: "b", From: dtStart, TTL: 1}})
	require.NoError(t, err)
	require.NoError(t, tbl.Transact(ctx, items.TxPut(dtBase{ID: "c", From: dtStart, TTL: 1})))
	for _, id := range []string{"b", "c"} {
		v, err := items.Get(ctx, dtBase{ID: id}, Consistent())
		require.NoError(t, err)
		assert.Equal(t, want, v.TTL, id)
	}

	_, err = items.Put(ctx, dtBase{ID: "z", TTL: 99})
	require.NoError(t, err)
	raw, err := tbl.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: map[string]typesAV{"PK": sAV("DTB#z"), "SK": sAV("DTB")}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	require.NotNil(t, raw.Item)
	assert.NotContains(t, raw.Item, "ttl", "a zero base: no ttl, the item does not expire")
}

func TestDerivedTTLSkipExpired(t *testing.T) {
	clock := &dtClock{t: dtStart}
	tbl, _ := newTestTable(t, WithClock(clock.now))
	items := MustRegister[dtCreated](tbl)
	ctx := context.Background()
	_, err := items.Create(ctx, dtCreated{ID: "a"})
	require.NoError(t, err)

	_, err = items.Get(ctx, dtCreated{ID: "a"}, SkipExpired())
	require.NoError(t, err)
	clock.set(dtStart.Add(30 * 24 * time.Hour))
	_, err = items.Get(ctx, dtCreated{ID: "a"}, SkipExpired())
	require.ErrorIs(t, err, ErrNotFound, "past the derived ttl, SkipExpired leaves the item out")
	page, err := items.Scan(ctx, SkipExpired(), Consistent())
	require.NoError(t, err)
	assert.Empty(t, page.Items)
}

func TestDerivedTTLRegisterRefusals(t *testing.T) {
	type unknownFrom struct {
		_   struct{} `PK:"X#{id}" SK:"X"`
		ID  string   `dynamodbav:"id"`
		TTL int64    `dynamodbav:"ttl" singletable:"ttl,from=createdAtt,after=1h"`
	}
	type stringFrom struct {
		_    struct{} `PK:"X#{id}" SK:"X"`
		ID   string   `dynamodbav:"id"`
		Base string   `dynamodbav:"base"`
		TTL  int64    `dynamodbav:"ttl" singletable:"ttl,from=base,after=1h"`
	}
	type badAfter struct {
		_    struct{}  `PK:"X#{id}" SK:"X"`
		ID   string    `dynamodbav:"id"`
		Base time.Time `dynamodbav:"base"`
		TTL  int64     `dynamodbav:"ttl" singletable:"ttl,from=base,after=-1h"`
	}
	type noAfter struct {
		_    struct{}  `PK:"X#{id}" SK:"X"`
		ID   string    `dynamodbav:"id"`
		Base time.Time `dynamodbav:"base"`
		TTL  int64     `dynamodbav:"ttl" singletable:"ttl,from=base,after=soon"`
	}
	type wrongTTL struct {
		_    struct{}  `PK:"X#{id}" SK:"X"`
		ID   string    `dynamodbav:"id"`
		Base time.Time `dynamodbav:"base"`
		TTL  string    `dynamodbav:"ttl" singletable:"ttl,from=base,after=1h"`
	}
	check := func(err error, field string) {
		t.Helper()
		var ee *EntityError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, field, ee.Field)
		assert.ErrorIs(t, err, ErrInvalidEntity)
	}
	_, err := Register[unknownFrom](offlineTable(t))
	check(err, "TTL")
	assert.ErrorContains(t, err, "createdAtt")
	_, err = Register[stringFrom](offlineTable(t))
	check(err, "TTL")
	_, err = Register[badAfter](offlineTable(t))
	check(err, "TTL")
	_, err = Register[noAfter](offlineTable(t))
	check(err, "TTL")
	_, err = Register[wrongTTL](offlineTable(t))
	check(err, "TTL")
	_, err = Register[dtCreated](offlineTable(t), DeriveTTL("createdAt", time.Hour))
	check(err, "TTL")
	assert.ErrorContains(t, err, "give one")
	_, err = Register[dtBase](offlineTable(t), DeriveTTL("expiresFrom", 0))
	check(err, "TTL")
	type noTTL struct {
		_  struct{} `PK:"X#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err = Register[noTTL](offlineTable(t), DeriveTTL("id", time.Hour))
	require.ErrorIs(t, err, ErrInvalidEntity)
}
