package singletable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maToolbox is DynamoDB-Toolbox's multiGsi fixture (PR #1240,
// src/table/actions/query/queryParams/queryParams.unit.test.ts): partition
// gsiMultiPK1 (S), gsiMultiPK2 (N); sort gsiMultiSK1 (S), gsiMultiSK2 (N).
type maToolbox struct {
	_   struct{} `Type:"MAToolbox" PK:"T#{id}" SK:"T"`
	ID  string   `dynamodbav:"id"`
	PK1 string   `dynamodbav:"gsiMultiPK1"`
	PK2 int      `dynamodbav:"gsiMultiPK2"`
	SK1 string   `dynamodbav:"gsiMultiSK1"`
	SK2 int      `dynamodbav:"gsiMultiSK2"`
}

var multiGsi = WithNativeIndex("multiGsi", NativeKey{
	Partition: []KeyAttribute{S("gsiMultiPK1"), N("gsiMultiPK2")},
	Sort:      []KeyAttribute{S("gsiMultiSK1"), N("gsiMultiSK2")},
})

// TestMultiAttrKeyConditionShapes ports DynamoDB-Toolbox's "query › creates
// query on GSI (multiple)" (PR #1240, queryParams.unit.test.ts): the five shapes
// of a query of a 2 + 2 index, here from a partly filled T and SK[T]() and run
// against DynamoDB Local; and ElectroDB's "should not format partition and sort
// keys for multi-attribute indexes" (test/ts_connected.multiattribute-indexes.
// spec.ts): the condition is equalities on the attributes then the operator on
// the last one, and a write carries no rendered index key.
func TestMultiAttrKeyConditionShapes(t *testing.T) {
	tbl, rec := recordedTable(t, multiGsi)
	ctx := context.Background()
	toolbox := MustRegister[maToolbox](tbl)
	for i, v := range []maToolbox{
		{PK1: "foo", PK2: 42, SK1: "bar", SK2: 42},
		{PK1: "foo", PK2: 42, SK1: "bar", SK2: 50},
		{PK1: "foo", PK2: 42, SK1: "baz", SK2: 1},
		{PK1: "foo", PK2: 42, SK1: "abc", SK2: 99},
		{PK1: "foo", PK2: 43, SK1: "bar", SK2: 42},
	} {
		v.ID = fmt.Sprint(i)
		_, err := toolbox.Put(ctx, v)
		require.NoError(t, err)
	}
	ids := func(p Page[maToolbox]) []string {
		var out []string
		for _, v := range p.Items {
			out = append(out, v.ID)
		}
		return out
	}
	cases := []struct {
		name string
		key  maToolbox
		opts []QueryOption
		cond string
		want []string
	}{
		{"(A) partition", maToolbox{PK1: "foo", PK2: 42}, nil,
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42", []string{"3", "0", "1", "2"}},
		{"(C) range on the first sort attribute", maToolbox{PK1: "foo", PK2: 42}, []QueryOption{SK[maToolbox]().GreaterThanEqual(maToolbox{SK1: "bar"})},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND gsiMultiSK1 >= S:bar", []string{"0", "1", "2"}},
		{"(D) equality then range", maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, []QueryOption{SK[maToolbox]().GreaterThanEqual(maToolbox{SK2: 42})},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND gsiMultiSK1 = S:bar AND gsiMultiSK2 >= N:42", []string{"0", "1"}},
		{"(D) from the condition's value alone", maToolbox{PK1: "foo", PK2: 42}, []QueryOption{SK[maToolbox]().GreaterThan(maToolbox{SK1: "bar", SK2: 42})},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND gsiMultiSK1 = S:bar AND gsiMultiSK2 > N:42", []string{"1"}},
		{"(E) every attribute", maToolbox{PK1: "foo", PK2: 42, SK1: "bar", SK2: 42}, nil,
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND gsiMultiSK1 = S:bar AND gsiMultiSK2 = N:42", []string{"0"}},
		{"begins_with on the last S", maToolbox{PK1: "foo", PK2: 42}, []QueryOption{SK[maToolbox]().BeginsWith(maToolbox{SK1: "ba"})},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND begins_with(gsiMultiSK1, S:ba)", []string{"0", "1", "2"}},
		{"between on the last N", maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, []QueryOption{SK[maToolbox]().Between(maToolbox{SK2: 40}, maToolbox{SK2: 45})},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42 AND gsiMultiSK1 = S:bar AND gsiMultiSK2 BETWEEN N:40 AND N:45", []string{"0"}},
		{"descending", maToolbox{PK1: "foo", PK2: 42}, []QueryOption{Descending()},
			"gsiMultiPK1 = S:foo AND gsiMultiPK2 = N:42", []string{"2", "1", "0", "3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page, err := toolbox.Query(ctx, c.key, append([]QueryOption{On("multiGsi")}, c.opts...)...)
			require.NoError(t, err)
			assert.Equal(t, c.cond, keyCondText(rec.last()))
			assert.Equal(t, c.want, ids(page))
		})
	}
	// Writes render nothing for the index: the item holds the fields, the keys and the library's attributes.
	raw, err := tbl.Client().Query(ctx, rec.last())
	require.NoError(t, err)
	for _, item := range raw.Items {
		for attr := range item {
			assert.Contains(t, []string{"PK", "SK", "Type", "_inc", "_wr", "id", "gsiMultiPK1", "gsiMultiPK2", "gsiMultiSK1", "gsiMultiSK2"}, attr)
		}
	}
}

// maNoSort is in a native index without sort attributes.
type maNoSort struct {
	_    struct{} `Type:"MANoSort" PK:"S#{id}" SK:"S"`
	ID   string   `dynamodbav:"id"`
	Kind string   `dynamodbav:"kind"`
}

// TestMultiAttrQueryRefusedBeforeSending ports DynamoDB-Toolbox's "query › throws
// on invalid GSI query (multiple)" and "(simple)" (PR #1240,
// queryParams.unit.test.ts): too few partition values (A), a range not last
// (F), a range on an index without sort key (T3); types (B, E) and arity (C, D,
// G, H) cannot be expressed with a T. Each refusal comes before any call, names
// the attribute and says why; DynamoDB's rules from moto's aws_verified
// test_query_error_skip_range_key and test_query_error_range_on_non_last_in_query
// (tests/test_dynamodb/test_dynamodb_multi_attribute_gsi.py) too.
func TestMultiAttrQueryRefusedBeforeSending(t *testing.T) {
	tbl, rec := recordedTable(t, multiGsi, byTenantStatus(), WithNativeIndex("ByKind", NativeKey{Partition: []KeyAttribute{S("kind")}}))
	ctx := context.Background()
	toolbox := MustRegister[maToolbox](tbl)
	orders := MustRegister[maOrder](tbl)
	noSort := MustRegister[maNoSort](tbl)
	sk := SK[maToolbox]()
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"(A) a partition attribute unset", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo"}, On("multiGsi"))
			return err
		}, "partition attribute gsiMultiPK2 (maToolbox.PK2) is unset"},
		{"(F) a sort attribute skipped", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK2: 42}, On("multiGsi"))
			return err
		}, "sort attribute gsiMultiSK2 (maToolbox.SK2) is set but gsiMultiSK1 (maToolbox.SK1) before it is not"},
		{"(F) a range before an equality", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK2: 42}, On("multiGsi"), sk.GreaterThan(maToolbox{SK1: "bar"}))
			return err
		}, "is set but gsiMultiSK1"},
		{"the key value sets the compared attribute", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, On("multiGsi"), sk.GreaterThan(maToolbox{SK1: "baz"}))
			return err
		}, "the key value sets sort attribute gsiMultiSK1 (maToolbox.SK1), which the SKGreaterThan condition compares"},
		{"a sort attribute before the compared one not given", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), sk.GreaterThan(maToolbox{SK2: 4}))
			return err
		}, "sort attribute gsiMultiSK1 (maToolbox.SK1) is not given, but the condition compares gsiMultiSK2 (maToolbox.SK2) after it"},
		{"equalities disagree", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, On("multiGsi"), sk.GreaterThan(maToolbox{SK1: "baz", SK2: 4}))
			return err
		}, "sort attribute gsiMultiSK1 (maToolbox.SK1) is bar in one value and baz in another"},
		{"no sort attribute in the condition", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), sk.GreaterThan(maToolbox{ID: "x"}))
			return err
		}, "sets no sort attribute"},
		{"begins_with on a number", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, On("multiGsi"), sk.BeginsWith(maToolbox{SK2: 4}))
			return err
		}, "SKBeginsWith does not apply to sort attribute gsiMultiSK2 (maToolbox.SK2), which holds numbers"},
		{"between reversed", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, On("multiGsi"), sk.Between(maToolbox{SK2: 9}, maToolbox{SK2: 10}))
			if err != nil {
				return err
			}
			_, err = toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42, SK1: "bar"}, On("multiGsi"), sk.Between(maToolbox{SK2: 10}, maToolbox{SK2: 9}))
			return err
		}, "SKBetween bounds of gsiMultiSK2 (maToolbox.SK2) are reversed (10 > 9)"},
		{"tree", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), sk.Tree(maToolbox{SK1: "bar"}))
			return err
		}, "SKTree does not apply"},
		{"text value", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), SKGreaterThan("bar"))
			return err
		}, "SKGreaterThan takes a value of maToolbox (SK[maToolbox]()), not string"},
		{"Partition", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), Partition("foo"))
			return err
		}, "Partition does not apply"},
		{"Consistent", func() error {
			_, err := toolbox.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), Consistent())
			return err
		}, "consistent reads"},
		{"(T3) a sort condition on an index without sort attributes", func() error {
			_, err := noSort.Query(ctx, maNoSort{Kind: "k"}, On("ByKind"), SK[maNoSort]().GreaterThan(maNoSort{ID: "a"}))
			return err
		}, "native index ByKind: it has no sort attributes, so SKGreaterThan does not apply"},
		{"an entity not in the index", func() error {
			_, err := orders.Query(ctx, maOrder{Tenant: "t"}, On("multiGsi"))
			return err
		}, "maOrder does not store gsiMultiPK1, gsiMultiPK2, gsiMultiSK1, gsiMultiSK2"},
		{"a collection query given a partition", func() error {
			_, err := tbl.Query(ctx, maToolbox{PK1: "foo", PK2: 42}, On("multiGsi"), Partition("foo"))
			return err
		}, "native index multiGsi: Partition does not apply"},
		{"a time partition attribute unset", func() error {
			_, err := orders.Query(ctx, maOrder{Tenant: "t"}, On("ByTenantStatus"), SK[maOrder]().GreaterThan(maOrder{Created: time.Unix(5, 0)}))
			return err
		}, "partition attribute status (maOrder.Status) is unset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := rec.count()
			err := c.run()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), c.want)
			if c.name != "between reversed" {
				assert.Equal(t, before, rec.count(), "nothing sent")
			}
		})
	}
}

// maVendor is ElectroDB's between fixture: sort attributes vendor, size, color.
type maVendor struct {
	_      struct{} `Type:"MAVendor" PK:"V#{id}" SK:"V"`
	ID     string   `dynamodbav:"id"`
	Store  string   `dynamodbav:"store"`
	Vendor string   `dynamodbav:"vendor"`
	Size   string   `dynamodbav:"size"`
	Color  string   `dynamodbav:"color"`
}

// TestMultiAttrBetweenBoundsMustAgree ports ElectroDB's "should not allow
// different attributes for start and end values in a between query on a
// composite index" (test/ts_connected.multiattribute-indexes.spec.ts): the five
// calls; the first four are refused before sending, naming the attribute, the
// fifth runs against DynamoDB Local.
func TestMultiAttrBetweenBoundsMustAgree(t *testing.T) {
	tbl, rec := recordedTable(t, WithNativeIndex("vsc", NativeKey{Partition: []KeyAttribute{S("store")}, Sort: []KeyAttribute{S("vendor"), S("size"), S("color")}}))
	ctx := context.Background()
	vendors := MustRegister[maVendor](tbl)
	for i, c := range []string{"0", "1", "2", "3"} {
		_, err := vendors.Put(ctx, maVendor{ID: fmt.Sprint(i), Store: "s", Vendor: "1", Size: "1", Color: c})
		require.NoError(t, err)
	}
	sk := SK[maVendor]()
	q := func(lo, hi maVendor) (Page[maVendor], error) {
		return vendors.Query(ctx, maVendor{Store: "s"}, On("vsc"), sk.Between(lo, hi))
	}
	for _, c := range []struct {
		lo, hi maVendor
		want   string
	}{
		{maVendor{Vendor: "1", Size: "1", Color: "1"}, maVendor{Vendor: "2", Size: "1", Color: "2"}, "sort attribute vendor (maVendor.Vendor) is 1 in one value and 2 in another"},
		{maVendor{Vendor: "1", Size: "1"}, maVendor{Vendor: "1"}, "SKBetween bounds compare different sort attributes, size (maVendor.Size) and vendor (maVendor.Vendor)"},
		{maVendor{Vendor: "1", Size: "1", Color: "1"}, maVendor{Vendor: "1", Size: "1"}, "compare different sort attributes, color (maVendor.Color) and size (maVendor.Size)"},
		{maVendor{Vendor: "1", Size: "1"}, maVendor{Vendor: "1", Size: "1", Color: "2"}, "compare different sort attributes, size (maVendor.Size) and color (maVendor.Color)"},
	} {
		before := rec.count()
		_, err := q(c.lo, c.hi)
		require.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), c.want)
		assert.Equal(t, before, rec.count())
	}
	page, err := q(maVendor{Vendor: "1", Size: "1", Color: "1"}, maVendor{Vendor: "1", Size: "1", Color: "2"})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	assert.Equal(t, []string{"1", "2"}, []string{page.Items[0].Color, page.Items[1].Color})
	assert.Equal(t, "store = S:s AND vendor = S:1 AND size = S:1 AND color BETWEEN S:1 AND S:2", keyCondText(rec.last()))
}

// maMoto is moto's fixture (getmoto/moto tests/test_dynamodb/
// test_dynamodb_multi_attribute_gsi.py): GSI gsi_pk HASH S, gsi_sk RANGE S,
// gsi_sk2 RANGE N. Pointers and omitempty leave attributes out.
type maMoto struct {
	_     struct{} `Type:"MAMoto" PK:"M#{mpk}" SK:"M"`
	PK    string   `dynamodbav:"mpk"`
	GSIPK string   `dynamodbav:"gsi_pk"`
	GSISK string   `dynamodbav:"gsi_sk,omitempty"`
	SK2   *int     `dynamodbav:"gsi_sk2,omitempty"`
}

func intp(i int) *int { return &i }

// TestMultiAttrSparseMembership ports moto's aws_verified
// test_items_missing_range_key_excluded, test_sorting_by_composite_key and
// test_query_between_last_key (tests/test_dynamodb/
// test_dynamodb_multi_attribute_gsi.py): an item missing any key attribute is
// not in the index (an omitempty field left empty keeps it out silently); an
// Update that sets the missing attribute brings it in, a Remove takes it out
// again; numbers sort as numbers; a pointer field queries a zero.
func TestMultiAttrSparseMembership(t *testing.T) {
	tbl, _ := newTestTable(t, WithNativeIndex("test_gsi", NativeKey{Partition: []KeyAttribute{S("gsi_pk")}, Sort: []KeyAttribute{S("gsi_sk"), N("gsi_sk2")}}))
	ctx := context.Background()
	moto := MustRegister[maMoto](tbl)
	for _, v := range []maMoto{
		{PK: "1", GSIPK: "pk1", GSISK: "skA", SK2: intp(300)},
		{PK: "2", GSIPK: "pk1", SK2: intp(200)}, // no gsi_sk
		{PK: "3", GSIPK: "pk1", GSISK: "skA"},   // no gsi_sk2
		{PK: "4", GSIPK: "pk1", GSISK: "skB", SK2: intp(150)},
		{PK: "5", GSIPK: "pk1", GSISK: "skA", SK2: intp(0)}, // 0 is stored: the pointer is set
		{PK: "6", GSIPK: "pk1", GSISK: "skA", SK2: intp(25)},
	} {
		_, err := moto.Put(ctx, v)
		require.NoError(t, err)
	}
	pks := func(key maMoto, opts ...QueryOption) []string {
		t.Helper()
		var out []string
		for v, err := range moto.All(ctx, key, append([]QueryOption{On("test_gsi")}, opts...)...) {
			require.NoError(t, err)
			out = append(out, v.PK)
		}
		return out
	}
	assert.Equal(t, []string{"5", "6", "1", "4"}, pks(maMoto{GSIPK: "pk1"}), "items 2 and 3 lack a key attribute; 0 < 25 < 300 as numbers")
	assert.Equal(t, []string{"5"}, pks(maMoto{GSIPK: "pk1", GSISK: "skA", SK2: intp(0)}), "a pointer to 0 is a value")
	assert.Equal(t, []string{"6"}, pks(maMoto{GSIPK: "pk1", GSISK: "skA"}, SK[maMoto]().Between(maMoto{SK2: intp(10)}, maMoto{SK2: intp(250)})))

	// Setting the missing attribute brings item 3 in; removing one takes item 1 out.
	_, err := moto.Update(ctx, maMoto{PK: "3"}, Set("gsi_sk2", 100))
	require.NoError(t, err)
	_, err = moto.Update(ctx, maMoto{PK: "1"}, Remove("gsi_sk"))
	require.NoError(t, err)
	assert.Equal(t, []string{"5", "6", "3", "4"}, pks(maMoto{GSIPK: "pk1"}))
}

// maMatch is the AWS tournament example, as Toasty's composite_index_multi_hash
// declares it (tokio-rs/toasty crates/toasty-driver-integration-suite/src/tests/
// index_composite.rs): partition tournament_id, region; sort round.
type maMatch struct {
	_            struct{} `Type:"MAMatch" PK:"MATCH#{id}" SK:"MATCH"`
	ID           string   `dynamodbav:"id"`
	TournamentID string   `dynamodbav:"tournament_id"`
	Region       string   `dynamodbav:"region"`
	Round        string   `dynamodbav:"round"`
	Player1      string   `dynamodbav:"player1_id"`
}

// TestMultiAttrToasty_MultiHash ports Toasty's composite_index_multi_hash: two
// partition attributes and one sort attribute; filtering by both partition
// attributes, then by the round too, each with one Query.
func TestMultiAttrToasty_MultiHash(t *testing.T) {
	tbl, rec := recordedTable(t, WithNativeIndex("tournament", NativeKey{Partition: []KeyAttribute{S("tournament_id"), S("region")}, Sort: []KeyAttribute{S("round")}}))
	ctx := context.Background()
	matches := MustRegister[maMatch](tbl)
	for _, m := range []maMatch{
		{ID: "m1", TournamentID: "WINTER2024", Region: "NA-EAST", Round: "SEMIFINALS", Player1: "alice"},
		{ID: "m2", TournamentID: "WINTER2024", Region: "NA-EAST", Round: "FINALS", Player1: "bob"},
		{ID: "m3", TournamentID: "WINTER2024", Region: "EU-WEST", Round: "SEMIFINALS", Player1: "carol"},
	} {
		_, err := matches.Put(ctx, m)
		require.NoError(t, err)
	}
	before := rec.count()
	page, err := matches.Query(ctx, maMatch{TournamentID: "WINTER2024", Region: "NA-EAST"}, On("tournament"))
	require.NoError(t, err)
	assert.Len(t, page.Items, 2)
	page, err = matches.Query(ctx, maMatch{TournamentID: "WINTER2024", Region: "NA-EAST", Round: "SEMIFINALS"}, On("tournament"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "alice", page.Items[0].Player1)
	assert.Equal(t, before+2, rec.count(), "each is one Query")
}

// maPlayerMatch is Toasty's composite_index_multi_range fixture: partition
// player_id (N), sort match_date, round.
type maPlayerMatch struct {
	_         struct{} `Type:"MAPlayerMatch" PK:"PM#{id}" SK:"PM"`
	ID        string   `dynamodbav:"id"`
	PlayerID  int      `dynamodbav:"player_id"`
	MatchDate string   `dynamodbav:"match_date"`
	Round     string   `dynamodbav:"round"`
	Opponent  int      `dynamodbav:"opponent_id"`
}

// maAddress is Toasty's composite_index_simple_three_column_ddb fixture:
// partition country, sort city, zip_code.
type maAddress struct {
	_       struct{} `Type:"MAAddress" PK:"A#{id}" SK:"A"`
	ID      string   `dynamodbav:"id"`
	Country string   `dynamodbav:"country"`
	City    string   `dynamodbav:"city"`
	Zip     string   `dynamodbav:"zip_code"`
}

// TestMultiAttrToasty_MultiRange ports Toasty's composite_index_multi_range and
// composite_index_simple_three_column_ddb (index_composite.rs): one partition
// attribute, two sort attributes, narrowed by the leading sort attributes a
// partly filled T sets.
func TestMultiAttrToasty_MultiRange(t *testing.T) {
	tbl, _ := newTestTable(t,
		WithNativeIndex("byPlayer", NativeKey{Partition: []KeyAttribute{N("player_id")}, Sort: []KeyAttribute{S("match_date"), S("round")}}),
		WithNativeIndex("byPlace", NativeKey{Partition: []KeyAttribute{S("country")}, Sort: []KeyAttribute{S("city"), S("zip_code")}}))
	ctx := context.Background()
	pm := MustRegister[maPlayerMatch](tbl)
	for _, v := range []maPlayerMatch{
		{ID: "pm1", PlayerID: 101, MatchDate: "2024-01-18", Round: "SEMIFINALS", Opponent: 102},
		{ID: "pm2", PlayerID: 101, MatchDate: "2024-01-18", Round: "FINALS", Opponent: 103},
		{ID: "pm3", PlayerID: 101, MatchDate: "2024-01-25", Round: "SEMIFINALS", Opponent: 104},
		{ID: "pm4", PlayerID: 999, MatchDate: "2024-01-18", Round: "SEMIFINALS", Opponent: 105},
	} {
		_, err := pm.Put(ctx, v)
		require.NoError(t, err)
	}
	count := func(key maPlayerMatch) []maPlayerMatch {
		page, err := pm.Query(ctx, key, On("byPlayer"))
		require.NoError(t, err)
		return page.Items
	}
	assert.Len(t, count(maPlayerMatch{PlayerID: 101}), 3)
	assert.Len(t, count(maPlayerMatch{PlayerID: 101, MatchDate: "2024-01-18"}), 2)
	got := count(maPlayerMatch{PlayerID: 101, MatchDate: "2024-01-18", Round: "SEMIFINALS"})
	require.Len(t, got, 1)
	assert.Equal(t, 102, got[0].Opponent)

	addrs := MustRegister[maAddress](tbl)
	for _, a := range []maAddress{{ID: "a1", Country: "US", City: "Seattle", Zip: "98101"}, {ID: "a2", Country: "US", City: "Seattle", Zip: "98102"}, {ID: "a3", Country: "US", City: "Portland", Zip: "97201"}, {ID: "a4", Country: "CA", City: "Toronto", Zip: "M5V"}} {
		_, err := addrs.Put(ctx, a)
		require.NoError(t, err)
	}
	n := func(key maAddress) int {
		page, err := addrs.Query(ctx, key, On("byPlace"))
		require.NoError(t, err)
		return len(page.Items)
	}
	assert.Equal(t, 3, n(maAddress{Country: "US"}))
	assert.Equal(t, 2, n(maAddress{Country: "US", City: "Seattle"}))
	assert.Equal(t, 1, n(maAddress{Country: "US", City: "Seattle", Zip: "98101"}))
}

// maEight has eight attributes for a 4 + 4 index.
type maEight struct {
	_              struct{} `Type:"MAEight" PK:"E#{id}" SK:"E"`
	ID             string   `dynamodbav:"id"`
	F1, F2, F3, F4 string
	F5, F6, F7, F8 string
	Label          string `dynamodbav:"label"`
}

// TestMultiAttrToasty_MaxAttributes ports Toasty's composite_index_max_attributes
// (index_composite.rs): a 4 + 4 index is created, and a query on the four
// partition attributes finds the one item (another differs in F4).
func TestMultiAttrToasty_MaxAttributes(t *testing.T) {
	tbl, _ := newTestTable(t, WithNativeIndex("max", NativeKey{
		Partition: []KeyAttribute{S("F1"), S("F2"), S("F3"), S("F4")},
		Sort:      []KeyAttribute{S("F5"), S("F6"), S("F7"), S("F8")},
	}))
	ctx := context.Background()
	e := MustRegister[maEight](tbl)
	for _, v := range []maEight{
		{ID: "r1", F1: "a1", F2: "b1", F3: "c1", F4: "d1", F5: "e1", F6: "f1", F7: "g1", F8: "h1", Label: "found"},
		{ID: "r2", F1: "a1", F2: "b1", F3: "c1", F4: "d2", F5: "e1", F6: "f1", F7: "g1", F8: "h1", Label: "other"},
	} {
		_, err := e.Put(ctx, v)
		require.NoError(t, err)
	}
	page, err := e.Query(ctx, maEight{F1: "a1", F2: "b1", F3: "c1", F4: "d1"}, On("max"))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "found", page.Items[0].Label)
	page, err = e.Query(ctx, maEight{F1: "a1", F2: "b1", F3: "c1", F4: "d1", F5: "e1", F6: "f1", F7: "g1"}, On("max"), SK[maEight]().BeginsWith(maEight{F8: "h"}))
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)
}

// maWidget is guregu/dynamo's composite-index fixture (query_test.go
// TestQueryComposite, db_test.go): index UserID-Msg-Time-index, HASH UserID (N),
// RANGE Msg, Time. Time is stored as Unix seconds so that it sorts.
type maWidget struct {
	_      struct{}  `Type:"MAWidget" PK:"W#{UserID}" SK:"{Time:unix}"`
	UserID int       `dynamodbav:"UserID"`
	Time   time.Time `dynamodbav:"Time,unixtime"`
	Msg    string    `dynamodbav:"Msg"`
}

func guregu(t *testing.T) (*Table, *queryRecorder, *Entity[maWidget], []time.Time) {
	t.Helper()
	tbl, rec := recordedTable(t, WithNativeIndex("UserID-Msg-Time-index", NativeKey{Partition: []KeyAttribute{N("UserID")}, Sort: []KeyAttribute{S("Msg"), N("Time")}}))
	widgets := MustRegister[maWidget](tbl)
	base := time.Date(2025, 12, 15, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	for i := range 3 {
		tm := base.AddDate(0, 0, i)
		times = append(times, tm)
		for _, msg := range []string{"first", "second"} { // the second Put replaces the first
			_, err := widgets.Put(context.Background(), maWidget{UserID: 67, Time: tm, Msg: msg})
			require.NoError(t, err)
		}
	}
	return tbl, rec, widgets, times
}

// TestMultiAttrGuregu_GreaterOnSecondSortAttr ports guregu/dynamo's
// TestQueryComposite/Greater+All (query_test.go, #256): equality on the
// partition and the first sort attribute, a range on the second.
func TestMultiAttrGuregu_GreaterOnSecondSortAttr(t *testing.T) {
	_, rec, widgets, times := guregu(t)
	var got []maWidget
	for v, err := range widgets.All(context.Background(), maWidget{UserID: 67, Msg: "second"}, On("UserID-Msg-Time-index"), SK[maWidget]().GreaterThan(maWidget{Time: times[0]})) {
		require.NoError(t, err)
		got = append(got, v)
	}
	assert.Len(t, got, 2)
	assert.Contains(t, keyCondText(rec.last()), "Msg = S:second AND Time > N:")
}

// TestMultiAttrCursorResumesInOrder ports guregu/dynamo's
// TestQueryComposite/iter+LEK (query_test.go, #256): one item per page
// (Limit(1)), each page resumed from the last one's cursor, in Time order, then
// no more; a cursor is refused by a query with other equalities.
func TestMultiAttrCursorResumesInOrder(t *testing.T) {
	_, _, widgets, times := guregu(t)
	ctx := context.Background()
	opts := []QueryOption{On("UserID-Msg-Time-index"), SK[maWidget]().GreaterThanEqual(maWidget{Time: times[0]}), Limit(1)}
	key := maWidget{UserID: 67, Msg: "second"}
	var got []time.Time
	cursor := ""
	for range 5 {
		page, err := widgets.Query(ctx, key, append(opts, After(cursor))...)
		require.NoError(t, err)
		for _, v := range page.Items {
			got = append(got, v.Time.UTC())
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
		// The cursor belongs to this query: another partition refuses it.
		_, err = widgets.Query(ctx, maWidget{UserID: 68, Msg: "second"}, append(opts, After(cursor))...)
		require.ErrorIs(t, err, ErrInvalidCursor)
	}
	assert.Equal(t, times, got)
}

// maThing is a page of ElectroDB's pagination fixture (test/ts_connected.
// multiattribute-indexes.spec.ts, "adding a limit should not cause dropped items
// when paginating"): items in one (country, region, city) partition.
type maThing struct {
	_       struct{} `Type:"MAThing" PK:"THING#{id}" SK:"THING"`
	ID      string   `dynamodbav:"id"`
	Country string   `dynamodbav:"attr1"`
	Region  string   `dynamodbav:"attr2"`
	City    string   `dynamodbav:"attr3"`
	Maker   string   `dynamodbav:"attr4"`
	Model   string   `dynamodbav:"attr5"`
	Count   int      `dynamodbav:"attr6"`
	Name    string   `dynamodbav:"attr7"`
}

var gsi1Location = WithNativeIndex("gsi1", NativeKey{
	Partition: []KeyAttribute{S("attr1"), S("attr2"), S("attr3")},
	Sort:      []KeyAttribute{S("attr4"), S("attr5"), N("attr6"), S("attr7")},
})

// TestMultiAttrCursorPagesAll ports ElectroDB's "adding a limit should not cause
// dropped items when paginating" (test/ts_connected.multiattribute-indexes.
// spec.ts): 100 items, Limit(10), following cursors: every item once; All too.
func TestMultiAttrCursorPagesAll(t *testing.T) {
	tbl, _ := newTestTable(t, gsi1Location)
	ctx := context.Background()
	things := MustRegister[maThing](tbl)
	var items []maThing
	for i := range 100 {
		items = append(items, maThing{ID: fmt.Sprint(i), Country: "US", Region: "WA", City: "Seattle", Maker: fmt.Sprintf("m%d", i%7), Model: fmt.Sprintf("x%d", i%3), Count: i, Name: fmt.Sprint("n", i)})
	}
	_, err := things.BatchPut(ctx, items)
	require.NoError(t, err)
	key := maThing{Country: "US", Region: "WA", City: "Seattle"}
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		page, err := things.Query(ctx, key, On("gsi1"), Limit(10), After(cursor))
		require.NoError(t, err)
		pages++
		for _, v := range page.Items {
			assert.False(t, seen[v.ID], "item %s twice", v.ID)
			seen[v.ID] = true
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Len(t, seen, 100)
	assert.GreaterOrEqual(t, pages, 10)
	n := 0
	for _, err := range things.All(ctx, key, On("gsi1"), Limit(7), Filter(expression.Name("id").BeginsWith("1"))) { // a filter may not name a key attribute of the index

		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 11, n) // 1, 10..19
}
