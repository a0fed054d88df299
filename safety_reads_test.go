package singletable

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/attrvalue"
)

// The index of the safety tests is at the top of safety_test.go.

// Regression tests for issue 14's read-side and index-key scenarios on the read
// paths and write features added since (issues 17 and 18): every read path that
// migrates, projections and indexes, timestamps, counters, TTL and defaults.

type rAddr struct {
	City string `dynamodbav:"city"`
}

// rTask has every library-managed field kind of issue 18 beside a nested struct
// and a list; its schema 2 upper-cases nothing but wraps the title.
type rTask struct {
	_         struct{}  `Type:"RTask" PK:"G#{group}" SK:"T#{id}" GSI1PK:"ST#{status}" GSI1SK:"{createdAt:time}#{id}"`
	Group     string    `dynamodbav:"group"`
	ID        string    `dynamodbav:"id"`
	Status    string    `dynamodbav:"status,omitempty" singletable:"default=OPEN"`
	Title     string    `dynamodbav:"title"`
	Tags      []string  `dynamodbav:"tags"`
	Address   rAddr     `dynamodbav:"address"`
	Note      string    `dynamodbav:"note,omitempty"`
	CreatedAt time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	UpdatedAt time.Time `dynamodbav:"updatedAt" singletable:"updatedAt"`
	Edits     int       `dynamodbav:"edits" singletable:"counter"`
	ExpiresAt int64     `dynamodbav:"expiresAt,omitempty" singletable:"ttl"`
}

var rTaskMigration = Migration[rTask]{Steps: []Step[rTask]{{
	Typed: func(v *rTask) error { v.Title = "[" + v.Title + "]"; return nil },
}}}

// legacyTask is a schema-1 task written by other code: tags as a string set, an
// address map with an entry the struct does not model, a note stored as NULL, no
// status (the default must not be written by a migration), and an attribute of
// another service.
func legacyTask(group, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": sAV("G#" + group), "SK": sAV("T#" + id), "Type": sAV("RTask"),
		"group": sAV(group), "id": sAV(id), "title": sAV("t-" + id),
		"tags": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"address": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"city": sAV("Paris"), "zip": sAV("75001"),
		}},
		"note":      &types.AttributeValueMemberNULL{Value: true},
		"createdAt": sAV("2020-01-02T03:04:05Z"),
		"updatedAt": sAV("2021-01-02T03:04:05Z"),
		"edits":     nAV(5),
		"expiresAt": nAV(1700000000),
		"assignee":  sAV("ann"),
	}
}

// assertOnlyMigrated checks that the stored item is the legacy one with only what
// the migration changed: the title and the schema version.
func assertOnlyMigrated(t *testing.T, tbl *Table, group, id string) {
	t.Helper()
	got := rawItem(t, tbl, "G#"+group, "T#"+id)
	want := legacyTask(group, id)
	want["title"] = sAV("[t-" + id + "]")
	want["_schema"] = nAV(2)
	for name, av := range want {
		assert.True(t, attrvalue.Equal(av, got[name]), "%s: attribute %s stored as %#v, want %#v", id, name, got[name], av)
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			assert.Fail(t, "attribute added by the write-back", "%s: %s = %#v", id, name, got[name])
		}
	}
}

type rTaskColl struct {
	Tasks []rTask `singletable:"RTask"`
}

// Scenario 1 on every read path that migrates: the write-back changes only what
// the migration changed. A nested map keeps its entries the struct does not
// model, a string set stays a set, a NULL stays, no default is filled, and the
// timestamps, the counter and the TTL stay as stored.
func TestSafetyReadsWriteBackByteForByteEveryPath(t *testing.T) {
	paths := map[string]func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string){
		"Get": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			_, err := e.Get(ctx, rTask{Group: "g", ID: id})
			require.NoError(t, err)
		},
		"BatchGet": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			_, err := e.BatchGet(ctx, []rTask{{Group: "g", ID: id}})
			require.NoError(t, err)
		},
		"TableBatchGet": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			r := e.Ref(rTask{Group: "g", ID: id})
			_, err := tbl.BatchGet(ctx, []ItemRef{r})
			require.NoError(t, err)
			_, err = r.Value()
			require.NoError(t, err)
		},
		"TransactGet": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			r := e.Ref(rTask{Group: "g", ID: id})
			require.NoError(t, tbl.TransactGet(ctx, r))
			_, err := r.Value()
			require.NoError(t, err)
		},
		"Query": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			p, err := e.Query(ctx, rTask{Group: "g"})
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
		},
		"All": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			for _, err := range e.All(ctx, rTask{Group: "g"}) {
				require.NoError(t, err)
			}
		},
		"TableQuery": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			_, err := tbl.Query(ctx, rTask{Group: "g"})
			require.NoError(t, err)
		},
		"Collection": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			c, err := NewCollection[rTaskColl](tbl)
			require.NoError(t, err)
			_, err = c.Query(ctx, rTask{Group: "g"})
			require.NoError(t, err)
		},
		"Scan": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			_, err := e.Scan(ctx)
			require.NoError(t, err)
		},
		"ScanAll": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			for _, err := range e.ScanAll(ctx, Segments(2), Segment(1)) {
				require.NoError(t, err)
			}
			for _, err := range e.ScanAll(ctx, Segments(2), Segment(0)) {
				require.NoError(t, err)
			}
		},
		"TableScan": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			_, err := tbl.Scan(ctx)
			require.NoError(t, err)
		},
		"TableScanAll": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			for _, err := range tbl.ScanAll(ctx) {
				require.NoError(t, err)
			}
		},
		"Sweep": func(ctx context.Context, t *testing.T, tbl *Table, e *Entity[rTask], id string) {
			st, err := e.Sweep(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(1), st.Migrated)
		},
	}
	for name, read := range paths {
		t.Run(name, func(t *testing.T) {
			tbl, _ := newTestTable(t)
			var failures atomic.Int64
			m := rTaskMigration
			m.OnError = func(err error) { failures.Add(1); t.Errorf("write-back: %v", err) }
			tasks, err := Register[rTask](tbl, Migrations(m))
			require.NoError(t, err)
			ctx := context.Background()
			putRaw(t, tbl, legacyTask("g", name))
			read(ctx, t, tbl, tasks, name)
			assertOnlyMigrated(t, tbl, "g", name)
			// A second read finds it current: nothing more is written.
			got, err := tasks.Get(ctx, rTask{Group: "g", ID: name})
			require.NoError(t, err)
			assert.Equal(t, "[t-"+name+"]", got.Title)
			assert.Equal(t, rAddr{City: "Paris"}, got.Address)
			assert.Equal(t, 5, got.Edits)
			assertOnlyMigrated(t, tbl, "g", name)
			assert.Zero(t, failures.Load())
		})
	}
}

// Scenario 1: a typed step that changes one entry of a map writes that entry;
// the entries T does not model stay. A step that changes a primary key input is
// refused (reported, nothing written): an update cannot move an item.
func TestSafetyReadsWriteBackMergesNestedChanges(t *testing.T) {
	tbl, _ := newTestTable(t)
	var errs []error
	m := Migration[rTask]{Steps: []Step[rTask]{{Typed: func(v *rTask) error {
		v.Address.City = "Lyon"
		if v.ID == "move" {
			v.ID = "moved"
		}
		return nil
	}}}, OnError: func(err error) { errs = append(errs, err) }}
	tasks, err := Register[rTask](tbl, Migrations(m))
	require.NoError(t, err)
	ctx := context.Background()
	putRaw(t, tbl, legacyTask("g", "a"))
	putRaw(t, tbl, legacyTask("g", "move"))

	_, err = tasks.Get(ctx, rTask{Group: "g", ID: "a"})
	require.NoError(t, err)
	got := rawItem(t, tbl, "G#g", "T#a")
	assert.Equal(t, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"city": sAV("Lyon"), "zip": sAV("75001")}}, got["address"])
	assert.True(t, attrvalue.Equal(legacyTask("g", "a")["tags"], got["tags"]), "tags untouched: %#v", got["tags"])
	assert.Equal(t, nAV(2), got["_schema"])
	assert.Empty(t, errs)

	v, err := tasks.Get(ctx, rTask{Group: "g", ID: "move"})
	require.NoError(t, err, "the read stands")
	assert.Equal(t, "moved", v.ID)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], ErrInvalidInput)
	assert.Contains(t, errs[0].Error(), "primary key")
	stored := rawItem(t, tbl, "G#g", "T#move")
	assert.Equal(t, legacyTask("g", "move"), stored, "nothing written")
}

var _ = strconv.Itoa

// rShard is hashed across 4 shards, with an index whose partition key also
// carries the shard (so QueryShards can read it).
type rShard struct {
	_       struct{} `Type:"RShard" PK:"RS#S{shard}" SK:"E#{eventId}" GSI1PK:"KIND#{kind}#S{shard}" GSI1SK:"E#{eventId}" singletable:"shards=4,shardBy=eventId"`
	EventID string   `dynamodbav:"eventId"`
	Shard   int      `dynamodbav:"shard" singletable:"shard"`
	Kind    string   `dynamodbav:"kind,omitempty"`
	Title   string   `dynamodbav:"title"`
	Body    string   `dynamodbav:"body"`
}

// newProjectedTable makes a table whose GSI1 projects proj, registered with
// ProjectInclude/KeysOnly accordingly.
func newProjectedTable(t *testing.T, keysOnly bool, include ...string) (*Table, *countingClient) {
	t.Helper()
	client := newCountingClient(local.Client(t))
	proj := ProjectInclude(include...)
	if keysOnly {
		proj = ProjectKeysOnly()
	}
	tbl, err := NewTable(client, otherName(t), WithIndex("GSI1", "GSI1PK", "GSI1SK", proj))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, tbl.CreateTable(ctx))
	t.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	return tbl, client
}

// Scenario 2 on fan-out reads: QueryShards and AllShards through an index never
// write back (the index may not hold every attribute), and through an index that
// does not hold the type attribute QueryShards returns the items (partial), not
// nothing; AllShards refuses a partial read, as All does.
func TestSafetyReadsQueryShardsOnIndexNeverWritesBack(t *testing.T) {
	for _, keysOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "include", true: "keysOnly"}[keysOnly], func(t *testing.T) {
			tbl, client := newProjectedTable(t, keysOnly, "Type", "eventId", "shard", "kind", "title")
			ev, err := Register[rShard](tbl, Migrations(Migration[rShard]{Steps: []Step[rShard]{{
				Typed: func(v *rShard) error { v.Title = "[" + v.Title + "]"; return nil },
			}}}))
			require.NoError(t, err)
			ctx := context.Background()
			// Rendered keys of event e1, as the library would: find its shard by a Put
			// of a throwaway copy, then replace it with a schema-1 item of other code.
			put, err := ev.Put(ctx, rShard{EventID: "e1", Kind: "click", Title: "x", Body: "b"})
			require.NoError(t, err)
			legacy := rawItem(t, tbl, "RS#S"+strconv.Itoa(put.Shard), "E#e1")
			delete(legacy, "_schema")
			legacy["title"], legacy["body"], legacy["assignee"] = sAV("t"), sAV("the body"), sAV("ann")
			putRaw(t, tbl, legacy)

			writes := func() int64 { return client.count("PutItem") + client.count("UpdateItem") + client.count("DeleteItem") }
			before := writes()
			page, err := ev.QueryShards(ctx, rShard{Kind: "click"}, On("GSI1"))
			require.NoError(t, err)
			require.Len(t, page.Items, 1, "the item read through the index is returned")
			assert.True(t, page.Partial, "read through an index that does not hold every field")
			assert.Equal(t, "e1", page.Items[0].EventID)
			for _, err := range ev.AllShards(ctx, rShard{Kind: "click"}, On("GSI1")) {
				assert.ErrorIs(t, err, ErrInvalidInput, "an iterator cannot say its values are partial, as All")
				assert.ErrorContains(t, err, "AllShards")
			}
			assert.Equal(t, before, writes(), "nothing written from an index read")
			stored := rawItem(t, tbl, "RS#S"+strconv.Itoa(put.Shard), "E#e1")
			assert.Equal(t, legacy, stored, "the item is untouched")
		})
	}
}

// rDoc's GSI1 is "every doc of a group by creation time": its only input beside
// the primary key's is createdAt.
type rDoc struct {
	_         struct{}  `Type:"RDoc" PK:"D#{group}" SK:"D#{id}" GSI1PK:"DOCS#{group}" GSI1SK:"{createdAt:time}#{id}"`
	Group     string    `dynamodbav:"group"`
	ID        string    `dynamodbav:"id"`
	Title     string    `dynamodbav:"title"`
	CreatedAt time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
}

// Scenarios 8 and 10 with createdAt: an Upsert that creates an item stores
// createdAt, so the index keys createdAt feeds (whose other inputs are the
// primary key's, stored by every write) are written with it, rendered from the
// value stored: the item is in the index as a Put would have put it. An Upsert of
// an existing item keeps both. An item whose keys disagree with its stored
// createdAt already is refused with a *KeyError naming CreatedAt, nothing written.
func TestSafetyReadsUpsertWritesCreatedAtIndexKeys(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	docs := MustRegister[rDoc](tbl)
	ctx := context.Background()
	t0 := clk.Now()

	// Created by an Upsert: createdAt from the clock, and the GSI1 keys from it.
	got, err := docs.Update(ctx, rDoc{Group: "g", ID: "a"}, Set("title", "x"), Upsert())
	require.NoError(t, err)
	assert.True(t, got.CreatedAt.Equal(t0))
	item := rawItem(t, tbl, "D#g", "D#a")
	assert.Equal(t, sAV("DOCS#g"), item["GSI1PK"], "in the index, as Put would have put it")
	assert.Equal(t, sAV(t0.UTC().Format("2006-01-02T15:04:05.000000000Z")+"#a"), item["GSI1SK"])

	// Created by an Upsert whose key value holds createdAt: that one is stored.
	t1 := t0.Add(-time.Hour)
	got, err = docs.Update(ctx, rDoc{Group: "g", ID: "b", CreatedAt: t1}, Set("title", "y"), Upsert())
	require.NoError(t, err)
	assert.True(t, got.CreatedAt.Equal(t1), "the value's own createdAt, as the README says")
	item = rawItem(t, tbl, "D#g", "D#b")
	assert.Equal(t, sAV(t1.UTC().Format("2006-01-02T15:04:05.000000000Z")+"#b"), item["GSI1SK"])

	// An Upsert (and an Update) of an existing item moves neither.
	clk.Advance(time.Minute)
	_, err = docs.Update(ctx, rDoc{Group: "g", ID: "a"}, Set("title", "x2"), Upsert())
	require.NoError(t, err)
	_, err = docs.Update(ctx, rDoc{Group: "g", ID: "a"}, Set("title", "x3"))
	require.NoError(t, err)
	item = rawItem(t, tbl, "D#g", "D#a")
	assert.True(t, storedTime(t, item, "createdAt").Equal(t0))
	assert.Equal(t, sAV(t0.UTC().Format("2006-01-02T15:04:05.000000000Z")+"#a"), item["GSI1SK"])
	page, err := docs.Query(ctx, rDoc{Group: "g"}, On("GSI1"))
	require.NoError(t, err)
	assert.Len(t, page.Items, 2, "both docs are in the index")

	// A legacy item with createdAt but no index keys: an Upsert cannot render them
	// from the stored createdAt it does not know, so it refuses, naming the field;
	// given the stored createdAt, it writes them.
	legacy := map[string]types.AttributeValue{"PK": sAV("D#g"), "SK": sAV("D#c"), "Type": sAV("RDoc"), "group": sAV("g"), "id": sAV("c"), "title": sAV("old"), "createdAt": sAV("2020-01-02T03:04:05Z")}
	putRaw(t, tbl, legacy)
	_, err = docs.Update(ctx, rDoc{Group: "g", ID: "c"}, Set("title", "new"), Upsert())
	var ke *KeyError
	require.ErrorAs(t, err, &ke)
	assert.ErrorContains(t, err, "CreatedAt")
	assert.Equal(t, legacy, rawItem(t, tbl, "D#g", "D#c"), "nothing written")
	_, err = docs.Update(ctx, rDoc{Group: "g", ID: "c", CreatedAt: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)}, Set("title", "new"))
	require.NoError(t, err)
	item = rawItem(t, tbl, "D#g", "D#c")
	assert.Equal(t, sAV("2020-01-02T03:04:05.000000000Z#c"), item["GSI1SK"], "keys written from the stored createdAt")
	assert.Equal(t, sAV("2020-01-02T03:04:05Z"), item["createdAt"], "createdAt kept byte for byte")
}

// rUser and rSetting share a key shape by design of the test: the setting is
// written at the user's key by other code (raw PutItem), as another program
// would.
type rUser struct {
	_    struct{} `Type:"RUser" PK:"U#{id}" SK:"U"`
	ID   string   `dynamodbav:"id"`
	Name string   `dynamodbav:"name"`
}

// Scenario 18 on every read path: an item of another type at the key is
// ErrTypeMismatch from Get, Project.Get, Table.BatchGet and TransactGet refs,
// and from writes with ReturnOld (nothing written); never decoded as the user.
func TestSafetyReadsOtherTypeAtKeyEveryReadPath(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(map[bool]string{true: "wire", false: "sdk"}[wire], func(t *testing.T) {
			tbl, client := newTestTable(t, WithWireDecoding(wire))
			users := MustRegister[rUser](tbl)
			ctx := context.Background()
			other := map[string]types.AttributeValue{"PK": sAV("U#1"), "SK": sAV("U"), "Type": sAV("Setting"), "id": sAV("1"), "name": sAV("dark mode")}
			putRaw(t, tbl, other)
			key := rUser{ID: "1"}

			_, err := users.Get(ctx, key)
			assert.ErrorIs(t, err, ErrTypeMismatch, "Get")
			_, err = users.Get(ctx, key, Consistent())
			assert.ErrorIs(t, err, ErrTypeMismatch, "Get consistent")
			_, err = users.Project("name").Get(ctx, key)
			assert.ErrorIs(t, err, ErrTypeMismatch, "Project.Get")
			_, err = users.Project().Get(ctx, key)
			assert.ErrorIs(t, err, ErrTypeMismatch, "Project().Get")

			r := users.Ref(key)
			_, err = tbl.BatchGet(ctx, []ItemRef{r})
			require.NoError(t, err)
			assert.False(t, r.Found())
			_, err = r.Value()
			assert.ErrorIs(t, err, ErrTypeMismatch, "Table.BatchGet")
			r2 := users.Ref(key)
			require.NoError(t, tbl.TransactGet(ctx, r2))
			assert.False(t, r2.Found())
			_, err = r2.Value()
			assert.ErrorIs(t, err, ErrTypeMismatch, "TransactGet")

			res, err := users.BatchGet(ctx, []rUser{key})
			if err == nil {
				assert.Empty(t, res.Items, "Entity.BatchGet never decodes another type's item as the user")
			} else {
				assert.ErrorIs(t, err, ErrTypeMismatch, "Entity.BatchGet")
			}
			pres, err := users.Project("name").BatchGet(ctx, []rUser{key})
			if err == nil {
				assert.Empty(t, pres.Items, "Project.BatchGet never decodes another type's item as the user")
			} else {
				assert.ErrorIs(t, err, ErrTypeMismatch, "Project.BatchGet")
			}

			var old Old[rUser]
			before := client.count("PutItem") + client.count("UpdateItem") + client.count("DeleteItem")
			_, err = users.Put(ctx, rUser{ID: "1", Name: "x"}, ReturnOld(&old))
			assert.ErrorIs(t, err, ErrTypeMismatch, "Put ReturnOld")
			err = users.Delete(ctx, key, ReturnOld(&old))
			assert.ErrorIs(t, err, ErrTypeMismatch, "Delete ReturnOld")
			_, err = users.Update(ctx, key, Set("name", "y"), Returning(ReturnAllOld))
			assert.ErrorIs(t, err, ErrTypeMismatch, "Update Returning")
			assert.False(t, old.Found)
			assert.Equal(t, before+3, client.count("PutItem")+client.count("UpdateItem")+client.count("DeleteItem"), "one conditional attempt each")
			assert.Equal(t, other, rawItem(t, tbl, "U#1", "U"), "the other type's item is untouched")
		})
	}
}

// rRank is in a local index sorted by an omitempty priority, and a global one
// whose sort key takes updatedAt.
type rRank struct {
	_         struct{}  `Type:"RRank" PK:"R#{group}" SK:"R#{id}" LSI1SK:"P#{priority:04}#{id}" GSI1PK:"RG#{group}" GSI1SK:"{updatedAt:time}#{id}"`
	Group     string    `dynamodbav:"group"`
	ID        string    `dynamodbav:"id"`
	Priority  int       `dynamodbav:"priority,omitempty"`
	Nick      string    `dynamodbav:"nick,omitempty"`
	UpdatedAt time.Time `dynamodbav:"updatedAt" singletable:"updatedAt"`
}

// Scenarios 9 and 8 on a local index and on updatedAt: a zero omitempty number
// follows one rule for Put and Update (the item leaves the index, as the empty
// input it stores); SetIfNotExists on an index input is refused before
// sending (the stored value could differ from the one given); every Update's
// updatedAt rewrites the index key it feeds from the value it stores; a counter
// cannot feed a key.
func TestSafetyReadsLocalIndexAndStampedInputs(t *testing.T) {
	clk := newTestClock()
	tbl, client := newTestTable(t, WithClock(clk.Now), WithLocalIndex("LSI1", "LSI1SK"))
	ranks := MustRegister[rRank](tbl)
	ctx := context.Background()

	_, err := ranks.Put(ctx, rRank{Group: "g", ID: "a", Priority: 0})
	require.NoError(t, err)
	putItem := rawItem(t, tbl, "R#g", "R#a")
	_, err = ranks.Put(ctx, rRank{Group: "g", ID: "b", Priority: 3})
	require.NoError(t, err)
	_, err = ranks.Update(ctx, rRank{Group: "g", ID: "b"}, Set("priority", 0))
	require.NoError(t, err)
	updItem := rawItem(t, tbl, "R#g", "R#b")
	_, inPut := putItem["LSI1SK"]
	_, inUpd := updItem["LSI1SK"]
	assert.Equal(t, inPut, inUpd, "Put and Update of priority 0 agree on the local index: %v / %v", putItem["LSI1SK"], updItem["LSI1SK"])
	_, storedPut := putItem["priority"]
	_, storedUpd := updItem["priority"]
	assert.Equal(t, storedPut, storedUpd, "and on storing the zero")

	// updatedAt feeds GSI1SK: each Update stores it and the key from it.
	t1 := clk.Advance(time.Minute)
	_, err = ranks.Update(ctx, rRank{Group: "g", ID: "b"}, Set("nick", "n"))
	require.NoError(t, err)
	item := rawItem(t, tbl, "R#g", "R#b")
	assert.True(t, storedTime(t, item, "updatedAt").Equal(t1))
	assert.Equal(t, sAV(t1.UTC().Format("2006-01-02T15:04:05.000000000Z")+"#b"), item["GSI1SK"])

	// SetIfNotExists on an index input: refused, nothing sent.
	before := client.count("UpdateItem")
	_, err = ranks.Update(ctx, rRank{Group: "g", ID: "b"}, SetIfNotExists("priority", 5))
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "priority")
	assert.Equal(t, before, client.count("UpdateItem"), "nothing sent")

	// A counter as a key input is a registration error naming the field.
	type rCounted struct {
		_  struct{} `Type:"RCounted" PK:"C#{id}" SK:"C" GSI1PK:"N#{n}" GSI1SK:"C#{id}"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"counter"`
	}
	_, err = Register[rCounted](offlineTable(t))
	assert.ErrorContains(t, err, "N")
	assert.Error(t, err)
}

type rPair struct {
	_ struct{} `Type:"RPair" PK:"P#{a}" SK:"{b}"`
	A string   `dynamodbav:"a"`
	B string   `dynamodbav:"b"`
	V string   `dynamodbav:"v"`
}

// Scenario 11 on the reads of several types: keys that a separator-joined
// identity would confuse are two items for Table.BatchGet and TransactGet, on
// both decoding paths.
func TestSafetyReadsMixedKeyIdentityInjective(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(map[bool]string{true: "wire", false: "sdk"}[wire], func(t *testing.T) {
			tbl, _ := newTestTable(t, WithWireDecoding(wire))
			pairs := MustRegister[rPair](tbl)
			ctx := context.Background()
			k1, k2 := rPair{A: "1\x00x", B: "y", V: "first"}, rPair{A: "1", B: "x\x00y", V: "second"}
			_, err := pairs.BatchPut(ctx, []rPair{k1, k2})
			require.NoError(t, err)
			r1, r2 := pairs.Ref(rPair{A: k1.A, B: k1.B}), pairs.Ref(rPair{A: k2.A, B: k2.B})
			_, err = tbl.BatchGet(ctx, []ItemRef{r1, r2})
			require.NoError(t, err)
			v1, err1 := r1.Value()
			v2, err2 := r2.Value()
			require.NoError(t, err1)
			require.NoError(t, err2)
			assert.Equal(t, "first", v1.V)
			assert.Equal(t, "second", v2.V)
			r1, r2 = pairs.Ref(rPair{A: k1.A, B: k1.B}), pairs.Ref(rPair{A: k2.A, B: k2.B})
			require.NoError(t, tbl.TransactGet(ctx, r1, r2))
			v1, _ = r1.Value()
			v2, _ = r2.Value()
			assert.Equal(t, "first", v1.V)
			assert.Equal(t, "second", v2.V)
		})
	}
}
