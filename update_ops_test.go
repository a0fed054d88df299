package singletable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

type opsGeo struct {
	Lat float64 `dynamodbav:"lat"`
	Lng float64 `dynamodbav:"lng"`
}

type opsAddress struct {
	City string  `dynamodbav:"city"`
	Zip  string  `dynamodbav:"zip,omitempty"`
	Geo  *opsGeo `dynamodbav:"geo,omitempty"`
}

type opsLine struct {
	SKU string `dynamodbav:"sku"`
	Qty int    `dynamodbav:"qty"`
}

// opsDoc has lists, sets, a nested struct, a list of structs and a map; category
// feeds an index key.
type opsDoc struct {
	_        struct{}          `Type:"OpsDoc" PK:"OPS#{id}" SK:"OPS" GSI1PK:"CAT#{category}" GSI1SK:"{id}"`
	ID       string            `dynamodbav:"id"`
	Category string            `dynamodbav:"category,omitempty"`
	Tags     []string          `dynamodbav:"tags"`
	Labels   []string          `dynamodbav:"labels,stringset,omitempty"`
	Scores   []int             `dynamodbav:"scores,numberset,omitempty"`
	Address  opsAddress        `dynamodbav:"address"`
	Lines    []opsLine         `dynamodbav:"lines"`
	Meta     map[string]string `dynamodbav:"meta"`
	Nick     string            `dynamodbav:"nick,omitempty"`
	Fixed    [3]int            `dynamodbav:"fixed"`
	Any      any               `dynamodbav:"any"`
	N        int               `dynamodbav:"n"`
}

// opsVDoc is opsDoc's versioned twin.
type opsVDoc struct {
	_       struct{} `Type:"OpsVDoc" PK:"OPSV#{id}" SK:"OPSV"`
	ID      string   `dynamodbav:"id"`
	Tags    []string `dynamodbav:"tags"`
	Labels  []string `dynamodbav:"labels,stringset,omitempty"`
	Meta    map[string]int
	Version int64 `dynamodbav:"version" singletable:"version"`
}

func newOpsDoc() opsDoc {
	return opsDoc{ID: "d", Category: "books", Tags: []string{"a", "b", "c"}, Labels: []string{"x", "y", "z"}, Scores: []int{1, 2, 3},
		Address: opsAddress{City: "Lyon", Zip: "69001"}, Lines: []opsLine{{"s1", 1}, {"s2", 2}}, Meta: map[string]string{"k": "v"}}
}

// TestUpdateListSetNestedOperations asserts each operation from the stored item.
func TestUpdateListSetNestedOperations(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs := MustRegister[opsDoc](tbl)
	ctx := context.Background()
	_, err := docs.Put(ctx, newOpsDoc())
	require.NoError(t, err)
	key := opsDoc{ID: "d"}
	get := func() opsDoc {
		t.Helper()
		v, err := docs.Get(ctx, key, Consistent())
		require.NoError(t, err)
		return v
	}

	got, err := docs.Update(ctx, key, Append("tags", "d", "e"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got.Tags, "Append")
	_, err = docs.Update(ctx, key, Prepend("tags", "z", "y"))
	require.NoError(t, err)
	assert.Equal(t, []string{"z", "y", "a", "b", "c", "d", "e"}, get().Tags, "Prepend keeps the order given")
	_, err = docs.Update(ctx, key, Remove("tags[0]", "tags[2]"))
	require.NoError(t, err)
	assert.Equal(t, []string{"y", "b", "c", "d", "e"}, get().Tags, "Remove by index")
	_, err = docs.Update(ctx, key, DeleteFromSet("labels", "y", "nope"), DeleteFromSet("scores", 2))
	require.NoError(t, err)
	v := get()
	assert.ElementsMatch(t, []string{"x", "z"}, v.Labels, "DeleteFromSet")
	assert.ElementsMatch(t, []int{1, 3}, v.Scores)
	_, err = docs.Update(ctx, key, SetIfNotExists("nick", "first"))
	require.NoError(t, err)
	_, err = docs.Update(ctx, key, SetIfNotExists("nick", "second"))
	require.NoError(t, err)
	assert.Equal(t, "first", get().Nick, "if_not_exists keeps what is stored")
	_, err = docs.Update(ctx, key, Set("address.city", "Paris"), Remove("address.zip"), Set("address.geo", &opsGeo{Lat: 1.5}),
		Set("lines[1].qty", 7), Set("meta.color", "red"), Set("fixed[2]", 9))
	require.NoError(t, err)
	v = get()
	assert.Equal(t, opsAddress{City: "Paris", Geo: &opsGeo{Lat: 1.5}}, v.Address, "nested Set and Remove")
	assert.Equal(t, []opsLine{{"s1", 1}, {"s2", 7}}, v.Lines)
	assert.Equal(t, map[string]string{"k": "v", "color": "red"}, v.Meta)
	assert.Equal(t, [3]int{0, 0, 9}, v.Fixed)
	_, err = docs.Update(ctx, key, Set("address.geo.lng", 2.5), Append("lines", opsLine{"s3", 3}))
	require.NoError(t, err)
	v = get()
	assert.Equal(t, &opsGeo{Lat: 1.5, Lng: 2.5}, v.Address.Geo)
	assert.Equal(t, []opsLine{{"s1", 1}, {"s2", 7}, {"s3", 3}}, v.Lines, "Append of a struct, encoded as the field encodes it")
	item := rawItem(t, tbl, "OPS#d", "OPS")
	assert.IsType(t, &types.AttributeValueMemberM{}, item["lines"].(*types.AttributeValueMemberL).Value[2])

	// Append creates a list that is not there.
	_, err = docs.Update(ctx, opsDoc{ID: "new"}, Append("tags", "first"), Upsert())
	require.NoError(t, err)
	nv, err := docs.Get(ctx, opsDoc{ID: "new"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, []string{"first"}, nv.Tags)

	// Names with dots, brackets' neighbours and reserved words go through placeholders.
	_, err = docs.Update(ctx, key, Set("meta.a.b", "dotted"))
	assert.ErrorIs(t, err, ErrInvalidInput, "meta's values are strings: .b does not apply")
	_, err = docs.Update(ctx, key, Set("meta.size", "reserved word"))
	require.NoError(t, err)
	assert.Equal(t, "reserved word", get().Meta["size"])
}

// TestUpdateOperationsOnIndexInputAndVersion: the rules of Set hold for the new
// operations: an index key input is refused where its key cannot be recomputed
// (or recomputed, by Set); a versioned entity's version is checked and moved.
func TestUpdateOperationsOnIndexInputAndVersion(t *testing.T) {
	tbl, _ := newTestTable(t)
	docs := MustRegister[opsDoc](tbl)
	vdocs := MustRegister[opsVDoc](tbl)
	ctx := context.Background()
	_, err := docs.Put(ctx, newOpsDoc())
	require.NoError(t, err)

	_, err = docs.Update(ctx, opsDoc{ID: "d"}, SetIfNotExists("category", "games"))
	require.ErrorIs(t, err, ErrInvalidInput, "if_not_exists on an index key input cannot recompute the key")
	assert.Contains(t, err.Error(), "GSI1PK")
	_, err = docs.Update(ctx, opsDoc{ID: "d"}, Set("category", "games"))
	require.NoError(t, err, "Set recomputes it")
	assert.Equal(t, "CAT#games", rawItem(t, tbl, "OPS#d", "OPS")["GSI1PK"].(*types.AttributeValueMemberS).Value)
	_, err = docs.Update(ctx, opsDoc{ID: "d"}, Set("id.x", "y"))
	assert.ErrorIs(t, err, ErrInvalidInput, "a primary key input")

	v, err := vdocs.Put(ctx, opsVDoc{ID: "v", Tags: []string{"a"}, Labels: []string{"p", "q"}})
	require.NoError(t, err)
	require.Equal(t, int64(1), v.Version)
	_, err = vdocs.Update(ctx, v, Set("Meta.hits", 1))
	require.Error(t, err, "Meta is NULL: DynamoDB refuses a path into it")
	assert.Contains(t, err.Error(), `"Meta.hits"`, "the error says which path")
	v, err = vdocs.Update(ctx, v, Set("Meta", map[string]int{}))
	require.NoError(t, err)
	v, err = vdocs.Update(ctx, v, Append("tags", "b"), DeleteFromSet("labels", "p"), Set("Meta.hits", 1))
	require.NoError(t, err)
	assert.Equal(t, int64(3), v.Version, "the version moved")
	assert.Equal(t, []string{"a", "b"}, v.Tags)
	assert.Equal(t, []string{"q"}, v.Labels)
	assert.Equal(t, map[string]int{"hits": 1}, v.Meta)
	item := rawItem(t, tbl, "OPSV#v", "OPSV")
	assert.Equal(t, "3", item["version"].(*types.AttributeValueMemberN).Value)
	stale := v
	stale.Version = 2
	_, err = vdocs.Update(ctx, stale, Append("tags", "c"))
	var ce *ConflictError
	require.ErrorAs(t, err, &ce, "a stale version is a conflict, as with Set")
	assert.Equal(t, uint64(3), ce.Current)
	got, err := vdocs.Get(ctx, opsVDoc{ID: "v"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Tags, "nothing appended")
}

// TestUpdateOperationsBadInput: paths and values that do not fit T's types are
// refused before anything is sent, naming the entity, the field and the attribute.
func TestUpdateOperationsBadInput(t *testing.T) {
	tbl, inj := faultTable(t)
	docs := MustRegister[opsDoc](tbl)
	ctx := context.Background()
	key := opsDoc{ID: "d"}
	cases := map[string][]UpdateOption{
		"wrong element type":     {Append("tags", 5)},
		"append to a set":        {Append("labels", "x")},
		"append to an array":     {Append("fixed", 1)},
		"append nothing":         {Append("tags")},
		"append to a non-list":   {Append("nick", "x")},
		"delete from a list":     {DeleteFromSet("tags", "a")},
		"delete wrong type":      {DeleteFromSet("scores", "x")},
		"unknown nested field":   {Set("address.country", "FR")},
		"unknown attribute":      {Set("adress.city", "Paris")},
		"index out of the array": {Set("fixed[3]", 1)},
		"index into a string":    {Set("nick[0]", "x")},
		"index into a set":       {Remove("labels[0]")},
		"name into a list":       {Set("tags.x", "y")},
		"into an interface":      {Set("any.x", 1)},
		"into a time":            {Set("address.city.x", 1)},
		"nested Add":             {Add("lines[0].qty", 1)},
		"nested DeleteFromSet":   {DeleteFromSet("address.city", "x")},
		"wrong nested type":      {Set("lines[0].qty", "many")},
		"overlapping paths":      {Set("address", opsAddress{}), Set("address.city", "x")},
		"overlapping paths 2":    {Set("address.city", "x"), Set("address", opsAddress{})},
		"overlapping list ops":   {Append("tags", "x"), Remove("tags[0]")},
		"bad syntax":             {Set("tags[01]", "x")},
		"bad syntax 2":           {Set("tags[", "x")},
		"bad syntax 3":           {Set("address..city", "x")},
		"bad syntax 4":           {Set("[0]", "x")},
		"negative index":         {Set("tags[-1]", "x")},
	}
	before := requests(inj)
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := docs.Update(ctx, key, opts...)
			require.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), "opsDoc")
			t.Log(err)
		})
	}
	assert.Equal(t, before, requests(inj), "nothing sent")
	_, err := docs.Update(ctx, key, Append("tags", 5))
	assert.Contains(t, err.Error(), "tags (opsDoc.Tags)", "the error names the attribute and the Go field")
}

// TestUpdateAppendLostResponseNeverTwice: an Append is not idempotent, so it
// carries a receipt: after a lost response it is judged from the item read back,
// never sent again blindly.
func TestUpdateAppendLostResponseNeverTwice(t *testing.T) {
	tbl, inj := faultTable(t)
	docs := MustRegister[opsDoc](tbl)
	ctx := context.Background()
	_, err := docs.Put(ctx, opsDoc{ID: "d", Tags: []string{}})
	require.NoError(t, err)
	inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Rate: 0.6})
	for i := range 40 {
		_, err := docs.Update(ctx, opsDoc{ID: "d"}, Append("tags", "t"))
		require.NoError(t, err, "append %d: its receipt proves it landed", i)
	}
	got, err := docs.Get(ctx, opsDoc{ID: "d"}, Consistent())
	require.NoError(t, err)
	assert.Len(t, got.Tags, 40, "every append applied exactly once")
	assert.Positive(t, inj.Stats().LostWrites)
	t.Logf("FIGURES appends=40 lost=%d", inj.Stats().LostWrites)
}

// nlTask is the README's Task in small: nil slices without omitempty, which the
// library stores as NULL.
type nlTask struct {
	_       struct{} `Type:"NlTask" PK:"NL#{id}" SK:"NL"`
	ID      string   `dynamodbav:"id"`
	Tags    []string `dynamodbav:"tags"`
	Notes   []string `dynamodbav:"notes"`
	Count   int      `dynamodbav:"count"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// nlPlain is unversioned.
type nlPlain struct {
	_    struct{} `Type:"NlPlain" PK:"NLP#{id}" SK:"NLP"`
	ID   string   `dynamodbav:"id"`
	Tags []string `dynamodbav:"tags"`
}

// TestAppendPrependOnNullList (issue 30, scenario 8): Append and Prepend create
// the list over one the library stored as NULL (a nil slice without
// omitempty), as over a missing one, and extend a list: in Update, with several
// lists in one update, in TxUpdate, on unversioned entities, and exactly once
// when the answer of the attempt that lands is lost.
func TestAppendPrependOnNullList(t *testing.T) {
	tbl, inj := faultTable(t)
	tasks := MustRegister[nlTask](tbl)
	plain := MustRegister[nlPlain](tbl)
	ctx := context.Background()

	v, err := tasks.Put(ctx, nlTask{ID: "a"})
	require.NoError(t, err)
	require.IsType(t, &types.AttributeValueMemberNULL{}, rawItem(t, tbl, "NL#a", "NL")["tags"], "the library stores a nil slice as NULL")
	got, err := tasks.Update(ctx, v, Append("tags", "x", "y"))
	require.NoError(t, err, "Append over a NULL list")
	assert.Equal(t, []string{"x", "y"}, got.Tags)
	got, err = tasks.Update(ctx, got, Append("tags", "z"), Prepend("notes", "n"))
	require.NoError(t, err, "a list and a NULL in one update")
	assert.Equal(t, []string{"x", "y", "z"}, got.Tags)
	assert.Equal(t, []string{"n"}, got.Notes)
	got, err = tasks.Update(ctx, got, Remove("notes"))
	require.NoError(t, err)
	got, err = tasks.Update(ctx, got, Prepend("notes", "m"), Prepend("tags", "w"))
	require.NoError(t, err, "a missing list and a list")
	assert.Equal(t, []string{"m"}, got.Notes)
	assert.Equal(t, []string{"w", "x", "y", "z"}, got.Tags)

	// In a transaction.
	v, err = tasks.Put(ctx, nlTask{ID: "b"})
	require.NoError(t, err)
	require.NoError(t, tbl.Transact(ctx, tasks.TxUpdate(v, Append("tags", "t"))), "TxUpdate over a NULL list")
	got, err = tasks.Get(ctx, nlTask{ID: "b"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, []string{"t"}, got.Tags)
	assert.Equal(t, int64(2), got.Version)

	// Unversioned.
	pv, err := plain.Put(ctx, nlPlain{ID: "p"})
	require.NoError(t, err)
	pg, err := plain.Update(ctx, pv, Prepend("tags", "p1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"p1"}, pg.Tags)

	// The attempt that lands (the form for a NULL) loses its answer: judged by
	// its receipt, applied once.
	v, err = tasks.Put(ctx, nlTask{ID: "c"})
	require.NoError(t, err)
	remove := inj.Add(fault.Rule{Ops: []string{"UpdateItem"}, Fault: fault.LoseResponse(), Times: 1,
		Match: func(_ string, body []byte) bool { return strings.Contains(string(body), "list_append(:") }})
	got, err = tasks.Update(ctx, v, Append("tags", "once"))
	remove()
	require.NoError(t, err)
	assert.Equal(t, []string{"once"}, got.Tags)
	got, err = tasks.Get(ctx, nlTask{ID: "c"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, []string{"once"}, got.Tags, "applied exactly once")
	assert.Equal(t, int64(2), got.Version)
}

// TestUpdateRefusedByDynamoDBNamesTheField (issue 30, scenario 8): when
// DynamoDB refuses an update for what only it can see (a stored value of
// another type than the change needs), the error names the call, the entity
// and the changes, and still unwraps to DynamoDB's ValidationException.
func TestUpdateRefusedByDynamoDBNamesTheField(t *testing.T) {
	tbl, _ := faultTable(t)
	tasks := MustRegister[nlTask](tbl)
	ctx := context.Background()
	putRaw(t, tbl, map[string]types.AttributeValue{"PK": sAV("NL#raw"), "SK": sAV("NL"), "Type": sAV("NlTask"), "id": sAV("raw"),
		"count": sAV("many"), "tags": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": sAV("v")}}})
	for name, opt := range map[string]UpdateOption{"Add": Add("count", 1), "Append": Append("tags", "x")} {
		_, err := tasks.Update(ctx, nlTask{ID: "raw"}, opt)
		require.Error(t, err, name)
		for _, want := range []string{"Update", "nlTask", name} {
			assert.Contains(t, err.Error(), want, name)
		}
		field := map[string]string{"Add": "count (nlTask.Count)", "Append": "tags (nlTask.Tags)"}[name]
		assert.Contains(t, err.Error(), field, "%s: the field", name)
		var api smithy.APIError
		require.True(t, errors.As(err, &api), name)
		assert.Equal(t, "ValidationException", api.ErrorCode())
	}
}
