package singletable

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kUser lives in a table keyed by partition alone ("id"), with an index.
type kUser struct {
	_       struct{} `Type:"User" id:"USER#{userId}" GSI1PK:"ORG#{org}" GSI1SK:"{name}#{userId}"`
	UserID  string   `dynamodbav:"userId"`
	Org     string   `dynamodbav:"org"`
	Name    string   `dynamodbav:"name"`
	Version int      `dynamodbav:"version" singletable:"version"`
}

// kTeam shares the table, with keys of its own.
type kTeam struct {
	_      struct{} `Type:"Team" id:"TEAM#{teamId}"`
	TeamID string   `dynamodbav:"teamId"`
	Size   int      `dynamodbav:"size"`
}

// TestPartitionKeyOnlyTable: CRUD, batches, transactions, scans, queries and
// cursors on a table whose primary key is its partition key alone.
func TestPartitionKeyOnlyTable(t *testing.T) {
	tbl, _ := newTestTable(t, WithKeys("id", ""))
	ctx := context.Background()
	desc, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	require.Len(t, desc.Table.KeySchema, 1, "a partition key only")
	assert.Equal(t, "id", aws.ToString(desc.Table.KeySchema[0].AttributeName))

	users := MustRegister[kUser](tbl)
	teams := MustRegister[kTeam](tbl)
	u, err := users.Create(ctx, kUser{UserID: "u1", Org: "acme", Name: "ada"})
	require.NoError(t, err)
	assert.Equal(t, 1, u.Version)
	_, err = users.Create(ctx, kUser{UserID: "u1", Org: "acme", Name: "ada"})
	require.ErrorIs(t, err, ErrAlreadyExists)
	got, err := users.Get(ctx, kUser{UserID: "u1"})
	require.NoError(t, err)
	assert.Equal(t, u, got)
	raw, err := tbl.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: map[string]types.AttributeValue{"id": sAV("USER#u1")}})
	require.NoError(t, err)
	assert.Equal(t, sAV("USER#u1"), raw.Item["id"])
	assert.NotContains(t, raw.Item, "SK")

	u, err = users.Update(ctx, u, Set("name", "bob"))
	require.NoError(t, err)
	assert.Equal(t, 2, u.Version)
	u, err = users.Mutate(ctx, kUser{UserID: "u1"}, func(v *kUser) error { v.Name = "cy"; return nil })
	require.NoError(t, err)
	assert.Equal(t, 3, u.Version)
	_, err = users.Put(ctx, kUser{UserID: "u1", Org: "acme", Name: "old", Version: 1})
	require.ErrorIs(t, err, ErrConflict)

	var batch []kUser
	for i := range 30 {
		batch = append(batch, kUser{UserID: fmt.Sprintf("b%02d", i), Org: "acme", Name: fmt.Sprintf("n%02d", i)})
	}
	left, err := users.BatchPut(ctx, batch)
	require.NoError(t, err)
	require.Empty(t, left)
	bg, err := users.BatchGet(ctx, []kUser{{UserID: "b03"}, {UserID: "zz"}, {UserID: "b07"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"b03", "b07"}, []string{bg.Items[0].UserID, bg.Items[1].UserID})
	assert.Len(t, bg.Missing, 1)

	_, err = teams.Put(ctx, kTeam{TeamID: "t1", Size: 3})
	require.NoError(t, err)
	ru, rt := users.Ref(kUser{UserID: "u1"}), teams.Ref(kTeam{TeamID: "t1"})
	require.NoError(t, tbl.TransactGet(ctx, ru, rt))
	gt, err := rt.Value()
	require.NoError(t, err)
	assert.Equal(t, 3, gt.Size)
	_, err = tbl.BatchWrite(ctx, teams.BatchPutItem(kTeam{TeamID: "t2"}), users.BatchDeleteItem(kUser{UserID: "b29"}))
	require.NoError(t, err)
	require.NoError(t, tbl.Transact(ctx, teams.TxPut(kTeam{TeamID: "t3", Size: 9}), users.TxDelete(kUser{UserID: "b28"}, Clobber())))

	// The base table: one item per partition.
	page, err := users.Query(ctx, kUser{UserID: "u1"})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	// The index, paged with cursors.
	var names []string
	cursor := ""
	for {
		page, err := users.Query(ctx, kUser{Org: "acme"}, On("GSI1"), Limit(7), After(cursor))
		require.NoError(t, err)
		for _, v := range page.Items {
			names = append(names, v.Name)
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Len(t, names, 29, "28 batch users and u1 (cy)")
	assert.Equal(t, "cy", names[0], "sorted by name")
	n := 0
	for _, err := range tbl.ScanAll(ctx) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 29+3, n)
	c, err := users.ScanCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 29, c.Items)
	require.NoError(t, users.Delete(ctx, kUser{UserID: "u1", Version: 3}))
	_, err = users.Get(ctx, kUser{UserID: "u1"})
	require.ErrorIs(t, err, ErrNotFound)

	// Two entities whose only key collides are refused.
	type kOther struct {
		_ struct{} `Type:"Other" id:"USER#{x}"`
		X string   `dynamodbav:"x"`
	}
	_, err = Register[kOther](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), `collides with kUser's "USER#{userId}": both render id "USER#`)
	_, err = NewTableStore(tbl)
	require.ErrorIs(t, err, ErrInvalidInput)
}

// kEvent lives in a table whose keys are numbers.
type kEvent struct {
	_       struct{} `Type:"Event" acct:"{account}" seq:"{n}" GSI1PK:"KIND#{kind}" GSI1SK:"E#{n}"`
	Account int64    `dynamodbav:"account"`
	N       int      `dynamodbav:"n"`
	Kind    string   `dynamodbav:"kind"`
}

// TestNumberKeyedTable: CRUD, queries with sort key conditions in numeric
// order, cursors and counts on a table keyed by numbers.
func TestNumberKeyedTable(t *testing.T) {
	for _, wire := range []bool{true, false} {
		t.Run(fmt.Sprintf("wire=%v", wire), func(t *testing.T) {
			tbl, _ := newTestTable(t, WithKeys("acct", "seq"), WithKeyType("acct", types.ScalarAttributeTypeN), WithKeyType("seq", types.ScalarAttributeTypeN), WithWireDecoding(wire))
			ctx := context.Background()
			desc, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
			require.NoError(t, err)
			for _, d := range desc.Table.AttributeDefinitions {
				if a := aws.ToString(d.AttributeName); a == "acct" || a == "seq" {
					assert.Equal(t, types.ScalarAttributeTypeN, d.AttributeType, a)
				}
			}
			events := MustRegister[kEvent](tbl)
			var all []kEvent
			for i := -5; i < 25; i++ {
				e := kEvent{Account: 7, N: i, Kind: []string{"a", "b"}[(i+10)%2]}
				_, err := events.Put(ctx, e)
				require.NoError(t, err)
				all = append(all, e)
			}
			_, err = events.Put(ctx, kEvent{Account: 8, N: 1, Kind: "a"})
			require.NoError(t, err)
			raw, err := tbl.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: map[string]types.AttributeValue{
				"acct": &types.AttributeValueMemberN{Value: "7"}, "seq": &types.AttributeValueMemberN{Value: "-3"}}})
			require.NoError(t, err)
			require.NotNil(t, raw.Item, "stored under number keys")

			got, err := events.Get(ctx, kEvent{Account: 7, N: 10})
			require.NoError(t, err)
			assert.Equal(t, all[15], got)
			got, err = events.Update(ctx, kEvent{Account: 7, N: 10}, Set("kind", "c"))
			require.NoError(t, err)
			assert.Equal(t, "c", got.Kind)
			all[15].Kind = "c"

			// The partition, in numeric order (-5 before 2 before 10), paged.
			var seen []int
			cursor := ""
			for {
				page, err := events.Query(ctx, kEvent{Account: 7}, Limit(4), After(cursor))
				require.NoError(t, err)
				for _, e := range page.Items {
					seen = append(seen, e.N)
				}
				if cursor = page.Cursor; cursor == "" {
					break
				}
			}
			var want []int
			for i := -5; i < 25; i++ {
				want = append(want, i)
			}
			assert.Equal(t, want, seen)
			page, err := events.Query(ctx, kEvent{Account: 7}, SK[kEvent]().Between(kEvent{N: 2}, kEvent{N: 10}), Descending())
			require.NoError(t, err)
			var ns []int
			for _, e := range page.Items {
				ns = append(ns, e.N)
			}
			assert.Equal(t, []int{10, 9, 8, 7, 6, 5, 4, 3, 2}, ns, "numeric bounds, not text")
			page, err = events.Query(ctx, kEvent{Account: 7}, SKLessThan("-3"))
			require.NoError(t, err)
			assert.Len(t, page.Items, 2)
			_, err = events.Query(ctx, kEvent{Account: 7}, SKBeginsWith("1"))
			require.ErrorIs(t, err, ErrInvalidInput, "numbers have no prefixes")
			_, err = events.Query(ctx, kEvent{Account: 7}, SKEqual("ten"))
			require.ErrorIs(t, err, ErrInvalidKey)
			one, err := events.Query(ctx, kEvent{Account: 7, N: 3})
			require.NoError(t, err)
			assert.Equal(t, []kEvent{all[8]}, one.Items, "a key value with its sort input set reads that item")
			c, err := events.Count(ctx, kEvent{Account: 7})
			require.NoError(t, err)
			assert.Equal(t, 30, c.Items)
			_, err = events.Query(ctx, kEvent{}, Partition("x"))
			require.ErrorIs(t, err, ErrInvalidKey)
			p8, err := events.Query(ctx, kEvent{}, Partition("8"))
			require.NoError(t, err)
			assert.Len(t, p8.Items, 1)

			// The string index keeps working beside number keys, with cursors.
			ix, err := events.Query(ctx, kEvent{Kind: "b"}, On("GSI1"), Limit(5))
			require.NoError(t, err)
			require.Len(t, ix.Items, 5)
			ix2, err := events.Query(ctx, kEvent{Kind: "b"}, On("GSI1"), After(ix.Cursor))
			require.NoError(t, err)
			assert.Len(t, ix2.Items, 10)

			bg, err := events.BatchGet(ctx, []kEvent{{Account: 7, N: -5}, {Account: 7, N: 24}, {Account: 9, N: 1}})
			require.NoError(t, err)
			assert.Equal(t, []kEvent{all[0], all[29]}, bg.Items)
			assert.Len(t, bg.Missing, 1)
			r := events.Ref(kEvent{Account: 8, N: 1})
			require.NoError(t, tbl.TransactGet(ctx, r))
			assert.True(t, r.Found())
			left, err := tbl.BatchGet(ctx, []ItemRef{events.Ref(kEvent{Account: 7, N: 0}), events.Ref(kEvent{Account: 7, N: 1})})
			require.NoError(t, err)
			assert.Empty(t, left)
			p, err := events.Project("kind").Get(ctx, kEvent{Account: 7, N: 4})
			require.NoError(t, err)
			assert.Equal(t, kEvent{Account: 7, N: 4, Kind: all[9].Kind}, p.Value)
			sp, err := events.Scan(ctx, Limit(10))
			require.NoError(t, err)
			sp2, err := events.Scan(ctx, Limit(10), After(sp.Cursor))
			require.NoError(t, err)
			assert.Len(t, append(sp.Items, sp2.Items...), 20)
			key, err := events.Key(all[0])
			require.NoError(t, err)
			assert.Equal(t, "-5", key["seq"])
			back, err := events.ParseKey(map[string]string{"acct": "7", "seq": "-5"})
			require.NoError(t, err)
			assert.Equal(t, kEvent{Account: 7, N: -5}, back)
			require.NoError(t, events.Delete(ctx, kEvent{Account: 7, N: 0}))
			_, err = events.Get(ctx, kEvent{Account: 7, N: 0})
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}

// kBlob is keyed by a binary hash alone.
type kBlob struct {
	_    struct{} `Type:"Blob" h:"{hash}"`
	Hash []byte   `dynamodbav:"hash"`
	Size int      `dynamodbav:"size"`
}

// TestBinaryKeyedTable: a table keyed by binary values alone, delimiter bytes
// and all.
func TestBinaryKeyedTable(t *testing.T) {
	tbl, _ := newTestTable(t, WithKeys("h", ""), WithKeyType("h", types.ScalarAttributeTypeB))
	ctx := context.Background()
	blobs := MustRegister[kBlob](tbl)
	keys := [][]byte{{0x00, '#', 0xff}, []byte("#"), {0xde, 0xad}}
	for i, h := range keys {
		_, err := blobs.Put(ctx, kBlob{Hash: h, Size: i})
		require.NoError(t, err)
	}
	got, err := blobs.Get(ctx, kBlob{Hash: keys[0]})
	require.NoError(t, err)
	assert.Equal(t, kBlob{Hash: keys[0], Size: 0}, got)
	bg, err := blobs.BatchGet(ctx, []kBlob{{Hash: keys[1]}, {Hash: keys[2]}})
	require.NoError(t, err)
	assert.Len(t, bg.Items, 2)
	n := 0
	for _, err := range blobs.ScanAll(ctx, Limit(1)) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 3, n)
	_, err = blobs.Get(ctx, kBlob{})
	require.ErrorIs(t, err, ErrInvalidKey, "an empty binary key")
	require.NoError(t, blobs.Delete(ctx, kBlob{Hash: keys[1]}))
	_, err = blobs.Get(ctx, kBlob{Hash: keys[1]})
	require.ErrorIs(t, err, ErrNotFound)
}

// TestKeyTypeTemplatesRefused: number and binary keys take one placeholder of
// an integer or []byte field; registration says so, naming the field.
func TestKeyTypeTemplatesRefused(t *testing.T) {
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	tbl, err := NewTable(c, "tbl", WithKeyType("PK", types.ScalarAttributeTypeN), WithKeyType("SK", types.ScalarAttributeTypeB))
	require.NoError(t, err)
	type literal struct {
		_ struct{} `PK:"N#{n}" SK:"{b}"`
		N int      `dynamodbav:"n"`
		B []byte   `dynamodbav:"b"`
	}
	_, err = Register[literal](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "PK holds numbers, so its template must be a single placeholder")
	type str struct {
		_ struct{} `PK:"{n}" SK:"{b}"`
		N string   `dynamodbav:"n"`
		B []byte   `dynamodbav:"b"`
	}
	_, err = Register[str](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "str.N: PK holds numbers, so {n} must be an integer field, not string")
	type notBytes struct {
		_ struct{} `PK:"{n}" SK:"{b}"`
		N int      `dynamodbav:"n"`
		B string   `dynamodbav:"b"`
	}
	_, err = Register[notBytes](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), "must be a []byte field")
	_, err = NewTable(c, "tbl", WithKeyType("nope", types.ScalarAttributeTypeN))
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = NewTable(c, "tbl", WithKeyType("PK", "X"))
	require.ErrorIs(t, err, ErrInvalidInput)
	type bytesInString struct {
		_ struct{} `Type:"X" PK:"{n}" SK:"X#{b}"`
		N int      `dynamodbav:"n"`
		B []byte   `dynamodbav:"b"`
	}
	tbl2, err := NewTable(c, "tbl", WithKeyType("PK", types.ScalarAttributeTypeN))
	require.NoError(t, err)
	_, err = Register[bytesInString](tbl2)
	require.ErrorIs(t, err, ErrInvalidEntity, "a []byte in a string key")
}
