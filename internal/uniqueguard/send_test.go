package uniqueguard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errCondition = errors.New("condition")

// fakeRun plays a guarded write: each Send answers the next of answers (nil
// after them), and records the calls.
type fakeRun struct {
	answers []error
	landed  bool
	again   bool // Failed's verdict
	failErr error
	calls   []string
	token   int
}

func (f *fakeRun) log(s string) { f.calls = append(f.calls, s) }

func (f *fakeRun) Prepare(context.Context) error {
	f.log("prepare")
	return f.NewToken()
}

func (f *fakeRun) Send(context.Context) error {
	f.log(fmt.Sprint("send@", f.token))
	if len(f.answers) == 0 {
		return nil
	}
	err := f.answers[0]
	f.answers = f.answers[1:]
	return err
}

func (f *fakeRun) NewToken() error { f.token++; return nil }

func (f *fakeRun) Landed(context.Context) bool { f.log("landed?"); return f.landed }

func (f *fakeRun) Done(context.Context) (map[string]types.AttributeValue, error) {
	f.log("done")
	return map[string]types.AttributeValue{}, nil
}

func (f *fakeRun) Failed(context.Context, *types.TransactionCanceledException, error) (bool, error) {
	f.log("failed")
	return f.again, f.failErr
}

func (f *fakeRun) Refused(err error) error { return fmt.Errorf("refused: %w", err) }

func (f *fakeRun) NotApplied(err error) error { return fmt.Errorf("item: %w", err) }

func (f *fakeRun) Unproven(err error, why string) error {
	return fmt.Errorf("unproven: %s: %w: %w", why, errAmbiguous, err)
}

func policy(max int, wait error) Policy {
	return Policy{MaxAttempts: max, Wait: func(context.Context, int) error { return wait }, Lost: isLost, Conflicts: onlyConflicts,
		GaveUp: func(n int, conflicts bool, err error) error {
			if conflicts {
				return fmt.Errorf("item: not applied after %d attempts: conflicts: %w", n, err)
			}
			return fmt.Errorf("item: not applied after %d attempts: the unique values stored kept changing: %w: %w", n, errCondition, err)
		}}
}

func calls(f *fakeRun) string { return strings.Join(f.calls, " ") }

// TestSend: each of a guarded write's outcomes, and the token each attempt is
// sent under.
func TestSend(t *testing.T) {
	ctx := context.Background()
	conflict, condFailed := cancelled("TransactionConflict", "None"), cancelled("ConditionalCheckFailed", "None")

	f := &fakeRun{}
	out, err := Send(ctx, f, policy(5, nil))
	require.NoError(t, err)
	assert.NotNil(t, out)
	assert.Equal(t, "prepare send@1 done", calls(f))

	f = &fakeRun{answers: []error{conflict}}
	_, err = Send(ctx, f, policy(5, nil))
	require.NoError(t, err)
	assert.Equal(t, "prepare send@1 send@2 done", calls(f), "conflicts alone: a new token")

	f = &fakeRun{answers: []error{errLost, conflict}}
	_, err = Send(ctx, f, policy(5, nil))
	require.NoError(t, err)
	assert.Equal(t, "prepare send@1 send@1 landed? send@1 done", calls(f), "after a lost answer: the same token; a cancellation judged by the item first")

	f = &fakeRun{answers: []error{errLost, condFailed}, landed: true}
	_, err = Send(ctx, f, policy(5, nil))
	require.NoError(t, err)
	assert.Equal(t, "prepare send@1 send@1 landed? done", calls(f))

	f = &fakeRun{answers: []error{condFailed, condFailed}, again: true}
	_, err = Send(ctx, f, policy(2, nil))
	assert.ErrorIs(t, err, errCondition)
	assert.Equal(t, "item: not applied after 2 attempts: the unique values stored kept changing: condition: TransactionCanceledException: ", err.Error())
	assert.Equal(t, "prepare send@1 failed prepare send@2 failed", calls(f), "planned again under a new token")

	refused := errors.New("not unique")
	f = &fakeRun{answers: []error{condFailed}, failErr: refused}
	_, err = Send(ctx, f, policy(5, nil))
	assert.Same(t, refused, err)

	f = &fakeRun{answers: []error{condFailed}}
	_, err = Send(ctx, f, policy(5, nil))
	assert.ErrorIs(t, err, errCondition, "not to plan again: not applied")

	f = &fakeRun{answers: []error{errLost, errLost}, landed: true}
	_, err = Send(ctx, f, policy(2, nil))
	require.NoError(t, err)
	assert.Equal(t, "prepare send@1 send@1 landed? done", calls(f))

	f = &fakeRun{answers: []error{errLost, errLost}}
	_, err = Send(ctx, f, policy(2, nil))
	assert.ErrorIs(t, err, errAmbiguous)
	assert.ErrorContains(t, err, "the transaction's answer was lost, and the item read back does not prove it landed")

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	f = &fakeRun{answers: []error{errLost}, landed: true}
	_, err = Send(stopped, f, policy(5, nil))
	assert.ErrorIs(t, err, errAmbiguous)
	assert.ErrorContains(t, err, "the context ended before the transaction could be sent again or the item read back")
	assert.Equal(t, "prepare send@1", calls(f), "no read back without a context")

	f = &fakeRun{answers: []error{conflict}}
	_, err = Send(ctx, f, policy(5, errors.New("deadline")))
	assert.EqualError(t, err, "item: not applied: TransactionCanceledException: : deadline")

	f = &fakeRun{answers: []error{conflict, conflict}}
	_, err = Send(ctx, f, policy(2, nil))
	assert.EqualError(t, err, "item: not applied after 2 attempts: conflicts: TransactionCanceledException: ")
	assert.Equal(t, "prepare send@1 send@2", calls(f), "conflicts to the last attempt: given up, not judged as a failure")

	f = &fakeRun{answers: []error{errors.New("AccessDenied")}}
	_, err = Send(ctx, f, policy(5, nil))
	assert.EqualError(t, err, "refused: AccessDenied")

	f = &fakeRun{answers: []error{&types.TransactionInProgressException{}}, landed: false}
	_, err = Send(ctx, f, policy(5, nil))
	require.NoError(t, err)
	assert.Equal(t, "prepare send@1 send@1 done", calls(f), "in progress: the same token again")
}
