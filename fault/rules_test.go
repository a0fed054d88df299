package fault

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// status sends a request of op through inj and returns the status it got,
// or 0 for a transport error.
func status(t *testing.T, inj *Injector, op, body string) int {
	t.Helper()
	resp, err := inj.Do(request(op, body))
	if err != nil {
		return 0
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	if crc := resp.Header.Get("X-Amz-Crc32"); crc != "" {
		require.Equal(t, strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10), crc)
		require.Equal(t, strconv.Itoa(len(b)), resp.Header.Get("Content-Length"))
	}
	return resp.StatusCode
}

func TestRules(t *testing.T) {
	t.Run("first that fires wins", func(t *testing.T) {
		inj := New(&fakeNext{})
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: Throttle(), Times: 1})
		inj.Add(Rule{Ops: []string{"PutItem"}, Fault: ServerError(), Times: 1})
		require.Equal(t, 400, status(t, inj, "PutItem", "{}"))
		require.Equal(t, 500, status(t, inj, "PutItem", "{}"))
		require.Equal(t, 200, status(t, inj, "PutItem", "{}"))
		require.Equal(t, map[Kind]int{KindThrottle: 1, KindServerError: 1}, inj.Stats().Faults)
	})
	t.Run("ops", func(t *testing.T) {
		inj := New(&fakeNext{})
		inj.Add(Rule{Ops: []string{"PutItem", "DeleteItem"}, Fault: Throttle()})
		require.Equal(t, 400, status(t, inj, "PutItem", "{}"))
		require.Equal(t, 400, status(t, inj, "DeleteItem", "{}"))
		require.Equal(t, 200, status(t, inj, "GetItem", "{}"))
	})
	t.Run("match", func(t *testing.T) {
		inj := New(&fakeNext{})
		inj.Add(Rule{Fault: Throttle(), Match: func(op string, body []byte) bool {
			return op == "PutItem" && strings.Contains(string(body), `"hot"`)
		}})
		require.Equal(t, 400, status(t, inj, "PutItem", `{"Item":{"PK":{"S":"hot"}}}`))
		require.Equal(t, 200, status(t, inj, "PutItem", `{"Item":{"PK":{"S":"cold"}}}`))
	})
	t.Run("for", func(t *testing.T) {
		now := time.Unix(1000, 0)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		inj := New(&fakeNext{}, func(o *Options) { o.Now = clock })
		inj.Add(Rule{Fault: Throttle(), For: time.Minute})
		require.Equal(t, 400, status(t, inj, "GetItem", "{}"))
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
		require.Equal(t, 200, status(t, inj, "GetItem", "{}"))
	})
	t.Run("remove", func(t *testing.T) {
		inj := New(&fakeNext{})
		remove := inj.Add(Rule{Fault: Throttle()})
		require.Equal(t, 400, status(t, inj, "GetItem", "{}"))
		remove()
		remove()
		require.Equal(t, 200, status(t, inj, "GetItem", "{}"))
	})
	t.Run("rate is reproducible", func(t *testing.T) {
		pattern := func(seed uint64) string {
			inj := New(&fakeNext{}, func(o *Options) { o.Seed = seed })
			inj.Add(Rule{Fault: Throttle(), Rate: 0.25})
			var b strings.Builder
			for range 400 {
				if status(t, inj, "GetItem", "{}") == 400 {
					b.WriteByte('x')
				} else {
					b.WriteByte('.')
				}
			}
			return b.String()
		}
		a := pattern(7)
		require.Equal(t, a, pattern(7))
		require.NotEqual(t, a, pattern(8))
		require.InDelta(t, 100, strings.Count(a, "x"), 30)
	})
	t.Run("reset is a transport error", func(t *testing.T) {
		next := &fakeNext{}
		inj := New(next)
		inj.Add(Rule{Fault: Reset(), Times: 1})
		require.Equal(t, 0, status(t, inj, "PutItem", "{}"))
		require.Empty(t, next.ops, "not forwarded")
	})
	t.Run("forwards the body", func(t *testing.T) {
		next := &fakeNext{}
		inj := New(next)
		require.Equal(t, 200, status(t, inj, "PutItem", `{"TableName":"t"}`))
		require.Equal(t, []string{`{"TableName":"t"}`}, next.bodies)
		st := inj.Stats()
		require.Equal(t, 1, st.Requests["PutItem"])
		require.Equal(t, 1, st.Forwarded["PutItem"])
	})
}

func TestAddPanics(t *testing.T) {
	inj := New(&fakeNext{})
	for name, r := range map[string]Rule{
		"no fault":      {},
		"unknown op":    {Ops: []string{"PutItems"}, Fault: Throttle()},
		"rate above 1":  {Fault: Throttle(), Rate: 1.5},
		"negative rate": {Fault: Throttle(), Rate: -0.1},
		"negative for":  {Fault: Throttle(), For: -time.Second},
		"negative time": {Fault: Throttle(), Times: -1},
	} {
		require.Panics(t, func() { inj.Add(r) }, name)
	}
	require.Panics(t, func() { Unprocessed(0) })
	require.Panics(t, func() { Unprocessed(1.5) })
	require.Panics(t, func() { Delay(0) })
	require.Panics(t, func() { APIError(200, "X", "") })
	require.Panics(t, func() { Throttle().WithTimeout() })
	require.Equal(t, "LoseResponse(timeout)", LoseResponse().WithTimeout().String())
	require.Equal(t, "Throttle(400 ProvisionedThroughputExceededException)", Throttle().String())
}

// answer is a next client that answers every request with status, headers
// and body.
type answer struct {
	status int
	header map[string]string
	body   []byte
	got    []string // the request bodies
}

func (a *answer) Do(req *http.Request) (*http.Response, error) {
	b, _ := readRequestBody(req)
	a.got = append(a.got, string(b))
	resp := okResponse(req, string(a.body))
	resp.StatusCode = a.status
	for k, v := range a.header {
		resp.Header.Set(k, v)
	}
	return resp, nil
}

// decode sends op with body through inj and decodes the JSON answer.
func decode(t *testing.T, inj *Injector, op, body string) (int, map[string]any) {
	t.Helper()
	resp, err := inj.Do(request(op, body))
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10), resp.Header.Get("X-Amz-Crc32"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	return resp.StatusCode, m
}

func TestTransactGetConflictShape(t *testing.T) {
	inj := New(&fakeNext{})
	inj.Add(Rule{Fault: TxConflict()})
	code, m := decode(t, inj, "TransactGetItems", `{"TransactItems":[{"Get":{}},{"Get":{}}]}`)
	require.Equal(t, 400, code)
	require.Equal(t, "com.amazonaws.dynamodb.v20120810#TransactionCanceledException", m["__type"])
	reasons := m["CancellationReasons"].([]any)
	require.Len(t, reasons, 2)
	require.Contains(t, m["Message"], "[")
}

func TestUnprocessedMergesAndGunzips(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"UnprocessedItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"old"}}}}]}}`))
	require.NoError(t, zw.Close())
	next := &answer{status: 200, header: map[string]string{"Content-Encoding": "gzip"}, body: gz.Bytes()}
	inj := New(next)
	inj.Add(Rule{Fault: Unprocessed(0.5)})
	req := `{"RequestItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"a"}}}},{"PutRequest":{"Item":{"PK":{"S":"b"}}}}]}}`
	code, m := decode(t, inj, "BatchWriteItem", req)
	require.Equal(t, 200, code)
	left := m["UnprocessedItems"].(map[string]any)["t"].([]any)
	require.Len(t, left, 2, "the one Local left plus the one withheld")
	require.Len(t, next.got, 1)
	require.Equal(t, 1, strings.Count(next.got[0], "PutRequest"), "one of two forwarded")

	next = &answer{status: 200, body: []byte(`{"Responses":{},"UnprocessedKeys":{"t":{"Keys":[{"PK":{"S":"old"}}],"ConsistentRead":true}}}`)}
	inj = New(next)
	inj.Add(Rule{Fault: Unprocessed(0.5)})
	_, m = decode(t, inj, "BatchGetItem", `{"RequestItems":{"t":{"Keys":[{"PK":{"S":"a"}},{"PK":{"S":"b"}}],"ConsistentRead":true}}}`)
	keys := m["UnprocessedKeys"].(map[string]any)["t"].(map[string]any)["Keys"].([]any)
	require.Len(t, keys, 2)
}

func TestFillsMissingChecksum(t *testing.T) {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
	inj := New(&answer{status: 400, body: []byte(body)})
	code, m := decode(t, inj, "PutItem", "{}")
	require.Equal(t, 400, code)
	require.Equal(t, "The conditional request failed", m["message"])
}
