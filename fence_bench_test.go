package singletable

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/localtest"
)

// BenchmarkFencedPut measures what a fence adds to a Put's latency on DynamoDB
// Local: each iteration sends a plain Put (a PutItem) and a fenced Put (one
// TransactWriteItems with the fence's ConditionCheck) of a 1 KB item, in turn,
// so that both meet the same load. It reports each kind's median and 90th
// percentile (plain-p50-ms, fenced-p50-ms, ...); ns/op is the pair's.
//
//	AWS_ENDPOINT_URL=... go test -run '^$' -bench FencedPut -benchtime 500x .
func BenchmarkFencedPut(b *testing.B) {
	ctx := context.Background()
	client := local.Client(b)
	tbl, err := NewTable(client, localtest.TableName(b), testTableOptions)
	if err != nil {
		b.Fatal(err)
	}
	createCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tbl.CreateTable(createCtx); err != nil {
		b.Fatal(err)
	}
	localtest.DeleteAtCleanup(b, tbl)
	items := MustRegister[benchPlain](tbl)
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": sAV("FENCE#bench"), "SK": sAV("FENCE"), "owner": sAV("me")}}); err != nil {
		b.Fatal(err)
	}
	fenced := WithFence(ctx, testFence(tbl, "bench", "me"))
	name := strings.Repeat("n", 900) // with the key and the other attributes: about 1 KB
	var plain, withFence []time.Duration
	b.ResetTimer()
	for i := range b.N {
		c := benchPlain{ID: "b" + strconv.Itoa(i%64), Name: name, Status: "new", Total: int64(i)}
		start := time.Now()
		if _, err := items.Put(ctx, c); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := items.Put(fenced, c); err != nil {
			b.Fatal(err)
		}
		plain, withFence = append(plain, mid.Sub(start)), append(withFence, time.Since(mid))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(plain, 50), "plain-p50-ms")
	b.ReportMetric(pct(plain, 90), "plain-p90-ms")
	b.ReportMetric(pct(withFence, 50), "fenced-p50-ms")
	b.ReportMetric(pct(withFence, 90), "fenced-p90-ms")
}
