package singletable

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
)

// MaxItemBytes is DynamoDB's item size limit. Items over it are rejected before sending.
const MaxItemBytes = 400 * 1024

// checkItem returns an item's size (see attrvalue.Size) and refuses, before anything is
// sent, what DynamoDB would refuse or silently alter: items over 400 KB, numbers
// it cannot store (NaN, infinities, more than 38 significant digits, magnitudes
// outside 1E-130 to 1E+126) and strings that are not UTF-8 (the SDK's JSON
// encoding would replace their bytes with U+FFFD). Errors name the Go field and
// the path inside it.
func (info *entityInfo) checkItem(item map[string]types.AttributeValue) (int, error) {
	n := 0
	var largest string
	largestSize := -1
	for k, v := range item {
		s, p := attrvalue.Check(v)
		if p == nil && !utf8.ValidString(k) {
			p = &attrvalue.Problem{What: "the attribute name is not valid UTF-8"}
		}
		if p != nil {
			return 0, errorf("%s (attribute %q%s): %s: %w", info.fieldName(k), k, p.Path, p.What, ErrInvalidInput)
		}
		n += len(k) + s
		if s > largestSize {
			largest, largestSize = k, s
		}
	}
	if n > MaxItemBytes {
		return n, errorf("%s item is %d bytes, over DynamoDB's limit of %d (the largest attribute is %s, %d bytes): %w", info.name, n, MaxItemBytes, info.fieldName(largest), largestSize, ErrInvalidInput)
	}
	return n, nil
}

// checkSize refuses an item that is over DynamoDB's limit once the attributes the
// library adds after encoding are in it, or will be on the server (extra bytes).
func (info *entityInfo) checkSize(item map[string]types.AttributeValue, extra int) error {
	if n := attrvalue.Size(item) + extra; n > MaxItemBytes {
		return errorf("%s item is %d bytes with its version and receipts, over DynamoDB's limit of %d: %w", info.name, n, MaxItemBytes, ErrInvalidInput)
	}
	return nil
}

// fieldName names a stored attribute for messages: "Order.Status", or the
// attribute itself for those the library writes (keys, type, schema).
func (info *entityInfo) fieldName(attr string) string {
	if f, ok := info.plan.Field(attr); ok {
		return info.name + "." + f.GoName
	}
	return info.name + " attribute " + strconv.Quote(attr)
}

// checkValue checks one encoded value of field f (see checkItem) and returns its
// size with its name. The error names the field; the caller's names the call.
func (info *entityInfo) checkValue(f *codec.Field, av types.AttributeValue) (int, error) {
	s, p := attrvalue.Check(av)
	if p != nil {
		return 0, fmt.Errorf("%s.%s (attribute %q%s): %s: %w", info.name, f.GoName, f.Name, p.Path, p.What, ErrInvalidInput)
	}
	if s+len(f.Name) > MaxItemBytes {
		return 0, fmt.Errorf("%s.%s: the value is %d bytes, over DynamoDB's item limit of %d: %w", info.name, f.GoName, s, MaxItemBytes, ErrInvalidInput)
	}
	return s + len(f.Name), nil
}
