// Package codec encodes Go structs to DynamoDB attribute maps and back with per-type compiled plans, in
// place of attributevalue.MarshalMap and UnmarshalMap.
//
// [PlanFor] compiles a struct type once (the plan is cached by reflect.Type, as encoding/json caches its
// encoders) into a list of fields, each with an encoder and a decoder chosen for its type and `dynamodbav`
// options. [Plan.Encode] then produces exactly what attributevalue.MarshalMap produces with default
// options, and [Plan.Decode] has exactly the effect of attributevalue.UnmarshalMap, at a fraction of the
// cost: attribute values are allocated from one backing array per kind, numbers and times are formatted
// into one shared text buffer, and fields are found without hashing their names. Types that are rare and
// irregular (interface values, pointers to pointers, maps with non-string keys) and every type mismatch
// when decoding are handed to attributevalue itself, so their results and errors are attributevalue's.
//
// # attributevalue's rules, which this package keeps
//
//   - Only the `dynamodbav` tag is read (not `json`). Options: omitempty, nullempty, omitemptyelem,
//     nullemptyelem, string, stringset, numberset, binaryset, unixtime; a name of "-" skips the field.
//   - Zero means "", 0, false, nil (pointer, interface, map, slice) and zero-length arrays. A struct is
//     never zero: omitempty never omits a time.Time, which is encoded as "0001-01-01T00:00:00Z".
//   - A zero value is still encoded unless omitempty is set: "" is S "", 0 is N "0"; nil pointers, maps and
//     slices are NULL. A non-nil empty slice is an empty L, a non-nil empty map an empty M; a pointer to a
//     zero value is the zero value (S "" for a *string, even with omitempty).
//   - []byte is B (copied); [][]byte is BS; other slices and arrays are L unless a set option is given.
//     An empty set is NULL, even with omitempty (which looks only for nil).
//   - time.Time is S in time.RFC3339Nano, which drops trailing zeros, so its strings do not sort in time
//     order; with unixtime it is N, Unix seconds. Decoding parses S with time.RFC3339 and N as Unix seconds
//     (whatever the option), giving times in UTC, a fixed zone or, for Unix seconds, time.Local.
//   - Floats use strconv's shortest 'f' format. NaN and ±Inf are encoded as "NaN", "+Inf", "-Inf", which
//     DynamoDB rejects when the request is sent, not here.
//   - A string type with Float64, Int64 and String methods (attributevalue.Number, json.Number) is N.
//   - attributevalue.Marshaler is called on a pointer when the type is named and the value addressable,
//     otherwise on the value: a pointer-receiver MarshalDynamoDBAttributeValue is called by Encode only
//     when v is addressable (pass reflect.ValueOf(&x).Elem(), not reflect.ValueOf(x)). A Marshaler that
//     returns (nil, nil) gets the default encoding. The zero check comes first.
//   - attributevalue.Unmarshaler is called through a pointer for every attribute, NULL included; a pointer
//     field is set to nil by NULL without calling it.
//   - Embedded structs are flattened with Go's promotion rules (the shallowest name wins, a tagged name
//     wins at its depth, ambiguous names are dropped); a nil embedded pointer leaves its fields out when
//     encoding and is allocated when decoding into one of them.
//   - Decoding matches an attribute to the field with that name, else to the first field whose name is
//     equal ignoring case: an item attribute "sk" decodes into a field named SK. Attributes with no field
//     are ignored; fields with no attribute are left as they were; NULL sets the zero value. Maps are added
//     to, not replaced. A slice with enough capacity is reused (its old elements are decoded into, and an
//     empty L leaves a non-nil slice as it was); a non-nil pointer is decoded into, not replaced. Decode
//     into a fresh value to avoid sharing.
//   - Decoding accepts N into a string, and S into a number only with the string option.
//
// # Deliberate differences
//
// What attributevalue ignores or accepts silently, PlanFor rejects with a [*FieldError] naming Type.Field:
// unknown or empty tag options ([ErrInvalidTag]); omitempty with nullempty and omitemptyelem with
// nullemptyelem (attributevalue fails at run time on a zero value); options that cannot apply to the
// field's type (a set option on a non-slice or on elements of the wrong kind, unixtime on a non-time,
// string on a non-number, element options on a non-container, any option on a promoted embedded struct);
// two fields at one depth given one attribute name by a tag; field types attributevalue cannot encode and
// so drops (chan, func, complex, unsafe.Pointer, uintptr, map keys that are not strings, numbers, bools or
// text (un)marshalers) unless the type has its own Marshaler ([ErrUnsupportedType]); embedded fields of
// unexported type that are not promoted (attributevalue encodes them but cannot decode them). A type that
// is itself a Marshaler, Unmarshaler or time.Time has no fields to plan and is rejected by PlanFor (it may
// still be a field). Where attributevalue panics while decoding (an interface field that already holds a
// non-pointer value, a byte array of another length), Decode returns an error.
//
// # Concurrency and state
//
// Plans are immutable apart from atomic sizing hints and are safe for concurrent use. The only
// package-level state is the plan cache, a sync.Map keyed by reflect.Type.
package codec
