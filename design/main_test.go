package design_test

import (
	"os"
	"testing"

	"github.com/singletable/singletable/internal/leakcheck"
	"github.com/singletable/singletable/internal/localtest"
)

// local is the one DynamoDB Local of this test binary, started on first use by
// the round-trip tests; the rendering tests need none.
var local localtest.Shared

// TestMain runs the tests, stops DynamoDB Local, then fails the run if any
// goroutine is left behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }
