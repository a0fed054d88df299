package singletable

import (
	"context"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Bad input: item values. The index of the bad-input tests is at the top of
// badinput_test.go.

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
		_, ks, err := things.x.info.primaryKey(reflectValue(&v))
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
		{"index sort key", biThing{Tenant: "t", ID: strings.Repeat("i", MaxSortKeyBytes-len(keytmpl.TimeLayout)), Kind: "k", At: t0, Group: "g"}, "GSI1SK", "ID"},
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
	item, err := blobs.x.info.encodeItem(reflectValue(&base))
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
