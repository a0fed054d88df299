package singletable

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
	"github.com/singletable/singletable/internal/tabledef"
)

// httpRecorder records the API and body of every request on its way to next,
// or stops it there when next is nil (a dry run: the body the SDK would send).
type httpRecorder struct {
	next *http.Client

	mu    sync.Mutex // protects calls
	calls []recordedCall
}

type recordedCall struct {
	api  string // "CreateTable"
	body []byte
}

var errDryRun = errors.New("recorded, not sent")

func (r *httpRecorder) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	_, api, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
	r.mu.Lock()
	r.calls = append(r.calls, recordedCall{api, body})
	r.mu.Unlock()
	if r.next == nil {
		return nil, errDryRun
	}
	return r.next.Do(req)
}

// bodies returns the bodies of the recorded requests to api.
func (r *httpRecorder) bodies(api string) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, c := range r.calls {
		if c.api == api {
			out = append(out, c.body)
		}
	}
	return out
}

// wireBody returns the CreateTable request body the SDK writes for in.
func wireBody(t *testing.T, in *dynamodb.CreateTableInput) []byte {
	t.Helper()
	rec := &httpRecorder{}
	dry := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:9"), HTTPClient: rec, Retryer: aws.NopRetryer{},
		Credentials: aws.AnonymousCredentials{}})
	_, err := dry.CreateTable(t.Context(), in)
	require.ErrorIs(t, err, errDryRun)
	bodies := rec.bodies("CreateTable")
	require.Len(t, bodies, 1)
	return bodies[0]
}

// definitionEdits give the table of the definition tests a stream, deletion
// protection and tags.
func definitionEdits() []func(*dynamodb.CreateTableInput) {
	return []func(*dynamodb.CreateTableInput){StreamView(types.StreamViewTypeNewImage), DeletionProtection(), Tags(map[string]string{"team": "orders", "env": "test"})}
}

// TestTableDefinitionIsWhatCreateTableSends: the request body CreateTable sends
// (recorded at the HTTP layer) is the one the SDK writes for CreateTableInput
// with the same edits, and Definition holds that input and the TTL attribute
// CreateTable turns on next.
func TestTableDefinitionIsWhatCreateTableSends(t *testing.T) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &httpRecorder{next: &http.Client{Transport: tr}}
	tbl, err := NewTable(local.Client(t, func(o *dynamodb.Options) { o.HTTPClient = rec }), localtest.TableName(t), indexTableOptions...)
	require.NoError(t, err)
	MustRegister[iOrder](tbl)
	MustRegister[ttlSession](tbl)
	ctx := t.Context()
	require.NoError(t, tbl.CreateTable(ctx, definitionEdits()...))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = tbl.Client().(*dynamodb.Client).UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(tbl.Name()), DeletionProtectionEnabled: aws.Bool(false)})
		_ = tbl.DeleteTable(ctx)
	})

	sent := rec.bodies("CreateTable")
	require.Len(t, sent, 1)
	in, err := tbl.CreateTableInput(definitionEdits()...)
	require.NoError(t, err)
	assert.JSONEq(t, string(wireBody(t, in)), string(sent[0]))
	assert.Contains(t, string(sent[0]), `"StreamViewType":"NEW_IMAGE"`)
	assert.Contains(t, string(sent[0]), `"DeletionProtectionEnabled":true`)

	def, err := tbl.Definition(definitionEdits()...)
	require.NoError(t, err)
	assert.Equal(t, in, def.Input)
	assert.Equal(t, "expiresAt", def.TTLAttribute)
	ttl := rec.bodies("UpdateTimeToLive")
	require.Len(t, ttl, 1, "CreateTable turned TTL on")
	assert.Contains(t, string(ttl[0]), `"AttributeName":"expiresAt"`)
}

// TestTableDefinitionEdits: each edit sets what it says, Provisioned on every
// global index too, and every call returns a new input built from the model.
func TestTableDefinitionEdits(t *testing.T) {
	tbl, err := NewTable(offlineClient{}, "edits", indexTableOptions...)
	require.NoError(t, err)
	tags := map[string]string{"b": "2", "a": "1"}
	edit := Tags(tags)
	tags["c"] = "3" // Tags copied the map

	in, err := tbl.CreateTableInput(StreamView(types.StreamViewTypeKeysOnly), Provisioned(7, 3), DeletionProtection(), edit)
	require.NoError(t, err)
	assert.Equal(t, &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}, in.StreamSpecification)
	assert.Equal(t, types.BillingModeProvisioned, in.BillingMode)
	want := &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(7), WriteCapacityUnits: aws.Int64(3)}
	assert.Equal(t, want, in.ProvisionedThroughput)
	require.Len(t, in.GlobalSecondaryIndexes, 2)
	for _, ix := range in.GlobalSecondaryIndexes {
		assert.Equal(t, want, ix.ProvisionedThroughput, aws.ToString(ix.IndexName))
	}
	assert.True(t, aws.ToBool(in.DeletionProtectionEnabled))
	assert.Equal(t, []types.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b"), Value: aws.String("2")}}, in.Tags)

	in.GlobalSecondaryIndexes[0].IndexName = aws.String("changed")
	again, err := tbl.CreateTableInput()
	require.NoError(t, err)
	assert.Equal(t, "KEYS", aws.ToString(again.GlobalSecondaryIndexes[0].IndexName), "a new input every call")
	assert.Equal(t, types.BillingModePayPerRequest, again.BillingMode)
	assert.Nil(t, again.StreamSpecification)
	assert.Nil(t, again.Tags)

	plain, err := NewTable(offlineClient{}, "plain")
	require.NoError(t, err)
	in, err = plain.CreateTableInput()
	require.NoError(t, err)
	assert.Nil(t, in.GlobalSecondaryIndexes)
	assert.Nil(t, in.LocalSecondaryIndexes)
	def, err := plain.Definition()
	require.NoError(t, err)
	assert.Empty(t, def.TTLAttribute)
}

// TestTableDefinitionRefusesBadEdits: edits that make a request DynamoDB or the
// table would refuse fail CreateTableInput, Definition and CreateTable with
// ErrInvalidInput and a message naming what is wrong; CreateTable sends nothing.
func TestTableDefinitionRefusesBadEdits(t *testing.T) {
	rec := &httpRecorder{}
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:9"), HTTPClient: rec, Retryer: aws.NopRetryer{}, Credentials: aws.AnonymousCredentials{}})
	tbl, err := NewTable(client, "refused", indexTableOptions...)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		edits []func(*dynamodb.CreateTableInput)
		msg   string
	}{
		{"nil edit", []func(*dynamodb.CreateTableInput){DeletionProtection(), nil}, "edit 2 is nil"},
		{"renamed", []func(*dynamodb.CreateTableInput){func(in *dynamodb.CreateTableInput) { in.TableName = aws.String("other") }}, `renamed the table to "other"`},
		{"key changed", []func(*dynamodb.CreateTableInput){func(in *dynamodb.CreateTableInput) { in.KeySchema = tabledef.KeySchema("PK", "") }}, "changed the primary key to PK HASH, but the table's is PK HASH, SK RANGE"},
		{"no capacity", []func(*dynamodb.CreateTableInput){Provisioned(0, 5)}, "the table needs read and write capacity units of at least 1"},
		{"index without capacity", []func(*dynamodb.CreateTableInput){Provisioned(5, 5), func(in *dynamodb.CreateTableInput) { in.GlobalSecondaryIndexes[1].ProvisionedThroughput = nil }}, `index "INCL" needs read and write capacity units`},
		{"default billing without capacity", []func(*dynamodb.CreateTableInput){func(in *dynamodb.CreateTableInput) { in.BillingMode = "" }}, "the table needs read and write capacity"},
		{"capacity on demand", []func(*dynamodb.CreateTableInput){func(in *dynamodb.CreateTableInput) {
			in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}
		}}, "the table has provisioned throughput, but the billing mode is PAY_PER_REQUEST"},
		{"stream without view", []func(*dynamodb.CreateTableInput){StreamView("")}, "without a view type"},
		{"tag twice", []func(*dynamodb.CreateTableInput){Tags(map[string]string{"team": "a"}), Tags(map[string]string{"team": "b"})}, `tag key "team" is empty or repeated`},
		{"empty tag key", []func(*dynamodb.CreateTableInput){Tags(map[string]string{"": "a"})}, `tag key "" is empty or repeated`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tbl.CreateTableInput(tc.edits...)
			require.ErrorIs(t, err, ErrInvalidInput)
			require.ErrorContains(t, err, tc.msg)
			require.ErrorContains(t, err, "singletable: table definition refused: ")
			_, err = tbl.Definition(tc.edits...)
			require.ErrorIs(t, err, ErrInvalidInput)
			require.ErrorIs(t, tbl.CreateTable(t.Context(), tc.edits...), ErrInvalidInput)
			require.Empty(t, rec.bodies("CreateTable"), "nothing is sent")
		})
	}
}
