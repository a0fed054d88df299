package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitter is an HTTP client for the DynamoDB Streams API that makes DynamoDB
// Local's one shard split, as DynamoDB's shards do: once cut is set, the shard
// ends at that sequence number (DescribeStream shows its end and two children;
// GetRecords stops there and returns no next iterator), and the records after
// it are the children's, each child holding the items whose partition key
// hashes to it. Child iterators are the real shard's, marked with the child.
type splitter struct {
	next *http.Client

	mu    sync.Mutex // protects cut and shard
	cut   string     // the parent's last sequence number; "" before the split
	shard string     // the real shard's id, learnt from DescribeStream
}

func (s *splitter) state() (cut, shard string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut, s.shard
}

func (s *splitter) split(at string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut = at
}

func child(shard string, i int) string { return fmt.Sprintf("%s-child%d", shard, i) }

// route is the child an item goes to.
func route(keys map[string]any) int {
	pk, _ := keys["PK"].(map[string]any)
	h := fnv.New32a()
	fmt.Fprint(h, pk["S"])
	return int(h.Sum32() % 2)
}

func (s *splitter) Do(req *http.Request) (*http.Response, error) {
	op := req.Header.Get("X-Amz-Target")
	op = op[strings.LastIndex(op, ".")+1:]
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	c := &splitCall{s: s, req: req}
	_ = json.Unmarshal(body, &c.in)
	c.cut, c.shard = s.state()
	switch op {
	case "DescribeStream":
		return c.describeStream()
	case "GetShardIterator":
		return c.getShardIterator()
	case "GetRecords":
		return c.getRecords()
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return s.next.Do(r)
}

// splitCall is one request through the splitter: its decoded body and the
// splitter's state when it came.
type splitCall struct {
	s     *splitter
	req   *http.Request
	in    map[string]any
	cut   string // as splitter.cut
	shard string // as splitter.shard
}

// forward sends in to DynamoDB Local and returns its decoded answer; when the
// answer is not a decodable success, out is nil and resp is the answer as it
// came.
func (c *splitCall) forward(in map[string]any) (map[string]any, *http.Response, error) {
	b, _ := json.Marshal(in)
	r := c.req.Clone(c.req.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	resp, err := c.s.next.Do(r)
	if err != nil {
		return nil, nil, err
	}
	rb, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(rb, &out) != nil {
		resp.Body = io.NopCloser(bytes.NewReader(rb))
		return nil, resp, nil
	}
	return out, resp, nil
}

// reply returns resp with out as its body.
func (c *splitCall) reply(resp *http.Response, out map[string]any) (*http.Response, error) {
	b, _ := json.Marshal(out)
	resp.Header.Del("X-Amz-Crc32")
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return resp, nil
}

// synthetic returns a success with out as its body, sent nowhere.
func (c *splitCall) synthetic(out map[string]any) (*http.Response, error) {
	b, _ := json.Marshal(out)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "Content-Length": {strconv.Itoa(len(b))}},
		Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: c.req}, nil
}

// describeStream learns the real shard's id and, once cut is set, shows the
// shard ending at cut with two children starting there.
func (c *splitCall) describeStream() (*http.Response, error) {
	out, resp, err := c.forward(c.in)
	if out == nil {
		return resp, err
	}
	d, _ := out["StreamDescription"].(map[string]any)
	shards, _ := d["Shards"].([]any)
	if len(shards) > 0 {
		id, _ := shards[0].(map[string]any)["ShardId"].(string)
		c.s.mu.Lock()
		c.s.shard = id
		c.s.mu.Unlock()
		if c.cut != "" {
			real := shards[0].(map[string]any)
			real["SequenceNumberRange"].(map[string]any)["EndingSequenceNumber"] = c.cut
			for i := range 2 {
				shards = append(shards, map[string]any{"ShardId": child(id, i), "ParentShardId": id,
					"SequenceNumberRange": map[string]any{"StartingSequenceNumber": c.cut}})
			}
			d["Shards"] = shards
		}
	}
	return c.reply(resp, out)
}

// getShardIterator gives a child's iterator as the real shard's from cut,
// marked with the child, and the parent's past cut as its end.
func (c *splitCall) getShardIterator() (*http.Response, error) {
	in, cut := c.in, c.cut
	id, _ := in["ShardId"].(string)
	which := -1
	for i := range 2 {
		if cut != "" && id == child(c.shard, i) {
			which = i
		}
	}
	if which >= 0 {
		in["ShardId"] = c.shard
		if in["ShardIteratorType"] == "TRIM_HORIZON" {
			in["ShardIteratorType"], in["SequenceNumber"] = "AFTER_SEQUENCE_NUMBER", cut
		}
	} else if cut != "" && in["ShardIteratorType"] == "AFTER_SEQUENCE_NUMBER" && compareSeq(in["SequenceNumber"].(string), cut) >= 0 {
		return c.synthetic(map[string]any{"ShardIterator": "end|"}) // read to the parent's end
	}
	out, resp, err := c.forward(in)
	if out == nil {
		return resp, err
	}
	out["ShardIterator"] = fmt.Sprintf("%d|%s", which, out["ShardIterator"])
	return c.reply(resp, out)
}

// getRecords reads the real shard and keeps what the iterator's shard holds:
// the parent up to cut (and then no next iterator), a child the records after
// cut that route to it.
func (c *splitCall) getRecords() (*http.Response, error) {
	in, cut := c.in, c.cut
	it, _ := in["ShardIterator"].(string)
	if it == "end|" {
		return c.synthetic(map[string]any{"Records": []any{}})
	}
	which := -1
	if w, rest, ok := strings.Cut(it, "|"); ok {
		which, _ = strconv.Atoi(w)
		in["ShardIterator"] = rest
	}
	out, resp, err := c.forward(in)
	if out == nil {
		return resp, err
	}
	recs, _ := out["Records"].([]any)
	kept, ended := splitRecords(recs, cut, which)
	out["Records"] = kept
	if kept == nil {
		out["Records"] = []any{}
	}
	if ended {
		delete(out, "NextShardIterator")
	} else if next, ok := out["NextShardIterator"].(string); ok {
		out["NextShardIterator"] = fmt.Sprintf("%d|%s", which, next)
	}
	return c.reply(resp, out)
}

// splitRecords returns the records of recs that shard which holds (-1: the
// parent, else a child) when the parent ends at cut, and whether the parent's
// end was reached.
func splitRecords(recs []any, cut string, which int) (kept []any, ended bool) {
	for _, r := range recs {
		d := r.(map[string]any)["dynamodb"].(map[string]any)
		seq := d["SequenceNumber"].(string)
		switch {
		case cut == "" || (which < 0 && compareSeq(seq, cut) <= 0):
			kept = append(kept, r)
			ended = ended || (cut != "" && seq == cut)
		case which < 0:
			ended = true // past the parent's end
		case compareSeq(seq, cut) > 0 && route(d["Keys"].(map[string]any)) == which:
			kept = append(kept, r)
		}
	}
	return kept, ended
}

// TestFleetLineageAcrossWorkers splits DynamoDB Local's shard at the HTTP
// layer while worker A reads it: A finishes the parent; its two children are
// taken by worker B (A may take only the parent), and B reads them only after
// the parent is finished, so every order's changes are handled in order
// across the split and the two workers.
func TestFleetLineageAcrossWorkers(t *testing.T) {
	tbl := newStreamTable(t)
	_, orders := registerAll(t, tbl)
	ts, err := NewTableStore(tbl)
	require.NoError(t, err)
	store := newRecordingStore(ts)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sp := &splitter{next: &http.Client{Transport: tr}}
	streams := dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(local.Get(t).Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:   sp,
	})
	var ids []string
	write := func(from, to int) {
		for n := from; n < to; n++ {
			for i := range 6 {
				o := tOrder{CustomerID: fmt.Sprint("c", i), OrderID: "o", Status: "S", CreatedAt: t0, Count: n}
				_, err := orders.Put(t.Context(), o)
				require.NoError(t, err)
			}
		}
	}
	for i := range 6 {
		ids = append(ids, fmt.Sprintf("c%d/o", i))
	}
	write(0, 5)
	log := newFleetLog(time.Millisecond)
	opts := []Option{fastPolls, LeaseTiming(10*time.Second, 100*time.Millisecond), ShardRefresh(50 * time.Millisecond)}
	a := startMember(t.Context(), tbl, streams, log, "A", append(opts, Leases(onlyFirst{LeaseStore: store, sp: sp}))...)
	waitFor(t, "A handles the first changes", 60*time.Second, func() bool { return log.complete(ids, 5) })
	// The shard ends at the last record A has read: what comes next is the children's.
	var last string
	leases, err := ts.Leases(t.Context(), streamARNOf(t, tbl))
	require.NoError(t, err)
	require.Len(t, leases, 1)
	waitFor(t, "A's checkpoint", 30*time.Second, func() bool {
		ls, _ := ts.Leases(t.Context(), streamARNOf(t, tbl))
		last = ls[0].Checkpoint
		return last != "" && log.complete(ids, 5)
	})
	sp.split(last)
	b := startMember(t.Context(), tbl, streams, log, "B", append(opts, Leases(store))...)
	write(5, 10)
	waitFor(t, "every change", 60*time.Second, func() bool { return log.complete(ids, 10) })
	a.stop(t)
	b.stop(t)
	log.check(t, ids, 10)
	byShard := checkHistory(t, store.writes())
	_, parent := sp.state()
	var finished time.Time
	for _, w := range byShard[parent] {
		if w.l.Owner != "" {
			assert.Equal(t, "A", w.l.Owner, "the parent is A's")
		}
		if w.l.Finished {
			finished = w.at
		}
	}
	require.False(t, finished.IsZero(), "the parent finished")
	children := 0
	for i := range 2 {
		ws := byShard[child(parent, i)]
		if len(ws) == 0 {
			continue // no item hashed to it
		}
		children++
		assert.Equal(t, "B", ws[0].l.Owner, "child %d taken by B", i)
		assert.False(t, ws[0].at.Before(finished), "child %d taken after the parent finished", i)
		log.mu.Lock()
		for _, s := range log.spans[child(parent, i)] {
			assert.Equal(t, "B", s.worker)
			assert.False(t, s.start.Before(finished), "child %d read before the parent finished", i)
		}
		log.mu.Unlock()
	}
	assert.Equal(t, 2, children, "both children had records")
	log.mu.Lock()
	t.Logf("FIGURES split at %s: A handled %d changes of the parent, B %d of the children", last, log.byWorker["A"], log.byWorker["B"])
	log.mu.Unlock()
}

// onlyFirst lets a worker take only the stream's real shard, not the children,
// and ask for nothing.
type onlyFirst struct {
	LeaseStore
	sp *splitter
}

func (o onlyFirst) TakeLease(ctx context.Context, l Lease, owner string, e time.Time) (Lease, error) {
	if _, shard := o.sp.state(); l.Shard != shard {
		return Lease{}, fmt.Errorf("test: %s may not take %s: %w", owner, l.Shard, ErrLeaseLost)
	}
	return o.LeaseStore.TakeLease(ctx, l, owner, e)
}

func streamARNOf(t *testing.T, tbl *Table) string {
	arn, err := latestStream(t.Context(), tbl)
	require.NoError(t, err)
	return arn
}

func (o onlyFirst) AskHandOff(context.Context, Lease, string) error {
	return fmt.Errorf("test: this worker asks for no lease: %w", ErrLeaseLost)
}
