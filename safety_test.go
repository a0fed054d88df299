package singletable

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/attrvalue"
)

// Regression tests for the data-safety scenarios of issue 14, each against
// DynamoDB Local, with faults injected at the HTTP layer where needed. They assert
// the stored items and the errors returned.
//
// Index of the safety*_test.go files (test -> the behaviour it tests):
//
// safety_test.go:
//   - TestSafetyWriteBackKeepsUnmodelledAttributes, TestSafetyNoWriteBackFromIndexReads,
//     TestSafetyMutateKeepsWhatItDoesNotModel -> migration write-back (migrate.go)
//   - TestSafetyLostDeleteThenRecreate, TestSafetyLostCreateThenDelete,
//     TestSafetyLostUpdateThenRecreate, TestSafetyLostAddNeverAppliedTwice,
//     TestSafetyMutatePinnedToIncarnation -> lost answers judged by the read-back
//     (pipeline.go, receipt.go, occ.go)
//   - TestSafetyCreateOnRandomShardRefused -> random shards (shard.go)
//   - TestSafetyIndexKeyInputsAreStoredValues, TestSafetyZeroNumberOneRule,
//     TestSafetyUpsertStoresIndexInputs, TestSafetyEmptyingIndexInputNeedsNoOther
//     -> index keys rendered from stored values (render.go, update.go)
//   - TestSafetyClobberAtMaxVersion, TestSafetyVersionZeroOneRule,
//     TestSafetyEmbeddedVersionField -> versions (version.go)
//   - TestSafetyMutateHotItemNoGiveUps -> Mutate under contention (occ.go)
//   - TestSafetyOtherTypeAtKeyOneError -> the type guard (write.go, readpath.go)
//   - TestSafetyNoDoubledPrefixes -> error messages (errors.go)
//
// safety_reads_test.go: issue 14's scenarios on every read path (readpath.go,
// migrate.go, projection.go, shard.go, timestamps.go).
//
// safety_writes_test.go: the scenarios on the write kinds added since
// (pipeline.go, planner.go, counter.go, timestamps.go, version.go, sweep.go).
//
// safety_writes_lost_test.go: lost answers on those write kinds (pipeline.go,
// receipt.go).

// otherClient is a second client of the same DynamoDB table, as another process
// would be: its own Table on a client without faults.
func otherClient(t *testing.T, tbl *Table) *Table {
	t.Helper()
	other, err := NewTable(local.Client(t), tbl.Name(), testTableOptions)
	require.NoError(t, err)
	return other
}

// putRaw stores an item as other code would.
func putRaw(t *testing.T, tbl *Table, item map[string]types.AttributeValue) {
	t.Helper()
	_, err := local.Client(t).PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
	require.NoError(t, err)
}

func nAV(n int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(n)} }

// sIssue is an issue whose schema moved "prio" to "priority" (a raw step) and
// titles to upper case (a typed step).
type sIssue struct {
	_        struct{} `Type:"SIssue" PK:"REPO#{repo}" SK:"ISSUE#{number:08}" GSI1PK:"PRIO#{repo}#{priority}" GSI1SK:"ISSUE#{number:08}"`
	Repo     string   `dynamodbav:"repo"`
	Number   int      `dynamodbav:"number"`
	Title    string   `dynamodbav:"title"`
	Priority string   `dynamodbav:"priority,omitempty"`
}

var sIssueMigration = Migration[sIssue]{Steps: []Step[sIssue]{{
	Raw: func(item RawItem) error {
		if p, ok := item["prio"]; ok {
			item["priority"] = p
			delete(item, "prio")
		}
		return nil
	},
	Typed: func(v *sIssue) error { v.Title = "[" + v.Title + "]"; return nil },
}}}

// legacyIssue is a schema-1 item written by other code, holding attributes the
// Go type has no field for.
func legacyIssue(n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": sAV("REPO#r"), "SK": sAV("ISSUE#" + padded(n)), "Type": sAV("SIssue"),
		"repo": sAV("r"), "number": nAV(n), "title": sAV("t" + strconv.Itoa(n)), "prio": sAV("P1"),
		"assignee":  sAV("ann"),
		"expiresAt": nAV(1700000000 + n),
		"nested":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": &types.AttributeValueMemberL{Value: []types.AttributeValue{nAV(1), sAV("x")}}}},
	}
}

func padded(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}

// Scenario 1: a write-back changes only what the migration changed; attributes
// the struct does not model stay as they were, byte for byte.
func TestSafetyWriteBackKeepsUnmodelledAttributes(t *testing.T) {
	tbl, _ := newTestTable(t)
	issues, err := Register[sIssue](tbl, Migrations(sIssueMigration))
	require.NoError(t, err)
	ctx := context.Background()
	for n := 1; n <= 3; n++ {
		putRaw(t, tbl, legacyIssue(n))
	}

	got, err := issues.Get(ctx, sIssue{Repo: "r", Number: 1})
	require.NoError(t, err)
	assert.Equal(t, "[t1]", got.Title)
	assert.Equal(t, "P1", got.Priority)

	stats, err := issues.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), stats.Migrated, "the sweep migrates the two items the Get did not")

	for n := 1; n <= 3; n++ {
		item := rawItem(t, tbl, "REPO#r", "ISSUE#"+padded(n))
		want := legacyIssue(n)
		for _, a := range []string{"assignee", "expiresAt", "nested"} {
			assert.True(t, attrvalue.Equal(want[a], item[a]), "item %d keeps %s as it was: %v", n, a, item[a])
		}
		assert.NotContains(t, item, "prio", "the raw step's removal is written")
		assert.Equal(t, sAV("P1"), item["priority"])
		assert.Equal(t, sAV("[t"+strconv.Itoa(n)+"]"), item["title"])
		assert.Equal(t, nAV(2), item["_schema"])
		assert.Equal(t, sAV("PRIO#r#P1"), item["GSI1PK"], "index keys recomputed")
	}
}

// Scenario 2: an item read through an index whose projection leaves attributes out
// is migrated in memory and never written back.
func TestSafetyNoWriteBackFromIndexReads(t *testing.T) {
	client := newCountingClient(local.Client(t))
	tbl, err := NewTable(client, otherName(t), testTableOptions)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, tbl.CreateTable(ctx, func(in *dynamodb.CreateTableInput) {
		for i := range in.GlobalSecondaryIndexes {
			in.GlobalSecondaryIndexes[i].Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"Type", "repo", "number", "title", "prio"}}
		}
	}))
	t.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	issues, err := Register[sIssue](tbl, Migrations(sIssueMigration))
	require.NoError(t, err)
	item := legacyIssue(1)
	item["GSI1PK"], item["GSI1SK"] = sAV("PRIO#r#P1"), sAV("ISSUE#00000001")
	putRaw(t, tbl, item)

	writes := func() int64 { return client.count("PutItem") + client.count("UpdateItem") + client.count("DeleteItem") }
	before := writes()
	page, err := issues.Query(ctx, sIssue{Repo: "r", Priority: "P1"}, On("GSI1"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, before, writes(), "nothing written from a projected read")
	stored := rawItem(t, tbl, "REPO#r", "ISSUE#00000001")
	assert.Equal(t, sAV("t1"), stored["title"], "the item is untouched")
	assert.Equal(t, sAV("ann"), stored["assignee"])
	assert.NotContains(t, stored, "_schema")
}

func otherName(t *testing.T) string {
	return "safety-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// Scenario 3: a Delete lands, its response is lost, another client creates the
// item again (version 1) before the read-back: the new item is not deleted, and
// Delete does not report success.
func TestSafetyLostDeleteThenRecreate(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	others := MustRegister[vCounter](otherClient(t, tbl))
	ctx := context.Background()
	v1, err := counters.Create(ctx, vCounter{ID: "d", N: 1})
	require.NoError(t, err)

	inj.Add(fault.Rule{Ops: []string{"DeleteItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
		_, err := others.Create(ctx, vCounter{ID: "d", N: 99})
		require.NoError(t, err)
	})})
	err = counters.Delete(ctx, v1)
	require.ErrorIs(t, err, ErrAmbiguous)
	assert.NotErrorIs(t, err, ErrConflict)

	got, err := others.Get(ctx, vCounter{ID: "d"}, Consistent())
	require.NoError(t, err, "the other client's new item is still there")
	assert.Equal(t, 99, got.N)
	assert.Equal(t, int64(1), got.Version)
}

// Scenario 4: a Create lands, its response is lost, another client deletes the
// item before the read-back: it is not created again.
func TestSafetyLostCreateThenDelete(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	items := MustRegister[relItem](tbl)
	other := otherClient(t, tbl)
	otherCounters, otherItems := MustRegister[vCounter](other), MustRegister[relItem](other)
	ctx := context.Background()

	t.Run("versioned", func(t *testing.T) {
		inj.Add(fault.Rule{Ops: []string{"PutItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			cur, err := otherCounters.Get(ctx, vCounter{ID: "c4"}, Consistent())
			require.NoError(t, err)
			require.NoError(t, otherCounters.Delete(ctx, cur))
		})})
		_, err := counters.Create(ctx, vCounter{ID: "c4"})
		require.ErrorIs(t, err, ErrAmbiguous)
		_, err = counters.Get(ctx, vCounter{ID: "c4"}, Consistent())
		assert.ErrorIs(t, err, ErrNotFound, "not resurrected")
	})
	t.Run("versioned Put at version 0", func(t *testing.T) {
		inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			cur, err := otherCounters.Get(ctx, vCounter{ID: "p4"}, Consistent())
			require.NoError(t, err)
			require.NoError(t, otherCounters.Delete(ctx, cur))
		})})
		_, err := counters.Put(ctx, vCounter{ID: "p4"})
		require.ErrorIs(t, err, ErrAmbiguous)
		_, err = counters.Get(ctx, vCounter{ID: "p4"}, Consistent())
		assert.ErrorIs(t, err, ErrNotFound, "not resurrected")
	})
	t.Run("unversioned", func(t *testing.T) {
		v := relItem{Worker: 4, Seq: 1, Op: "create"}
		inj.Add(fault.Rule{Ops: []string{"PutItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
			require.NoError(t, otherItems.Delete(ctx, v))
		})})
		_, err := items.Create(ctx, v)
		require.ErrorIs(t, err, ErrAmbiguous)
		_, err = items.Get(ctx, v, Consistent())
		assert.ErrorIs(t, err, ErrNotFound, "not resurrected")
	})
}

// Scenario 5: an Update lands, its response is lost, another client deletes and
// re-creates the item: not a conflict (it landed), not applied again.
func TestSafetyLostUpdateThenRecreate(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	others := MustRegister[vCounter](otherClient(t, tbl))
	ctx := context.Background()
	cur, err := counters.Create(ctx, vCounter{ID: "u"})
	require.NoError(t, err)
	for range 2 {
		cur, err = counters.Update(ctx, cur, Add("n", 1))
		require.NoError(t, err)
	}
	require.Equal(t, int64(3), cur.Version)

	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
		got, err := others.Get(ctx, vCounter{ID: "u"}, Consistent())
		require.NoError(t, err)
		require.Equal(t, int64(4), got.Version, "the update landed")
		require.NoError(t, others.Delete(ctx, got))
		_, err = others.Create(ctx, vCounter{ID: "u", N: 100})
		require.NoError(t, err)
	})})
	_, err = counters.Update(ctx, cur, Add("n", 1))
	require.ErrorIs(t, err, ErrAmbiguous)
	var ce *ConflictError
	assert.False(t, errors.As(err, &ce), "not reported as a conflict: it landed")

	got, err := others.Get(ctx, vCounter{ID: "u"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 100, got.N, "not applied again to the new item")
	assert.Equal(t, int64(1), got.Version)
}

// Mutate knows the incarnation it read: a lost response with no other writer is
// resolved (landed or sent again), and a re-created item is never written.
func TestSafetyMutatePinnedToIncarnation(t *testing.T) {
	tbl, inj := faultTable(t)
	counters := MustRegister[vCounter](tbl)
	others := MustRegister[vCounter](otherClient(t, tbl))
	ctx := context.Background()
	_, err := counters.Create(ctx, vCounter{ID: "m"})
	require.NoError(t, err)

	// A reset before the write reaches DynamoDB: provably not landed, sent again.
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.Reset()})
	got, err := counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.N++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 1, got.N)

	// Deleted and created again between the lost answer and the read-back.
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Times: 1, Fault: fault.LoseResponse().Then(func() {
		cur, err := others.Get(ctx, vCounter{ID: "m"}, Consistent())
		require.NoError(t, err)
		require.NoError(t, others.Delete(ctx, cur))
		_, err = others.Create(ctx, vCounter{ID: "m", N: 50})
		require.NoError(t, err)
	})})
	_, err = counters.Mutate(ctx, vCounter{ID: "m"}, func(c *vCounter) error { c.N++; return nil })
	require.ErrorIs(t, err, ErrAmbiguous)
	cur, err := others.Get(ctx, vCounter{ID: "m"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 50, cur.N)
}

// An unversioned Update with Add whose response is lost is never applied twice:
// its receipt proves it landed, or the result is ErrAmbiguous.
func TestSafetyLostAddNeverAppliedTwice(t *testing.T) {
	tbl, inj := faultTable(t)
	items := MustRegister[relItem](tbl)
	ctx := context.Background()
	v := relItem{Worker: 1, Seq: 1, Op: "add"}
	_, err := items.Put(ctx, v)
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Rate: 0.5})
	acked := 0
	for range 40 {
		_, err := items.Update(ctx, v, Add("hits", 1))
		if err == nil {
			acked++
			continue
		}
		require.ErrorIs(t, err, ErrAmbiguous)
	}
	got, err := items.Get(ctx, v, Consistent())
	require.NoError(t, err)
	assert.Equal(t, acked, got.Hits, "every acknowledged ADD applied once, none twice")
}

// rsEvent is sharded at random.
type rsEvent struct {
	_     struct{} `Type:"RSEvent" PK:"RSE#{shard}" SK:"{id}" singletable:"shards=8"`
	Shard int      `dynamodbav:"shard" singletable:"shard"`
	ID    string   `dynamodbav:"id"`
}

// Scenario 7: Create on a randomly sharded entity is refused before sending.
func TestSafetyCreateOnRandomShardRefused(t *testing.T) {
	tbl, client := newTestTable(t)
	events := MustRegister[rsEvent](tbl)
	ctx := context.Background()
	_, err := events.Create(ctx, rsEvent{ID: "e1"})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "shardBy")
	assert.Equal(t, int64(0), client.count("PutItem"))
	err = tbl.Transact(ctx, events.TxCreate(rsEvent{ID: "e1"}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, int64(0), client.count("TransactWriteItems"))
}

// Scenario 8: an index key is never written from a value that is not the stored
// one.
func TestSafetyIndexKeyInputsAreStoredValues(t *testing.T) {
	tbl, _ := newTestTable(t)
	orders := MustRegister[tOrder](tbl)
	ctx := context.Background()
	created := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	o, err := orders.Put(ctx, tOrder{CustomerID: "c", OrderID: "o", Status: "NEW", CreatedAt: created})
	require.NoError(t, err)

	stale := o
	stale.CreatedAt = created.Add(time.Hour)
	_, err = orders.Update(ctx, stale, Set("status", "PAID"))
	var ke *KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "CreatedAt", ke.Field)
	assert.Contains(t, err.Error(), "createdAt (tOrder.CreatedAt)")
	item := rawItem(t, tbl, "CUST#c", "ORDER#o")
	assert.Equal(t, sAV("NEW"), item["status"], "nothing written")

	// Two concurrent updates from one earlier copy, one moving createdAt and one
	// the status: the index keys always agree with the item.
	for round := range 40 {
		base, err := orders.Get(ctx, tOrder{CustomerID: "c", OrderID: "o"}, Consistent())
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = orders.Update(ctx, base, Set("createdAt", created.Add(time.Duration(round+1)*time.Minute)))
		}()
		go func() {
			defer wg.Done()
			_, _ = orders.Update(ctx, base, Set("status", "S"+strconv.Itoa(round)))
		}()
		wg.Wait()
		item := rawItem(t, tbl, "CUST#c", "ORDER#o")
		stored, err := time.Parse(time.RFC3339Nano, item["createdAt"].(*types.AttributeValueMemberS).Value)
		require.NoError(t, err)
		want, _, err := orders.x.info.indexes["GSI1"][1].render(orders.x.info, reflectValue(&tOrder{OrderID: "o", CreatedAt: stored}), false)
		require.NoError(t, err)
		require.Equal(t, sAV(want), item["GSI1SK"], "round %d: GSI1SK agrees with createdAt", round)
	}
}

type zPrio struct {
	_        struct{} `Type:"ZPrio" PK:"Z#{id}" SK:"Z" GSI2PK:"PRIO#{priority}" GSI2SK:"Z#{id}"`
	ID       string   `dynamodbav:"id"`
	Priority int      `dynamodbav:"priority,omitempty"`
}

// Scenario 9: one rule for a zero number of an omitempty field, on Put and Update:
// it is not stored, so it is no index key input.
func TestSafetyZeroNumberOneRule(t *testing.T) {
	tbl, _ := newTestTable(t)
	prios := MustRegister[zPrio](tbl)
	ctx := context.Background()
	_, err := prios.Put(ctx, zPrio{ID: "a"})
	require.NoError(t, err)
	item := rawItem(t, tbl, "Z#a", "Z")
	assert.NotContains(t, item, "priority")
	assert.NotContains(t, item, "GSI2PK", "Put leaves the index")

	_, err = prios.Update(ctx, zPrio{ID: "a"}, Set("priority", 3))
	require.NoError(t, err)
	assert.Equal(t, sAV("PRIO#3"), rawItem(t, tbl, "Z#a", "Z")["GSI2PK"])
	_, err = prios.Update(ctx, zPrio{ID: "a"}, Set("priority", 0))
	require.NoError(t, err)
	item = rawItem(t, tbl, "Z#a", "Z")
	assert.NotContains(t, item, "priority")
	assert.NotContains(t, item, "GSI2PK", "Update leaves the index, as Put does")
}

// Scenario 10: an upsert stores every input its index keys are rendered from.
func TestSafetyUpsertStoresIndexInputs(t *testing.T) {
	tbl, _ := newTestTable(t)
	orders := MustRegister[tOrder](tbl)
	ctx := context.Background()
	created := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	got, err := orders.Update(ctx, tOrder{CustomerID: "c", OrderID: "u", CreatedAt: created}, Set("status", "NEW"), Upsert())
	require.NoError(t, err)
	assert.True(t, created.Equal(got.CreatedAt), "createdAt stored")
	item := rawItem(t, tbl, "CUST#c", "ORDER#u")
	require.Contains(t, item, "createdAt")
	assert.Equal(t, sAV("STATUS#NEW"), item["GSI1PK"])
}

type vTiny struct {
	_       struct{} `Type:"VTiny" PK:"T#{id}" SK:"T"`
	ID      string   `dynamodbav:"id"`
	N       int      `dynamodbav:"n"`
	Version int8     `dynamodbav:"version" singletable:"version"`
}

// Scenario 13: clobbering writes respect the version field's bound.
func TestSafetyClobberAtMaxVersion(t *testing.T) {
	tbl, _ := newTestTable(t)
	tiny := MustRegister[vTiny](tbl)
	ctx := context.Background()
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("T#x"), "SK": sAV("T"), "Type": sAV("VTiny"), "id": sAV("x"), "n": nAV(1), "version": nAV(127)})
	_, err := tiny.Put(ctx, vTiny{ID: "x", N: 2}, Clobber())
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = tiny.Update(ctx, vTiny{ID: "x"}, Set("n", 3), Clobber())
	require.ErrorIs(t, err, ErrInvalidInput)
	item := rawItem(t, tbl, "T#x", "T")
	assert.Equal(t, nAV(127), item["version"])
	assert.Equal(t, nAV(1), item["n"], "nothing written")
	got, err := tiny.Get(ctx, vTiny{ID: "x"})
	require.NoError(t, err)
	assert.Equal(t, int8(127), got.Version)
}

// Scenarios 15, 16 and 21: one rule for version 0, on every write kind and BatchPut.
func TestSafetyVersionZeroOneRule(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()

	left, err := counters.BatchPut(ctx, []vCounter{{ID: "b1"}, {ID: "b2", Version: 5}})
	require.NoError(t, err)
	require.Empty(t, left)
	assert.Equal(t, nAV(1), rawItem(t, tbl, "CTR#b1", "CTR")["version"], "a new value stores version 1, as Put does")
	assert.Equal(t, nAV(6), rawItem(t, tbl, "CTR#b2", "CTR")["version"], "the next version, as Put stores")

	// An item stored at version 0 by other code is written conditionally like any other.
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("CTR#z"), "SK": sAV("CTR"), "Type": sAV("Counter"), "id": sAV("z"), "n": nAV(0), "version": nAV(0)})
	z, err := counters.Get(ctx, vCounter{ID: "z"})
	require.NoError(t, err)
	z.N = 1
	z, err = counters.Put(ctx, z)
	require.NoError(t, err)
	assert.Equal(t, int64(1), z.Version)
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("CTR#z2"), "SK": sAV("CTR"), "Type": sAV("Counter"), "id": sAV("z2"), "n": nAV(0), "version": nAV(0)})
	got, err := counters.Update(ctx, vCounter{ID: "z2"}, Set("n", 7))
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Version)
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("CTR#z3"), "SK": sAV("CTR"), "Type": sAV("Counter"), "id": sAV("z3"), "n": nAV(0), "version": nAV(0)})
	got, err = counters.Mutate(ctx, vCounter{ID: "z3"}, func(c *vCounter) error { c.N = 9; return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Version)

	// Upsert at version 0 creates, or conflicts with an item that has a version.
	got, err = counters.Update(ctx, vCounter{ID: "new"}, Set("n", 1), Upsert())
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Version)
	_, err = counters.Update(ctx, vCounter{ID: "new"}, Set("n", 2), Upsert())
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(1), ce.Current)
	// Update at version 0 of an item with a version is a conflict, not a refusal.
	_, err = counters.Update(ctx, vCounter{ID: "new"}, Set("n", 2))
	require.ErrorAs(t, err, &ce)
	// Put at 0 over an item with a version: a conflict naming it.
	_, err = counters.Put(ctx, vCounter{ID: "new"})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(1), ce.Current)
}

// Scenario 17: Mutate's defaults carry a hot item under moderate contention.
func TestSafetyMutateHotItemNoGiveUps(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()
	const goroutines, each = 16, 25
	for _, err := range hotMutate(goroutines, each, false, func() error {
		_, err := counters.Mutate(ctx, vCounter{ID: "hot"}, func(c *vCounter) error { c.N++; return nil })
		return err
	}) {
		t.Errorf("Mutate gave up: %v", err)
	}
	got, err := counters.Get(ctx, vCounter{ID: "hot"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, goroutines*each, got.N)
	assert.Equal(t, int64(goroutines*each), got.Version)
}

// Scenario 18: an item of another type at the key is ErrTypeMismatch for every
// call, and it is left alone.
func TestSafetyOtherTypeAtKeyOneError(t *testing.T) {
	tbl, _ := newTestTable(t)
	counters := MustRegister[vCounter](tbl)
	customers := MustRegister[tCustomer](tbl)
	ctx := context.Background()
	foreign := map[string]types.AttributeValue{"PK": sAV("CTR#f"), "SK": sAV("CTR"), "Type": sAV("Stranger"), "id": sAV("f"), "n": nAV(5)}
	putRaw(t, tbl, foreign)
	foreignCust := map[string]types.AttributeValue{"PK": sAV("CUST#f"), "SK": sAV("PROFILE"), "Type": sAV("Stranger"), "customerId": sAV("f")}
	putRaw(t, tbl, foreignCust)

	calls := map[string]func() error{
		"versioned Get":    func() error { _, err := counters.Get(ctx, vCounter{ID: "f"}); return err },
		"versioned Put":    func() error { _, err := counters.Put(ctx, vCounter{ID: "f", N: 1}); return err },
		"versioned Create": func() error { _, err := counters.Create(ctx, vCounter{ID: "f"}); return err },
		"versioned Update": func() error { _, err := counters.Update(ctx, vCounter{ID: "f", Version: 1}, Set("n", 2)); return err },
		"versioned Delete": func() error { return counters.Delete(ctx, vCounter{ID: "f", Version: 1}) },
		"versioned Mutate": func() error {
			_, err := counters.Mutate(ctx, vCounter{ID: "f"}, func(*vCounter) error { return nil })
			return err
		},
		"unversioned Get":    func() error { _, err := customers.Get(ctx, tCustomer{CustomerID: "f"}); return err },
		"unversioned Put":    func() error { _, err := customers.Put(ctx, tCustomer{CustomerID: "f", Name: "n"}); return err },
		"unversioned Create": func() error { _, err := customers.Create(ctx, tCustomer{CustomerID: "f", Name: "n"}); return err },
		"unversioned Update": func() error {
			_, err := customers.Update(ctx, tCustomer{CustomerID: "f"}, Set("name", "x"))
			return err
		},
		"unversioned Delete": func() error { return customers.Delete(ctx, tCustomer{CustomerID: "f"}) },
		"unversioned Upsert": func() error {
			_, err := customers.Update(ctx, tCustomer{CustomerID: "f"}, Set("name", "x"), Upsert())
			return err
		},
		"transaction Put":     func() error { return tbl.Transact(ctx, customers.TxPut(tCustomer{CustomerID: "f", Name: "n"})) },
		"transaction Update":  func() error { return tbl.Transact(ctx, counters.TxUpdate(vCounter{ID: "f", Version: 1}, Set("n", 2))) },
		"transaction Delete":  func() error { return tbl.Transact(ctx, customers.TxDelete(tCustomer{CustomerID: "f"})) },
		"transaction Create":  func() error { return tbl.Transact(ctx, customers.TxCreate(tCustomer{CustomerID: "f", Name: "n"})) },
		"versioned Upsert v0": func() error { _, err := counters.Update(ctx, vCounter{ID: "f"}, Set("n", 2), Upsert()); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.ErrorIs(t, err, ErrTypeMismatch, "%v", err)
		})
	}
	assert.Equal(t, foreign, rawItem(t, tbl, "CTR#f", "CTR"), "left alone")
	assert.Equal(t, foreignCust, rawItem(t, tbl, "CUST#f", "PROFILE"), "left alone")
}

// Scenario 19 (part): error messages name the operation once.
func TestSafetyNoDoubledPrefixes(t *testing.T) {
	tbl, _ := newTestTable(t)
	orders := MustRegister[tOrder](tbl)
	ctx := context.Background()
	for _, err := range []error{
		func() error {
			_, err := orders.Update(ctx, tOrder{CustomerID: "c", OrderID: "missing"}, Set("status", "X"))
			return err
		}(),
		func() error {
			_, err := orders.Update(ctx, tOrder{CustomerID: "c", OrderID: "o"}, Set("nope", 1))
			return err
		}(),
		func() error { _, err := orders.Update(ctx, tOrder{CustomerID: "c", OrderID: "o"}); return err }(),
	} {
		require.Error(t, err)
		msg := err.Error()
		assert.Equal(t, 1, countOf(msg, "Update tOrder"), "%s", msg)
	}
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}

type evBase struct {
	Version int64  `dynamodbav:"version" singletable:"version"`
	Updated string `dynamodbav:"updated,omitempty"`
}

type evDoc struct {
	_ struct{} `Type:"EVDoc" PK:"EV#{id}" SK:"EV"`
	evBase
	ID string `dynamodbav:"id"`
	N  int    `dynamodbav:"n"`
}

type evTwo struct {
	_ struct{} `Type:"EVTwo" PK:"EV2#{id}" SK:"EV"`
	evBase
	ID    string `dynamodbav:"id"`
	Other int64  `dynamodbav:"other" singletable:"version"`
}

// Scenario 20: a version field in an embedded struct works as a direct one; two
// version fields are a registration error naming both.
func TestSafetyEmbeddedVersionField(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs, err := Register[evDoc](tbl)
	require.NoError(t, err)
	ctx := context.Background()
	d, err := docs.Put(ctx, evDoc{ID: "a", N: 1})
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Version)
	_, err = docs.Put(ctx, evDoc{ID: "a", N: 2}) // version 0 again: stale
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	_, err = docs.Put(ctx, evDoc{ID: "a", N: 2, evBase: evBase{Version: 7}})
	require.ErrorAs(t, err, &ce)
	got, err := docs.Mutate(ctx, evDoc{ID: "a"}, func(d *evDoc) error { d.N = 3; return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Version)

	_, err = Register[evTwo](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "Version")
	assert.Contains(t, err.Error(), "Other")
}

type gDevice struct {
	_      struct{} `Type:"GDevice" PK:"DEV#{id}" SK:"DEV" GSI1PK:"EMAIL#{email}" GSI1SK:"{device}"`
	ID     string   `dynamodbav:"id"`
	Email  string   `dynamodbav:"email,omitempty"`
	Device string   `dynamodbav:"device,omitempty"`
}

// Scenario 22: emptying an input of an index key needs no other input.
func TestSafetyEmptyingIndexInputNeedsNoOther(t *testing.T) {
	tbl, _ := newTestTable(t)
	devs := MustRegister[gDevice](tbl)
	ctx := context.Background()
	_, err := devs.Put(ctx, gDevice{ID: "1", Email: "a@b", Device: "phone"})
	require.NoError(t, err)
	require.Contains(t, rawItem(t, tbl, "DEV#1", "DEV"), "GSI1PK")
	_, err = devs.Update(ctx, gDevice{ID: "1"}, Remove("device"))
	require.NoError(t, err)
	item := rawItem(t, tbl, "DEV#1", "DEV")
	assert.NotContains(t, item, "GSI1PK")
	assert.NotContains(t, item, "GSI1SK")
	assert.Equal(t, sAV("a@b"), item["email"])
	_, err = devs.Update(ctx, gDevice{ID: "1"}, Set("device", "tablet"))
	require.ErrorIs(t, err, ErrInvalidKey, "rendering the keys again needs the email")
	_, err = devs.Update(ctx, gDevice{ID: "1", Email: "a@b"}, Set("device", "tablet"))
	require.NoError(t, err)
	assert.Equal(t, sAV("tablet"), rawItem(t, tbl, "DEV#1", "DEV")["GSI1SK"])
	_, err = devs.Update(ctx, gDevice{ID: "1"}, Set("device", ""))
	require.NoError(t, err)
	assert.NotContains(t, rawItem(t, tbl, "DEV#1", "DEV"), "GSI1SK")
}

type mlAddress struct {
	City string `dynamodbav:"city"`
}

// mlDoc is versioned; other code stores more than it models.
type mlDoc struct {
	_       struct{}  `Type:"MLDoc" PK:"ML#{id}" SK:"ML"`
	ID      string    `dynamodbav:"id"`
	Title   string    `dynamodbav:"title"`
	Tags    []string  `dynamodbav:"tags"`
	Address mlAddress `dynamodbav:"address"`
	Note    *string   `dynamodbav:"note"`
	Version int64     `dynamodbav:"version" singletable:"version"`
}

// Scenario 1 on Mutate: it writes only what its function changed. A field the
// function left alone keeps its stored bytes (a string set stays a set, a NULL
// stays), a changed map is merged into the stored one (entries the struct does not
// model stay), and attributes the struct does not know stay.
func TestSafetyMutateKeepsWhatItDoesNotModel(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs := MustRegister[mlDoc](tbl)
	ctx := context.Background()
	legacy := map[string]types.AttributeValue{
		"PK": sAV("ML#1"), "SK": sAV("ML"), "Type": sAV("MLDoc"), "id": sAV("1"), "title": sAV("t"),
		"tags":     &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"address":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"city": sAV("Oslo"), "zip": sAV("0150")}},
		"note":     &types.AttributeValueMemberNULL{Value: true},
		"assignee": sAV("ann"),
		"version":  nAV(3),
	}
	putRaw(t, tbl, legacy)

	got, err := docs.Mutate(ctx, mlDoc{ID: "1"}, func(d *mlDoc) error { d.Title = "T"; return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(4), got.Version)
	item := rawItem(t, tbl, "ML#1", "ML")
	assert.Equal(t, sAV("T"), item["title"])
	for _, a := range []string{"tags", "address", "note", "assignee"} {
		assert.True(t, attrvalue.Equal(legacy[a], item[a]), "%s kept as stored: %#v", a, item[a])
	}

	_, err = docs.Mutate(ctx, mlDoc{ID: "1"}, func(d *mlDoc) error { d.Address.City = "Bergen"; return nil })
	require.NoError(t, err)
	item = rawItem(t, tbl, "ML#1", "ML")
	assert.True(t, attrvalue.Equal(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"city": sAV("Bergen"), "zip": sAV("0150")}}, item["address"]), "merged: %#v", item["address"])
	assert.True(t, attrvalue.Equal(legacy["tags"], item["tags"]))

	_, err = docs.Mutate(ctx, mlDoc{ID: "1"}, func(d *mlDoc) error { d.Tags = append(d.Tags, "c"); return nil })
	require.NoError(t, err)
	final, err := docs.Get(ctx, mlDoc{ID: "1"}, Consistent())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b", "c"}, final.Tags)
	assert.Equal(t, int64(6), final.Version)
	assert.Equal(t, sAV("ann"), rawItem(t, tbl, "ML#1", "ML")["assignee"])
}
