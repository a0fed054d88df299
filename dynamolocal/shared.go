package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Shared is one DynamoDB Local for a whole test binary: started by the first
// test that asks for it, stopped by [Shared.Run] after the last test. Declare
// it as a package-level variable of a _test.go file; its zero value is ready
// to use. It is safe for concurrent use, so parallel tests may share it.
//
// When no DynamoDB Local can be had, every test that asks is skipped with a
// message saying how to get one, except when the environment variable CI is
// true (as strconv.ParseBool reads it): then every such test fails.
type Shared struct {
	// Options are given to [Start] on first use. Set them in the variable's
	// declaration; changing them after the first use has no effect.
	Options []func(*Options)

	mu      sync.Mutex // protects the fields below
	started bool       // Start was called
	closed  bool       // Close was called
	inst    *Instance
	err     error
}

// Run runs the tests with m.Run, then closes the instance if a test started
// it, and returns the exit code for os.Exit. A failure to close turns a
// passing run into exit code 1. A whole TestMain is:
//
//	var local dynamolocal.Shared
//
//	func TestMain(m *testing.M) { os.Exit(local.Run(m)) }
func (s *Shared) Run(m *testing.M) int {
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Get returns the shared instance, starting it on the first call; the
// calls that come meanwhile wait for that start. When none could be started
// Get skips tb (tb.Skipf), or fails it (tb.Fatalf) when CI is true, and the
// start is not tried again.
func (s *Shared) Get(tb testing.TB) *Instance {
	tb.Helper()
	inst, err := s.get()
	if err == nil {
		return inst
	}
	getenv := os.Getenv
	if o, rerr := resolve(s.Options); rerr == nil {
		getenv = o.Getenv
	}
	skipOrFail(tb, getenv, err)
	return nil
}

// skipOrFail fails tb with err when CI is true, else skips it.
func skipOrFail(tb testing.TB, getenv func(string) string, err error) {
	tb.Helper()
	if ci, _ := strconv.ParseBool(getenv("CI")); ci {
		tb.Fatalf("%v\n(CI is true, so a missing DynamoDB Local fails the test instead of skipping it)", err)
		return
	}
	tb.Skipf("skipped, %v", err)
}

// Client is s.Get(tb).Client(optFns...): a new client of the shared
// instance, or tb skipped or failed as Get says.
func (s *Shared) Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	inst := s.Get(tb)
	if inst == nil {
		return nil // only reached when tb is not a *testing.T or *testing.B
	}
	return inst.Client(optFns...)
}

// Close stops the instance if one was started. Get fails after Close.
// Close is idempotent; [Shared.Run] calls it.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.inst.Close()
}

func (s *Shared) get() (*Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("dynamolocal: Shared used after Close")
	}
	if !s.started {
		s.started = true
		s.inst, s.err = Start(context.Background(), s.Options...)
	}
	return s.inst, s.err
}
