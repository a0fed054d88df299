package stream

// A DynamoDB Streams API in memory (fakeStreams), and the stream records the
// tests feed it, for what DynamoDB Local cannot show: several shards, parents
// and children, expired iterators, paged DescribeStream answers.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
)

// toStreamAV is fromStreamAV backwards, for building stream records in tests.
func toStreamAV(av types.AttributeValue) streamtypes.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return &streamtypes.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &streamtypes.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &streamtypes.AttributeValueMemberB{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &streamtypes.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &streamtypes.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberSS:
		return &streamtypes.AttributeValueMemberSS{Value: v.Value}
	case *types.AttributeValueMemberNS:
		return &streamtypes.AttributeValueMemberNS{Value: v.Value}
	case *types.AttributeValueMemberBS:
		return &streamtypes.AttributeValueMemberBS{Value: v.Value}
	case *types.AttributeValueMemberL:
		l := make([]streamtypes.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toStreamAV(e)
		}
		return &streamtypes.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		m := make(map[string]streamtypes.AttributeValue, len(v.Value))
		for k, e := range v.Value {
			m[k] = toStreamAV(e)
		}
		return &streamtypes.AttributeValueMemberM{Value: m}
	}
	panic(fmt.Sprintf("toStreamAV: %T", av))
}

func toStreamImage(item map[string]types.AttributeValue) map[string]streamtypes.AttributeValue {
	if item == nil {
		return nil
	}
	m := make(map[string]streamtypes.AttributeValue, len(item))
	for k, v := range item {
		m[k] = toStreamAV(v)
	}
	return m
}

// fakeStreams is a DynamoDB Streams API in memory, for what DynamoDB Local
// cannot show: several shards, parents and children, expired iterators, and
// paged DescribeStream answers. Iterators are "shard|index".
type fakeStreams struct {
	mu       sync.Mutex // protects every field below
	shards   []*fakeShard
	status   streamtypes.StreamStatus
	expire   map[string]bool // shards whose next GetRecords fails with ExpiredIteratorException
	store    *MemoryStore    // checked: a child's iterator is asked for only once its parent is finished
	errs     []string        // what the consumer did wrong
	calls    map[string]int  // by operation
	pageSize int             // shards per DescribeStream page
}

type fakeShard struct {
	id, parent string
	closed     bool
	records    []streamtypes.Record
}

var fakeSeq atomic.Int64

// fakeRecord is a stream record of a change to v, which may be a registered
// entity value or a raw item, or nil for no image.
func fakeRecord(t testing.TB, event singletable.StreamEvent, before, after any) streamtypes.Record {
	t.Helper()
	image := func(v any) map[string]types.AttributeValue {
		switch v := v.(type) {
		case nil:
			return nil
		case map[string]types.AttributeValue:
			return v
		case tOrder:
			item, err := attributevalue.MarshalMap(v)
			require.NoError(t, err)
			item["PK"], item["SK"], item["Type"] = sAV("CUST#"+v.CustomerID), sAV("ORDER#"+v.OrderID), sAV("Order")
			return item
		}
		t.Fatalf("fakeRecord: %T", v)
		return nil
	}
	oldImg, newImg := image(before), image(after)
	keys := map[string]types.AttributeValue{}
	for _, img := range []map[string]types.AttributeValue{oldImg, newImg} {
		for _, k := range []string{"PK", "SK"} {
			if img[k] != nil {
				keys[k] = img[k]
			}
		}
	}
	now := time.Now().Truncate(time.Second)
	return streamtypes.Record{
		EventName: streamtypes.OperationType(event),
		EventID:   aws.String(strconv.FormatInt(fakeSeq.Add(1), 10)),
		Dynamodb: &streamtypes.StreamRecord{
			Keys:                        toStreamImage(keys),
			OldImage:                    toStreamImage(oldImg),
			NewImage:                    toStreamImage(newImg),
			SequenceNumber:              aws.String(fmt.Sprintf("%021d", fakeSeq.Add(1))),
			ApproximateCreationDateTime: &now,
			StreamViewType:              streamtypes.StreamViewTypeNewAndOldImages,
		},
	}
}

// orderChanges returns the records of n changes to order id of customer c, the
// first with count from: an INSERT when from is 0, else MODIFYs.
func orderChanges(t testing.TB, c, id string, from, n int) []streamtypes.Record {
	var recs []streamtypes.Record
	for i := from; i < from+n; i++ {
		o := tOrder{CustomerID: c, OrderID: id, Status: "S" + strconv.Itoa(i), CreatedAt: t0, Count: i}
		if i == 0 {
			recs = append(recs, fakeRecord(t, singletable.StreamInsert, nil, o))
			continue
		}
		prev := o
		prev.Count, prev.Status = i-1, "S"+strconv.Itoa(i-1)
		recs = append(recs, fakeRecord(t, singletable.StreamModify, prev, o))
	}
	return recs
}

// interleave merges record lists round robin, keeping each list's order.
func interleave(lists ...[]streamtypes.Record) []streamtypes.Record {
	var out []streamtypes.Record
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// newFakeStreams makes a fake stream of shards. As in DynamoDB Streams, the
// sequence numbers of a shard's records increase: records put together from
// several orders' changes (interleave) are numbered again, in the shard's order.
func newFakeStreams(store *MemoryStore, shards ...*fakeShard) *fakeStreams {
	for _, s := range shards {
		for _, r := range s.records {
			r.Dynamodb.SequenceNumber = aws.String(fmt.Sprintf("%021d", fakeSeq.Add(1)))
		}
	}
	return &fakeStreams{shards: shards, status: streamtypes.StreamStatusEnabled, expire: map[string]bool{}, store: store, calls: map[string]int{}, pageSize: 2}
}

func (f *fakeStreams) shard(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	return nil
}

// append adds records to a shard, numbered after every record before them, as
// DynamoDB Streams numbers a shard's records.
func (f *fakeStreams) append(id string, recs ...streamtypes.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(id)
	for _, r := range recs {
		r.Dynamodb.SequenceNumber = aws.String(fmt.Sprintf("%021d", fakeSeq.Add(1)))
	}
	s.records = append(s.records, recs...)
}

func (f *fakeStreams) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errs)
}

func (f *fakeStreams) DescribeStream(_ context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DescribeStream"]++
	i := 0
	if in.ExclusiveStartShardId != nil {
		for i < len(f.shards) && f.shards[i].id != *in.ExclusiveStartShardId {
			i++
		}
		i++
	}
	d := &streamtypes.StreamDescription{StreamArn: in.StreamArn, StreamStatus: f.status}
	for ; i < len(f.shards) && len(d.Shards) < f.pageSize; i++ {
		s := f.shards[i]
		sh := streamtypes.Shard{ShardId: aws.String(s.id), SequenceNumberRange: &streamtypes.SequenceNumberRange{StartingSequenceNumber: aws.String("0")}}
		if s.parent != "" {
			sh.ParentShardId = aws.String(s.parent)
		}
		if s.closed {
			sh.SequenceNumberRange.EndingSequenceNumber = aws.String("9")
		}
		d.Shards = append(d.Shards, sh)
	}
	if i < len(f.shards) {
		d.LastEvaluatedShardId = d.Shards[len(d.Shards)-1].ShardId
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: d}, nil
}

func (f *fakeStreams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetShardIterator"]++
	s := f.shard(aws.ToString(in.ShardId))
	if s == nil {
		return nil, &streamtypes.ResourceNotFoundException{Message: aws.String("no shard")}
	}
	if s.parent != "" && f.shard(s.parent) != nil && f.store != nil {
		if cp := checkpoints(f.store, "arn:fake")[s.parent]; cp != shardEnd {
			f.errs = append(f.errs, fmt.Sprintf("shard %s opened while its parent %s is at %q", s.id, s.parent, cp))
		}
	}
	i := 0
	switch in.ShardIteratorType {
	case streamtypes.ShardIteratorTypeLatest:
		i = len(s.records)
	case streamtypes.ShardIteratorTypeAfterSequenceNumber:
		i = slices.IndexFunc(s.records, func(r streamtypes.Record) bool { return *r.Dynamodb.SequenceNumber == *in.SequenceNumber }) + 1
		if i == 0 {
			f.errs = append(f.errs, fmt.Sprintf("shard %s: no sequence number %s", s.id, *in.SequenceNumber))
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%d", s.id, i))}, nil
}

func (f *fakeStreams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetRecords"]++
	id, n, _ := strings.Cut(aws.ToString(in.ShardIterator), "|")
	if f.expire[id] {
		delete(f.expire, id)
		return nil, &streamtypes.ExpiredIteratorException{Message: aws.String("expired")}
	}
	s := f.shard(id)
	i, _ := strconv.Atoi(n)
	end := min(len(s.records), i+int(aws.ToInt32(in.Limit)))
	out := &dynamodbstreams.GetRecordsOutput{Records: slices.Clone(s.records[i:end])}
	if !s.closed || end < len(s.records) {
		out.NextShardIterator = aws.String(fmt.Sprintf("%s|%d", id, end))
	}
	return out, nil
}
