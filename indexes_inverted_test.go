package singletable

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The adjacency list's inverted index: partition key SK, sort key PK. A user
// belongs to groups (PK USER#u, SK GROUP#g); the inverted index lists a group's
// members.

type invMembership struct {
	_      struct{} `Type:"Membership" PK:"USER#{userId}" SK:"GROUP#{groupId}"`
	UserID string   `dynamodbav:"userId"`
	Group  string   `dynamodbav:"groupId"`
	Role   string   `dynamodbav:"role"`
}

type invUser struct {
	_      struct{} `Type:"User" PK:"USER#{userId}" SK:"PROFILE"`
	UserID string   `dynamodbav:"userId"`
	Name   string   `dynamodbav:"name"`
}

var invertedIndex = WithIndex("Inverted", "SK", "PK")

// TestInvertedIndex: WithIndex("Inverted", "SK", "PK") is accepted (issue 37,
// scenario 12): CreateTable, Describe and the definitions declare it, entities
// register with their keys read the other way round, a query of the index lists
// a group's members sorted by user, and the collision proof of the base keys
// still refuses two entities that render one key.
func TestInvertedIndex(t *testing.T) {
	tbl, _ := newTestTable(t, invertedIndex)
	members := MustRegister[invMembership](tbl)
	users := MustRegister[invUser](tbl)
	ctx := context.Background()

	in, err := tbl.CreateTableInput()
	require.NoError(t, err)
	var found bool
	for _, ix := range in.GlobalSecondaryIndexes {
		if aws.ToString(ix.IndexName) == "Inverted" {
			found = true
			assert.Equal(t, "SK", aws.ToString(ix.KeySchema[0].AttributeName))
			assert.Equal(t, "HASH", string(ix.KeySchema[0].KeyType))
			assert.Equal(t, "PK", aws.ToString(ix.KeySchema[1].AttributeName))
			assert.Equal(t, "RANGE", string(ix.KeySchema[1].KeyType))
		}
	}
	assert.True(t, found)
	names := map[string]int{}
	for _, d := range in.AttributeDefinitions {
		names[aws.ToString(d.AttributeName)]++
	}
	assert.Equal(t, 1, names["PK"], "each attribute defined once")
	assert.Equal(t, 1, names["SK"])
	desc, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	assert.Len(t, desc.Table.GlobalSecondaryIndexes, 4, "created on DynamoDB Local with the others")

	for _, m := range []invMembership{{UserID: "u2", Group: "admins", Role: "owner"}, {UserID: "u1", Group: "admins", Role: "member"}, {UserID: "u1", Group: "devs", Role: "member"}, {UserID: "u3", Group: "devs", Role: "member"}} {
		_, err := members.Put(ctx, m)
		require.NoError(t, err)
	}
	_, err = users.Put(ctx, invUser{UserID: "u1", Name: "Ann"})
	require.NoError(t, err)

	page, err := members.Query(ctx, invMembership{Group: "admins"}, On("Inverted"))
	require.NoError(t, err)
	var got []string
	for _, m := range page.Items {
		got = append(got, m.UserID+":"+m.Role)
	}
	assert.Equal(t, []string{"u1:member", "u2:owner"}, got, "the group's members, sorted by PK")
	// The base table reads as before.
	mine, err := members.Query(ctx, invMembership{UserID: "u1"})
	require.NoError(t, err)
	assert.Len(t, mine.Items, 2)
	// A sort key condition on the index's sort key, the table's partition key.
	after, err := members.Query(ctx, invMembership{Group: "admins"}, On("Inverted"), SK[invMembership]().GreaterThan(invMembership{UserID: "u1"}))
	require.NoError(t, err)
	require.Len(t, after.Items, 1)
	assert.Equal(t, "u2", after.Items[0].UserID)
	n, err := members.Count(ctx, invMembership{Group: "devs"}, On("Inverted"))
	require.NoError(t, err)
	assert.Equal(t, 2, n.Items)

	d := tbl.Describe()
	require.NotNil(t, d)
	def, err := tbl.Definition()
	require.NoError(t, err)
	cf, err := def.CloudFormationJSON()
	require.NoError(t, err)
	assert.Contains(t, string(cf), `"Inverted"`)
	tf, err := def.Terraform()
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(tf), `"Inverted"`), string(tf))
}

// TestInvertedIndexCollisionStillProven: the base table's collision proof is
// unchanged by an inverted index: two entities that render one primary key are
// refused.
func TestInvertedIndexCollisionStillProven(t *testing.T) {
	tbl := offlineTable(t, invertedIndex)
	MustRegister[invMembership](tbl)
	type clash struct {
		_ struct{} `Type:"Clash" PK:"USER#{a}" SK:"GROUP#{b}"`
		A string   `dynamodbav:"a"`
		B string   `dynamodbav:"b"`
	}
	_, err := Register[clash](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
}
