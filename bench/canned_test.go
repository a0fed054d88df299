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
}

type cannedBody struct {
	body []byte
	crc  string
}

func newCannedHTTP(bodies map[string][]byte) *cannedHTTP {
	c := &cannedHTTP{bodies: map[string]cannedBody{}, last: map[string][]byte{}}
	for op, b := range bodies {
		c.bodies[op] = cannedBody{body: b, crc: strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10)}
	}
	return c
}

const targetPrefix = "DynamoDB_20120810."

func (c *cannedHTTP) Do(r *http.Request) (*http.Response, error) {
	op := r.Header.Get("X-Amz-Target")
	if len(op) > len(targetPrefix) {
		op = op[len(targetPrefix):]
	}
	if r.Body != nil {
		if c.rec {
			b, _ := io.ReadAll(r.Body)
			c.mu.Lock()
			c.last[op] = b
			c.mu.Unlock()
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		_ = r.Body.Close()
	}
	cb, ok := c.bodies[op]
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
	item := storedItem(tb)
	j, err := attributevalue.MarshalMapJSON(item)
	if err != nil {
		tb.Fatal(err)
	}
	var q bytes.Buffer
	q.WriteString(`{"Count":` + strconv.Itoa(queryItems) + `,"Items":[`)
	for i := range queryItems {
		if i > 0 {
			q.WriteByte(',')
		}
		q.Write(j)
	}
	q.WriteString(`],"ScannedCount":` + strconv.Itoa(queryItems) + `}`)
	return map[string][]byte{
		"GetItem": []byte(`{"Item":` + string(j) + `}`),
		"PutItem": []byte(`{}`),
		"Query":   q.Bytes(),
	}
}
