package codec

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fallback encodes and decodes one type under one set of options with attributevalue itself, for what is
// not compiled: interface values, pointers to pointers, maps with non-string keys, and every type mismatch
// when decoding (so the error, or the odd accepted case, is attributevalue's own).
//
// attributevalue's per-field logic is not exported, so the value is placed in a one-field struct whose tag
// carries the same options, and the struct goes through MarshalMap/UnmarshalMap. For the field this is
// exactly attributevalue's encode(v, tag) / decode(av, v, tag).
type fallback struct {
	typ  reflect.Type
	opts options

	once    sync.Once
	wrapper reflect.Type // struct { X typ `dynamodbav:"X,opts"` }, built on first use
}

func (fb *fallback) wrapperType() reflect.Type {
	fb.once.Do(func() {
		fb.wrapper = reflect.StructOf([]reflect.StructField{{
			Name: "X",
			Type: fb.typ,
			Tag:  reflect.StructTag(tagKey + `:"` + fb.opts.tagString("X") + `"`),
		}})
	})
	return fb.wrapper
}

// encode encodes v as attributevalue would a struct field holding it; addr says whether that struct is
// addressable (which decides whether pointer-receiver Marshalers are called). attributevalue has no
// depth limit, so v is walked first (a value that contains itself would overflow the stack) and the
// result checked after (a Marshaler inside may return anything).
func (fb *fallback) encode(e *encState, v reflect.Value, addr bool) (types.AttributeValue, error) {
	if err := walkDepth(v, e.depth+1, 0); err != nil {
		return nil, err
	}
	w := reflect.New(fb.wrapperType())
	w.Elem().Field(0).Set(v)
	in := w.Interface()
	if !addr {
		in = w.Elem().Interface()
	}
	m, err := attributevalue.MarshalMap(in)
	if err != nil {
		return nil, err
	}
	if err := checkDepth(m["X"], e.depth); err != nil {
		return nil, err
	}
	return m["X"], nil // nil when omitted
}

// decode decodes av into v as attributevalue would into a struct field. attributevalue panics on a few
// inputs (a byte array of another length, an interface already holding a non-pointer value); those panics
// come back as errors.
func (fb *fallback) decode(av types.AttributeValue, v reflect.Value) (err error) {
	w := reflect.New(fb.wrapperType())
	x := w.Elem().Field(0)
	x.Set(v)
	defer func() {
		if r := recover(); r != nil {
			if !isReflectPanic(r) {
				panic(r)
			}
			err = fmt.Errorf("cannot decode %T into %s: attributevalue panics: %v", av, fb.typ, r)
		}
		v.Set(x)
	}()
	return attributevalue.UnmarshalMap(map[string]types.AttributeValue{"X": av}, w.Interface())
}

// isReflectPanic reports whether a recovered value is a misuse of package reflect (as opposed to a panic in
// a user's Unmarshaler, which is not ours to hide).
func isReflectPanic(r any) bool {
	switch r := r.(type) {
	case *reflect.ValueError:
		return true
	case string:
		return strings.HasPrefix(r, "reflect")
	}
	return false
}
