package singletable

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/localtest"
)

// Bad input: every test here hands the library something wrong, or something
// legal but awkward, and checks that it is refused before anything is sent, with
// an error that names the field, or that it is stored and read back unchanged.

// biThing has a two-part partition key, a two-part sort key, a sparse index and
// fields of every common kind.
type biThing struct {
	_      struct{}          `Type:"BiThing" PK:"T#{tenant}#{id}" SK:"ITEM#{kind}#{seq:06}" GSI1PK:"G#{group}" GSI1SK:"{at:time}#{id}"`
	Tenant string            `dynamodbav:"tenant"`
	ID     string            `dynamodbav:"id"`
	Kind   string            `dynamodbav:"kind"`
	Seq    int               `dynamodbav:"seq"`
	Group  string            `dynamodbav:"group,omitempty"`
	At     time.Time         `dynamodbav:"at"`
	Note   *string           `dynamodbav:"note"`
	Tags   []string          `dynamodbav:"tags"`
	Attrs  map[string]string `dynamodbav:"attrs"`
	Score  float64           `dynamodbav:"score"`
	Blob   []byte            `dynamodbav:"blob"`
}

func goodThing(id string) biThing {
	return biThing{Tenant: "acme", ID: id, Kind: "k", Seq: 1, Group: "g", At: t0}
}

// biPtrKey has a pointer field in its partition key.
type biPtrKey struct {
	_  struct{} `Type:"BiPtrKey" PK:"P#{id}" SK:"P"`
	ID *string  `dynamodbav:"id"`
	N  int      `dynamodbav:"n"`
}

// sentCount is the number of item requests the library made through c.
func sentCount(c *countingClient) int64 {
	var n int64
	for _, v := range c.calls {
		n += v.Load()
	}
	return n
}

// requireKeyError checks that err is a *KeyError (ErrInvalidKey) for entity and
// key attribute attr that names field, and that its message names it too.
func requireKeyError(t *testing.T, err error, entity, attr, field string) {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidKey)
	var ke *KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, entity, ke.Entity, "entity of %v", err)
	if attr != "" {
		assert.Equal(t, attr, ke.Attribute, "key attribute of %v", err)
	}
	assert.Equal(t, field, ke.Field, "field of %v", err)
	assert.Contains(t, err.Error(), field)
}

func TestBadInputNilAndZeroValues(t *testing.T) {
	t.Run("NewTable", func(t *testing.T) {
		_, err := NewTable(nil, "app")
		assert.ErrorIs(t, err, ErrInvalidInput, "nil client")
		_, err = NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "")
		assert.ErrorIs(t, err, ErrInvalidInput, "empty table name")
		_, err = NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "app", WithDelimiter('a'))
		assert.ErrorIs(t, err, ErrInvalidKey, "a letter as the delimiter")
	})
	t.Run("Register", func(t *testing.T) {
		_, err := Register[*biThing](offlineTable(t))
		assert.ErrorIs(t, err, ErrInvalidEntity, "a pointer type")
		_, err = Register[struct{}](offlineTable(t))
		assert.ErrorIs(t, err, ErrInvalidEntity, "an anonymous struct without tags")
	})

	tbl, client := newTestTable(t)
	things := MustRegister[biThing](tbl)
	ptrs := MustRegister[biPtrKey](tbl)
	ctx := context.Background()

	// Every entry point, handed the zero value: a key error naming the first
	// missing input, before anything is sent.
	var zero biThing
	_, err := things.Get(ctx, zero)
	requireKeyError(t, err, "biThing", "PK", "Tenant")
	_, err = things.Put(ctx, zero)
	requireKeyError(t, err, "biThing", "PK", "Tenant")
	_, err = things.Create(ctx, zero)
	requireKeyError(t, err, "biThing", "PK", "Tenant")
	_, err = things.Update(ctx, zero, Set("score", 1.5))
	requireKeyError(t, err, "biThing", "PK", "Tenant")
	requireKeyError(t, things.Delete(ctx, zero), "biThing", "PK", "Tenant")
	_, err = things.Query(ctx, zero)
	requireKeyError(t, err, "biThing", "PK", "Tenant")
	_, err = things.BatchGet(ctx, []biThing{goodThing("a"), zero})
	assert.ErrorIs(t, err, ErrInvalidKey, "BatchGet")
	_, err = things.BatchPut(ctx, []biThing{goodThing("a"), zero})
	assert.ErrorIs(t, err, ErrInvalidKey, "BatchPut")
	_, err = things.BatchDelete(ctx, []biThing{zero})
	assert.ErrorIs(t, err, ErrInvalidKey, "BatchDelete")
	for name, it := range map[string]TxItem{
		"TxPut":    things.TxPut(zero),
		"TxCreate": things.TxCreate(zero),
		"TxUpdate": things.TxUpdate(zero, Set("score", 1.0)),
		"TxDelete": things.TxDelete(zero),
		"TxCheck":  things.TxCheck(zero, expression.AttributeExists(expression.Name("id"))),
	} {
		assert.ErrorIs(t, tbl.Transact(ctx, it), ErrInvalidKey, name)
	}
	// A nil pointer and a pointer to "" are missing inputs too.
	_, err = ptrs.Put(ctx, biPtrKey{})
	requireKeyError(t, err, "biPtrKey", "PK", "ID")
	_, err = ptrs.Put(ctx, biPtrKey{ID: aws.String("")})
	requireKeyError(t, err, "biPtrKey", "PK", "ID")

	// Other zero and nil arguments.
	assert.ErrorIs(t, tbl.Transact(ctx), ErrInvalidInput, "a transaction of nothing")
	_, err = things.Update(ctx, goodThing("a"))
	assert.ErrorIs(t, err, ErrInvalidInput, "an update without changes")
	_, err = things.Update(ctx, goodThing("a"), Set("score", nil))
	assert.ErrorIs(t, err, ErrInvalidInput, "nil for a float field")
	assert.Contains(t, err.Error(), "Score")
	_, err = things.Query(ctx, goodThing("a"), Partition(""))
	assert.ErrorIs(t, err, ErrInvalidKey, "an empty partition")
	_, err = things.Query(ctx, goodThing("a"), SKEqual(nil))
	assert.ErrorIs(t, err, ErrInvalidInput, "a nil sort key value")
	_, err = tbl.Query(ctx, nil)
	assert.ErrorIs(t, err, ErrInvalidInput, "a nil collection key")
	_, err = tbl.Query(ctx, (*biThing)(nil))
	assert.ErrorIs(t, err, ErrInvalidInput, "a nil *T collection key")
	assert.Zero(t, sentCount(client), "nothing was sent")

	// Empty batches are no-ops and send nothing.
	left, err := things.BatchPut(ctx, nil)
	assert.NoError(t, err)
	assert.Empty(t, left)
	left, err = things.BatchDelete(ctx, []biThing{})
	assert.NoError(t, err)
	assert.Empty(t, left)
	res, err := things.BatchGet(ctx, nil)
	assert.NoError(t, err)
	assert.Empty(t, res.Items)
	assert.Zero(t, sentCount(client), "empty batches send nothing")

	// A nil pointer, nil slice, nil map and zero time in fields that feed no
	// primary key are stored (NULL, or left out of the sparse index) and read back
	// as they were. A zero-value condition is refused, not taken for none (issue
	// 30, scenario 13: TestZeroConditionRefused).
	v := biThing{Tenant: "acme", ID: "nils", Kind: "k"}
	_, err = things.Put(ctx, v, If(expression.ConditionBuilder{}))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Zero(t, sentCount(client), "nothing was sent")
	_, err = things.Put(ctx, v)
	require.NoError(t, err)
	got, err := things.Get(ctx, v, Consistent())
	require.NoError(t, err)
	assert.Equal(t, v, got)
	raw := rawItem(t, tbl, "T#acme#nils", "ITEM#k#000000")
	assert.NotContains(t, raw, "GSI1PK", "no group and no time: not in the index")
	assert.IsType(t, &types.AttributeValueMemberNULL{}, raw["note"])
	_, err = things.Update(ctx, v, Set("note", nil), Set("tags", nil))
	assert.NoError(t, err, "nil for pointer and slice fields")
}

// TestBadInputZeroTxItem hands Transact a TxItem that no entity made.
func TestBadInputZeroTxItem(t *testing.T) {
	tbl, client := newTestTable(t)
	things := MustRegister[biThing](tbl)
	err := tbl.Transact(context.Background(), things.TxPut(goodThing("a")), TxItem{})
	assert.ErrorIs(t, err, ErrInvalidInput, "a zero TxItem is refused before sending: %v", err)
	assert.Zero(t, client.count("TransactWriteItems"), "nothing was sent")
}

func TestBadInputEmptyKeyParts(t *testing.T) {
	tbl := offlineTable(t)
	things := MustRegister[biThing](tbl)
	ctx := context.Background()
	cases := []struct {
		name        string
		v           biThing
		attr, field string
	}{
		{"first part of the partition key", biThing{ID: "i", Kind: "k"}, "PK", "Tenant"},
		{"last part of the partition key", biThing{Tenant: "t", Kind: "k"}, "PK", "ID"},
		{"string part of the sort key", biThing{Tenant: "t", ID: "i"}, "SK", "Kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := things.Put(ctx, c.v)
			requireKeyError(t, err, "biThing", c.attr, c.field)
			_, err = things.Get(ctx, c.v)
			requireKeyError(t, err, "biThing", c.attr, c.field)
		})
	}
	t.Run("a zero number is a value", func(t *testing.T) {
		k, _, err := things.info.primaryKey(reflectValue(&biThing{Tenant: "t", ID: "i", Kind: "k"}))
		require.NoError(t, err)
		assert.Equal(t, sAV("ITEM#k#000000"), k["SK"])
	})
	t.Run("an index key with an empty part is left out, never rendered half", func(t *testing.T) {
		for _, v := range []biThing{
			{Tenant: "t", ID: "i", Kind: "k", At: t0},     // no group
			{Tenant: "t", ID: "i", Kind: "k", Group: "g"}, // zero time
		} {
			item, err := things.info.encodeItem(reflectValue(&v))
			require.NoError(t, err)
			assert.NotContains(t, item, "GSI1PK")
			assert.NotContains(t, item, "GSI1SK")
			for name, av := range item {
				if s, ok := av.(*types.AttributeValueMemberS); ok {
					assert.NotRegexp(t, `(^|#)(#|$)`, s.Value, "%s holds an empty part", name)
				}
			}
		}
	})
	t.Run("a query needs every input of its partition key", func(t *testing.T) {
		_, err := things.Query(ctx, biThing{Tenant: "t"})
		requireKeyError(t, err, "biThing", "PK", "ID")
		_, err = things.Query(ctx, biThing{Group: ""}, On("GSI1"))
		requireKeyError(t, err, "biThing", "GSI1PK", "Group")
	})
	t.Run("templates", func(t *testing.T) {
		tm, err := ParseTemplate("T#{tenant}#{id}", '#')
		require.NoError(t, err)
		for _, vals := range []map[string]any{
			{"tenant": "", "id": "i"}, {"tenant": "t"}, {"tenant": "t", "id": nil}, {"tenant": "t", "id": time.Time{}},
		} {
			_, err := tm.Render(vals)
			assert.ErrorIs(t, err, ErrInvalidKey, "%v", vals)
		}
		p, err := tm.Prefix(map[string]any{"tenant": "t"})
		require.NoError(t, err)
		assert.Equal(t, "T#t#", p, "a prefix stops at the first empty part")
		_, err = ParseTemplate("A##{x}", '#')
		assert.NoError(t, err, "literal text may hold the delimiter twice")
		for _, bad := range []string{"", "{}", "A#{}", "A#{:08}"} {
			_, err := ParseTemplate(bad, '#')
			assert.ErrorIs(t, err, ErrInvalidKey, "%q", bad)
		}
	})
}

// biPipe uses '|' as its delimiter, so '#' is an ordinary character.
type biPipe struct {
	_    struct{} `Type:"BiPipe" PK:"P|{a}|{b}" SK:"S|{n}"`
	A    string   `dynamodbav:"a"`
	B    string   `dynamodbav:"b"`
	N    int      `dynamodbav:"n"`
	Note string   `dynamodbav:"note"`
}

func TestBadInputDelimiterInValues(t *testing.T) {
	tbl, client := newTestTable(t)
	things := MustRegister[biThing](tbl)
	ctx := context.Background()
	cases := []struct {
		name        string
		v           biThing
		attr, field string
	}{
		{"partition key, first part", biThing{Tenant: "a#b", ID: "c", Kind: "k"}, "PK", "Tenant"},
		{"partition key, last part", biThing{Tenant: "a", ID: "b#c", Kind: "k"}, "PK", "ID"},
		{"partition key, whole value", biThing{Tenant: "#", ID: "c", Kind: "k"}, "PK", "Tenant"},
		{"sort key", biThing{Tenant: "a", ID: "c", Kind: "k#"}, "SK", "Kind"},
		{"index key", biThing{Tenant: "a", ID: "c", Kind: "k", Group: "g#h", At: t0}, "GSI1PK", "Group"},
	}
	for _, c := range cases {
		_, err := things.Put(ctx, c.v)
		requireKeyError(t, err, "biThing", c.attr, c.field)
		assert.Contains(t, err.Error(), "delimiter", c.name)
		_, err = things.Create(ctx, c.v)
		assert.ErrorIs(t, err, ErrInvalidKey, c.name)
		_, err = things.Get(ctx, c.v)
		if strings.HasPrefix(c.attr, "GSI") {
			assert.ErrorIs(t, err, ErrNotFound, "a Get needs no index key: %s", c.name)
		} else {
			assert.ErrorIs(t, err, ErrInvalidKey, c.name)
		}
	}
	// The two ways of splitting "a#b#c" between tenant and id are both refused:
	// no two inputs render one key.
	_, err := things.Put(ctx, biThing{Tenant: "a", ID: "b#c", Kind: "k"})
	assert.ErrorIs(t, err, ErrInvalidKey)
	_, err = things.Put(ctx, biThing{Tenant: "a#b", ID: "c", Kind: "k"})
	assert.ErrorIs(t, err, ErrInvalidKey)
	assert.Zero(t, client.count("PutItem"), "no key holding the delimiter was sent")
	assert.Equal(t, int64(1), client.count("GetItem"), "only the Get that needs no index key was sent")

	// A key with more parts than the template cannot be parsed into one.
	_, err = things.ParseKey(map[string]string{"PK": "T#a#b#c", "SK": "ITEM#k#000001"})
	assert.ErrorIs(t, err, ErrInvalidKey)
	_, err = things.ParseKey(map[string]string{"PK": "T#a#b", "SK": "ITEM#k#x#000001"})
	assert.ErrorIs(t, err, ErrInvalidKey)

	// Fields that feed no key may hold the delimiter.
	v := goodThing("d")
	v.Tags = []string{"#", "a#b"}
	v.Attrs = map[string]string{"k#1": "v#1"}
	_, err = things.Put(ctx, v)
	require.NoError(t, err)
	got, err := things.Get(ctx, v, Consistent())
	require.NoError(t, err)
	assert.Equal(t, v, got)

	// With '|' as the delimiter, '#' is allowed in keys and '|' is not.
	ptbl, _ := newTestTable(t, WithDelimiter('|'))
	pipes := MustRegister[biPipe](ptbl)
	p := biPipe{A: "a#1", B: "#", N: -5, Note: "|"}
	_, err = pipes.Put(ctx, p)
	require.NoError(t, err)
	back, err := pipes.Get(ctx, p, Consistent())
	require.NoError(t, err)
	assert.Equal(t, p, back)
	parsed, err := pipes.ParseKey(map[string]string{"PK": "P|a#1|#", "SK": "S|-5"})
	require.NoError(t, err)
	assert.Equal(t, biPipe{A: "a#1", B: "#", N: -5}, parsed)
	_, err = pipes.Put(ctx, biPipe{A: "a|b", B: "c"})
	requireKeyError(t, err, "biPipe", "PK", "A")

	// With '-' as the delimiter a negative number would hold it.
	mtbl := offlineTable(t, WithDelimiter('-'))
	type biMinus struct {
		_ struct{} `Type:"BiMinus" PK:"M-{n}" SK:"S"`
		N int      `dynamodbav:"n"`
	}
	minus := MustRegister[biMinus](mtbl)
	_, err = minus.Put(ctx, biMinus{N: -1})
	requireKeyError(t, err, "biMinus", "PK", "N")
}

// biBlob is an entity whose item size is easy to steer.
type biBlob struct {
	_    struct{} `Type:"BiBlob" PK:"B#{id}" SK:"B"`
	ID   string   `dynamodbav:"id"`
	Blob string   `dynamodbav:"blob"`
}

func TestBadInputOversizedKeysAndItems(t *testing.T) {
	tbl, client := newTestTable(t)
	things := MustRegister[biThing](tbl)
	blobs := MustRegister[biBlob](tbl)
	ctx := context.Background()
	e2 := func(n int) string { return strings.Repeat("é", n) } // 2 bytes a rune: bytes, not runes, count

	// At the limits: accepted, written and read back by DynamoDB Local.
	pkMax := biThing{Tenant: "t", ID: e2((MaxPartitionKeyBytes - len("T#t#")) / 2), Kind: "k"}
	skMax := biThing{Tenant: "t", ID: "i", Kind: e2((MaxSortKeyBytes - len("ITEM##000000")) / 2)}
	for _, v := range []biThing{pkMax, skMax} {
		_, ks, err := things.info.primaryKey(reflectValue(&v))
		require.NoError(t, err)
		require.True(t, len(ks["PK"]) == MaxPartitionKeyBytes || len(ks["SK"]) == MaxSortKeyBytes, "at a limit: %d, %d bytes", len(ks["PK"]), len(ks["SK"]))
		_, err = things.Put(ctx, v)
		require.NoError(t, err, "a key at the limit is accepted")
		got, err := things.Get(ctx, v, Consistent())
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
	puts := client.count("PutItem")

	// One byte over: refused before sending, naming the key attribute and the field.
	over := []struct {
		name        string
		v           biThing
		attr, field string
	}{
		{"partition key", biThing{Tenant: "t", ID: e2((MaxPartitionKeyBytes-len("T#t#"))/2) + "x", Kind: "k"}, "PK", "ID"},
		{"sort key", biThing{Tenant: "t", ID: "i", Kind: e2((MaxSortKeyBytes-len("ITEM##000000"))/2) + "x"}, "SK", "Kind"},
		{"index partition key", biThing{Tenant: "t", ID: "i", Kind: "k", At: t0, Group: e2((MaxPartitionKeyBytes-len("G#"))/2) + "x"}, "GSI1PK", "Group"},
		{"index sort key", biThing{Tenant: "t", ID: strings.Repeat("i", MaxSortKeyBytes-len(timeLayout)), Kind: "k", At: t0, Group: "g"}, "GSI1SK", "ID"},
	}
	for _, c := range over {
		t.Run(c.name, func(t *testing.T) {
			_, err := things.Put(ctx, c.v)
			require.ErrorIs(t, err, ErrInvalidKey)
			var ke *KeyError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, c.attr, ke.Attribute)
			assert.Contains(t, err.Error(), "over DynamoDB's limit")
			assert.Equal(t, c.field, ke.Field, "the error names the field whose value made the key too long: %v", err)
		})
	}
	assert.Equal(t, puts, client.count("PutItem"), "nothing over a key limit was sent")

	// Queries: a partition value or a sort key value over the limit.
	_, err := things.Query(ctx, biThing{}, Partition(strings.Repeat("p", MaxPartitionKeyBytes+1)))
	assert.ErrorIs(t, err, ErrInvalidKey)
	_, err = things.Query(ctx, goodThing("i"), SKBeginsWith(strings.Repeat("s", MaxSortKeyBytes+1)))
	assert.ErrorIs(t, err, ErrInvalidKey)
	_, err = things.Query(ctx, biThing{Tenant: "t", ID: e2(MaxPartitionKeyBytes / 2)})
	assert.ErrorIs(t, err, ErrInvalidKey)

	// Items: exactly at 400 KB by the library's count is sent and accepted by
	// DynamoDB Local; one byte more is refused before sending, naming the field.
	base := biBlob{ID: "b"}
	item, err := blobs.info.encodeItem(reflectValue(&base))
	require.NoError(t, err)
	atLimit := biBlob{ID: "b", Blob: strings.Repeat("x", MaxItemBytes-attrvalue.Size(item))}
	_, err = blobs.Put(ctx, atLimit)
	require.NoError(t, err, "an item of exactly 400 KB")
	got, err := blobs.Get(ctx, base, Consistent())
	require.NoError(t, err)
	assert.Equal(t, atLimit, got)

	puts = client.count("PutItem")
	big := biBlob{ID: "b", Blob: atLimit.Blob + "x"}
	_, err = blobs.Put(ctx, big)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "over DynamoDB's limit")
	assert.Contains(t, err.Error(), "Blob", "the error names the field that is too large: %v", err)
	_, err = blobs.BatchPut(ctx, []biBlob{{ID: "ok"}, big})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "item 1")
	err = tbl.Transact(ctx, blobs.TxPut(biBlob{ID: "ok"}), blobs.TxPut(big))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, puts, client.count("PutItem"))
	assert.Zero(t, client.count("BatchWriteItem")+client.count("TransactWriteItems"))

	// An update that sets a value of 400 KB can never fit in an item.
	updates := client.count("UpdateItem")
	_, err = blobs.Update(ctx, base, Set("blob", strings.Repeat("x", MaxItemBytes)))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidInput, "refused before sending: %v", err)
	assert.Contains(t, err.Error(), "Blob")
	assert.Equal(t, updates, client.count("UpdateItem"), "an update with a value over 400 KB was sent")
}

type (
	biFunc struct {
		_  struct{}     `PK:"A#{id}" SK:"B"`
		ID string       `dynamodbav:"id"`
		F  func() error `dynamodbav:"f"`
	}
	biComplex struct {
		_  struct{}   `PK:"A#{id}" SK:"B"`
		ID string     `dynamodbav:"id"`
		C  complex128 `dynamodbav:"c"`
	}
	biUnsafe struct {
		_  struct{}       `PK:"A#{id}" SK:"B"`
		ID string         `dynamodbav:"id"`
		P  unsafe.Pointer `dynamodbav:"p"`
	}
	biUintptr struct {
		_  struct{} `PK:"A#{id}" SK:"B"`
		ID string   `dynamodbav:"id"`
		U  uintptr  `dynamodbav:"u"`
	}
	biArrayKeyMap struct {
		_  struct{}          `PK:"A#{id}" SK:"B"`
		ID string            `dynamodbav:"id"`
		M  map[[2]int]string `dynamodbav:"m"`
	}
	biNestedChan struct {
		_     struct{} `PK:"A#{id}" SK:"B"`
		ID    string   `dynamodbav:"id"`
		Inner struct {
			C chan int `dynamodbav:"c"`
		} `dynamodbav:"inner"`
	}
	biSliceOfFuncs struct {
		_  struct{} `PK:"A#{id}" SK:"B"`
		ID string   `dynamodbav:"id"`
		Fs []func() `dynamodbav:"fs"`
	}
	biBoolKey struct {
		_  struct{} `PK:"A#{on}" SK:"B"`
		On bool     `dynamodbav:"on"`
	}
	biBytesKey struct {
		_   struct{} `PK:"A#{raw}" SK:"B"`
		Raw []byte   `dynamodbav:"raw"`
	}
	biStructKey struct {
		_     struct{}           `PK:"A#{inner}" SK:"B"`
		Inner struct{ X string } `dynamodbav:"inner"`
	}
	biMapKey struct {
		_ struct{}          `PK:"A#{m}" SK:"B"`
		M map[string]string `dynamodbav:"m"`
	}
	biVersionString struct {
		_  struct{} `PK:"A#{id}" SK:"B"`
		ID string   `dynamodbav:"id"`
		V  string   `dynamodbav:"v" singletable:"version"`
	}
	biShardNoCount struct {
		_     struct{} `PK:"A#{id}#{shard}" SK:"B"`
		ID    string   `dynamodbav:"id"`
		Shard int      `dynamodbav:"shard" singletable:"shard"`
	}
)

func TestBadInputUnsupportedFieldTypes(t *testing.T) {
	cases := []struct {
		name, field, reason string
		reg                 func(*Table) error
	}{
		{"func", "biFunc.F", "func", func(t *Table) error { _, err := Register[biFunc](t); return err }},
		{"complex", "biComplex.C", "complex", func(t *Table) error { _, err := Register[biComplex](t); return err }},
		{"unsafe.Pointer", "biUnsafe.P", "unsafe.Pointer", func(t *Table) error { _, err := Register[biUnsafe](t); return err }},
		{"uintptr", "biUintptr.U", "uintptr", func(t *Table) error { _, err := Register[biUintptr](t); return err }},
		{"map with array keys", "biArrayKeyMap.M", "map", func(t *Table) error { _, err := Register[biArrayKeyMap](t); return err }},
		{"chan in a nested struct", "biNestedChan.Inner", "chan", func(t *Table) error { _, err := Register[biNestedChan](t); return err }},
		{"slice of funcs", "biSliceOfFuncs.Fs", "func", func(t *Table) error { _, err := Register[biSliceOfFuncs](t); return err }},
		{"bool in a key", "biBoolKey.On", "cannot be part of a key", func(t *Table) error { _, err := Register[biBoolKey](t); return err }},
		{"[]byte in a key", "biBytesKey.Raw", "cannot be part of a key", func(t *Table) error { _, err := Register[biBytesKey](t); return err }},
		{"struct in a key", "biStructKey.Inner", "cannot be part of a key", func(t *Table) error { _, err := Register[biStructKey](t); return err }},
		{"map in a key", "biMapKey.M", "cannot be part of a key", func(t *Table) error { _, err := Register[biMapKey](t); return err }},
		{"string version", "biVersionString.V", "integer", func(t *Table) error { _, err := Register[biVersionString](t); return err }},
		{"shard field without a count", "biShardNoCount.Shard", "shards=N", func(t *Table) error { _, err := Register[biShardNoCount](t); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.reg(offlineTable(t))
			require.ErrorIs(t, err, ErrInvalidEntity)
			var ee *EntityError
			require.ErrorAs(t, err, &ee)
			assert.Contains(t, err.Error(), c.field)
			assert.Contains(t, err.Error(), c.reason)
		})
	}
}

// biFloats has floats in every shape a NaN or an infinity can hide in.
type biFloats struct {
	_      struct{}           `Type:"BiFloats" PK:"F#{id}" SK:"F"`
	ID     string             `dynamodbav:"id"`
	Score  float64            `dynamodbav:"score"`
	Small  float32            `dynamodbav:"small"`
	Ptr    *float64           `dynamodbav:"ptr"`
	List   []float64          `dynamodbav:"list"`
	ByName map[string]float64 `dynamodbav:"byName"`
	Set    []float64          `dynamodbav:"set,numberset,omitempty"`
	Inner  struct {
		X float64 `dynamodbav:"x"`
	} `dynamodbav:"inner"`
}

func TestBadInputNaNAndInfinity(t *testing.T) {
	tbl, client := newTestTable(t)
	floats := MustRegister[biFloats](tbl)
	ctx := context.Background()
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name, field string
		v           biFloats
	}{
		{"NaN", "Score", biFloats{Score: nan}},
		{"+Inf", "Score", biFloats{Score: inf}},
		{"-Inf", "Score", biFloats{Score: math.Inf(-1)}},
		{"float32 NaN", "Small", biFloats{Small: float32(nan)}},
		{"pointer", "Ptr", biFloats{Ptr: &inf}},
		{"list element", "List", biFloats{List: []float64{1, nan}}},
		{"map value", "ByName", biFloats{ByName: map[string]float64{"a": inf}}},
		{"number set", "Set", biFloats{Set: []float64{1, inf}}},
		{"nested struct", "Inner", func() biFloats { var v biFloats; v.Inner.X = nan; return v }()},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.v.ID = "f" + itoa(i)
			before := sentCount(client)
			_, err := floats.Put(ctx, c.v)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput, "refused before sending: %v", err)
			assert.Contains(t, err.Error(), c.field, "the error names the field")
			_, err = floats.BatchPut(ctx, []biFloats{c.v})
			assert.ErrorIs(t, err, ErrInvalidInput, "BatchPut: %v", err)
			assert.ErrorIs(t, tbl.Transact(ctx, floats.TxPut(c.v)), ErrInvalidInput, "TxPut")
			assert.Equal(t, before, sentCount(client), "a NaN or an infinity was sent")
		})
	}
	t.Run("Update", func(t *testing.T) {
		_, err := floats.Put(ctx, biFloats{ID: "u"})
		require.NoError(t, err)
		before := sentCount(client)
		for _, opt := range []UpdateOption{Set("score", nan), Set("score", inf), Add("score", math.Inf(-1)), Set("list", []float64{nan})} {
			_, err := floats.Update(ctx, biFloats{ID: "u"}, opt)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput, "refused before sending: %v", err)
		}
		assert.Equal(t, before, sentCount(client), "a NaN or an infinity was sent")
	})
}

// biText has strings in every shape invalid UTF-8 can hide in.
type biText struct {
	_     struct{}          `Type:"BiText" PK:"X#{id}" SK:"X"`
	ID    string            `dynamodbav:"id"`
	Name  string            `dynamodbav:"name"`
	Tags  []string          `dynamodbav:"tags"`
	Attrs map[string]string `dynamodbav:"attrs"`
	Set   []string          `dynamodbav:"set,stringset,omitempty"`
}

func TestBadInputInvalidUTF8(t *testing.T) {
	tbl, client := newTestTable(t)
	texts := MustRegister[biText](tbl)
	ctx := context.Background()
	bad := "caf\xe9" // Latin-1, not UTF-8

	// In a key: refused, naming the field.
	_, err := texts.Put(ctx, biText{ID: bad})
	requireKeyError(t, err, "biText", "PK", "ID")
	assert.Contains(t, err.Error(), "UTF-8")
	_, err = texts.Query(ctx, biText{}, Partition(bad))
	assert.ErrorIs(t, err, ErrInvalidKey)

	// Valid but unusual text is stored and read back byte for byte.
	odd := biText{ID: "odd", Name: "nul\x00 bom\ufeff max\U0010FFFF emoji😀 rtl\u202e", Tags: []string{"\u00e9", "e\u0301"}, Attrs: map[string]string{"\u00e9": "e\u0301", "\x00": "nul name"}}
	_, err = texts.Put(ctx, odd)
	require.NoError(t, err)
	got, err := texts.Get(ctx, odd, Consistent())
	require.NoError(t, err)
	assert.Equal(t, odd, got)

	// Elsewhere, invalid UTF-8 cannot be stored as given: DynamoDB strings are
	// UTF-8, and the SDK's JSON encoding would replace the bytes with U+FFFD. It
	// must be refused before sending, naming the field, not silently altered.
	// (Every other string is set: DynamoDB Local 1.x refuses empty strings.)
	ok := func(f func(*biText)) biText {
		v := biText{Name: "n", Tags: []string{"t"}, Attrs: map[string]string{"k": "v"}}
		f(&v)
		return v
	}
	cases := []struct {
		name, field string
		v           biText
	}{
		{"string field", "Name", ok(func(v *biText) { v.Name = bad })},
		{"list element", "Tags", ok(func(v *biText) { v.Tags = []string{"ok", bad} })},
		{"map value", "Attrs", ok(func(v *biText) { v.Attrs = map[string]string{"k": bad} })},
		{"map key", "Attrs", ok(func(v *biText) { v.Attrs = map[string]string{bad: "v"} })},
		{"string set", "Set", ok(func(v *biText) { v.Set = []string{bad} })},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.v.ID = "bad" + itoa(i)
			before := sentCount(client)
			_, err := texts.Put(ctx, c.v)
			if err == nil {
				stored, gerr := texts.Get(ctx, c.v, Consistent())
				require.NoError(t, gerr)
				assert.Equal(t, c.v, stored, "stored silently altered")
			}
			require.Error(t, err, "invalid UTF-8 accepted")
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), c.field)
			assert.Equal(t, before, sentCount(client), "invalid UTF-8 was sent")
		})
	}
	t.Run("Update", func(t *testing.T) {
		_, err := texts.Put(ctx, ok(func(v *biText) { v.ID = "u" }))
		require.NoError(t, err)
		before := sentCount(client)
		_, err = texts.Update(ctx, biText{ID: "u"}, Set("name", bad))
		assert.ErrorIs(t, err, ErrInvalidInput, "refused before sending: %v", err)
		assert.Equal(t, before, sentCount(client), "invalid UTF-8 was sent")
	})
}

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

// TestBadInputForgedCursors goes beyond flipped bytes (query_test.go): cursors
// forged with the public checksum key, cursors of other entities, other kinds
// of query and other tables. Each is refused with ErrInvalidCursor and a message
// that says why, before any request; none ever starts a query in another
// partition.
func TestBadInputForgedCursors(t *testing.T) {
	tbl, client := newTestTable(t)
	_, orders, items := registerAll(t, tbl)
	ctx := context.Background()
	seedOrders(t, orders, items, "c1", 6)
	seedOrders(t, orders, items, "c2", 6)
	key := tOrder{CustomerID: "c1"}
	page, err := orders.Query(ctx, key, Limit(2))
	require.NoError(t, err)
	require.NotEmpty(t, page.Cursor)
	c2page, err := orders.Query(ctx, tOrder{CustomerID: "c2"}, Limit(2))
	require.NoError(t, err)
	collPage, err := tbl.Query(ctx, "CUST#c1", Limit(2))
	require.NoError(t, err)
	itemPage, err := items.Query(ctx, tLineItem{CustomerID: "c1"}, Limit(2))
	require.NoError(t, err)

	pq, err := orders.prepareQuery(reflectValue(&key), nil)
	require.NoError(t, err)
	// forge signs a payload with the table's key, as anyone who read this
	// package's source can when no CursorSecret is set.
	forge := func(id []byte, values ...string) string {
		payload := append([]byte{cursorVersion}, id...)
		for _, v := range values {
			payload = append(payload, byte(len(v)))
			payload = append(payload, v...)
		}
		payload = append(payload, tbl.cursorMAC(payload)...)
		return base64.RawURLEncoding.EncodeToString(payload)
	}
	sum := sha256.Sum256(pq.identity)
	myID := sum[:cursorIDLen]
	secretTbl := offlineTable(t, WithCursorSecret([]byte("s3cret")))
	_, sOrders, _ := registerAll(t, secretTbl)

	before := client.count("Query")
	cases := []struct {
		name, cursor, why string
		q                 func(string) error
	}{
		{"forged into another partition", forge(myID, "CUST#c2", "ORDER#o001"), "another partition", nil},
		{"forged with the wrong number of keys", forge(myID, "CUST#c1"), "truncated", nil},
		{"forged with an extra key", forge(myID, "CUST#c1", "ORDER#o001", "x"), "trailing", nil},
		{"forged with an empty sort key", forge(myID, "CUST#c1", ""), "truncated", nil},
		{"forged for another query", forge(make([]byte, cursorIDLen), "CUST#c1", "ORDER#o001"), "another query", nil},
		{"another partition's cursor", c2page.Cursor, "another query", nil},
		{"a collection query's cursor", collPage.Cursor, "another query", nil},
		{"another entity's cursor", itemPage.Cursor, "another query", nil},
		{"an empty-looking cursor", "AAAA", "not a cursor", nil},
		{"base64 with padding", page.Cursor + "==", "not a cursor", nil},
		{"line breaks inserted", page.Cursor[:4] + "\r\n" + page.Cursor[4:] + "\n", "not a cursor", nil},
		{"standard base64 alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(page.Cursor) + "+/", "", nil},
		{"a huge cursor", strings.Repeat("A", 1<<20), "", nil},
		{"unsigned cursor on a signed table", page.Cursor, "another secret", func(c string) error {
			_, err := sOrders.Query(ctx, key, After(c))
			return err
		}},
		{"entity cursor on a collection query", page.Cursor, "another query", func(c string) error {
			_, err := tbl.Query(ctx, "CUST#c1", After(c))
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			if q == nil {
				q = func(cur string) error { _, err := orders.Query(ctx, key, After(cur)); return err }
			}
			err := q(c.cursor)
			require.ErrorIs(t, err, ErrInvalidCursor)
			assert.Contains(t, err.Error(), "cursor")
			if c.why != "" {
				assert.Contains(t, err.Error(), c.why)
			}
			if c.q == nil {
				for _, err := range orders.All(ctx, key, After(c.cursor)) {
					assert.ErrorIs(t, err, ErrInvalidCursor, "All")
				}
			}
		})
	}
	assert.Equal(t, before, client.count("Query"), "no request was sent for a bad cursor")

	// A good cursor resumes in its own partition only.
	next, err := orders.Query(ctx, key, Limit(2), After(page.Cursor))
	require.NoError(t, err)
	for _, o := range next.Items {
		assert.Equal(t, "c1", o.CustomerID)
	}
	assert.True(t, slices.IsSortedFunc(append(page.Items, next.Items...), func(a, b tOrder) int { return strings.Compare(a.OrderID, b.OrderID) }))
}

type (
	// biDoc holds values that can nest: a linked list of nodes, and maps of any.
	biDoc struct {
		_    struct{}       `Type:"BiDoc" PK:"DOC#{id}" SK:"DOC"`
		ID   string         `dynamodbav:"id"`
		Node *biNode        `dynamodbav:"node,omitempty"`
		Any  map[string]any `dynamodbav:"any,omitempty"`
		List []*biNode      `dynamodbav:"list,omitempty"`
	}
	biNode struct {
		Next *biNode `dynamodbav:"next,omitempty"`
		V    int     `dynamodbav:"v"`
	}
)

// biChain returns n nodes, each inside the one before: in a biDoc, the deepest
// is at level n+1 (the item is level 1).
func biChain(n int) *biNode {
	var head *biNode
	for i := range n {
		head = &biNode{Next: head, V: i}
	}
	return head
}

// A value that contains itself, or nests deeper than DynamoDB's 32 levels (the
// item being the first), is refused before anything is sent, with ErrInvalidInput
// and the field path; 32 levels are stored and read back.
func TestBadInputCyclesAndDepth(t *testing.T) {
	tbl, client := newTestTable(t)
	docs := MustRegister[biDoc](tbl)
	ctx := context.Background()
	sent := func() int64 {
		return client.count("PutItem") + client.count("UpdateItem") + client.count("BatchWriteItem") + client.count("TransactWriteItems")
	}

	self := &biNode{V: 1}
	self.Next = self
	loop := map[string]any{"id": "x"}
	loop["again"] = loop
	deepAny := map[string]any{"leaf": true}
	for range 31 { // 32 maps from level 2: the last at level 33
		deepAny = map[string]any{"x": deepAny}
	}
	cases := []struct {
		name  string
		v     biDoc
		attr  string // the attribute at fault, for Update
		value any
		names []string // what the message must name
	}{
		{"a node pointing to itself", biDoc{ID: "1", Node: self}, "node", self, []string{"biDoc.Node.Next", "biDoc.Node"}},
		{"a map holding itself", biDoc{ID: "2", Any: loop}, "any", loop, []string{`biDoc.Any["again"]`, "biDoc.Any"}},
		{"33 levels of nodes", biDoc{ID: "3", Node: biChain(32)}, "node", biChain(32), []string{"biDoc.Node.Next.Next", "32 levels"}},
		{"33 levels of maps", biDoc{ID: "4", Any: deepAny}, "any", deepAny, []string{`biDoc.Any["x"]["x"]`, "32 levels"}},
	}
	before := sent()
	for _, c := range cases {
		writes := map[string]func() error{
			"Put":      func() error { _, err := docs.Put(ctx, c.v); return err },
			"Create":   func() error { _, err := docs.Create(ctx, c.v); return err },
			"BatchPut": func() error { _, err := docs.BatchPut(ctx, []biDoc{c.v}); return err },
			"Transact": func() error { return tbl.Transact(ctx, docs.TxPut(c.v)) },
			"Update": func() error {
				_, err := docs.Update(ctx, biDoc{ID: c.v.ID}, Set(c.attr, c.value), Upsert())
				return err
			},
			"SetIfNotExists": func() error {
				_, err := docs.Update(ctx, biDoc{ID: c.v.ID}, SetIfNotExists(c.attr, c.value), Upsert())
				return err
			},
			"Table.BatchWrite": func() error { _, err := tbl.BatchWrite(ctx, docs.BatchPutItem(c.v)); return err },
			"TransactWith":     func() error { return tbl.TransactWith(ctx, TxOptions{Token: "cycles-" + c.v.ID}, docs.TxPut(c.v)) },
		}
		for op, write := range writes {
			err := write()
			require.ErrorIs(t, err, ErrInvalidInput, "%s: %s", c.name, op)
			for _, name := range c.names {
				assert.Contains(t, err.Error(), name, "%s: %s names the path", c.name, op)
			}
		}
	}
	assert.Equal(t, before, sent(), "nothing was sent")

	// 32 levels, the most DynamoDB stores: accepted, and read back as written.
	deepest := map[string]any{"leaf": true}
	for range 30 { // 31 maps from level 2: the last at level 32
		deepest = map[string]any{"x": deepest}
	}
	v := biDoc{ID: "5", Node: biChain(31), Any: deepest}
	_, err := docs.Put(ctx, v)
	require.NoError(t, err)
	got, err := docs.Get(ctx, biDoc{ID: "5"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, v, got)
	_, err = docs.Update(ctx, biDoc{ID: "5"}, Set("node", biChain(31)))
	require.NoError(t, err)
}

// A value set or appended at a document path sits as many levels below the item as
// the path has steps: the 32-level limit counts them too, before anything is sent.
func TestBadInputDepthAtPath(t *testing.T) {
	tbl, client := newTestTable(t)
	docs := MustRegister[biDoc](tbl)
	ctx := context.Background()
	_, err := docs.Put(ctx, biDoc{ID: "p", Node: &biNode{V: 1}, Any: map[string]any{"a": map[string]any{}}})
	require.NoError(t, err)
	before := client.count("UpdateItem")
	deepMap := func(n int) map[string]any { // n maps, one in the other
		m := map[string]any{"leaf": true}
		for range n - 1 {
			m = map[string]any{"x": m}
		}
		return m
	}
	refused := map[string]UpdateOption{
		"Set below a struct":            Set("node.next", biChain(31)), // node.next at level 3; 31 nodes end at 33
		"SetIfNotExists below a struct": SetIfNotExists("node.next", biChain(31)),
		"Set below a map":               Set("any.a", deepMap(31)),   // any.a at level 3; 31 maps end at 33
		"Append":                        Append("list", biChain(31)), // list at 2, its element at 3
		"Prepend":                       Prepend("list", biChain(31)),
	}
	for name, op := range refused {
		_, err := docs.Update(ctx, biDoc{ID: "p"}, op)
		require.ErrorIs(t, err, ErrInvalidInput, name)
		assert.Contains(t, err.Error(), "nested deeper than DynamoDB's 32 levels", name)
	}
	assert.Equal(t, before, client.count("UpdateItem"), "nothing was sent")

	// One level less is stored and read back.
	for name, op := range map[string]UpdateOption{
		"Set below a struct": Set("node.next", biChain(30)),
		"Set below a map":    Set("any.a", deepMap(30)),
		"Append":             Append("list", biChain(30)),
	} {
		_, err := docs.Update(ctx, biDoc{ID: "p"}, op)
		require.NoError(t, err, name)
	}
	got, err := docs.Get(ctx, biDoc{ID: "p"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, biChain(30), got.Node.Next)
	require.Len(t, got.List, 1)
	assert.Equal(t, biChain(30), got.List[0])
}
