package singletable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type vCounter struct {
	_       struct{} `Type:"Counter" PK:"CTR#{id}" SK:"CTR" GSI1PK:"NAME#{name}" GSI1SK:"CTR#{id}"`
	ID      string   `dynamodbav:"id"`
	Name    string   `dynamodbav:"name,omitempty"`
	N       int      `dynamodbav:"n"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

type vSmall struct {
	_       struct{} `Type:"Small" PK:"SMALL#{id}" SK:"S"`
	ID      string   `dynamodbav:"id"`
	Version int8     `dynamodbav:"v" singletable:"version"`
}

type vUnsigned struct {
	_       struct{} `Type:"Unsigned" PK:"U#{id}" SK:"U"`
	ID      string   `dynamodbav:"id"`
	Version uint64   `dynamodbav:"v" singletable:"version"`
}

func asConflict(t *testing.T, err error) *ConflictError {
	t.Helper()
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorIs(t, err, ErrCondition)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	return ce
}

func TestVersionedPutUpdateDelete(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()

	in := vCounter{ID: "a", N: 1}
	v1, err := counters.Put(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, int64(1), v1.Version, "a new item gets version 1")
	assert.Equal(t, int64(0), in.Version, "the argument is not modified")
	raw := rawItem(t, tbl, "CTR#a", "CTR")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1"}, raw["version"])
	assert.Contains(t, raw, "_wr1", "the write's receipt is stored in the slot of its version")

	ce := asConflict(t, second(counters.Put(ctx, in)))
	assert.Equal(t, uint64(0), ce.Expected)
	assert.True(t, ce.CurrentKnown)
	assert.Equal(t, uint64(1), ce.Current, "version 0 is not taken as new when an item exists")
	assert.False(t, ce.Missing)
	assert.Equal(t, "vCounter", ce.Entity)
	assert.Equal(t, "CTR#a", ce.Key["PK"])

	v1.N = 2
	v2, err := counters.Put(ctx, v1)
	require.NoError(t, err)
	assert.Equal(t, int64(2), v2.Version)
	ce = asConflict(t, second(counters.Put(ctx, v1)))
	assert.Equal(t, uint64(1), ce.Expected)
	assert.Equal(t, uint64(2), ce.Current)

	v3, err := counters.Update(ctx, v2, Set("n", 3))
	require.NoError(t, err)
	assert.Equal(t, vCounter{ID: "a", N: 3, Version: 3}, v3)
	ce = asConflict(t, second(counters.Update(ctx, v2, Set("n", 4))))
	assert.Equal(t, uint64(3), ce.Current)
	ce = asConflict(t, second(counters.Update(ctx, vCounter{ID: "a"}, Set("n", 4))))
	assert.Equal(t, uint64(0), ce.Expected, "version 0: an item without a version; this one has 3")
	assert.Equal(t, uint64(3), ce.Current)
	_, err = counters.Update(ctx, v3, Set("version", 9))
	assert.ErrorIs(t, err, ErrInvalidInput)
	ce = asConflict(t, second(counters.Update(ctx, vCounter{ID: "nope", Version: 1}, Set("n", 1))))
	assert.True(t, ce.Missing)
	assert.ErrorIs(t, ce, ErrNotFound)

	// A user condition that fails while the version holds is a condition failure, not a conflict.
	_, err = counters.Update(ctx, v3, Set("n", 5), If(expression.Name("n").Equal(expression.Value(99))))
	require.ErrorIs(t, err, ErrCondition)
	assert.NotErrorIs(t, err, ErrConflict)

	ce = asConflict(t, counters.Delete(ctx, vCounter{ID: "a"}))
	assert.Equal(t, uint64(3), ce.Current, "delete at version 0 of an item that has one")
	ce = asConflict(t, counters.Delete(ctx, v2))
	assert.Equal(t, uint64(3), ce.Current)
	require.NoError(t, counters.Delete(ctx, v3))
	ce = asConflict(t, counters.Delete(ctx, v3))
	assert.True(t, ce.Missing)

	// Create stores version 1 whatever the value holds, and refuses an existing item.
	c, err := counters.Create(ctx, vCounter{ID: "b", Version: 7})
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Version)
	_, err = counters.Create(ctx, vCounter{ID: "b"})
	require.ErrorIs(t, err, ErrAlreadyExists)
	assert.ErrorIs(t, err, ErrConflict)
}

func second[A, B any](_ A, b B) B { return b }

func TestClobber(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	v1, err := counters.Put(ctx, vCounter{ID: "a", N: 1})
	require.NoError(t, err)
	v2, err := counters.Put(ctx, v1)
	require.NoError(t, err)

	stale := v1
	stale.N = 100
	got, err := counters.Put(ctx, stale, Clobber())
	require.NoError(t, err)
	assert.Equal(t, int64(3), got.Version, "the version still moves, on the server")
	_, err = counters.Put(ctx, v2)
	asConflict(t, err) // the holder of version 2 sees the clobber

	got, err = counters.Update(ctx, vCounter{ID: "a"}, Set("n", 7), Clobber())
	require.NoError(t, err)
	assert.Equal(t, vCounter{ID: "a", N: 7, Version: 4}, got)
	require.NoError(t, counters.Delete(ctx, vCounter{ID: "a"}, Clobber()))
	_, err = counters.Get(ctx, vCounter{ID: "a"})
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestVersionEdgeCases(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	small := MustRegister[vSmall](tbl)
	unsigned := MustRegister[vUnsigned](tbl)
	ctx := context.Background()
	putRaw := func(id string, version types.AttributeValue) {
		item := map[string]types.AttributeValue{"PK": sAV("CTR#" + id), "SK": sAV("CTR"), "Type": sAV("Counter"), "id": sAV(id), "n": &types.AttributeValueMemberN{Value: "5"}}
		if version != nil {
			item["version"] = version
		}
		_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
		require.NoError(t, err)
	}

	t.Run("missing version", func(t *testing.T) {
		putRaw("legacy", nil)
		got, err := counters.Get(ctx, vCounter{ID: "legacy"})
		require.NoError(t, err)
		assert.Equal(t, int64(0), got.Version)
		putRaw("legacy2", nil)
		updated, err := counters.Update(ctx, vCounter{ID: "legacy2"}, Set("n", 6))
		require.NoError(t, err, "version 0 matches an item without a version")
		assert.Equal(t, int64(1), updated.Version)
		got.N = 6
		stored, err := counters.Put(ctx, got)
		require.NoError(t, err, "an item written before versioning counts as version 0")
		assert.Equal(t, int64(1), stored.Version)
	})
	t.Run("NULL version", func(t *testing.T) {
		putRaw("null", &types.AttributeValueMemberNULL{Value: true})
		got, err := counters.Get(ctx, vCounter{ID: "null"})
		require.NoError(t, err)
		assert.Equal(t, int64(0), got.Version)
		stored, err := counters.Put(ctx, got)
		require.NoError(t, err)
		assert.Equal(t, int64(1), stored.Version)
	})
	t.Run("wrong attribute type", func(t *testing.T) {
		putRaw("str", sAV("3"))
		_, err := counters.Get(ctx, vCounter{ID: "str"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Version", "the decode error names the field")
		ce := asConflict(t, second(counters.Put(ctx, vCounter{ID: "str", Version: 3})))
		assert.False(t, ce.CurrentKnown, "an unreadable version is reported as such")
		assert.Contains(t, ce.Error(), "unreadable")
	})
	t.Run("maximum value", func(t *testing.T) {
		_, err := small.Put(ctx, vSmall{ID: "x", Version: 127})
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "overflow")
		s, err := small.Put(ctx, vSmall{ID: "x"})
		require.NoError(t, err)
		assert.Equal(t, int8(1), s.Version)
		_, err = unsigned.Put(ctx, vUnsigned{ID: "x", Version: 1<<64 - 1})
		require.ErrorIs(t, err, ErrInvalidInput)
		_, err = small.Put(ctx, vSmall{ID: "neg", Version: -1})
		require.ErrorIs(t, err, ErrInvalidInput)
	})
}

type badVersion struct {
	_  struct{} `PK:"B#{id}" SK:"B"`
	ID string   `dynamodbav:"id"`
	V  string   `dynamodbav:"v" singletable:"version"`
}

type twoVersions struct {
	_  struct{} `PK:"B#{id}" SK:"B"`
	ID string   `dynamodbav:"id"`
	V  int      `dynamodbav:"v" singletable:"version"`
	W  int      `dynamodbav:"w" singletable:"version"`
}

type keyVersion struct {
	_  struct{} `PK:"B#{id}" SK:"B#{v}"`
	ID string   `dynamodbav:"id"`
	V  int      `dynamodbav:"v" singletable:"version"`
}

func TestVersionFieldRegistration(t *testing.T) {
	tbl := offlineTable(t)
	for name, f := range map[string]func() error{
		"string version": func() error { _, err := Register[badVersion](tbl); return err },
		"two versions":   func() error { _, err := Register[twoVersions](tbl); return err },
		"key version":    func() error { _, err := Register[keyVersion](tbl); return err },
	} {
		err := f()
		assert.ErrorIs(t, err, ErrInvalidEntity, name)
	}
}

func TestMutateConcurrentIncrements(t *testing.T) {
	t.Parallel() // owns its table, and is slow by its volume of writes: runs beside the other such tests
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	const writers, each = 32, 50
	retry := RetryBackoff(Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond, MaxAttempts: 10_000})
	for _, err := range hotMutate(writers, each, true, func() error {
		_, err := counters.Mutate(ctx, vCounter{ID: "hot"}, func(c *vCounter) error {
			c.N++
			return nil
		}, retry)
		return err
	}) {
		require.NoError(t, err)
	}
	got, err := counters.Get(ctx, vCounter{ID: "hot"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, writers*each, got.N, "no lost update")
	assert.Equal(t, int64(writers*each), got.Version, "one version per increment (the first creates version 1)")
}

func TestMutateErrors(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	plain := MustRegister[tOrder](tbl)
	ctx := context.Background()
	boom := errors.New("boom")
	_, err := counters.Mutate(ctx, vCounter{ID: "m"}, func(*vCounter) error { return boom })
	require.ErrorIs(t, err, boom)
	_, err = counters.Get(ctx, vCounter{ID: "m"})
	require.ErrorIs(t, err, ErrNotFound, "nothing was written")
	_, err = counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.ID = "other"; return nil })
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.Version = 9; return nil })
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = plain.Mutate(ctx, tOrder{CustomerID: "c", OrderID: "o"}, func(*tOrder) error { return nil })
	assert.ErrorIs(t, err, ErrInvalidInput, "Mutate needs a version")
}

func TestTransactionsApplyVersionRules(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	a, err := counters.Put(ctx, vCounter{ID: "a"})
	require.NoError(t, err)
	b, err := counters.Put(ctx, vCounter{ID: "b"})
	require.NoError(t, err)

	a2 := a
	a2.N = 1
	require.NoError(t, tbl.Transact(ctx, counters.TxPut(a2), counters.TxUpdate(b, Set("n", 1))))
	got, err := counters.Get(ctx, vCounter{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Version)

	for name, item := range map[string]TxItem{
		"stale put":    counters.TxPut(a2),
		"stale update": counters.TxUpdate(b, Set("n", 2)),
		"stale delete": counters.TxDelete(a),
	} {
		err := tbl.Transact(ctx, item, counters.TxPut(vCounter{ID: "c-" + name}))
		require.ErrorIs(t, err, ErrConflict, name)
		var txe *TxError
		require.ErrorAs(t, err, &txe)
		require.Len(t, txe.Reasons, 1)
		require.NotNil(t, txe.Reasons[0].Conflict, name)
		assert.Equal(t, uint64(2), txe.Reasons[0].Conflict.Current, name)
		_, err = counters.Get(ctx, vCounter{ID: "c-" + name})
		assert.ErrorIs(t, err, ErrNotFound, "%s: the transaction was rolled back", name)
	}
	err = tbl.Transact(ctx, counters.TxUpdate(vCounter{ID: "a"}, Set("n", 3)))
	assert.ErrorIs(t, err, ErrConflict, "a transactional update at version 0 of an item that has one")
}

// TestTransactionalIncrements runs 16 writers that each read a counter and write it
// back in a transaction with a version condition, retrying on conflict.
func TestTransactionalIncrements(t *testing.T) {
	t.Parallel() // owns its table, and is slow by its volume of writes: runs beside the other such tests
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	_, err := counters.Put(ctx, vCounter{ID: "tx"})
	require.NoError(t, err)
	const writers, each = 16, 100
	b := Backoff{Base: time.Millisecond, Cap: 20 * time.Millisecond}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				for attempt := 1; ; attempt++ {
					cur, err := counters.Get(ctx, vCounter{ID: "tx"}, Consistent())
					if err != nil {
						errs <- err
						return
					}
					next := cur
					next.N++
					err = tbl.Transact(ctx, counters.TxPut(next), counters.TxPut(vCounter{ID: "log-" + itoa(w) + "-" + itoa(i)}))
					if err == nil {
						break
					}
					if !errors.Is(err, ErrConflict) {
						errs <- err
						return
					}
					_ = b.Wait(ctx, min(attempt, 6))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := counters.Get(ctx, vCounter{ID: "tx"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, writers*each, got.N, "no lost update")
	assert.Equal(t, int64(writers*each+1), got.Version)
}

// hotMutate is the hot-item setup of the Mutate tests: writers goroutines each
// call inc (a Mutate of one item) each times, at once. It returns the errors
// they got: every one, or with firstOnly each writer's first (it stops there).
func hotMutate(writers, each int, firstOnly bool, inc func() error) []error {
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Go(func() {
			for range each {
				if err := inc(); err != nil {
					errs <- err
					if firstOnly {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return all
}

// TestMutateFunctionKeepsItsValue: the value Mutate hands its function is the
// function's own: what it keeps is not cleared when Mutate fails, and the value
// Mutate returns is a copy of it.
func TestMutateFunctionKeepsItsValue(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	_, err := counters.Put(ctx, vCounter{ID: "keep"})
	require.NoError(t, err)
	boom := errors.New("boom")
	var kept *vCounter
	_, err = counters.Mutate(ctx, vCounter{ID: "keep"}, func(c *vCounter) error {
		c.N = 99
		kept = c
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 99, kept.N, "what the function kept after its error")
	got, err := counters.Mutate(ctx, vCounter{ID: "keep"}, func(c *vCounter) error {
		c.N = 7
		kept = c
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 7, got.N)
	kept.N = 8
	assert.Equal(t, 7, got.N, "the value returned is a copy")
}
