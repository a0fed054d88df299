package singletable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

// Reliability: lost responses. The index of the reliability tests, and their
// shared harness, are in reliability_test.go.

// TestLostResponsesEveryWriteKind drops the responses of 30% of the writes after
// DynamoDB Local applied them, for every kind of write, and says which are
// exactly-once. The SDK retries a lost response (a connection reset) as it
// would in production; versioned writes are not retried by it but resolved by
// the library.
func TestLostResponsesEveryWriteKind(t *testing.T) {
	const ops, rate = 50, 0.3
	// The SDK retries a lost response like a reset connection; with ten attempts
	// the chance that all of one call's responses are lost (0.3^10) is nil.
	tbl, inj, _ := relTable(t, func(so *retry.StandardOptions) { so.MaxAttempts = 10 })
	items := MustRegister[relItem](tbl)
	counters := MustRegister[vCounter](tbl)
	ctx := context.Background()

	type row struct {
		kind, verdict                    string
		acked, read, lost, dup, lostResp int
		falseErrors                      int
	}
	var rows []row
	lose := func(ops ...string) func() {
		return inj.Add(fault.Rule{Ops: ops, Fault: fault.LoseResponse(), Rate: rate})
	}
	lostSince := func(before fault.Stats) int { return inj.Stats().LostWrites - before.LostWrites }
	partition := func(w int) map[int]relItem {
		out := map[int]relItem{}
		for it, err := range items.All(ctx, relItem{Worker: w}, Consistent()) {
			require.NoError(t, err)
			out[it.Seq] = it
		}
		return out
	}

	t.Run("Put", func(t *testing.T) {
		before := inj.Stats()
		defer lose("PutItem")()
		r := row{kind: "Put (unversioned)", verdict: "exactly-once in effect: a Put is idempotent"}
		for i := range ops {
			for round := range 2 { // write, then overwrite
				_, err := items.Put(ctx, relItem{Worker: 1, Seq: i, Op: "put", Hits: round})
				require.NoError(t, err)
			}
			r.acked++
		}
		got := partition(1)
		r.read, r.lostResp = len(got), lostSince(before)
		for i := range ops {
			if got[i].Hits != 1 {
				r.lost++
			}
		}
		assert.Zero(t, r.lost)
		rows = append(rows, r)
	})

	t.Run("Create", func(t *testing.T) {
		before := inj.Stats()
		defer lose("PutItem")()
		r := row{kind: "Create (unversioned)", verdict: "written once; reported"}
		for i := range ops {
			_, err := items.Create(ctx, relItem{Worker: 2, Seq: i, Op: "create"})
			switch {
			case err == nil:
				r.acked++
			case errors.Is(err, ErrAlreadyExists):
				r.falseErrors++ // its own earlier attempt landed
			default:
				require.NoError(t, err)
			}
		}
		r.read, r.lostResp = len(partition(2)), lostSince(before)
		r.lost = ops - r.read
		if r.falseErrors == 0 {
			r.verdict += " as created: exactly-once"
		} else {
			r.verdict += fmt.Sprintf(" as ErrAlreadyExists %d times out of %d", r.falseErrors, ops)
		}
		rows = append(rows, r)
		assert.Zero(t, r.lost)
		assert.Zero(t, r.falseErrors, "a Create whose own earlier attempt landed is reported as ErrAlreadyExists")
	})

	t.Run("Update ADD", func(t *testing.T) {
		_, err := items.Put(ctx, relItem{Worker: 3, Seq: 0, Op: "add"})
		require.NoError(t, err)
		before := inj.Stats()
		defer lose("UpdateItem")()
		r := row{kind: "Update with ADD (unversioned)", verdict: "exactly-once: never resent blindly; its receipt recognises it"}
		for range ops {
			_, err := items.Update(ctx, relItem{Worker: 3, Seq: 0}, Add("hits", 1))
			require.NoError(t, err, "a lost answer of an ADD that landed: its receipt tells")
			r.acked++
		}
		got := partition(3)[0]
		r.read, r.lostResp = 1, lostSince(before)
		r.dup = got.Hits - ops
		rows = append(rows, r)
		assert.Positive(t, r.lostResp)
		assert.Zero(t, r.dup, "no ADD applied twice")
	})

	t.Run("Update ADD, versioned", func(t *testing.T) {
		cur, err := counters.Put(ctx, vCounter{ID: "add"})
		require.NoError(t, err)
		before := inj.Stats()
		defer lose("UpdateItem")()
		r := row{kind: "Update with ADD (versioned)", verdict: "exactly-once: the version guards it, the receipt recognises it"}
		for range ops {
			cur, err = counters.Update(ctx, cur, Add("n", 1))
			require.NoError(t, err)
			r.acked++
		}
		got, err := counters.Get(ctx, vCounter{ID: "add"}, Consistent())
		require.NoError(t, err)
		r.read, r.lostResp, r.dup = 1, lostSince(before), got.N-ops
		rows = append(rows, r)
		assert.Equal(t, ops, got.N)
		assert.Equal(t, int64(ops+1), got.Version)
	})

	t.Run("Create and Delete, versioned", func(t *testing.T) {
		before := inj.Stats()
		remove := lose("PutItem", "UpdateItem", "DeleteItem")
		r := row{kind: "Create and Delete (versioned)", verdict: "exactly-once, reported as done"}
		created := make([]vCounter, ops)
		for i := range ops {
			var err error
			created[i], err = counters.Create(ctx, vCounter{ID: "vc" + strconv.Itoa(i), N: i})
			require.NoError(t, err, "create %d", i)
			r.acked++
		}
		for i := range ops {
			got, err := counters.Get(ctx, vCounter{ID: "vc" + strconv.Itoa(i)}, Consistent())
			require.NoError(t, err)
			assert.Equal(t, int64(1), got.Version)
			r.read++
		}
		for _, c := range created {
			require.NoError(t, counters.Delete(ctx, c), "delete %s", c.ID)
		}
		remove()
		for i := range ops {
			_, err := counters.Get(ctx, vCounter{ID: "vc" + strconv.Itoa(i)}, Consistent())
			assert.ErrorIs(t, err, ErrNotFound)
		}
		r.lostResp = lostSince(before)
		rows = append(rows, r)
	})

	t.Run("Transact with a token", func(t *testing.T) {
		_, err := items.Put(ctx, relItem{Worker: 4, Seq: 0, Op: "tx counter"})
		require.NoError(t, err)
		before := inj.Stats()
		defer lose("TransactWriteItems")()
		r := row{kind: "Transact, unversioned ADD + Create", verdict: "exactly-once: the SDK retries with the same ClientRequestToken"}
		for i := 1; i <= ops; i++ {
			err := tbl.Transact(ctx, items.TxUpdate(relItem{Worker: 4, Seq: 0}, Add("hits", 1)), items.TxCreate(relItem{Worker: 4, Seq: i, Op: "tx log"}))
			require.NoError(t, err, "transaction %d", i)
			r.acked++
		}
		got := partition(4)
		r.read, r.lostResp, r.dup = len(got)-1, lostSince(before), got[0].Hits-ops
		rows = append(rows, r)
		assert.Equal(t, ops, got[0].Hits, "every ADD applied once")
		assert.Len(t, got, ops+1)
	})

	t.Run("BatchPut", func(t *testing.T) {
		before := inj.Stats()
		defer lose("BatchWriteItem")()
		r := row{kind: "BatchPut", verdict: "exactly-once in effect: puts are idempotent"}
		for b := range 8 {
			batch := make([]relItem, 25)
			for i := range batch {
				batch[i] = relItem{Worker: 5, Seq: b*25 + i, Op: "batch"}
			}
			left, err := items.BatchPut(ctx, batch)
			require.NoError(t, err)
			require.Empty(t, left)
			r.acked += len(batch)
		}
		r.read, r.lostResp = len(partition(5)), lostSince(before)
		r.lost = r.acked - r.read
		rows = append(rows, r)
		assert.Zero(t, r.lost)
	})

	t.Run("Delete", func(t *testing.T) {
		before := inj.Stats()
		defer lose("DeleteItem")()
		r := row{kind: "Delete (unversioned)", verdict: "exactly-once in effect: a Delete is idempotent"}
		for i := range ops {
			require.NoError(t, items.Delete(ctx, relItem{Worker: 1, Seq: i}))
			r.acked++
		}
		r.read, r.lostResp = len(partition(1)), lostSince(before)
		rows = append(rows, r)
		assert.Zero(t, r.read, "deleted items remain")
	})

	for _, r := range rows {
		t.Logf("FIGURES lost responses: %-36s ops acknowledged %3d, responses lost %3d, read back %3d, lost %d, duplicated %d, false errors %d: %s",
			r.kind, r.acked, r.lostResp, r.read, r.lost, r.dup, r.falseErrors, r.verdict)
	}
}
