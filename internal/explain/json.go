package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// errDry ends the dry client's calls at its HTTP client, the body recorded.
var errDry = errors.New("singletable: Explain: written, not sent")

type dryBodyKey struct{}

// dryHTTP is the dry client's HTTP client: it keeps the body the SDK wrote and
// sends nothing.
type dryHTTP struct{}

func (dryHTTP) Do(req *http.Request) (*http.Response, error) {
	if p, ok := req.Context().Value(dryBodyKey{}).(*[]byte); ok && req.Body != nil {
		*p, _ = io.ReadAll(req.Body)
	}
	return nil, errDry
}

// JSON writes inputs as the AWS SDK writes them, through a client of its own
// that sends nothing. The zero value is ready to use; it is not safe for
// concurrent use (its caller holds a lock).
type JSON struct {
	dry *dynamodb.Client // made on first use
}

// Input returns the body the AWS SDK writes for in: the JSON on the wire, with
// object keys sorted; or nil and why the SDK wrote none.
func (w *JSON) Input(ctx context.Context, api string, in any) (json.RawMessage, string) {
	if w.dry == nil {
		w.dry = dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://explain.invalid"),
			Credentials: aws.AnonymousCredentials{}, HTTPClient: dryHTTP{}, Retryer: aws.NopRetryer{}})
	}
	var body []byte
	ctx = context.WithValue(context.WithoutCancel(ctx), dryBodyKey{}, &body)
	var err error
	// Each input is copied first: the SDK may fill fields of the input it is
	// given (a missing idempotency token), and this one is the library's.
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		cp := *in
		_, err = w.dry.GetItem(ctx, &cp)
	case *dynamodb.PutItemInput:
		cp := *in
		_, err = w.dry.PutItem(ctx, &cp)
	case *dynamodb.UpdateItemInput:
		cp := *in
		_, err = w.dry.UpdateItem(ctx, &cp)
	case *dynamodb.DeleteItemInput:
		cp := *in
		_, err = w.dry.DeleteItem(ctx, &cp)
	case *dynamodb.QueryInput:
		cp := *in
		_, err = w.dry.Query(ctx, &cp)
	case *dynamodb.ScanInput:
		cp := *in
		_, err = w.dry.Scan(ctx, &cp)
	case *dynamodb.BatchGetItemInput:
		cp := *in
		_, err = w.dry.BatchGetItem(ctx, &cp)
	case *dynamodb.BatchWriteItemInput:
		cp := *in
		_, err = w.dry.BatchWriteItem(ctx, &cp)
	case *dynamodb.TransactWriteItemsInput:
		cp := *in
		_, err = w.dry.TransactWriteItems(ctx, &cp)
	case *dynamodb.TransactGetItemsInput:
		cp := *in
		_, err = w.dry.TransactGetItems(ctx, &cp)
	default:
		return nil, fmt.Sprintf("%s: no JSON for %T", api, in)
	}
	if body == nil {
		if err == nil {
			err = errors.New("no body")
		}
		return nil, err.Error()
	}
	out, cerr := canonicalJSON(body)
	if cerr != nil {
		return nil, cerr.Error()
	}
	return out, ""
}

// canonicalJSON re-encodes a JSON document with its object keys sorted and
// its numbers as written, without HTML escaping.
func canonicalJSON(body []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
