package singletable

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
)

// Safety of writes: lost responses (judged by the read-back, never resent
// blindly) on the write kinds added since issue 14. The index of the safety
// tests is at the top of safety_test.go.

// A clobbering Delete whose response is lost, with another client creating the
// item again before the read-back, does not delete the new item.
func TestSafetyWritesLostClobberDeleteThenRecreate(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	others := MustRegister[vCounter](otherClient(t, tbl))
	ctx := context.Background()
	_, err := counters.Create(ctx, vCounter{ID: "cd", N: 1})
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"DeleteItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
		_, err := others.Create(ctx, vCounter{ID: "cd", N: 99})
		require.NoError(t, err)
	})})
	err = counters.Delete(ctx, vCounter{ID: "cd"}, Clobber())
	require.ErrorIs(t, err, ErrAmbiguous)
	got, err := others.Get(ctx, vCounter{ID: "cd"}, Consistent())
	require.NoError(t, err, "the other client's new item is still there")
	assert.Equal(t, 99, got.N)
}

// Writes that depend on the item by the caller's condition (If) are not
// idempotent: after a lost response with another client writing in between, they
// are never sent again (a Put made a create by If(attribute_not_exists) would
// resurrect the item; a conditional Delete or Update would land on an item created
// since). Unprovable outcomes are ErrAmbiguous; a provable one is a success.
func TestSafetyWritesLostConditionalWrites(t *testing.T) {
	tbl, inj := faultTable(t)
	customers := MustRegister[tCustomer](tbl)
	others := MustRegister[tCustomer](otherClient(t, tbl))
	ctx := context.Background()
	notExists := If(expression.AttributeNotExists(expression.Name("PK")))
	named := func(n string) WriteOption { return If(expression.Name("name").Equal(expression.Value(n))) }

	t.Run("Put If not exists, then deleted", func(t *testing.T) {
		inj.Add(fault.Rule{Ops: []string{"PutItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			require.NoError(t, others.Delete(ctx, tCustomer{CustomerID: "cp"}))
		})})
		_, err := customers.Put(ctx, tCustomer{CustomerID: "cp", Name: "n"}, notExists)
		require.ErrorIs(t, err, ErrAmbiguous)
		assert.Nil(t, rawItem(t, tbl, "CUST#cp", "PROFILE"), "not resurrected")
	})
	t.Run("Put If, landed", func(t *testing.T) {
		inj.Add(fault.Rule{Ops: []string{"PutItem"}, Times: 1, Fault: fault.LoseResponse()})
		_, err := customers.Put(ctx, tCustomer{CustomerID: "cl", Name: "n"}, notExists)
		require.NoError(t, err, "its receipt proves it landed")
	})
	t.Run("Update If, then deleted and created again", func(t *testing.T) {
		_, err := customers.Put(ctx, tCustomer{CustomerID: "cu", Name: "a"})
		require.NoError(t, err)
		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			require.NoError(t, others.Delete(ctx, tCustomer{CustomerID: "cu"}))
			_, err := others.Put(ctx, tCustomer{CustomerID: "cu", Name: "a", Email: "new@x"})
			require.NoError(t, err)
		})})
		_, err = customers.Update(ctx, tCustomer{CustomerID: "cu"}, Set("name", "b"), named("a"))
		require.ErrorIs(t, err, ErrAmbiguous)
		item := rawItem(t, tbl, "CUST#cu", "PROFILE")
		assert.Equal(t, sAV("a"), item["name"], "the new item is not written")
		assert.Equal(t, sAV("new@x"), item["email"])
	})
	t.Run("Delete If, then created again", func(t *testing.T) {
		_, err := customers.Put(ctx, tCustomer{CustomerID: "cd", Name: "a"})
		require.NoError(t, err)
		inj.Add(fault.Rule{Ops: []string{"DeleteItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			_, err := others.Put(ctx, tCustomer{CustomerID: "cd", Name: "a", Email: "new@x"})
			require.NoError(t, err)
		})})
		err = customers.Delete(ctx, tCustomer{CustomerID: "cd"}, named("a"))
		require.ErrorIs(t, err, ErrAmbiguous)
		item := rawItem(t, tbl, "CUST#cd", "PROFILE")
		require.NotNil(t, item, "the new item is not deleted")
		assert.Equal(t, sAV("new@x"), item["email"])
	})
}

// Scenarios 3-5 on the write kinds added since: a write whose response is lost,
// with another client deleting (and creating again) before the read-back, is
// never applied twice, never resurrects, never lands on the new item, and is
// never reported as nil or as a conflict: ErrAmbiguous.
func TestSafetyWritesLostResponsesNewKinds(t *testing.T) {
	tbl, inj := faultTable(t)
	docs, vers := MustRegister[lwDoc](tbl), MustRegister[lwVer](tbl)
	other := otherClient(t, tbl)
	oDocs, oVers := MustRegister[lwDoc](other), MustRegister[lwVer](other)
	ctx := context.Background()
	var ce *ConflictError

	deleteDoc := func(id string) func() {
		return func() { require.NoError(t, oDocs.Delete(ctx, lwDoc{ID: id})) }
	}
	recreateDoc := func(id string) func() {
		return func() {
			require.NoError(t, oDocs.Delete(ctx, lwDoc{ID: id}))
			_, err := oDocs.Create(ctx, lwDoc{ID: id, Note: "new"})
			require.NoError(t, err)
		}
	}
	recreateVer := func(id string) func() {
		return func() {
			cur, err := oVers.Get(ctx, lwVer{ID: id}, Consistent())
			require.NoError(t, err)
			require.NoError(t, oVers.Delete(ctx, cur))
			_, err = oVers.Create(ctx, lwVer{ID: id, Note: "new", Meta: map[string]string{}})
			require.NoError(t, err)
		}
	}
	lose := func(op string, then func()) {
		inj.Add(fault.Rule{Ops: []string{op}, Times: 1, Fault: fault.LoseResponse().Then(then)})
	}
	ambiguous := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrAmbiguous)
		assert.False(t, errors.As(err, &ce), "not a conflict: it landed")
	}

	t.Run("counted Put, then deleted", func(t *testing.T) {
		lose("UpdateItem", deleteDoc("p"))
		_, err := docs.Put(ctx, lwDoc{ID: "p", Note: "x"})
		ambiguous(t, err)
		assert.Nil(t, rawItem(t, tbl, "LW#p", "LW"), "not resurrected")
	})
	t.Run("counted Update, then deleted and created again", func(t *testing.T) {
		_, err := docs.Create(ctx, lwDoc{ID: "u"})
		require.NoError(t, err)
		lose("UpdateItem", recreateDoc("u"))
		_, err = docs.Update(ctx, lwDoc{ID: "u"}, Set("note", "mine"))
		ambiguous(t, err)
		item := rawItem(t, tbl, "LW#u", "LW")
		assert.Equal(t, sAV("new"), item["note"])
		assert.Equal(t, nAV(0), item["edits"], "the new item is not counted")
	})
	t.Run("Append, then deleted and created again", func(t *testing.T) {
		_, err := docs.Create(ctx, lwDoc{ID: "a"})
		require.NoError(t, err)
		lose("UpdateItem", recreateDoc("a"))
		_, err = docs.Update(ctx, lwDoc{ID: "a"}, Append("tags", "x"))
		ambiguous(t, err)
		assert.NotContains(t, rawItem(t, tbl, "LW#a", "LW"), "tags", "not appended to the new item")
	})
	t.Run("Create with timestamps, then deleted", func(t *testing.T) {
		lose("PutItem", deleteDoc("c"))
		_, err := docs.Create(ctx, lwDoc{ID: "c"})
		ambiguous(t, err)
		assert.Nil(t, rawItem(t, tbl, "LW#c", "LW"), "not resurrected")
	})
	t.Run("versioned SetIfNotExists at a path, then deleted and created again", func(t *testing.T) {
		cur, err := vers.Create(ctx, lwVer{ID: "s", Meta: map[string]string{}})
		require.NoError(t, err)
		lose("UpdateItem", recreateVer("s"))
		_, err = vers.Update(ctx, cur, SetIfNotExists("meta.k", "mine"))
		ambiguous(t, err)
		item := rawItem(t, tbl, "LV#s", "LV")
		assert.Equal(t, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}, item["meta"], "the new item is not written")
	})
	t.Run("versioned Upsert at 0, then deleted", func(t *testing.T) {
		lose("UpdateItem", func() {
			cur, err := oVers.Get(ctx, lwVer{ID: "up"}, Consistent())
			require.NoError(t, err)
			require.NoError(t, oVers.Delete(ctx, cur))
		})
		_, err := vers.Update(ctx, lwVer{ID: "up"}, Set("note", "x"), Upsert())
		ambiguous(t, err)
		assert.Nil(t, rawItem(t, tbl, "LV#up", "LV"), "not resurrected")
	})
	t.Run("versioned Put with ReturnOld, landed", func(t *testing.T) {
		cur, err := vers.Create(ctx, lwVer{ID: "ro", Meta: map[string]string{}})
		require.NoError(t, err)
		lose("UpdateItem", func() {})
		var old Old[lwVer]
		cur.Note = "x"
		_, err = vers.Put(ctx, cur, ReturnOld(&old))
		ambiguous(t, err)
		assert.Contains(t, err.Error(), "landed")
		assert.Equal(t, nAV(2), rawItem(t, tbl, "LV#ro", "LV")["version"], "applied once")
	})
	t.Run("Update Returning the old item, then deleted and created again", func(t *testing.T) {
		cur, err := vers.Create(ctx, lwVer{ID: "rt", Meta: map[string]string{}})
		require.NoError(t, err)
		lose("UpdateItem", recreateVer("rt"))
		_, err = vers.Update(ctx, cur, Set("note", "mine"), Returning(ReturnAllOld))
		ambiguous(t, err)
		assert.Equal(t, sAV("new"), rawItem(t, tbl, "LV#rt", "LV")["note"])
	})
	t.Run("Mutate of a counted entity, then deleted and created again", func(t *testing.T) {
		_, err := vers.Create(ctx, lwVer{ID: "mu", Meta: map[string]string{}})
		require.NoError(t, err)
		lose("UpdateItem", recreateVer("mu"))
		_, err = vers.Mutate(ctx, lwVer{ID: "mu"}, func(v *lwVer) error { v.Note = "mine"; return nil })
		ambiguous(t, err)
		item := rawItem(t, tbl, "LV#mu", "LV")
		assert.Equal(t, sAV("new"), item["note"])
		assert.Equal(t, nAV(0), item["edits"])
	})
	t.Run("Transact without a token, lost three times, created item deleted", func(t *testing.T) {
		// Resent under the call's own token: DynamoDB applies a token once, so
		// its answer to a resend proves the first attempt landed: a success, and
		// the item another writer deleted since is not resurrected.
		inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Times: 3, Fault: fault.LoseResponse().Then(func() {
			_ = oDocs.Delete(ctx, lwDoc{ID: "tx"})
		})})
		err := tbl.Transact(ctx, docs.TxCreate(lwDoc{ID: "tx"}))
		require.NoError(t, err)
		assert.Nil(t, rawItem(t, tbl, "LW#tx", "LW"), "not resurrected")
	})
	t.Run("Transact without a token, every attempt lost, created item deleted", func(t *testing.T) {
		remove := inj.Add(fault.Rule{Ops: []string{"TransactWriteItems"}, Fault: fault.LoseResponse().Then(func() {
			_ = oDocs.Delete(ctx, lwDoc{ID: "tx2"})
		})})
		err := tbl.Transact(ctx, docs.TxCreate(lwDoc{ID: "tx2"}))
		remove()
		ambiguous(t, err)
		assert.Nil(t, rawItem(t, tbl, "LW#tx2", "LW"), "not resurrected")
	})
	t.Run("TransactWith a token, lost, then another writer", func(t *testing.T) {
		_, err := docs.Create(ctx, lwDoc{ID: "tw"})
		require.NoError(t, err)
		lose("TransactWriteItems", func() {
			_, err := oDocs.Update(ctx, lwDoc{ID: "tw"}, Set("note", "other"))
			require.NoError(t, err)
		})
		err = tbl.TransactWith(ctx, TxOptions{Token: "lw-" + uniqueSuffix(t), At: time.Unix(1700000000, 0)}, docs.TxUpdate(lwDoc{ID: "tw"}, Append("tags", "x")))
		require.NoError(t, err)
		item := rawItem(t, tbl, "LW#tw", "LW")
		assert.Equal(t, &types.AttributeValueMemberL{Value: []types.AttributeValue{sAV("x")}}, item["tags"], "appended once")
		assert.Equal(t, sAV("other"), item["note"])
		assert.Equal(t, nAV(2), item["edits"])
	})
}

// otherClientWith is otherClient for a table made with options of its own.
func otherClientWith(t *testing.T, tbl *Table, opts ...TableOption) *Table {
	t.Helper()
	other, err := NewTable(local.Client(t), tbl.Name(), append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	return other
}

// kvEvent is versioned in a table keyed by numbers.
type kvEvent struct {
	_       struct{} `Type:"VEvent" acct:"{account}" seq:"{n}"`
	Account int64    `dynamodbav:"account"`
	N       int      `dynamodbav:"n"`
	Note    string   `dynamodbav:"note"`
	Version int      `dynamodbav:"version" singletable:"version"`
}

// Scenarios 3-5 on tables keyed by their partition key alone and by numbers:
// the read-back and the judgement work with those keys too.
func TestSafetyWritesLostResponsesOtherKeyTypes(t *testing.T) {
	ctx := context.Background()
	t.Run("partition key only", func(t *testing.T) {
		tbl, inj := faultTable(t, WithKeys("id", ""))
		users := MustRegister[kUser](tbl)
		others := MustRegister[kUser](otherClientWith(t, tbl, WithKeys("id", "")))
		inj.Add(fault.Rule{Ops: []string{"PutItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			cur, err := others.Get(ctx, kUser{UserID: "c"}, Consistent())
			require.NoError(t, err)
			require.NoError(t, others.Delete(ctx, cur))
		})})
		_, err := users.Create(ctx, kUser{UserID: "c", Org: "o", Name: "n"})
		require.ErrorIs(t, err, ErrAmbiguous)
		_, err = users.Get(ctx, kUser{UserID: "c"}, Consistent())
		require.ErrorIs(t, err, ErrNotFound, "not resurrected")

		u, err := users.Create(ctx, kUser{UserID: "d", Org: "o", Name: "n"})
		require.NoError(t, err)
		inj.Add(fault.Rule{Ops: []string{"DeleteItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			_, err := others.Create(ctx, kUser{UserID: "d", Org: "o", Name: "new"})
			require.NoError(t, err)
		})})
		require.ErrorIs(t, users.Delete(ctx, u), ErrAmbiguous)
		got, err := users.Get(ctx, kUser{UserID: "d"}, Consistent())
		require.NoError(t, err, "the new item is not deleted")
		assert.Equal(t, "new", got.Name)

		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.Reset()})
		got, err = users.Mutate(ctx, kUser{UserID: "d"}, func(v *kUser) error { v.Name = "m"; return nil })
		require.NoError(t, err)
		assert.Equal(t, 2, got.Version)
	})
	t.Run("number keys", func(t *testing.T) {
		keys := []TableOption{WithKeys("acct", "seq"), WithKeyType("acct", types.ScalarAttributeTypeN), WithKeyType("seq", types.ScalarAttributeTypeN)}
		tbl, inj := faultTable(t, keys...)
		events := MustRegister[kvEvent](tbl)
		others := MustRegister[kvEvent](otherClientWith(t, tbl, keys...))
		cur, err := events.Create(ctx, kvEvent{Account: 1, N: -3})
		require.NoError(t, err)
		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			got, err := others.Get(ctx, kvEvent{Account: 1, N: -3}, Consistent())
			require.NoError(t, err)
			require.NoError(t, others.Delete(ctx, got))
			_, err = others.Create(ctx, kvEvent{Account: 1, N: -3, Note: "new"})
			require.NoError(t, err)
		})})
		_, err = events.Update(ctx, cur, Set("note", "mine"))
		require.ErrorIs(t, err, ErrAmbiguous)
		var ce *ConflictError
		assert.False(t, errors.As(err, &ce))
		got, err := events.Get(ctx, kvEvent{Account: 1, N: -3}, Consistent())
		require.NoError(t, err)
		assert.Equal(t, "new", got.Note)

		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse()})
		got, err = events.Put(ctx, kvEvent{Account: 1, N: -3, Note: "put", Version: got.Version})
		require.NoError(t, err, "its receipt proves it landed")
		assert.Equal(t, 2, got.Version)
	})
}
