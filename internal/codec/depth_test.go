package codec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type (
	// dNode is a linked list: each Next is a map inside the one before.
	dNode struct {
		Next *dNode `dynamodbav:"next,omitempty"`
		V    int    `dynamodbav:"v"`
	}
	dDoc struct {
		ID   string `dynamodbav:"id"`
		Node *dNode `dynamodbav:"node,omitempty"`
	}
	// dTree nests lists of structs.
	dTree struct {
		Kids []dTree `dynamodbav:"kids,omitempty"`
	}
	dForest struct {
		Tree dTree `dynamodbav:"tree"`
	}
	// dRec is a map type that can hold itself.
	dRec     map[string]dRec
	dRecHold struct {
		R dRec `dynamodbav:"r"`
	}
	// dAny holds values that attributevalue encodes (interfaces).
	dAny struct {
		M map[string]any `dynamodbav:"m"`
		L []any          `dynamodbav:"l"`
		A any            `dynamodbav:"a"`
	}
	// dMarsh returns a map nested n deep from its Marshaler.
	dMarsh    struct{ n int }
	dMarshDoc struct {
		X dMarsh `dynamodbav:"x"`
	}
	// dEmbed promotes an embedded struct's fields, which add no level.
	dEmbed struct {
		dNode
		ID string `dynamodbav:"id"`
	}
)

func (m dMarsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	var av types.AttributeValue = &types.AttributeValueMemberS{Value: "leaf"}
	for range m.n {
		av = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": av}}
	}
	return av, nil
}

// chain returns n nodes, each inside the one before.
func chain(n int) *dNode {
	var head *dNode
	for i := range n {
		head = &dNode{Next: head, V: i}
	}
	return head
}

// nestedAny returns n maps (or lists), each inside the one before.
func nestedAny(n int, list bool) any {
	var v any = "leaf"
	for range n {
		if list {
			v = []any{v}
		} else {
			v = map[string]any{"x": v}
		}
	}
	return v
}

// encodeDepth encodes v (addressable) with its plan.
func encodeDepth(t *testing.T, v any) (map[string]types.AttributeValue, error) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	p, err := PlanFor(rv.Type())
	if err != nil {
		t.Fatal(err)
	}
	return p.Encode(rv)
}

// avDepth is how many maps and lists av nests, itself included: 0 for a scalar.
func avDepth(av types.AttributeValue) int {
	d := 0
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		for _, x := range v.Value {
			d = max(d, avDepth(x))
		}
		return 1 + d
	case *types.AttributeValueMemberL:
		for _, x := range v.Value {
			d = max(d, avDepth(x))
		}
		return 1 + d
	}
	return 0
}

// itemDepth is the nesting level of an item: 1, plus its deepest attribute's maps and lists.
func itemDepth(m map[string]types.AttributeValue) int {
	d := 0
	for _, av := range m {
		d = max(d, avDepth(av))
	}
	return 1 + d
}

// Every way a value can nest (structs through pointers, lists of structs, maps of
// a recursive map type, interfaces that attributevalue encodes, a Marshaler's
// result) encodes exactly MaxDepth levels, the item being the first, and refuses
// one more with a *DepthError naming the path.
func TestDepthLimit(t *testing.T) {
	// tree returns a dTree at level whose deepest map or list is at level d.
	var tree func(level, d int) dTree
	tree = func(level, d int) dTree {
		switch {
		case level == d:
			return dTree{}
		case level+1 == d:
			return dTree{Kids: []dTree{}}
		}
		return dTree{Kids: []dTree{tree(level+2, d)}}
	}
	rec := func(maps int) dRec {
		r := dRec{}
		for range maps - 1 {
			r = dRec{"x": r}
		}
		return r
	}
	cases := []struct {
		name string
		// at returns a value whose deepest map or list is at level depth.
		at   func(depth int) any
		path string // the start of the refused path
	}{
		// dDoc is level 1, node level 2, its Next level 3...
		{"pointers to structs", func(d int) any { return &dDoc{ID: "1", Node: chain(d - 1)} }, "dDoc.Node.Next.Next"},
		// tree is level 2, its kids list 3, the struct in it 4...
		{"lists of structs", func(d int) any { return &dForest{Tree: tree(2, d)} }, "dForest.Tree.Kids[0].Kids"},
		{"a recursive map type", func(d int) any { return &dRecHold{R: rec(d - 1)} }, `dRecHold.R["x"]["x"]`},
		{"maps in an interface map", func(d int) any { return &dAny{M: nestedAny(d-1, false).(map[string]any)} }, `dAny.M["x"]["x"]`},
		{"lists in an interface list", func(d int) any { return &dAny{L: nestedAny(d-1, true).([]any)} }, `dAny.L[0][0]`},
		{"maps in an interface", func(d int) any { return &dAny{A: nestedAny(d-1, false)} }, `dAny.A["x"]`},
		{"a Marshaler's result", func(d int) any { return &dMarshDoc{X: dMarsh{n: d - 1}} }, `dMarshDoc.X["x"]`},
		{"an embedded struct's fields", func(d int) any { return &dEmbed{dNode: dNode{Next: chain(d - 1)}} }, "dEmbed.Next.Next"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for d := 3; d <= MaxDepth; d++ {
				m, err := encodeDepth(t, c.at(d))
				if err != nil {
					t.Fatalf("%d levels: %v", d, err)
				}
				if got := itemDepth(m); got != d {
					t.Fatalf("the value meant for %d levels has %d", d, got)
				}
			}
			_, err := encodeDepth(t, c.at(MaxDepth+1))
			var de *DepthError
			if !errors.As(err, &de) || !errors.Is(err, ErrTooDeep) {
				t.Fatalf("%d levels: error %v, want a *DepthError", MaxDepth+1, err)
			}
			if de.Again != "" {
				t.Errorf("a deep value is called a cycle: %v", err)
			}
			if !strings.HasPrefix(de.Path, c.path) || !strings.Contains(err.Error(), de.Path) {
				t.Errorf("path %q, want it to start %q; message %q", de.Path, c.path, err)
			}
		})
	}
}

// A value that contains itself is refused as a cycle, naming where it meets
// itself again, instead of overflowing the stack.
func TestDepthCycles(t *testing.T) {
	self := &dNode{V: 1}
	self.Next = self
	two := &dNode{V: 1, Next: &dNode{V: 2}}
	two.Next.Next = two
	recMap := dRec{}
	recMap["me"] = recMap
	anyMap := map[string]any{"id": "x"}
	anyMap["self"] = anyMap
	anyList := []any{"x", nil}
	anyList[1] = anyList
	var viaAny dAny
	viaAny.A = &viaAny
	cases := []struct {
		name        string
		v           any
		path, again string
	}{
		{"a node pointing to itself", &dDoc{ID: "1", Node: self}, "dDoc.Node.Next", "dDoc.Node"},
		{"two nodes pointing to each other", &dDoc{ID: "1", Node: two}, "dDoc.Node.Next.Next.Next", "dDoc.Node.Next"},
		{"a map holding itself", &dRecHold{R: recMap}, `dRecHold.R["me"]`, "dRecHold.R"},
		{"an interface map holding itself", &dAny{M: anyMap}, `dAny.M["self"]`, "dAny.M"},
		{"an interface list holding itself", &dAny{L: anyList}, `dAny.L[1]`, "dAny.L"},
		{"a struct holding a pointer to itself in an interface", &viaAny, "dAny.A.A", "dAny.A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := encodeDepth(t, c.v)
			var de *DepthError
			if !errors.As(err, &de) || !errors.Is(err, ErrTooDeep) {
				t.Fatalf("error %v, want a *DepthError", err)
			}
			if de.Path != c.path || de.Again != c.again {
				t.Errorf("path %q again %q, want %q again %q (%v)", de.Path, de.Again, c.path, c.again, err)
			}
			if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.again) {
				t.Errorf("message %q does not name %q and %q", err, c.path, c.again)
			}
		})
	}

	// Field.Encode (one attribute, as Update sends it) refuses the same way.
	p, err := PlanFor(reflect.TypeFor[dDoc]())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := p.Field("node")
	_, _, err = f.Encode(reflect.ValueOf(self))
	var de *DepthError
	if !errors.As(err, &de) || de.Path != "dDoc.Node.Next" || de.Again != "dDoc.Node" {
		t.Errorf("Field.Encode: %v", err)
	}
	_, _, err = f.Encode(reflect.ValueOf(chain(MaxDepth)))
	if !errors.As(err, &de) || de.Again != "" {
		t.Errorf("Field.Encode of %d levels: %v", MaxDepth+1, err)
	}
	if _, _, err = f.Encode(reflect.ValueOf(chain(MaxDepth - 1))); err != nil {
		t.Errorf("Field.Encode of %d levels: %v", MaxDepth, err)
	}
}

// What the depth limit allows encodes exactly as attributevalue does.
func TestDepthAllowedMatchesAttributevalue(t *testing.T) {
	checkEncode(t, dDoc{ID: "1", Node: chain(MaxDepth - 1)})
	checkEncode(t, dAny{M: nestedAny(MaxDepth-1, false).(map[string]any), L: nestedAny(MaxDepth-1, true).([]any)})
}
