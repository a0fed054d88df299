package singletable

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// TestReservedKeys: the library's own items (sweep progress here, the leases
// of package stream) live under a prefix no registered entity can render;
// Register refuses entities that could; the sweep store refuses a table whose
// key or type attribute is one of its own attributes.
func TestReservedKeys(t *testing.T) {
	tbl := offlineTable(t)
	type hash struct {
		_  struct{} `Type:"Hash" PK:"#singletable#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err := Register[hash](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "#singletable#")
	type lead struct {
		_  struct{} `Type:"Lead" PK:"#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err = Register[lead](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity, "a template beginning with the delimiter could render the prefix")
	type sneaky struct {
		_  struct{} `Type:"_singletable.Lease" PK:"S#{id}" SK:"X"`
		ID string   `dynamodbav:"id"`
	}
	_, err = Register[sneaky](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	type plain struct {
		_  struct{} `Type:"Plain" PK:"{id}" SK:"{id}"`
		ID string   `dynamodbav:"id"`
	}
	_, err = Register[plain](tbl)
	require.NoError(t, err, "a template beginning with a placeholder cannot render the delimiter first")
	_, err = NewTableStore(offlineTable(t, WithTypeAttribute("pages")))
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestSweepStoreLostAnswers: the table store judges its sweep saves as the
// entity pipeline judges its writes. A save whose answer is lost after
// DynamoDB Local applied it is sent once (the SDK resends no conditional
// write) and counts as done, the progress read back being the one it wrote; a
// 5xx that applied nothing is sent again; saving the same progress again is
// refused (ErrCondition), as before.
func TestSweepStoreLostAnswers(t *testing.T) {
	tbl, inj := faultTable(t)
	ts, err := NewTableStore(tbl)
	require.NoError(t, err)
	ctx := context.Background()
	puts := func() int { return inj.Stats().Requests["PutItem"] }

	p := SweepProgress{Entity: "E", Segment: 0, Total: 2, Cursor: "c1", Pages: 1, Seen: 10}
	inj.Add(fault.Rule{Ops: []string{"PutItem"}, Fault: fault.LoseResponse(), Times: 1})
	before := puts()
	require.NoError(t, ts.SaveSweep(ctx, p), "a save that landed is done")
	assert.Equal(t, before+1, puts(), "sent once")
	got, err := ts.LoadSweep(ctx, "E", 0, 2)
	require.NoError(t, err)
	assert.Equal(t, p, got)

	p.Pages, p.Cursor = 2, "c2"
	inj.Add(fault.Rule{Ops: []string{"PutItem"}, Fault: fault.ServerError(), Times: 1})
	before = puts()
	require.NoError(t, ts.SaveSweep(ctx, p))
	assert.Equal(t, before+2, puts(), "sent again once the item read back showed it had not landed")
	got, err = ts.LoadSweep(ctx, "E", 0, 2)
	require.NoError(t, err)
	assert.Equal(t, p, got)

	require.ErrorIs(t, ts.SaveSweep(ctx, p), ErrCondition, "progress never moves backwards, nor stands still")
	assert.Equal(t, 1, inj.Stats().LostWrites)
}
