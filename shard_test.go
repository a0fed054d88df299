package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
	"github.com/singletable/singletable/internal/fanout"
	"github.com/singletable/singletable/internal/keytmpl"
	"github.com/singletable/singletable/internal/localtest"
)

// sEvent is reference 000's events pattern: EVENTS#{date}#SHARD{n}, random shards.
type sEvent struct {
	_       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8"`
	Day     time.Time `dynamodbav:"day"`
	At      time.Time `dynamodbav:"at"`
	EventID string    `dynamodbav:"eventId"`
	Shard   int       `dynamodbav:"shard" singletable:"shard"`
	Kind    string    `dynamodbav:"kind"`
}

// sHashed picks its shard from a hash of eventId, so a point read needs no fan-out.
type sHashed struct {
	_       struct{}  `Type:"Hashed" PK:"HEV#{day:date}#S{shard:02}" SK:"{eventId}" singletable:"shards=8,shardBy=eventId"`
	Day     time.Time `dynamodbav:"day"`
	EventID string    `dynamodbav:"eventId"`
	Shard   uint8     `dynamodbav:"shard" singletable:"shard"`
}

var day0 = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func makeEvents(n int, days int) []sEvent {
	out := make([]sEvent, n)
	for i := range out {
		d := day0.AddDate(0, 0, i%days)
		out[i] = sEvent{Day: d, At: d.Add(time.Duration(i*7919%86_400_000) * time.Millisecond), EventID: fmt.Sprintf("e%05d", i), Kind: []string{"click", "view", "buy"}[i%3]}
	}
	return out
}

func eventKeys(es []sEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.At.UTC().Format(keytmpl.TimeLayout) + "#" + e.EventID
	}
	return out
}

func sortedKeys2(es []sEvent, desc bool) []string {
	k := eventKeys(es)
	slices.Sort(k)
	if desc {
		slices.Reverse(k)
	}
	return k
}

func TestShardedEventsSpreadAndMerge(t *testing.T) {
	tbl, client := newTestTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(10_000, 1)
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)

	// Every event is back, merged in sort key order, in both directions.
	for _, desc := range []bool{false, true} {
		opts := []ShardQueryOption{}
		if desc {
			opts = append(opts, Descending())
		}
		var got []sEvent
		perShard := map[int]int{}
		for e, err := range events.AllShards(ctx, sEvent{Day: day0}, opts...) {
			require.NoError(t, err)
			got = append(got, e)
			perShard[e.Shard]++
		}
		require.Len(t, got, len(all))
		assert.Equal(t, sortedKeys2(all, desc), eventKeys(got), "desc=%v: the merge equals the fully sorted list", desc)
		if !desc {
			require.Len(t, perShard, 8)
			for s, n := range perShard {
				assert.InDelta(t, 1250, n, 1250*0.15, "shard %d holds %d of 10,000", s, n)
			}
			t.Logf("events per shard: %v", perShard)
		}
	}

	// Pages across shards: no duplicates and no gaps, both directions.
	for _, desc := range []bool{false, true} {
		var got []string
		cursor := ""
		pages := 0
		for {
			opts := []ShardQueryOption{Limit(997), After(cursor)}
			if desc {
				opts = append(opts, Descending())
			}
			page, err := events.QueryShards(ctx, sEvent{Day: day0}, opts...)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.Items), 997)
			got = append(got, eventKeys(page.Items)...)
			pages++
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
		assert.Equal(t, sortedKeys2(all, desc), got, "desc=%v", desc)
		assert.Equal(t, 11, pages)
	}

	// A filter and a sort key range apply to every shard.
	before := client.count("Query")
	page, err := events.QueryShards(ctx, sEvent{Day: day0},
		SKBetween(sEvent{At: day0.Add(time.Hour)}, sEvent{At: day0.Add(2 * time.Hour)}),
		Filter(expression.Name("kind").Equal(expression.Value("buy"))))
	require.NoError(t, err)
	var want []sEvent
	for _, e := range all {
		if e.Kind == "buy" && !e.At.Before(day0.Add(time.Hour)) && e.At.Before(day0.Add(2*time.Hour).Add(time.Nanosecond)) {
			want = append(want, e)
		}
	}
	assert.Equal(t, sortedKeys2(want, false), eventKeys(page.Items))
	assert.Equal(t, before+8, client.count("Query"), "one query per shard")

	// A random shard's item is found with one BatchGetItem over the shards.
	e := all[42]
	got, err := events.Get(ctx, sEvent{Day: e.Day, At: e.At, EventID: e.EventID})
	require.NoError(t, err)
	assert.Equal(t, e.EventID, got.EventID)
	assert.NotZero(t, got.Shard)
	_, err = events.Query(ctx, sEvent{Day: day0})
	assert.ErrorIs(t, err, ErrInvalidKey, "a plain query of a sharded partition needs its shard")
}

func TestShardedAcrossDays(t *testing.T) {
	tbl, _ := newTestTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(1_500, 5)
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)
	var inRange []sEvent
	for _, e := range all {
		if !e.Day.Before(day0.AddDate(0, 0, 1)) && !e.Day.After(day0.AddDate(0, 0, 3)) {
			inRange = append(inRange, e)
		}
	}
	var got []string
	cursor := ""
	for {
		page, err := events.QueryShards(ctx, sEvent{}, Days("day", day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 3)), Descending(), Limit(250), After(cursor), Parallel(4))
		require.NoError(t, err)
		got = append(got, eventKeys(page.Items)...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, sortedKeys2(inRange, true), got, "three days × eight shards merged newest first")
	_, err = events.QueryShards(ctx, sEvent{}, Days("at", day0, day0))
	assert.ErrorIs(t, err, ErrInvalidInput, "at is not a partition key placeholder")
}

// TestFanoutReadsAShareOfEachPartition: a page of L items from N partitions reads
// about 1.5·L/N+2 items from each, not L; partitions that hold more of the page
// (the newest day's, reading newest first across days) are topped up together,
// in one more round of requests, and the page is still exactly the merged order.
func TestFanoutReadsAShareOfEachPartition(t *testing.T) {
	client := newCountingClient(local.Client(t))
	reads := &itemsRead{Client: client}
	tbl, err := NewTable(reads, localtest.TableName(t), testTableOptions)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, tbl.CreateTable(ctx))
	t.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	events := MustRegister[sEvent](tbl)
	all := makeEvents(2_800, 7) // 400 a day, 50 a shard
	for i := range all {
		all[i].Shard = i/7%8 + 1 // evenly spread within each day
	}
	_, err = events.BatchPut(ctx, all)
	require.NoError(t, err)

	// One day, evenly spread: 8 requests of share(40, 8) = 10 items, and no more.
	var oneDay []sEvent
	for _, e := range all {
		if e.Day.Equal(day0) {
			oneDay = append(oneDay, e)
		}
	}
	queries, before := client.count("Query"), reads.n.Load()
	page, err := events.QueryShards(ctx, sEvent{Day: day0}, Limit(40), Descending())
	require.NoError(t, err)
	assert.Equal(t, sortedKeys2(oneDay, true)[:40], eventKeys(page.Items))
	assert.Equal(t, int64(8), client.count("Query")-queries)
	assert.Equal(t, int64(80), reads.n.Load()-before, "10 items from each of 8 partitions, not 40")

	// Seven days, newest first: the page comes from the newest day's 8
	// partitions, which are topped up in one round; the 48 others give a share.
	queries, before = client.count("Query"), reads.n.Load()
	page, err = events.QueryShards(ctx, sEvent{}, Days("day", day0, day0.AddDate(0, 0, 6)), Limit(100), Descending())
	require.NoError(t, err)
	assert.Equal(t, sortedKeys2(all, true)[:100], eventKeys(page.Items))
	n, read := client.count("Query")-queries, reads.n.Load()-before
	t.Logf("7 days × 8 shards, newest 100: %d requests, %d items read (reading 100 from each partition: 56 requests, 5,600 items)", n, read)
	assert.LessOrEqual(t, n, int64(56+2*8), "at most two top-up rounds of the newest day's partitions")
	assert.Less(t, read, int64(1000))
}

// TestFanoutFilterEmptiedPage: a partition whose first share of items is all
// filtered out (an empty page with more after it) is read on before the merge
// passes it, so no item is skipped or returned out of order.
func TestFanoutFilterEmptiedPage(t *testing.T) {
	tbl, _ := newTestTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(400, 1)
	slices.SortFunc(all, func(a, b sEvent) int { return b.At.Compare(a.At) }) // newest first
	for i := range all {
		all[i].Shard = i%8 + 1
		all[i].Kind = "buy"
		if all[i].Shard == 3 && i < 200 {
			all[i].Kind = "view" // shard 3's newest 25 are filtered out
		}
	}
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)
	var buys []sEvent
	for _, e := range all {
		if e.Kind == "buy" {
			buys = append(buys, e)
		}
	}
	want := sortedKeys2(buys, true)
	var got []string
	cursor := ""
	for {
		page, err := events.QueryShards(ctx, sEvent{Day: day0}, Filter(expression.Name("kind").Equal(expression.Value("buy"))), Limit(20), Descending(), After(cursor))
		require.NoError(t, err)
		got = append(got, eventKeys(page.Items)...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, want, got)
}

// TestFanoutFailedTopUpFailsThePage: when the merge tops up a partition that
// ran dry and that read fails, the page fails (without AllowPartial) instead of
// going on without the partition: a page returned is never missing items.
func TestFanoutFailedTopUpFailsThePage(t *testing.T) {
	tbl, inj := faultTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(400, 1)
	slices.SortFunc(all, func(a, b sEvent) int { return b.At.Compare(a.At) }) // newest first
	for i := range all {
		all[i].Shard = i%8 + 1
		if i < 40 {
			all[i].Shard = 1 // the 40 newest all in shard 1: it runs dry after its share
		}
	}
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)

	// Only shard 1's later pages fail, with an error the SDK does not retry.
	inj.Add(fault.Rule{Ops: []string{"Query"}, Fault: fault.APIError(400, "ValidationException", "injected"),
		Match: func(_ string, body []byte) bool {
			return strings.Contains(string(body), "SHARD1") && strings.Contains(string(body), "ExclusiveStartKey")
		}})
	page, err := events.QueryShards(ctx, sEvent{Day: day0}, Limit(40), Descending())
	var se *ShardError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"EVENTS#2024-03-01#SHARD1"}, se.Partitions)
	assert.Empty(t, page.Items, "no page that lacks shard 1's items")

	// With AllowPartial, the page holds what came in order before shard 1 failed.
	page, err = events.QueryShards(ctx, sEvent{Day: day0}, Limit(40), Descending(), AllowPartial())
	require.ErrorAs(t, err, &se)
	want := sortedKeys2(all, true)
	got := eventKeys(page.Items)
	require.NotEmpty(t, got)
	assert.Equal(t, want[:10], got[:10], "shard 1's first share, in order")
}

func TestHashedShardPointRead(t *testing.T) {
	tbl, client := newTestTable(t)
	hashed := MustRegister[sHashed](tbl)
	ctx := context.Background()
	var all []sHashed
	for i := range 200 {
		all = append(all, sHashed{Day: day0, EventID: fmt.Sprintf("h%03d", i)})
	}
	_, err := hashed.BatchPut(ctx, all)
	require.NoError(t, err)
	before := client.count("GetItem")
	got, err := hashed.Get(ctx, sHashed{Day: day0, EventID: "h123"})
	require.NoError(t, err)
	assert.Equal(t, before+1, client.count("GetItem"), "a hashed shard is computed: one GetItem")
	assert.Equal(t, int64(0), client.count("BatchGetItem"))
	assert.Equal(t, "h123", got.EventID)
	assert.NotZero(t, got.Shard)
	raw := rawItem(t, tbl, fmt.Sprintf("HEV#2024-03-01#S%02d", got.Shard), "h123")
	assert.NotNil(t, raw, "the item sits in the partition of its hash")

	_, err = hashed.Put(ctx, sHashed{Day: day0, EventID: "h123", Shard: got.Shard%8 + 1})
	assert.ErrorIs(t, err, ErrInvalidKey, "a shard that is not the hash is refused")
	n := 0
	for _, err := range hashed.AllShards(ctx, sHashed{Day: day0}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 200, n)
}

func TestFanoutWithFailingShard(t *testing.T) {
	tbl, inj := faultTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(400, 1)
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)
	remove := inj.Add(fault.Rule{Ops: []string{"Query"}, Fault: fault.APIError(400, "ValidationException", "injected"),
		Match: func(_ string, body []byte) bool { return strings.Contains(string(body), "SHARD3") }})

	_, err = events.QueryShards(ctx, sEvent{Day: day0})
	var se *ShardError
	require.ErrorAs(t, err, &se, "a failing shard fails the query")
	assert.Equal(t, []string{"EVENTS#2024-03-01#SHARD3"}, se.Partitions)

	page, err := events.QueryShards(ctx, sEvent{Day: day0}, AllowPartial(), Limit(1000))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"EVENTS#2024-03-01#SHARD3"}, se.Partitions)
	for _, e := range page.Items {
		assert.NotEqual(t, 3, e.Shard)
	}
	assert.NotEmpty(t, page.Items, "the other shards answered")
	require.NotEmpty(t, page.Cursor, "the failed shard is still to be read")
	remove()
	rest, err := events.QueryShards(ctx, sEvent{Day: day0}, AllowPartial(), Limit(1000), After(page.Cursor))
	require.NoError(t, err)
	shard3 := 0
	for _, e := range rest.Items {
		if e.Shard == 3 {
			shard3++
		}
	}
	got := append(page.Items, rest.Items...)
	assert.ElementsMatch(t, eventKeys(all), eventKeys(got), "the resumed query reads the failed shard, and nothing twice")
	assert.Positive(t, shard3)
}

type (
	sNoField struct {
		_  struct{} `PK:"E#{id}#{n}" SK:"E" singletable:"shards=4"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n"`
	}
	sNoCount struct {
		_  struct{} `PK:"E#{id}#{n}" SK:"E"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"shard"`
	}
	sNotInPK struct {
		_  struct{} `PK:"E#{id}" SK:"E#{n}" singletable:"shards=4"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"shard"`
	}
	sBadBy struct {
		_    struct{} `PK:"E#{id}#{n}" SK:"E" singletable:"shards=4,shardBy=name"`
		ID   string   `dynamodbav:"id"`
		Name string   `dynamodbav:"name"`
		N    int      `dynamodbav:"n" singletable:"shard"`
	}
	sBadCount struct {
		_  struct{} `PK:"E#{id}#{n}" SK:"E" singletable:"shards=0"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"shard"`
	}
)

func TestShardRegistrationErrors(t *testing.T) {
	for name, f := range map[string]func(*Table) error{
		"no shard field":    func(t *Table) error { _, err := Register[sNoField](t); return err },
		"no shard count":    func(t *Table) error { _, err := Register[sNoCount](t); return err },
		"shard not in PK":   func(t *Table) error { _, err := Register[sNotInPK](t); return err },
		"shardBy not a key": func(t *Table) error { _, err := Register[sBadBy](t); return err },
		"zero shards":       func(t *Table) error { _, err := Register[sBadCount](t); return err },
	} {
		err := f(offlineTable(t))
		assert.ErrorIs(t, err, ErrInvalidEntity, name)
	}
}

// BenchmarkFanout reads the page of the 100 newest of 10,000 events spread over
// 8 shards of one day, merged newest first: fanout-8 queries the 8 partitions
// concurrently, sequential-8 sends the same queries one after another
// (Parallel(1)). Two settings, in one run: "rtt-5ms", where the fault layer
// delays every Query by 5 ms, the round trip to DynamoDB in a region, against
// which fan-out is meant to win; and "loopback", straight to DynamoDB Local on
// this machine, where the round trip is nil and DynamoDB Local's own CPU time
// (one query at a time) is all there is to wait for. raw-* rows send the same 8
// Query requests through the bare SDK, concurrently and not, for comparison.
// items-read/op is what DynamoDB read for the page (what read capacity pays for).
func BenchmarkFanout(b *testing.B) {
	inst := local.Get(b)
	ctx := context.Background()
	for _, rtt := range []time.Duration{5 * time.Millisecond, 0} {
		client, inj := fault.NewClient(inst)
		if rtt > 0 {
			inj.Add(fault.Rule{Ops: []string{"Query"}, Fault: fault.Delay(rtt)})
		}
		reads := &itemsRead{Client: client}
		tbl, err := NewTable(reads, localtest.TableName(b), testTableOptions)
		if err != nil {
			b.Fatal(err)
		}
		if err := tbl.CreateTable(ctx); err != nil {
			b.Fatal(err)
		}
		events := MustRegister[sEvent](tbl)
		all := makeEvents(10_000, 1)
		for i := range all {
			all[i].Shard = i%8 + 1
		}
		if _, err := events.BatchPut(ctx, all); err != nil {
			b.Fatal(err)
		}
		name := "loopback"
		if rtt > 0 {
			name = "rtt-" + rtt.String()
		}
		var ns [2]float64
		for i, parallel := range []int{8, 1} {
			b.Run(name+"/"+map[int]string{8: "fanout-8", 1: "sequential-8"}[parallel], func(b *testing.B) {
				reads.n.Store(0)
				for b.Loop() {
					page, err := events.QueryShards(ctx, sEvent{Day: day0}, Limit(100), Descending(), Parallel(parallel))
					if err != nil || len(page.Items) != 100 {
						b.Fatal(err, len(page.Items))
					}
				}
				ns[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(float64(reads.n.Load())/float64(b.N), "items-read/op")
			})
		}
		b.Logf("%s: fan-out %.1f ms, sequential %.1f ms, ratio %.2f", name, ns[0]/1e6, ns[1]/1e6, ns[0]/ns[1])
		if rtt == 0 {
			// The same 8 requests through the bare SDK: how much DynamoDB Local
			// itself runs side by side.
			ins := make([]*dynamodb.QueryInput, 8)
			for s := range ins {
				ins[s] = &dynamodb.QueryInput{
					TableName:                 aws.String(tbl.Name()),
					KeyConditionExpression:    aws.String("#pk = :pk"),
					ExpressionAttributeNames:  map[string]string{"#pk": "PK"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "EVENTS#" + day0.Format("2006-01-02") + "#SHARD" + strconv.Itoa(s+1)}},
					ScanIndexForward:          aws.Bool(false),
					Limit:                     aws.Int32(21),
				}
			}
			var raw [2]float64
			for i, concurrent := range []bool{true, false} {
				b.Run(name+"/"+map[bool]string{true: "raw-fanout-8", false: "raw-sequential-8"}[concurrent], func(b *testing.B) {
					for b.Loop() {
						var wg sync.WaitGroup
						for _, in := range ins {
							q := func() {
								if _, err := client.Query(ctx, in); err != nil {
									b.Error(err)
								}
							}
							if concurrent {
								wg.Go(q)
							} else {
								q()
							}
						}
						wg.Wait()
					}
					raw[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				})
			}
			b.Logf("%s, bare SDK: concurrent %.1f ms, sequential %.1f ms, ratio %.2f", name, raw[0]/1e6, raw[1]/1e6, raw[0]/raw[1])
		}
		_ = tbl.DeleteTable(ctx)
	}
}

// itemsRead counts the items Query calls return.
type itemsRead struct {
	Client
	n atomic.Int64
}

func (c *itemsRead) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, opts...)
	if err == nil {
		c.n.Add(int64(len(out.Items)))
	}
	return out, err
}

// BenchmarkMerge measures the k-way merge's own cost per item: 8 streams of 1,000
// items already in memory, merged and decoded.
func BenchmarkMerge(b *testing.B) {
	tbl, err := NewTable(offlineTable(&testing.T{}).Client(), "bench", testTableOptions)
	if err != nil {
		b.Fatal(err)
	}
	events := MustRegister[sEvent](tbl)
	all := makeEvents(8000, 1)
	bufs := make([][]map[string]types.AttributeValue, 8)
	for i := range all {
		all[i].Shard = i%8 + 1
		item, err := events.x.info.encodeItem(reflectValue(&all[i]))
		if err != nil {
			b.Fatal(err)
		}
		bufs[i%8] = append(bufs[i%8], item)
	}
	for _, buf := range bufs {
		slices.SortFunc(buf, func(x, y map[string]types.AttributeValue) int {
			return strings.Compare(x["SK"].(*types.AttributeValueMemberS).Value, y["SK"].(*types.AttributeValueMemberS).Value)
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		fq := &fanoutQuery{Query: fanout.Query{PartitionKey: "PK", SortKey: "SK", KeyAttrs: []string{"PK", "SK"}, Parallel: 8}, index: Index{PartitionKey: "PK", SortKey: "SK"}}
		for i := range bufs {
			fq.pqs = append(fq.pqs, &preparedQuery{plan: readPlan{t: tbl, info: events.x.info}}) // a Query's read plan: type check, decode
			fq.Streams = append(fq.Streams, &fanout.Stream{Buf: bufs[i], Done: true, Fetched: true})
		}
		var items []sEvent
		_, err := events.core().fanoutPage(context.Background(), fq, reflect.ValueOf(&items))
		if err != nil || len(items) != 8000 {
			b.Fatal(err, len(items))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8000, "ns/item")
}

// TestFanoutPagesStayInOrderUnderWrites writes events between the pages of a pass:
// one newer than everything already returned must not surface out of order.
func TestFanoutPagesStayInOrderUnderWrites(t *testing.T) {
	tbl, client := newTestTable(t)
	events := MustRegister[sEvent](tbl)
	ctx := context.Background()
	all := makeEvents(800, 1)
	_, err := events.BatchPut(ctx, all)
	require.NoError(t, err)
	page, err := events.QueryShards(ctx, sEvent{Day: day0}, Descending(), Limit(100))
	require.NoError(t, err)
	got := eventKeys(page.Items)
	// A newer event in every shard, and an older one: both are outside this pass,
	// which has already returned everything newer than its position.
	for s := 1; s <= 8; s++ {
		_, err := events.Put(ctx, sEvent{Day: day0, At: day0.Add(24*time.Hour - time.Millisecond), EventID: fmt.Sprintf("late%d", s), Shard: s, Kind: "late"})
		require.NoError(t, err)
	}
	cursor := page.Cursor
	for cursor != "" {
		page, err := events.QueryShards(ctx, sEvent{Day: day0}, Descending(), Limit(100), After(cursor))
		require.NoError(t, err)
		got = append(got, eventKeys(page.Items)...)
		cursor = page.Cursor
	}
	assert.Equal(t, sortedKeys2(all, true), got, "the pass is in order and holds exactly what existed when it began")

	// A random shard's point read is one BatchGetItem, which returns the item.
	beforeBatch, beforeGet := client.count("BatchGetItem"), client.count("GetItem")
	e, err := events.Get(ctx, sEvent{Day: all[5].Day, At: all[5].At, EventID: all[5].EventID})
	require.NoError(t, err)
	assert.Equal(t, all[5].EventID, e.EventID)
	assert.Equal(t, beforeBatch+1, client.count("BatchGetItem"))
	assert.Equal(t, beforeGet, client.count("GetItem"))
	key, err := events.Key(e)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("EVENTS#2024-03-01#SHARD%d", e.Shard), key["PK"])
}
