package singletable

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/attrvalue"
)

// The index of the safety tests is at the top of safety_test.go.

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

	// A versioned Put at version 0 promises to fail if the item exists, which a
	// random shard cannot check: refused unless the shard is chosen (or Clobber).
	_, err = cs.Put(ctx, rsCounter{ID: "m"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "shardBy")
	err = tbl.Transact(ctx, cs.TxPut(rsCounter{ID: "m"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, int64(0), client.count("UpdateItem")+client.count("PutItem")+client.count("TransactWriteItems"), "nothing written")
	put, err := cs.Put(ctx, rsCounter{ID: "m", Shard: 3})
	require.NoError(t, err)
	_, err = cs.Put(ctx, rsCounter{ID: "m", Shard: 3})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce, "version 0 in the chosen shard: a conflict")
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

// lwDoc is unversioned with timestamps, a counter and a list.
type lwDoc struct {
	_       struct{}  `Type:"LwDoc" PK:"LW#{id}" SK:"LW"`
	ID      string    `dynamodbav:"id"`
	Note    string    `dynamodbav:"note"`
	Tags    []string  `dynamodbav:"tags,omitempty"`
	Created time.Time `dynamodbav:"created" singletable:"createdAt"`
	Updated time.Time `dynamodbav:"updated" singletable:"updatedAt"`
	Edits   int       `dynamodbav:"edits" singletable:"counter"`
}

// lwVer is versioned with a nested map, a createdAt and a counter.
type lwVer struct {
	_       struct{}          `Type:"LwVer" PK:"LV#{id}" SK:"LV"`
	ID      string            `dynamodbav:"id"`
	Note    string            `dynamodbav:"note"`
	Meta    map[string]string `dynamodbav:"meta"`
	Created time.Time         `dynamodbav:"created" singletable:"createdAt"`
	Edits   int               `dynamodbav:"edits" singletable:"counter"`
	Version int64             `dynamodbav:"version" singletable:"version"`
}

// Scenario 18 on the write kinds added since: an item of another type at the key
// is ErrTypeMismatch for every conditional write, and it is left byte for byte.
func TestSafetyWritesOtherTypeAtKey(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs, vers := MustRegister[lwDoc](tbl), MustRegister[lwVer](tbl)
	notes, counters := MustRegister[tsNote](tbl), MustRegister[vCounter](tbl)
	ctx := context.Background()
	foreign := map[string]map[string]types.AttributeValue{
		"LW": {"PK": sAV("LW#f"), "SK": sAV("LW"), "Type": sAV("Stranger"), "id": sAV("f"), "edits": nAV(3), "tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{sAV("a")}}},
		"LV": {"PK": sAV("LV#f"), "SK": sAV("LV"), "Type": sAV("Stranger"), "id": sAV("f"), "version": nAV(1)},
		"NO": {"PK": sAV("NOTE#f"), "SK": sAV("NOTE"), "id": sAV("f")}, // no type at all
		"CT": {"PK": sAV("CTR#f"), "SK": sAV("CTR"), "Type": sAV("Stranger"), "id": sAV("f"), "version": nAV(1)},
	}
	for _, item := range foreign {
		putRaw(t, tbl, item)
	}
	at := time.Unix(1700000000, 0)
	calls := map[string]func() error{
		"counted Put":           func() error { _, err := docs.Put(ctx, lwDoc{ID: "f"}); return err },
		"counted Put ReturnOld": func() error { _, err := docs.Put(ctx, lwDoc{ID: "f"}, ReturnOld(&Old[lwDoc]{})); return err },
		"counted Update":        func() error { _, err := docs.Update(ctx, lwDoc{ID: "f"}); return err },
		"Append":                func() error { _, err := docs.Update(ctx, lwDoc{ID: "f"}, Append("tags", "b")); return err },
		"Update Returning old": func() error {
			_, err := docs.Update(ctx, lwDoc{ID: "f"}, Set("note", "x"), Returning(ReturnAllOld))
			return err
		},
		"Upsert with createdAt": func() error {
			_, err := docs.Update(ctx, lwDoc{ID: "f"}, Set("note", "x"), Upsert())
			return err
		},
		"Delete ReturnOld": func() error { return docs.Delete(ctx, lwDoc{ID: "f"}, ReturnOld(&Old[lwDoc]{})) },
		"Delete Clobber":   func() error { return counters.Delete(ctx, vCounter{ID: "f"}, Clobber()) },
		"Put Clobber":      func() error { _, err := counters.Put(ctx, vCounter{ID: "f"}, Clobber()); return err },
		"Update Clobber": func() error {
			_, err := counters.Update(ctx, vCounter{ID: "f"}, Set("n", 1), Clobber())
			return err
		},
		"versioned Upsert at 0 with counter": func() error {
			_, err := vers.Update(ctx, lwVer{ID: "f"}, Set("note", "x"), Upsert())
			return err
		},
		"versioned SetIfNotExists": func() error {
			_, err := vers.Update(ctx, lwVer{ID: "f", Version: 1}, SetIfNotExists("note", "x"))
			return err
		},
		"versioned Put ReturnOld": func() error {
			_, err := vers.Put(ctx, lwVer{ID: "f", Version: 1}, ReturnOld(&Old[lwVer]{}))
			return err
		},
		"Mutate counted": func() error {
			_, err := vers.Mutate(ctx, lwVer{ID: "f"}, func(*lwVer) error { return nil })
			return err
		},
		"untyped item, createdAt Put": func() error { _, err := notes.Put(ctx, tsNote{ID: "f", Text: "x"}); return err },
		"untyped item, Update":        func() error { _, err := notes.Update(ctx, tsNote{ID: "f"}, Set("text", "x")); return err },
		"TransactWith TxPut": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "om-put-" + uniqueSuffix(t), At: at}, docs.TxPut(lwDoc{ID: "f"}))
		},
		"TransactWith TxUpdate": func() error {
			return tbl.TransactWith(ctx, TxOptions{Token: "om-upd-" + uniqueSuffix(t), At: at}, docs.TxUpdate(lwDoc{ID: "f"}, Append("tags", "b")))
		},
		"Transact TxDelete Clobber": func() error { return tbl.Transact(ctx, counters.TxDelete(vCounter{ID: "f"}, Clobber())) },
		"Transact TxCreate":         func() error { return tbl.Transact(ctx, docs.TxCreate(lwDoc{ID: "f"})) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ErrTypeMismatch, "%v", err)
		})
	}
	assert.Equal(t, foreign["LW"], rawItem(t, tbl, "LW#f", "LW"), "left alone")
	assert.Equal(t, foreign["LV"], rawItem(t, tbl, "LV#f", "LV"), "left alone")
	assert.Equal(t, foreign["NO"], rawItem(t, tbl, "NOTE#f", "NOTE"), "left alone")
	assert.Equal(t, foreign["CT"], rawItem(t, tbl, "CTR#f", "CTR"), "left alone")
}

type ebStamps struct {
	Created time.Time `dynamodbav:"created" singletable:"createdAt"`
	Edits   int       `dynamodbav:"edits" singletable:"counter"`
	Version int64     `dynamodbav:"version" singletable:"version"`
}

type ebDoc struct {
	_ struct{} `Type:"EbDoc" PK:"EB#{id}" SK:"EB"`
	ebStamps
	ID   string `dynamodbav:"id"`
	Note string `dynamodbav:"note"`
}

type ebTwoCounters struct {
	_ struct{} `Type:"EbTwo" PK:"EB2#{id}" SK:"EB"`
	ebStamps
	ID    string `dynamodbav:"id"`
	Views int    `dynamodbav:"views" singletable:"counter"`
}

type ebTwoCreated struct {
	_ struct{} `Type:"EbTwoC" PK:"EB3#{id}" SK:"EB"`
	ebStamps
	ID    string    `dynamodbav:"id"`
	Birth time.Time `dynamodbav:"birth" singletable:"createdAt"`
}

// Scenario 20 with createdAt and a counter: in an embedded struct they work as
// direct ones (with the embedded version), and a second one is a registration
// error naming both fields.
func TestSafetyWritesEmbeddedStampsAndCounter(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	docs, err := Register[ebDoc](tbl)
	require.NoError(t, err)
	ctx := context.Background()
	d, err := docs.Put(ctx, ebDoc{ID: "a", Note: "1"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Version)
	assert.Equal(t, 0, d.Edits)
	created := d.Created
	clk.Advance(time.Hour)
	d.Note = "2"
	d.Created = time.Time{}
	d, err = docs.Put(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Version)
	assert.Equal(t, 1, d.Edits)
	assert.True(t, created.Equal(d.Created), "createdAt kept")
	_, err = docs.Put(ctx, ebDoc{ID: "a", Note: "stale"})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	item := rawItem(t, tbl, "EB#a", "EB")
	assert.Equal(t, nAV(1), item["edits"])
	assert.Equal(t, sAV("2"), item["note"])

	_, err = Register[ebTwoCounters](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "Edits")
	assert.Contains(t, err.Error(), "Views")
	_, err = Register[ebTwoCreated](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "Created")
	assert.Contains(t, err.Error(), "Birth")
}

// Scenario 17 on an entity with updatedAt and a counter: Mutate's defaults carry a
// hot item with no give-ups, every count once; a give-up names the request sent.
func TestSafetyWritesMutateHotCountedItem(t *testing.T) {
	tbl, _ := newTestTable(t)
	cs := MustRegister[tsCounter](tbl)
	ctx := context.Background()
	const goroutines, each = 16, 25
	for _, err := range hotMutate(goroutines, each, false, func() error {
		_, err := cs.Mutate(ctx, tsCounter{ID: "hot"}, func(c *tsCounter) error { c.N++; return nil })
		return err
	}) {
		t.Errorf("Mutate gave up: %v", err)
	}
	got, err := cs.Get(ctx, tsCounter{ID: "hot"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, goroutines*each, got.N)
	assert.Equal(t, int64(goroutines*each), got.Version)
	assert.Equal(t, goroutines*each-1, got.Edits, "every write after the first counted once")

	// A give-up (one attempt, against a writer that always wins) names the request.
	_, err = cs.Mutate(ctx, tsCounter{ID: "hot"}, func(c *tsCounter) error {
		_, err := cs.Update(ctx, tsCounter{ID: "hot"}, Set("n", c.N+1), Clobber())
		require.NoError(t, err)
		return nil
	}, RetryBackoff(Backoff{MaxAttempts: 1}))
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "UpdateItem")
	assert.Equal(t, 1, countOf(err.Error(), "Mutate tsCounter"), err.Error())
	assert.NotContains(t, err.Error(), "Put", "Mutate sent an UpdateItem, and the caller called Mutate")
	assert.Equal(t, 1, countOf(err.Error(), `PK="TC#hot"`), "the key once: %s", err)
}

// Scenario 19: a sweep cancelled midway, over several segments, never reports
// more migrated, lost and failed than seen, per segment or in total; every
// write-back it made is counted; a resumed sweep finishes the rest.
func TestSafetyWritesSweepCancelledStats(t *testing.T) {
	tbl, _ := newTestTable(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	steps := 0
	mig := Migration[sIssue]{Steps: []Step[sIssue]{{
		Raw: sIssueMigration.Steps[0].Raw,
		Typed: func(v *sIssue) error {
			mu.Lock()
			defer mu.Unlock()
			if steps++; steps == 70 {
				cancel()
			}
			v.Title = "[" + v.Title + "]"
			return nil
		},
	}}}
	issues, err := Register[sIssue](tbl, Migrations(mig))
	require.NoError(t, err)
	const n = 300
	for i := 1; i <= n; i++ {
		putRaw(t, tbl, legacyIssue(i))
	}
	store := &MemoryStore{}
	stats, err := issues.Sweep(ctx, Segments(4), PageSize(20), SweepProgressIn(store))
	require.ErrorIs(t, err, context.Canceled)
	check := func(stats SweepStats) {
		t.Helper()
		var seen, done int64
		for _, sg := range stats.Segments {
			assert.LessOrEqual(t, sg.Migrated+sg.Lost+sg.Failed, sg.Seen, "segment %d: %+v", sg.Segment, sg)
			seen += sg.Seen
			done += sg.Migrated + sg.Lost + sg.Failed
		}
		assert.Equal(t, stats.Seen, seen, "the total is the segments' sum")
		assert.Equal(t, stats.Migrated+stats.Lost+stats.Failed, done)
		assert.LessOrEqual(t, stats.Migrated+stats.Lost+stats.Failed, stats.Seen, "%+v", stats)
	}
	check(stats)
	assert.Less(t, stats.Migrated, int64(n), "stopped midway")
	current := func() int64 {
		c := int64(0)
		for i := 1; i <= n; i++ {
			if attrvalue.Equal(nAV(2), rawItem(t, tbl, "REPO#r", "ISSUE#"+padded(i))["_schema"]) {
				c++
			}
		}
		return c
	}
	assert.Equal(t, stats.Migrated, current(), "every write-back counted")

	rest, err := issues.Sweep(context.Background(), Segments(4), PageSize(20), SweepProgressIn(store))
	require.NoError(t, err)
	check(rest)
	assert.Equal(t, int64(n), stats.Migrated+rest.Migrated+rest.Lost, "the rest migrated on resume")
	assert.Equal(t, int64(n), current())
}

// Scenarios 16 and 21 on the write kinds added since: an item stored at version
// 0 (or without one) by other code is written conditionally like any other by
// TransactWith, an Upsert of an entity with createdAt and a counter, and Put of
// such an entity; version 0 over an item with a version is a conflict.
func TestSafetyWritesVersionZeroNewKinds(t *testing.T) {
	tbl, _ := newTestTable(t)
	vers := MustRegister[lwVer](tbl)
	ctx := context.Background()
	legacy := func(id string, version types.AttributeValue) {
		item := map[string]types.AttributeValue{"PK": sAV("LV#" + id), "SK": sAV("LV"), "Type": sAV("LwVer"), "id": sAV(id), "note": sAV("old")}
		if version != nil {
			item["version"] = version
		}
		putRaw(t, tbl, item)
	}
	at := time.Unix(1700000000, 0)
	legacy("t0", nAV(0))
	require.NoError(t, tbl.TransactWith(ctx, TxOptions{Token: "v0-put-" + uniqueSuffix(t), At: at}, vers.TxPut(lwVer{ID: "t0", Note: "tx"})))
	legacy("u0", &types.AttributeValueMemberNULL{Value: true})
	require.NoError(t, tbl.TransactWith(ctx, TxOptions{Token: "v0-upd-" + uniqueSuffix(t), At: at}, vers.TxUpdate(lwVer{ID: "u0"}, Set("note", "tx"))))
	legacy("s0", nil)
	_, err := vers.Update(ctx, lwVer{ID: "s0"}, Set("note", "up"), Upsert())
	require.NoError(t, err)
	legacy("p0", nAV(0))
	_, err = vers.Put(ctx, lwVer{ID: "p0", Note: "put"})
	require.NoError(t, err)
	for _, id := range []string{"t0", "u0", "s0", "p0"} {
		item := rawItem(t, tbl, "LV#"+id, "LV")
		assert.Equal(t, nAV(1), item["version"], id)
		assert.Equal(t, nAV(0), item["edits"], "%s: the first counted write of an item without a count stores 0", id)
		assert.Contains(t, item, "created", id)
	}
	var ce *ConflictError
	err = tbl.TransactWith(ctx, TxOptions{Token: "v0-again-" + uniqueSuffix(t), At: at}, vers.TxPut(lwVer{ID: "t0", Note: "again"}))
	require.ErrorIs(t, err, ErrConflict)
	_, err = vers.Update(ctx, lwVer{ID: "s0"}, Set("note", "again"), Upsert())
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(1), ce.Current)
	_, err = vers.Put(ctx, lwVer{ID: "p0", Note: "again"})
	require.ErrorAs(t, err, &ce)
}

// Deleting a missing item succeeds, on an entity sharded at random too (the item
// is looked for in every shard), unless the version held says it should be there.
func TestSafetyWritesDeleteMissingRandomShard(t *testing.T) {
	tbl, client := newTestTable(t)
	cs := MustRegister[rsCounter](tbl)
	events := MustRegister[rsEvent](tbl)
	ctx := context.Background()
	require.NoError(t, events.Delete(ctx, rsEvent{ID: "none"}))
	require.NoError(t, cs.Delete(ctx, rsCounter{ID: "none"}))
	require.NoError(t, cs.Delete(ctx, rsCounter{ID: "none", Version: 3}, Clobber()))
	err := cs.Delete(ctx, rsCounter{ID: "none", Version: 3})
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, int64(0), client.count("DeleteItem"), "nothing to send")

	put, err := cs.Put(ctx, rsCounter{ID: "there", Shard: 5})
	require.NoError(t, err)
	require.NoError(t, cs.Delete(ctx, rsCounter{ID: "there", Version: put.Version}))
	assert.Nil(t, rawItem(t, tbl, "RSC#"+strconv.Itoa(put.Shard), "there"))
}
