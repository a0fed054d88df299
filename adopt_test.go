package singletable

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adCustomer's items were written before the library by another program: PK
// CUST#id, SK PROFILE, no type attribute, no index keys.
type adCustomer struct {
	_       struct{} `Type:"AdCustomer" PK:"CUST#{id}" SK:"PROFILE" GSI1PK:"EMAIL#{email}" GSI1SK:"CUST#{id}"`
	ID      string   `dynamodbav:"id"`
	Email   string   `dynamodbav:"email"`
	Name    string   `dynamodbav:"name"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

func putLegacy(t *testing.T, tbl *Table, id, email string) {
	t.Helper()
	_, err := tbl.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": sAV("CUST#" + id), "SK": sAV("PROFILE"), "id": sAV(id), "email": sAV(email), "name": sAV("legacy " + id),
	}})
	require.NoError(t, err)
}

func adRaw(t *testing.T, tbl *Table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := tbl.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()),
		Key: map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV(sk)}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	return out.Item
}

// TestAdoptUntyped: items written before the library (no type attribute) are
// refused by default (ErrTypeMismatch: they may be another entity's); with
// AdoptUntyped, a Get decodes one and stamps the type, schema and index keys, a
// Sweep stamps the rest, and Queries of the index list them afterwards; writes
// accept the untyped item at the key; an untyped item whose key the entity's
// templates do not parse is not adopted (issue 37, scenario 19).
func TestAdoptUntyped(t *testing.T) {
	ctx := context.Background()
	t.Run("without the opt-in", func(t *testing.T) {
		tbl, _ := newTestTable(t)
		customers := MustRegister[adCustomer](tbl)
		putLegacy(t, tbl, "c1", "a@x")
		_, err := customers.Get(ctx, adCustomer{ID: "c1"})
		require.ErrorIs(t, err, ErrTypeMismatch)
		_, err = customers.Update(ctx, adCustomer{ID: "c1"}, Set("name", "n"), Clobber())
		require.ErrorIs(t, err, ErrTypeMismatch)
		assert.NotContains(t, adRaw(t, tbl, "CUST#c1", "PROFILE"), "Type")
	})

	tbl, _ := newTestTable(t)
	customers := MustRegister[adCustomer](tbl, AdoptUntyped())
	for _, id := range []string{"c1", "c2", "c3"} {
		putLegacy(t, tbl, id, id+"@x")
	}
	// Another program's untyped item whose key is not the entity's: left alone.
	_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": sAV("CUST#c1"), "SK": sAV("SETTINGS"), "theme": sAV("dark")}})
	require.NoError(t, err)

	// A Get decodes it and stamps it (the default write-back is on the read).
	got, err := customers.Get(ctx, adCustomer{ID: "c1"})
	require.NoError(t, err)
	assert.Equal(t, adCustomer{ID: "c1", Email: "c1@x", Name: "legacy c1"}, got)
	raw := adRaw(t, tbl, "CUST#c1", "PROFILE")
	assert.Equal(t, sAV("AdCustomer"), raw["Type"])
	assert.Equal(t, sAV("EMAIL#c1@x"), raw["GSI1PK"], "index keys stamped")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1"}, raw["_schema"])
	assert.Equal(t, sAV("legacy c1"), raw["name"], "nothing else changed")

	// An Update of an untyped item accepts it as the entity's, and stamps it.
	_, err = customers.Update(ctx, adCustomer{ID: "c2"}, Set("name", "Bo"), Clobber())
	require.NoError(t, err)
	assert.Equal(t, sAV("AdCustomer"), adRaw(t, tbl, "CUST#c2", "PROFILE")["Type"])

	// The Sweep stamps the rest; the index then lists every customer.
	stats, err := customers.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), stats.Migrated, "c3, and c2, which the Update typed but could not give its index keys (c1 is stamped)")
	assert.Zero(t, stats.Failed)
	assert.Equal(t, sAV("AdCustomer"), adRaw(t, tbl, "CUST#c3", "PROFILE")["Type"])
	for _, id := range []string{"c1", "c2", "c3"} {
		page, err := customers.Query(ctx, adCustomer{Email: id + "@x"}, On("GSI1"))
		require.NoError(t, err)
		require.Len(t, page.Items, 1, id)
		assert.Equal(t, id, page.Items[0].ID)
	}
	again, err := customers.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, again.Migrated, "every item stamped")
	settings := adRaw(t, tbl, "CUST#c1", "SETTINGS")
	assert.NotContains(t, settings, "Type", "not the entity's key: not adopted")
	assert.Len(t, settings, 3)

	// A Get at a key whose untyped item the entity's template does not parse is
	// still refused: only the entity's keys are adopted.
	type adSettings struct {
		_     struct{} `Type:"AdSettings" PK:"CUST#{id}" SK:"SETTINGS"`
		ID    string   `dynamodbav:"id"`
		Theme string   `dynamodbav:"theme"`
	}
	settingsE := MustRegister[adSettings](tbl)
	_, err = settingsE.Get(ctx, adSettings{ID: "c1"})
	assert.ErrorIs(t, err, ErrTypeMismatch, "adSettings does not adopt")
}
