package singletable

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// rvItem is unversioned; rvVItem versioned with a createdAt and a counter.
type rvItem struct {
	_     struct{} `Type:"RvItem" PK:"RV#{id}" SK:"RV"`
	ID    string   `dynamodbav:"id"`
	Name  string   `dynamodbav:"name"`
	Count int      `dynamodbav:"count"`
}

type rvVItem struct {
	_       struct{} `Type:"RvVItem" PK:"RVV#{id}" SK:"RVV"`
	ID      string   `dynamodbav:"id"`
	Name    string   `dynamodbav:"name"`
	Created int64    `dynamodbav:"created" singletable:"createdAt"`
	Edits   int      `dynamodbav:"edits" singletable:"counter"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// TestReturnValuesEveryWriteKind: Put and Delete return the item they replaced or
// deleted; Update the item after, before, or only what it changed.
func TestReturnValuesEveryWriteKind(t *testing.T) {
	clk := newTestClock()
	tbl, inj := faultTable(t, WithClock(clk.Now))
	items := MustRegister[rvItem](tbl)
	vitems := MustRegister[rvVItem](tbl)
	ctx := context.Background()

	var old Old[rvItem]
	_, err := items.Put(ctx, rvItem{ID: "a", Name: "one"}, ReturnOld(&old))
	require.NoError(t, err)
	assert.False(t, old.Found, "no item was replaced")
	_, err = items.Put(ctx, rvItem{ID: "a", Name: "two", Count: 2}, ReturnOld(&old))
	require.NoError(t, err)
	assert.True(t, old.Found)
	assert.Equal(t, rvItem{ID: "a", Name: "one"}, old.Item, "Put returns the item it replaced")

	before := requests(inj)
	got, err := items.Update(ctx, rvItem{ID: "a"}, Set("name", "three"), Returning(ReturnAllOld))
	require.NoError(t, err)
	assert.Equal(t, rvItem{ID: "a", Name: "two", Count: 2}, got, "ALL_OLD")
	got, err = items.Update(ctx, rvItem{ID: "a"}, Set("name", "four"), Returning(ReturnUpdatedOld))
	require.NoError(t, err)
	assert.Equal(t, rvItem{Name: "three"}, got, "UPDATED_OLD: only what the update wrote")
	got, err = items.Update(ctx, rvItem{ID: "a"}, Set("count", 5), Returning(ReturnUpdatedNew))
	require.NoError(t, err)
	assert.Equal(t, rvItem{Count: 5}, got, "UPDATED_NEW")
	got, err = items.Update(ctx, rvItem{ID: "a"}, Set("count", 6), Returning(ReturnNothing))
	require.NoError(t, err)
	assert.Equal(t, rvItem{}, got, "NONE")
	got, err = items.Update(ctx, rvItem{ID: "a"}, Set("count", 7), Returning(ReturnAllNew))
	require.NoError(t, err)
	assert.Equal(t, rvItem{ID: "a", Name: "four", Count: 7}, got, "ALL_NEW, the default")
	got, err = items.Update(ctx, rvItem{ID: "b"}, Set("count", 1), Upsert(), Returning(ReturnAllOld))
	require.NoError(t, err)
	assert.Equal(t, rvItem{}, got, "ALL_OLD of an item the upsert created: none")
	after := requests(inj)
	assert.Equal(t, before["UpdateItem"]+6, after["UpdateItem"])
	assert.Equal(t, before["GetItem"], after["GetItem"], "return values cost no read")

	var gone Old[rvItem]
	require.NoError(t, items.Delete(ctx, rvItem{ID: "a"}, ReturnOld(&gone)))
	assert.True(t, gone.Found)
	assert.Equal(t, rvItem{ID: "a", Name: "four", Count: 7}, gone.Item, "Delete returns the item it deleted")
	require.NoError(t, items.Delete(ctx, rvItem{ID: "a"}, ReturnOld(&gone)))
	assert.False(t, gone.Found, "nothing to delete")

	// A versioned Put: the version, createdAt and count stored are worked out from
	// the item replaced.
	t0 := clk.Now()
	v, err := vitems.Create(ctx, rvVItem{ID: "v", Name: "one"})
	require.NoError(t, err)
	clk.Advance(60e9)
	var vold Old[rvVItem]
	v.Name = "two"
	v2, err := vitems.Put(ctx, v, ReturnOld(&vold))
	require.NoError(t, err)
	assert.True(t, vold.Found)
	assert.Equal(t, "one", vold.Item.Name)
	assert.Equal(t, int64(1), vold.Item.Version)
	assert.Equal(t, int64(2), v2.Version)
	assert.Equal(t, 1, v2.Edits)
	assert.Equal(t, t0.Unix(), v2.Created)
	stored, err := vitems.Get(ctx, rvVItem{ID: "v"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, stored, v2, "the value Put returns is the one stored")
	clobbered, err := vitems.Put(ctx, rvVItem{ID: "v", Name: "three"}, Clobber(), ReturnOld(&vold))
	require.NoError(t, err)
	assert.Equal(t, int64(3), clobbered.Version)
	assert.Equal(t, 2, clobbered.Edits)
	assert.Equal(t, t0.Unix(), clobbered.Created)
	assert.Equal(t, "two", vold.Item.Name)
	var vgone Old[rvVItem]
	require.NoError(t, vitems.Delete(ctx, clobbered, ReturnOld(&vgone)))
	assert.Equal(t, "three", vgone.Item.Name)
}

// TestReturnValuesRefused: return-value options on calls that cannot honour them
// are refused before anything is sent.
func TestReturnValuesRefused(t *testing.T) {
	tbl, inj := faultTable(t)
	items := MustRegister[rvItem](tbl)
	ctx := context.Background()
	before := requests(inj)
	var old Old[rvItem]
	var wrong Old[rvVItem]
	cases := map[string]func() error{
		"Create": func() error { _, err := items.Create(ctx, rvItem{ID: "a"}, ReturnOld(&old)); return err },
		"Update": func() error {
			_, err := items.Update(ctx, rvItem{ID: "a"}, Set("name", "x"), ReturnOld(&old))
			return err
		},
		"another type": func() error { _, err := items.Put(ctx, rvItem{ID: "a"}, ReturnOld(&wrong)); return err },
		"nil":          func() error { return items.Delete(ctx, rvItem{ID: "a"}, ReturnOld[rvItem](nil)) },
		"TxPut":        func() error { return tbl.Transact(ctx, items.TxPut(rvItem{ID: "a"}, ReturnOld(&old))) },
		"TxCreate":     func() error { return tbl.Transact(ctx, items.TxCreate(rvItem{ID: "a"}, ReturnOld(&old))) },
		"TxDelete":     func() error { return tbl.Transact(ctx, items.TxDelete(rvItem{ID: "a"}, ReturnOld(&old))) },
		"TxUpdate": func() error {
			return tbl.Transact(ctx, items.TxUpdate(rvItem{ID: "a"}, Set("name", "x"), Returning(ReturnAllOld)))
		},
		"TxUpdate AllNew": func() error {
			return tbl.Transact(ctx, items.TxUpdate(rvItem{ID: "a"}, Set("name", "x"), Returning(ReturnAllNew)))
		},
		"unknown Returning": func() error {
			_, err := items.Update(ctx, rvItem{ID: "a"}, Set("name", "x"), Returning(ReturnValue(99)))
			return err
		},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ErrInvalidInput)
			t.Log(err)
		})
	}
	assert.Equal(t, before, requests(inj), "nothing sent")
}

// TestReturnValuesLostResponse: the item replaced comes only with the response; a
// write asking for it whose response is lost is never resent (a second attempt
// would return the first one's item) and fails with ErrAmbiguous, though it landed.
func TestReturnValuesLostResponse(t *testing.T) {
	tbl, inj := faultTable(t)
	items := MustRegister[rvItem](tbl)
	vitems := MustRegister[rvVItem](tbl)
	ctx := context.Background()
	_, err := items.Put(ctx, rvItem{ID: "a", Name: "one"})
	require.NoError(t, err)
	v, err := vitems.Put(ctx, rvVItem{ID: "v", Name: "one"})
	require.NoError(t, err)

	inj.Add(fault.Rule{Ops: []string{"PutItem", "UpdateItem", "DeleteItem"}, Fault: fault.LoseResponse(), Times: 4})
	var old Old[rvItem]
	_, err = items.Put(ctx, rvItem{ID: "a", Name: "two"}, ReturnOld(&old))
	require.ErrorIs(t, err, ErrAmbiguous, "unversioned: not resent")
	_, err = items.Update(ctx, rvItem{ID: "a"}, Set("name", "three"), Returning(ReturnAllOld))
	require.ErrorIs(t, err, ErrAmbiguous)
	var vold Old[rvVItem]
	v.Name = "two"
	_, err = vitems.Put(ctx, v, ReturnOld(&vold))
	require.ErrorIs(t, err, ErrAmbiguous, "versioned: its receipt proves it landed, but the old item is gone")
	assert.Contains(t, err.Error(), "landed")
	require.ErrorIs(t, items.Delete(ctx, rvItem{ID: "a"}, ReturnOld(&old)), ErrAmbiguous)
	assert.Equal(t, 4, inj.Stats().LostWrites)

	got, err := vitems.Get(ctx, rvVItem{ID: "v"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "two", got.Name, "each landed once")
	assert.Equal(t, int64(2), got.Version)
	_, err = items.Get(ctx, rvItem{ID: "a"})
	assert.ErrorIs(t, err, ErrNotFound)
}

// TestConditionFailureExplainedWithoutRead: a failed condition is explained from
// the item DynamoDB returns with it (ReturnValuesOnConditionCheckFailure, which
// DynamoDB Local 3.x supports) for every write kind, transactions included, with
// no read; and, where DynamoDB returns no item (played at the HTTP layer by
// OmitConditionItems), by one consistent read, with the same explanation.
func TestConditionFailureExplainedWithoutRead(t *testing.T) {
	for _, supported := range []bool{true, false} {
		name := "supported"
		if !supported {
			name = "not supported"
		}
		t.Run(name, func(t *testing.T) {
			tbl, inj := faultTable(t)
			vitems := MustRegister[rvVItem](tbl)
			items := MustRegister[rvItem](tbl)
			ctx := context.Background()
			v, err := vitems.Create(ctx, rvVItem{ID: "v", Name: "one"})
			require.NoError(t, err)
			_, err = vitems.Put(ctx, v) // now at version 2: v is stale
			require.NoError(t, err)
			_, err = items.Put(ctx, rvItem{ID: "a"})
			require.NoError(t, err)
			if !supported {
				inj.Add(fault.Rule{Fault: fault.OmitConditionItems()})
			}
			type attempt struct {
				name      string
				call      func() error
				conflict  bool
				wantReads int
			}
			reads := 0
			if !supported {
				reads = 1
			}
			attempts := []attempt{
				{"Put", func() error { _, err := vitems.Put(ctx, v); return err }, true, reads},
				{"Update", func() error { _, err := vitems.Update(ctx, v, Set("name", "x")); return err }, true, reads},
				{"Update returning old", func() error {
					_, err := vitems.Update(ctx, v, Set("name", "x"), Returning(ReturnAllOld))
					return err
				}, true, reads},
				{"Delete", func() error { return vitems.Delete(ctx, v) }, true, reads},
				{"Create", func() error { _, err := vitems.Create(ctx, v); return err }, false, reads},
				{"Put with If", func() error {
					_, err := items.Put(ctx, rvItem{ID: "a"}, If(expression.AttributeNotExists(expression.Name("id"))))
					return err
				}, false, reads},
				{"Transact", func() error {
					return tbl.Transact(ctx, vitems.TxUpdate(v, Set("name", "x")), items.TxPut(rvItem{ID: "b"}))
				}, true, reads},
			}
			for _, a := range attempts {
				before := requests(inj)
				err := a.call()
				require.Error(t, err, a.name)
				after := requests(inj)
				assert.Equal(t, a.wantReads, after["GetItem"]-before["GetItem"], "%s: reads after the failed condition", a.name)
				if a.conflict {
					var ce *ConflictError
					if errorsAsTx(err, &ce) {
						assert.Equal(t, uint64(1), ce.Expected, a.name)
						assert.True(t, ce.CurrentKnown, a.name)
						assert.Equal(t, uint64(2), ce.Current, "%s: the conflict explains itself", a.name)
					} else {
						t.Errorf("%s: %v is not a conflict", a.name, err)
					}
				}
				t.Logf("%s: %v", a.name, err)
			}
		})
	}
}

// errorsAsTx finds the ConflictError of a write, or of a transaction's reason.
func errorsAsTx(err error, ce **ConflictError) bool {
	var txe *TxError
	if errors.As(err, &txe) {
		for _, r := range txe.Reasons {
			if r.Conflict != nil {
				*ce = r.Conflict
				return true
			}
		}
		return false
	}
	return errors.As(err, ce)
}

// TestReturnValuesSameAfterLostAnswer (issue 30, scenario 9): what a write
// returns does not depend on whether its answer came or was lost and the item
// read back. For every Returning mode of a versioned Update (with createdAt and
// a counter) and for a versioned Put, the same write is made twice, once
// answered and once with its answer lost (package fault): the values returned
// are the same, but for the item before the write (ReturnAllOld,
// ReturnUpdatedOld, ReturnOld), which exists only in the lost answer and makes
// the call ErrAmbiguous. Each write is applied once.
func TestReturnValuesSameAfterLostAnswer(t *testing.T) {
	clk := newTestClock()
	tbl, inj := faultTable(t, WithClock(clk.Now))
	items := MustRegister[rvVItem](tbl)
	ctx := context.Background()
	write := func(id string, lose bool, call func(v rvVItem) (rvVItem, error)) (rvVItem, error) {
		t.Helper()
		v, err := items.Create(ctx, rvVItem{ID: id, Name: "one"})
		require.NoError(t, err)
		if lose {
			remove := inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Times: 1})
			defer remove()
		}
		return call(v)
	}
	modes := []struct {
		name string
		mode ReturnValue
		old  bool
	}{
		{"ReturnAllNew", ReturnAllNew, false},
		{"ReturnAllOld", ReturnAllOld, true},
		{"ReturnUpdatedNew", ReturnUpdatedNew, false},
		{"ReturnUpdatedOld", ReturnUpdatedOld, true},
		{"ReturnNothing", ReturnNothing, false},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			update := func(v rvVItem) (rvVItem, error) {
				return items.Update(ctx, v, Set("name", "two"), Returning(m.mode))
			}
			answered, err := write(m.name+"-answered", false, update)
			require.NoError(t, err)
			lost, err := write(m.name+"-lost", true, update)
			if m.old {
				require.ErrorIs(t, err, ErrAmbiguous, "the item before is only in the lost answer")
			} else {
				require.NoError(t, err)
				if answered.ID != "" {
					answered.ID, lost.ID = "", ""
				}
				assert.Equal(t, answered, lost, "the same value, answered or read back")
			}
			for _, id := range []string{m.name + "-answered", m.name + "-lost"} {
				stored, err := items.Get(ctx, rvVItem{ID: id}, Consistent())
				require.NoError(t, err)
				assert.Equal(t, "two", stored.Name, id)
				assert.Equal(t, int64(2), stored.Version, "%s: applied once", id)
				assert.Equal(t, 1, stored.Edits, "%s: counted once", id)
			}
		})
	}
	if t.Failed() {
		return
	}
	// Put settles the value it returns from the answer or the item read back.
	put := func(v rvVItem) (rvVItem, error) {
		v.Name = "two"
		return items.Put(ctx, v)
	}
	answered, err := write("put-answered", false, put)
	require.NoError(t, err)
	lost, err := write("put-lost", true, put)
	require.NoError(t, err)
	answered.ID, lost.ID = "", ""
	assert.Equal(t, answered, lost, "Put returns the same value, answered or read back")
	var old Old[rvVItem]
	_, err = write("put-old-lost", true, func(v rvVItem) (rvVItem, error) { return items.Put(ctx, v, ReturnOld(&old)) })
	assert.ErrorIs(t, err, ErrAmbiguous, "ReturnOld: the item replaced is only in the lost answer")
}
