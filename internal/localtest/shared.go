package localtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// TB is the part of testing.TB this package uses; *testing.T and *testing.B
// have it. (The package does not import testing, so that the examples, which
// use [Open], do not link it.)
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Shared is the DynamoDB Local of a whole test binary: opened by the first
// test that asks for it, its connections closed by [Shared.Run] after the last
// test. Declare it as a package-level variable of a _test.go file; its zero
// value is ready to use. It is safe for concurrent use, so parallel tests may
// share it.
//
// When AWS_ENDPOINT_URL is not set or does not answer, every test that asks
// is skipped with a message saying how to get one, except when the environment
// variable CI is true (as strconv.ParseBool reads it): then every such test
// fails.
type Shared struct {
	// Getenv reads the environment. Default: os.Getenv. Set it in the
	// variable's declaration; changing it after the first use has no effect.
	Getenv func(string) string

	mu     sync.Mutex // protects the fields below
	opened bool       // Open was called
	closed bool       // Close was called
	logged bool       // a test logged which DynamoDB Local it is
	inst   *Instance
	err    error
}

// Run runs the tests with m.Run (m is a *testing.M), then closes the
// instance's connections, and returns the exit code for os.Exit. A whole
// TestMain is:
//
//	var local localtest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }
func (s *Shared) Run(m interface{ Run() int }) int {
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Get returns the instance, opening it on the first call (the calls that come
// meanwhile wait). The first test that gets it logs which DynamoDB Local it is
// ([Instance.Describe]). When there is none, Get skips tb (tb.Skipf), or fails
// it (tb.Fatalf) when CI is true, and the open is not tried again.
func (s *Shared) Get(tb TB) *Instance {
	tb.Helper()
	inst, first, err := s.get()
	if err != nil {
		SkipOrFail(tb, s.getenv(), err)
		return nil
	}
	if first {
		tb.Logf("%s", inst.Describe())
	}
	return inst
}

// Client is s.Get(tb).Client(optFns...): a new DynamoDB client of the shared
// instance, or tb skipped or failed as Get says.
func (s *Shared) Client(tb TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	inst := s.Get(tb)
	if inst == nil {
		return nil // only reached when tb's Skipf and Fatalf return
	}
	return inst.Client(optFns...)
}

// StreamsClient is s.Get(tb).StreamsClient(optFns...): a new DynamoDB Streams
// client of the shared instance, or tb skipped or failed as Get says.
func (s *Shared) StreamsClient(tb TB, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	tb.Helper()
	inst := s.Get(tb)
	if inst == nil {
		return nil
	}
	return inst.StreamsClient(optFns...)
}

// Close closes the connections of the instance's clients. Get fails after
// Close. Close is idempotent; [Shared.Run] calls it.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.inst.Close()
}

func (s *Shared) getenv() func(string) string {
	if s.Getenv != nil {
		return s.Getenv
	}
	return os.Getenv
}

// get returns the instance, and whether this is the first call that got it.
func (s *Shared) get() (*Instance, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, errors.New("localtest: Shared used after Close")
	}
	if !s.opened {
		s.opened = true
		s.inst, s.err = Open(context.Background(), s.getenv())
	}
	first := s.err == nil && !s.logged
	s.logged = true
	return s.inst, first, s.err
}

// SkipOrFail fails tb with err when the environment variable CI is true, and
// skips it otherwise. getenv nil means os.Getenv.
func SkipOrFail(tb TB, getenv func(string) string, err error) {
	tb.Helper()
	if getenv == nil {
		getenv = os.Getenv
	}
	if ci, _ := strconv.ParseBool(getenv("CI")); ci {
		tb.Fatalf("%v\n(CI is true, so a missing DynamoDB Local fails the test instead of skipping it)", err)
		return
	}
	tb.Skipf("skipped: %v", err)
}
