package singletable

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

// Bad input: attribute names. The index of the bad-input tests is at the top of
// badinput_test.go.

// recordingClient records the expressions and names of every request, to check
// that nothing was built by pasting names or values into expression text.
type recordingClient struct {
	Client
	mu    sync.Mutex // protects exprs and names
	exprs []string
	names []map[string]string
}

func (c *recordingClient) record(names map[string]string, exprs ...*string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range exprs {
		if e != nil {
			c.exprs = append(c.exprs, *e)
		}
	}
	if names != nil {
		c.names = append(c.names, names)
	}
}

func (c *recordingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.record(in.ExpressionAttributeNames, in.ProjectionExpression)
	return c.Client.GetItem(ctx, in, o...)
}

func (c *recordingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.record(in.ExpressionAttributeNames, in.ConditionExpression)
	return c.Client.PutItem(ctx, in, o...)
}

func (c *recordingClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.record(in.ExpressionAttributeNames, in.UpdateExpression, in.ConditionExpression)
	return c.Client.UpdateItem(ctx, in, o...)
}

func (c *recordingClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.record(in.ExpressionAttributeNames, in.ConditionExpression)
	return c.Client.DeleteItem(ctx, in, o...)
}

func (c *recordingClient) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.record(in.ExpressionAttributeNames, in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression)
	return c.Client.Query(ctx, in, o...)
}

func (c *recordingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			c.record(it.Put.ExpressionAttributeNames, it.Put.ConditionExpression)
		case it.Update != nil:
			c.record(it.Update.ExpressionAttributeNames, it.Update.UpdateExpression, it.Update.ConditionExpression)
		case it.Delete != nil:
			c.record(it.Delete.ExpressionAttributeNames, it.Delete.ConditionExpression)
		case it.ConditionCheck != nil:
			c.record(it.ConditionCheck.ExpressionAttributeNames, it.ConditionCheck.ConditionExpression)
		}
	}
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// biAwkward has attribute names that are DynamoDB reserved words, function
// names, and names holding the characters of expression syntax.
type biAwkward struct {
	_         struct{}          `Type:"BiAwkward" PK:"AW#{a.b}" SK:"{status}" GSI1PK:"SIZE#{size}" GSI1SK:"{#x}#{a.b}"`
	Dotted    string            `dynamodbav:"a.b"`
	Status    string            `dynamodbav:"status"`
	Size      string            `dynamodbav:"size,omitempty"`
	Hash      string            `dynamodbav:"#x"`
	Colon     string            `dynamodbav:":y"`
	Name      string            `dynamodbav:"name"`
	Date      string            `dynamodbav:"date"`
	Count     int               `dynamodbav:"count"`
	Exists    string            `dynamodbav:"attribute_exists"`
	Space     string            `dynamodbav:"with space"`
	Bracket   string            `dynamodbav:"list[0]"`
	Unicode   string            `dynamodbav:"Ünïcödé"`
	Operators string            `dynamodbav:"a=b AND c<>d"`
	Map       map[string]string `dynamodbav:"map"`
	Version   int64             `dynamodbav:"version" singletable:"version"`
}

// expressionWords are the only bare words an expression the library sends may
// hold: keywords and function names. Names and values are placeholders.
var expressionWords = map[string]bool{
	"SET": true, "REMOVE": true, "ADD": true, "DELETE": true, "AND": true, "OR": true, "NOT": true,
	"BETWEEN": true, "IN": true, "attribute_exists": true, "attribute_not_exists": true,
	"attribute_type": true, "begins_with": true, "contains": true, "size": true,
	"if_not_exists": true, "list_append": true,
}

var (
	placeholderRE = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)
	wordRE        = regexp.MustCompile(`[^\s()=<>,+\-.\[\]0-9]+`)
)

func TestBadInputReservedWordsAndSpecialNames(t *testing.T) {
	rec := &recordingClient{Client: local.Client(t)}
	tbl, err := NewTable(rec, localtest.TableName(t), testTableOptions)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, tbl.CreateTable(ctx))
	t.Cleanup(func() { _ = tbl.DeleteTable(context.Background()) })
	aw, err := Register[biAwkward](tbl)
	require.NoError(t, err, "awkward attribute names are legal")

	v := biAwkward{Dotted: "d", Status: "open", Size: "XL", Hash: "h", Colon: "c", Name: "n", Date: "2024", Count: 1,
		Exists: "e", Space: "s", Bracket: "b", Unicode: "u", Operators: "o", Map: map[string]string{"a.b": "1", "#x": "2", ":y": "3"}}
	v, err = aw.Create(ctx, v)
	require.NoError(t, err)
	got, err := aw.Get(ctx, v, Consistent())
	require.NoError(t, err)
	assert.Equal(t, v, got)

	// Every stored attribute as its own name, not a document path: "a.b" is not
	// b inside a, "list[0]" is not an element of list.
	raw := rawItem(t, tbl, "AW#d", "open")
	for _, name := range []string{"a.b", "status", "size", "#x", ":y", "name", "date", "count", "attribute_exists", "with space", "list[0]", "Ünïcödé", "a=b AND c<>d"} {
		assert.Contains(t, raw, name)
	}
	assert.Equal(t, sAV("SIZE#XL"), raw["GSI1PK"])
	assert.Equal(t, sAV("h#d"), raw["GSI1SK"])

	// Update every awkward name, with a condition on them, then remove some.
	v, err = aw.Update(ctx, v,
		Set("a=b AND c<>d", "o2"), Set("#x", "h2"), Set(":y", "c2"), Set("name", "n2"), Set("with space", "s2"),
		Set("list[0]", "b2"), Set("Ünïcödé", "u2"), Add("count", 2), Set("size", "L"),
		If(expression.NameNoDotSplit("a.b").Equal(expression.Value("d")).And(expression.Name("attribute_exists").Equal(expression.Value("e")))))
	require.NoError(t, err)
	assert.Equal(t, 3, v.Count)
	assert.Equal(t, "h2", v.Hash)
	v, err = aw.Update(ctx, v, Remove("date", "list[0]", "attribute_exists"))
	require.NoError(t, err)
	assert.Empty(t, v.Date)

	// Queries with filters on them, on the base table and the index whose keys
	// they feed.
	page, err := aw.Query(ctx, biAwkward{Dotted: "d"}, SKEqual("open"),
		Filter(expression.NameNoDotSplit(":y").Equal(expression.Value("c2")).And(expression.Name("size").Equal(expression.Value("L")))))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	page, err = aw.Query(ctx, biAwkward{Size: "L"}, On("GSI1"), SKBeginsWith("h2#"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, v, page.Items[0])

	// A transaction and a versioned delete.
	require.NoError(t, tbl.Transact(ctx, aw.TxUpdate(v, Set("with space", "tx"))))
	v.Version++
	require.NoError(t, aw.Delete(ctx, v, If(expression.NameNoDotSplit("with space").Equal(expression.Value("tx")))))
	_, err = aw.Get(ctx, v)
	assert.ErrorIs(t, err, ErrNotFound)

	// What was sent: only placeholders, keywords and functions in expression text;
	// the names themselves only in ExpressionAttributeNames, whole.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.exprs)
	for _, e := range rec.exprs {
		rest := placeholderRE.ReplaceAllString(e, " ")
		for _, w := range wordRE.FindAllString(rest, -1) {
			assert.True(t, expressionWords[w], "bare word %q in expression %q", w, e)
		}
	}
	names := map[string]bool{}
	for _, m := range rec.names {
		for _, n := range m {
			names[n] = true
		}
	}
	for _, name := range []string{"a.b", "#x", ":y", "with space", "list[0]", "Ünïcödé", "a=b AND c<>d", "attribute_exists", "size", "count", "name"} {
		assert.True(t, names[name], "%q was sent as one name", name)
	}
}

// Attribute names that only differ from the table's key, type, receipt or schema
// attributes in case: attributevalue's decoding (and so the codec's) matches names
// ignoring case when no field has the exact name, so reading an item would fill
// these fields from the key or type attribute.
type (
	biFoldType struct {
		_    struct{} `Type:"BiFoldType" PK:"FT#{id}" SK:"FT"`
		ID   string   `dynamodbav:"id"`
		Kind string   `dynamodbav:"type"`
	}
	biFoldKey struct {
		_  struct{} `Type:"BiFoldKey" PK:"FK#{id}" SK:"FK"`
		ID string   `dynamodbav:"id"`
		Pk string   `dynamodbav:"pk"`
	}
	biFoldIndexKey struct {
		_    struct{} `Type:"BiFoldIndexKey" PK:"FI#{id}" SK:"FI"`
		ID   string   `dynamodbav:"id"`
		Gsi1 string   `dynamodbav:"gsi1pk"`
	}
	biFoldReceipt struct {
		_       struct{} `Type:"BiFoldReceipt" PK:"FR#{id}" SK:"FR"`
		ID      string   `dynamodbav:"id"`
		Receipt string   `dynamodbav:"_WR1"`
		Version int64    `dynamodbav:"version" singletable:"version"`
	}
	// biEmbedsKey promotes a field named like the sort key from an embedded struct.
	biEmbedsKey struct {
		_  struct{} `Type:"BiEmbedsKey" PK:"EK#{id}" SK:"EK"`
		ID string   `dynamodbav:"id"`
		biSortKeyHolder
	}
	biSortKeyHolder struct {
		SK string
	}
	// biNested keeps a map whose keys are the names of the table's key, type,
	// version, receipt and schema attributes.
	biNested struct {
		_       struct{}          `Type:"BiNested" PK:"N#{id}" SK:"N" GSI1PK:"NG#{group}" GSI1SK:"{id}"`
		ID      string            `dynamodbav:"id"`
		Group   string            `dynamodbav:"group"`
		Attrs   map[string]string `dynamodbav:"attrs"`
		Version int64             `dynamodbav:"version" singletable:"version"`
	}
)

func TestBadInputNamesThatWouldOverwriteReservedAttributes(t *testing.T) {
	tbl, client := newTestTable(t)
	ctx := context.Background()

	t.Run("fields named like reserved attributes are refused at registration", func(t *testing.T) {
		for name, reg := range map[string]func() error{
			"biEmbedsKey.SK": func() error { _, err := Register[biEmbedsKey](offlineTable(t)); return err },
		} {
			err := reg()
			require.ErrorIs(t, err, ErrInvalidEntity, name)
			assert.Contains(t, err.Error(), name)
		}
	})

	t.Run("fields named like reserved attributes but for case are refused at registration", func(t *testing.T) {
		for name, reg := range map[string]func(*Table) error{
			"biFoldType.Kind":     func(t *Table) error { _, err := Register[biFoldType](t); return err },
			"biFoldKey.Pk":        func(t *Table) error { _, err := Register[biFoldKey](t); return err },
			"biFoldIndexKey.Gsi1": func(t *Table) error { _, err := Register[biFoldIndexKey](t); return err },
			"biFoldReceipt.Receipt": func(t *Table) error {
				_, err := Register[biFoldReceipt](t)
				return err
			},
		} {
			err := reg(offlineTable(t))
			require.ErrorIs(t, err, ErrInvalidEntity, "%s: a field whose name folds to a reserved attribute is accepted", name)
			assert.Contains(t, err.Error(), name)
		}
	})

	t.Run("a map field's keys stay inside it", func(t *testing.T) {
		nested := MustRegister[biNested](tbl)
		v := biNested{ID: "1", Group: "g", Attrs: map[string]string{
			"PK": "EVIL", "SK": "EVIL", "Type": "Other", "version": "99", "_wr1": "forged", "_schema": "9", "GSI1PK": "EVIL",
		}}
		v, err := nested.Put(ctx, v)
		require.NoError(t, err)
		raw := rawItem(t, tbl, "N#1", "N")
		assert.Equal(t, sAV("BiNested"), raw["Type"])
		assert.Equal(t, &types.AttributeValueMemberN{Value: "1"}, raw["version"])
		assert.Equal(t, sAV("NG#g"), raw["GSI1PK"])
		assert.NotContains(t, raw, "_schema")
		got, err := nested.Get(ctx, v, Consistent())
		require.NoError(t, err)
		assert.Equal(t, v, got)
		page, err := nested.Query(ctx, biNested{Group: "g"}, On("GSI1"))
		require.NoError(t, err)
		assert.Len(t, page.Items, 1)
		// The version still guards the item.
		_, err = nested.Update(ctx, v, Set("group", "h"))
		require.NoError(t, err)
		_, err = nested.Update(ctx, biNested{ID: "1", Group: "g", Version: 1}, Set("group", "i"))
		assert.ErrorIs(t, err, ErrConflict)
	})

	t.Run("updates cannot name reserved attributes", func(t *testing.T) {
		nested := MustRegister[biCounterish](tbl)
		_, err := nested.Put(ctx, biCounterish{ID: "u"})
		require.NoError(t, err)
		before := sentCount(client)
		for _, attr := range []string{"PK", "SK", "Type", "GSI1PK", "GSI1SK", "version", "_wr0", "_wr1", "_schema", "id"} {
			for _, opt := range []UpdateOption{Set(attr, "x"), Remove(attr), Add(attr, 1)} {
				_, err := nested.Update(ctx, biCounterish{ID: "u", Version: 1}, opt)
				assert.ErrorIs(t, err, ErrInvalidInput, "an update of %q", attr)
			}
		}
		assert.Equal(t, before, sentCount(client), "nothing was sent")
	})

	t.Run("a migration step may not rewrite reserved attributes", func(t *testing.T) {
		for _, attr := range []string{"PK", "SK", "Type", "version"} {
			t.Run(attr, func(t *testing.T) {
				mtbl, _ := newTestTable(t)
				steps := Migrations(Migration[biCounterish]{Steps: []Step[biCounterish]{{Raw: func(item RawItem) error {
					if attr == "version" {
						item[attr] = &types.AttributeValueMemberN{Value: "99"}
					} else {
						item[attr] = sAV("EVIL")
					}
					return nil
				}}}})
				e, err := Register[biCounterish](mtbl, steps)
				require.NoError(t, err)
				// An item at schema version 1, as an older program wrote it.
				_, err = mtbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(mtbl.Name()), Item: map[string]types.AttributeValue{
					"PK": sAV("CI#m"), "SK": sAV("CI"), "Type": sAV("BiCounterish"), "id": sAV("m"), "n": &types.AttributeValueMemberN{Value: "5"},
					"version": &types.AttributeValueMemberN{Value: "3"}, "_wr1": sAV("receipt"),
				}})
				require.NoError(t, err)
				_, err = e.Get(ctx, biCounterish{ID: "m"}, Consistent())
				var me *MigrationError
				assert.ErrorAs(t, err, &me, "a step that rewrote %q was accepted", attr)
				if err != nil {
					assert.Contains(t, err.Error(), attr)
				}
				raw := rawItem(t, mtbl, "CI#m", "CI")
				assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, raw["version"], "the stored version was rewritten")
				assert.Equal(t, sAV("receipt"), raw["_wr1"])
				assert.Equal(t, sAV("BiCounterish"), raw["Type"])
			})
		}
	})
}

// biCounterish is a small versioned entity.
type biCounterish struct {
	_       struct{} `Type:"BiCounterish" PK:"CI#{id}" SK:"CI" GSI1PK:"CIG#{id}" GSI1SK:"CI"`
	ID      string   `dynamodbav:"id"`
	N       int      `dynamodbav:"n"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}
