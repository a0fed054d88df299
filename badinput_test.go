package singletable

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad input: every test in the badinput*_test.go files hands the library
// something wrong, or something legal but awkward, and checks that it is refused
// before anything is sent, with an error that names the field, or that it is
// stored and read back unchanged.
//
// Index (test -> the behaviour it tests, where that lives):
//
// badinput_test.go: keys and cursors (keys.go, render.go, cursor.go); the
// shared entities (biThing, biPtrKey) and helpers (sentCount, requireKeyError)
//   - TestBadInputNilAndZeroValues -> nil and zero entities, keys and fields on
//     every call kind (validate.go, keys.go)
//   - TestBadInputZeroTxItem -> a TxItem no entity made (tx.go)
//   - TestBadInputEmptyKeyParts -> empty key placeholders (keys.go)
//   - TestBadInputDelimiterInValues -> the key delimiter inside key values
//     (keys.go, sortkey.go)
//   - TestBadInputForgedCursors -> forged, foreign and tampered cursors
//     (cursor.go)
//
// badinput_values_test.go: item values (validate.go, internal/codec)
//   - TestBadInputOversizedKeysAndItems -> key and item size limits
//   - TestBadInputUnsupportedFieldTypes -> field types the codec cannot store
//     (register.go, internal/codec)
//   - TestBadInputNaNAndInfinity -> NaN and infinities in number fields
//   - TestBadInputInvalidUTF8 -> invalid UTF-8 in strings, keys and sets
//   - TestBadInputCyclesAndDepth -> cyclic values and the 32-level nesting limit
//   - TestBadInputDepthAtPath -> the nesting limit at a document path
//     (docpath.go, update_ops.go)
//
// badinput_names_test.go: attribute names (internal/expr, register.go,
// reserved.go)
//   - TestBadInputReservedWordsAndSpecialNames -> DynamoDB's reserved words and
//     special characters in names: placeholders only in expressions
//   - TestBadInputNamesThatWouldOverwriteReservedAttributes -> field names that
//     collide with the key, type, receipt or schema attributes, exactly or but
//     for case

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
		k, _, err := things.x.info.primaryKey(reflectValue(&biThing{Tenant: "t", ID: "i", Kind: "k"}))
		require.NoError(t, err)
		assert.Equal(t, sAV("ITEM#k#000000"), k["SK"])
	})
	t.Run("an index key with an empty part is left out, never rendered half", func(t *testing.T) {
		for _, v := range []biThing{
			{Tenant: "t", ID: "i", Kind: "k", At: t0},     // no group
			{Tenant: "t", ID: "i", Kind: "k", Group: "g"}, // zero time
		} {
			item, err := things.x.info.encodeItem(reflectValue(&v))
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

	pq, err := orders.core().prepareQuery(reflectValue(&key), nil)
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
