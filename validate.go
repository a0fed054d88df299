package singletable

import (
	"bytes"
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
)

// MaxItemBytes is DynamoDB's item size limit. Items over it are rejected before sending.
const MaxItemBytes = 400 * 1024

// itemSize estimates an item's size as DynamoDB counts it: names plus values, with
// numbers at their decimal length (an upper bound of their stored size) and three
// bytes of overhead per list or map plus one per element.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		s, _ := checkAV(v)
		n += len(k) + s
	}
	return n
}

// checkItem returns an item's size (see itemSize) and refuses, before anything is
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
		s, p := checkAV(v)
		if p == nil && !utf8.ValidString(k) {
			p = &avProblem{what: "the attribute name is not valid UTF-8"}
		}
		if p != nil {
			return 0, fmt.Errorf("singletable: %s (attribute %q%s): %s: %w", info.fieldName(k), k, p.path, p.what, ErrInvalidInput)
		}
		n += len(k) + s
		if s > largestSize {
			largest, largestSize = k, s
		}
	}
	if n > MaxItemBytes {
		return n, fmt.Errorf("singletable: %s item is %d bytes, over DynamoDB's limit of %d (the largest attribute is %s, %d bytes): %w", info.name, n, MaxItemBytes, info.fieldName(largest), largestSize, ErrInvalidInput)
	}
	return n, nil
}

// checkSize refuses an item that is over DynamoDB's limit once the attributes the
// library adds after encoding are in it, or will be on the server (extra bytes).
func (info *entityInfo) checkSize(item map[string]types.AttributeValue, extra int) error {
	if n := itemSize(item) + extra; n > MaxItemBytes {
		return fmt.Errorf("singletable: %s item is %d bytes with its version and receipts, over DynamoDB's limit of %d: %w", info.name, n, MaxItemBytes, ErrInvalidInput)
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
	s, p := checkAV(av)
	if p != nil {
		return 0, fmt.Errorf("%s.%s (attribute %q%s): %s: %w", info.name, f.GoName, f.Name, p.path, p.what, ErrInvalidInput)
	}
	if s+len(f.Name) > MaxItemBytes {
		return 0, fmt.Errorf("%s.%s: the value is %d bytes, over DynamoDB's item limit of %d: %w", info.name, f.GoName, s, MaxItemBytes, ErrInvalidInput)
	}
	return s + len(f.Name), nil
}

// avProblem says why an encoded value cannot be sent, and where below its
// attribute ("[2]", ".name"; "" for the attribute itself).
type avProblem struct{ path, what string }

func (p *avProblem) under(step string) *avProblem {
	p.path = step + p.path
	return p
}

// checkAV returns av's size (see itemSize) and its first problem, if any.
func checkAV(av types.AttributeValue) (int, *avProblem) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return 0, &avProblem{what: "not valid UTF-8"}
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberN:
		if what := numberProblem(v.Value); what != "" {
			return 0, &avProblem{what: what}
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberB:
		return len(v.Value), nil
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1, nil
	case *types.AttributeValueMemberSS:
		n := 0
		for i, s := range v.Value {
			if !utf8.ValidString(s) {
				return 0, &avProblem{path: "[" + strconv.Itoa(i) + "]", what: "not valid UTF-8"}
			}
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberNS:
		n := 0
		for i, s := range v.Value {
			if what := numberProblem(s); what != "" {
				return 0, &avProblem{path: "[" + strconv.Itoa(i) + "]", what: what}
			}
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberBS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberL:
		n := 3
		for i, e := range v.Value {
			s, p := checkAV(e)
			if p != nil {
				return 0, p.under("[" + strconv.Itoa(i) + "]")
			}
			n += 1 + s
		}
		return n, nil
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			if !utf8.ValidString(k) {
				return 0, &avProblem{path: "." + strconv.QuoteToASCII(k), what: "a map key that is not valid UTF-8"}
			}
			s, p := checkAV(e)
			if p != nil {
				return 0, p.under("." + k)
			}
			n += 1 + len(k) + s
		}
		return n, nil
	case nil:
		return 0, &avProblem{what: "a nil attribute value"}
	}
	return 0, nil
}

// numberProblem says why DynamoDB would refuse s as a number, or returns "". It
// accepts decimal text with an optional sign, fraction and exponent, at most 38
// significant digits, and a magnitude from 1E-130 to under 1E+126 (or zero).
func numberProblem(s string) string {
	switch s {
	case "NaN", "+Inf", "-Inf", "Inf", "Infinity", "-Infinity", "+Infinity":
		return s + " is not a number DynamoDB can store"
	}
	intDigits, fracDigits, exp, ok := scanNumber(s)
	if !ok {
		return "not a decimal number"
	}
	at := func(j int) byte {
		if j < len(intDigits) {
			return intDigits[j]
		}
		return fracDigits[j-len(intDigits)]
	}
	total := len(intDigits) + len(fracDigits)
	first, last := -1, -1
	for j := range total {
		if at(j) != '0' {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first < 0 {
		return "" // zero
	}
	if last-first+1 > 38 {
		return s + " has " + strconv.Itoa(last-first+1) + " significant digits; DynamoDB keeps at most 38"
	}
	// The decimal exponent of the first significant digit.
	switch adj := len(intDigits) - first - 1 + exp; {
	case adj > 125:
		return s + " is too large for DynamoDB (at most 9.9999999999999999999999999999999999999E+125)"
	case adj < -130:
		return s + " is too small for DynamoDB (at least 1E-130 in magnitude, or zero)"
	}
	return ""
}

// scanNumber reads DynamoDB's number grammar left to right: an optional sign,
// the digits before and after a decimal point (one of them not empty), and an
// optional exponent (its magnitude capped at about a million). ok is false for
// anything else.
func scanNumber(s string) (intDigits, fracDigits string, exp int, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() string {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return s[start:i]
	}
	intDigits = digits()
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = digits()
	}
	if len(intDigits)+len(fracDigits) == 0 {
		return "", "", 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := digits()
		if e == "" {
			return "", "", 0, false
		}
		for _, c := range []byte(e) {
			if exp < 1_000_000 {
				exp = exp*10 + int(c-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	return intDigits, fracDigits, exp, i == len(s)
}

// avEqual reports whether two attribute values are the same value (nil: absent).
// Numbers compare by their text, as DynamoDB stores them normalised.
func avEqual(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && numberEqual(x.Value, y.Value)
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	}
	return avEqualDoc(a, b)
}

// avEqualDoc is avEqual for sets, lists and maps.
func avEqualDoc(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value, func(a, b string) bool { return a == b })
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(x.Value, y.Value, numberEqual)
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(x.Value, y.Value, bytes.Equal)
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		if !ok || len(x.Value) != len(y.Value) {
			return false
		}
		for i := range x.Value {
			if !avEqual(x.Value[i], y.Value[i]) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		if !ok || len(x.Value) != len(y.Value) {
			return false
		}
		for k, v := range x.Value {
			w, ok := y.Value[k]
			if !ok || !avEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// numberEqual compares two DynamoDB numbers by value.
func numberEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	return okx && oky && x.Cmp(y) == 0
}

// sameSet reports whether two sets hold the same elements, in any order.
func sameSet[E any](a, b []E, eq func(E, E) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if eq(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// avText renders an attribute value briefly, for messages.
func avText(av types.AttributeValue) string {
	switch x := av.(type) {
	case nil:
		return "missing"
	case *types.AttributeValueMemberS:
		return strconv.Quote(x.Value)
	case *types.AttributeValueMemberN:
		return x.Value
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(x.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	}
	return fmt.Sprintf("%T", av)
}
