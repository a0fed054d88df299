package singletable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type uUser struct {
	_     struct{} `Type:"User" PK:"USER#{id}" SK:"PROFILE"`
	ID    string   `dynamodbav:"id"`
	Email string   `dynamodbav:"email,omitempty" singletable:"unique"`
	Name  string   `dynamodbav:"name"`
}

type uAccount struct {
	_     struct{} `Type:"Account" PK:"ACC#{id}" SK:"ACC" singletable:"unique=orgId+slug"`
	ID    string   `dynamodbav:"id"`
	OrgID int      `dynamodbav:"orgId,omitempty"`
	Slug  string   `dynamodbav:"slug,omitempty"`
}

type uNote struct {
	_    struct{} `Type:"Note" PK:"USER#{owner}" SK:"NOTE#{id}"`
	Own  string   `dynamodbav:"owner"`
	ID   string   `dynamodbav:"id"`
	Text string   `dynamodbav:"text"`
}

// guardsOf returns the guard items in the table, read raw, by the value their
// _values list holds (as text).
func guardsOf(t *testing.T, tbl *Table) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(tbl.client, &dynamodb.ScanInput{TableName: aws.String(tbl.name), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if typ, _ := it[tbl.opts.TypeAttribute].(*types.AttributeValueMemberS); typ == nil || typ.Value != uniqueType {
				continue
			}
			vs := it[guardValues].(*types.AttributeValueMemberL).Value
			out[valuesText(vs)] = it
		}
	}
	return out
}

func ownerOf(g map[string]types.AttributeValue) string {
	if g == nil {
		return ""
	}
	return g[guardOwner].(*types.AttributeValueMemberS).Value
}

func TestUniqueCreateWritesGuardInvisibleToReads(t *testing.T) {
	tbl, client := newTestTable(t)
	users := MustRegister[uUser](tbl)
	notes := MustRegister[uNote](tbl)
	ctx := context.Background()

	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io", Name: "Ann"})
	require.NoError(t, err)
	_, err = notes.Put(ctx, uNote{Own: "1", ID: "n1", Text: "hi"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, client.count("TransactWriteItems"), "a unique Create is one transaction")
	assert.EqualValues(t, 0, client.count("PutItem")-1, "and no PutItem of its own (the one PutItem is the note's)")

	guards := guardsOf(t, tbl)
	require.Len(t, guards, 1)
	g := guards["a@x.io"]
	require.NotNil(t, g)
	assert.Equal(t, `["USER#1","PROFILE"]`, ownerOf(g))
	pk := g[tbl.opts.PartitionKey].(*types.AttributeValueMemberS).Value
	assert.Regexp(t, `^#singletable#unique#User#email#[0-9a-f]{64}$`, pk, "the guard key names type and constraint and hashes the value")

	// Invisible to every read path.
	var all []any
	for v, err := range tbl.ScanAll(ctx) { // OnUnknown's default is an error for unknown types
		require.NoError(t, err)
		all = append(all, v)
	}
	assert.Len(t, all, 2, "the user and the note, never the guard")
	page, err := tbl.Scan(ctx, OnUnknown(UnknownCollect))
	require.NoError(t, err)
	for _, it := range page.Items {
		_, raw := it.(RawItem)
		assert.False(t, raw, "a guard is not an unknown item")
	}
	n, err := tbl.ScanCount(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, n.Items)
	us, err := users.Scan(ctx)
	require.NoError(t, err)
	assert.Len(t, us.Items, 1)
	c, err := users.ScanCount(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Items)
	q, err := tbl.Query(ctx, uUser{ID: "1"})
	require.NoError(t, err)
	assert.Len(t, q.Items, 2, "the user's collection: the user and the note")
	decoded, err := tbl.Decode(g)
	require.NoError(t, err)
	assert.Nil(t, decoded, "Decode passes a guard over")
	got, err := users.Get(ctx, uUser{ID: "1"})
	require.NoError(t, err)
	assert.Equal(t, "a@x.io", got.Email)
}

func TestUniqueConcurrentClaimOneWins(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	const n = 16
	var wins atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = users.Create(ctx, uUser{ID: fmt.Sprint("c", i), Email: "same@x.io"})
			if errs[i] == nil {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.EqualValues(t, 1, wins.Load(), "exactly one writer claims the value: %v", errs)
	for _, err := range errs {
		if err == nil {
			continue
		}
		require.ErrorIs(t, err, ErrNotUnique)
		require.ErrorIs(t, err, ErrAlreadyExists)
		var ue *UniqueError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, "uUser", ue.Entity)
		assert.Equal(t, []string{"Email"}, ue.Fields)
		assert.Equal(t, []string{"same@x.io"}, ue.Values)
		assert.Contains(t, err.Error(), "uUser.Email")
	}
	c, err := users.ScanCount(ctx, Consistent())
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Items, "one user")
	assert.Len(t, guardsOf(t, tbl), 1, "one guard")
}

func TestUniqueErrorNamesHolder(t *testing.T) {
	tbl, _ := newTestTable(t)
	users := MustRegister[uUser](tbl)
	ctx := context.Background()
	_, err := users.Create(ctx, uUser{ID: "1", Email: "a@x.io"})
	require.NoError(t, err)
	_, err = users.Put(ctx, uUser{ID: "2", Email: "a@x.io"})
	var ue *UniqueError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, map[string]string{"PK": "USER#1", "SK": "PROFILE"}, ue.Owner)
	assert.False(t, errors.Is(err, ErrAmbiguous))
	_, err = users.Get(ctx, uUser{ID: "2"}, Consistent())
	require.ErrorIs(t, err, ErrNotFound, "nothing written")
}
