package fault

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/singletable/singletable/internal/localtest"
)

// local is the one DynamoDB Local of this test binary, started on first use.
var local localtest.Shared

func TestMain(m *testing.M) {
	code := local.Run(m) // runs the tests, then stops DynamoDB Local
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newClient returns a client of the shared DynamoDB Local through a new
// Injector, retrying with a 1ms backoff, and fails the test if the SDK logs
// a response checksum mismatch.
func newClient(t *testing.T, optFns ...func(*ClientOptions)) (*dynamodb.Client, *Injector) {
	t.Helper()
	inst := local.Get(t)
	logger := &checksumLogger{t: t}
	client, inj := NewClient(inst, append([]func(*ClientOptions){func(o *ClientOptions) {
		o.MaxBackoff = time.Millisecond
		o.Injector.Seed = 1
		o.DynamoDB = append(o.DynamoDB, func(o *dynamodb.Options) { o.Logger = logger })
	}}, optFns...)...)
	return client, inj
}

// checksumLogger fails its test when the SDK warns that a response did not
// match its X-Amz-Crc32.
type checksumLogger struct {
	t *testing.T
}

func (l *checksumLogger) Logf(c logging.Classification, format string, v ...any) {
	if msg := fmt.Sprintf(format, v...); strings.Contains(msg, "checksum") {
		l.t.Errorf("SDK log (%s): %s", c, msg)
	}
}

// raw returns a client of the shared DynamoDB Local without faults, to set
// up and inspect tables.
func raw(t *testing.T) *dynamodb.Client {
	t.Helper()
	return local.Client(t)
}

// Attribute value shorthands.
func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// createTable creates a table with key PK (S) and SK (S); with indexes it
// also has GSI1 (GSI1PK, GSI1SK; projection ALL), GSI2 (GSI2PK only;
// KEYS_ONLY) and LSI1 (PK, LSI1SK; ALL). It is deleted at the end of the
// test.
func createTable(t *testing.T, indexes bool) string {
	t.Helper()
	c := raw(t)
	name := localtest.TableName(t)
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(hash, sort string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
		if sort != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str("PK"), str("SK")},
		KeySchema:            key("PK", "SK"),
	}
	if indexes {
		in.AttributeDefinitions = append(in.AttributeDefinitions, str("GSI1PK"), str("GSI1SK"), str("GSI2PK"), str("LSI1SK"))
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{
			{IndexName: aws.String("GSI1"), KeySchema: key("GSI1PK", "GSI1SK"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String("GSI2"), KeySchema: key("GSI2PK", ""), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
		}
		in.LocalSecondaryIndexes = []types.LocalSecondaryIndex{
			{IndexName: aws.String("LSI1"), KeySchema: key("PK", "LSI1SK"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
		}
	}
	_, err := c.CreateTable(t.Context(), in)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		require.NoError(t, err)
	})
	return name
}

// key returns the primary key PK=pk, SK=sk.
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
}

// itemAt returns the item at key, read consistently without faults, or nil.
func itemAt(t *testing.T, table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := raw(t).GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: key(pk, sk), ConsistentRead: aws.Bool(true),
	})
	require.NoError(t, err)
	return out.Item
}

// putInput returns a PutItem of {PK: pk, SK: "A"} plus attrs.
func putInput(table, pk string, attrs ...string) *dynamodb.PutItemInput {
	it := key(pk, "A")
	for i := 0; i+1 < len(attrs); i += 2 {
		it[attrs[i]] = s(attrs[i+1])
	}
	return &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}
}

// fakeNext is a next client that answers every request 200 {} and records
// the operations and bodies it got.
type fakeNext struct {
	mu     sync.Mutex
	ops    []string
	bodies []string
}

func (f *fakeNext) Do(req *http.Request) (*http.Response, error) {
	body, _ := readRequestBody(req)
	f.mu.Lock()
	f.ops = append(f.ops, operation(req))
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	return okResponse(req, "{}"), nil
}

// okResponse is a 200 answer with body.
func okResponse(req *http.Request, body string) *http.Response {
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// request returns a request of op with body, as the SDK would send it.
func request(op, body string) *http.Request {
	u, _ := url.Parse("http://127.0.0.1:8000/")
	req := &http.Request{
		Method: http.MethodPost, URL: u, Host: u.Host,
		Header:        http.Header{"X-Amz-Target": {targetPrefix + op}, "Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
	}
	return req.WithContext(context.Background())
}
