package localtest

import (
	"context"
	"time"
)

// DeleteAtCleanup deletes a test's table when the test ends (tb.Cleanup),
// with 30 s to do it, and fails the test if it cannot. Call it right after
// creating the table. (The examples' tests have their own,
// exampleenv.DeleteAtCleanup: this package stays free of the SDK's config
// module, which exampleenv needs.)
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
