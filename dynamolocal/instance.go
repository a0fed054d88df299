package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// ErrUnavailable is wrapped by the error of [Start] when no backend could
// give a DynamoDB Local. The error also says why each backend tried failed.
var ErrUnavailable = errors.New("dynamolocal: no DynamoDB Local available")

// Instance is one DynamoDB Local: found at an endpoint, or started by
// [Start], in which case [Instance.Close] stops it. All methods are safe for
// concurrent use.
//
// DynamoDB Local runs with -inMemory -sharedDb (and -disableTelemetry on 3.x)
// when started here: tables live
// until Close, and every client sees the same tables whatever its region or
// credentials. Give each test its own table ([TableName]).
type Instance struct {
	endpoint string
	backend  string
	version  string // as DynamoDB Local printed it, or the release the jar backend fetched; "" when unknown
	http     *http.Client
	stop     func() error // stops what Start started; nil for BackendEndpoint
	command  []string     // the command line DynamoDB Local runs (java's argv; a container's entrypoint and command as the engine reports them); nil for BackendEndpoint

	closeOnce sync.Once
	closeErr  error // set once by Close
}

// Start finds or starts a DynamoDB Local and waits until it answers
// ListTables. Unless a backend is forced ([Options.Backend]) it tries, in
// order:
//
//  1. BackendEndpoint, when an endpoint is set (AWS_ENDPOINT_URL); an
//     endpoint that does not answer is an error, not a reason to go on;
//  2. BackendTestcontainers, when a Docker API answers within two seconds
//     (DOCKER_HOST, the default sockets, or ~/.testcontainers.properties);
//     if the container does not start, Start logs why and goes on;
//  3. BackendJar, fetching the jar of [Options.Version] when needed (once).
//
// The error wraps [ErrUnavailable] when no backend worked. ctx bounds the
// start only: the instance runs until [Instance.Close], which the caller
// must call.
func Start(ctx context.Context, opts ...func(*Options)) (*Instance, error) {
	o, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	order := plan(o)
	var errs []error
	for _, b := range order {
		began := time.Now()
		inst, err := startBackend(ctx, b, o)
		if err == nil {
			o.Logf("using %s backend at %s: %s (ready in %s)", b, inst.endpoint, inst.describeVersion(), time.Since(began).Round(time.Millisecond))
			if inst.command != nil {
				o.Logf("%s backend runs: %s", b, strings.Join(inst.command, " "))
			}
			return inst, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dynamolocal: start %s: %w", b, err)
		}
		if len(order) > 1 {
			o.Logf("%s backend not used: %v", b, err)
		}
		errs = append(errs, fmt.Errorf("%s: %w", b, err))
	}
	return nil, fmt.Errorf("%w (set AWS_ENDPOINT_URL, start Docker or podman and set DOCKER_HOST, or install Java: the jar is fetched by itself): %w",
		ErrUnavailable, errors.Join(errs...))
}

// plan returns the backends Start tries, in order.
func plan(o Options) []string {
	switch {
	case o.Backend != "":
		return []string{o.Backend}
	case o.Endpoint != "":
		return []string{BackendEndpoint}
	}
	return []string{BackendTestcontainers, BackendJar}
}

func startBackend(ctx context.Context, backend string, o Options) (*Instance, error) {
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	switch backend {
	case BackendEndpoint:
		if o.Endpoint == "" {
			return nil, errors.New("no endpoint: set AWS_ENDPOINT_URL")
		}
		if _, err := url.Parse(o.Endpoint); err != nil {
			return nil, fmt.Errorf("endpoint: %w", err)
		}
		inst := newInstance(o.Endpoint, BackendEndpoint, nil)
		if err := inst.waitReady(ctx, 10*time.Second, nil); err != nil {
			_ = inst.Close()
			return nil, err
		}
		return inst, nil
	case BackendTestcontainers:
		return startContainer(ctx, o)
	case BackendJar:
		return startJar(ctx, o)
	}
	return nil, fmt.Errorf("unknown backend %q", backend)
}

func newInstance(endpoint, backend string, stop func() error) *Instance {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256, // parallel tests share one host: keep their connections
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
	}
	return &Instance{
		endpoint: endpoint,
		backend:  backend,
		http:     &http.Client{Transport: &closableTransport{tr: tr}},
		stop:     stop,
	}
}

// closableTransport fails every request once closed, so that a client used
// after Close neither reaches a stopped instance nor leaves a connection
// (and its two goroutines) behind.
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

func (closedError) Error() string        { return "dynamolocal: instance closed" }
func (closedError) RetryableError() bool { return false }

// Endpoint returns the URL of the DynamoDB Local, such as
// "http://127.0.0.1:41235".
func (i *Instance) Endpoint() string { return i.endpoint }

// Backend returns how the instance was obtained: BackendEndpoint,
// BackendTestcontainers or BackendJar.
func (i *Instance) Backend() string { return i.backend }

// Version returns the DynamoDB Local release of the instance, such as
// "3.3.1": the one it printed at start ("Version: 3.3.1"), or for a jar that
// prints none (1.11.478) the release the jar backend fetched. It is "" when
// unknown: an endpoint found through AWS_ENDPOINT_URL, or an image that
// printed no version.
func (i *Instance) Version() string { return i.version }

// String says which DynamoDB Local this is, for a log line: "DynamoDB Local
// 3.3.1 at http://127.0.0.1:41235 (jar backend)".
func (i *Instance) String() string {
	return fmt.Sprintf("%s at %s (%s backend)", i.describeVersion(), i.endpoint, i.backend)
}

// describeVersion says which release this is, for a log line.
func (i *Instance) describeVersion() string {
	switch {
	case i.version != "":
		return "DynamoDB Local " + i.version
	case i.backend == BackendEndpoint:
		return "DynamoDB Local of unknown version (an endpoint that was not started here)"
	}
	return "DynamoDB Local of unknown version (it printed none)"
}

// Client returns a new DynamoDB client for the instance: region us-east-1,
// static dummy credentials, BaseEndpoint set to [Instance.Endpoint], response
// CRC32 validation off (DynamoDB Local's error responses fail it and the SDK
// would log a warning per error), the SDK's standard retryer, and an HTTP
// client shared by all clients of the instance and closed with it. optFns
// apply last and may change any of this, for example to wrap HTTPClient for
// fault injection. Client makes no request.
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
// as [Instance.Client] sets up DynamoDB clients (DynamoDB Local serves both
// APIs at one endpoint) and sharing their HTTP client, so that Close closes its
// connections too. On AWS it would be dynamodbstreams.NewFromConfig(cfg).
// optFns apply last. StreamsClient makes no request.
func (i *Instance) StreamsClient(optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(i.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:   i.http,
	}, optFns...)
}

// Close stops what Start started (the container is removed, the java
// process killed and waited for) and closes the connections of the clients,
// so no goroutine of this package is left; requests of those clients fail
// from then on. It is idempotent and
// safe to call on a nil *Instance. For BackendEndpoint it stops nothing.
func (i *Instance) Close() error {
	if i == nil {
		return nil
	}
	i.closeOnce.Do(func() {
		if i.stop != nil {
			if err := i.stop(); err != nil {
				i.closeErr = fmt.Errorf("dynamolocal: close %s: %w", i.backend, err)
			}
		}
		i.http.Transport.(*closableTransport).close()
	})
	return i.closeErr
}

// waitReady polls ListTables until it answers, ctx ends, limit passes, or
// exited is closed (the process behind the endpoint is gone).
func (i *Instance) waitReady(ctx context.Context, limit time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := i.Client(func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListTables(attempt, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s does not answer ListTables: %w", i.endpoint, err)
		case <-exited:
			return errors.New("process exited before answering")
		case <-tick.C:
		}
	}
}
