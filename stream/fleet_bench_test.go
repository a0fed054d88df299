package stream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"

	"github.com/singletable/singletable/internal/localtest"
)

// BenchmarkFleetThroughput measures records handled per second, by one
// consumer and by three with their leases in DynamoDB Local (a TableStore in
// the same table): from the stream of a table on DynamoDB Local (which has one
// shard, so one consumer reads and the others stand by), and from a fake
// stream of six shards whose handler waits 1 ms per record with one handler
// at a time per consumer, where three consumers share the shards. Each
// iteration reads every record from the start, under a new lease group.
//
//	go test -run '^$' -bench FleetThroughput -benchtime 3x .
func BenchmarkFleetThroughput(b *testing.B) {
	for _, consumers := range []int{1, 3} {
		b.Run(fmt.Sprintf("dynamodb-local-stream/consumers=%d", consumers), func(b *testing.B) {
			benchLocalStream(b, consumers, 3000)
		})
	}
	for _, consumers := range []int{1, 3} {
		b.Run(fmt.Sprintf("six-shards-1ms-handler/consumers=%d", consumers), func(b *testing.B) {
			benchFakeShards(b, consumers, 6, 200)
		})
	}
}

// groupStore keeps each lease group under a suffix, so that a benchmark
// iteration starts with no lease.
type groupStore struct {
	LeaseStore
	suffix string
}

func (g groupStore) Leases(ctx context.Context, group string) ([]Lease, error) {
	ls, err := g.LeaseStore.Leases(ctx, group+g.suffix)
	for i := range ls {
		ls[i].Group = group
	}
	return ls, err
}

func (g groupStore) in(l Lease) Lease { l.Group += g.suffix; return l }
func (g groupStore) out(l Lease) Lease {
	l.Group = strings.TrimSuffix(l.Group, g.suffix)
	return l
}

func (g groupStore) CreateLease(ctx context.Context, l Lease) error {
	return g.LeaseStore.CreateLease(ctx, g.in(l))
}

func (g groupStore) TakeLease(ctx context.Context, l Lease, o string, e time.Time) (Lease, error) {
	x, err := g.LeaseStore.TakeLease(ctx, g.in(l), o, e)
	return g.out(x), err
}

func (g groupStore) RenewLease(ctx context.Context, l Lease, e time.Time) (Lease, error) {
	x, err := g.LeaseStore.RenewLease(ctx, g.in(l), e)
	return g.out(x), err
}

func (g groupStore) Checkpoint(ctx context.Context, l Lease, cp string, f bool) (Lease, error) {
	x, err := g.LeaseStore.Checkpoint(ctx, g.in(l), cp, f)
	return g.out(x), err
}

func (g groupStore) ReleaseLease(ctx context.Context, l Lease) error {
	return g.LeaseStore.ReleaseLease(ctx, g.in(l))
}

func (g groupStore) AskHandOff(ctx context.Context, l Lease, w string) error {
	return g.LeaseStore.AskHandOff(ctx, g.in(l), w)
}

func (g groupStore) HandOver(ctx context.Context, l Lease, e time.Time) (Lease, error) {
	x, err := g.LeaseStore.HandOver(ctx, g.in(l), e)
	return g.out(x), err
}

// fleetRun runs consumers on client until want records have been handled,
// stops them, and returns how long it took.
func fleetRun(b *testing.B, tbl *Table, client Client, consumers int, want int64, handle func(context.Context) error, opts ...Option) time.Duration {
	var handled atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts, err := NewTableStore(tbl)
	require.NoError(b, err)
	store := groupStore{ts, fmt.Sprintf("#%d", time.Now().UnixNano())}
	done := make(chan error, consumers)
	start := time.Now()
	for w := range consumers {
		go func() {
			done <- Consume(ctx, tbl, client, func(ctx context.Context, _ StreamRecord) error {
				if err := handle(ctx); err != nil {
					return err
				}
				handled.Add(1)
				return nil
			}, append(opts, Leases(store), Worker(fmt.Sprint("w", w)), LeaseTiming(2*time.Second, 200*time.Millisecond), Polling(5*time.Millisecond, 50*time.Millisecond))...)
		}()
	}
	for handled.Load() < want {
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	cancel()
	for range consumers {
		<-done
	}
	return took
}

// benchTable creates a table on DynamoDB Local for a benchmark, deleted at its end.
func benchTable(b *testing.B, edits ...singletable.TableOption) *Table {
	tbl, err := singletable.NewTable(local.Client(b), localtest.TableName(b), append(slices.Clone(testTableOptions), edits...)...)
	require.NoError(b, err)
	return tbl
}

func benchLocalStream(b *testing.B, consumers, n int) {
	tbl := benchTable(b)
	require.NoError(b, tbl.CreateTable(context.Background(), singletable.EnableStream()))
	b.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	_, err := singletable.Register[tOrder](tbl)
	require.NoError(b, err)
	var reqs []types.WriteRequest
	for i := range n {
		item := map[string]types.AttributeValue{"PK": sAV(fmt.Sprint("CUST#c", i%50)), "SK": sAV(fmt.Sprintf("ORDER#o%05d", i)), "Type": sAV("Order"),
			"customerId": sAV(fmt.Sprint("c", i%50)), "orderId": sAV(fmt.Sprintf("o%05d", i)), "count": &types.AttributeValueMemberN{Value: "0"},
			"createdAt": sAV("2024-01-01T00:00:00.000000000Z"), "total": &types.AttributeValueMemberN{Value: "1"}}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for len(reqs) > 0 {
		n := min(len(reqs), 25)
		out, err := tbl.Client().BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl.Name(): reqs[:n]}})
		require.NoError(b, err)
		reqs = append(reqs[n:], out.UnprocessedItems[tbl.Name()]...)
	}
	streams := localStreams(b)
	var total time.Duration
	for b.Loop() {
		total += fleetRun(b, tbl, streams, consumers, int64(n), func(context.Context) error { return nil })
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "records/s")
}

func benchFakeShards(b *testing.B, consumers, shards, perShard int) {
	tbl := benchTable(b)
	require.NoError(b, tbl.CreateTable(context.Background()))
	b.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	_, err := singletable.Register[tOrder](tbl)
	require.NoError(b, err)
	var sh []*fakeShard
	for s := range shards {
		sh = append(sh, &fakeShard{id: fmt.Sprint("s", s), closed: true, records: orderChanges(b, fmt.Sprint("c", s), "o", 0, perShard)})
	}
	f := newFakeStreams(nil, sh...)
	f.pageSize = 100
	var total time.Duration
	for b.Loop() {
		total += fleetRun(b, tbl, f, consumers, int64(shards*perShard), func(ctx context.Context) error {
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
			}
			return nil
		}, FromARN("arn:fake"), Rails(singletable.RailroadOptions{Concurrency: 1}))
	}
	b.ReportMetric(float64(shards*perShard)*float64(b.N)/total.Seconds(), "records/s")
}
