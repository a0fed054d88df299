// Package wire decodes DynamoDB's JSON responses straight into Go values through the compiled plans
// of internal/codec, without the SDK's attribute value trees in between.
//
// A [Sink] is added to one SDK call's middleware stack ([Sink.Option]) just below the SDK's own
// deserializer. It reads the raw body of a successful response once, decodes every item it can into
// values handed out by [Slots], and gives the SDK's deserializer a body with the rest of the response
// (and the items it left alone), so that everything but the items stays the SDK's: signing, retries,
// endpoint resolution, error responses, consumed capacity, last evaluated keys, unprocessed keys.
//
// # Never a silent difference
//
// The result of decoding an item here is, by construction, what the SDK's deserializer followed by
// [codec.Plan.DecodeIgnoring] gives (a differential test and a fuzz target check it). Whatever the
// decoder is not sure of goes the SDK's way:
//
//   - for the whole response: a status other than 2xx, JSON it does not read as strictly as the SDK
//     (a syntax error, nesting deeper than DynamoDB's), a member it does not know, a member given twice,
//     a BatchGetItem response for another table, a body that cannot be read;
//   - for one item, which the SDK then decodes and the caller decodes from attribute values: an item of
//     another type (or of no type), at another schema version, without one of the keys the caller keeps;
//     an attribute whose Go type the plan decodes only from attribute values (Unmarshalers, interfaces,
//     arrays...); a value the codec would not set plainly (a type mismatch, a number that does not parse
//     or fit its field, a time that does not parse); an attribute value the SDK reads in its own way
//     (a null, an unknown or escaped union member, two members, NULL false, a null list element); an
//     attribute name with escapes; a field given twice.
//
// Strings without escapes are taken from one string per item (one allocation for all of an item's
// strings; a string kept alive keeps that item's text alive, at most 400 KB); strings with escapes are
// decoded exactly as the SDK decodes them (encoding/json's rules: invalid UTF-8 and unpaired surrogates
// become U+FFFD) and allocated each.
//
// Nothing here is global: a Sink belongs to one call.
package wire
