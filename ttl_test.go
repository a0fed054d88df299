package singletable

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

type ttlSession struct {
	_         struct{} `Type:"TtlSession" PK:"USER#{user}" SK:"SESSION#{id}"`
	User      string   `dynamodbav:"user"`
	ID        string   `dynamodbav:"id"`
	ExpiresAt int64    `dynamodbav:"expiresAt,omitempty" singletable:"ttl"`
}

type ttlToken struct {
	_       struct{}  `Type:"TtlToken" PK:"USER#{user}" SK:"TOKEN#{id}"`
	User    string    `dynamodbav:"user"`
	ID      string    `dynamodbav:"id"`
	Expires time.Time `dynamodbav:"expiresAt,unixtime" singletable:"ttl"`
}

type ttlPlain struct {
	_    struct{} `Type:"TtlPlain" PK:"USER#{user}" SK:"PLAIN#{id}"`
	User string   `dynamodbav:"user"`
	ID   string   `dynamodbav:"id"`
}

// newTTLTable is newTestTable on the bare client of DynamoDB Local (a TTLClient).
func newTTLTable(t *testing.T, opts ...TableOption) *Table {
	t.Helper()
	tbl, err := NewTable(local.Client(t), localtest.TableName(t), append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	localtest.DeleteAtCleanup(t, tbl)
	return tbl
}

func describeTTL(t *testing.T, tbl *Table) (types.TimeToLiveStatus, string) {
	t.Helper()
	out, err := local.Client(t).DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	d := out.TimeToLiveDescription
	return d.TimeToLiveStatus, aws.ToString(d.AttributeName)
}

// TestTTLCreateTableEnablesAndWrites: a table with a TTL attribute gets TTL turned
// on by CreateTable (DescribeTimeToLive says so); the ttl field is written as Unix
// seconds; Describe shows it.
func TestTTLCreateTableEnablesAndWrites(t *testing.T) {
	ctx := context.Background()
	tbl := newTTLTable(t, WithTTLAttribute("expiresAt"))
	require.NoError(t, tbl.CreateTable(ctx))
	status, attr := describeTTL(t, tbl)
	assert.Equal(t, types.TimeToLiveStatusEnabled, status)
	assert.Equal(t, "expiresAt", attr)
	require.NoError(t, tbl.EnableTTL(ctx), "idempotent")

	sessions := MustRegister[ttlSession](tbl)
	tokens := MustRegister[ttlToken](tbl)
	exp := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	_, err := sessions.Put(ctx, ttlSession{User: "u", ID: "s", ExpiresAt: exp.Unix()})
	require.NoError(t, err)
	_, err = tokens.Put(ctx, ttlToken{User: "u", ID: "t", Expires: exp})
	require.NoError(t, err)
	for _, sk := range []string{"SESSION#s", "TOKEN#t"} {
		n, ok := rawItem(t, tbl, "USER#u", sk)["expiresAt"].(*types.AttributeValueMemberN)
		require.True(t, ok, "%s: the TTL is a number", sk)
		assert.Equal(t, strconv.FormatInt(exp.Unix(), 10), n.Value)
	}

	d := tbl.Describe()
	assert.Equal(t, "expiresAt", d.TTLAttribute)
	for _, e := range d.Entities {
		assert.Equal(t, "expiresAt", e.TTL, e.Name)
	}
	assert.Contains(t, d.Markdown(), "Items expire by DynamoDB's TTL on `expiresAt`")
}

// TestTTLEnableAfterRegister: without WithTTLAttribute, the registered entities'
// ttl field names the attribute; EnableTTL turns it on, once.
func TestTTLEnableAfterRegister(t *testing.T) {
	ctx := context.Background()
	tbl := newTTLTable(t)
	require.NoError(t, tbl.CreateTable(ctx))
	status, _ := describeTTL(t, tbl)
	assert.Equal(t, types.TimeToLiveStatusDisabled, status, "no TTL attribute yet")
	assert.ErrorIs(t, tbl.EnableTTL(ctx), ErrInvalidInput, "nothing to enable")
	MustRegister[ttlSession](tbl)
	assert.Equal(t, "expiresAt", tbl.TTLAttribute())
	require.NoError(t, tbl.EnableTTL(ctx))
	require.NoError(t, tbl.EnableTTL(ctx), "idempotent")
	status, attr := describeTTL(t, tbl)
	assert.Equal(t, types.TimeToLiveStatusEnabled, status)
	assert.Equal(t, "expiresAt", attr)

	// A client without the TTL calls is told so.
	other, err := NewTable(newCountingClient(local.Client(t)), tbl.Name(), testTableOptions, WithTTLAttribute("expiresAt"))
	require.NoError(t, err)
	assert.ErrorIs(t, other.EnableTTL(ctx), ErrInvalidInput)
	// TTL on for another attribute is an error: DynamoDB has one per table.
	third, err := NewTable(local.Client(t), tbl.Name(), testTableOptions, WithTTLAttribute("gone"))
	require.NoError(t, err)
	assert.ErrorIs(t, third.EnableTTL(ctx), ErrInvalidInput)
}

// TestTTLSkipExpired: expired items DynamoDB has not deleted yet are read by
// default, and left out with SkipExpired, by the table's clock, in Get, BatchGet,
// Query and collection queries.
func TestTTLSkipExpired(t *testing.T) {
	clk := newTestClock()
	tbl, _ := newTestTable(t, WithClock(clk.Now))
	sessions := MustRegister[ttlSession](tbl)
	tokens := MustRegister[ttlToken](tbl)
	plains := MustRegister[ttlPlain](tbl)
	ctx := context.Background()
	now := clk.Now()
	for _, s := range []ttlSession{
		{User: "u", ID: "old", ExpiresAt: now.Add(-time.Hour).Unix()},
		{User: "u", ID: "live", ExpiresAt: now.Add(time.Hour).Unix()},
		{User: "u", ID: "forever"},
	} {
		_, err := sessions.Put(ctx, s)
		require.NoError(t, err)
	}
	_, err := tokens.Put(ctx, ttlToken{User: "u", ID: "old", Expires: now.Add(-time.Minute)})
	require.NoError(t, err)
	_, err = plains.Put(ctx, ttlPlain{User: "u", ID: "p"})
	require.NoError(t, err)

	_, err = sessions.Get(ctx, ttlSession{User: "u", ID: "old"})
	require.NoError(t, err, "read by default")
	_, err = sessions.Get(ctx, ttlSession{User: "u", ID: "old"}, SkipExpired())
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = sessions.Get(ctx, ttlSession{User: "u", ID: "live"}, SkipExpired(), Consistent())
	assert.NoError(t, err)
	_, err = sessions.Get(ctx, ttlSession{User: "u", ID: "forever"}, SkipExpired())
	assert.NoError(t, err, "no TTL: never expires")

	res, err := sessions.BatchGet(ctx, []ttlSession{{User: "u", ID: "old"}, {User: "u", ID: "live"}}, SkipExpired())
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "live", res.Items[0].ID)
	require.Len(t, res.Missing, 1)
	assert.Equal(t, "old", res.Missing[0].ID)

	page, err := sessions.Query(ctx, ttlSession{User: "u"}, SkipExpired())
	require.NoError(t, err)
	ids := []string{}
	for _, s := range page.Items {
		ids = append(ids, s.ID)
	}
	assert.ElementsMatch(t, []string{"live", "forever"}, ids)
	all, err := sessions.Query(ctx, ttlSession{User: "u"})
	require.NoError(t, err)
	assert.Len(t, all.Items, 3, "without SkipExpired")

	coll, err := tbl.Query(ctx, ttlSession{User: "u"}, SkipExpired())
	require.NoError(t, err)
	assert.Len(t, coll.Items, 3, "live, forever and the plain item; the expired session and token are left out")

	// Scans, counts and projected reads (whose projection leaves the TTL out) too.
	scanned, err := sessions.Scan(ctx, SkipExpired())
	require.NoError(t, err)
	assert.Len(t, scanned.Items, 2, "Scan")
	count, err := sessions.Count(ctx, ttlSession{User: "u"}, SkipExpired())
	require.NoError(t, err)
	assert.Equal(t, 2, count.Items, "Count")
	proj := sessions.Project("id")
	_, err = proj.Get(ctx, ttlSession{User: "u", ID: "old"}, SkipExpired())
	assert.ErrorIs(t, err, ErrNotFound, "a projection without the TTL still skips")
	pv, err := proj.Get(ctx, ttlSession{User: "u", ID: "old"})
	require.NoError(t, err)
	assert.Equal(t, "old", pv.Value.ID)
	pb, err := proj.BatchGet(ctx, []ttlSession{{User: "u", ID: "old"}, {User: "u", ID: "live"}}, SkipExpired())
	require.NoError(t, err)
	require.Len(t, pb.Items, 1)
	assert.Len(t, pb.Missing, 1)
	_, err = plains.Project("id").Get(ctx, ttlPlain{User: "u", ID: "p"}, SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)

	clk.Advance(2 * time.Hour)
	_, err = sessions.Get(ctx, ttlSession{User: "u", ID: "live"}, SkipExpired())
	assert.ErrorIs(t, err, ErrNotFound, "expired by the table's clock")

	// SkipExpired on an entity without a ttl field is refused.
	_, err = plains.Get(ctx, ttlPlain{User: "u", ID: "p"}, SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = plains.Query(ctx, ttlPlain{User: "u"}, SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = plains.BatchGet(ctx, []ttlPlain{{User: "u", ID: "p"}}, SkipExpired())
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// TestTTLRegistrationErrors: a ttl field that DynamoDB's TTL would ignore, or one
// that disagrees with the table's TTL attribute, is refused at Register.
func TestTTLRegistrationErrors(t *testing.T) {
	type strTTL struct {
		_   struct{} `PK:"A#{id}" SK:"A"`
		ID  string   `dynamodbav:"id"`
		TTL string   `dynamodbav:"ttl" singletable:"ttl"`
	}
	type timeTTL struct {
		_   struct{}  `PK:"B#{id}" SK:"B"`
		ID  string    `dynamodbav:"id"`
		TTL time.Time `dynamodbav:"ttl" singletable:"ttl"`
	}
	type asString struct {
		_   struct{} `PK:"C#{id}" SK:"C"`
		ID  string   `dynamodbav:"id"`
		TTL int64    `dynamodbav:"ttl,string" singletable:"ttl"`
	}
	type otherName struct {
		_   struct{} `PK:"D#{id}" SK:"D"`
		ID  string   `dynamodbav:"id"`
		TTL int64    `dynamodbav:"ttl" singletable:"ttl"`
	}
	tbl := offlineTable(t)
	for name, reg := range map[string]func() error{
		"string":         func() error { _, err := Register[strTTL](tbl); return err },
		"RFC 3339 time":  func() error { _, err := Register[timeTTL](tbl); return err },
		"number as text": func() error { _, err := Register[asString](tbl); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := reg()
			require.ErrorIs(t, err, ErrInvalidEntity)
			assert.Contains(t, err.Error(), "TTL")
			assert.Contains(t, err.Error(), "attribute ttl")
			t.Log(err)
		})
	}
	named := offlineTable(t, WithTTLAttribute("expiresAt"))
	_, err := Register[otherName](named)
	assert.ErrorIs(t, err, ErrInvalidEntity, "the table's TTL attribute is expiresAt")
	mixed := offlineTable(t)
	MustRegister[ttlSession](mixed)
	_, err = Register[otherName](mixed)
	assert.ErrorIs(t, err, ErrInvalidEntity, "a table has one TTL attribute")
}
