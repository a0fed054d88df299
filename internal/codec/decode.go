package codec

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Each decoder handles the attribute value types that attributevalue accepts for its Go type and hands
// anything else (a type mismatch, an unusual but accepted combination, an unknown union member) to the
// fallback, which is attributevalue itself: its error, or its result, is then exactly attributevalue's.
// NULL (and a nil AttributeValue) sets the zero value.

// unmarshalerDecoder calls (*T).UnmarshalDynamoDBAttributeValue for every attribute value, NULL included,
// when attributevalue would (named types whose pointer implements attributevalue.Unmarshaler).
func unmarshalerDecoder(t reflect.Type, dec decodeFunc) decodeFunc {
	if !decodesWithUnmarshaler(t) {
		return dec
	}
	return func(av types.AttributeValue, v reflect.Value) error {
		return v.Addr().Interface().(attributevalue.Unmarshaler).UnmarshalDynamoDBAttributeValue(av)
	}
}

// ptrDecoder decodes into a pointer field: NULL sets it to nil; anything else allocates the pointer if it
// is nil (else decodes into what it points to, as attributevalue does) and then calls the pointer's
// UnmarshalDynamoDBAttributeValue if it has one, else decodes into the element.
func ptrDecoder(t reflect.Type, elem decodeFunc) decodeFunc {
	et := t.Elem()
	unmarshal := t.Implements(unmarshalerType)
	return func(av types.AttributeValue, v reflect.Value) error {
		if isNull(av) {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(et))
		}
		if unmarshal {
			return v.Interface().(attributevalue.Unmarshaler).UnmarshalDynamoDBAttributeValue(av)
		}
		return elem(av, v.Elem())
	}
}

func isNull(av types.AttributeValue) bool {
	if av == nil {
		return true
	}
	_, ok := av.(*types.AttributeValueMemberNULL)
	return ok
}

func decodeNullOr(fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		if isNull(av) {
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

func decodeBool(fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberBOOL:
			if a != nil {
				v.SetBool(a.Value)
				return nil
			}
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

// decodeString accepts S and N (attributevalue sets a string from a number's text).
func decodeString(fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberS:
			if a != nil {
				v.SetString(a.Value)
				return nil
			}
		case *types.AttributeValueMemberN:
			if a != nil {
				v.SetString(a.Value)
				return nil
			}
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

// numberText returns the text of a number to decode from av: an N, or an S with the string option.
func numberText(av types.AttributeValue, asString bool) (string, bool) {
	switch a := av.(type) {
	case *types.AttributeValueMemberN:
		if a != nil {
			return a.Value, true
		}
	case *types.AttributeValueMemberS:
		if a != nil && asString {
			return a.Value, true
		}
	}
	return "", false
}

func overflow(n string, t reflect.Type) error {
	return &attributevalue.UnmarshalTypeError{Value: fmt.Sprintf("number overflow, %s", n), Type: t}
}

func setInt(n string, v reflect.Value) error {
	i, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return err
	}
	if v.OverflowInt(i) {
		return overflow(n, v.Type())
	}
	v.SetInt(i)
	return nil
}

func setUint(n string, v reflect.Value) error {
	u, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return err
	}
	if v.OverflowUint(u) {
		return overflow(n, v.Type())
	}
	v.SetUint(u)
	return nil
}

func setFloat(n string, v reflect.Value) error {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return err
	}
	if v.OverflowFloat(f) {
		return overflow(n, v.Type())
	}
	v.SetFloat(f)
	return nil
}

func numberDecoder(set func(string, reflect.Value) error, asString bool, fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		if n, ok := numberText(av, asString); ok {
			return set(n, v)
		}
		if isNull(av) {
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

func decodeInt(t reflect.Type, asString bool, fb *fallback) decodeFunc {
	if t.Size() == 8 {
		// No overflow check needed.
		return numberDecoder(func(n string, v reflect.Value) error {
			i, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return err
			}
			v.SetInt(i)
			return nil
		}, asString, fb)
	}
	return numberDecoder(setInt, asString, fb)
}

func decodeUint(_ reflect.Type, asString bool, fb *fallback) decodeFunc {
	return numberDecoder(setUint, asString, fb)
}

func decodeFloat(_ reflect.Type, asString bool, fb *fallback) decodeFunc {
	return numberDecoder(setFloat, asString, fb)
}

// decodeTime decodes S as RFC 3339 and N as Unix seconds (whatever the unixtime option says, as
// attributevalue does); with the string option S is Unix seconds too. Unix seconds decode to a time in the
// local time zone (time.Unix).
func decodeTime(t reflect.Type, asString bool, fb *fallback) decodeFunc {
	exact := t == timeType
	return func(av types.AttributeValue, v reflect.Value) error {
		var tm time.Time
		var err error
		switch a := av.(type) {
		case *types.AttributeValueMemberS:
			if a == nil {
				return fb.decode(av, v)
			}
			if asString {
				tm, err = unixTime(a.Value)
			} else {
				tm, err = time.Parse(time.RFC3339, a.Value)
				if err != nil {
					err = &attributevalue.UnmarshalError{Err: err, Value: a.Value, Type: timeType}
				}
			}
		case *types.AttributeValueMemberN:
			if a == nil {
				return fb.decode(av, v)
			}
			tm, err = unixTime(a.Value)
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		default:
			return fb.decode(av, v)
		}
		if err != nil {
			return err
		}
		if exact {
			*v.Addr().Interface().(*time.Time) = tm
		} else {
			v.Set(reflect.ValueOf(tm).Convert(t))
		}
		return nil
	}
}

func unixTime(n string) (time.Time, error) {
	s, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return time.Time{}, &attributevalue.UnmarshalError{Err: err, Value: n, Type: timeType}
	}
	return time.Unix(s, 0), nil
}

// decodeBytes decodes B into a slice of a byte kind. Like attributevalue it reuses the slice's array when
// it is large enough, so bytes the caller shares with the field are overwritten.
func decodeBytes(t reflect.Type, fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberB:
			if a == nil {
				break
			}
			setBytes(t, a.Value, v)
			return nil
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

func setBytes(t reflect.Type, b []byte, v reflect.Value) {
	if v.IsNil() || v.Cap() < len(b) {
		v.Set(reflect.MakeSlice(t, len(b), len(b)))
	} else if v.Len() != len(b) {
		v.SetLen(len(b))
	}
	copy(v.Bytes(), b)
}

func structDecoder(p *Plan, fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberM:
			if a != nil {
				return p.decodeMap(a.Value, v)
			}
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

// mapDecoder decodes M into a map with a string key type. Like attributevalue it adds to a non-nil map
// (entries not in M stay) and decodes each value into a fresh zero value.
func mapDecoder(t reflect.Type, vc *typeCodec, fb *fallback) decodeFunc {
	kt, vt := t.Key(), t.Elem()
	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberM:
			if a == nil {
				break
			}
			if v.IsNil() {
				v.Set(reflect.MakeMapWithSize(t, len(a.Value)))
			}
			if len(a.Value) == 0 {
				return nil
			}
			key := reflect.New(kt).Elem()
			elem := reflect.New(vt).Elem()
			for k, x := range a.Value {
				key.SetString(k)
				elem.SetZero()
				if err := vc.dec(x, elem); err != nil {
					return err
				}
				v.SetMapIndex(key, elem)
			}
			return nil
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

// stringMapDecoder is mapDecoder for exactly map[string]string.
func stringMapDecoder(vc *typeCodec, fb *fallback) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		a, ok := av.(*types.AttributeValueMemberM)
		if !ok || a == nil {
			if isNull(av) {
				v.SetZero()
				return nil
			}
			return fb.decode(av, v)
		}
		p := v.Addr().Interface().(*map[string]string)
		if *p == nil {
			*p = make(map[string]string, len(a.Value))
		}
		dst := *p
		for k, x := range a.Value {
			switch s := x.(type) {
			case *types.AttributeValueMemberS:
				if s != nil {
					dst[k] = s.Value
					continue
				}
			case *types.AttributeValueMemberN:
				if s != nil {
					dst[k] = s.Value
					continue
				}
			case *types.AttributeValueMemberNULL, nil:
				dst[k] = ""
				continue
			}
			elem := reflect.New(vc.typ).Elem()
			if err := vc.dec(x, elem); err != nil {
				return err
			}
			dst[k] = elem.String()
		}
		return nil
	}
}

// stringSliceDecoder is listDecoder for exactly []string, without reflect.MakeSlice's allocation of a
// slice header.
func stringSliceDecoder(ec *typeCodec, general decodeFunc) decodeFunc {
	return func(av types.AttributeValue, v reflect.Value) error {
		a, ok := av.(*types.AttributeValueMemberL)
		if !ok || a == nil {
			return general(av, v)
		}
		p := v.Addr().Interface().(*[]string)
		if *p == nil || cap(*p) < len(a.Value) {
			*p = make([]string, 0, len(a.Value))
		}
		for i, x := range a.Value {
			*p = (*p)[:i+1]
			switch s := x.(type) {
			case *types.AttributeValueMemberS:
				if s != nil {
					(*p)[i] = s.Value
					continue
				}
			case *types.AttributeValueMemberN:
				if s != nil {
					(*p)[i] = s.Value
					continue
				}
			case *types.AttributeValueMemberNULL, nil:
				(*p)[i] = ""
				continue
			}
			if err := ec.dec(x, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
}

// listDecoder decodes L, and SS, NS and BS for the element kinds whose set decoding is simple, into a
// slice or array. Like attributevalue, a slice whose capacity suffices is reused (its elements are decoded
// into, not replaced) and its length set to the number of elements; an array keeps elements past the
// list's length; an empty list leaves a non-nil slice as it was.
func listDecoder(t reflect.Type, ec *typeCodec, fb *fallback) decodeFunc {
	isArray := t.Kind() == reflect.Array
	setS, setN, setB := setElemDecoders(t.Elem())

	// prepare makes room for n elements and returns how many to decode.
	prepare := func(v reflect.Value, n int) int {
		if isArray {
			return min(n, v.Len())
		}
		if v.IsNil() || v.Cap() < n {
			v.Set(reflect.MakeSlice(t, 0, n))
		}
		return n
	}
	index := func(v reflect.Value, i int) reflect.Value {
		if !isArray {
			v.SetLen(i + 1)
		}
		return v.Index(i)
	}

	return func(av types.AttributeValue, v reflect.Value) error {
		switch a := av.(type) {
		case *types.AttributeValueMemberL:
			if a == nil {
				break
			}
			n := prepare(v, len(a.Value))
			for i := 0; i < n; i++ {
				if err := ec.dec(a.Value[i], index(v, i)); err != nil {
					return err
				}
			}
			return nil
		case *types.AttributeValueMemberSS:
			if a == nil || setS == nil {
				break
			}
			n := prepare(v, len(a.Value))
			for i := 0; i < n; i++ {
				if err := setS(a.Value[i], index(v, i)); err != nil {
					return err
				}
			}
			return nil
		case *types.AttributeValueMemberNS:
			if a == nil || setN == nil {
				break
			}
			n := prepare(v, len(a.Value))
			for i := 0; i < n; i++ {
				if err := setN(a.Value[i], index(v, i)); err != nil {
					return err
				}
			}
			return nil
		case *types.AttributeValueMemberBS:
			if a == nil || setB == nil {
				break
			}
			n := prepare(v, len(a.Value))
			for i := 0; i < n; i++ {
				if err := setB(a.Value[i], index(v, i)); err != nil {
					return err
				}
			}
			return nil
		case *types.AttributeValueMemberNULL, nil:
			v.SetZero()
			return nil
		}
		return fb.decode(av, v)
	}
}

// setElemDecoders returns the decoders of one element of type et from SS, NS and BS, nil for a set that
// does not decode element by element into et. They stand for attributevalue's decodeString/decodeNumber/
// decodeBinary on an element, which apply only when the element is not a pointer and has no Unmarshaler
// (which would receive the whole set).
func setElemDecoders(et reflect.Type) (setS, setN func(string, reflect.Value) error, setB func([]byte, reflect.Value) error) {
	if et.Kind() == reflect.Pointer || et.Kind() == reflect.Interface || decodesWithUnmarshaler(et) {
		return nil, nil, nil
	}
	switch et.Kind() {
	case reflect.String:
		setS = func(s string, v reflect.Value) error { v.SetString(s); return nil }
		setN = setS
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		setN = setInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		setN = setUint
	case reflect.Float32, reflect.Float64:
		setN = setFloat
	case reflect.Slice:
		if et.Elem().Kind() == reflect.Uint8 {
			setB = func(b []byte, v reflect.Value) error { setBytes(et, b, v); return nil }
		}
	}
	return setS, setN, setB
}
