package singletable

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/design"
)

// maOrder is in the native index ByTenantStatus: partition tenant, status;
// sort created (N, Unix seconds), orderId.
type maOrder struct {
	_          struct{}  `Type:"MAOrder" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Tenant     string    `dynamodbav:"tenant"`
	Status     string    `dynamodbav:"status,omitempty"` // empty: not in ByTenantStatus
	Created    time.Time `dynamodbav:"created,unixtime"`
	Total      int64     `dynamodbav:"total"`
}

func byTenantStatus(opts ...IndexOption) TableOption {
	return WithNativeIndex("ByTenantStatus", NativeKey{
		Partition: []KeyAttribute{S("tenant"), S("status")},
		Sort:      []KeyAttribute{N("created"), S("orderId")},
	}, opts...)
}

// queryRecorder records every QueryInput a table sends.
type queryRecorder struct {
	Client
	mu  sync.Mutex
	ins []*dynamodb.QueryInput
}

func (r *queryRecorder) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.mu.Lock()
	r.ins = append(r.ins, in)
	r.mu.Unlock()
	return r.Client.Query(ctx, in, o...)
}

func (r *queryRecorder) last() *dynamodb.QueryInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ins) == 0 {
		return nil
	}
	return r.ins[len(r.ins)-1]
}

func (r *queryRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ins)
}

// recordedTable is newTestTable with a query recorder between the table and DynamoDB Local.
func recordedTable(t *testing.T, opts ...TableOption) (*Table, *queryRecorder) {
	t.Helper()
	base, _ := newTestTable(t, opts...)
	rec := &queryRecorder{Client: base.Client()}
	tbl, err := NewTable(rec, base.Name(), append([]TableOption{testTableOptions}, opts...)...)
	require.NoError(t, err)
	return tbl, rec
}

// keyCondText renders a query's key condition with names and values put back,
// for assertions: "#tenant = S:t1 AND ...".
func keyCondText(in *dynamodb.QueryInput) string {
	s := aws.ToString(in.KeyConditionExpression)
	for k, v := range in.ExpressionAttributeNames {
		s = strings.ReplaceAll(s, k+" ", v+" ")
		s = strings.ReplaceAll(s, k+",", v+",")
		s = strings.ReplaceAll(s, k+")", v+")")
	}
	for k, v := range in.ExpressionAttributeValues {
		var text string
		switch x := v.(type) {
		case *types.AttributeValueMemberS:
			text = "S:" + x.Value
		case *types.AttributeValueMemberN:
			text = "N:" + x.Value
		case *types.AttributeValueMemberB:
			text = "B:" + string(x.Value)
		}
		s = strings.ReplaceAll(s, k+" ", text+" ")
		s = strings.ReplaceAll(s, k+")", text+")")
		if strings.HasSuffix(s, k) {
			s = strings.TrimSuffix(s, k) + text
		}
	}
	return s
}

// TestMultiAttrCreateDescribeRoundTrip: CreateTable makes the native index with
// every HASH then every RANGE element in order, each attribute declared with its
// type; DescribeTable returns it so; the definitions for infrastructure as code
// carry the same key schema (CloudFormation lists it, Terraform as key_schema
// blocks).
func TestMultiAttrCreateDescribeRoundTrip(t *testing.T) {
	tbl, _ := newTestTable(t, byTenantStatus(ProjectInclude("total")))
	ctx := context.Background()
	out, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	var gsi *types.GlobalSecondaryIndexDescription
	for i, g := range out.Table.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == "ByTenantStatus" {
			gsi = &out.Table.GlobalSecondaryIndexes[i]
		}
	}
	require.NotNil(t, gsi)
	var schema []string
	for _, k := range gsi.KeySchema {
		schema = append(schema, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	assert.Equal(t, []string{"tenant HASH", "status HASH", "created RANGE", "orderId RANGE"}, schema)
	assert.Equal(t, types.ProjectionTypeInclude, gsi.Projection.ProjectionType)
	assert.ElementsMatch(t, []string{"total", "Type", "_schema"}, gsi.Projection.NonKeyAttributes)
	defs := map[string]types.ScalarAttributeType{}
	for _, d := range out.Table.AttributeDefinitions {
		defs[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	assert.Equal(t, types.ScalarAttributeTypeS, defs["tenant"])
	assert.Equal(t, types.ScalarAttributeTypeS, defs["status"])
	assert.Equal(t, types.ScalarAttributeTypeN, defs["created"])
	assert.Equal(t, types.ScalarAttributeTypeS, defs["orderId"])

	def, err := tbl.Definition()
	require.NoError(t, err)
	cfn, err := def.CloudFormationJSON()
	require.NoError(t, err)
	assert.Contains(t, string(cfn), `"AttributeName": "status"`)
	tf, err := def.Terraform()
	require.NoError(t, err)
	assert.Contains(t, string(tf), "key_schema")
	assert.Equal(t, 4, strings.Count(string(tf[strings.Index(string(tf), `"ByTenantStatus"`):]), "key_schema {"), "four key_schema blocks:\n%s", tf)

	// Options shows the index as declared, and a copy.
	o := tbl.Options()
	ix := o.Indexes[len(o.Indexes)-1]
	assert.True(t, ix.Native())
	assert.Equal(t, []KeyAttribute{S("tenant"), S("status")}, ix.PartitionAttrs)
	ix.PartitionAttrs[0].Name = "changed"
	assert.Equal(t, "tenant", tbl.Options().Indexes[len(o.Indexes)-1].PartitionAttrs[0].Name)
}

// TestMultiAttrDeclareRefused: NewTable refuses, before anything is sent and
// naming the index, what DynamoDB would refuse at CreateTable (Toasty's
// composite_index_too_many_range_columns, crates/toasty-driver-integration-suite/
// src/tests/index_composite.rs; ElectroDB's "should only allow secondary indexes
// to be composite indexes", test/ts_connected.multiattribute-indexes.spec.ts) and
// what the library cannot work with.
func TestMultiAttrDeclareRefused(t *testing.T) {
	five := []KeyAttribute{S("a"), S("b"), S("c"), S("d"), S("e")}
	cases := []struct {
		name string
		opts []TableOption
		want string
	}{
		{"no partition", []TableOption{WithNativeIndex("X", NativeKey{Sort: []KeyAttribute{S("a")}})}, "no partition attribute"},
		{"5 partition", []TableOption{WithNativeIndex("X", NativeKey{Partition: five})}, "5 partition attributes"},
		{"5 sort", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("p")}, Sort: five})}, "5 sort attributes"},
		{"repeated", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("a")}, Sort: []KeyAttribute{S("b"), N("a")}})}, `"a" is given twice`},
		{"empty name", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("")}})}, "no name"},
		{"bad type", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{{Name: "a", Type: "BOOL"}}})}, `type "BOOL"`},
		{"two types", []TableOption{
			WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("a")}}),
			WithNativeIndex("Y", NativeKey{Partition: []KeyAttribute{N("a")}}),
		}, "one type per table"},
		{"library attribute", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("Type")}})}, "library writes itself"},
		{"templated index key", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("GSI1PK")}})}, "library writes itself"},
		{"repeated name", []TableOption{WithNativeIndex("GSI1", NativeKey{Partition: []KeyAttribute{S("a")}})}, "empty or repeated"},
		{"include a key attr", []TableOption{WithNativeIndex("X", NativeKey{Partition: []KeyAttribute{S("a")}}, ProjectInclude("a"))}, "always projected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "offline", append([]TableOption{testTableOptions}, c.opts...)...)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// 4 + 4 is accepted.
	_, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "offline", WithNativeIndex("X", NativeKey{Partition: five[:4], Sort: []KeyAttribute{S("f"), S("g"), S("h"), S("i")}}))
	assert.NoError(t, err)
}

type maBool struct {
	_      struct{} `Type:"MABool" PK:"B#{id}" SK:"B"`
	ID     string   `dynamodbav:"id"`
	Tenant bool     `dynamodbav:"tenant"`
}

type maList struct {
	_      struct{} `Type:"MAList" PK:"L#{id}" SK:"L"`
	ID     string   `dynamodbav:"id"`
	Status []string `dynamodbav:"status"`
}

type maNumberAsText struct {
	_       struct{} `Type:"MANum" PK:"N#{id}" SK:"N"`
	ID      string   `dynamodbav:"id"`
	Created int64    `dynamodbav:"created,string"`
}

type maTimeText struct {
	_       struct{}  `Type:"MATime" PK:"T#{id}" SK:"T"`
	ID      string    `dynamodbav:"id"`
	Created time.Time `dynamodbav:"created"`
}

type maMap struct {
	_      struct{}          `Type:"MAMap" PK:"M#{id}" SK:"M"`
	ID     string            `dynamodbav:"id"`
	Tenant map[string]string `dynamodbav:"tenant"`
}

type maTemplate struct {
	_      struct{} `Type:"MATmpl" PK:"X#{id}" SK:"X" tenant:"T#{id}"`
	ID     string   `dynamodbav:"id"`
	Status string   `dynamodbav:"status"`
}

// TestMultiAttrRegisterRefused: Register refuses an entity whose field stored
// under a native index's attribute DynamoDB could not index (a bool, a list, a
// map, a number stored as text in an N attribute), or one stored as RFC 3339
// text in a sort attribute (it does not sort), and a template for a native
// attribute (ElectroDB's "should allow a missing index field only on composite
// indexes"), naming the entity, the field and the index.
func TestMultiAttrRegisterRefused(t *testing.T) {
	tbl := offlineTable(t, byTenantStatus())
	check := func(err error, field, want string) {
		t.Helper()
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrInvalidEntity)
		var ee *EntityError
		require.True(t, errors.As(err, &ee))
		assert.Equal(t, field, ee.Field)
		assert.Contains(t, err.Error(), want)
	}
	_, err := Register[maBool](tbl)
	check(err, "Tenant", "native index ByTenantStatus: attribute \"tenant\" is a key attribute")
	_, err = Register[maList](tbl)
	check(err, "Status", "[]string")
	_, err = Register[maMap](tbl)
	check(err, "Tenant", "map[string]string")
	_, err = Register[maNumberAsText](tbl)
	check(err, "Created", "is declared N, but the field int64 (string) is stored as S")
	_, err = Register[maTimeText](tbl)
	check(err, "Created", "declared N")
	_, err = Register[maTemplate](tbl)
	check(err, "tenant", "unknown tag")

	// A time stored as text in a sort attribute declared S is refused too: it does not sort.
	tbl2 := offlineTable(t, WithNativeIndex("ByTime", NativeKey{Partition: []KeyAttribute{S("id")}, Sort: []KeyAttribute{S("created")}}))
	_, err = Register[maTimeText](tbl2)
	check(err, "Created", "unixtime")

	// An entity that stores some of the attributes registers, and is refused by a query of the index.
	type maPartial struct {
		_      struct{} `Type:"MAPartial" PK:"P#{id}" SK:"P"`
		ID     string   `dynamodbav:"id"`
		Tenant string   `dynamodbav:"tenant"`
	}
	partial, err := Register[maPartial](tbl)
	require.NoError(t, err)
	_, err = partial.Query(context.Background(), maPartial{Tenant: "t"}, On("ByTenantStatus"))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "maPartial does not store status, created, orderId")
}

// maSharded is a sharded entity that stores a native index's attributes.
type maSharded struct {
	_      struct{} `Type:"MASharded" PK:"SH#{shard}#{id}" SK:"S" singletable:"shards=4"`
	ID     string   `dynamodbav:"id"`
	Shard  int      `dynamodbav:"shard" singletable:"shard"`
	Tenant string   `dynamodbav:"tenant"`
}

// TestMultiAttrOtherReadsRefused: fan-out queries and index waits render a
// partition, which a native index does not have: refused before sending, never
// a query read once per shard.
func TestMultiAttrOtherReadsRefused(t *testing.T) {
	tbl := offlineTable(t, WithNativeIndex("ByTenant", NativeKey{Partition: []KeyAttribute{S("tenant")}}))
	sharded := MustRegister[maSharded](tbl)
	_, err := sharded.QueryShards(context.Background(), maSharded{Tenant: "t"}, On("ByTenant"))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "native index ByTenant")
	_, _, err = sharded.WaitIndexed(context.Background(), "ByTenant", maSharded{ID: "1", Tenant: "t"})
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestMultiAttrDescribe: the design shows a native index as what it is: its
// typed partition and sort attributes in order, marked native, in the index
// table and the diagram, with no key template column.
func TestMultiAttrDescribe(t *testing.T) {
	tbl := offlineTable(t, byTenantStatus(ProjectInclude("total")))
	MustRegister[maOrder](tbl)
	d := tbl.Describe()
	md := d.Markdown()
	assert.Contains(t, md, "| ByTenantStatus (native) | tenant S, status S | created N, orderId S | global, INCLUDE `total`")
	assert.Contains(t, d.Mermaid(), "ByTenantStatus (native)")
	assert.Contains(t, d.Mermaid(), "HASH tenant S, status S")
	assert.NotContains(t, md, "`` |", "no empty key template column")
	var ix *design.Index
	for i := range d.Table.Indexes {
		if d.Table.Indexes[i].Name == "ByTenantStatus" {
			ix = &d.Table.Indexes[i]
		}
	}
	require.NotNil(t, ix)
	assert.Equal(t, []string{"tenant S", "status S"}, ix.PartitionAttrs)
	assert.Equal(t, []string{"created N", "orderId S"}, ix.SortAttrs)
}

// maStrict stores its native key attributes without omitempty: an empty string
// or a nil pointer would be stored as "" or NULL, which DynamoDB refuses in an
// index key.
type maStrict struct {
	_      struct{} `Type:"MAStrict" PK:"S#{id}" SK:"S"`
	ID     string   `dynamodbav:"id"`
	Tenant string   `dynamodbav:"tenant"`
	Status string   `dynamodbav:"status"`
	Rank   *int     `dynamodbav:"rank"`
	Bin    []byte   `dynamodbav:"bin"`
	V      int64    `dynamodbav:"v" singletable:"version"`
}

// TestMultiAttrWriteRefusesUnindexableValues (issue 27 item 4): a value a native
// index key cannot hold (an empty string, an empty binary value, NULL) is refused
// before anything is sent, by every write kind, with a *ValidationError naming the
// entity, field, index and attribute; DynamoDB itself refuses such a write whole
// (checked below with a raw PutItem). Remove of a key attribute, and an omitempty
// field's zero value, only take the item out of the index and are not refused.
func TestMultiAttrWriteRefusesUnindexableValues(t *testing.T) {
	tbl, _ := newTestTable(t,
		WithNativeIndex("ByTenantStatus", NativeKey{Partition: []KeyAttribute{S("tenant"), S("status")}, Sort: []KeyAttribute{N("rank")}}),
		WithNativeIndex("ByBin", NativeKey{Partition: []KeyAttribute{B("bin")}}))
	ctx := context.Background()
	st := MustRegister[maStrict](tbl)
	good := func(id string) maStrict {
		return maStrict{ID: id, Tenant: "t1", Status: "open", Rank: intp(1), Bin: []byte{1}}
	}

	// DynamoDB refuses the item the check refuses.
	_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "S#raw"}, "SK": &types.AttributeValueMemberS{Value: "S"},
		"tenant": &types.AttributeValueMemberS{Value: "t1"}, "status": &types.AttributeValueMemberS{Value: ""},
	}})
	require.Error(t, err, "DynamoDB refuses an empty string in a native index key")

	bad := []struct {
		name  string
		field string
		edit  func(*maStrict)
	}{
		{"empty partition string", "Status", func(v *maStrict) { v.Status = "" }},
		{"nil sort number", "Rank", func(v *maStrict) { v.Rank = nil }},
		{"empty binary", "Bin", func(v *maStrict) { v.Bin = []byte{} }},
	}
	refused := func(t *testing.T, err error, field string) {
		t.Helper()
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "maStrict", ve.Entity)
		assert.Equal(t, field, ve.Field)
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "native index")
	}
	for i, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			v := good("w" + strconv.Itoa(i))
			c.edit(&v)
			_, err := st.Put(ctx, v)
			refused(t, err, c.field)
			_, err = st.Create(ctx, v)
			refused(t, err, c.field)
			_, err = st.BatchPut(ctx, []maStrict{good("b" + strconv.Itoa(i)), v})
			refused(t, err, c.field)
			_, err = tbl.BatchWrite(ctx, st.BatchPutItem(good("m"+strconv.Itoa(i))), st.BatchPutItem(v))
			refused(t, err, c.field)
			err = tbl.Transact(ctx, st.TxPut(good("x"+strconv.Itoa(i))), st.TxPut(v))
			refused(t, err, c.field)
			// Nothing of any of them was written.
			for _, id := range []string{v.ID, "b" + strconv.Itoa(i), "m" + strconv.Itoa(i), "x" + strconv.Itoa(i)} {
				_, err := st.Get(ctx, maStrict{ID: id})
				assert.ErrorIs(t, err, ErrNotFound, id)
			}
		})
	}

	// Several unindexable values: the first field in T's order is named, every
	// time (a map's order named one at random).
	for range 20 {
		v := good("several")
		v.Tenant, v.Status, v.Bin = "", "", []byte{}
		_, err := st.Put(ctx, v)
		refused(t, err, "Tenant")
	}

	// Update and Mutate: a Set of an unindexable value is refused; Remove is not.
	_, err = st.Put(ctx, good("u"))
	require.NoError(t, err)
	_, err = st.Update(ctx, maStrict{ID: "u"}, Set("status", ""))
	refused(t, err, "Status")
	err = tbl.Transact(ctx, st.TxUpdate(maStrict{ID: "u"}, Set("bin", []byte{})))
	refused(t, err, "Bin")
	_, err = st.Mutate(ctx, maStrict{ID: "u"}, func(v *maStrict) error { v.Tenant = ""; return nil })
	refused(t, err, "Tenant")
	got, err := st.Get(ctx, maStrict{ID: "u"})
	require.NoError(t, err)
	want := good("u")
	want.V = 1
	assert.Equal(t, want, got, "nothing was written")

	_, err = st.Update(ctx, maStrict{ID: "u", V: 1}, Remove("rank"))
	require.NoError(t, err, "Remove takes the item out of the index")
	n := 0
	for _, err := range st.All(ctx, maStrict{Tenant: "t1", Status: "open"}, On("ByTenantStatus")) {
		require.NoError(t, err)
		n++
	}
	assert.Zero(t, n, "without rank the item is not in ByTenantStatus")
}

// TestNativeKeyAggregateSize: DynamoDB limits the bytes of a native key's
// attributes together (2,048 for the partition, 1,024 for the sort key). A write
// or a query past them is refused before anything is sent, naming the fields and
// their sizes; at the limit it is stored (issue 37, scenario 11).
func TestNativeKeyAggregateSize(t *testing.T) {
	tbl, client := newTestTable(t, byTenantStatus())
	orders := MustRegister[maOrder](tbl)
	ctx := context.Background()
	created := time.Unix(1700000000, 0)
	fits := maOrder{CustomerID: "c", OrderID: "o1", Tenant: strings.Repeat("t", 1024), Status: strings.Repeat("s", 1024), Created: created}
	_, err := orders.Put(ctx, fits)
	require.NoError(t, err, "2,048 bytes together: at the limit")

	total := func() (n int64) {
		for op := range client.calls {
			n += client.count(op)
		}
		return n
	}
	sent := total()
	over := fits
	over.OrderID, over.Status = "o2", strings.Repeat("s", 1025)
	for name, call := range map[string]func() error{
		"Put":    func() error { _, err := orders.Put(ctx, over); return err },
		"Create": func() error { _, err := orders.Create(ctx, over); return err },
		"Update": func() error {
			_, err := orders.Update(ctx, over, Set("tenant", over.Tenant), Set("status", over.Status), Upsert())
			return err
		},
		"Transact": func() error { return tbl.Transact(ctx, orders.TxPut(over)) },
		"BatchPut": func() error { _, err := orders.BatchPut(ctx, []maOrder{over}); return err },
	} {
		err := call()
		require.ErrorIs(t, err, ErrValidation, name)
		for _, want := range []string{"ByTenantStatus", "partition", "2049 bytes", "Tenant (\"tenant\") 1024", "Status (\"status\") 1025", "2048"} {
			assert.Contains(t, err.Error(), want, name)
		}
	}
	_, err = orders.Query(ctx, over, On("ByTenantStatus"))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "2049 bytes")
	assert.Equal(t, sent, total(), "nothing sent")

	// The sort key: created (a number) and orderId together past 1,024 bytes.
	long := fits
	long.OrderID = strings.Repeat("o", 1020)
	_, err = orders.Put(ctx, long)
	require.ErrorIs(t, err, ErrValidation)
	assert.Contains(t, err.Error(), "sort key attributes together hold")
}
