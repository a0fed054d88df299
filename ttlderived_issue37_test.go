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
)

// dtSecs derives its ttl from a number of Unix seconds.
type dtSecs struct {
	_      struct{} `PK:"DTS#{id}" SK:"DTS"`
	ID     string   `dynamodbav:"id"`
	Starts int64    `dynamodbav:"startsAt,omitempty"`
	TTL    int64    `dynamodbav:"ttl,omitempty" singletable:"ttl,from=startsAt,after=1h"`
	N      int      `dynamodbav:"n,omitempty"`
}

// TestDerivedTTLLegacyItemFromStoredBase (issue 37, scenario 7): an item
// written before the derived ttl was declared (its createdAt stored, no ttl)
// gets createdAt + after from a Put, an Upsert and a plain Update, never now +
// after.
func TestDerivedTTLLegacyItemFromStoredBase(t *testing.T) {
	clock := &dtClock{t: dtStart}
	tbl, _ := newTestTable(t, WithClock(clock.now))
	items := MustRegister[dtCreated](tbl)
	ctx := context.Background()
	created := dtStart.Add(-400 * 24 * time.Hour) // written long before the ttl was declared
	want := created.Add(30 * 24 * time.Hour).Unix()
	legacy := func(id string) {
		_, err := tbl.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.name), Item: map[string]types.AttributeValue{
			"PK": sAV("DTC#" + id), "SK": sAV("DTC"), tbl.opts.TypeAttribute: sAV("dtCreated"), "id": sAV(id),
			"createdAt": sAV(created.Format(time.RFC3339Nano))}})
		require.NoError(t, err)
	}
	stored := func(id string) dtCreated {
		got, err := items.Get(ctx, dtCreated{ID: id}, Consistent())
		require.NoError(t, err)
		return got
	}

	legacy("put")
	got, err := items.Put(ctx, dtCreated{ID: "put", Note: "x"})
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL, "Put: the stored createdAt + 30 days")
	assert.Equal(t, want, stored("put").TTL)
	assert.True(t, created.Equal(stored("put").Created), "createdAt kept")

	legacy("upsert")
	got, err = items.Update(ctx, dtCreated{ID: "upsert"}, Set("note", "x"), Upsert())
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL, "Upsert")
	assert.Equal(t, want, stored("upsert").TTL)

	legacy("update")
	got, err = items.Update(ctx, dtCreated{ID: "update"}, Set("note", "x"))
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL, "plain Update")
	assert.Equal(t, want, stored("update").TTL)

	// An item with its ttl keeps it; a new one gets now + after.
	got, err = items.Put(ctx, dtCreated{ID: "put", Note: "y"})
	require.NoError(t, err)
	assert.Equal(t, want, got.TTL)
	got, err = items.Put(ctx, dtCreated{ID: "new"})
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(30*24*time.Hour).Unix(), got.TTL)
	got, err = items.Update(ctx, dtCreated{ID: "new2"}, Set("note", "x"), Upsert())
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(30*24*time.Hour).Unix(), got.TTL)
}

// TestDerivedTTLAddToBaseRefused (issue 37, scenario 8): Add to the base of a
// derived ttl, which an update expression cannot derive the ttl from, is
// refused before sending, naming the field, as Remove of the base is.
func TestDerivedTTLAddToBaseRefused(t *testing.T) {
	tbl, client := newTestTable(t)
	items := MustRegister[dtSecs](tbl)
	ctx := context.Background()
	_, err := items.Put(ctx, dtSecs{ID: "1", Starts: 1_800_000_000})
	require.NoError(t, err)
	before := client.count("UpdateItem") + client.count("PutItem")
	_, err = items.Update(ctx, dtSecs{ID: "1"}, Add("startsAt", 500))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "startsAt")
	assert.ErrorContains(t, err, "Starts")
	assert.ErrorContains(t, err, "ttl")
	assert.Equal(t, before, client.count("UpdateItem")+client.count("PutItem"), "nothing sent")
	err = tbl.Transact(ctx, items.TxUpdate(dtSecs{ID: "1"}, Add("startsAt", 500)))
	require.ErrorIs(t, err, ErrInvalidInput, "nor in a transaction")
	got, err := items.Get(ctx, dtSecs{ID: "1"}, Consistent())
	require.NoError(t, err)
	assert.EqualValues(t, 1_800_000_000, got.Starts)
	assert.EqualValues(t, 1_800_000_000+3600, got.TTL, "base and ttl in step")
	// Set moves both; Add of another field is fine.
	got, err = items.Update(ctx, dtSecs{ID: "1"}, Set("startsAt", 1_800_000_500), Add("n", 1))
	require.NoError(t, err)
	assert.EqualValues(t, 1_800_000_500+3600, got.TTL)
}
