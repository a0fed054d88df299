package singletable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/explain"
	"github.com/singletable/singletable/internal/wrap"
)

// Differences of old DynamoDB Local releases that a user meets as a bare
// ValidationException, turned into an error that names the cause.

// What DynamoDB Local 1.x releases from before the service accepted empty
// non-key strings (2020), such as 1.11.478, answer to an item holding one, or
// holding a string set with an empty member. Today's service and DynamoDB Local
// 3.x store both, and refuse an empty key attribute with other words.
const (
	oldEmptyString    = "An AttributeValue may not contain an empty string"
	oldEmptySetMember = "may not have a empty string as a member"
)

// oldLocalError is a ValidationException that an old DynamoDB Local gives
// where DynamoDB accepts the request; its message says so. It unwraps to the
// SDK's error, so errors.As finds the ValidationException.
type oldLocalError struct{ err error }

func (e *oldLocalError) Error() string {
	return e.err.Error() + " (this endpoint is an old DynamoDB Local release, such as 1.11.478, that refuses empty strings; " +
		"DynamoDB has accepted them in non-key attributes and string sets since 2020: run a current DynamoDB Local (3.x), " +
		"or tag the field omitempty)"
}

func (e *oldLocalError) Unwrap() error { return e.err }

// hintOldLocal returns err with the hint above when it is the old release's
// refusal of an empty string, and err itself otherwise.
func hintOldLocal(err error) error {
	var api smithy.APIError
	if err != nil && errors.As(err, &api) && api.ErrorCode() == "ValidationException" &&
		(strings.Contains(api.ErrorMessage(), oldEmptyString) || strings.Contains(api.ErrorMessage(), oldEmptySetMember)) {
		return &oldLocalError{err: err}
	}
	return err
}

// sendItem sends one call of the table's client (internal/wrap runs every call
// through it, NewTable): a call made under Explain is recorded and answered as
// an empty table would (explain.go), not sent; any other is sent, and its error
// hinted (hintOldLocal). It runs below any observer, so that observers see the
// hinted error too. Two rules of every call live here, so that no path misses
// them: a call whose context has ended is not sent (a client that ignores the
// context would otherwise page on forever; the error matches the context's
// cause), and a client that answers neither an output nor an error gets an
// error naming the call (a write is then judged as after a lost answer).
func (t *Table) sendItem(ctx context.Context, api string, in any, f []func(*dynamodb.Options), send wrap.Send) (any, error) {
	if t.recordExplained(ctx, api, in) {
		return explain.Answer(api, in), nil
	}
	out, err := sendChecked(ctx, api, t.user, in, f, send)
	return out, t.hintMissingTable(api, err)
}

// missingTableError is a call's ResourceNotFoundException: the table does not
// exist at the client's endpoint and region. Its message names the table and
// how to make it; it unwraps to the SDK's error, so errors.As still finds the
// *types.ResourceNotFoundException.
type missingTableError struct {
	table, api string
	err        error
}

func (e *missingTableError) Error() string {
	return "singletable: table " + strconv.Quote(e.table) + " does not exist at this endpoint (" + e.api +
		" answered ResourceNotFoundException): create it with Table.CreateTable (or make it with your infrastructure: Table.Definition): " +
		e.err.Error()
}

func (e *missingTableError) Unwrap() error { return e.err }

// hintMissingTable returns err as a missingTableError when it is a
// ResourceNotFoundException, and err itself otherwise. DescribeTable and
// DeleteTable are left as they are: a missing table is their answer, not a
// mistake.
func (t *Table) hintMissingTable(api string, err error) error {
	var rnf *types.ResourceNotFoundException
	if err == nil || api == "DescribeTable" || api == "DeleteTable" || !errors.As(err, &rnf) {
		return err
	}
	return &missingTableError{table: t.name, api: api, err: err}
}

// sendChecked sends one call of client c, refusing it when ctx has ended and
// turning an answer of neither output nor error into an error (sendItem).
func sendChecked(ctx context.Context, api string, c any, in any, f []func(*dynamodb.Options), send wrap.Send) (any, error) {
	if ctx.Err() != nil {
		return nil, &condwrite.NotSentError{API: api, Err: context.Cause(ctx)}
	}
	out, err := send(ctx, in, f)
	if err == nil && wrap.NilOutput(out) {
		return nil, &condwrite.NoOutputError{API: api, Client: fmt.Sprintf("%T", c)}
	}
	return out, hintOldLocal(err)
}

// sendTable sends one table management call (tableCalls) under sendItem's rules.
func (t *Table) sendTable(ctx context.Context, api string, in any, f []func(*dynamodb.Options), send wrap.Send) (any, error) {
	out, err := sendChecked(ctx, api, t.user, in, f, send)
	return out, t.hintMissingTable(api, err)
}
