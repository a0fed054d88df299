package singletable

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZeroConditionRefused (issue 30, scenario 13): a zero
// expression.ConditionBuilder given to If (Put, Create, Update, Delete and their
// transaction actions), to Filter (queries, scans, counts) or to TxCheck is
// refused before anything is sent, with an error that names the call and
// matches ErrInvalidInput; it is never taken for "no condition". Code that builds
// a guard only sometimes cannot lose it without a word.
func TestZeroConditionRefused(t *testing.T) {
	tbl, client := newTestTable(t)
	things := MustRegister[biThing](tbl)
	ctx := context.Background()
	stored, err := things.Put(ctx, goodThing("kept"))
	require.NoError(t, err)
	var zero expression.ConditionBuilder // a guard built only sometimes

	v := goodThing("kept")
	v.Kind = "k"
	calls := []struct {
		call string
		run  func() error
	}{
		{"Put", func() error { _, err := things.Put(ctx, v, If(zero)); return err }},
		{"Create", func() error { _, err := things.Create(ctx, goodThing("new"), If(zero)); return err }},
		{"Update", func() error { _, err := things.Update(ctx, v, Set("score", 2.5), If(zero)); return err }},
		{"Delete", func() error { return things.Delete(ctx, v, If(zero)) }},
		{"TxPut", func() error { return tbl.Transact(ctx, things.TxPut(v, If(zero))) }},
		{"TxCreate", func() error { return tbl.Transact(ctx, things.TxCreate(goodThing("new"), If(zero))) }},
		{"TxUpdate", func() error { return tbl.Transact(ctx, things.TxUpdate(v, Set("score", 2.5), If(zero))) }},
		{"TxDelete", func() error { return tbl.Transact(ctx, things.TxDelete(v, If(zero))) }},
		{"TxCheck", func() error { return tbl.Transact(ctx, things.TxCheck(v, zero)) }},
		{"Query", func() error { _, err := things.Query(ctx, v, Filter(zero)); return err }},
		{"Count", func() error { _, err := things.Count(ctx, v, Filter(zero)); return err }},
		{"Scan", func() error { _, err := things.Scan(ctx, Filter(zero)); return err }},
		{"ScanCount", func() error { _, err := things.ScanCount(ctx, Filter(zero)); return err }},
		{"Table.Query", func() error { _, err := tbl.Query(ctx, v, Filter(zero)); return err }},
		{"Table.Scan", func() error { _, err := tbl.Scan(ctx, Filter(zero)); return err }},
	}
	before := sentCount(client)
	for _, c := range calls {
		err := c.run()
		require.ErrorIs(t, err, ErrInvalidInput, c.call)
		assert.Contains(t, err.Error(), "zero expression.ConditionBuilder", c.call)
		want := c.call
		switch want {
		case "Table.Query", "Table.Scan":
			want = want[len("Table."):]
		case "Count": // a count is a query (count.go names it so)
			want = "Query"
		case "ScanCount":
			want = "Scan"
		case "TxPut", "TxCreate", "TxUpdate", "TxDelete", "TxCheck":
			want = "Transact"
		}
		assert.Contains(t, err.Error(), want, "%s: the error names the call", c.call)
	}
	assert.Equal(t, before, sentCount(client), "nothing was sent")
	got, err := things.Get(ctx, goodThing("kept"), Consistent())
	require.NoError(t, err)
	assert.Equal(t, stored, got, "the item is as it was")
	_, err = things.Get(ctx, goodThing("new"), Consistent())
	assert.ErrorIs(t, err, ErrNotFound, "nothing was created")
}
