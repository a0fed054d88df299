package localtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// ErrNoEndpoint is wrapped by the error of [Open] when no endpoint is set
// ([EndpointFrom]). The error says how to get a DynamoDB Local.
var ErrNoEndpoint = errors.New("localtest: no DynamoDB Local: AWS_ENDPOINT_URL is not set")

// HowTo says how to get a DynamoDB Local for the tests and examples of this
// module. It ends the error of [Open] and the skip message of [Shared.Get].
const HowTo = "`make test` and `make examples` start one for the tests and the examples; " +
	"or start one with `make dynamodb-local-serve` (port 8000; or `go -C dynamolocal run ./cmd/dynamodb-local serve -port 8000`) " +
	"and run the export line it prints (AWS_ENDPOINT_URL=http://127.0.0.1:8000 and a region and keys); " +
	"or run any command with one: `go -C dynamolocal run ./cmd/dynamodb-local run -dir .. -- go test ./...`"

// Environment variables read by this package; see the package documentation.
// The endpoint is the SDK's own variable, as config.LoadDefaultConfig reads it:
// EnvEndpointDynamoDB, else EnvEndpoint; EnvEndpointOld is the name the
// harness used before, still read last.
const (
	EnvEndpointDynamoDB = "AWS_ENDPOINT_URL_DYNAMODB"
	EnvEndpoint         = "AWS_ENDPOINT_URL"
	EnvEndpointOld      = "DYNAMODB_ENDPOINT"
	EnvVersion          = "DYNAMODB_LOCAL_VERSION"
	EnvStarted          = "DYNAMODB_LOCAL_STARTED"
	EnvJarDir           = "DYNAMODB_LOCAL_DIR"
)

// Instance is the DynamoDB Local at AWS_ENDPOINT_URL ([EndpointFrom]). It hands out SDK
// clients whose connections [Instance.Close] closes. All methods are safe for
// concurrent use.
type Instance struct {
	endpoint string
	version  string // "" when unknown
	started  string // backend that `dynamodb-local run` used; "" when it did not start this one
	http     *http.Client

	closeOnce sync.Once
}

// Open returns the DynamoDB Local at the endpoint of the environment
// ([EndpointFrom]) once it has answered ListTables (within 10 seconds, or
// ctx's end). getenv reads the environment; nil means os.Getenv. Without an
// endpoint the error wraps
// [ErrNoEndpoint] and says how to get one. The caller must Close the
// instance: that closes the connections of its clients, and stops nothing.
func Open(ctx context.Context, getenv func(string) string) (*Instance, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	endpoint, name := EndpointFrom(getenv)
	if endpoint == "" {
		return nil, fmt.Errorf("%w. %s", ErrNoEndpoint, HowTo)
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	inst := newInstance(endpoint)
	if started := strings.TrimSpace(getenv(EnvStarted)); started != "" {
		inst.started = started
		inst.version = strings.TrimSpace(getenv(EnvVersion))
	}
	if err := inst.waitReady(ctx, 10*time.Second); err != nil {
		_ = inst.Close()
		return nil, fmt.Errorf("localtest: %s=%s: %w", name, endpoint, err)
	}
	return inst, nil
}

// EndpointFrom returns the DynamoDB endpoint the environment names, as the
// SDK's configuration reads it (AWS_ENDPOINT_URL_DYNAMODB, else
// AWS_ENDPOINT_URL), else DYNAMODB_ENDPOINT, with the variable it came from;
// "" when none is set.
func EndpointFrom(getenv func(string) string) (endpoint, name string) {
	for _, name := range []string{EnvEndpointDynamoDB, EnvEndpoint, EnvEndpointOld} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name
		}
	}
	return "", ""
}

func newInstance(endpoint string) *Instance {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256, // parallel tests share one host: keep their connections
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
	}
	return &Instance{endpoint: endpoint, http: &http.Client{Transport: &closableTransport{tr: tr}}}
}

// Endpoint returns the URL of the DynamoDB Local, such as
// "http://127.0.0.1:41235".
func (i *Instance) Endpoint() string { return i.endpoint }

// Version returns the DynamoDB Local release as `dynamodb-local run`
// reported it ("3.3.1"), or "" when unknown: an endpoint that the harness did
// not start, or a release that does not print its version.
func (i *Instance) Version() string { return i.version }

// Describe says in one line which DynamoDB Local this is, for a test's log.
func (i *Instance) Describe() string {
	switch {
	case i.started == "":
		return fmt.Sprintf("DynamoDB Local at %s: an endpoint this run did not start, version unknown", i.endpoint)
	case i.version == "":
		return fmt.Sprintf("DynamoDB Local at %s, started by dynamodb-local run (%s backend), version unknown (it printed none)", i.endpoint, i.started)
	}
	return fmt.Sprintf("DynamoDB Local %s at %s, started by dynamodb-local run (%s backend)", i.version, i.endpoint, i.started)
}

// Client returns a new DynamoDB client for the instance: region us-east-1,
// static dummy credentials, BaseEndpoint set to [Instance.Endpoint], response
// CRC32 validation off (DynamoDB Local's error responses can fail it, and the
// SDK would log a warning per error), the SDK's standard retryer, and an HTTP
// client shared by all clients of the instance and closed with it. optFns apply
// last and may change any of this. Client makes no request.
func (i *Instance) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(i.endpoint),
		Credentials:                     credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:                      i.http,
		DisableValidateResponseChecksum: true,
	}, optFns...)
}

// StreamsClient returns a new DynamoDB Streams client for the instance, set up
// as [Instance.Client] sets up DynamoDB clients (DynamoDB Local serves both APIs
// at one endpoint), sharing their HTTP client. optFns apply last. It makes no
// request.
func (i *Instance) StreamsClient(optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(i.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:   i.http,
	}, optFns...)
}

// Close closes the connections of the instance's clients, so that none of
// their goroutines is left; their requests fail from then on. It stops no
// DynamoDB Local. It is idempotent and safe to call on a nil *Instance.
func (i *Instance) Close() error {
	if i == nil {
		return nil
	}
	i.closeOnce.Do(func() { i.http.Transport.(*closableTransport).close() })
	return nil
}

// waitReady polls ListTables until it answers, ctx ends or limit passes.
func (i *Instance) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := i.Client(func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListTables(attempt, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("does not answer ListTables: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// closableTransport fails every request once closed, so that a client used
// after Close leaves no connection (and its two goroutines) behind.
type closableTransport struct {
	tr     *http.Transport
	closed atomic.Bool
}

func (c *closableTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.closed.Load() {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errClosed
	}
	return c.tr.RoundTrip(req)
}

func (c *closableTransport) close() {
	c.closed.Store(true)
	c.tr.CloseIdleConnections()
}

// errClosed is what requests get after Close. The SDK's retryer does not
// retry it.
var errClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string        { return "localtest: instance closed" }
func (closedError) RetryableError() bool { return false }
