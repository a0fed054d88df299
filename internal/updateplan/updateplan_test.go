package updateplan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/docpath"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

type line struct {
	SKU string `dynamodbav:"sku"`
	Qty int    `dynamodbav:"qty"`
}

type order struct {
	ID      string            `dynamodbav:"id"`
	Status  string            `dynamodbav:"status"`
	Note    string            `dynamodbav:"note,omitempty"`
	Total   int64             `dynamodbav:"total"`
	Version uint64            `dynamodbav:"version"`
	Tags    []string          `dynamodbav:"tags,stringset"`
	Lines   []line            `dynamodbav:"lines"`
	Meta    map[string]string `dynamodbav:"meta"`
	Day     string            `dynamodbav:"day"`
	Memo    string            `dynamodbav:"memo"`
}

var errInvalid = errors.New("invalid input")
var errInvalidKey = errors.New("invalid key")

// entity is a test Entity and Keys for order: id feeds the primary key, version
// is owned, and index byStatus is keyed by status and day.
type entity struct {
	plan *codec.Plan
}

func (e entity) Field(attr string) (*codec.Field, bool) { return e.plan.Field(attr) }
func (e entity) Label(f *codec.Field) string            { return f.Name + " (order." + f.GoName + ")" }
func (e entity) Owned(f *codec.Field) string {
	if f.Name == "version" {
		return "version"
	}
	return ""
}
func (e entity) BaseInput(attr string) bool { return attr == "id" }
func (e entity) CheckValue(f *codec.Field, av types.AttributeValue) (int, error) {
	return len(f.Name) + 8, nil
}
func (e entity) Resolve(p docpath.Path) (*docpath.Resolved, error) {
	top, ok := e.plan.Field(p.Steps[0].Name)
	if !ok {
		return nil, fmt.Errorf("%q is not stored: %w", p.Steps[0].Name, errInvalid)
	}
	return docpath.Resolve(p, top, e.Label(top), errInvalid)
}
func (e entity) KeyInputs(f *codec.Field) []string {
	if f.Name == "status" || f.Name == "day" {
		return []string{"gsi1pk"}
	}
	return nil
}

type key struct {
	attr   string
	fields []*codec.Field
}

func (k *key) Attr() string           { return k.attr }
func (k *key) Inputs() []*codec.Field { return k.fields }

func (e entity) pair() [2]Key {
	st, _ := e.plan.Field("status")
	day, _ := e.plan.Field("day")
	return [2]Key{&key{"gsi1pk", []*codec.Field{st}}, &key{"gsi1sk", []*codec.Field{day}}}
}

func (e entity) Indexes(yield func(string, [2]Key) bool) { yield("byStatus", e.pair()) }
func (e entity) Base() []Key {
	id, _ := e.plan.Field("id")
	return []Key{&key{"pk", []*codec.Field{id}}}
}

// RenderKeys renders each key as its inputs joined by '#'.
func (e entity) RenderKeys(pair [2]Key, get func(Key, int) keytmpl.Value) ([2]types.AttributeValue, bool, error) {
	var avs [2]types.AttributeValue
	for j, k := range pair {
		var parts []string
		for i := range k.Inputs() {
			v := get(k, i)
			if v.Kind == keytmpl.KindMissing {
				return avs, false, nil
			}
			parts = append(parts, v.S)
		}
		avs[j] = &types.AttributeValueMemberS{Value: strings.Join(parts, "#")}
	}
	return avs, true, nil
}

func newPlan(t *testing.T, sv order) *Plan {
	t.Helper()
	plan, err := codec.PlanFor(reflect.TypeFor[order]())
	require.NoError(t, err)
	e := entity{plan}
	return &Plan{E: e, K: e, B: &expr.Builder{}, Invalid: errInvalid, InvalidKey: errInvalidKey, Limit: 400 * 1024,
		SV: reflect.ValueOf(&sv).Elem(), NewValues: map[string]*reflect.Value{}, Added: map[string]bool{}, Stored: map[string]bool{}}
}

// TestChanges plans whole-field and path changes into clauses, checks and guards.
func TestChanges(t *testing.T) {
	p := newPlan(t, order{ID: "o1"})
	require.NoError(t, p.Changes([]Change{
		{Op: Set, Attr: "total", Value: 5},
		{Op: Set, Attr: "note", Value: ""}, // omitempty: removed
		{Op: Remove, Attr: "meta"},
		{Op: Add, Attr: "tags", Value: []string{"a"}},
		{Op: Append, Attr: "lines", Values: []any{line{SKU: "s", Qty: 1}}},
		{Op: SetIfNotExists, Attr: "memo", Value: "new"},
	}))
	assert.Equal(t, []string{"#n0 = :v0", "#n4 = list_append(if_not_exists(#n4, :v3), :v2)"}, p.Sets[:2])
	assert.Equal(t, []string{"#n1", "#n2"}, p.Removes)
	assert.Equal(t, []string{"#n3 :v1"}, p.Adds)
	assert.Equal(t, []string{"NOT attribute_type(#n4, :v4)"}, p.Guards)
	assert.True(t, p.Repeats)
	assert.True(t, p.Added["tags"])
	assert.Nil(t, p.NewValues["note"])
	assert.Equal(t, int64(5), p.NewValues["total"].Int())
	require.Len(t, p.Checks, 4) // total, note, meta removed, memo
	assert.True(t, p.Checks[2].Removed)
	assert.Equal(t, []string{"Set total (order.Total)", "Set note (order.Note)", "Remove meta (order.Meta)", "Add tags (order.Tags)", "Append lines (order.Lines)", "SetIfNotExists memo (order.Memo)"}, p.Changed)
	assert.Len(t, p.Lists, 1)
}

// TestChangesRefused names what each refused change breaks, wrapping Invalid.
func TestChangesRefused(t *testing.T) {
	for want, cs := range map[string][]Change{
		"id (order.ID): feeds the primary key, which cannot change":                     {{Op: Set, Attr: "id", Value: "x"}},
		"version (order.Version): the version changes by itself":                        {{Op: Set, Attr: "version", Value: 2}},
		"total (order.Total): changed twice in one update":                              {{Op: Set, Attr: "total", Value: 1}, {Op: Remove, Attr: "total"}},
		`Set meta (order.Meta): "meta.k" overlaps another change of meta`:               {{Op: Remove, Attr: "meta"}, {Op: Set, Attr: "meta.k", Value: "v"}},
		`"lines[0].qty" overlaps "lines[0]"`:                                            {{Op: Remove, Attr: "lines[0]"}, {Op: Set, Attr: "lines[0].qty", Value: 1}},
		"status (order.Status): ADD needs a number or a set field":                      {{Op: Add, Attr: "status", Value: "x"}},
		"an input of gsi1pk: if_not_exists may or may not store the value":              {{Op: SetIfNotExists, Attr: "day", Value: "d"}},
		"Append tags (order.Tags) at \"tags\": a set has no order":                      {{Op: Append, Attr: "tags", Values: []any{"a"}}},
		"DeleteFromSet lines (order.Lines): a []updateplan.line is not stored as a set": {{Op: DeleteElems, Attr: "lines", Values: []any{line{}}}},
		"ADD applies to top-level number and set attributes only":                       {{Op: Add, Attr: "lines[0].qty", Value: 1}},
		"Append lines (order.Lines) at \"lines\": nothing to append":                    {{Op: Append, Attr: "lines"}},
	} {
		p := newPlan(t, order{})
		err := p.Changes(cs)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
		assert.ErrorIs(t, err, errInvalid, want)
	}
	p := newPlan(t, order{})
	p.Limit = 20
	err := p.Changes([]Change{{Op: Set, Attr: "status", Value: "a"}, {Op: Set, Attr: "total", Value: 1}})
	assert.ErrorContains(t, err, "the values set come to 27 bytes, over DynamoDB's item limit of 20")
}

// TestAdapt switches an Append to its NULL form and back.
func TestAdapt(t *testing.T) {
	p := newPlan(t, order{})
	require.NoError(t, p.Changes([]Change{{Op: Prepend, Attr: "lines", Values: []any{line{SKU: "s"}}}}))
	update, cond := "SET "+p.Sets[0], p.Guards[0]
	null := map[string]types.AttributeValue{"lines": &types.AttributeValueMemberNULL{Value: true}}
	u2, c2, changed := Adapt(p.Lists, update, cond, null)
	require.True(t, changed)
	assert.Equal(t, "SET #n0 = list_append(:v0, :v1)", u2)
	assert.Equal(t, "attribute_type(#n0, :v2)", c2)
	_, _, changed = Adapt(p.Lists, u2, c2, null)
	assert.False(t, changed, "already in the NULL form")
	u3, c3, changed := Adapt(p.Lists, u2, c2, map[string]types.AttributeValue{})
	require.True(t, changed)
	assert.Equal(t, update, u3)
	assert.Equal(t, cond, c3)
}

// TestIndexKeys recomputes an index's keys from a changed input and the key
// value's other inputs, guarded on them; an emptied input removes the keys.
func TestIndexKeys(t *testing.T) {
	p := newPlan(t, order{ID: "o1", Day: "d1"})
	p.Upsert = true
	require.NoError(t, p.Changes([]Change{{Op: Set, Attr: "status", Value: "paid"}}))
	require.NoError(t, p.IndexKeys())
	assert.Equal(t, []string{"#n0 = :v0", "#n1 = :v1", "#n2 = :v2", "#n3 = :v3"}, p.Sets)
	assert.Equal(t, []string{"#n3 = :v3"}, p.Guards)
	require.Len(t, p.Inputs, 1)
	assert.Equal(t, "day", p.Inputs[0].Field.Name)
	assert.True(t, p.Stored["day"])
	require.NoError(t, p.UpsertInputs())
	assert.Equal(t, "#n4 = :v4", p.Sets[4])

	p = newPlan(t, order{ID: "o1"})
	require.NoError(t, p.Changes([]Change{{Op: Set, Attr: "status", Value: "paid"}}))
	assert.ErrorIs(t, p.IndexKeys(), errInvalidKey)
	assert.ErrorContains(t, p.IndexKeys(), "recomputing byStatus's keys needs day (order.Day)")

	p = newPlan(t, order{ID: "o1"})
	p.Library = map[string]bool{"status": true}
	require.NoError(t, p.Changes([]Change{{Op: Set, Attr: "status", Value: "paid"}}))
	require.NoError(t, p.IndexKeys())
	assert.Equal(t, []string{"attribute_not_exists(#n1)"}, p.Guards, "leaves the index while day is not stored")
	assert.Nil(t, p.Inputs[0].AV)

	p = newPlan(t, order{ID: "o1"})
	require.NoError(t, p.Changes([]Change{{Op: Remove, Attr: "status"}}))
	require.NoError(t, p.IndexKeys())
	assert.Equal(t, []string{"#n0", "#n1", "#n2"}, p.Removes)
}

// TestIfAbsent stores a field where the item holds none, with the keys it feeds.
func TestIfAbsent(t *testing.T) {
	p := newPlan(t, order{ID: "o1"})
	day, _ := p.E.Field("day")
	fv := reflect.ValueOf("d1")
	// byStatus's other input (status) does not feed the primary key: no keys.
	require.NoError(t, p.IfAbsent("day", &types.AttributeValueMemberS{Value: "d1"}, day, fv))
	assert.Equal(t, []string{"#n0 = if_not_exists(#n0, :v0)"}, p.Sets)
	assert.Empty(t, p.Inputs)
}

// TestHint names the changes DynamoDB refused an update for.
func TestHint(t *testing.T) {
	api := &smithy.GenericAPIError{Code: "ValidationException", Message: "An operand in the update expression has an incorrect data type"}
	err := Hint(api, "SET #a = :a", nil, []string{"Add total (order.Total)"})
	assert.ErrorIs(t, err, api)
	assert.ErrorContains(t, err, "a value stored in the item is not of the type a change needs")
	assert.ErrorContains(t, err, "(changes: Add total (order.Total)); nothing was written")
	p, _ := docpath.Parse("meta.k")
	err = Hint(&smithy.GenericAPIError{Code: "ValidationException", Message: "The document path provided in the update expression is invalid for update"}, "SET x", []docpath.Path{p}, nil)
	assert.ErrorContains(t, err, `a path of "meta.k" goes into a map or list the stored item does not hold`)
	other := errors.New("boom")
	assert.Same(t, other, Hint(other, "SET x", nil, nil))
	assert.Same(t, error(api), Hint(api, "", nil, nil), "no update expression")
}
