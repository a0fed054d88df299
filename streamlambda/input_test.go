package streamlambda

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
)

// offlineTable is a table description with lOrder registered; the tests that
// use it send nothing.
func offlineTable(t *testing.T) *singletable.Table {
	tbl, err := singletable.NewTable(local.Client(t), "offline")
	require.NoError(t, err)
	_, err = singletable.Register[lOrder](tbl)
	require.NoError(t, err)
	return tbl
}

// TestRetryOption: Retry refuses a negative field, naming it; its zero
// MaxAttempts is Backoff's default (10 attempts), not one; and MaxElapsed ends
// the retries. Before, Retry(Backoff{}) tried once and MaxElapsed was ignored.
func TestRetryOption(t *testing.T) {
	tbl := offlineTable(t)
	fails := func(calls *atomic.Int32) func(context.Context, singletable.StreamRecord) error {
		return func(context.Context, singletable.StreamRecord) error { calls.Add(1); return errors.New("down") }
	}
	noSleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }

	for field, b := range map[string]singletable.Backoff{
		"Base": {Base: -1}, "Cap": {Cap: -1}, "MaxAttempts": {MaxAttempts: -1}, "MaxElapsed": {MaxElapsed: -time.Second},
	} {
		_, err := New(tbl, fails(new(atomic.Int32)), Retry(b))
		require.ErrorIs(t, err, singletable.ErrInvalidInput, field)
		assert.ErrorContains(t, err, "negative "+field)
	}

	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{change(1, "c1", "a", 1)}}
	var calls atomic.Int32
	h, err := New(tbl, fails(&calls), Retry(singletable.Backoff{Sleep: noSleep}))
	require.NoError(t, err)
	resp, err := h.Handle(t.Context(), ev)
	require.NoError(t, err)
	assert.Len(t, resp.BatchItemFailures, 1)
	assert.Equal(t, int32(10), calls.Load(), "a zero MaxAttempts is Backoff's default")

	calls.Store(0)
	h, err = New(tbl, fails(&calls))
	require.NoError(t, err)
	_, err = h.Handle(t.Context(), ev)
	require.NoError(t, err)
	assert.Equal(t, int32(1), calls.Load(), "without Retry, no retry")

	calls.Store(0)
	var clock atomic.Int64 // seconds; each reading moves it on by one
	now := func() time.Time { return time.Unix(clock.Add(1), 0) }
	h, err = New(tbl, fails(&calls), Retry(singletable.Backoff{MaxAttempts: 100, MaxElapsed: 5 * time.Second, Now: now, Sleep: noSleep}))
	require.NoError(t, err)
	_, err = h.Handle(t.Context(), ev)
	require.NoError(t, err)
	assert.Equal(t, int32(5), calls.Load(), "MaxElapsed ends the retries")
}

// TestRecordRefusesUnreadableKeys: a record without key attributes, or with a
// key attribute that is not a string, number or binary, is refused with an
// error naming the record and the attribute (before, the attribute was
// dropped, and such records shared one rail). In a batch such a record is
// reported, and no record after it runs: its item is unknown, so none of them
// can be shown to be of another item.
func TestRecordRefusesUnreadableKeys(t *testing.T) {
	noKey := change(2, "c1", "x", 1)
	noKey.Change.Keys = nil
	_, err := Record(noKey)
	require.ErrorIs(t, err, singletable.ErrInvalidInput)
	assert.ErrorContains(t, err, "record "+noKey.Change.SequenceNumber)

	boolKey := change(3, "c1", "y", 1)
	boolKey.Change.Keys = map[string]events.DynamoDBAttributeValue{"PK": events.NewBooleanAttribute(true), "SK": boolKey.Change.Keys["SK"]}
	_, err = Record(boolKey)
	require.ErrorIs(t, err, singletable.ErrInvalidInput)
	assert.ErrorContains(t, err, "key PK")

	var ran []string
	h, err := New(offlineTable(t), func(_ context.Context, r singletable.StreamRecord) error {
		ran = append(ran, r.SequenceNumber) // Concurrency 1: one handler at a time
		return nil
	}, Rails(singletable.RailroadOptions{Concurrency: 1}))
	require.NoError(t, err)
	first, later, other := change(1, "c1", "a", 1), change(4, "c1", "a", 2), change(5, "c1", "b", 1)
	resp, err := h.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{first, noKey, later, other}})
	require.NoError(t, err)
	assert.Equal(t, []string{first.Change.SequenceNumber}, ran, "nothing after the record without a key runs")
	require.NotEmpty(t, resp.BatchItemFailures)
	assert.Equal(t, noKey.Change.SequenceNumber, resp.BatchItemFailures[0].ItemIdentifier, "Lambda retries from the record without a key")
	for _, f := range resp.BatchItemFailures {
		assert.NotEqual(t, first.Change.SequenceNumber, f.ItemIdentifier, "the record that finished is not reported")
	}
}

// TestHandleZeroHandler: Handle on a Handler not made by New returns an error
// instead of panicking.
func TestHandleZeroHandler(t *testing.T) {
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{change(1, "c1", "a", 1)}}
	for name, h := range map[string]*Handler{"nil": nil, "zero": {}} {
		assert.NotPanics(t, func() {
			_, err := h.Handle(t.Context(), ev)
			assert.ErrorIs(t, err, singletable.ErrInvalidInput, name)
		}, name)
	}
}

// TestRecordKeyPanics: a RecordKey that panics (here on a record it did not
// expect) does not crash the invocation: the record is reported, and no
// record after it runs, since its rail is unknown.
func TestRecordKeyPanics(t *testing.T) {
	var ran []string
	h, err := New(offlineTable(t), func(_ context.Context, r singletable.StreamRecord) error {
		ran = append(ran, r.SequenceNumber) // Concurrency 1: one handler at a time
		return nil
	}, Rails(singletable.RailroadOptions{Concurrency: 1}), RecordKey(func(r singletable.StreamRecord) string {
		if o := r.New.(lOrder); o.O == "boom" {
			panic("unexpected order")
		}
		return r.Key["PK"]
	}))
	require.NoError(t, err)
	first, boom, later := change(1, "c1", "a", 1), change(2, "c1", "boom", 1), change(3, "c2", "a", 1)
	var resp events.DynamoDBEventResponse
	require.NotPanics(t, func() {
		resp, err = h.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{first, boom, later}})
	})
	require.NoError(t, err)
	assert.Equal(t, []string{first.Change.SequenceNumber}, ran)
	require.NotEmpty(t, resp.BatchItemFailures)
	assert.Equal(t, boom.Change.SequenceNumber, resp.BatchItemFailures[0].ItemIdentifier)
}
