package localtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"time"
)

// ExampleTimeout bounds the run of an example started by [RunExample].
const ExampleTimeout = 5 * time.Minute

// RunExample is the setup every example's main shares: it opens the DynamoDB
// Local at AWS_ENDPOINT_URL (the error says how to get one when it is not
// set), names a table of the example's own, "singletable-NAME-xxxxxxxx", and
// calls body with a context that ends on Ctrl-C or after [ExampleTimeout]. It
// closes the instance's connections when body returns. On AWS, an example
// would make its clients with dynamodb.NewFromConfig(cfg) (and
// dynamodbstreams.NewFromConfig(cfg)) instead.
func RunExample(name string, body func(ctx context.Context, local *Instance, tableName string) error) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, ExampleTimeout)
	defer cancel()

	local, err := Open(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, local.Close()) }()
	return body(ctx, local, fmt.Sprintf("singletable-%s-%08x", name, rand.Uint32()))
}

// DeleteExampleTable deletes an example's table when the example ends (defer
// it right after creating the table), even when ctx has ended: it joins the
// failure into *errp, or prints "deleted table NAME" to out after an empty
// line.
func DeleteExampleTable(ctx context.Context, table interface{ DeleteTable(context.Context) error }, tableName string, out io.Writer, errp *error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := table.DeleteTable(ctx); err != nil {
		*errp = errors.Join(*errp, err)
		return
	}
	fmt.Fprintf(out, "\ndeleted table %s\n", tableName)
}

// DeleteAtCleanup deletes a test's table when the test ends (tb.Cleanup),
// with 30 s to do it, and fails the test if it cannot. Call it right after
// creating the table.
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
