package uniqueguard

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/expr"
)

var (
	errLost      = errors.New("lost")
	errAmbiguous = errors.New("ambiguous")
)

func isLost(err error) bool { return errors.Is(err, errLost) }

func onlyConflicts(tce *types.TransactionCanceledException) bool {
	for _, r := range tce.CancellationReasons {
		if c := aws.ToString(r.Code); c != "None" && c != "TransactionConflict" {
			return false
		}
	}
	return true
}

func cancelled(codes ...string) error {
	tce := &types.TransactionCanceledException{}
	for _, c := range codes {
		tce.CancellationReasons = append(tce.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
	}
	return tce
}

// TestRepair: sent again after lost answers and conflicts; a failed condition
// is not landed; an answer lost to the end is ambiguous.
func TestRepair(t *testing.T) {
	noWait := func(context.Context, int) error { return nil }
	run := func(max int, errs ...error) (bool, int, error) {
		n := 0
		landed, err := Repair(context.Background(), func() error {
			n++
			if n <= len(errs) {
				return errs[n-1]
			}
			return nil
		}, max, noWait, isLost, onlyConflicts, errAmbiguous)
		return landed, n, err
	}
	landed, n, err := run(5, errLost, cancelled("TransactionConflict", "None"))
	assert.True(t, landed)
	assert.NoError(t, err)
	assert.Equal(t, 3, n)

	landed, n, err = run(5, cancelled("ConditionalCheckFailed", "None"))
	assert.False(t, landed)
	assert.NoError(t, err)
	assert.Equal(t, 1, n)

	landed, n, err = run(2, errLost, errLost)
	assert.False(t, landed)
	assert.ErrorIs(t, err, errAmbiguous)
	assert.EqualError(t, err, "repair: ambiguous: lost")
	assert.Equal(t, 2, n)

	_, n, err = run(2, cancelled("TransactionConflict"), cancelled("TransactionConflict"))
	assert.EqualError(t, err, "repair: TransactionCanceledException: ")
	assert.Equal(t, 2, n)

	_, _, err = run(5, errors.New("denied"))
	assert.EqualError(t, err, "repair: denied")

	stop := errors.New("stop")
	_, err = Repair(context.Background(), func() error { return errLost }, 5, func(context.Context, int) error { return stop }, isLost, onlyConflicts, errAmbiguous)
	assert.EqualError(t, err, "repair: ambiguous: lost", "the wait ended: the answer stays lost")
}

// TestScanFilter: a sweep reads the entity's items and its guards.
func TestScanFilter(t *testing.T) {
	var b expr.Builder
	assert.Equal(t, "(#n0 = :v0 AND #n1 = :v1) OR #n0 = :v2", ScanFilter(&b, "_type", "User"))
	assert.Equal(t, map[string]string{"#n0": "_type", "#n1": OwnerType}, b.Names())
	assert.Equal(t, s(Type), b.Values()[":v0"])
}

// TestHolderFreed: the owner a guard names; a Delete's guards freed or not.
func TestHolderFreed(t *testing.T) {
	attrs := []string{"pk", "sk"}
	k, ok := Holder(attrs, item{Owner: s(`["U#1","P"]`)})
	assert.True(t, ok)
	assert.Equal(t, item{"pk": s("U#1"), "sk": s("P")}, k)
	_, ok = Holder(attrs, nil)
	assert.False(t, ok)
	_, ok = Holder(attrs, item{Owner: s(`["U#1"]`)})
	assert.False(t, ok, "a key of other parts")

	w := &Write{Guards: []Guard{{Key: item{"pk": s("a")}}, {Key: item{"pk": s("b")}, Claim: true}}}
	me := `["U#1"]`
	reads := 0
	read := func(held item, err error) func(map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
		return func(k map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
			reads++
			require.Equal(t, s("a"), k["pk"], "only the frees are read")
			return held, err
		}
	}
	assert.True(t, w.Freed(me, read(nil, nil)), "gone")
	assert.True(t, w.Freed(me, read(item{Owner: s(`["U#2"]`)}, nil)), "another's")
	assert.False(t, w.Freed(me, read(item{Owner: s(me)}, nil)), "still mine")
	assert.False(t, w.Freed(me, read(nil, errors.New("x"))), "unknown")
	assert.Equal(t, 4, reads)
}
