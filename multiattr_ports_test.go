package singletable

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maInventory and maWarehouse are ElectroDB's documentation example of one
// multi-attribute index serving two entity types (www/src/pages/en/modeling/
// indexes.mdx; test/ts_connected.multi-attribute.spec.ts "multi-attribute index
// documentation examples"), with the sort attributes cut to what both store so
// that both are in the index: partition country, region; sort city, count (N).
type maInventory struct {
	_       struct{} `Type:"MAInventory" PK:"INV#{sku}" SK:"INV"`
	SKU     string   `dynamodbav:"sku"`
	Country string   `dynamodbav:"country"`
	Region  string   `dynamodbav:"region"`
	City    string   `dynamodbav:"city"`
	Count   int      `dynamodbav:"count"`
	Name    string   `dynamodbav:"productName"`
}

type maWarehouse struct {
	_        struct{} `Type:"MAWarehouse" PK:"WH#{warehouseId}" SK:"WH"`
	ID       string   `dynamodbav:"warehouseId"`
	Country  string   `dynamodbav:"country"`
	Region   string   `dynamodbav:"region"`
	Location string   `dynamodbav:"city"` // another field name, stored under the index's attribute
	Capacity int      `dynamodbav:"count"`
}

func byLocation(opts ...IndexOption) TableOption {
	return WithNativeIndex("ByLocation", NativeKey{
		Partition: []KeyAttribute{S("country"), S("region")},
		Sort:      []KeyAttribute{S("city"), N("count")},
	}, opts...)
}

// seedLocations writes, in one partition (US, east), 10 inventory items and 10
// warehouses alternating in count, and 3 items of another partition.
func seedLocations(t *testing.T, inv *Entity[maInventory], wh *Entity[maWarehouse]) {
	t.Helper()
	ctx := context.Background()
	for i := range 10 {
		_, err := inv.Put(ctx, maInventory{SKU: fmt.Sprintf("s%02d", i), Country: "US", Region: "east", City: "nyc", Count: 2 * i, Name: "p" + fmt.Sprint(i)})
		require.NoError(t, err)
		_, err = wh.Put(ctx, maWarehouse{ID: fmt.Sprintf("w%02d", i), Country: "US", Region: "east", Location: "nyc", Capacity: 2*i + 1})
		require.NoError(t, err)
	}
	for i := range 3 {
		_, err := inv.Put(ctx, maInventory{SKU: fmt.Sprintf("x%02d", i), Country: "US", Region: "west", City: "sf", Count: i})
		require.NoError(t, err)
	}
}

// TestMultiAttrEntityQuerySkipsOtherTypes ports ElectroDB's "ownership filters"
// (test/ts_connected.multi-attribute.spec.ts, "should include all composite
// attributes in ownership filter for query"): a native index's keys carry no
// entity prefix, so items of every type that store the attributes share its
// partitions, and an entity's query must tell types apart itself. Inventory's
// query returns only inventory items (in index order), Page.Scanned counts the
// warehouses read too, and Limit counts items read, of both types.
func TestMultiAttrEntityQuerySkipsOtherTypes(t *testing.T) {
	tbl, _ := newTestTable(t, byLocation())
	ctx := context.Background()
	inv, wh := MustRegister[maInventory](tbl), MustRegister[maWarehouse](tbl)
	seedLocations(t, inv, wh)

	page, err := inv.Query(ctx, maInventory{Country: "US", Region: "east"}, On("ByLocation"))
	require.NoError(t, err)
	require.Len(t, page.Items, 10)
	for i, v := range page.Items {
		assert.Equal(t, 2*i, v.Count, "in index order")
	}
	assert.Equal(t, 20, page.Scanned, "the warehouses were read and skipped")

	page, err = inv.Query(ctx, maInventory{Country: "US", Region: "east"}, On("ByLocation"), Limit(4))
	require.NoError(t, err)
	assert.Equal(t, 4, page.Scanned)
	assert.Len(t, page.Items, 2, "Limit counts items read: counts 0..3, two of them inventory")

	var whs []int
	for v, err := range wh.All(ctx, maWarehouse{Country: "US", Region: "east", Location: "nyc"}, On("ByLocation"), SK[maWarehouse]().GreaterThan(maWarehouse{Capacity: 10})) {
		require.NoError(t, err)
		whs = append(whs, v.Capacity)
	}
	assert.Equal(t, []int{11, 13, 15, 17, 19}, whs, "the warehouse's own field names the index attribute")
}

// TestMultiAttrCollectionTwoTypes ports ElectroDB's collection queries on a
// multi-attribute index (E9 collection, E13 "should perform queries without
// failure"): one Query of a native index partition returns the items of both
// types, each decoded into its entity, in index order; a sort condition narrows
// both; a typed Collection gathers them by field.
func TestMultiAttrCollectionTwoTypes(t *testing.T) {
	tbl, _ := newTestTable(t, byLocation())
	ctx := context.Background()
	inv, wh := MustRegister[maInventory](tbl), MustRegister[maWarehouse](tbl)
	seedLocations(t, inv, wh)

	var counts []int
	for v, err := range tbl.All(ctx, maInventory{Country: "US", Region: "east"}, On("ByLocation")) {
		require.NoError(t, err)
		switch x := v.(type) {
		case maInventory:
			assert.Zero(t, x.Count%2, x.SKU)
			counts = append(counts, x.Count)
		case maWarehouse:
			assert.Equal(t, 1, x.Capacity%2, x.ID)
			counts = append(counts, x.Capacity)
		default:
			t.Fatalf("unexpected %T", v)
		}
	}
	want := make([]int, 20)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, counts, "both types, in the order of count")

	page, err := tbl.Query(ctx, maInventory{Country: "US", Region: "east", City: "nyc"}, On("ByLocation"), SK[maInventory]().Between(maInventory{Count: 5}, maInventory{Count: 8}))
	require.NoError(t, err)
	require.Len(t, page.Items, 4)
	assert.IsType(t, maWarehouse{}, page.Items[0])
	assert.IsType(t, maInventory{}, page.Items[1])

	type location struct {
		Items      []maInventory `singletable:"MAInventory"`
		Warehouses []maWarehouse `singletable:"MAWarehouse"`
	}
	coll, err := NewCollection[location](tbl)
	require.NoError(t, err)
	got, err := coll.Load(ctx, maInventory{Country: "US", Region: "east"}, On("ByLocation"))
	require.NoError(t, err)
	assert.Len(t, got.Items, 10)
	assert.Len(t, got.Warehouses, 10)
}

// TestMultiAttrPartialSortKeyFromPartlyFilledT ports ElectroDB's "partially
// provided sort keys with multi-attribute index" (E11): 60 items with random sort
// attributes in one partition; a key value with the first k sort fields set
// narrows by equality on them, and an SK condition whose value sets k fields puts
// the operator on the k-th with equality on the ones before. Each result equals an
// in-memory filter of the items in index order.
func TestMultiAttrPartialSortKeyFromPartlyFilledT(t *testing.T) {
	tbl, _ := newTestTable(t, WithNativeIndex("ByModel", NativeKey{
		Partition: []KeyAttribute{S("country")},
		Sort:      []KeyAttribute{S("manufacturer"), S("model"), N("count")},
	}))
	ctx := context.Background()
	type device struct {
		_            struct{} `Type:"MADevice" PK:"D#{id}" SK:"D"`
		ID           string   `dynamodbav:"id"`
		Country      string   `dynamodbav:"country"`
		Manufacturer string   `dynamodbav:"manufacturer"`
		Model        string   `dynamodbav:"model"`
		Count        int      `dynamodbav:"count"`
	}
	dev := MustRegister[device](tbl)
	rng := rand.New(rand.NewPCG(27, 5))
	var all []device
	for i := range 60 {
		d := device{ID: fmt.Sprint(i), Country: "US", Manufacturer: []string{"acme", "bolt", "core"}[rng.IntN(3)],
			Model: []string{"m1", "m2", "m3"}[rng.IntN(3)], Count: 1 + rng.IntN(40)}
		_, err := dev.Put(ctx, d)
		require.NoError(t, err)
		all = append(all, d)
	}
	slices.SortStableFunc(all, func(a, b device) int {
		if c := cmpStr(a.Manufacturer, b.Manufacturer); c != 0 {
			return c
		}
		if c := cmpStr(a.Model, b.Model); c != 0 {
			return c
		}
		if a.Count != b.Count {
			return a.Count - b.Count
		}
		return 0
	})
	read := func(key device, opts ...QueryOption) []device {
		t.Helper()
		var out []device
		for v, err := range dev.All(ctx, key, append([]QueryOption{On("ByModel")}, opts...)...) {
			require.NoError(t, err)
			out = append(out, v)
		}
		return out
	}
	filter := func(keep func(d device) bool) []device {
		var out []device
		for _, d := range all {
			if keep(d) {
				out = append(out, d)
			}
		}
		return out
	}
	// The same sort values (equal keys) may come back in any order: compare as
	// index-ordered lists of (manufacturer, model, count) and as sets of ids.
	same := func(t *testing.T, want, got []device) {
		t.Helper()
		key := func(ds []device) ([]string, []string) {
			var k, ids []string
			for _, d := range ds {
				k = append(k, fmt.Sprintf("%s/%s/%02d", d.Manufacturer, d.Model, d.Count))
				ids = append(ids, d.ID)
			}
			slices.Sort(ids)
			return k, ids
		}
		wk, wi := key(want)
		gk, gi := key(got)
		assert.Equal(t, wk, gk)
		assert.Equal(t, wi, gi)
	}
	mid := all[len(all)/2]
	t.Run("equality on the first k", func(t *testing.T) {
		same(t, filter(func(d device) bool { return d.Manufacturer == mid.Manufacturer }),
			read(device{Country: "US", Manufacturer: mid.Manufacturer}))
		same(t, filter(func(d device) bool { return d.Manufacturer == mid.Manufacturer && d.Model == mid.Model }),
			read(device{Country: "US", Manufacturer: mid.Manufacturer, Model: mid.Model}))
		same(t, filter(func(d device) bool {
			return d.Manufacturer == mid.Manufacturer && d.Model == mid.Model && d.Count == mid.Count
		}), read(device{Country: "US", Manufacturer: mid.Manufacturer, Model: mid.Model, Count: mid.Count}))
	})
	t.Run("operator on the last given", func(t *testing.T) {
		same(t, filter(func(d device) bool { return d.Manufacturer > mid.Manufacturer }),
			read(device{Country: "US"}, SK[device]().GreaterThan(device{Manufacturer: mid.Manufacturer})))
		same(t, filter(func(d device) bool { return d.Manufacturer == mid.Manufacturer && d.Model <= mid.Model }),
			read(device{Country: "US", Manufacturer: mid.Manufacturer}, SK[device]().LessThanEqual(device{Model: mid.Model})))
		same(t, filter(func(d device) bool {
			return d.Manufacturer == mid.Manufacturer && d.Model == mid.Model && d.Count >= mid.Count
		}), read(device{Country: "US", Manufacturer: mid.Manufacturer, Model: mid.Model}, SK[device]().GreaterThanEqual(device{Count: mid.Count})))
		same(t, filter(func(d device) bool {
			return d.Manufacturer == mid.Manufacturer && d.Model == mid.Model && d.Count < mid.Count
		}), read(device{Country: "US"}, SK[device]().LessThan(device{Manufacturer: mid.Manufacturer, Model: mid.Model, Count: mid.Count})))
		same(t, filter(func(d device) bool {
			return d.Manufacturer == mid.Manufacturer && d.Model == mid.Model && d.Count >= 10 && d.Count <= 30
		}), read(device{Country: "US", Manufacturer: mid.Manufacturer, Model: mid.Model}, SK[device]().Between(device{Count: 10}, device{Count: 30})))
	})
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestMultiAttrKeysOnlyHoldsNativeAttrs ports ElectroDB's composite-projection
// tests (test/ts_connected.composite-projection.spec.ts, "keys_only composite
// index with sk › should return composite key attributes" and "should not return
// non-key attributes"): a KEYS_ONLY native index still holds its key attributes
// and the table's key, so a read through it returns partial values whose native
// key fields are set from the item and whose other fields are zero; a range on
// its sort attribute works.
func TestMultiAttrKeysOnlyHoldsNativeAttrs(t *testing.T) {
	tbl, _ := newTestTable(t, byLocation(ProjectKeysOnly()))
	ctx := context.Background()
	inv, wh := MustRegister[maInventory](tbl), MustRegister[maWarehouse](tbl)
	seedLocations(t, inv, wh)

	page, err := inv.Query(ctx, maInventory{Country: "US", Region: "east", City: "nyc"}, On("ByLocation"), SK[maInventory]().GreaterThanEqual(maInventory{Count: 14}))
	require.NoError(t, err)
	assert.True(t, page.Partial, "KEYS_ONLY: the values are partial")
	require.Len(t, page.Items, 3)
	for i, v := range page.Items {
		assert.Equal(t, maInventory{SKU: v.SKU, Country: "US", Region: "east", City: "nyc", Count: 14 + 2*i}, v, "key attributes set, productName not projected")
		assert.NotEmpty(t, v.SKU, "the table key, projected always, gives the primary key inputs")
	}
}
