package wire

import (
	"bytes"
	"context"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// middlewareID is the Sink's ID in the SDK's middleware stack.
const middlewareID = "singletable/wire"

// crcHeader is the checksum DynamoDB sends with a response body.
const crcHeader = "X-Amz-Crc32"

// Option returns the option that makes one call decode its response into s: passed to the call as one
// of its optFns, it adds s to that call's middleware stack, in the Deserialize step just below the
// SDK's operation deserializer. There s receives the raw HTTP response of each attempt after the SDK's
// own middleware below it has handled it (gzip decompression, the wrapping of the body that checks its
// X-Amz-Crc32); it reads a successful (2xx) body in full, decodes its items into s, and gives the SDK's
// deserializer a body holding the rest of the response (consumed capacity, counts, last evaluated key,
// unprocessed keys) and the items it did not decode, or, when anything about it is unexpected, the
// original body. Errors (any other status) are left untouched to the SDK. Signing, retries, endpoint
// resolution and error deserialization stay the SDK's; each attempt starts s afresh, so a retried call
// holds only its last response.
//
// The checksum: unless the client disables it (dynamodb.Options.DisableValidateResponseChecksum), the
// SDK wraps the body in a reader that computes its CRC32 and compares it, when the body is closed, with
// X-Amz-Crc32; the SDK itself only logs a mismatch. s closes that reader after reading the body, and a
// mismatch (with the header present) fails the attempt with a [*ChecksumError], which the SDK's retryer
// retries: items from a body that failed its checksum are never decoded.
func (s *Sink) Option() func(*dynamodb.Options) { return s.option }

func (s *Sink) option(o *dynamodb.Options) {
	s.verify = !o.DisableValidateResponseChecksum
	o.APIOptions = append(o.APIOptions, s.addTo)
}

func (s *Sink) addTo(stack *middleware.Stack) error {
	return stack.Deserialize.Insert(s, "OperationDeserializer", middleware.After)
}

// ID implements middleware.DeserializeMiddleware.
func (s *Sink) ID() string { return middlewareID }

// HandleDeserialize implements middleware.DeserializeMiddleware; see [Sink.Option].
func (s *Sink) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	out middleware.DeserializeOutput, md middleware.Metadata, err error,
) {
	s.reset()
	out, md, err = next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp == nil || resp.Body == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return out, md, err
	}
	body, rerr := readBody(resp)
	cerr := resp.Body.Close()
	if rerr != nil {
		// The SDK reads the same bytes and meets the same error, which it reports its way.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{rerr}))
		return out, md, nil
	}
	if cerr != nil && s.verify && resp.Header.Get(crcHeader) != "" {
		resp.Body = io.NopCloser(bytes.NewReader(nil))
		return out, md, &ChecksumError{Err: cerr}
	}
	if repl, ok := s.read(body); ok {
		s.rd.Reset(repl)
		resp.ContentLength = int64(len(repl))
	} else {
		s.rd.Reset(body)
	}
	resp.Body = &s.rd
	return out, md, nil
}

// bodyReader is the body given to the SDK's deserializer: a bytes.Reader whose Close does nothing.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// readBody reads a response body in full, into a buffer sized by its Content-Length when it has one.
func readBody(resp *smithyhttp.Response) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > 64<<20 {
		n = 0
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead))
	_, err := buf.ReadFrom(resp.Body)
	return buf.Bytes(), err
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// ChecksumError is the error of an attempt whose response body does not match its X-Amz-Crc32 header.
// The SDK's retryer retries it, as it does a broken connection.
type ChecksumError struct {
	Err error // from the SDK's checksum reader: "response did not match expected checksum, ..."
}

// Error names the check that failed.
func (e *ChecksumError) Error() string {
	return "singletable: response body failed its X-Amz-Crc32 check: " + e.Err.Error()
}

// Unwrap returns the SDK's error.
func (e *ChecksumError) Unwrap() error { return e.Err }

// RetryableError tells the SDK's retryer to retry the attempt.
func (e *ChecksumError) RetryableError() bool { return true }

var _ middleware.DeserializeMiddleware = (*Sink)(nil)
