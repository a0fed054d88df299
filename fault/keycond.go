package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// scalar is a key attribute value: a string, a number or a binary.
type scalar struct {
	typ string   // "S", "N" or "B"
	s   string   // S: the string; B: the bytes
	n   *big.Rat // N: the number
}

// parseScalar decodes an attribute value of type S, N or B.
func parseScalar(raw json.RawMessage) (scalar, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return scalar{}, err
	}
	if len(m) != 1 {
		return scalar{}, fmt.Errorf("attribute value %s: want one type", raw)
	}
	for t, v := range m {
		switch t {
		case "S":
			var s string
			err := json.Unmarshal(v, &s)
			return scalar{typ: t, s: s}, err
		case "N":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return scalar{}, err
			}
			n, ok := new(big.Rat).SetString(strings.TrimSpace(s))
			if !ok {
				return scalar{}, fmt.Errorf("number %q", s)
			}
			return scalar{typ: t, n: n}, nil
		case "B":
			var b []byte // base64 in JSON
			err := json.Unmarshal(v, &b)
			return scalar{typ: t, s: string(b)}, err
		}
		return scalar{}, fmt.Errorf("attribute value of type %s is not a key type", t)
	}
	panic("unreachable")
}

// canonical returns a string equal for equal values.
func (v scalar) canonical() string {
	if v.typ == "N" {
		return "N" + v.n.RatString()
	}
	return v.typ + v.s
}

// compare orders a and b as DynamoDB orders sort keys: numbers by value,
// strings and binaries by their bytes. ok is false when the types differ.
func compare(a, b scalar) (c int, ok bool) {
	if a.typ != b.typ {
		return 0, false
	}
	if a.typ == "N" {
		return a.n.Cmp(b.n), true
	}
	return strings.Compare(a.s, b.s), true
}

// keyTerm is one condition of a key condition: attr op vals.
type keyTerm struct {
	attr string
	op   string // "=", "<", "<=", ">", ">=", "BETWEEN" or "begins_with"
	vals []scalar
}

// matches reports whether v satisfies t.
func (t keyTerm) matches(v scalar) bool {
	c, ok := compare(v, t.vals[0])
	if !ok {
		return false
	}
	switch t.op {
	case "=":
		return c == 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "BETWEEN":
		c2, ok := compare(v, t.vals[1])
		return ok && c >= 0 && c2 <= 0
	case "begins_with":
		return v.typ != "N" && strings.HasPrefix(v.s, t.vals[0].s)
	}
	return false
}

// legacyCondition is a member of Query's KeyConditions parameter.
type legacyCondition struct {
	ComparisonOperator string
	AttributeValueList []json.RawMessage
}

// legacyOps maps KeyConditions' operators to keyTerm's.
func legacyOp(op string) string {
	switch op {
	case "EQ":
		return "="
	case "LT":
		return "<"
	case "LE":
		return "<="
	case "GT":
		return ">"
	case "GE":
		return ">="
	case "BETWEEN":
		return "BETWEEN"
	case "BEGINS_WITH":
		return "begins_with"
	}
	return ""
}

// keyTermsOf returns the terms of a Query's key condition, from
// KeyConditionExpression or the legacy KeyConditions.
func keyTermsOf(q *readRequest) ([]keyTerm, error) {
	if q.KeyConditionExpression != "" {
		return parseKeyCondition(q.KeyConditionExpression, q.ExpressionAttributeNames, q.ExpressionAttributeValues)
	}
	var terms []keyTerm
	for attr, c := range q.KeyConditions {
		t := keyTerm{attr: attr, op: legacyOp(c.ComparisonOperator)}
		want := 1
		if t.op == "BETWEEN" {
			want = 2
		}
		if t.op == "" || len(c.AttributeValueList) != want {
			return nil, fmt.Errorf("KeyConditions: %s with %d values", c.ComparisonOperator, len(c.AttributeValueList))
		}
		for _, raw := range c.AttributeValueList {
			v, err := parseScalar(raw)
			if err != nil {
				return nil, err
			}
			t.vals = append(t.vals, v)
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// token is a lexical element of a key condition expression.
type token struct {
	kind byte   // 'n' name, 'v' value, 'o' comparison operator, 'k' keyword or function, or the punctuation itself: ( ) ,
	text string // the text; for 'n' the attribute name it stands for
}

// lexKeyCondition splits a key condition expression into tokens, resolving
// #name placeholders.
func lexKeyCondition(expr string, names map[string]string) ([]token, error) {
	var toks []token
	for p := 0; p < len(expr); {
		c := expr[p]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p++
		case c == '(' || c == ')' || c == ',':
			toks = append(toks, token{kind: c, text: string(c)})
			p++
		case c == '=':
			toks = append(toks, token{kind: 'o', text: "="})
			p++
		case c == '<' || c == '>':
			op := string(c)
			if p+1 < len(expr) && expr[p+1] == '=' {
				op += "="
			}
			toks = append(toks, token{kind: 'o', text: op})
			p += len(op)
		case c == '#' || c == ':':
			q := wordEnd(expr, p+1)
			word := expr[p:q]
			if c == ':' {
				toks = append(toks, token{kind: 'v', text: word})
			} else if n, ok := names[word]; ok {
				toks = append(toks, token{kind: 'n', text: n})
			} else {
				return nil, fmt.Errorf("undefined name %s", word)
			}
			p = q
		case isWord(c):
			q := wordEnd(expr, p)
			word := expr[p:q]
			switch {
			case strings.EqualFold(word, "AND"), strings.EqualFold(word, "BETWEEN"):
				toks = append(toks, token{kind: 'k', text: strings.ToUpper(word)})
			case word == "begins_with":
				toks = append(toks, token{kind: 'k', text: word})
			default:
				toks = append(toks, token{kind: 'n', text: word})
			}
			p = q
		default:
			return nil, fmt.Errorf("unexpected %q", c)
		}
	}
	return toks, nil
}

// isWord reports whether c may be part of a name, placeholder or keyword.
func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// wordEnd returns the end of the run of word bytes that starts at expr[p].
func wordEnd(expr string, p int) int {
	for p < len(expr) && isWord(expr[p]) {
		p++
	}
	return p
}

// parseKeyCondition parses a KeyConditionExpression:
//
//	cond    = term { AND term }
//	term    = "(" cond ")" | begins_with "(" operand "," operand ")"
//	        | operand BETWEEN operand AND operand | operand cmp operand
//	operand = name | #name | :value
func parseKeyCondition(expr string, names map[string]string, values map[string]json.RawMessage) ([]keyTerm, error) {
	toks, err := lexKeyCondition(expr, names)
	if err != nil {
		return nil, err
	}
	p := &kcParser{toks: toks, values: values}
	terms, err := p.cond()
	if err == nil && p.pos < len(toks) {
		err = fmt.Errorf("unexpected %q", toks[p.pos].text)
	}
	if err != nil {
		return nil, fmt.Errorf("key condition %q: %w", expr, err)
	}
	return terms, nil
}

type kcParser struct {
	toks   []token
	pos    int
	values map[string]json.RawMessage
}

func (p *kcParser) next() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, errors.New("unexpected end")
	}
	p.pos++
	return p.toks[p.pos-1], nil
}

func (p *kcParser) peek(kind byte, text string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == kind && (text == "" || p.toks[p.pos].text == text)
}

func (p *kcParser) expect(kind byte, text string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind != kind || text != "" && t.text != text {
		return fmt.Errorf("unexpected %q", t.text)
	}
	return nil
}

func (p *kcParser) cond() ([]keyTerm, error) {
	var all []keyTerm
	for {
		ts, err := p.term()
		if err != nil {
			return nil, err
		}
		all = append(all, ts...)
		if !p.peek('k', "AND") {
			return all, nil
		}
		p.pos++
	}
}

// operand returns an operand: a name (isName) or a value.
func (p *kcParser) operand() (name string, val scalar, isName bool, err error) {
	t, err := p.next()
	if err != nil {
		return "", scalar{}, false, err
	}
	switch t.kind {
	case 'n':
		return t.text, scalar{}, true, nil
	case 'v':
		raw, ok := p.values[t.text]
		if !ok {
			return "", scalar{}, false, fmt.Errorf("undefined value %s", t.text)
		}
		v, err := parseScalar(raw)
		return "", v, false, err
	}
	return "", scalar{}, false, fmt.Errorf("unexpected %q", t.text)
}

// value returns an operand that must be a value.
func (p *kcParser) value() (scalar, error) {
	_, v, isName, err := p.operand()
	if err == nil && isName {
		err = errors.New("a key can only be compared with a value")
	}
	return v, err
}

func (p *kcParser) term() ([]keyTerm, error) {
	switch {
	case p.peek('(', ""):
		p.pos++
		ts, err := p.cond()
		if err != nil {
			return nil, err
		}
		return ts, p.expect(')', "")
	case p.peek('k', "begins_with"):
		p.pos++
		if err := p.expect('(', ""); err != nil {
			return nil, err
		}
		name, _, isName, err := p.operand()
		if err != nil {
			return nil, err
		}
		if !isName {
			return nil, errors.New("begins_with needs a key first")
		}
		if err := p.expect(',', ""); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		return []keyTerm{{attr: name, op: "begins_with", vals: []scalar{v}}}, p.expect(')', "")
	}
	lname, lval, lIsName, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.peek('k', "BETWEEN") {
		p.pos++
		if !lIsName {
			return nil, errors.New("BETWEEN needs a key first")
		}
		lo, err := p.value()
		if err != nil {
			return nil, err
		}
		if err := p.expect('k', "AND"); err != nil {
			return nil, err
		}
		hi, err := p.value()
		if err != nil {
			return nil, err
		}
		return []keyTerm{{attr: lname, op: "BETWEEN", vals: []scalar{lo, hi}}}, nil
	}
	op, err := p.next()
	if err != nil {
		return nil, err
	}
	if op.kind != 'o' {
		return nil, fmt.Errorf("unexpected %q", op.text)
	}
	rname, rval, rIsName, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch {
	case lIsName && !rIsName:
		return []keyTerm{{attr: lname, op: op.text, vals: []scalar{rval}}}, nil
	case !lIsName && rIsName: // :v < #k is #k > :v
		flipped := map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op.text]
		return []keyTerm{{attr: rname, op: flipped, vals: []scalar{lval}}}, nil
	}
	return nil, errors.New("a comparison needs a key and a value")
}
