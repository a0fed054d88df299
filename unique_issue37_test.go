package singletable

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/uniqueguard"
)

// uMember's email is unique within its organisation, whose id is an input of
// the primary key.
type uMember struct {
	_     struct{} `Type:"Member" PK:"ORG#{orgId}" SK:"MEMBER#{id}" singletable:"unique=orgId+email"`
	OrgID string   `dynamodbav:"orgId"`
	ID    string   `dynamodbav:"id"`
	Email string   `dynamodbav:"email,omitempty"`
	Name  string   `dynamodbav:"name,omitempty"`
}

// uSeat: one seat per organisation, a constraint of a key input alone.
type uSeat struct {
	_     struct{} `Type:"Seat" PK:"ORG#{orgId}" SK:"SEAT#{id}" singletable:"unique=orgId"`
	OrgID string   `dynamodbav:"orgId"`
	ID    string   `dynamodbav:"id"`
	Name  string   `dynamodbav:"name,omitempty"`
}

// TestUniqueUpsertClaimsKeyInputConstraint (issue 37, scenario 1): an Update
// with Upsert that creates the item claims the combined constraints that
// include an input of the primary key, as Create does.
func TestUniqueUpsertClaimsKeyInputConstraint(t *testing.T) {
	tbl, _ := newTestTable(t)
	members := MustRegister[uMember](tbl)
	seats := MustRegister[uSeat](tbl)
	ctx := context.Background()

	got, err := members.Update(ctx, uMember{OrgID: "o1", ID: "1"}, Set("email", "a@x.io"), Upsert())
	require.NoError(t, err)
	assert.Equal(t, "a@x.io", got.Email)
	g := guardsOf(t, tbl)
	require.NotNil(t, g["o1+a@x.io"], "the upsert claimed the pair")
	_, err = members.Create(ctx, uMember{OrgID: "o1", ID: "2", Email: "a@x.io"})
	require.ErrorIs(t, err, ErrNotUnique, "two items never hold one pair")
	_, err = members.Update(ctx, uMember{OrgID: "o1", ID: "3"}, Set("email", "a@x.io"), Upsert())
	require.ErrorIs(t, err, ErrNotUnique, "nor does a second upsert")
	_, err = members.Create(ctx, uMember{OrgID: "o2", ID: "2", Email: "a@x.io"})
	require.NoError(t, err, "another organisation")
	// An upsert of an existing item keeps its guard, and moves it.
	_, err = members.Update(ctx, uMember{OrgID: "o1", ID: "1"}, Set("name", "Ann"), Upsert())
	require.NoError(t, err)
	_, err = members.Update(ctx, uMember{OrgID: "o1", ID: "1"}, Set("email", "b@x.io"), Upsert())
	require.NoError(t, err)
	g = guardsOf(t, tbl)
	assert.Nil(t, g["o1+a@x.io"], "freed")
	assert.NotNil(t, g["o1+b@x.io"])
	_, err = members.Create(ctx, uMember{OrgID: "o1", ID: "4", Email: "a@x.io"})
	require.NoError(t, err, "the value freed")

	// A constraint of a key input alone: the upsert that creates the item
	// claims it, whatever it Sets.
	_, err = seats.Update(ctx, uSeat{OrgID: "o1", ID: "1"}, Set("name", "first"), Upsert())
	require.NoError(t, err)
	_, err = seats.Update(ctx, uSeat{OrgID: "o1", ID: "2"}, Set("name", "second"), Upsert())
	require.ErrorIs(t, err, ErrNotUnique)
	_, err = seats.Create(ctx, uSeat{OrgID: "o1", ID: "3"})
	require.ErrorIs(t, err, ErrNotUnique)
	_, err = seats.Update(ctx, uSeat{OrgID: "o1", ID: "1"}, Set("name", "again"), Upsert())
	require.NoError(t, err, "the holder's own upsert")

	rep, err := members.SweepUnique(ctx)
	require.NoError(t, err)
	assert.Empty(t, rep.Missing)
	assert.Empty(t, rep.Orphans)
	assert.Empty(t, rep.Duplicates)
	rep, err = seats.SweepUnique(ctx)
	require.NoError(t, err)
	assert.Empty(t, rep.Missing)
	assert.Empty(t, rep.Orphans)
	assert.Empty(t, rep.Duplicates)
}

// afterClient runs after once the first TransactWriteItems that succeeds:
// another writer between an acknowledged transaction and its read-back.
type afterClient struct {
	ItemClient
	done  atomic.Bool
	after func()
}

func (h *afterClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := h.ItemClient.TransactWriteItems(ctx, in, o...)
	if err == nil && h.after != nil && h.done.CompareAndSwap(false, true) {
		h.after()
	}
	return out, err
}

// TestUniqueAcknowledgedNeverAmbiguous (issue 37, scenario 2): a unique write
// whose transaction was acknowledged succeeds, even when another writer changes
// or deletes the item before it is read back for what the call returns.
func TestUniqueAcknowledgedNeverAmbiguous(t *testing.T) {
	ctx := context.Background()
	base, _ := newTestTable(t)
	plain := MustRegister[uUser](base)
	hc := &afterClient{ItemClient: base.client}
	tbl, err := NewTable(hc, base.name, testTableOptions)
	require.NoError(t, err)
	users := MustRegister[uUser](tbl)
	_, err = users.Create(ctx, uUser{ID: "1", Email: "a@x.io", Name: "Ann"})
	require.NoError(t, err)

	// Replaced before the read-back: the call succeeds with the item as read.
	hc.done.Store(false)
	hc.after = func() {
		_, err := plain.Update(ctx, uUser{ID: "1"}, Set("name", "other"))
		require.NoError(t, err)
	}
	got, err := users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io"))
	require.NoError(t, err, "an acknowledged write is never ambiguous")
	assert.NotErrorIs(t, err, ErrAmbiguous)
	assert.Equal(t, "b@x.io", got.Email)
	assert.Equal(t, "other", got.Name, "the item as read after the transaction")

	// Deleted before the read-back: still a success.
	hc.done.Store(false)
	hc.after = func() { require.NoError(t, plain.Delete(ctx, uUser{ID: "1"})) }
	got, err = users.Update(ctx, uUser{ID: "1"}, Set("email", "c@x.io"))
	require.NoError(t, err, "an acknowledged write is never ambiguous")
	assert.Equal(t, uUser{}, got, "the item is gone: the zero value")

	// A Put that learns what was stored, replaced before its read-back.
	type stamped struct {
		_         struct{}  `Type:"SUser" PK:"SUSER#{id}" SK:"PROFILE"`
		ID        string    `dynamodbav:"id"`
		Email     string    `dynamodbav:"email,omitempty" singletable:"unique"`
		Name      string    `dynamodbav:"name"`
		CreatedAt time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	}
	sp := MustRegister[stamped](base)
	st := MustRegister[stamped](tbl)
	_, err = st.Create(ctx, stamped{ID: "1", Email: "s@x.io"})
	require.NoError(t, err)
	hc.done.Store(false)
	hc.after = func() {
		_, err := sp.Update(ctx, stamped{ID: "1"}, Set("name", "other"))
		require.NoError(t, err)
	}
	p, err := st.Put(ctx, stamped{ID: "1", Email: "t@x.io", Name: "mine"})
	require.NoError(t, err)
	assert.Equal(t, "t@x.io", p.Email)
	assert.False(t, p.CreatedAt.IsZero())
}

// scanOptsClient refuses any call given SDK middleware (APIOptions), as a
// client that is not a *dynamodb.Client and declares no traits may.
type scanOptsClient struct {
	ItemClient
	scans atomic.Int64
}

func refuseAPIOptions(o []func(*dynamodb.Options)) error {
	var opts dynamodb.Options
	for _, f := range o {
		f(&opts)
	}
	if len(opts.APIOptions) > 0 {
		return errors.New("this client takes no SDK middleware (APIOptions)")
	}
	return nil
}

func (c *scanOptsClient) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.scans.Add(1)
	if err := refuseAPIOptions(o); err != nil {
		return nil, err
	}
	return c.ItemClient.Scan(ctx, in, o...)
}

// TestUniqueSweepThroughClientBoundary (issue 37, scenario 3): SweepUnique's
// scan goes through the table's client as every other call does, with no SDK
// middleware for a client not known to take it, and pages through the table.
func TestUniqueSweepThroughClientBoundary(t *testing.T) {
	ctx := context.Background()
	base, _ := newTestTable(t)
	c := &scanOptsClient{ItemClient: base.client}
	for _, observed := range []bool{false, true} {
		opts := []TableOption{testTableOptions}
		if observed {
			opts = append(opts, WithObserver(func(Operation) {}))
		}
		tbl, err := NewTable(c, base.name, opts...)
		require.NoError(t, err)
		users := MustRegister[uUser](tbl)
		for i := range 3 {
			_, err := users.Put(ctx, uUser{ID: strconv.Itoa(i), Email: strconv.Itoa(i) + "@x.io"})
			require.NoError(t, err)
		}
		before := c.scans.Load()
		rep, err := users.SweepUnique(ctx)
		require.NoError(t, err, "observed: %v", observed)
		assert.Equal(t, 3, rep.Items)
		assert.Equal(t, 3, rep.Guards)
		assert.Positive(t, c.scans.Load()-before, "the scan went through the table's client")
	}
}

// churnClient changes the item's unique value before every transaction, so
// that each attempt finds the value read moved.
type churnClient struct {
	ItemClient
	key map[string]types.AttributeValue
	n   atomic.Int64
}

func (c *churnClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	n := c.n.Add(1)
	_, err := c.ItemClient.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: in.TransactItems[0].Update.TableName, Key: c.key,
		UpdateExpression:          aws.String("SET email = :e"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":e": sAV("churn" + strconv.FormatInt(n, 10) + "@x.io")}})
	if err != nil {
		return nil, err
	}
	return c.ItemClient.TransactWriteItems(ctx, in, o...)
}

// TestUniqueGivesUpNamesWhy (issue 37, scenario 4): a unique write that gives
// up because the item's unique values kept changing under it says so, and
// matches ErrConflict (a write that lost its races) as well as ErrCondition.
func TestUniqueGivesUpNamesWhy(t *testing.T) {
	ctx := context.Background()
	base, _ := newTestTable(t)
	plain := MustRegister[uUser](base)
	_, err := plain.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
	require.NoError(t, err)
	c := &churnClient{ItemClient: base.client, key: map[string]types.AttributeValue{"PK": sAV("USER#1"), "SK": sAV("PROFILE")}}
	tbl, err := NewTable(c, base.name, testTableOptions, WithBackoff(Backoff{Base: time.Millisecond, Cap: 2 * time.Millisecond, MaxAttempts: 3}))
	require.NoError(t, err)
	users := MustRegister[uUser](tbl)
	_, err = users.Update(ctx, uUser{ID: "1"}, Set("email", "b@x.io"))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrConflict, "the write lost its races: a conflict")
	assert.ErrorIs(t, err, ErrCondition)
	assert.NotErrorIs(t, err, ErrAmbiguous)
	assert.NotErrorIs(t, err, ErrNotUnique)
	assert.Contains(t, err.Error(), "gave up after 3 attempts")
	assert.Contains(t, err.Error(), "email")
	assert.Contains(t, err.Error(), "nothing was written")
	assert.EqualValues(t, 3, c.n.Load())
}

// uExp is a unique entity with a ttl field.
type uExp struct {
	_       struct{} `Type:"ExpUser" PK:"XUSER#{id}" SK:"PROFILE"`
	ID      string   `dynamodbav:"id"`
	Email   string   `dynamodbav:"email,omitempty" singletable:"unique"`
	Name    string   `dynamodbav:"name,omitempty"`
	Expires int64    `dynamodbav:"ttl,omitempty" singletable:"ttl"`
}

// uSession's ttl slides with every write (derived from updatedAt).
type uSession struct {
	_       struct{}  `Type:"Session" PK:"SESS#{id}" SK:"SESS"`
	ID      string    `dynamodbav:"id"`
	Token   string    `dynamodbav:"token,omitempty" singletable:"unique"`
	Note    string    `dynamodbav:"note,omitempty"`
	Updated time.Time `dynamodbav:"updatedAt" singletable:"updatedAt"`
	TTL     int64     `dynamodbav:"ttl,omitempty" singletable:"ttl,from=updatedAt,after=1h"`
}

// uInvite's ttl is derived from createdAt.
type uInvite struct {
	_       struct{}  `Type:"Invite" PK:"INV#{id}" SK:"INV"`
	ID      string    `dynamodbav:"id"`
	Code    string    `dynamodbav:"code,omitempty" singletable:"unique"`
	Note    string    `dynamodbav:"note,omitempty"`
	Created time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	TTL     int64     `dynamodbav:"ttl,omitempty" singletable:"ttl,from=createdAt,after=30d"`
}

// guardTTLs checks every guard of the table against its owner, read raw: the
// guard carries the owner's ttl (or, where the write could not know it, none:
// it never expires before its owner). It returns the guards' ttls by value.
func guardTTLs(t *testing.T, tbl *Table) map[string]types.AttributeValue {
	t.Helper()
	ctx := context.Background()
	out := map[string]types.AttributeValue{}
	for v, g := range guardsOf(t, tbl) {
		key, ok := uniqueguardOwner(tbl, g)
		require.True(t, ok)
		o, err := tbl.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.name), Key: key, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		require.NotNil(t, o.Item, "the owner of %s", v)
		gt, ot := g["ttl"], o.Item["ttl"]
		if gt != nil {
			assert.Equal(t, ot, gt, "the guard of %s carries its owner's ttl", v)
		}
		out[v] = gt
	}
	return out
}

func uniqueguardOwner(tbl *Table, g map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	return uniqueguardHolder(tbl.baseKeyAttrs(), g)
}

// TestUniqueGuardsCarryOwnerTTL (issue 37, scenario 18): a guard carries its
// owner's ttl, so that DynamoDB deletes it with its owner, and every write that
// changes the owner's ttl keeps its guards in step.
func TestUniqueGuardsCarryOwnerTTL(t *testing.T) {
	clock := &dtClock{t: dtStart}
	tbl, _ := newTestTable(t, WithClock(clock.now))
	users := MustRegister[uExp](tbl)
	ctx := context.Background()
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}

	_, err := users.Create(ctx, uExp{ID: "1", Email: "a@x.io", Expires: 2_000_000_000})
	require.NoError(t, err)
	assert.Equal(t, n(2_000_000_000), guardTTLs(t, tbl)["a@x.io"], "Create")
	_, err = users.Update(ctx, uExp{ID: "1"}, Set("ttl", 2_000_000_500))
	require.NoError(t, err)
	assert.Equal(t, n(2_000_000_500), guardTTLs(t, tbl)["a@x.io"], "an Update of the ttl moves the guards' too")
	_, err = users.Update(ctx, uExp{ID: "1"}, Set("email", "b@x.io"))
	require.NoError(t, err)
	g := guardTTLs(t, tbl)
	assert.Equal(t, n(2_000_000_500), g["b@x.io"], "a value moved carries the stored ttl")
	assert.NotContains(t, g, "a@x.io")
	_, err = users.Update(ctx, uExp{ID: "1"}, Remove("ttl"))
	require.NoError(t, err)
	assert.Nil(t, guardTTLs(t, tbl)["b@x.io"], "no ttl: the guard never expires")
	_, err = users.Put(ctx, uExp{ID: "1", Email: "c@x.io", Expires: 2_100_000_000})
	require.NoError(t, err)
	assert.Equal(t, n(2_100_000_000), guardTTLs(t, tbl)["c@x.io"], "Put")
	_, err = users.Update(ctx, uExp{ID: "1"}, Add("ttl", 100))
	require.NoError(t, err)
	assert.Nil(t, guardTTLs(t, tbl)["c@x.io"], "an Add the write cannot know the result of: the guard never expires before its owner")
	require.NoError(t, tbl.Transact(ctx, users.TxUpdate(uExp{ID: "1", Email: "c@x.io"}, Set("ttl", 2_200_000_000))))
	assert.Equal(t, n(2_200_000_000), guardTTLs(t, tbl)["c@x.io"], "TxUpdate of the ttl")
	_, err = users.Update(ctx, uExp{ID: "1"}, Set("name", "Ann"))
	require.NoError(t, err)
	assert.Equal(t, n(2_200_000_000), guardTTLs(t, tbl)["c@x.io"], "an Update leaving the ttl leaves the guards")

	// A ttl derived from updatedAt slides with every write, and the guards with it.
	sessions := MustRegister[uSession](tbl)
	_, err = sessions.Create(ctx, uSession{ID: "s", Token: "t1"})
	require.NoError(t, err)
	assert.Equal(t, n(dtStart.Add(time.Hour).Unix()), guardTTLs(t, tbl)["t1"])
	clock.set(dtStart.Add(10 * time.Minute))
	got, err := sessions.Update(ctx, uSession{ID: "s"}, Set("note", "x"))
	require.NoError(t, err)
	assert.Equal(t, dtStart.Add(70*time.Minute).Unix(), got.TTL)
	assert.Equal(t, n(got.TTL), guardTTLs(t, tbl)["t1"], "slid with its owner")

	// A ttl derived from createdAt, on an item written before it was declared.
	invites := MustRegister[uInvite](tbl)
	created := dtStart.Add(-100 * 24 * time.Hour)
	_, err = tbl.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.name), Item: map[string]types.AttributeValue{
		"PK": sAV("INV#1"), "SK": sAV("INV"), tbl.opts.TypeAttribute: sAV("Invite"), "id": sAV("1"), "code": sAV("k1"),
		"createdAt": sAV(created.Format(time.RFC3339Nano))}})
	require.NoError(t, err)
	inv, err := invites.Put(ctx, uInvite{ID: "1", Code: "k2"})
	require.NoError(t, err)
	assert.Equal(t, created.Add(30*24*time.Hour).Unix(), inv.TTL, "the stored createdAt + 30 days")
	assert.Equal(t, n(inv.TTL), guardTTLs(t, tbl)["k2"])
	inv, err = invites.Create(ctx, uInvite{ID: "2", Code: "k3"})
	require.NoError(t, err)
	assert.Equal(t, n(inv.TTL), guardTTLs(t, tbl)["k3"])

	for _, rep := range []func() (UniqueSweepReport, error){
		func() (UniqueSweepReport, error) { return users.SweepUnique(ctx) },
		func() (UniqueSweepReport, error) { return sessions.SweepUnique(ctx) },
		func() (UniqueSweepReport, error) { return invites.SweepUnique(ctx) },
	} {
		r, err := rep()
		require.NoError(t, err)
		assert.Empty(t, r.Orphans)
		assert.Empty(t, r.Missing)
	}
}

func uniqueguardHolder(attrs []string, g map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	return uniqueguard.Holder(attrs, g)
}
