package singletable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
	"github.com/singletable/singletable/internal/uniqueguard"
)

type uUser struct {
	_     struct{} `Type:"User" PK:"USER#{id}" SK:"PROFILE"`
	ID    string   `dynamodbav:"id"`
	Email string   `dynamodbav:"email,omitempty" singletable:"unique"`
	Name  string   `dynamodbav:"name"`
}

type uAccount struct {
	_     struct{} `Type:"Account" PK:"ACC#{id}" SK:"ACC" singletable:"unique=orgId+slug"`
	ID    string   `dynamodbav:"id"`
	OrgID int      `dynamodbav:"orgId,omitempty"`
	Slug  string   `dynamodbav:"slug,omitempty"`
}

type uNote struct {
	_    struct{} `Type:"Note" PK:"USER#{owner}" SK:"NOTE#{id}"`
	Own  string   `dynamodbav:"owner"`
	ID   string   `dynamodbav:"id"`
	Text string   `dynamodbav:"text"`
}

// guardsOf returns the guard items in the table, read raw, by the value their
// _values list holds (as text).
func guardsOf(t *testing.T, tbl *Table) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(tbl.client, &dynamodb.ScanInput{TableName: aws.String(tbl.name), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if typ, _ := it[tbl.opts.TypeAttribute].(*types.AttributeValueMemberS); typ == nil || typ.Value != uniqueguard.Type {
				continue
			}
			vs := it[uniqueguard.Values].(*types.AttributeValueMemberL).Value
			out[uniqueguard.ValuesText(vs)] = it
		}
	}
	return out
}

func ownerOf(g map[string]types.AttributeValue) string {
	if g == nil {
		return ""
	}
	return g[uniqueguard.Owner].(*types.AttributeValueMemberS).Value
}

func TestUniqueCreateWritesGuardInvisibleToReads(t *testing.T) {
	tbl, client := newTestTable(t)
	users := MustRegister[uUser](tbl)
	notes := MustRegister[uNote](tbl)
	ctx := context.Background()

	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io", Name: "Ann"})
	require.NoError(t, err)
	_, err = notes.Put(ctx, uNote{Own: "1", ID: "n1", Text: "hi"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, client.count("TransactWriteItems"), "a unique Create is one transaction")
	assert.EqualValues(t, 0, client.count("PutItem")-1, "and no PutItem of its own (the one PutItem is the note's)")

	guards := guardsOf(t, tbl)
	require.Len(t, guards, 1)
	g := guards["a@x.io"]
	require.NotNil(t, g)
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g))
	pk := g[tbl.opts.PartitionKey].(*types.AttributeValueMemberS).Value
	assert.Regexp(t, `^#singletable#unique#User#email#[0-9a-f]{64}$`, pk, "the guard key names type and constraint and hashes the value")

	// Invisible to every read path.
	var all []any
	for v, err := range tbl.ScanAll(ctx) { // OnUnknown's default is an error for unknown types
		require.NoError(t, err)
		all = append(all, v)
	}
	assert.Len(t, all, 2, "the user and the note, never the guard")
	page, err := tbl.Scan(ctx, OnUnknown(UnknownCollect))
	require.NoError(t, err)
	for _, it := range page.Items {
		_, raw := it.(RawItem)
		assert.False(t, raw, "a guard is not an unknown item")
	}
	n, err := tbl.ScanCount(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, n.Items)
	us, err := users.Scan(ctx)
	require.NoError(t, err)
	assert.Len(t, us.Items, 1)
	c, err := users.ScanCount(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Items)
	q, err := tbl.Query(ctx, uUser{ID: "1"})
	require.NoError(t, err)
	assert.Len(t, q.Items, 2, "the user's collection: the user and the note")
	decoded, err := tbl.Decode(g)
	require.NoError(t, err)
	assert.Nil(t, decoded, "Decode passes a guard over")
	got, err := users.Get(ctx, uUser{ID: "1"})
	require.NoError(t, err)
	assert.Equal(t, "a@x.io", got.Email)
}

func TestUniqueConcurrentClaimOneWins(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	const n = 16
	var wins atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = users.Create(ctx, uUser{ID: fmt.Sprint("c", i), Email: "same@x.io"})
			if errs[i] == nil {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, wins.Load(), "exactly one writer claims the value: %v", errs)
	for _, err := range errs {
		if err == nil {
			continue
		}
		require.ErrorIs(t, err, ErrNotUnique)
		require.ErrorIs(t, err, ErrAlreadyExists)
		var ue *UniqueError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, "uUser", ue.Entity)
		assert.Equal(t, []string{"Email"}, ue.Fields)
		assert.Equal(t, []string{"same@x.io"}, ue.Values)
		assert.Contains(t, err.Error(), "uUser.Email")
	}
	c, err := users.ScanCount(ctx, Consistent())
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Items, "one user")
	assert.Len(t, guardsOf(t, tbl), 1, "one guard")
}

func TestUniqueErrorNamesHolder(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
	require.NoError(t, err)
	_, err = users.Put(ctx, uUser{ID: "2", Email: "a@x.io"})
	var ue *UniqueError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, map[string]string{"PK": "USER#1", "SK": "PROFILE"}, ue.Owner)
	assert.False(t, errors.Is(err, ErrAmbiguous))
	_, err = users.Get(ctx, uUser{ID: "2"}, Consistent())
	require.ErrorIs(t, err, ErrNotFound, "nothing written")
}

func TestUniqueUpdatePutMutateMoveGuard(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io", Name: "Ann"})
	require.NoError(t, err)
	_, err = users.Create(ctx, uUser{ID: "2", Email: "b@x.io", Name: "Bob"})
	require.NoError(t, err)

	// Update Set moves the guard and returns the item.
	got, err := users.Update(ctx, uUser{ID: "1"}, Set("email", "c@x.io"))
	require.NoError(t, err)
	assert.Equal(t, "c@x.io", got.Email)
	assert.Equal(t, "Ann", got.Name, "the item as stored after the transaction")
	g := guardsOf(t, tbl)
	assert.Nil(t, g["a@x.io"], "the old value is freed")
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g["c@x.io"]))
	_, err = users.Create(ctx, uUser{ID: "3", Email: "a@x.io"})
	require.NoError(t, err, "a freed value can be claimed")

	// Update to a taken value: refused, nothing changed.
	_, err = users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io"))
	require.ErrorIs(t, err, ErrNotUnique)
	cur, err := users.Get(ctx, uUser{ID: "1"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "c@x.io", cur.Email)
	g = guardsOf(t, tbl)
	assert.Equal(t, `["USER#2","PROFILE"]`, ownerOf(g["b@x.io"]))
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g["c@x.io"]))

	// An Update that does not touch the value is a plain UpdateItem.
	_, err = users.Update(ctx, uUser{ID: "1"}, Set("name", "Anna"))
	require.NoError(t, err)

	// Update Remove frees it; Add and SetIfNotExists are refused.
	_, err = users.Update(ctx, uUser{ID: "1"}, Remove("email"))
	require.NoError(t, err)
	assert.Nil(t, guardsOf(t, tbl)["c@x.io"])
	_, err = users.Update(ctx, uUser{ID: "1"}, SetIfNotExists("email", "z@x.io"))
	require.ErrorIs(t, err, ErrInvalidInput)

	// Put moves it (reading the stored value), and a Put of the same value
	// claims it again.
	_, err = users.Put(ctx, uUser{ID: "1", Email: "d@x.io", Name: "Anna"})
	require.NoError(t, err)
	_, err = users.Put(ctx, uUser{ID: "1", Email: "e@x.io", Name: "Anna"})
	require.NoError(t, err)
	_, err = users.Put(ctx, uUser{ID: "1", Email: "e@x.io", Name: "Anna B"})
	require.NoError(t, err)
	g = guardsOf(t, tbl)
	assert.Nil(t, g["d@x.io"])
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g["e@x.io"]))
	_, err = users.Put(ctx, uUser{ID: "1", Email: "b@x.io"})
	require.ErrorIs(t, err, ErrNotUnique)

	// An Upsert claims a new item's value.
	_, err = users.Update(ctx, uUser{ID: "9"}, Set("email", "g@x.io"), Upsert())
	require.NoError(t, err)
	g = guardsOf(t, tbl)
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g["e@x.io"]))
	assert.Equal(t, `["USER#9","PROFILE"]`, ownerOf(g["g@x.io"]))
	assert.Len(t, g, 4, "a, b, e, g and nothing else: %v", g)
}

type uVUser struct {
	_       struct{} `Type:"VUser" PK:"VUSER#{id}" SK:"PROFILE"`
	ID      string   `dynamodbav:"id"`
	Handle  string   `dynamodbav:"handle,omitempty" singletable:"unique"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

func TestUniqueVersionedMutateAndConflicts(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uVUser](tbl)
	ctx := context.Background()
	u, err := users.Create(ctx, uVUser{ID: "1", Handle: "ann"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, u.Version)
	m, err := users.Mutate(ctx, uVUser{ID: "1"}, func(u *uVUser) error { u.Handle = "anna"; return nil })
	require.NoError(t, err)
	assert.Equal(t, "anna", m.Handle)
	assert.EqualValues(t, 2, m.Version)
	g := guardsOf(t, tbl)
	assert.Nil(t, g["ann"])
	assert.NotNil(t, g["anna"])
	// A stale version: a conflict, nothing moved.
	_, err = users.Put(ctx, uVUser{ID: "1", Handle: "bob", Version: 1})
	require.ErrorIs(t, err, ErrConflict)
	g = guardsOf(t, tbl)
	assert.Nil(t, g["bob"])
	assert.NotNil(t, g["anna"])
	p, err := users.Put(ctx, m)
	require.NoError(t, err)
	assert.EqualValues(t, 3, p.Version)
	up, err := users.Update(ctx, uVUser{ID: "1", Version: 3}, Set("handle", "carl"))
	require.NoError(t, err)
	assert.EqualValues(t, 4, up.Version)
	assert.Equal(t, "carl", up.Handle)
	require.NoError(t, users.Delete(ctx, up))
	assert.Empty(t, guardsOf(t, tbl))
}

func TestUniqueDeleteFreesValue(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
	require.NoError(t, err)
	require.NoError(t, users.Delete(ctx, uUser{ID: "1"}), "by key only: the stored value is read")
	assert.Empty(t, guardsOf(t, tbl))
	require.NoError(t, users.Delete(ctx, uUser{ID: "1"}), "deleting a missing item still succeeds")
	_, err = users.Create(ctx, uUser{ID: "2", Email: "a@x.io"})
	require.NoError(t, err, "the value is free again")

	// Zero values claim nothing: two users without an email.
	_, err = users.Create(ctx, uUser{ID: "3"})
	require.NoError(t, err)
	_, err = users.Create(ctx, uUser{ID: "4"})
	require.NoError(t, err)
	assert.Len(t, guardsOf(t, tbl), 1)
}

func TestUniqueCompositeConstraint(t *testing.T) {
	tbl, _ := newTestTable(t)
	accounts := MustRegister[uAccount](tbl)
	ctx := context.Background()
	_, err := accounts.Create(ctx, uAccount{ID: "a", OrgID: 1, Slug: "abc"})
	require.NoError(t, err)
	_, err = accounts.Create(ctx, uAccount{ID: "b", OrgID: 1, Slug: "abc"})
	require.ErrorIs(t, err, ErrNotUnique, "the same pair is refused")
	var ue *UniqueError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "orgId+slug", ue.Constraint)
	assert.Equal(t, []string{"OrgID", "Slug"}, ue.Fields)
	assert.Equal(t, []string{"1", "abc"}, ue.Values)
	_, err = accounts.Create(ctx, uAccount{ID: "c", OrgID: 2, Slug: "abc"})
	require.NoError(t, err, "another org")
	_, err = accounts.Create(ctx, uAccount{ID: "d", OrgID: 1, Slug: "xyz"})
	require.NoError(t, err, "another slug")
	_, err = accounts.Create(ctx, uAccount{ID: "e", Slug: "abc"})
	require.NoError(t, err, "a pair with a zero part claims nothing")
	// Changing one part moves the pair's guard.
	_, err = accounts.Update(ctx, uAccount{ID: "d"}, Set("slug", "abc"))
	require.ErrorIs(t, err, ErrNotUnique)
	_, err = accounts.Update(ctx, uAccount{ID: "d"}, Set("orgId", 3), Set("slug", "abc"))
	require.NoError(t, err)
	g := guardsOf(t, tbl)
	assert.Nil(t, g["1+xyz"])
	assert.NotNil(t, g["3+abc"])
	assert.Len(t, g, 3)
}

func TestUniqueBatchWritesRefused(t *testing.T) {
	tbl, client := newTestTable(t)
	users := MustRegister[uUser](tbl)
	notes := MustRegister[uNote](tbl)
	ctx := context.Background()
	_, err := users.BatchPut(ctx, []uUser{{ID: "1", Email: "a@x.io"}})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "email")
	left, err := users.BatchDelete(ctx, []uUser{{ID: "1"}})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Len(t, left, 1)
	_, err = tbl.BatchWrite(ctx, notes.BatchPutItem(uNote{Own: "1", ID: "n"}), users.BatchPutItem(uUser{ID: "1", Email: "a@x.io"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = tbl.BatchWrite(ctx, users.BatchDeleteItem(uUser{ID: "1"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "unique")
	assert.EqualValues(t, 0, client.count("BatchWriteItem"), "refused before anything is sent")
}

func TestUniqueTransactActions(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	notes := MustRegister[uNote](tbl)
	ctx := context.Background()
	require.NoError(t, tbl.Transact(ctx, users.TxCreate(uUser{ID: "1", Email: "a@x.io"}), notes.TxPut(uNote{Own: "1", ID: "n"})))
	assert.NotNil(t, guardsOf(t, tbl)["a@x.io"])

	err := tbl.Transact(ctx, users.TxCreate(uUser{ID: "2", Email: "a@x.io"}), notes.TxPut(uNote{Own: "2", ID: "n"}))
	require.ErrorIs(t, err, ErrNotUnique)
	var txe *TxError
	require.ErrorAs(t, err, &txe)
	require.Len(t, txe.Reasons, 1)
	assert.Equal(t, "Unique", txe.Reasons[0].Op)
	require.NotNil(t, txe.Reasons[0].Unique)
	assert.Equal(t, []string{"Email"}, txe.Reasons[0].Unique.Fields)

	// TxPut of the same value (or a new item) is fine; of another value it fails.
	require.NoError(t, tbl.Transact(ctx, users.TxPut(uUser{ID: "1", Email: "a@x.io", Name: "Ann"})))
	err = tbl.Transact(ctx, users.TxPut(uUser{ID: "1", Email: "b@x.io"}))
	require.ErrorIs(t, err, ErrCondition)
	assert.Contains(t, err.Error(), "TxPut cannot move a unique value")

	// TxUpdate and TxDelete take the stored value from the key value.
	err = tbl.Transact(ctx, users.TxUpdate(uUser{ID: "1"}, Set("email", "b@x.io")))
	require.ErrorIs(t, err, ErrCondition, "the key value lacks the stored email")
	require.NoError(t, tbl.Transact(ctx, users.TxUpdate(uUser{ID: "1", Email: "a@x.io"}, Set("email", "b@x.io"))))
	g := guardsOf(t, tbl)
	assert.Nil(t, g["a@x.io"])
	assert.NotNil(t, g["b@x.io"])
	require.NoError(t, tbl.Transact(ctx, users.TxDelete(uUser{ID: "1", Email: "b@x.io"})))
	assert.Empty(t, guardsOf(t, tbl))

	// The guards count toward the 100 actions.
	items := make([]TxItem, 0, 60)
	for i := range 60 {
		items = append(items, users.TxCreate(uUser{ID: fmt.Sprint("m", i), Email: fmt.Sprint(i, "@x.io")}))
	}
	err = tbl.Transact(ctx, items...)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "120")
}

type uUserV1 struct {
	_     struct{} `Type:"MUser" PK:"MUSER#{id}" SK:"PROFILE"`
	ID    string   `dynamodbav:"id"`
	Email string   `dynamodbav:"email,omitempty" singletable:"unique"`
}

func TestUniqueMigrationChangingValueNotWrittenBack(t *testing.T) {
	tbl, _ := newTestTable(t)
	var reported []error
	var mu sync.Mutex
	users := MustRegister[uUserV1](tbl, Migrations(Migration[uUserV1]{
		Steps:     []Step[uUserV1]{{Typed: func(u *uUserV1) error { u.Email = "lower-" + u.Email; return nil }}},
		WriteBack: WriteBackSync,
		OnError:   func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() },
	}))
	ctx := context.Background()
	// An item at schema 1, written raw.
	_, err := tbl.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.name), Item: map[string]types.AttributeValue{
		"PK": sAV("MUSER#1"), "SK": sAV("PROFILE"), tbl.opts.TypeAttribute: sAV("MUser"), "id": sAV("1"), "email": sAV("A@x.io"),
		tbl.opts.SchemaAttribute: &types.AttributeValueMemberN{Value: "1"}}})
	require.NoError(t, err)
	got, err := users.Get(ctx, uUserV1{ID: "1"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "lower-A@x.io", got.Email, "migrated in memory")
	mu.Lock()
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], ErrInvalidInput)
	mu.Unlock()
	out, err := tbl.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.name), Key: map[string]types.AttributeValue{"PK": sAV("MUSER#1"), "SK": sAV("PROFILE")}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, sAV("A@x.io"), out.Item["email"], "not written back")
}

// hookClient runs after, once, after the first TransactWriteItems that fails:
// another writer between a lost answer and its judgement.
type hookClient struct {
	ItemClient
	once  sync.Once
	after func()
}

func (h *hookClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := h.ItemClient.TransactWriteItems(ctx, in, o...)
	if err != nil && h.after != nil {
		h.once.Do(h.after)
	}
	return out, err
}

func TestUniqueLostResponses(t *testing.T) {
	ctx := context.Background()
	t.Run("resent under the same token", func(t *testing.T) {
		tbl, inj := faultTable(t)
		users := MustRegister[uUser](tbl)
		for _, op := range []func() error{
			func() error { _, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io"}); return err },
			func() error { _, err := users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io")); return err },
			func() error { _, err := users.Put(ctx, uUser{ID: "1", Email: "c@x.io"}); return err },
			func() error { return users.Delete(ctx, uUser{ID: "1"}) },
		} {
			remove := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse(), Times: 2})
			require.NoError(t, op(), "applied once; the resend answered by its token")
			remove()
		}
		assert.Empty(t, guardsOf(t, tbl))
		_, err := users.Create(ctx, uUser{ID: "2", Email: "a@x.io"})
		require.NoError(t, err)
	})
	t.Run("judged by reading back", func(t *testing.T) {
		tbl, inj := faultTable(t, WithBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 1}))
		users := MustRegister[uUser](tbl)
		remove := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse()})
		u, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io", Name: "Ann"})
		require.NoError(t, err, "its receipt proves it landed")
		assert.Equal(t, "a@x.io", u.Email)
		got, err := users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io"))
		require.NoError(t, err, "its receipt proves it landed")
		assert.Equal(t, "b@x.io", got.Email)
		require.NoError(t, users.Delete(ctx, uUser{ID: "1"}), "item and guard gone")
		remove()
		assert.Empty(t, guardsOf(t, tbl))
	})
	t.Run("another writer in between", func(t *testing.T) {
		opts := WithBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 1})
		base, inj := faultTable(t, opts)
		plain := MustRegister[uUser](base)
		hc := &hookClient{ItemClient: base.client}
		tbl, err := NewTable(hc, base.name, testTableOptions, opts)
		require.NoError(t, err)
		users := MustRegister[uUser](tbl)
		var remove func()
		lose := func() { remove = inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse()}) }
		other := func(f func() error) func() {
			return func() {
				remove()
				require.NoError(t, f())
				lose()
			}
		}
		lose()
		// Create lost, then another writer replaces the item: unproven.
		hc.after = other(func() error { _, err := plain.Put(ctx, uUser{ID: "1", Email: "a@x.io", Name: "other"}); return err })
		_, err = users.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
		require.ErrorIs(t, err, ErrAmbiguous)
		// An Update moving the value lost, then another writer replaces the item.
		hc.once, hc.after = sync.Once{}, other(func() error { _, err := plain.Put(ctx, uUser{ID: "1", Email: "b@x.io", Name: "other"}); return err })
		_, err = users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io"))
		require.ErrorIs(t, err, ErrAmbiguous)
		// Delete lost, then another writer creates the item again.
		hc.once, hc.after = sync.Once{}, other(func() error {
			if err := plain.Delete(ctx, uUser{ID: "1"}); err != nil {
				return err
			}
			_, err := plain.Create(ctx, uUser{ID: "1", Email: "c@x.io"})
			return err
		})
		err = users.Delete(ctx, uUser{ID: "1"})
		require.ErrorIs(t, err, ErrAmbiguous)
		remove()
		// Whatever happened, every value held has its guard and no other.
		rep, err := plain.SweepUnique(ctx)
		require.NoError(t, err)
		assert.Empty(t, rep.Orphans)
		assert.Empty(t, rep.Missing)
		assert.Empty(t, rep.Duplicates)
		assert.Equal(t, 1, rep.Guards)
	})
}

func TestUniqueSweepFindsAndRepairs(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
	require.NoError(t, err)
	_, err = users.Create(ctx, uUser{ID: "2", Email: "b@x.io"})
	require.NoError(t, err)
	raw := func(id, email string) {
		_, err := tbl.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.name), Item: map[string]types.AttributeValue{
			"PK": sAV("USER#" + id), "SK": sAV("PROFILE"), tbl.opts.TypeAttribute: sAV("User"), "id": sAV(id), "email": sAV(email), "name": sAV("")}})
		require.NoError(t, err)
	}
	// Writers outside the library: user 1 deleted, user 3 put without a guard,
	// user 4 put with user 2's email.
	_, err = tbl.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl.name), Key: map[string]types.AttributeValue{"PK": sAV("USER#1"), "SK": sAV("PROFILE")}})
	require.NoError(t, err)
	raw("3", "c@x.io")
	raw("4", "b@x.io")
	_, err = users.Create(ctx, uUser{ID: "5", Email: "a@x.io"})
	require.ErrorIs(t, err, ErrNotUnique, "the orphan guard blocks the value")

	rep, err := users.SweepUnique(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Guards)
	assert.Equal(t, 3, rep.Items)
	require.Len(t, rep.Orphans, 1)
	assert.Equal(t, []string{"a@x.io"}, rep.Orphans[0].Values)
	assert.False(t, rep.Orphans[0].Repaired, "a report only")
	require.Len(t, rep.Missing, 1)
	assert.Equal(t, map[string]string{"PK": "USER#3", "SK": "PROFILE"}, rep.Missing[0].Item)
	require.Len(t, rep.Duplicates, 1)
	assert.Equal(t, map[string]string{"PK": "USER#4", "SK": "PROFILE"}, rep.Duplicates[0].Item)
	assert.Equal(t, map[string]string{"PK": "USER#2", "SK": "PROFILE"}, rep.Duplicates[0].Holder)
	assert.Len(t, guardsOf(t, tbl), 2, "nothing written")

	rep, err = users.SweepUnique(ctx, RepairUnique())
	require.NoError(t, err)
	require.Len(t, rep.Orphans, 1)
	assert.True(t, rep.Orphans[0].Repaired)
	require.Len(t, rep.Missing, 1)
	assert.True(t, rep.Missing[0].Repaired)
	require.Len(t, rep.Duplicates, 1, "never repaired")
	g := guardsOf(t, tbl)
	assert.Nil(t, g["a@x.io"])
	assert.Equal(t, `["USER#3","PROFILE"]`, ownerOf(g["c@x.io"]))
	_, err = users.Create(ctx, uUser{ID: "5", Email: "a@x.io"})
	require.NoError(t, err, "the value is free again")
	_, err = users.Create(ctx, uUser{ID: "6", Email: "c@x.io"})
	require.ErrorIs(t, err, ErrNotUnique, "the restored guard holds")
}

// TestUniqueExplained: Explain shows every write kind of an entity with a unique
// field as it would be sent (the consistent read, then one TransactWriteItems
// that carries the guard), and the read-back an Update judges itself by, which
// the empty table Explain answers with cannot show, is not an error of Explain.
func TestUniqueExplained(t *testing.T) {
	tbl := offlineTable(t)
	users := MustRegister[uUser](tbl)
	for name, fn := range map[string]func(ctx context.Context) error{
		"Create": func(ctx context.Context) error { _, err := users.Create(ctx, uUser{ID: "1", Email: "a@b"}); return err },
		"Put":    func(ctx context.Context) error { _, err := users.Put(ctx, uUser{ID: "1", Email: "a@b"}); return err },
		"Update": func(ctx context.Context) error {
			_, err := users.Update(ctx, uUser{ID: "1"}, Set("email", "c@d"))
			return err
		},
		"Delete": func(ctx context.Context) error { return users.Delete(ctx, uUser{ID: "1"}) },
	} {
		t.Run(name, func(t *testing.T) {
			x, err := Explain(context.Background(), fn)
			require.NoError(t, err)
			var apis []string
			for _, r := range x.Requests {
				apis = append(apis, r.API)
			}
			assert.Contains(t, apis, "TransactWriteItems")
			if name != "Delete" {
				assert.Contains(t, x.String(), "#singletable#unique#User#email#", "the guard's claim is shown")
			}
		})
	}
}

// TestUniqueLostThenThrottled: a unique write whose transaction's answer was lost
// and whose resends under the same token were then throttled past the SDK's
// retries is judged from the item: done when the lost attempt landed, never a
// plain failure after which a retry would claim the value twice (issue 37,
// scenario 20, for the unique writes' transactions).
func TestUniqueLostThenThrottled(t *testing.T) {
	tbl, inj := faultTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	lose := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse(), Times: 1})
	throttle := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.Throttle()})
	_, err := users.Create(ctx, uUser{ID: "u1", Email: "a@x", Name: "Ann"})
	require.NoError(t, err, "the lost attempt landed")
	lose()
	throttle()
	got, err := users.Get(ctx, uUser{ID: "u1"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "a@x", got.Email)
	_, err = users.Create(ctx, uUser{ID: "u2", Email: "a@x"})
	assert.ErrorIs(t, err, ErrNotUnique, "claimed once, by u1")
}
