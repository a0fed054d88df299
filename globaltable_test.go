package singletable

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/fault"
)

// replicatedConflict is the answer of a global table with multi-Region strong
// consistency to a write while another Region writes the item.
func replicatedConflictFault() fault.Fault {
	return fault.APIError(400, "ReplicatedWriteConflictException",
		"One or more items in this request are being modified by a request in another Region.")
}

// TestReplicatedWriteConflictRetried: a ReplicatedWriteConflictException applied
// nothing, so every write (versioned Put, Update, Create, Delete, Mutate, a batch
// write) is sent again and succeeds once the conflict passes, applied once; when
// it does not pass, the write fails with that error, never as a failed condition,
// a version conflict or an ambiguous outcome.
func TestReplicatedWriteConflictRetried(t *testing.T) {
	tbl, inj := faultTable(t, WithBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 5}))
	counters := MustRegister[vCounter](tbl)
	orders := MustRegister[tOrder](tbl)
	ctx := context.Background()
	writes := []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"}
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})

	c, err := counters.Create(ctx, vCounter{ID: "g"})
	require.NoError(t, err, "Create")
	assert.Equal(t, int64(1), c.Version)
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})
	c, err = counters.Update(ctx, c, Set("n", 1))
	require.NoError(t, err, "Update")
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})
	c.N++
	c, err = counters.Put(ctx, c)
	require.NoError(t, err, "Put")
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})
	c, err = counters.Mutate(ctx, vCounter{ID: "g"}, func(v *vCounter) error { v.N += 10; return nil })
	require.NoError(t, err, "Mutate")
	got, err := counters.Get(ctx, vCounter{ID: "g"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, 12, got.N, "each write applied once")
	assert.Equal(t, int64(4), got.Version)
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})
	left, err := orders.BatchPut(ctx, []tOrder{order("g", 1), order("g", 2)})
	require.NoError(t, err, "BatchPut")
	assert.Empty(t, left)
	inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault(), Times: 2})
	require.NoError(t, orders.Delete(ctx, tOrder{CustomerID: "g", OrderID: "o001"}), "Delete")

	// A conflict that does not pass.
	remove := inj.Add(fault.Rule{Ops: writes, Fault: replicatedConflictFault()})
	defer remove()
	var rc *types.ReplicatedWriteConflictException
	for name, do := range map[string]func() error{
		"Put":    func() error { _, err := counters.Put(ctx, got); return err },
		"Update": func() error { _, err := counters.Update(ctx, got, Set("n", 1)); return err },
		"Create": func() error { _, err := counters.Create(ctx, vCounter{ID: "new"}); return err },
		"Delete": func() error { return counters.Delete(ctx, got) },
		"Mutate": func() error {
			_, err := counters.Mutate(ctx, vCounter{ID: "g"}, func(v *vCounter) error { v.N++; return nil })
			return err
		},
	} {
		err := do()
		require.ErrorAs(t, err, &rc, name)
		assert.NotErrorIs(t, err, ErrConflict, name)
		assert.NotErrorIs(t, err, ErrCondition, name)
		assert.NotErrorIs(t, err, ErrAmbiguous, name)
		assert.NotErrorIs(t, err, ErrAlreadyExists, name)
	}
	_, err = orders.BatchPut(ctx, []tOrder{order("g", 3)})
	require.ErrorAs(t, err, &rc, "BatchPut")
	assert.ErrorIs(t, err, ErrUnprocessed, "a batch write that stays refused is left unprocessed")
	remove()
	got2, err := counters.Get(ctx, vCounter{ID: "g"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, got, got2, "nothing applied")
}

// TestReplicatedWriteConflictWriteBack: a migration's write-back refused with
// ReplicatedWriteConflictException applied nothing, and is sent again like every
// write: on a read (WriteBackSync) and in a Sweep, which counts it migrated, not
// failed (issue 37, scenario 15).
func TestReplicatedWriteConflictWriteBack(t *testing.T) {
	tbl, inj := faultTable(t, WithBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 5}))
	var reported []error
	issues := MustRegister[mIssue](tbl, Migrations(Migration[mIssue]{Steps: issueSteps(nil), OnError: func(err error) { reported = append(reported, err) }}))
	ctx := context.Background()
	putV1(t, tbl, 1)
	putV1(t, tbl, 2)

	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: replicatedConflictFault(), Times: 2})
	_, err := issues.Get(ctx, issueKey(1))
	require.NoError(t, err)
	raw, err := tbl.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: map[string]types.AttributeValue{"PK": sAV("REPO#aws#sdk"), "SK": sAV("ISSUE#00000001")}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, raw.Item["_schema"], "written back after the conflict passed")

	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: replicatedConflictFault(), Times: 2})
	stats, err := issues.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), stats.Migrated, "issue 2")
	assert.Zero(t, stats.Failed)
	assert.Empty(t, reported)
}
