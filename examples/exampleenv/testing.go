package exampleenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"go.uber.org/goleak"
)

// TB is the part of testing.TB that this package uses.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Shared is the DynamoDB Local of an example's test binary, reached through
// the SDK's configuration ([LoadConfig]) on the first test that asks, with
// connections closed by [Shared.Run] after the last. Its zero value is ready;
// it is safe for concurrent use. When the environment names no DynamoDB Local,
// or it does not answer, every test that asks is skipped with a message that
// says how to get one, except when CI is true: then it fails.
//
//	var local exampleenv.Shared
//
//	func TestMain(m *testing.M) { os.Exit(local.Run(m)) }
type Shared struct {
	mu     sync.Mutex // protects the fields below
	opened bool
	closed bool
	inst   *Instance
	err    error
}

// Instance is the DynamoDB Local a [Shared] reached: its clients share one
// HTTP client, closed with it.
type Instance struct {
	cfg aws.Config
	tr  *http.Transport
}

// Run runs the tests (m is a *testing.M), closes the connections, and returns
// the exit code for os.Exit: 1 when the tests passed but left a goroutine
// behind (go.uber.org/goleak).
func (s *Shared) Run(m interface{ Run() int }) int {
	code := m.Run()
	s.mu.Lock()
	s.closed = true
	if s.inst != nil {
		s.inst.tr.CloseIdleConnections()
	}
	s.mu.Unlock()
	if code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		return 1
	}
	return 0
}

// Get returns the instance, reaching it on the first call; tb is skipped, or
// failed under CI=true, when there is none.
func (s *Shared) Get(tb TB) *Instance {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		tb.Fatalf("exampleenv: Shared used after Run")
		return nil
	}
	if !s.opened {
		s.opened = true
		s.inst, s.err = open()
		if s.err == nil {
			tb.Logf("DynamoDB Local at %s", Endpoint())
		}
	}
	if s.err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			tb.Fatalf("%v\n(CI is true, so a missing DynamoDB Local fails the test instead of skipping it)", s.err)
			return nil
		}
		tb.Skipf("skipped: %v", s.err)
		return nil
	}
	return s.inst
}

// Client is s.Get(tb).Client(optFns...).
func (s *Shared) Client(tb TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	if inst := s.Get(tb); inst != nil {
		return inst.Client(optFns...)
	}
	return nil
}

// StreamsClient is s.Get(tb).StreamsClient(optFns...).
func (s *Shared) StreamsClient(tb TB, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	tb.Helper()
	if inst := s.Get(tb); inst != nil {
		return inst.StreamsClient(optFns...)
	}
	return nil
}

// Client returns a new DynamoDB client of the instance:
// dynamodb.NewFromConfig of its configuration, with the response checksum
// check off (DynamoDB Local sends no X-Amz-Crc32 with an error, and the SDK
// would log a warning for each: aws/aws-sdk-go-v2#3545). optFns apply last.
func (i *Instance) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	noChecksum := func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true }
	return dynamodb.NewFromConfig(i.cfg, append([]func(*dynamodb.Options){noChecksum}, optFns...)...)
}

// StreamsClient returns a new DynamoDB Streams client of the instance.
func (i *Instance) StreamsClient(optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(i.cfg, optFns...)
}

// open loads the configuration, gives its clients an HTTP transport of their
// own (the SDK's, with its TLS settings, so that Run can close its
// connections), and waits up to 10 seconds for ListTables to answer.
func open() (*Instance, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := LoadConfig(ctx)
	if err != nil {
		return nil, err
	}
	bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		bc = awshttp.NewBuildableClient()
	}
	tr := bc.GetTransport()
	tr.MaxIdleConnsPerHost = 64 // parallel tests share one host
	cfg.HTTPClient = &http.Client{Transport: tr}
	inst := &Instance{cfg: cfg, tr: tr}
	for {
		_, err := inst.Client().ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		if err == nil {
			return inst, nil
		}
		select {
		case <-ctx.Done():
			tr.CloseIdleConnections()
			return nil, fmt.Errorf("the DynamoDB Local at %s does not answer: %w. %s", Endpoint(), err, HowTo)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TableName returns a table name unique to this call, made from tb.Name()
// and a random suffix: "TestOrders.by_status-5f0c2a91". It is a valid
// DynamoDB table name (3 to 255 characters of [a-zA-Z0-9_.-]): "/" between
// subtests becomes ".", any other character outside that set becomes "_",
// and a long test name is cut to 200 characters. It creates nothing.
func TableName(tb interface{ Name() string }) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		case r == '/':
			return '.'
		}
		return '_'
	}, tb.Name())
	if name == "" {
		name = "test"
	}
	return fmt.Sprintf("%s-%08x", name[:min(len(name), 200)], rand.Uint32())
}

// DeleteAtCleanup deletes table when the test ends.
func DeleteAtCleanup(tb interface {
	Cleanup(func())
	Errorf(format string, args ...any)
}, table interface{ DeleteTable(context.Context) error }) {
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := table.DeleteTable(ctx); err != nil {
			tb.Errorf("delete table: %v", err)
		}
	})
}
