package singletable

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the read path (readpath.go): one rule per phase for every read kind.
// Each runs every read of the library on the wire path and on the SDK's
// (WithWireDecoding), against DynamoDB Local:
//   - TestReadPathTypeGuard: items whose type attribute is missing or not a
//     string are never decoded as T (issue 30, scenario 4);
//   - TestReadPathExpiry: one rule of expiry, DynamoDB's, by the filter and in
//     memory alike, at its boundaries (scenario 6);
//   - TestTableBatchGetSkipExpired: Table.BatchGet honours SkipExpired and
//     refuses it for a Ref of an entity without a ttl field (scenario 7);
//   - TestReadPathRefusesWhatItCannotHonour: options refused before sending.

// rpThing has a ttl field stored without omitempty (0 is stored), a version
// (for Mutate) and, in TestReadPathTypeGuard, one migration step (so a read of
// an older item writes it back).
type rpThing struct {
	_         struct{} `Type:"RpThing" PK:"RP#{owner}" SK:"THING#{id}"`
	Owner     string   `dynamodbav:"owner"`
	ID        string   `dynamodbav:"id"`
	Title     string   `dynamodbav:"title"`
	ExpiresAt int64    `dynamodbav:"expiresAt" singletable:"ttl"`
	Version   int64    `dynamodbav:"version" singletable:"version"`
}

// rpToken's ttl is a time.Time stored as Unix seconds: the zero time is
// stored as -62135596800.
type rpToken struct {
	_       struct{}  `Type:"RpToken" PK:"RP#{owner}" SK:"TOKEN#{id}"`
	Owner   string    `dynamodbav:"owner"`
	ID      string    `dynamodbav:"id"`
	Expires time.Time `dynamodbav:"expiresAt,unixtime" singletable:"ttl"`
}

// rpShard is sharded, for QueryShards and AllShards.
type rpShard struct {
	_         struct{} `Type:"RpShard" PK:"RPS#{owner}#S{shard}" SK:"E#{id}" singletable:"shards=2,shardBy=id"`
	Owner     string   `dynamodbav:"owner"`
	ID        string   `dynamodbav:"id"`
	Shard     int      `dynamodbav:"shard" singletable:"shard"`
	ExpiresAt int64    `dynamodbav:"expiresAt" singletable:"ttl"`
}

// rpPlain has no ttl field.
type rpPlain struct {
	_     struct{} `Type:"RpPlain" PK:"RP#{owner}" SK:"PLAIN#{id}"`
	Owner string   `dynamodbav:"owner"`
	ID    string   `dynamodbav:"id"`
}

// rpColl holds a partition of things and tokens.
type rpColl struct {
	Things []rpThing `singletable:"RpThing"`
	Tokens []rpToken `singletable:"RpToken"`
}

var rpThingMigration = Migration[rpThing]{Steps: []Step[rpThing]{{Typed: func(v *rpThing) error { v.Title += " (migrated)"; return nil }}}}

// rpTables runs f on a table that reads on the wire path and on one that reads
// the SDK's way.
func rpTables(t *testing.T, f func(t *testing.T, wire bool)) {
	for _, wire := range []bool{true, false} {
		name := "sdk"
		if wire {
			name = "wire"
		}
		t.Run(name, func(t *testing.T) { f(t, wire) })
	}
}

// idsOf returns the IDs of values of the read path's entities, sorted.
func idsOf(vs ...any) []string {
	out := []string{}
	for _, v := range vs {
		switch x := v.(type) {
		case rpThing:
			out = append(out, x.ID)
		case *rpThing:
			out = append(out, x.ID)
		case rpToken:
			out = append(out, x.ID)
		case rpShard:
			out = append(out, x.ID)
		case Partial[rpThing]:
			out = append(out, x.Value.ID)
		case []rpThing:
			out = append(out, idsOf(anys(x)...)...)
		case []rpToken:
			out = append(out, idsOf(anys(x)...)...)
		case []rpShard:
			out = append(out, idsOf(anys(x)...)...)
		case []Partial[rpThing]:
			out = append(out, idsOf(anys(x)...)...)
		case []any:
			out = append(out, idsOf(x...)...)
		default:
			out = append(out, "?"+strconv.Quote(fmtAny(v)))
		}
	}
	slices.Sort(out)
	return out
}

func anys[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func fmtAny(v any) string {
	if r, ok := v.(RawItem); ok {
		return "raw " + formatKey((&Table{opts: TableOptions{PartitionKey: "PK", SortKey: "SK"}}).keyStrings(r))
	}
	return "value"
}

// collect drains an iterator into its values, failing on an error.
func collect[V any](t *testing.T, seq func(func(V, error) bool)) []V {
	t.Helper()
	var out []V
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// hostileTypes are type attributes that do not provably name an entity: put at
// an entity's key with the raw SDK, every read must agree with the write guard.
var hostileTypes = []struct {
	name string
	av   types.AttributeValue // nil: no type attribute
}{
	{"missing", nil},
	{"number", &types.AttributeValueMemberN{Value: "1"}},
	{"set", &types.AttributeValueMemberSS{Value: []string{"RpThing"}}},
	{"null", &types.AttributeValueMemberNULL{Value: true}},
	{"list", &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "RpThing"}}}},
}

// TestReadPathTypeGuard: an item at an entity's key whose type attribute is
// missing or not a string (a number, a set, NULL, a list) is not provably a T.
// Update refuses it (ErrTypeMismatch); so does every read by key: Get,
// Projection.Get, BatchGet and Projection.BatchGet (an error naming the key,
// the item neither in Items nor Missing), Table.BatchGet and TransactGet (the
// Ref's Value); none decodes it as a T, and none writes it back (the entity has
// a migration, so a read that took it for an older T would). Queries, scans,
// counts and fan-out queries of the entity skip it; collections, table scans and
// Decode treat it as of unknown type (OnUnknown); a sweep leaves it alone.
func TestReadPathTypeGuard(t *testing.T) {
	rpTables(t, func(t *testing.T, wire bool) {
		ctx := context.Background()
		tbl, _ := newTestTable(t, WithWireDecoding(wire))
		things := MustRegister[rpThing](tbl, Migrations(rpThingMigration))
		shards := MustRegister[rpShard](tbl)
		MustRegister[rpToken](tbl)
		coll, err := NewCollection[rpColl](tbl)
		require.NoError(t, err)
		_, err = things.Put(ctx, rpThing{Owner: "o", ID: "good", Title: "t"})
		require.NoError(t, err)
		good, err := shards.Put(ctx, rpShard{Owner: "o", ID: "good"})
		require.NoError(t, err)
		hostile := map[string]map[string]types.AttributeValue{}
		for _, h := range hostileTypes {
			item := map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "RP#o"}, "SK": &types.AttributeValueMemberS{Value: "THING#" + h.name},
				"owner": &types.AttributeValueMemberS{Value: "o"}, "id": &types.AttributeValueMemberS{Value: h.name},
				"title": &types.AttributeValueMemberS{Value: "foreign"},
			}
			if h.av != nil {
				item["Type"] = h.av
			}
			putRaw(t, tbl, item)
			hostile[h.name] = cloneItem(item)
			// One in a shard of the sharded entity too.
			putRaw(t, tbl, map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "RPS#o#S" + strconv.Itoa(good.Shard)}, "SK": &types.AttributeValueMemberS{Value: "E#" + h.name},
				"owner": &types.AttributeValueMemberS{Value: "o"}, "id": &types.AttributeValueMemberS{Value: h.name}, "shard": nAV(good.Shard),
			})
		}
		unchanged := func(t *testing.T) {
			t.Helper()
			for name, item := range hostile {
				assert.Equal(t, item, rawItem(t, tbl, "RP#o", "THING#"+name), "%s: never written back as a T", name)
			}
		}

		// Reads by key, per hostile item.
		for _, h := range hostileTypes {
			key := rpThing{Owner: "o", ID: h.name}
			keyReads := []struct {
				read string
				run  func() error
			}{
				{"Update (the write guard)", func() error { _, err := things.Update(ctx, key, Set("title", "x")); return err }},
				{"Get", func() error { _, err := things.Get(ctx, key); return err }},
				{"Get Consistent", func() error { _, err := things.Get(ctx, key, Consistent()); return err }},
				{"Projection.Get", func() error { _, err := things.Project("title").Get(ctx, key); return err }},
				{"BatchGet", func() error {
					res, err := things.BatchGet(ctx, []rpThing{{Owner: "o", ID: "good"}, key})
					assert.Equal(t, []string{"good"}, idsOf(res.Items), "the other keys' items")
					assert.Empty(t, res.Missing, "never a silent drop")
					if err != nil {
						assert.Contains(t, err.Error(), "THING#"+h.name, "the error names the key")
					}
					return err
				}},
				{"Projection.BatchGet", func() error {
					res, err := things.Project("title").BatchGet(ctx, []rpThing{key, {Owner: "o", ID: "good"}})
					assert.Equal(t, []string{"good"}, idsOf(res.Items))
					assert.Empty(t, res.Missing)
					return err
				}},
				{"Table.BatchGet", func() error {
					ref, ok := things.Ref(key), things.Ref(rpThing{Owner: "o", ID: "good"})
					_, err := tbl.BatchGet(ctx, []ItemRef{ref, ok})
					require.NoError(t, err)
					_, okErr := ok.Value()
					require.NoError(t, okErr)
					assert.False(t, ref.Found())
					_, err = ref.Value()
					return err
				}},
				{"TransactGet", func() error {
					ref, ok := things.Ref(key), things.Ref(rpThing{Owner: "o", ID: "good"})
					require.NoError(t, tbl.TransactGet(ctx, ref, ok))
					_, okErr := ok.Value()
					require.NoError(t, okErr)
					assert.False(t, ref.Found())
					_, err := ref.Value()
					return err
				}},
				{"Mutate (its read)", func() error {
					_, err := things.Mutate(ctx, key, func(v *rpThing) error { v.Title = "x"; return nil })
					return err
				}},
			}
			for _, r := range keyReads {
				t.Run(h.name+"/"+r.read, func(t *testing.T) {
					assert.ErrorIs(t, r.run(), ErrTypeMismatch)
				})
			}
		}

		// Reads of many items: the hostile ones are skipped, or of unknown type.
		good1 := []string{"good"}
		lists := []struct {
			read string
			want []string
			run  func(t *testing.T) []string
		}{
			{"Query", good1, func(t *testing.T) []string {
				p, err := things.Query(ctx, rpThing{Owner: "o"})
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"All", good1, func(t *testing.T) []string { return idsOf(collect(t, things.All(ctx, rpThing{Owner: "o"}))) }},
			{"Projection.Query", good1, func(t *testing.T) []string {
				p, err := things.Project("title").Query(ctx, rpThing{Owner: "o"})
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Projection.All", good1, func(t *testing.T) []string {
				return idsOf(collect(t, things.Project("title").All(ctx, rpThing{Owner: "o"})))
			}},
			{"Scan", good1, func(t *testing.T) []string {
				p, err := things.Scan(ctx)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"ScanAll", good1, func(t *testing.T) []string { return idsOf(collect(t, things.ScanAll(ctx))) }},
			{"Projection.Scan", good1, func(t *testing.T) []string {
				p, err := things.Project("title").Scan(ctx)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Count", []string{"1"}, func(t *testing.T) []string {
				c, err := things.Count(ctx, rpThing{Owner: "o"})
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"ScanCount", []string{"1"}, func(t *testing.T) []string {
				c, err := things.ScanCount(ctx)
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"QueryShards", good1, func(t *testing.T) []string {
				p, err := shards.QueryShards(ctx, rpShard{Owner: "o"})
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"AllShards", good1, func(t *testing.T) []string { return idsOf(collect(t, shards.AllShards(ctx, rpShard{Owner: "o"}))) }},
			{"Table.Query UnknownSkip", good1, func(t *testing.T) []string {
				p, err := tbl.Query(ctx, "RP#o", OnUnknown(UnknownSkip))
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Table.All UnknownSkip", good1, func(t *testing.T) []string {
				return idsOf(collect(t, tbl.All(ctx, "RP#o", OnUnknown(UnknownSkip))))
			}},
			{"Table.Scan UnknownSkip", good1, func(t *testing.T) []string {
				var ids []string
				for v, err := range tbl.ScanAll(ctx, OnUnknown(UnknownSkip)) {
					require.NoError(t, err)
					if _, ok := v.(rpThing); ok {
						ids = append(ids, idsOf(v)...)
					}
				}
				p, err := tbl.Scan(ctx, OnUnknown(UnknownSkip))
				require.NoError(t, err)
				assert.Len(t, p.Items, 2, "Table.Scan: the good thing and the good shard")
				return ids
			}},
			{"Collection.Query UnknownSkip", good1, func(t *testing.T) []string {
				p, err := coll.Query(ctx, "RP#o", OnUnknown(UnknownSkip))
				require.NoError(t, err)
				return idsOf(p.Value.Things)
			}},
			{"Collection.Load UnknownSkip", good1, func(t *testing.T) []string {
				v, err := coll.Load(ctx, "RP#o", OnUnknown(UnknownSkip))
				require.NoError(t, err)
				return idsOf(v.Things)
			}},
		}
		for _, r := range lists {
			t.Run(r.read, func(t *testing.T) { assert.Equal(t, r.want, r.run(t)) })
		}

		// Collections and Decode by default: of unknown type.
		unknowns := []struct {
			read string
			run  func() error
		}{
			{"Table.Query", func() error { _, err := tbl.Query(ctx, "RP#o"); return err }},
			{"Table.Scan", func() error { _, err := tbl.Scan(ctx); return err }},
			{"Collection.Load", func() error { _, err := coll.Load(ctx, "RP#o"); return err }},
		}
		for _, h := range hostileTypes {
			item := hostile[h.name]
			unknowns = append(unknowns,
				struct {
					read string
					run  func() error
				}{"Decode " + h.name, func() error { _, err := tbl.Decode(RawItem(item)); return err }},
				struct {
					read string
					run  func() error
				}{"DecodeRecord " + h.name, func() error { _, _, err := tbl.DecodeRecord(StreamRecord{NewImage: item}); return err }})
		}
		for _, r := range unknowns {
			t.Run(r.read, func(t *testing.T) { assert.ErrorIs(t, r.run(), ErrUnknownType) })
		}
		for _, h := range hostileTypes {
			v, err := tbl.Decode(RawItem(hostile[h.name]), OnUnknown(UnknownCollect))
			require.NoError(t, err)
			assert.IsType(t, RawItem{}, v, "Decode UnknownCollect %s", h.name)
		}

		stats, err := things.Sweep(ctx)
		require.NoError(t, err)
		assert.Zero(t, stats.Migrated, "the sweep's reads skip them")
		unchanged(t)
	})
}

// TestReadPathExpiry: SkipExpired says the same of every item on every read
// path, by the filter sent (queries, scans, counts) and by the check of each
// item read (reads by key), and it is DynamoDB's rule: a TTL attribute that is a
// number from five years before now to now is expired; one that is missing,
// not a number, 0, negative, the zero time.Time (stored as -62135596800), or
// more than five years old is not. Items sit at each boundary.
func TestReadPathExpiry(t *testing.T) {
	rpTables(t, func(t *testing.T, wire bool) {
		ctx := context.Background()
		clk := newTestClock()
		tbl, _ := newTestTable(t, WithWireDecoding(wire), WithClock(clk.Now))
		things := MustRegister[rpThing](tbl)
		tokens := MustRegister[rpToken](tbl)
		shards := MustRegister[rpShard](tbl)
		coll, err := NewCollection[rpColl](tbl)
		require.NoError(t, err)
		now := clk.Now()
		unix, oldest := now.Unix(), now.AddDate(-5, 0, 0).Unix()
		expired := map[string]bool{}
		for _, x := range []struct {
			id      string
			ttl     int64
			expired bool
		}{
			{"now", unix, true}, {"next", unix + 1, false},
			{"oldest", oldest, true}, {"too-old", oldest - 1, false},
			{"zero", 0, false}, {"negative", -5, false},
		} {
			_, err := things.Put(ctx, rpThing{Owner: "o", ID: x.id, ExpiresAt: x.ttl})
			require.NoError(t, err)
			expired[x.id] = x.expired
		}
		assert.Equal(t, "0", rawItem(t, tbl, "RP#o", "THING#zero")["expiresAt"].(*types.AttributeValueMemberN).Value, "0 is stored")
		raw := func(sk string, ttl types.AttributeValue, typ string) {
			_, id, _ := strings.Cut(sk, "#")
			item := map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "RP#o"}, "SK": &types.AttributeValueMemberS{Value: sk},
				"Type": &types.AttributeValueMemberS{Value: typ}, "owner": &types.AttributeValueMemberS{Value: "o"},
				"id": &types.AttributeValueMemberS{Value: id},
			}
			if ttl != nil {
				item["expiresAt"] = ttl
			}
			putRaw(t, tbl, item)
		}
		raw("THING#absent", nil, "RpThing")
		expired["absent"] = false
		// A decimal in the window: expired, and left out before it is decoded
		// (it would not decode into an int64).
		raw("THING#decimal", &types.AttributeValueMemberN{Value: strconv.FormatInt(unix-101, 10) + ".5"}, "RpThing")
		expired["decimal"] = true
		for _, x := range []struct {
			id      string
			at      time.Time
			expired bool
		}{
			{"zero-time", time.Time{}, false}, {"past", now.Add(-time.Hour), true}, {"future", now.Add(time.Hour), false},
		} {
			_, err := tokens.Put(ctx, rpToken{Owner: "o", ID: x.id, Expires: x.at})
			require.NoError(t, err)
			expired[x.id] = x.expired
		}
		assert.Equal(t, "-62135596800", rawItem(t, tbl, "RP#o", "TOKEN#zero-time")["expiresAt"].(*types.AttributeValueMemberN).Value, "the zero time is stored")
		// Text is not a number: DynamoDB's TTL ignores it, though it decodes as a past time.
		raw("TOKEN#text", &types.AttributeValueMemberS{Value: now.Add(-time.Hour).Format(time.RFC3339)}, "RpToken")
		expired["text"] = false
		for _, x := range []struct {
			id      string
			ttl     int64
			expired bool
		}{{"s-now", unix, true}, {"s-zero", 0, false}, {"s-next", unix + 60, false}} {
			_, err := shards.Put(ctx, rpShard{Owner: "o", ID: x.id, ExpiresAt: x.ttl})
			require.NoError(t, err)
			expired[x.id] = x.expired
		}
		thingIDs := []string{"now", "next", "oldest", "too-old", "zero", "negative", "absent", "decimal"}
		tokenIDs := []string{"zero-time", "past", "future", "text"}
		shardIDs := []string{"s-now", "s-zero", "s-next"}
		live := func(ids ...[]string) []string {
			out := []string{}
			for _, l := range ids {
				for _, id := range l {
					if !expired[id] {
						out = append(out, id)
					}
				}
			}
			slices.Sort(out)
			return out
		}
		skip := SkipExpired()

		// Reads by key: the check of each item read.
		for _, id := range thingIDs {
			t.Run("Get "+id, func(t *testing.T) {
				_, err := things.Get(ctx, rpThing{Owner: "o", ID: id}, skip)
				_, perr := things.Project("title").Get(ctx, rpThing{Owner: "o", ID: id}, skip)
				if expired[id] {
					assert.ErrorIs(t, err, ErrNotFound)
					assert.ErrorIs(t, perr, ErrNotFound, "Projection.Get")
				} else {
					assert.NoError(t, err)
					assert.NoError(t, perr, "Projection.Get")
				}
			})
		}
		for _, id := range tokenIDs {
			t.Run("Get "+id, func(t *testing.T) {
				_, err := tokens.Get(ctx, rpToken{Owner: "o", ID: id}, skip)
				if expired[id] {
					assert.ErrorIs(t, err, ErrNotFound)
				} else {
					assert.NoError(t, err)
				}
			})
		}
		var thingKeys []rpThing
		for _, id := range thingIDs {
			thingKeys = append(thingKeys, rpThing{Owner: "o", ID: id})
		}
		t.Run("BatchGet", func(t *testing.T) {
			res, err := things.BatchGet(ctx, thingKeys, skip)
			require.NoError(t, err)
			assert.Equal(t, live(thingIDs), idsOf(res.Items))
			assert.Len(t, res.Missing, len(thingIDs)-len(live(thingIDs)))
			pres, err := things.Project("title").BatchGet(ctx, thingKeys, skip)
			require.NoError(t, err)
			assert.Equal(t, live(thingIDs), idsOf(pres.Items), "Projection.BatchGet")
		})
		t.Run("Table.BatchGet", func(t *testing.T) {
			var refs []ItemRef
			thingRefs := map[string]*Ref[rpThing]{}
			for _, id := range thingIDs {
				r := things.Ref(rpThing{Owner: "o", ID: id})
				thingRefs[id] = r
				refs = append(refs, r)
			}
			tokenRefs := map[string]*Ref[rpToken]{}
			for _, id := range tokenIDs {
				r := tokens.Ref(rpToken{Owner: "o", ID: id})
				tokenRefs[id] = r
				refs = append(refs, r)
			}
			_, err := tbl.BatchGet(ctx, refs, skip)
			require.NoError(t, err)
			for id, r := range thingRefs {
				_, err := r.Value()
				assert.Equal(t, !expired[id], r.Found(), id)
				if expired[id] {
					assert.ErrorIs(t, err, ErrNotFound, id)
				}
			}
			for id, r := range tokenRefs {
				assert.Equal(t, !expired[id], r.Found(), id)
			}
		})

		// Queries, scans and counts: the filter.
		lists := []struct {
			read string
			want []string
			run  func(t *testing.T) []string
		}{
			{"Query", live(thingIDs), func(t *testing.T) []string {
				p, err := things.Query(ctx, rpThing{Owner: "o"}, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"All", live(thingIDs), func(t *testing.T) []string { return idsOf(collect(t, things.All(ctx, rpThing{Owner: "o"}, skip))) }},
			{"Projection.Query", live(thingIDs), func(t *testing.T) []string {
				p, err := things.Project("title").Query(ctx, rpThing{Owner: "o"}, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Query tokens", live(tokenIDs), func(t *testing.T) []string {
				p, err := tokens.Query(ctx, rpToken{Owner: "o"}, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Scan", live(thingIDs), func(t *testing.T) []string {
				p, err := things.Scan(ctx, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"ScanAll", live(thingIDs), func(t *testing.T) []string { return idsOf(collect(t, things.ScanAll(ctx, skip))) }},
			{"Projection.ScanAll", live(thingIDs), func(t *testing.T) []string {
				return idsOf(collect(t, things.Project("title").ScanAll(ctx, skip)))
			}},
			{"Count", []string{strconv.Itoa(len(live(thingIDs)))}, func(t *testing.T) []string {
				c, err := things.Count(ctx, rpThing{Owner: "o"}, skip)
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"ScanCount", []string{strconv.Itoa(len(live(thingIDs)))}, func(t *testing.T) []string {
				c, err := things.ScanCount(ctx, skip)
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"QueryShards", live(shardIDs), func(t *testing.T) []string {
				p, err := shards.QueryShards(ctx, rpShard{Owner: "o"}, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"AllShards", live(shardIDs), func(t *testing.T) []string {
				return idsOf(collect(t, shards.AllShards(ctx, rpShard{Owner: "o"}, skip)))
			}},
			{"Table.Query", live(thingIDs, tokenIDs), func(t *testing.T) []string {
				p, err := tbl.Query(ctx, "RP#o", skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Table.All", live(thingIDs, tokenIDs), func(t *testing.T) []string { return idsOf(collect(t, tbl.All(ctx, "RP#o", skip))) }},
			{"Table.Count", []string{strconv.Itoa(len(live(thingIDs, tokenIDs)))}, func(t *testing.T) []string {
				c, err := tbl.Count(ctx, "RP#o", skip)
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"Table.Scan", live(thingIDs, tokenIDs, shardIDs), func(t *testing.T) []string {
				p, err := tbl.Scan(ctx, skip)
				require.NoError(t, err)
				return idsOf(p.Items)
			}},
			{"Table.ScanAll", live(thingIDs, tokenIDs, shardIDs), func(t *testing.T) []string { return idsOf(collect(t, tbl.ScanAll(ctx, skip))) }},
			{"Table.ScanCount", []string{strconv.Itoa(len(live(thingIDs, tokenIDs, shardIDs)))}, func(t *testing.T) []string {
				c, err := tbl.ScanCount(ctx, skip)
				require.NoError(t, err)
				return []string{strconv.Itoa(c.Items)}
			}},
			{"Collection.Query", live(thingIDs, tokenIDs), func(t *testing.T) []string {
				p, err := coll.Query(ctx, "RP#o", skip)
				require.NoError(t, err)
				return idsOf(p.Value.Things, p.Value.Tokens)
			}},
			{"Collection.Load", live(thingIDs, tokenIDs), func(t *testing.T) []string {
				v, err := coll.Load(ctx, "RP#o", skip)
				require.NoError(t, err)
				return idsOf(v.Things, v.Tokens)
			}},
		}
		for _, r := range lists {
			t.Run(r.read, func(t *testing.T) { assert.Equal(t, r.want, r.run(t)) })
		}
	})
}

// TestTableBatchGetSkipExpired: Table.BatchGet with SkipExpired leaves out an
// expired item (its Ref says ErrNotFound, as Entity.BatchGet counts it
// missing), and refuses the option for a Ref of an entity without a ttl field,
// naming it, before anything is sent.
func TestTableBatchGetSkipExpired(t *testing.T) {
	rpTables(t, func(t *testing.T, wire bool) {
		ctx := context.Background()
		clk := newTestClock()
		tbl, client := newTestTable(t, WithWireDecoding(wire), WithClock(clk.Now))
		things := MustRegister[rpThing](tbl)
		plains := MustRegister[rpPlain](tbl)
		_, err := things.Put(ctx, rpThing{Owner: "o", ID: "old", ExpiresAt: clk.Now().Add(-time.Hour).Unix()})
		require.NoError(t, err)
		_, err = things.Put(ctx, rpThing{Owner: "o", ID: "live", ExpiresAt: clk.Now().Add(time.Hour).Unix()})
		require.NoError(t, err)
		_, err = plains.Put(ctx, rpPlain{Owner: "o", ID: "p"})
		require.NoError(t, err)

		old, alive := things.Ref(rpThing{Owner: "o", ID: "old"}), things.Ref(rpThing{Owner: "o", ID: "live"})
		_, err = tbl.BatchGet(ctx, []ItemRef{old, alive}, SkipExpired())
		require.NoError(t, err)
		assert.False(t, old.Found(), "expired")
		_, err = old.Value()
		assert.ErrorIs(t, err, ErrNotFound)
		assert.True(t, alive.Found())
		_, err = tbl.BatchGet(ctx, []ItemRef{old}, SkipExpired(), nil)
		assert.ErrorIs(t, err, ErrInvalidInput, "a nil option is refused")

		_, err = tbl.BatchGet(ctx, []ItemRef{old}) // without the option, read
		require.NoError(t, err)
		assert.True(t, old.Found())

		plain := plains.Ref(rpPlain{Owner: "o", ID: "p"})
		sent := client.count("BatchGetItem")
		_, err = tbl.BatchGet(ctx, []ItemRef{alive, plain}, SkipExpired())
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.ErrorContains(t, err, "rpPlain")
		assert.Equal(t, sent, client.count("BatchGetItem"), "nothing sent")
		assert.False(t, plain.Found())
	})
}

// TestReadPathRefusesWhatItCannotHonour: the options phase refuses, before
// sending, an option a read cannot honour: a nil option of a read by key, and
// SkipExpired through an index that does not hold the TTL attribute.
func TestReadPathRefusesWhatItCannotHonour(t *testing.T) {
	ctx := context.Background()
	tbl, client := newTestTable(t)
	things := MustRegister[rpThing](tbl)
	_, err := things.Get(ctx, rpThing{Owner: "o", ID: "x"}, nil)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = things.BatchGet(ctx, []rpThing{{Owner: "o", ID: "x"}}, Consistent(), nil)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = things.Project("title").Get(ctx, rpThing{Owner: "o", ID: "x"}, nil)
	assert.ErrorIs(t, err, ErrInvalidInput)

	keysOnly := offlineTable(t, WithIndex("BYOWNER", "OPK", "OSK", ProjectKeysOnly()))
	type ixThing struct {
		_         struct{} `Type:"IxThing" PK:"IX#{owner}" SK:"T#{id}" OPK:"OWNER#{owner}" OSK:"T#{id}"`
		Owner     string   `dynamodbav:"owner"`
		ID        string   `dynamodbav:"id"`
		ExpiresAt int64    `dynamodbav:"expiresAt" singletable:"ttl"`
	}
	ix := MustRegister[ixThing](keysOnly)
	_, err = ix.Query(ctx, ixThing{Owner: "o"}, On("BYOWNER"), SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "expiresAt")
	_, err = ix.Count(ctx, ixThing{Owner: "o"}, On("BYOWNER"), SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = keysOnly.Scan(ctx, On("BYOWNER"), SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Zero(t, client.count("Query"))
}
