package singletable

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
)

// Write-side regression tests for issue 14's promises on the write kinds and
// options added since (timestamps, counters, defaults, validation, ReturnOld,
// Returning, TransactWith, Table.BatchWrite), against DynamoDB Local with faults
// injected at the HTTP layer. They assert the stored items and the errors.

// BatchPutItem runs the whole-item phases that BatchPut runs: defaults (before
// the keys are rendered), timestamps and validation; a value that fails
// validation is refused before anything is sent.
func TestSafetyWritesBatchPutItemWholeItemPhases(t *testing.T) {
	clk := newTestClock()
	tbl, client := newTestTable(t, WithClock(clk.Now))
	tasks := MustRegister[vdTask](tbl)
	docs := MustRegister[tsDoc](tbl)
	ctx := context.Background()

	left, err := tbl.BatchWrite(ctx, tasks.BatchPutItem(vdTask{ID: "b1", Title: "x"}), docs.BatchPutItem(tsDoc{ID: "d1", Title: "t"}))
	require.NoError(t, err)
	require.Empty(t, left)
	item := rawItem(t, tbl, "TASK#b1", "TASK")
	assert.Equal(t, sAV("OPEN"), item["status"], "default applied")
	assert.Equal(t, sAV("STATUS#OPEN"), item["GSI1PK"], "index key rendered after the default")
	assert.Equal(t, nAV(1), item["version"])
	doc := rawItem(t, tbl, "DOC#d1", "DOC")
	require.Contains(t, doc, "createdAt", "createdAt stamped")
	require.Contains(t, doc, "updatedAt", "updatedAt stamped")
	assert.True(t, storedTime(t, doc, "createdAt").Equal(clk.Now().Round(0).Truncate(time.Nanosecond)))

	before := client.count("BatchWriteItem")
	_, err = tbl.BatchWrite(ctx, tasks.BatchPutItem(vdTask{ID: "b2"}), docs.BatchPutItem(tsDoc{ID: "d2"}))
	require.ErrorIs(t, err, ErrValidation)
	assert.ErrorIs(t, err, errNoTitle)
	assert.Equal(t, before, client.count("BatchWriteItem"), "nothing sent")
	assert.Nil(t, rawItem(t, tbl, "DOC#d2", "DOC"))
}

// cTiny counts its writes in an int8.
type cTiny struct {
	_     struct{} `Type:"CTiny" PK:"CT#{id}" SK:"CT"`
	ID    string   `dynamodbav:"id"`
	Note  string   `dynamodbav:"note"`
	Edits int8     `dynamodbav:"edits" singletable:"counter"`
}

// cTinyV is versioned and counts its writes in a uint8.
type cTinyV struct {
	_       struct{} `Type:"CTinyV" PK:"CTV#{id}" SK:"CT"`
	ID      string   `dynamodbav:"id"`
	Note    string   `dynamodbav:"note"`
	Edits   uint8    `dynamodbav:"edits" singletable:"counter"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// A counter at its field's largest value is never counted past it: every counted
// write (Put, Update, Mutate, TxPut, TxUpdate) is refused with an error naming the
// field, and nothing is written; the item stays readable.
func TestSafetyWritesCounterAtMax(t *testing.T) {
	tbl, _ := newTestTable(t)
	tiny := MustRegister[cTiny](tbl)
	tinyV := MustRegister[cTinyV](tbl)
	ctx := context.Background()
	stored := map[string]types.AttributeValue{"PK": sAV("CT#x"), "SK": sAV("CT"), "Type": sAV("CTiny"), "id": sAV("x"), "note": sAV("a"), "edits": nAV(127)}
	putRaw(t, tbl, stored)
	storedV := map[string]types.AttributeValue{"PK": sAV("CTV#x"), "SK": sAV("CT"), "Type": sAV("CTinyV"), "id": sAV("x"), "note": sAV("a"), "edits": nAV(255), "version": nAV(3)}
	putRaw(t, tbl, storedV)

	calls := map[string]func() error{
		"Put":    func() error { _, err := tiny.Put(ctx, cTiny{ID: "x", Note: "b"}); return err },
		"Update": func() error { _, err := tiny.Update(ctx, cTiny{ID: "x"}, Set("note", "b")); return err },
		"Update without changes": func() error {
			_, err := tiny.Update(ctx, cTiny{ID: "x"})
			return err
		},
		"TxPut":             func() error { return tbl.Transact(ctx, tiny.TxPut(cTiny{ID: "x", Note: "b"})) },
		"TxUpdate":          func() error { return tbl.Transact(ctx, tiny.TxUpdate(cTiny{ID: "x"}, Set("note", "b"))) },
		"versioned Put":     func() error { _, err := tinyV.Put(ctx, cTinyV{ID: "x", Note: "b", Version: 3}); return err },
		"versioned Update":  func() error { _, err := tinyV.Update(ctx, cTinyV{ID: "x", Version: 3}, Set("note", "b")); return err },
		"versioned Clobber": func() error { _, err := tinyV.Put(ctx, cTinyV{ID: "x", Note: "b"}, Clobber()); return err },
		"Mutate": func() error {
			_, err := tinyV.Mutate(ctx, cTinyV{ID: "x"}, func(c *cTinyV) error { c.Note = "b"; return nil })
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ErrInvalidInput, "%v", err)
			assert.Contains(t, err.Error(), "Edits")
		})
	}
	assert.Equal(t, stored, rawItem(t, tbl, "CT#x", "CT"), "nothing written")
	assert.Equal(t, storedV, rawItem(t, tbl, "CTV#x", "CT"), "nothing written")
	got, err := tiny.Get(ctx, cTiny{ID: "x"})
	require.NoError(t, err)
	assert.Equal(t, int8(127), got.Edits)
}

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

// rsCounter is versioned and sharded at random.
type rsCounter struct {
	_       struct{} `Type:"RSCounter" PK:"RSC#{shard}" SK:"{id}" singletable:"shards=8"`
	Shard   int      `dynamodbav:"shard" singletable:"shard"`
	ID      string   `dynamodbav:"id"`
	N       int      `dynamodbav:"n"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// Scenario 7 on Mutate and Upsert: a Mutate (or an Update with Upsert) that
// would create the item of an entity sharded at random would draw a shard per
// caller, and concurrent ones stored a copy each. They create nothing there
// (ErrNotFound, explained); an item created with Put is found and changed.
func TestSafetyWritesMutateRandomShardNoCopies(t *testing.T) {
	tbl, client := newTestTable(t)
	cs := MustRegister[rsCounter](tbl)
	ctx := context.Background()
	copies := func(id string) int {
		n := 0
		for s := 1; s <= 8; s++ {
			if rawItem(t, tbl, "RSC#"+strconv.Itoa(s), id) != nil {
				n++
			}
		}
		return n
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			_, err := cs.Mutate(ctx, rsCounter{ID: "m"}, func(c *rsCounter) error { c.N++; return nil })
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, ErrNotFound)
		assert.Contains(t, err.Error(), "shardBy")
	}
	_, err := cs.Update(ctx, rsCounter{ID: "m"}, Set("n", 1), Upsert())
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, int64(0), client.count("UpdateItem")+client.count("PutItem"), "nothing written")
	assert.Equal(t, 0, copies("m"))

	put, err := cs.Put(ctx, rsCounter{ID: "m"})
	require.NoError(t, err)
	for range 4 {
		wg.Go(func() {
			_, err := cs.Mutate(ctx, rsCounter{ID: "m"}, func(c *rsCounter) error { c.N++; return nil })
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, copies("m"), "never two copies")
	got, err := cs.Get(ctx, rsCounter{ID: "m", Shard: put.Shard}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 4, got.N)
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

type nDoc struct {
	_     struct{}           `Type:"NDoc" PK:"ND#{id}" SK:"ND"`
	ID    string             `dynamodbav:"id"`
	Attrs map[string]float64 `dynamodbav:"attrs"`
	Tags  []string           `dynamodbav:"tags"`
}

// Scenario 19 on the new update kinds: an error names the operation once.
func TestSafetyWritesNoDoubledPrefixes(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs := MustRegister[nDoc](tbl)
	tiny := MustRegister[cTinyV](tbl)
	ctx := context.Background()
	for name, err := range map[string]error{
		"NaN at a path": func() error {
			_, err := docs.Update(ctx, nDoc{ID: "a"}, Set("attrs.x", math.NaN()))
			return err
		}(),
		"bad UTF-8 appended": func() error {
			_, err := docs.Update(ctx, nDoc{ID: "a"}, Append("tags", "\xff"))
			return err
		}(),
		"bad UTF-8 set": func() error {
			_, err := docs.Update(ctx, nDoc{ID: "a"}, Set("tags", []string{"\xff"}))
			return err
		}(),
		"bad path": func() error {
			_, err := docs.Update(ctx, nDoc{ID: "a"}, Set("tags[x", "a"))
			return err
		}(),
		"Mutate without the item": func() error {
			_, err := tiny.Mutate(ctx, cTinyV{ID: "a"}, func(c *cTinyV) error { c.Version = 9; return nil })
			return err
		}(),
		"ReturnOld on Update": func() error {
			_, err := docs.Update(ctx, nDoc{ID: "a"}, Set("tags", []string{"a"}), ReturnOld(&Old[nDoc]{}))
			return err
		}(),
	} {
		require.Error(t, err, name)
		msg := err.Error()
		for _, op := range []string{"Update nDoc", "Mutate cTinyV", "Put cTinyV"} {
			assert.LessOrEqual(t, countOf(msg, op), 1, "%s: %s", name, msg)
		}
	}
}

var _ = errors.New

// Scenario 13 on every write kind: a clobbering transaction action at the version
// field's largest value fails with an error that says so (ErrInvalidInput), and
// batch writes of a value at that version are refused before sending.
func TestSafetyWritesClobberAtMaxEveryKind(t *testing.T) {
	tbl, client := newTestTable(t)
	tiny := MustRegister[vTiny](tbl)
	ctx := context.Background()
	stored := map[string]types.AttributeValue{"PK": sAV("T#x"), "SK": sAV("T"), "Type": sAV("VTiny"), "id": sAV("x"), "n": nAV(1), "version": nAV(127)}
	putRaw(t, tbl, stored)
	for name, call := range map[string]func() error{
		"TxPut":    func() error { return tbl.Transact(ctx, tiny.TxPut(vTiny{ID: "x", N: 2}, Clobber())) },
		"TxUpdate": func() error { return tbl.Transact(ctx, tiny.TxUpdate(vTiny{ID: "x"}, Set("n", 2), Clobber())) },
		"TransactWith": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "clobber-max-" + uniqueSuffix(t)}, tiny.TxPut(vTiny{ID: "x", N: 2}, Clobber()))
		},
	} {
		err := call()
		require.ErrorIs(t, err, ErrInvalidInput, "%s: %v", name, err)
		assert.Contains(t, err.Error(), "largest", name)
	}
	before := client.count("BatchWriteItem")
	_, err := tiny.BatchPut(ctx, []vTiny{{ID: "y", Version: 127}})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = tbl.BatchWrite(ctx, tiny.BatchPutItem(vTiny{ID: "y", Version: 127}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, before, client.count("BatchWriteItem"), "nothing sent")
	assert.Equal(t, stored, rawItem(t, tbl, "T#x", "T"), "nothing written")

	// Version 0 is one rule in Table.BatchWrite too: the next version, as BatchPut stores.
	counters := MustRegister[vCounter](tbl)
	_, err = tbl.BatchWrite(ctx, counters.BatchPutItem(vCounter{ID: "w0"}), counters.BatchPutItem(vCounter{ID: "w5", Version: 5}))
	require.NoError(t, err)
	assert.Equal(t, nAV(1), rawItem(t, tbl, "CTR#w0", "CTR")["version"])
	assert.Equal(t, nAV(6), rawItem(t, tbl, "CTR#w5", "CTR")["version"])
	got, err := counters.Get(ctx, vCounter{ID: "w0"})
	require.NoError(t, err)
	got.N = 3
	got, err = counters.Put(ctx, got)
	require.NoError(t, err, "written conditionally like any other")
	assert.Equal(t, int64(2), got.Version)
}
