package singletable

import (
	"context"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
)

type genOrder struct {
	_     struct{} `PK:"ORDER#{id}" SK:"ORDER"`
	ID    string   `dynamodbav:"id" singletable:"generate=ulid"`
	Total int      `dynamodbav:"total"`
}

type genEvent struct {
	_    struct{} `PK:"EVT#{stream}" SK:"E#{id}"`
	Str  string   `dynamodbav:"stream"`
	ID   string   `dynamodbav:"id" singletable:"generate=uuidv7"`
	Note string   `dynamodbav:"note,omitempty"`
}

type genDoc struct {
	_   struct{} `PK:"DOC#{name}" SK:"DOC"`
	Key string   `dynamodbav:"name"`
	Ref string   `dynamodbav:"ref,omitempty" singletable:"generate=uuidv7"`
	N   int      `dynamodbav:"n"`
}

func seeded(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return &syncReader{r: rand.NewChaCha8(s)} // explain.go: safe for concurrent use
}

var genClock = time.Date(2026, 5, 4, 3, 2, 1, 500_000_000, time.UTC)

func TestGeneratedIDFillsZeroAndKeepsGiven(t *testing.T) {
	tbl, _ := newTestTable(t, WithClock(func() time.Time { return genClock }))
	orders := MustRegister[genOrder](tbl)
	ctx := context.Background()

	got, err := orders.Create(ctx, genOrder{Total: 5})
	require.NoError(t, err)
	require.Len(t, got.ID, 26)
	id, err := ulid.ParseStrict(got.ID)
	require.NoError(t, err)
	assert.Equal(t, uint64(genClock.UnixMilli()), id.Time(), "the id's time is the table clock's")
	stored, err := orders.Get(ctx, genOrder{ID: got.ID}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, got, stored)

	given, err := orders.Put(ctx, genOrder{ID: "MINE", Total: 1})
	require.NoError(t, err)
	assert.Equal(t, "MINE", given.ID, "a given id is kept")

	_, err = orders.BatchPut(ctx, []genOrder{{Total: 7}, {Total: 8}})
	require.NoError(t, err)
	require.NoError(t, tbl.Transact(ctx, orders.TxCreate(genOrder{Total: 9})))
	var ids []string
	for o, err := range orders.ScanAll(ctx, Consistent()) {
		require.NoError(t, err)
		ids = append(ids, o.ID)
	}
	assert.Len(t, ids, 5, "BatchPut and TxCreate filled the ids: five distinct items")
}

func TestGeneratedIDMonotonicWithFixedClock(t *testing.T) {
	make := func(seed byte) []string {
		tbl := offlineTable(t, WithClock(func() time.Time { return genClock }), WithIDSource(seeded(seed)))
		orders := MustRegister[genOrder](tbl)
		var ids []string
		for range 1000 {
			v := genOrder{}
			w, err := orders.x.info.planPut(reflectValue(&v), kindCreate, writeOptions{}, nil)
			require.NoError(t, err)
			_ = w
			ids = append(ids, v.ID)
		}
		return ids
	}
	a, b := make(1), make(1)
	assert.Equal(t, a, b, "the same seed and clock give the same ids")
	assert.True(t, sort.StringsAreSorted(a), "ids of one entity increase within a millisecond")
	for i := 1; i < len(a); i++ {
		require.NotEqual(t, a[i-1], a[i])
	}
	assert.NotEqual(t, a, make(2))

	// Concurrent writers: distinct ids, every one at the clock's millisecond.
	tbl, _ := newTestTable(t, WithClock(func() time.Time { return genClock }), WithIDSource(seeded(3)))
	orders := MustRegister[genOrder](tbl)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 8 {
				o, err := orders.Create(context.Background(), genOrder{Total: g*100 + i})
				assert.NoError(t, err)
				mu.Lock()
				seen[o.ID] = true
				mu.Unlock()
				id, err := ulid.ParseStrict(o.ID)
				assert.NoError(t, err)
				assert.Equal(t, uint64(genClock.UnixMilli()), id.Time())
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, 64)
}

func TestGeneratedIDUUIDv7Layout(t *testing.T) {
	clock := genClock
	tbl, _ := newTestTable(t, WithClock(func() time.Time { return clock }))
	events := MustRegister[genEvent](tbl)
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		clock = genClock.Add(time.Duration(i/2) * time.Millisecond)
		e, err := events.Create(ctx, genEvent{Str: "s"})
		require.NoError(t, err)
		u, err := uuid.Parse(e.ID)
		require.NoError(t, err)
		assert.Equal(t, uuid.Version(7), u.Version())
		assert.Equal(t, uuid.RFC4122, u.Variant())
		ms := int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5])
		assert.Equal(t, clock.UnixMilli(), ms, "the first 48 bits are the clock's milliseconds")
		ids = append(ids, e.ID)
	}
	assert.True(t, sort.StringsAreSorted(ids), "ids sort as text by time")
	page, err := events.Query(ctx, genEvent{Str: "s"})
	require.NoError(t, err)
	require.Len(t, page.Items, 5)
	for i, e := range page.Items {
		assert.Equal(t, ids[i], e.ID, "a sort key of ids lists items in the order they were made")
	}
}

func TestGeneratedIDLostResponseSameID(t *testing.T) {
	tbl, inj := faultTable(t)
	orders := MustRegister[genOrder](tbl)
	ctx := context.Background()
	inj.Add(fault.Rule{Ops: []string{"PutItem"}, Fault: fault.LoseResponse(), Times: 2})
	got, err := orders.Create(ctx, genOrder{Total: 3})
	require.NoError(t, err, "a Create whose answer was lost is judged by its receipt")
	require.NotEmpty(t, got.ID)
	var all []genOrder
	for o, err := range orders.ScanAll(ctx, Consistent()) {
		require.NoError(t, err)
		all = append(all, o)
	}
	require.Len(t, all, 1, "resent with the same id: one item")
	assert.Equal(t, got.ID, all[0].ID)
}

func TestGeneratedIDTransactWithTokenReplans(t *testing.T) {
	tbl, _ := newTestTable(t)
	orders := MustRegister[genOrder](tbl)
	ctx := context.Background()
	token, err := newToken() // DynamoDB Local keeps tokens for every table: one of this run's
	require.NoError(t, err)
	o := TxOptions{Token: token, At: genClock}
	require.NoError(t, tbl.TransactWith(ctx, o, orders.TxCreate(genOrder{Total: 1})))
	require.NoError(t, tbl.TransactWith(ctx, o, orders.TxCreate(genOrder{Total: 1})), "planned again, the same ids: no token mismatch")
	n := 0
	for _, err := range orders.ScanAll(ctx, Consistent()) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)

	err = tbl.TransactWith(ctx, TxOptions{Token: token[:20]}, orders.TxCreate(genOrder{Total: 1}))
	require.ErrorIs(t, err, ErrInvalidInput, "a token without At cannot make the same ids again")
}

func TestGeneratedIDNonKeyKeptOnPutAndUpsert(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs := MustRegister[genDoc](tbl)
	ctx := context.Background()
	first, err := docs.Put(ctx, genDoc{Key: "a"})
	require.NoError(t, err)
	require.NotEmpty(t, first.Ref)
	again, err := docs.Put(ctx, genDoc{Key: "a", N: 2})
	require.NoError(t, err)
	assert.Equal(t, first.Ref, again.Ref, "a Put with the field zero keeps the stored id, and returns it")
	stored, err := docs.Get(ctx, genDoc{Key: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, again, stored)

	up, err := docs.Update(ctx, genDoc{Key: "b"}, Set("n", 1), Upsert())
	require.NoError(t, err)
	require.NotEmpty(t, up.Ref, "an Upsert creating the item stores an id")
	up2, err := docs.Update(ctx, genDoc{Key: "b"}, Set("n", 2), Upsert())
	require.NoError(t, err)
	assert.Equal(t, up.Ref, up2.Ref, "if_not_exists: the stored id stays")
}

func TestGeneratedIDRegisterRefusals(t *testing.T) {
	type notString struct {
		_  struct{} `PK:"X#{id}" SK:"X"`
		ID int      `dynamodbav:"id" singletable:"generate=ulid"`
	}
	type withDefault struct {
		_  struct{} `PK:"X#{id}" SK:"X"`
		ID string   `dynamodbav:"id" singletable:"generate=ulid,default=x"`
	}
	type unknownKind struct {
		_  struct{} `PK:"X#{id}" SK:"X"`
		ID string   `dynamodbav:"id" singletable:"generate=uuidv4"`
	}
	type uuidDash struct {
		_  struct{} `PK:"X-{id}" SK:"X"`
		ID string   `dynamodbav:"id" singletable:"generate=uuidv7"`
	}
	check := func(err error, field string) {
		t.Helper()
		var ee *EntityError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, field, ee.Field)
		assert.ErrorIs(t, err, ErrInvalidEntity)
	}
	_, err := Register[notString](offlineTable(t))
	check(err, "ID")
	_, err = Register[withDefault](offlineTable(t))
	check(err, "ID")
	_, err = Register[unknownKind](offlineTable(t))
	check(err, "ID")
	_, err = Register[uuidDash](offlineTable(t, WithDelimiter('-')))
	check(err, "ID")
	assert.ErrorContains(t, err, "delimiter")
	_, err = Register[uuidDash](offlineTable(t))
	require.NoError(t, err, "with '#' the UUID fits the key")
	_, err = NewTable(offlineTable(t).client, "x", WithIDSource(nil))
	require.ErrorIs(t, err, ErrInvalidInput)
}
