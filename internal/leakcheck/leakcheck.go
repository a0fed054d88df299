// Package leakcheck is the goroutine leak check every test binary of the module
// runs from its TestMain, after its tests and after DynamoDB Local's clients
// are closed.
package leakcheck

import (
	"fmt"
	"os"

	"go.uber.org/goleak"
)

// After returns code (a test run's exit code), or 1 when the run passed but left
// a goroutine behind: a client connection, a fan-out worker, an asynchronous
// write-back, a railroad or stream consumer that a test forgot to close, or one
// that the library failed to stop. ignore are goleak options for goroutines
// that are not leaks; the root module's tests pass none. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }
func After(code int, ignore ...goleak.Option) int {
	if code != 0 {
		return code
	}
	if err := goleak.Find(ignore...); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		return 1
	}
	return 0
}
