package ttlexpiry

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

var errInvalid = errors.New("invalid input")

// TestParseTag parses from= and after= and says what is wrong.
func TestParseTag(t *testing.T) {
	from, after, reason := ParseTag([]string{"from=createdAt", "after=30d"})
	assert.Equal(t, "createdAt", from)
	assert.Equal(t, 30*24*time.Hour, after)
	assert.Empty(t, reason)
	_, after, _ = ParseTag([]string{"after=90m", "from=x"})
	assert.Equal(t, 90*time.Minute, after)
	for want, mods := range map[string][]string{
		`unknown ttl option "every=1h" (want from=ATTR,after=DURATION)`: {"every=1h"},
		"a derived ttl needs both from=ATTR and after=DURATION":         {"from=x"},
		"ttl after=0d: want a count of days from 1":                     {"from=x", "after=0d"},
		`ttl after=soon: time: invalid duration "soon"`:                 {"from=x", "after=soon"},
	} {
		_, _, reason := ParseTag(mods)
		assert.Contains(t, reason, want)
	}
}

// TestExpiryAndStore derives expiries from each kind of base and stores them.
func TestExpiryAndStore(t *testing.T) {
	base := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		fv reflect.Value
		ms bool
	}{
		{reflect.ValueOf(base), false}, {reflect.ValueOf(&base), false}, {reflect.ValueOf(int64(1_000_000)), false},
		{reflect.ValueOf(uint32(1_000_000)), false}, {reflect.ValueOf(int64(1_000_000_000)), true}, {reflect.ValueOf(uint64(1_000_000_000)), true},
	} {
		sec, ok := Expiry(tc.fv, time.Hour, tc.ms)
		assert.True(t, ok, tc.fv.Type())
		assert.Equal(t, int64(1_003_600), sec, tc.fv.Type())
	}
	_, ok := Expiry(reflect.ValueOf(time.Time{}), time.Hour, false)
	assert.False(t, ok, "a zero base")
	_, ok = Expiry(reflect.ValueOf((*time.Time)(nil)), time.Hour, false)
	assert.False(t, ok, "a nil base")

	var v struct {
		I  int64
		P  *time.Time
		U8 uint8
	}
	rv := reflect.ValueOf(&v).Elem()
	require.NoError(t, Store(rv.Field(0), 42, true, "ttl", errInvalid))
	assert.Equal(t, int64(42), v.I)
	require.NoError(t, Store(rv.Field(0), 0, false, "ttl", errInvalid))
	assert.Zero(t, v.I)
	require.NoError(t, Store(rv.Field(1), 42, true, "ttl", errInvalid))
	assert.Equal(t, int64(42), v.P.Unix())
	err := Store(rv.Field(2), 300, true, "ttl (T.U8)", errInvalid)
	assert.ErrorIs(t, err, errInvalid)
	assert.EqualError(t, err, "singletable: ttl (T.U8): 300 does not fit uint8: invalid input")
}

// TestRule judges TTLs as DynamoDB deletes them, in the filter and in Expired alike.
func TestRule(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	oldest := Oldest(now)
	assert.Equal(t, now.AddDate(-5, 0, 0).Unix(), oldest)
	assert.Equal(t, int64(1), Oldest(time.Unix(100, 0)))
	for n, want := range map[string]bool{
		"2000000000": true, "2000000001": false, "1999999999.5": true, "2e9": true, "2.000000001e9": false,
		"0": false, "-5": false, "x": false, strconv.FormatInt(oldest, 10): true, strconv.FormatInt(oldest-1, 10): false,
	} {
		assert.Equal(t, want, Expired(n, now.Unix(), oldest), n)
	}
	var b expr.Builder
	assert.Equal(t, "attribute_not_exists(#n0) OR NOT attribute_type(#n0, :v0) OR #n0 > :v1 OR #n0 < :v2", Filter(&b, "ttl", now.Unix(), oldest))
	assert.Equal(t, &types.AttributeValueMemberN{Value: "2000000000"}, b.Values()[":v1"])
}

// ttlClient is a TTLClient that reports status on attribute cur.
type ttlClient struct {
	cur     string
	status  types.TimeToLiveStatus
	updated *string
}

func (c *ttlClient) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	d := &types.TimeToLiveDescription{TimeToLiveStatus: c.status}
	if c.cur != "" {
		d.AttributeName = aws.String(c.cur)
	}
	return &dynamodb.DescribeTimeToLiveOutput{TimeToLiveDescription: d}, nil
}

func (c *ttlClient) UpdateTimeToLive(_ context.Context, in *dynamodb.UpdateTimeToLiveInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	c.updated = in.TimeToLiveSpecification.AttributeName
	return &dynamodb.UpdateTimeToLiveOutput{}, nil
}

// TestEnable turns TTL on unless it is on, and refuses another attribute's.
func TestEnable(t *testing.T) {
	c := &ttlClient{}
	require.NoError(t, Enable(t.Context(), c, aws.String("t"), "ttl", errInvalid))
	assert.Equal(t, "ttl", aws.ToString(c.updated))
	c = &ttlClient{cur: "ttl", status: types.TimeToLiveStatusEnabled}
	require.NoError(t, Enable(t.Context(), c, aws.String("t"), "ttl", errInvalid))
	assert.Nil(t, c.updated, "on already")
	c = &ttlClient{cur: "expires", status: types.TimeToLiveStatusEnabling}
	err := Enable(t.Context(), c, aws.String("t"), "ttl", errInvalid)
	assert.EqualError(t, err, `TTL is on for attribute "expires", not "ttl"; DynamoDB allows one: invalid input`)
	c = &ttlClient{cur: "expires", status: types.TimeToLiveStatusDisabled}
	require.NoError(t, Enable(t.Context(), c, aws.String("t"), "ttl", errInvalid))
	assert.Equal(t, "ttl", aws.ToString(c.updated))
}

// TestFieldAndBaseProblems refuses fields that cannot hold or feed a TTL.
func TestFieldAndBaseProblems(t *testing.T) {
	type item struct {
		Unix  time.Time  `dynamodbav:"unix,unixtime"`
		Text  time.Time  `dynamodbav:"text"`
		Sec   *int64     `dynamodbav:"sec"`
		AsStr int64      `dynamodbav:"asStr,string"`
		Name  string     `dynamodbav:"name"`
		PText *time.Time `dynamodbav:"ptext"`
	}
	plan, err := codec.PlanFor(reflect.TypeFor[item]())
	require.NoError(t, err)
	field := func(name string) *codec.Field {
		f, ok := plan.Field(name)
		require.True(t, ok, name)
		return f
	}
	assert.Empty(t, FieldProblem(field("unix")))
	assert.Empty(t, FieldProblem(field("sec")))
	assert.Contains(t, FieldProblem(field("text")), `tag it dynamodbav:"text,unixtime"`)
	assert.Contains(t, FieldProblem(field("asStr")), "the string option stores the number as text")
	assert.Contains(t, FieldProblem(field("name")), "not string")
	for _, name := range []string{"unix", "text", "sec", "ptext"} {
		assert.Empty(t, BaseProblem(field(name)), name)
	}
	assert.Equal(t, "the base must be a time.Time or an integer of Unix seconds, not int64", BaseProblem(field("asStr")))
	assert.Contains(t, BaseProblem(field("name")), "not string")
}

// TestLegacyAdapt: a write storing a derived ttl with if_not_exists is adapted
// to an item that holds its base and no ttl, once, and to no other.
func TestLegacyAdapt(t *testing.T) {
	var b expr.Builder
	derive := func(base types.AttributeValue) (types.AttributeValue, bool) {
		s, ok := base.(*types.AttributeValueMemberS)
		if !ok || s.Value == "" {
			return nil, false
		}
		return &types.AttributeValueMemberN{Value: "42"}, true
	}
	l, guard := NewLegacy(&b, "ttl", "createdAt", derive)
	ttl := b.Name("ttl")
	ph := b.Value(&types.AttributeValueMemberN{Value: "7"})
	update := "SET " + ttl + " = if_not_exists(" + ttl + ", " + ph + ")"
	cond := "(#t = :x) AND (" + guard + ")"
	base := &types.AttributeValueMemberS{Value: "2020-01-01T00:00:00Z"}

	assert.False(t, l.Adapt(&b, update, &cond, map[string]types.AttributeValue{"ttl": &types.AttributeValueMemberN{Value: "1"}, "createdAt": base}), "a ttl stored: nothing to adapt")
	assert.False(t, l.Adapt(&b, update, &cond, map[string]types.AttributeValue{}), "no base: nothing to adapt")
	assert.False(t, l.Adapt(&b, update, &cond, nil))
	require.True(t, l.Adapt(&b, update, &cond, map[string]types.AttributeValue{"createdAt": base}))
	assert.Equal(t, &types.AttributeValueMemberN{Value: "42"}, b.Values()[ph], "the ttl derived from the stored base")
	assert.NotContains(t, cond, guard)
	assert.Contains(t, cond, b.Name("createdAt")+" = :v")
	assert.False(t, l.Adapt(&b, update, &cond, map[string]types.AttributeValue{"createdAt": base}), "once")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "42"}, l.Stored(map[string]types.AttributeValue{"createdAt": base}))
	assert.Nil(t, l.Stored(map[string]types.AttributeValue{}))
	var none *Legacy
	assert.False(t, none.Adapt(&b, update, &cond, nil))
	assert.Nil(t, none.Stored(nil))
}
