package uniqueguard

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

type item = map[string]types.AttributeValue

var (
	fEmail = &codec.Field{Name: "email", GoName: "Email"}
	fOrg   = &codec.Field{Name: "orgId", GoName: "OrgID"}
	fSlug  = &codec.Field{Name: "slug", GoName: "Slug"}
	email  = &Set{Name: "email", Fields: []*codec.Field{fEmail}}
	orgSl  = &Set{Name: "orgId+slug", Fields: []*codec.Field{fOrg, fSlug}}
)

func lookup(name string) (*codec.Field, bool) {
	for _, f := range []*codec.Field{fEmail, fOrg, fSlug} {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// TestParseCheck: unique= options read and checked, each refusal naming the field.
func TestParseCheck(t *testing.T) {
	u, rest := SplitOptions("unique=orgId+slug, x=1,unique=email")
	assert.Equal(t, []string{"orgId+slug", "email"}, u)
	assert.Equal(t, " x=1", rest)
	u, rest = SplitOptions("")
	assert.Nil(t, u)
	assert.Empty(t, rest)

	cons, r := Parse([]string{"orgId+slug"}, lookup, func(string) string { return "" })
	require.Nil(t, r)
	require.Len(t, cons, 1)
	assert.Equal(t, []*codec.Field{fOrg, fSlug}, cons[0].Fields)

	_, r = Parse([]string{""}, lookup, nil)
	assert.Equal(t, &Refusal{"singletable", "unique= needs stored attribute names, joined by + (unique=orgId+slug)"}, r)
	_, r = Parse([]string{"orgId+slag"}, lookup, func(n string) string { return ` (did you mean "slug"?)` })
	assert.Equal(t, `singletable: unique=orgId+slag: no stored attribute "slag" (did you mean "slug"?)`, r.Error())
	_, r = Parse([]string{"slug+slug"}, lookup, nil)
	assert.Equal(t, &Refusal{"Slug", `unique=slug+slug: attribute "slug" named twice`}, r)

	ok := func(*codec.Field) *Refusal { return nil }
	attrs, r := Check([]*Set{orgSl, email}, map[string]bool{"orgId": true}, ok)
	require.Nil(t, r)
	assert.Equal(t, []string{"email", "orgId", "slug"}, attrs)
	_, r = Check([]*Set{orgSl, {Name: "slug+orgId", Fields: []*codec.Field{fSlug, fOrg}}}, nil, ok)
	assert.Equal(t, &Refusal{"Slug", `unique constraint "slug+orgId" is declared twice`}, r)
	_, r = Check([]*Set{orgSl}, map[string]bool{"orgId": true, "slug": true}, ok)
	assert.Equal(t, &Refusal{"OrgID", `unique constraint "orgId+slug" is the whole primary key, which is unique already`}, r)
	_, r = Check([]*Set{orgSl}, map[string]bool{"orgId": true, "slug": true, "x": true}, ok)
	assert.Nil(t, r, "a part of the key is not the key")
	_, r = Check([]*Set{email}, nil, func(f *codec.Field) *Refusal { return &Refusal{f.GoName, "no"} })
	assert.Equal(t, &Refusal{"Email", "no"}, r)
	many := make([]*Set, MaxConstraints+1)
	_, r = Check(many, nil, ok)
	assert.Equal(t, &Refusal{"singletable", "more than 16 unique constraints: a write that changes them all would not fit in one transaction"}, r)
}

// TestTypeReason: what can hold a unique value.
func TestTypeReason(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[*int64](), reflect.TypeFor[uint8](), reflect.TypeFor[float32](), reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](), reflect.TypeFor[*time.Time]()} {
		assert.Empty(t, TypeReason(typ), typ.String())
	}
	assert.Equal(t, "a unique value is a string, a number, bytes or a time, not bool", TypeReason(reflect.TypeFor[bool]()))
	assert.Equal(t, "a unique value is a string, a number, bytes or a time, not []string", TypeReason(reflect.TypeFor[[]string]()))
	assert.NotEmpty(t, TypeReason(reflect.TypeFor[uintptr]()))
	assert.Equal(t, "a unique value is a string, a number, bytes or a time, not **string", TypeReason(reflect.TypeFor[**string]()), "one pointer is taken off, as before the move")
}

// TestSets: values, lookup, names, touched, differences.
func TestSets(t *testing.T) {
	vs, ok := orgSl.ValuesOf(item{"orgId": s("o"), "slug": s("a")})
	assert.True(t, ok)
	assert.Equal(t, []types.AttributeValue{s("o"), s("a")}, vs)
	_, ok = orgSl.ValuesOf(item{"orgId": s("o"), "slug": s("")})
	assert.False(t, ok, "a zero attribute: no value")
	assert.Same(t, orgSl, Find([]*Set{email, orgSl}, "orgId+slug"))
	assert.Nil(t, Find([]*Set{email}, "x"))
	assert.Equal(t, "email, orgId+slug", Names([]*Set{email, orgSl}))
	assert.Equal(t, []*Set{orgSl}, Touched([]*Set{email, orgSl}, item{"slug": nil}))
	f, a, b := Differs([]*Set{email, orgSl}, item{"email": s("e"), "slug": n("1")}, item{"email": s("e"), "slug": n("2")})
	assert.Same(t, fSlug, f)
	assert.Equal(t, n("1"), a)
	assert.Equal(t, n("2"), b)
	f, _, _ = Differs([]*Set{email}, item{"email": s("e")}, item{"email": s("e"), "x": s("y")})
	assert.Nil(t, f)
	f, _, _ = Differs([]*Set{email}, nil, item{"email": s("e")})
	assert.Same(t, fEmail, f)
}

func guardKey(c *Set, vs []types.AttributeValue) map[string]types.AttributeValue {
	return item{"pk": s("G#" + c.Name + "#" + ValuesText(vs))}
}

func none(map[string]types.AttributeValue) bool { return false }

// TestBuild: the conditions and guards of each kind of write.
func TestBuild(t *testing.T) {
	// A Put that moves email and keeps orgId+slug: free the old email, claim
	// the new one, claim the kept value again.
	w := &Write{Op: Put, Attrs: []string{"email", "orgId", "slug"}, Touched: []*Set{email, orgSl},
		Next: item{"email": s("new"), "orgId": s("o"), "slug": s("a")}}
	var b expr.Builder
	conds := w.Build(&b, "pk", "User", item{"pk": s("U#1"), "email": s("old"), "orgId": s("o"), "slug": s("a")}, guardKey, none)
	assert.Equal(t, []string{"attribute_not_exists(#n1) OR #n0 = :v0", "attribute_not_exists(#n1) OR #n2 = :v1", "attribute_not_exists(#n1) OR #n3 = :v2"}, conds)
	assert.Equal(t, map[string]string{"#n0": "email", "#n1": "pk", "#n2": "orgId", "#n3": "slug"}, b.Names())
	require.Len(t, w.Guards, 3)
	assert.Equal(t, Guard{Key: item{"pk": s("G#email#old")}, OwnerType: "User", Constraint: "email", Values: []types.AttributeValue{s("old")}, Of: email}, w.Guards[0])
	assert.True(t, w.Guards[1].Claim)
	assert.Equal(t, item{"pk": s("G#email#new")}, w.Guards[1].Key)
	assert.True(t, w.Guards[2].Claim)
	assert.Equal(t, item{"pk": s("G#orgId+slug#o+a")}, w.Guards[2].Key)

	// The same against no item: attribute_not_exists, claims only.
	var b2 expr.Builder
	conds = w.Build(&b2, "pk", "User", nil, guardKey, none)
	assert.Equal(t, []string{"attribute_not_exists(#n0)", "attribute_not_exists(#n1)", "attribute_not_exists(#n2)"}, conds)
	assert.Len(t, w.Guards, 2)

	// A Create: no conditions.
	w.Op = Create
	var b3 expr.Builder
	assert.Empty(t, w.Build(&b3, "pk", "User", nil, guardKey, none))
	assert.Len(t, w.Guards, 2)

	// An Update that removes slug: the stored email is kept (not touched), the
	// orgId+slug value freed; a free another item's guard holds is left out.
	u := &Write{Op: Update, Attrs: []string{"email", "orgId", "slug"}, Touched: []*Set{orgSl}, Next: item{"slug": nil}}
	var b4 expr.Builder
	u.Build(&b4, "pk", "User", item{"email": s("e"), "orgId": s("o"), "slug": s("a")}, guardKey, none)
	require.Len(t, u.Guards, 1)
	assert.False(t, u.Guards[0].Claim)
	var b5 expr.Builder
	u.Build(&b5, "pk", "User", item{"email": s("e"), "orgId": s("o"), "slug": s("a")}, guardKey, func(k map[string]types.AttributeValue) bool { return true })
	assert.Empty(t, u.Guards)

	// A Delete frees every value held.
	d := &Write{Op: Delete, Attrs: []string{"email", "orgId", "slug"}, Touched: []*Set{email, orgSl}}
	var b6 expr.Builder
	d.Build(&b6, "pk", "User", item{"email": s("e"), "orgId": s("o"), "slug": s("a")}, guardKey, none)
	require.Len(t, d.Guards, 2)
	assert.False(t, d.Guards[0].Claim || d.Guards[1].Claim)
	acts := d.Actions("tbl", "pk", "_type", `["U#1"]`)
	require.Len(t, acts, 2)
	assert.NotNil(t, acts[0].Delete)
	assert.Equal(t, "tbl", *acts[1].Delete.TableName)
}

// TestRefused: a refused claim wins over refused frees; refused frees are marked.
func TestRefused(t *testing.T) {
	w := &Write{Guards: []Guard{{Key: item{"pk": s("a")}}, {Key: item{"pk": s("b")}, Claim: true}, {Key: item{"pk": s("c")}}}}
	id := func(k map[string]types.AttributeValue) string { return k["pk"].(*types.AttributeValueMemberS).Value }
	failed := types.CancellationReason{Code: aws.String("ConditionalCheckFailed")}
	ok := types.CancellationReason{Code: aws.String("None")}
	notMine := map[string]bool{}
	claim, freed := w.Refused([]types.CancellationReason{ok, failed, failed, ok}, 1, id, notMine)
	assert.Equal(t, 1, claim)
	assert.False(t, freed)
	assert.Empty(t, notMine)
	claim, freed = w.Refused([]types.CancellationReason{ok, failed, ok, failed}, 1, id, notMine)
	assert.Equal(t, -1, claim)
	assert.True(t, freed)
	assert.Equal(t, map[string]bool{"a": true, "c": true}, notMine)
	claim, freed = w.Refused([]types.CancellationReason{failed}, 1, id, map[string]bool{})
	assert.Equal(t, -1, claim)
	assert.False(t, freed, "reasons missing: nothing refused")
}

// TestErrorText: the text of UniqueError.
func TestErrorText(t *testing.T) {
	assert.Equal(t, `singletable: User.OrgID+Slug (unique orgId+slug): value "o", "a" is held by another item [pk=U#2]: value not unique`,
		ErrorText("User", []string{"OrgID", "Slug"}, "orgId+slug", []string{"o", "a"}, " [pk=U#2]", "singletable: value not unique"))
}

// TestRepairs: the sweep's repair transactions.
func TestRepairs(t *testing.T) {
	owner, cons, vs, ok := Read(item{Owner: s(`["U#1"]`), Constraint: s("email"), Values: &types.AttributeValueMemberL{Value: []types.AttributeValue{s("e")}}})
	assert.True(t, ok)
	assert.Equal(t, `["U#1"]`, owner)
	assert.Equal(t, "email", cons)
	assert.Equal(t, []types.AttributeValue{s("e")}, vs)
	_, _, _, ok = Read(item{Owner: s("x")})
	assert.False(t, ok)
	assert.Equal(t, []string{"e", "1", "YQ=="}, Texts([]types.AttributeValue{s("e"), n("1"), b("a")}))

	tb := Table{Name: "tbl", PartitionKey: "pk", TypeAttribute: "_type"}
	acts := tb.FreeOrphan(item{"pk": s("G")}, item{"pk": s("U#1")}, `["U#1"]`, "User", email, []types.AttributeValue{s("e")})
	require.Len(t, acts, 2)
	assert.Equal(t, "#n0 = :v0", *acts[0].Delete.ConditionExpression)
	assert.Equal(t, `["U#1"]`, acts[0].Delete.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, "(attribute_not_exists(#n0)) OR (#n1 <> :v0) OR (attribute_not_exists(#n2)) OR (#n2 <> :v1)", *acts[1].ConditionCheck.ConditionExpression)
	assert.Equal(t, map[string]string{"#n0": "pk", "#n1": "_type", "#n2": "email"}, acts[1].ConditionCheck.ExpressionAttributeNames)
	assert.Equal(t, "tbl", *acts[1].ConditionCheck.TableName)

	g := Guard{Key: item{"pk": s("G")}, Claim: true, OwnerType: "User", Constraint: "email", Values: []types.AttributeValue{s("e")}, Of: email}
	acts = tb.Restore(g, item{"pk": s("U#1")}, `["U#1"]`)
	require.Len(t, acts, 2)
	assert.Equal(t, "attribute_not_exists(#n0)", *acts[0].Put.ConditionExpression)
	assert.Nil(t, acts[0].Put.ExpressionAttributeValues)
	assert.Equal(t, s(`["U#1"]`), acts[0].Put.Item[Owner])
	assert.Equal(t, s(Type), acts[0].Put.Item["_type"])
	assert.True(t, strings.Contains(*acts[1].ConditionCheck.ConditionExpression, " AND "))
	assert.Equal(t, map[string]string{"#n0": "_type", "#n1": "email"}, acts[1].ConditionCheck.ExpressionAttributeNames)
}

// TestKey: a guard's key, its digest unchanged (stored guards are found by it).
func TestKey(t *testing.T) {
	k := Key("#singletable#", "#", "User", "email", []types.AttributeValue{s("a@b.c")}, "pk", "sk")
	assert.Equal(t, s("#singletable#unique#User#email#"+Digest("User", "email", []types.AttributeValue{s("a@b.c")})), k["pk"])
	assert.Equal(t, s("unique"), k["sk"])
	assert.Len(t, Key("p", "|", "U", "e", nil, "pk", ""), 1, "no sort key")
}

type person struct {
	Email string `dynamodbav:"email,omitempty"`
	Age   int    `dynamodbav:"age"`
}

// TestEncode: the attributes of a value, nil where none is stored.
func TestEncode(t *testing.T) {
	p, err := codec.PlanFor(reflect.TypeFor[person]())
	require.NoError(t, err)
	out, f, err := Encode([]string{"age", "email"}, p.Field, reflect.ValueOf(person{Age: 3}))
	require.NoError(t, err)
	assert.Nil(t, f)
	assert.Equal(t, map[string]types.AttributeValue{"age": n("3"), "email": nil}, out)
	_, present := out["email"]
	assert.True(t, present, "an attribute not stored is there, nil")
}

// TestSetValue: an Update's Set converted and encoded; nil when it stores nothing.
func TestSetValue(t *testing.T) {
	p, err := codec.PlanFor(reflect.TypeFor[person]())
	require.NoError(t, err)
	age, _ := p.Field("age")
	av, err := SetValue(age, int8(7))
	require.NoError(t, err)
	assert.Equal(t, n("7"), av)
	_, err = SetValue(age, []int{1})
	assert.Error(t, err)
	mail, _ := p.Field("email")
	av, err = SetValue(mail, "")
	require.NoError(t, err)
	assert.Nil(t, av, "omitempty: stores nothing")
}

// TestExpiry: the expiry a write's claims carry, by what the write does to
// the owner's ttl and what it read.
func TestExpiry(t *testing.T) {
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	stored := map[string]types.AttributeValue{"ttl": n("100"), "createdAt": n("1")}
	legacy := map[string]types.AttributeValue{"createdAt": n("1")}
	derived := func(item map[string]types.AttributeValue) types.AttributeValue {
		if item["createdAt"] != nil {
			return n("31")
		}
		return nil
	}
	assert.Equal(t, n("200"), Expiry("ttl", true, false, false, n("200"), stored, true, nil), "set")
	assert.Nil(t, Expiry("ttl", true, false, false, nil, stored, true, nil), "removed")
	assert.Nil(t, Expiry("ttl", false, true, false, nil, stored, true, nil), "moved by an unknown amount: none")
	assert.Equal(t, n("100"), Expiry("ttl", false, false, false, nil, stored, true, nil), "left: the one read")
	assert.Nil(t, Expiry("ttl", false, false, false, nil, stored, false, nil), "left, not read: none")
	assert.Equal(t, n("100"), Expiry("ttl", false, false, true, n("200"), stored, true, derived), "if absent: the stored one kept")
	assert.Equal(t, n("31"), Expiry("ttl", false, false, true, n("200"), legacy, true, derived), "if absent, none stored: derived from the stored base")
	assert.Equal(t, n("200"), Expiry("ttl", false, false, true, n("200"), nil, true, derived), "if absent, no item: the one written")
	assert.Nil(t, Expiry("ttl", false, false, true, n("200"), nil, false, derived), "if absent, not read: none")
}
