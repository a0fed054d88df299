package codec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable/singletable/internal/avtest"
)

// avString renders an attribute value deterministically, for failure messages.
func avString(av types.AttributeValue) string {
	switch a := av.(type) {
	case nil:
		return "<nil>"
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("S(%q)", a.Value)
	case *types.AttributeValueMemberN:
		return fmt.Sprintf("N(%s)", a.Value)
	case *types.AttributeValueMemberB:
		if a.Value == nil {
			return "B(nil)"
		}
		return fmt.Sprintf("B(%x)", a.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL(%v)", a.Value)
	case *types.AttributeValueMemberNULL:
		return fmt.Sprintf("NULL(%v)", a.Value)
	case *types.AttributeValueMemberSS:
		return fmt.Sprintf("SS%q", a.Value)
	case *types.AttributeValueMemberNS:
		return fmt.Sprintf("NS%v", a.Value)
	case *types.AttributeValueMemberBS:
		return fmt.Sprintf("BS%x", a.Value)
	case *types.AttributeValueMemberL:
		if a.Value == nil {
			return "L(nil)"
		}
		parts := make([]string, len(a.Value))
		for i, x := range a.Value {
			parts[i] = avString(x)
		}
		return "L[" + strings.Join(parts, ", ") + "]"
	case *types.AttributeValueMemberM:
		if a.Value == nil {
			return "M(nil)"
		}
		return "M" + mapString(a.Value)
	default:
		return fmt.Sprintf("%T", av)
	}
}

func mapString(m map[string]types.AttributeValue) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", k, avString(m[k]))
	}
	b.WriteString("}")
	return b.String()
}

// diffMaps describes how two attribute maps differ, or returns "".
func diffMaps(got, want map[string]types.AttributeValue) string {
	if reflect.DeepEqual(got, want) {
		return ""
	}
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("got nil=%v, want nil=%v", got == nil, want == nil)
	}
	var b strings.Builder
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		g, gok := got[k]
		w, wok := want[k]
		if gok != wok || !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "\n  %s: got %s (present %v), want %s (present %v)", k, avString(g), gok, avString(w), wok)
		}
	}
	return b.String()
}

// theirDecode runs attributevalue.UnmarshalMap, turning a panic into an error.
func theirDecode(m map[string]types.AttributeValue, ptr any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("attributevalue panicked: %v", r)
		}
	}()
	return attributevalue.UnmarshalMap(m, ptr)
}

// ourDecode runs Plan.Decode into the value ptr points to.
func ourDecode(tb testing.TB, m map[string]types.AttributeValue, ptr any) error {
	tb.Helper()
	v := reflect.ValueOf(ptr).Elem()
	p, err := PlanFor(v.Type())
	if err != nil {
		tb.Fatalf("PlanFor(%s): %v", v.Type(), err)
	}
	return p.Decode(m, v)
}

// checkEncode compares Plan.Encode with attributevalue.MarshalMap for v, both as a non-addressable value
// (MarshalMap(x)) and as an addressable one (MarshalMap(&x)). It returns attributevalue's map for &x.
func checkEncode(t *testing.T, v any) map[string]types.AttributeValue {
	t.Helper()
	rv := reflect.ValueOf(v)
	p, err := PlanFor(rv.Type())
	if err != nil {
		t.Fatalf("PlanFor: %v", err)
	}

	got, gerr := p.Encode(rv)
	want, werr := attributevalue.MarshalMap(v)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("by value: error mismatch: ours %v, attributevalue %v", gerr, werr)
	}
	if gerr == nil {
		if d := diffMaps(got, want); d != "" {
			t.Errorf("by value: Encode differs from MarshalMap:%s", d)
		}
	}

	pv := reflect.New(rv.Type())
	pv.Elem().Set(rv)
	got, gerr = p.Encode(pv.Elem())
	want, werr = attributevalue.MarshalMap(pv.Interface())
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("by pointer: error mismatch: ours %v, attributevalue %v", gerr, werr)
	}
	if gerr != nil {
		assertFieldError(t, gerr)
		return nil
	}
	if d := diffMaps(got, want); d != "" {
		t.Errorf("by pointer: Encode differs from MarshalMap:%s", d)
	}

	// EncodeInto a map with other attributes keeps them.
	dst := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "pk"}}
	if err := p.EncodeInto(pv.Elem(), dst); err != nil {
		t.Fatalf("EncodeInto: %v", err)
	}
	if _, ok := want["PK"]; !ok {
		delete(dst, "PK")
		if d := diffMaps(dst, want); d != "" {
			t.Errorf("EncodeInto differs from MarshalMap:%s", d)
		}
	}
	return want
}

// checkDecode decodes m with both decoders into values made by newV (a func returning a pointer) and
// compares the outcome: both fail, or both succeed with the same value.
func checkDecode(t *testing.T, m map[string]types.AttributeValue, newV func() any) {
	t.Helper()
	ours, theirs := newV(), newV()
	gerr := ourDecode(t, m, ours)
	werr := theirDecode(m, theirs)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("decode %s: error mismatch: ours %v, attributevalue %v", mapString(m), gerr, werr)
	}
	if gerr != nil {
		assertFieldError(t, gerr)
		return
	}
	if !avtest.SameValue(reflect.ValueOf(ours).Elem(), reflect.ValueOf(theirs).Elem()) {
		t.Errorf("decode %s:\n ours   %+v\n theirs %+v", mapString(m), reflect.ValueOf(ours).Elem(), reflect.ValueOf(theirs).Elem())
	}
	checkDecodeIgnoring(t, m, newV, theirs, werr)
}

// checkDecodeIgnoring checks that Plan.DecodeIgnoring has Decode's effect, and so attributevalue's (want,
// wantErr), with no ignored names, with names absent from m, and with every attribute of m that names no
// field (those that match one ignoring case are left out of the set by Ignore).
func checkDecodeIgnoring(t *testing.T, m map[string]types.AttributeValue, newV func() any, want any, wantErr error) {
	t.Helper()
	p, err := PlanFor(reflect.TypeOf(newV()).Elem())
	if err != nil {
		t.Fatalf("PlanFor: %v", err)
	}
	var all []string
	for k := range m {
		if _, ok := p.Field(k); !ok {
			all = append(all, k)
		}
	}
	for _, ig := range []*Ignored{nil, p.Ignore("PK", "SK", "Type", "_wr0"), p.Ignore(append(all, "PK")...)} {
		got := newV()
		err := p.DecodeIgnoring(m, reflect.ValueOf(got).Elem(), ig)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("DecodeIgnoring %s (ignoring %v): error mismatch: ours %v, attributevalue %v", mapString(m), ig, err, wantErr)
		}
		if err != nil {
			assertFieldError(t, err)
			continue
		}
		if !avtest.SameValue(reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()) {
			t.Errorf("DecodeIgnoring %s (ignoring %v):\n ours   %+v\n theirs %+v", mapString(m), ig, reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
		}
	}
}

func assertFieldError(t *testing.T, err error) {
	t.Helper()
	var fe *FieldError
	if !asFieldError(err, &fe) || fe.Field == "" {
		t.Errorf("error %v (%T) is not a *FieldError naming a field", err, err)
	}
}
