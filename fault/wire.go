package fault

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errorTypePrefix is the namespace DynamoDB puts before error codes in
// __type; the SDK keeps what follows '#'.
const errorTypePrefix = "com.amazonaws.dynamodb.v20120810#"

// targetPrefix is the X-Amz-Target of DynamoDB's operations, before the name.
const targetPrefix = "DynamoDB_20120810."

// operation returns the operation named by the X-Amz-Target header
// ("DynamoDB_20120810.PutItem" gives "PutItem").
func operation(req *http.Request) string {
	t := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// readRequestBody reads and closes req.Body. The SDK rewinds its own copy
// of the payload before each retry and builds a new *http.Request per
// attempt, so taking the body here is safe.
func readRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("fault: read request body: %w", err)
	}
	return b, nil
}

// withBody returns a copy of req, with its context, sending body.
func withBody(req *http.Request, body []byte) *http.Request {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return out
}

// readResponseBody reads and closes resp.Body, decompressing a gzip body
// (and dropping its Content-Encoding) so that it can be rewritten.
func readResponseBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("fault: read response: %w", err)
		}
		r = zr
		resp.Header.Del("Content-Encoding")
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fault: read response: %w", err)
	}
	return b, nil
}

// setResponseBody makes body the body of resp, with its Content-Length and
// the X-Amz-Crc32 (CRC32 IEEE of the body) that the SDK checks.
func setResponseBody(resp *http.Response, body []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	resp.Uncompressed = false
}

// errorResponse builds DynamoDB's answer for an error of code: the status,
// JSON 1.0 content type, a request ID, the date, the CRC32, and the body
// {"__type":"com.amazonaws.dynamodb.v20120810#<code>","message":...} plus
// extra members.
func (i *Injector) errorResponse(req *http.Request, status int, code, message string, extra map[string]any) *http.Response {
	m := map[string]any{"__type": errorTypePrefix + code}
	for k, v := range extra {
		m[k] = v
	}
	if _, ok := m["Message"]; !ok {
		m["message"] = message
	}
	body := mustMarshal(m)
	i.mu.Lock()
	i.requests++
	n := i.requests
	i.mu.Unlock()
	resp := &http.Response{
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode: status,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":     {"application/x-amz-json-1.0"},
			"X-Amzn-Requestid": {fmt.Sprintf("FAULTINJECTED%039d", n)},
			"Date":             {time.Now().UTC().Format(http.TimeFormat)}, // real time: the SDK estimates clock skew from it
		},
		Request: req,
	}
	setResponseBody(resp, body)
	return resp
}

// urlOp is the Op of the *url.Error that net/http returns for method.
func urlOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// transportError is what net/http returns when the connection of req fails
// while reading: a connection reset (syscall.ECONNRESET) or, with timeout,
// an i/o timeout (os.ErrDeadlineExceeded).
func transportError(req *http.Request, timeout bool) error {
	var err error = os.NewSyscallError("read", syscall.ECONNRESET)
	if timeout {
		err = os.ErrDeadlineExceeded
	}
	op := &net.OpError{Op: "read", Net: "tcp", Err: err}
	if ap, perr := netip.ParseAddrPort(req.URL.Host); perr == nil {
		op.Addr = net.TCPAddrFromAddrPort(ap)
	}
	return &url.Error{Op: urlOp(req.Method), URL: req.URL.String(), Err: op}
}

// sleep waits d or until ctx ends; it returns the *url.Error net/http
// returns for an ended context.
func sleep(req *http.Request, d time.Duration) error {
	ctx := req.Context()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &url.Error{Op: urlOp(req.Method), URL: req.URL.String(), Err: context.Cause(ctx)}
	}
}

// drain reads the rest of resp's body and closes it, so that its
// connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// mustMarshal is json.Marshal without HTML escaping, for values that
// always marshal.
func mustMarshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("fault: marshal: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
