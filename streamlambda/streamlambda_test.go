package streamlambda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/localtest"
	"github.com/singletable/singletable/stream"
)

// kitchen holds a field of every DynamoDB type: S, N, B, SS, NS, BS, M, L,
// NULL and BOOL.
type kitchen struct {
	_     struct{}          `Type:"Kitchen" PK:"K#{id}" SK:"V"`
	ID    string            `dynamodbav:"id"`
	S     string            `dynamodbav:"s"`
	N     int64             `dynamodbav:"n"`
	F     float64           `dynamodbav:"f"`
	B     []byte            `dynamodbav:"b"`
	SS    []string          `dynamodbav:"ss,stringset"`
	NS    []int             `dynamodbav:"ns,numberset"`
	BS    [][]byte          `dynamodbav:"bs,binaryset"`
	M     map[string]int    `dynamodbav:"m"`
	L     []string          `dynamodbav:"l"`
	LM    []map[string]bool `dynamodbav:"lm"`
	Null  *string           `dynamodbav:"null"`
	Bool  bool              `dynamodbav:"bool"`
	Count int               `dynamodbav:"count"`
}

func newKitchen(count int) kitchen {
	return kitchen{
		ID: "k1", S: "héllo", N: -42, F: 3.25, B: []byte{0, 1, 2, 255},
		SS: []string{"a", "b"}, NS: []int{1, 20, 300}, BS: [][]byte{{1}, {2, 3}},
		M: map[string]int{"x": 1, "y": 2}, L: []string{"p", "q"}, LM: []map[string]bool{{"t": true}, {"f": false}},
		Bool: true, Count: count,
	}
}

// recorder is an HTTP client that keeps the body of every GetRecords response.
type recorder struct {
	next   *http.Client
	mu     sync.Mutex // protects bodies
	bodies [][]byte
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := r.next.Do(req)
	if err != nil || !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".GetRecords") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	return resp, nil
}

// event builds the Lambda event Lambda would deliver for the records the
// recorded GetRecords responses carried: the same record JSON, with the
// stream's ARN added as eventSourceARN.
func (r *recorder) event(t *testing.T, arn string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var recs []map[string]json.RawMessage
	seen := map[string]bool{}
	for _, body := range r.bodies {
		var out struct{ Records []map[string]json.RawMessage }
		require.NoError(t, json.Unmarshal(body, &out))
		for _, rec := range out.Records {
			var d struct{ SequenceNumber string }
			require.NoError(t, json.Unmarshal(rec["dynamodb"], &d))
			if seen[d.SequenceNumber] {
				continue
			}
			seen[d.SequenceNumber] = true
			rec["eventSourceARN"], _ = json.Marshal(arn)
			recs = append(recs, rec)
		}
	}
	b, err := json.MarshalIndent(map[string]any{"Records": recs}, "", "  ")
	require.NoError(t, err)
	return b
}

// TestLambdaDecodesAsConsumeStream writes, changes and deletes an item with an
// attribute of every type on DynamoDB Local, consumes the stream with
// stream.Consume while recording the GetRecords responses, turns those into the
// event Lambda would deliver, and runs it through the Lambda adapter: each
// record decodes to exactly what stream.Consume decoded. With
// STREAMLAMBDA_RECORD=path it also writes the event there.
func TestLambdaDecodesAsConsumeStream(t *testing.T) {
	tbl, err := singletable.NewTable(local.Client(t), localtest.TableName(t))
	require.NoError(t, err)
	require.NoError(t, tbl.CreateTable(t.Context(), singletable.EnableStream()))
	t.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	kitchens, err := singletable.Register[kitchen](tbl)
	require.NoError(t, err)
	_, err = kitchens.Put(t.Context(), newKitchen(0))
	require.NoError(t, err)
	k := newKitchen(1)
	k.S, k.SS, k.Bool, k.Null = "changed", []string{"c"}, false, aws.String("set")
	_, err = kitchens.Put(t.Context(), k)
	require.NoError(t, err)
	require.NoError(t, kitchens.Delete(t.Context(), k))

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &recorder{next: &http.Client{Transport: tr}}
	streams := dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(local.Get(t).Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:   rec,
	})
	var mu sync.Mutex
	var consumed []singletable.StreamRecord
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err = stream.Consume(ctx, tbl, streams, func(_ context.Context, r singletable.StreamRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if consumed = append(consumed, r); len(consumed) == 3 {
			cancel()
		}
		return nil
	}, stream.Polling(10*time.Millisecond, 50*time.Millisecond))
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, consumed, 3)

	body := rec.event(t, "arn:aws:dynamodb:ddblocal:000000000000:table/"+tbl.Name()+"/stream/recorded")
	if path := os.Getenv("STREAMLAMBDA_RECORD"); path != "" {
		require.NoError(t, os.WriteFile(path, append(body, '\n'), 0o644))
	}
	var ev events.DynamoDBEvent
	require.NoError(t, json.Unmarshal(body, &ev))
	require.Len(t, ev.Records, 3)

	var got []singletable.StreamRecord
	h, err := New(tbl, func(_ context.Context, r singletable.StreamRecord) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return nil
	})
	require.NoError(t, err)
	resp, err := h.Handle(t.Context(), ev)
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	require.Len(t, got, 3)
	sortBySeq := func(rs []singletable.StreamRecord) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].SequenceNumber < rs[j].SequenceNumber })
	}
	sortBySeq(consumed)
	sortBySeq(got)
	for i := range consumed {
		want, g := consumed[i], got[i]
		assert.Equal(t, want.Event, g.Event)
		assert.Equal(t, want.Type, g.Type)
		assert.Equal(t, want.Key, g.Key)
		assert.Equal(t, want.Old, g.Old, "old value of %s", want.Event)
		assert.Equal(t, want.New, g.New, "new value of %s", want.Event)
		assert.Equal(t, want.OldImage, g.OldImage, "old image of %s", want.Event)
		assert.Equal(t, want.NewImage, g.NewImage, "new image of %s", want.Event)
		assert.Equal(t, want.SequenceNumber, g.SequenceNumber)
		assert.Equal(t, want.Expired, g.Expired)
		assert.WithinDuration(t, want.ApproximateTime, g.ApproximateTime, time.Second)
	}
	assert.Equal(t, singletable.StreamInsert, got[0].Event)
	assert.Equal(t, newKitchen(0), got[0].New)
	assert.Equal(t, k, got[1].New)
	assert.Equal(t, singletable.StreamRemove, got[2].Event)
	// Every attribute type came through the event as the SDK's type.
	img := got[1].NewImage
	for attr, want := range map[string]any{
		"s": &types.AttributeValueMemberS{}, "n": &types.AttributeValueMemberN{}, "b": &types.AttributeValueMemberB{},
		"ss": &types.AttributeValueMemberSS{}, "ns": &types.AttributeValueMemberNS{}, "bs": &types.AttributeValueMemberBS{},
		"m": &types.AttributeValueMemberM{}, "l": &types.AttributeValueMemberL{}, "bool": &types.AttributeValueMemberBOOL{},
	} {
		assert.IsType(t, want, img[attr], attr)
	}
	assert.IsType(t, &types.AttributeValueMemberNULL{}, got[0].NewImage["null"])
}

// lOrder is an entity for the failure tests.
type lOrder struct {
	_     struct{} `Type:"Order" PK:"C#{c}" SK:"O#{o}"`
	C     string   `dynamodbav:"c"`
	O     string   `dynamodbav:"o"`
	Count int      `dynamodbav:"count"`
}

// change is a Lambda stream record of order c/o at count n.
func change(seq int, c, o string, n int) events.DynamoDBEventRecord {
	img := map[string]events.DynamoDBAttributeValue{
		"PK": events.NewStringAttribute("C#" + c), "SK": events.NewStringAttribute("O#" + o), "Type": events.NewStringAttribute("Order"),
		"c": events.NewStringAttribute(c), "o": events.NewStringAttribute(o), "count": events.NewNumberAttribute(fmt.Sprint(n)),
	}
	return events.DynamoDBEventRecord{
		EventName: "MODIFY", EventSource: "aws:dynamodb",
		Change: events.DynamoDBStreamRecord{
			Keys:           map[string]events.DynamoDBAttributeValue{"PK": img["PK"], "SK": img["SK"]},
			NewImage:       img,
			SequenceNumber: fmt.Sprintf("%021d", seq),
			StreamViewType: "NEW_AND_OLD_IMAGES",
		},
	}
}

// TestLambdaBatchItemFailures: a handler that fails on one key's record yields
// exactly that record as the key's batch item failure, the key's later records
// are not run, and every other key's records run, in order. A record that does
// not decode, and a handler that panics, fail their keys the same way.
func TestLambdaBatchItemFailures(t *testing.T) {
	tbl, err := singletable.NewTable(local.Client(t), "offline")
	require.NoError(t, err)
	_, err = singletable.Register[lOrder](tbl)
	require.NoError(t, err)
	var recs []events.DynamoDBEventRecord
	seq := 100
	for n := range 4 {
		for _, key := range []string{"a", "b", "c", "d", "e"} {
			seq++
			recs = append(recs, change(seq, "c1", key, n))
		}
	}
	mystery := change(99, "c1", "d", 0)
	mystery.Change.NewImage["Type"] = events.NewStringAttribute("Mystery")
	recs = append([]events.DynamoDBEventRecord{mystery}, recs...)
	var mu sync.Mutex
	ran := map[string][]int{}
	h, err := New(tbl, func(_ context.Context, r singletable.StreamRecord) error {
		o := r.New.(lOrder)
		switch {
		case o.O == "b" && o.Count == 2:
			return errors.New("b2 fails")
		case o.O == "e" && o.Count == 1:
			panic("e1 panics")
		}
		mu.Lock()
		defer mu.Unlock()
		ran[o.O] = append(ran[o.O], o.Count)
		return nil
	}, Rails(singletable.RailroadOptions{Concurrency: 3}))
	require.NoError(t, err)
	resp, err := h.Handle(t.Context(), events.DynamoDBEvent{Records: recs})
	require.NoError(t, err)
	seqOf := func(key string, n int) string {
		for _, r := range recs {
			if r.Change.NewImage["o"].String() == key && r.Change.NewImage["count"].Number() == fmt.Sprint(n) && r.Change.NewImage["Type"].String() == "Order" {
				return r.Change.SequenceNumber
			}
		}
		t.Fatalf("no record %s%d", key, n)
		return ""
	}
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	assert.ElementsMatch(t, []string{mystery.Change.SequenceNumber, seqOf("b", 2), seqOf("e", 1)}, ids,
		"the first failed record of each failed key: d's undecodable record, b2, e1")
	assert.Equal(t, []int{0, 1, 2, 3}, ran["a"])
	assert.Equal(t, []int{0, 1}, ran["b"], "b3 is not run after b2 failed")
	assert.Equal(t, []int{0, 1, 2, 3}, ran["c"])
	assert.Empty(t, ran["d"], "d's first record did not decode: none of d runs")
	assert.Equal(t, []int{0}, ran["e"])
	// Lambda retries from the lowest: the undecodable record.
	lowest := slices.Min(ids)
	assert.Equal(t, mystery.Change.SequenceNumber, lowest)

	// With OnUnknown(UnknownSkip) the mystery record passes, and d runs.
	h, err = New(tbl, func(context.Context, singletable.StreamRecord) error { return nil }, OnUnknown(singletable.UnknownSkip))
	require.NoError(t, err)
	resp, err = h.Handle(t.Context(), events.DynamoDBEvent{Records: recs})
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, `{"batchItemFailures":[]}`, string(b), "an empty list, not null: the whole batch succeeded")
}

// TestLambdaAttributeValues converts every Lambda attribute type, nested.
func TestLambdaAttributeValues(t *testing.T) {
	in := events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
		"s": events.NewStringAttribute("x"), "n": events.NewNumberAttribute("1.5"), "b": events.NewBinaryAttribute([]byte{9}),
		"ss": events.NewStringSetAttribute([]string{"a"}), "ns": events.NewNumberSetAttribute([]string{"1", "2"}),
		"bs": events.NewBinarySetAttribute([][]byte{{1}, {2}}), "null": events.NewNullAttribute(), "bool": events.NewBooleanAttribute(true),
		"l": events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewStringAttribute("e"), events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"k": events.NewNumberAttribute("7")})}),
	})
	got, err := AttributeValue(in)
	require.NoError(t, err)
	want := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1.5"}, "b": &types.AttributeValueMemberB{Value: []byte{9}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a"}}, "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}}, "null": &types.AttributeValueMemberNULL{Value: true}, "bool": &types.AttributeValueMemberBOOL{Value: true},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "e"}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "7"}}}}},
	}}
	assert.Equal(t, want, got)
	// The zero value, which the Lambda library's accessors panic on, is an empty B.
	got, err = AttributeValue(events.DynamoDBAttributeValue{})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberB{Value: []byte{}}, got)
	_, err = New(nil, nil)
	assert.ErrorIs(t, err, singletable.ErrInvalidInput)
}
