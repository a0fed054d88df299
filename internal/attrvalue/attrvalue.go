// Package attrvalue holds what the library knows of DynamoDB attribute values apart from
// any entity: their size as DynamoDB counts it, what DynamoDB would refuse or
// alter in them (numbers it cannot store, text that is not UTF-8), comparison by
// value, a brief rendering for messages, and the merge of a change into a value
// that holds more than the change knows (Merge).
package attrvalue

import (
	"bytes"
	"fmt"
	"maps"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Size estimates an item's size as DynamoDB counts it: names plus values, with
// numbers at their decimal length (an upper bound of their stored size) and three
// bytes of overhead per list or map plus one per element.
func Size(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		s, _ := Check(v)
		n += len(k) + s
	}
	return n
}

// Problem says why an encoded value cannot be sent, and where below its
// attribute ("[2]", ".name"; "" for the attribute itself).
type Problem struct{ Path, What string }

func (p *Problem) under(step string) *Problem {
	p.Path = step + p.Path
	return p
}

// Check returns av's size (see Size) and its first problem, if any.
func Check(av types.AttributeValue) (int, *Problem) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return 0, &Problem{What: "not valid UTF-8"}
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberN:
		if what := NumberProblem(v.Value); what != "" {
			return 0, &Problem{What: what}
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
				return 0, &Problem{Path: "[" + strconv.Itoa(i) + "]", What: "not valid UTF-8"}
			}
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberNS:
		n := 0
		for i, s := range v.Value {
			if what := NumberProblem(s); what != "" {
				return 0, &Problem{Path: "[" + strconv.Itoa(i) + "]", What: what}
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
			s, p := Check(e)
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
				return 0, &Problem{Path: "." + strconv.QuoteToASCII(k), What: "a map key that is not valid UTF-8"}
			}
			s, p := Check(e)
			if p != nil {
				return 0, p.under("." + k)
			}
			n += 1 + len(k) + s
		}
		return n, nil
	case nil:
		return 0, &Problem{What: "a nil attribute value"}
	}
	return 0, nil
}

// NumberProblem says why DynamoDB would refuse s as a number, or returns "". It
// accepts decimal text with an optional sign, fraction and exponent, at most 38
// significant digits, and a magnitude from 1E-130 to under 1E+126 (or zero).
func NumberProblem(s string) string {
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

// Equal reports whether two attribute values are the same value (nil: absent).
// Numbers compare by their text, as DynamoDB stores them normalised.
func Equal(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && NumberEqual(x.Value, y.Value)
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
	return equalDoc(a, b)
}

// equalDoc is Equal for sets, lists and maps.
func equalDoc(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value, func(a, b string) bool { return a == b })
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(x.Value, y.Value, NumberEqual)
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(x.Value, y.Value, bytes.Equal)
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		if !ok || len(x.Value) != len(y.Value) {
			return false
		}
		for i := range x.Value {
			if !Equal(x.Value[i], y.Value[i]) {
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
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// NumberEqual compares two DynamoDB numbers by value.
func NumberEqual(a, b string) bool {
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

// Text renders an attribute value briefly, for messages.
func Text(av types.AttributeValue) string {
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

// Kind names the type of an attribute value, for messages: "a number (N)".
func Kind(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberN:
		return "a number (N)"
	case *types.AttributeValueMemberB:
		return "binary (B)"
	case *types.AttributeValueMemberBOOL:
		return "a boolean (BOOL)"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberL:
		return "a list (L)"
	case *types.AttributeValueMemberM:
		return "a map (M)"
	case *types.AttributeValueMemberSS:
		return "a string set (SS)"
	case *types.AttributeValueMemberNS:
		return "a number set (NS)"
	case *types.AttributeValueMemberBS:
		return "a binary set (BS)"
	}
	return fmt.Sprintf("%T", av)
}

// Merge applies the change from before to after (a field's encoding
// before and after the typed steps) to cur, the raw image's value: entries of
// maps (and elements of lists of one length) that the change leaves alone keep
// cur's value, so what T does not model inside a map survives. nil: remove.
func Merge(cur, before, after types.AttributeValue) types.AttributeValue {
	switch a := after.(type) {
	case *types.AttributeValueMemberM:
		c, ok1 := cur.(*types.AttributeValueMemberM)
		b, ok2 := before.(*types.AttributeValueMemberM)
		if !ok1 || !ok2 {
			return after
		}
		out := maps.Clone(c.Value)
		for k := range b.Value {
			if _, kept := a.Value[k]; !kept {
				delete(out, k)
			}
		}
		for k, av := range a.Value {
			if bv := b.Value[k]; Equal(bv, av) {
				continue
			}
			if m := Merge(c.Value[k], b.Value[k], av); m != nil {
				out[k] = m
			}
		}
		return &types.AttributeValueMemberM{Value: out}
	case *types.AttributeValueMemberL:
		c, ok1 := cur.(*types.AttributeValueMemberL)
		b, ok2 := before.(*types.AttributeValueMemberL)
		if !ok1 || !ok2 || len(c.Value) != len(a.Value) || len(b.Value) != len(a.Value) {
			return after
		}
		out := make([]types.AttributeValue, len(a.Value))
		for i, av := range a.Value {
			if Equal(b.Value[i], av) {
				out[i] = c.Value[i]
			} else if out[i] = Merge(c.Value[i], b.Value[i], av); out[i] == nil {
				return after
			}
		}
		return &types.AttributeValueMemberL{Value: out}
	}
	return after
}
