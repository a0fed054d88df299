package fault

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// clock is a settable clock for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// lagClient returns a client through an Injector on a fake clock, and a
// table with indexes.
func lagClient(t *testing.T) (*dynamodb.Client, *Injector, *clock, string) {
	t.Helper()
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	client, inj := newClient(t, func(o *ClientOptions) { o.Injector.Now = clk.Now })
	return client, inj, clk, createTable(t, true)
}

// entity is an item of the index tests: PK=pk, SK="A", in GSI1 partition
// part with sort key sk, in GSI2 partition part, with attribute v.
func entity(pk, part, sk, v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": s(pk), "SK": s("A"), "GSI1PK": s(part), "GSI1SK": s(sk), "GSI2PK": s(part), "LSI1SK": s(sk), "v": s(v),
	}
}

func put(t *testing.T, c *dynamodb.Client, table string, it map[string]types.AttributeValue) {
	t.Helper()
	_, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it})
	require.NoError(t, err)
}

// show renders items as "pk:v" (or "pk" without v), in order.
func show(items []map[string]types.AttributeValue) string {
	var parts []string
	for _, it := range items {
		p := it["PK"].(*types.AttributeValueMemberS).Value
		if v, ok := it["v"].(*types.AttributeValueMemberS); ok {
			p += ":" + v.Value
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// queryIndex queries GSI1 (or another index) for partition part and
// returns the items shown, checking Count.
func queryIndex(t *testing.T, c *dynamodb.Client, table, index, part string, mod ...func(*dynamodb.QueryInput)) string {
	t.Helper()
	hash := map[string]string{"GSI1": "GSI1PK", "GSI2": "GSI2PK", "LSI1": "PK", "": "PK"}[index]
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#pk = :p"),
		ExpressionAttributeNames:  map[string]string{"#pk": hash},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(part)},
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	for _, m := range mod {
		m(in)
	}
	out, err := c.Query(t.Context(), in)
	require.NoError(t, err)
	require.Equal(t, int32(len(out.Items)), out.Count)
	require.GreaterOrEqual(t, out.ScannedCount, out.Count)
	return show(out.Items)
}

func TestGSILagReads(t *testing.T) {
	client, inj, _, table := lagClient(t)
	inj.SetGSILag(Lag{Reads: 2})
	put(t, client, table, entity("x", "P", "1", "new"))
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "P"), "read 1 misses the write")
	require.Equal(t, "", queryIndex(t, client, table, "GSI2", "P"), "read 2 (any index) misses it")
	require.Equal(t, "x:new", queryIndex(t, client, table, "GSI1", "P"), "read 3 sees it")
	st := inj.Stats()
	require.Equal(t, 2, st.Probes, "one DescribeTable, one GetItem of the old image")
	require.Equal(t, 1, st.Forwarded["PutItem"])
}

func TestGSILagDuration(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	inj.SetGSILag(Lag{Duration: time.Second})
	put(t, client, table, entity("x", "P", "1", "new"))
	for range 3 {
		require.Equal(t, "", queryIndex(t, client, table, "GSI1", "P"))
	}
	clk.Advance(999 * time.Millisecond)
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "P"))
	clk.Advance(time.Millisecond)
	require.Equal(t, "x:new", queryIndex(t, client, table, "GSI1", "P"))

	// Both: pending until both the time and the reads have passed.
	inj.SetGSILag(Lag{Duration: time.Second, Reads: 1})
	put(t, client, table, entity("y", "P", "2", "new"))
	clk.Advance(2 * time.Second)
	require.Equal(t, "x:new", queryIndex(t, client, table, "GSI1", "P"))
	require.Equal(t, "x:new y:new", queryIndex(t, client, table, "GSI1", "P"))

	// Off: nothing pending any more.
	inj.SetGSILag(Lag{Reads: 5})
	put(t, client, table, entity("z", "P", "3", "new"))
	inj.SetGSILag(Lag{})
	require.Equal(t, "x:new y:new z:new", queryIndex(t, client, table, "GSI1", "P"))
}

func TestGSILagRealTime(t *testing.T) {
	client, inj := newClient(t)
	table := createTable(t, true)
	inj.SetGSILag(Lag{Duration: 200 * time.Millisecond})
	began := time.Now()
	put(t, client, table, entity("x", "P", "1", "new"))
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "P"))
	for queryIndex(t, client, table, "GSI1", "P") == "" {
		time.Sleep(20 * time.Millisecond)
	}
	require.GreaterOrEqual(t, time.Since(began), 200*time.Millisecond)
}

func TestGSILagUpdateMovesPartition(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	for _, e := range [][]string{{"y", "1"}, {"x", "2"}, {"z", "3"}} {
		put(t, client, table, entity(e[0], "A", e[1], "v1"))
	}
	inj.SetGSILag(Lag{Duration: time.Minute})
	_, err := client.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key("x", "A"),
		UpdateExpression:          aws.String("SET GSI1PK = :b, v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": s("B"), ":v": s("v2")},
	})
	require.NoError(t, err)

	desc := func(q *dynamodb.QueryInput) { q.ScanIndexForward = aws.Bool(false) }
	require.Equal(t, "y:v1 x:v1 z:v1", queryIndex(t, client, table, "GSI1", "A"), "the old image, in its place")
	require.Equal(t, "z:v1 x:v1 y:v1", queryIndex(t, client, table, "GSI1", "A", desc))
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "B"), "the new image is not visible yet")

	t.Run("sort key condition", func(t *testing.T) {
		cond := func(expr string, vals ...string) func(*dynamodb.QueryInput) {
			return func(q *dynamodb.QueryInput) {
				q.KeyConditionExpression = aws.String("#pk = :p AND " + expr)
				q.ExpressionAttributeNames["#sk"] = "GSI1SK"
				for k, v := range vals {
					q.ExpressionAttributeValues[fmt.Sprintf(":v%d", k)] = s(v)
				}
			}
		}
		require.Equal(t, "x:v1 z:v1", queryIndex(t, client, table, "GSI1", "A", cond("#sk >= :v0", "2")))
		require.Equal(t, "z:v1", queryIndex(t, client, table, "GSI1", "A", cond("#sk > :v0", "2")))
		require.Equal(t, "y:v1", queryIndex(t, client, table, "GSI1", "A", cond("#sk BETWEEN :v0 AND :v1", "0", "1")))
		require.Equal(t, "x:v1", queryIndex(t, client, table, "GSI1", "A", cond("begins_with(#sk, :v0)", "2")))
	})

	t.Run("pages", func(t *testing.T) {
		for _, forward := range []bool{true, false} {
			var all []string
			var start map[string]types.AttributeValue
			for page := 0; ; page++ {
				require.Less(t, page, 10)
				in := &dynamodb.QueryInput{
					TableName: aws.String(table), IndexName: aws.String("GSI1"),
					KeyConditionExpression:    aws.String("GSI1PK = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("A")},
					Limit:                     aws.Int32(1), ExclusiveStartKey: start, ScanIndexForward: aws.Bool(forward),
				}
				out, err := client.Query(t.Context(), in)
				require.NoError(t, err)
				if len(out.Items) > 0 {
					all = append(all, show(out.Items))
				}
				if start = out.LastEvaluatedKey; start == nil {
					break
				}
			}
			want := "y:v1 x:v1 z:v1"
			if !forward {
				want = "z:v1 x:v1 y:v1"
			}
			require.Equal(t, want, strings.Join(all, " "), "forward=%v: each item once, in order", forward)
		}
	})

	t.Run("legacy KeyConditions", func(t *testing.T) {
		out, err := client.Query(t.Context(), &dynamodb.QueryInput{
			TableName: aws.String(table), IndexName: aws.String("GSI1"),
			KeyConditions: map[string]types.Condition{
				"GSI1PK": {ComparisonOperator: types.ComparisonOperatorEq, AttributeValueList: []types.AttributeValue{s("A")}},
				"GSI1SK": {ComparisonOperator: types.ComparisonOperatorLe, AttributeValueList: []types.AttributeValue{s("2")}},
			},
		})
		require.NoError(t, err)
		require.Equal(t, "y:v1 x:v1", show(out.Items))
	})

	clk.Advance(time.Minute)
	require.Equal(t, "y:v1 z:v1", queryIndex(t, client, table, "GSI1", "A"))
	require.Equal(t, "x:v2", queryIndex(t, client, table, "GSI1", "B"))
}

func TestGSILagUpdateInPlace(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	put(t, client, table, entity("x", "A", "1", "v1"))
	inj.SetGSILag(Lag{Duration: time.Minute})
	put(t, client, table, entity("x", "A", "1", "v2"))
	put(t, client, table, entity("x", "A", "1", "v3"))
	require.Equal(t, "x:v1", queryIndex(t, client, table, "GSI1", "A"), "the image before the first pending write")
	clk.Advance(time.Minute)
	require.Equal(t, "x:v3", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagDelete(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	put(t, client, table, entity("x", "A", "1", "v1"))
	put(t, client, table, entity("y", "A", "2", "v1"))
	inj.SetGSILag(Lag{Duration: time.Minute})
	_, err := client.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("x", "A")})
	require.NoError(t, err)
	require.Nil(t, itemAt(t, table, "x", "A"), "gone from the table")
	require.Equal(t, "x:v1 y:v1", queryIndex(t, client, table, "GSI1", "A"), "still in the index")
	clk.Advance(time.Minute)
	require.Equal(t, "y:v1", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagProjection(t *testing.T) {
	client, inj, _, table := lagClient(t)
	put(t, client, table, entity("x", "A", "1", "v1"))
	inj.SetGSILag(Lag{Duration: time.Minute})
	put(t, client, table, entity("x", "A", "1", "v2"))

	// GSI2 is KEYS_ONLY and has no sort key.
	out, err := client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String("GSI2"),
		KeyConditionExpression:    aws.String("GSI2PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("A")},
	})
	require.NoError(t, err)
	require.Equal(t, []map[string]types.AttributeValue{{"PK": s("x"), "SK": s("A"), "GSI2PK": s("A")}}, out.Items)

	out, err = client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :p"),
		ProjectionExpression:      aws.String("#v, PK"),
		ExpressionAttributeNames:  map[string]string{"#v": "v"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("A")},
	})
	require.NoError(t, err)
	require.Equal(t, []map[string]types.AttributeValue{{"PK": s("x"), "v": s("v1")}}, out.Items)

	out, err = client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String("GSI1"), Select: types.SelectCount,
		KeyConditionExpression:    aws.String("GSI1PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("A")},
	})
	require.NoError(t, err)
	require.Equal(t, int32(1), out.Count, "Select=COUNT is left alone")
}

func TestGSILagSparse(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	// Not in GSI1: no GSI1SK.
	put(t, client, table, map[string]types.AttributeValue{"PK": s("x"), "SK": s("A"), "GSI1PK": s("A"), "v": s("v1")})
	inj.SetGSILag(Lag{Duration: time.Minute})
	put(t, client, table, entity("x", "A", "1", "v2"))
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "A"), "the old image was not in the index")
	clk.Advance(time.Minute)
	require.Equal(t, "x:v2", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagBatchAndTransact(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	put(t, client, table, entity("old", "A", "0", "v1"))
	inj.SetGSILag(Lag{Duration: time.Minute})
	_, err := client.BatchWriteItem(t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
		{PutRequest: &types.PutRequest{Item: entity("a", "A", "1", "v1")}},
		{PutRequest: &types.PutRequest{Item: entity("b", "A", "2", "v1")}},
		{PutRequest: &types.PutRequest{Item: entity("old", "A", "0", "v2")}},
	}}})
	require.NoError(t, err)
	require.Equal(t, "old:v1", queryIndex(t, client, table, "GSI1", "A"))
	clk.Advance(time.Minute)
	require.Equal(t, "old:v2 a:v1 b:v1", queryIndex(t, client, table, "GSI1", "A"))

	_, err = client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(table), Key: key("a", "A")}},
		{Update: &types.Update{TableName: aws.String(table), Key: key("b", "A"),
			UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("v2")}}},
		{Put: &types.Put{TableName: aws.String(table), Item: entity("c", "A", "3", "v1")}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: key("old", "A"),
			ConditionExpression: aws.String("attribute_exists(PK)")}},
	}})
	require.NoError(t, err)
	require.Equal(t, "old:v2 a:v1 b:v1", queryIndex(t, client, table, "GSI1", "A"))
	clk.Advance(time.Minute)
	require.Equal(t, "old:v2 b:v2 c:v1", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagNotOnTableOrLSI(t *testing.T) {
	client, inj, _, table := lagClient(t)
	inj.SetGSILag(Lag{Reads: 100})
	put(t, client, table, entity("x", "A", "1", "v1"))
	require.Equal(t, "x:v1", queryIndex(t, client, table, "", "x"), "base table")
	require.Equal(t, "x:v1", queryIndex(t, client, table, "LSI1", "x"), "local secondary index")
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagScan(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	put(t, client, table, entity("x", "A", "1", "v1"))
	inj.SetGSILag(Lag{Duration: time.Minute})
	put(t, client, table, entity("x", "B", "1", "v2"))
	put(t, client, table, entity("y", "B", "2", "v1"))
	scan := func() string {
		out, err := client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table), IndexName: aws.String("GSI1")})
		require.NoError(t, err)
		require.Equal(t, int32(len(out.Items)), out.Count)
		return show(out.Items)
	}
	require.Equal(t, "x:v1", scan())
	clk.Advance(time.Minute)
	require.ElementsMatch(t, []string{"x:v2", "y:v1"}, strings.Fields(scan()))
}

// TestGSILagLostWrite: a write whose response is lost still landed, so it
// is pending in the index.
func TestGSILagLostWrite(t *testing.T) {
	client, inj, clk, table := lagClient(t)
	inj.SetGSILag(Lag{Duration: time.Minute})
	inj.Add(Rule{Ops: []string{"PutItem"}, Fault: LoseResponse()})
	_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: entity("x", "A", "1", "v1")})
	require.Error(t, err)
	require.Equal(t, 3, inj.Stats().LostWrites)
	require.Equal(t, "", queryIndex(t, client, table, "GSI1", "A"))
	clk.Advance(time.Minute)
	require.Equal(t, "x:v1", queryIndex(t, client, table, "GSI1", "A"))
}

func TestGSILagForgetsDroppedTable(t *testing.T) {
	client, inj, _, table := lagClient(t)
	inj.SetGSILag(Lag{Reads: 100})
	put(t, client, table, entity("x", "A", "1", "v1"))
	require.NotNil(t, inj.cachedTable(table))
	_, err := client.UpdateTable(t.Context(), &dynamodb.UpdateTableInput{TableName: aws.String(table),
		BillingMode: types.BillingModePayPerRequest})
	_ = err // Local may refuse a no-op update; the schema is forgotten either way
	require.Nil(t, inj.cachedTable(table))
	require.Equal(t, "x:v1", queryIndex(t, client, table, "GSI1", "A"))
}
