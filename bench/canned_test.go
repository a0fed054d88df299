package bench

import (
	"bytes"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// cannedHTTP is an SDK HTTP client that answers every DynamoDB call with a fixed body,
// without a network: what the SDK costs around it (serialising, signing, retry and
// endpoint middleware, deserialising the JSON, checking its CRC32) is all that is left,
// and it is the same for the library and for the raw SDK. It reads each request body
// to its end, as a transport writing it to a socket would. Safe for concurrent use.
type cannedHTTP struct {
	bodies map[string]cannedBody // by operation, e.g. "GetItem"

	mu   sync.Mutex        // protects last
	last map[string][]byte // the last request body per operation, when recording
	rec  bool

	// scan, when set, are the pages of a Scan, each but the last ending with a
	// LastEvaluatedKey whose sort key is "page#<the next page>".
	scan []cannedBody
}

// scanPage returns the page of the Scan whose request body req resumes after
// "page#<n>" (the first without an ExclusiveStartKey).
func (c *cannedHTTP) scanPage(req []byte) cannedBody {
	i := bytes.Index(req, []byte("page#"))
	if i < 0 {
		return c.scan[0]
	}
	n := 0
	for _, d := range req[i+5:] {
		if d < '0' || d > '9' {
			break
		}
		n = n*10 + int(d-'0')
	}
	return c.scan[min(n, len(c.scan)-1)]
}

func canned(b []byte) cannedBody {
	return cannedBody{body: b, crc: strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10)}
}

type cannedBody struct {
	body []byte
	crc  string
}

func newCannedHTTP(bodies map[string][]byte) *cannedHTTP {
	c := &cannedHTTP{bodies: map[string]cannedBody{}, last: map[string][]byte{}}
	for op, b := range bodies {
		c.bodies[op] = canned(b)
	}
	return c
}

const targetPrefix = "DynamoDB_20120810."

func (c *cannedHTTP) Do(r *http.Request) (*http.Response, error) {
	op := r.Header.Get("X-Amz-Target")
	if len(op) > len(targetPrefix) {
		op = op[len(targetPrefix):]
	}
	var req []byte
	if r.Body != nil {
		switch {
		case c.rec:
			req, _ = io.ReadAll(r.Body)
			c.mu.Lock()
			c.last[op] = req
			c.mu.Unlock()
		case op == "Scan":
			req, _ = io.ReadAll(r.Body)
		default:
			_, _ = io.Copy(io.Discard, r.Body)
		}
		_ = r.Body.Close()
	}
	cb, ok := c.bodies[op]
	if op == "Scan" && c.scan != nil {
		cb, ok = c.scanPage(req), true
	}
	status := http.StatusOK
	if !ok {
		status = http.StatusBadRequest
		cb.body = []byte(`{"__type":"com.amazon.coral.validate#ValidationException","message":"no canned answer for ` + op + `"}`)
		cb.crc = strconv.FormatUint(uint64(crc32.ChecksumIEEE(cb.body)), 10)
	}
	return &http.Response{
		Status:     http.StatusText(status),
		StatusCode: status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":     {"application/x-amz-json-1.0"},
			"X-Amz-Crc32":      {cb.crc},
			"X-Amzn-Requestid": {"BENCHMARK0000000000000000000000000000000000000000000"},
		},
		ContentLength: int64(len(cb.body)),
		Body:          io.NopCloser(bytes.NewReader(cb.body)),
		Request:       r,
	}, nil
}

// lastRequest returns the last request body sent for op, when recording.
func (c *cannedHTTP) lastRequest(op string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[op]
}

// cannedClient is an SDK client as an application builds one for AWS (region, static
// credentials, default retryer and endpoint resolution) over the canned HTTP client.
func cannedClient(h *cannedHTTP) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCHMARK", "secret", ""),
		HTTPClient:  h,
	})
}

// queryItems is how many items the canned Query page holds.
const queryItems = 100

// cannedResponses are the bodies DynamoDB would send for sampleOrder: GetItem finds it,
// PutItem succeeds, Query returns a last page of queryItems orders.
func cannedResponses(tb testing.TB) map[string][]byte {
	return map[string][]byte{
		"GetItem": []byte(`{"Item":` + string(storedJSON(tb)) + `}`),
		"PutItem": []byte(`{}`),
		"Query":   itemsBody(tb, queryItems, ""),
	}
}

// floorResponses are the bodies of the floor: GetItem finds nothing, Query returns an
// empty page. The SDK's cost per call, sending, signing, retrying, reading a response,
// is all that is left.
func floorResponses() map[string][]byte {
	return map[string][]byte{
		"GetItem": []byte(`{}`),
		"Query":   []byte(`{"Count":0,"Items":[],"ScannedCount":0}`),
	}
}

// storedJSON is storedItem as DynamoDB sends it.
func storedJSON(tb testing.TB) []byte {
	j, err := attributevalue.MarshalMapJSON(storedItem(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// itemsBody is a Query or Scan page of n stored orders, with last as its
// LastEvaluatedKey's sort key when it is not "".
func itemsBody(tb testing.TB, n int, last string) []byte {
	j := storedJSON(tb)
	var q bytes.Buffer
	q.WriteString(`{"Count":` + strconv.Itoa(n) + `,"Items":[`)
	for i := range n {
		if i > 0 {
			q.WriteByte(',')
		}
		q.Write(j)
	}
	q.WriteString(`],`)
	if last != "" {
		q.WriteString(`"LastEvaluatedKey":{"PK":{"S":"CUST#cust-7d3f2a"},"SK":{"S":"` + last + `"}},`)
	}
	q.WriteString(`"ScannedCount":` + strconv.Itoa(n) + `}`)
	return q.Bytes()
}
