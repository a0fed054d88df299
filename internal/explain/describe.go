// Package explain turns the inputs a call would send to DynamoDB into readable
// requests, with the JSON the AWS SDK writes for them and DynamoDB's capacity
// units, for the root package's Explain. It works on the SDK's input types and on
// plain structs (Request, Action, Expression, Cost) that the root package copies
// into its public types of the same names. The Recorder collects one Explain's
// requests; the root package decides, at its client boundary, what is recorded.
package explain

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
)

// Schema is what describing a table's requests reads of the table.
type Schema struct {
	Table string   // the table's name, a request's when its input names none
	Keys  []string // the table's key attributes, in key schema order
	// Indexes are the table's indexes, for the write units of a Put.
	Indexes []Index
	// TypeAttr and SchemaAttr are the type and schema attributes, which an
	// INCLUDE projection holds.
	TypeAttr, SchemaAttr string
	// InIndex reports whether items of the entity (its Go name) can be in index
	// i, for the index writes of an Update or a Delete; nil: every index can
	// hold every entity's items.
	InIndex func(entity string, i int) bool
}

// Index is one index of a Schema.
type Index struct {
	Keys       []string // its key attributes ("" for a missing sort key)
	Projection types.ProjectionType
	NonKey     []string // the attributes an INCLUDE projection names
}

// Request is one request a call would send: the root package's Request, with
// what the cost model needs of its Puts' items.
type Request struct {
	API, Table, Entity string
	Actions            []Action
	Token              string
	Input              json.RawMessage
	InputErr           string
	Size               []int     // item sizes of the Puts, by action
	IxCost             []float64 // the index write units of the Puts, by action
	// IxWhole and IxPart are, by action, the index writes an Update or a
	// Delete may cause: of indexes projecting the whole item (reckoned at the
	// assumed item size) and of the others (one unit each).
	IxWhole, IxPart []int
}

// Action is one item operation of a Request (the root package's Action).
type Action struct {
	Op                                                  string
	Key                                                 string
	Index                                               string
	KeyCondition, Filter, Condition, Update, Projection Expression
	Consistent                                          bool
	Descending                                          bool
	Limit                                               int
	Select                                              string
	Segment, Segments                                   int
	Start                                               string
	Attributes, Bytes                                   int
	ReturnValues                                        string
}

// Expression is an expression as sent (Raw) and resolved (Text).
type Expression struct {
	Raw, Text string
}

// Describe turns the input of one call to the table's client into a Request
// (without Entity and Input, which the recorder adds).
func Describe(s *Schema, entity, api string, in any) Request {
	req := Request{API: api, Table: s.Table, Entity: entity}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Get", Key: s.RenderKey(in.Key), Consistent: aws.ToBool(in.ConsistentRead),
			Projection: resolve(in.ProjectionExpression, in.ExpressionAttributeNames, nil)}}
	case *dynamodb.PutItemInput:
		req.Table = aws.ToString(in.TableName)
		req.add(s, s.putAction(in.Item, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, string(in.ReturnValues)), in.Item)
	case *dynamodb.UpdateItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Update", Key: s.RenderKey(in.Key), ReturnValues: string(in.ReturnValues),
			Update:    resolve(in.UpdateExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues),
			Condition: resolve(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)}}
		req.setWrites(0, s.updateWrites(entity, in.UpdateExpression, in.ExpressionAttributeNames))
	case *dynamodb.DeleteItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Delete", Key: s.RenderKey(in.Key), ReturnValues: string(in.ReturnValues),
			Condition: resolve(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)}}
		req.setWrites(0, s.deleteWrites(entity))
	case *dynamodb.QueryInput:
		req.Table = aws.ToString(in.TableName)
		names, values := in.ExpressionAttributeNames, in.ExpressionAttributeValues
		req.Actions = []Action{{Op: "Query", Index: aws.ToString(in.IndexName), Consistent: aws.ToBool(in.ConsistentRead),
			Descending:   in.ScanIndexForward != nil && !*in.ScanIndexForward,
			Limit:        int(aws.ToInt32(in.Limit)),
			Select:       string(in.Select),
			Start:        s.RenderKey(in.ExclusiveStartKey),
			KeyCondition: resolve(in.KeyConditionExpression, names, values),
			Filter:       resolve(in.FilterExpression, names, values),
			Projection:   resolve(in.ProjectionExpression, names, nil)}}
	case *dynamodb.ScanInput:
		req.Table = aws.ToString(in.TableName)
		names, values := in.ExpressionAttributeNames, in.ExpressionAttributeValues
		req.Actions = []Action{{Op: "Scan", Index: aws.ToString(in.IndexName), Consistent: aws.ToBool(in.ConsistentRead),
			Limit:      int(aws.ToInt32(in.Limit)),
			Select:     string(in.Select),
			Segment:    int(aws.ToInt32(in.Segment)),
			Segments:   int(aws.ToInt32(in.TotalSegments)),
			Start:      s.RenderKey(in.ExclusiveStartKey),
			Filter:     resolve(in.FilterExpression, names, values),
			Projection: resolve(in.ProjectionExpression, names, nil)}}
	case *dynamodb.BatchGetItemInput:
		for _, table := range sortedKeys(in.RequestItems) {
			ka := in.RequestItems[table]
			req.Table = table
			for _, k := range ka.Keys {
				req.Actions = append(req.Actions, Action{Op: "Get", Key: s.RenderKey(k), Consistent: aws.ToBool(ka.ConsistentRead),
					Projection: resolve(ka.ProjectionExpression, ka.ExpressionAttributeNames, nil)})
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, table := range sortedKeys(in.RequestItems) {
			req.Table = table
			for _, w := range in.RequestItems[table] {
				switch {
				case w.PutRequest != nil:
					req.add(s, s.putAction(w.PutRequest.Item, nil, nil, nil, ""), w.PutRequest.Item)
				case w.DeleteRequest != nil:
					req.Actions = append(req.Actions, Action{Op: "Delete", Key: s.RenderKey(w.DeleteRequest.Key)})
					req.setWrites(len(req.Actions)-1, s.deleteWrites(entity))
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		req.Token = aws.ToString(in.ClientRequestToken)
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				p := it.Put
				req.Table = aws.ToString(p.TableName)
				req.add(s, s.putAction(p.Item, p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues, ""), p.Item)
			case it.Update != nil:
				u := it.Update
				req.Table = aws.ToString(u.TableName)
				req.Actions = append(req.Actions, Action{Op: "Update", Key: s.RenderKey(u.Key),
					Update:    resolve(u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues),
					Condition: resolve(u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues)})
				req.setWrites(len(req.Actions)-1, s.updateWrites("", u.UpdateExpression, u.ExpressionAttributeNames))
			case it.Delete != nil:
				d := it.Delete
				req.Table = aws.ToString(d.TableName)
				req.Actions = append(req.Actions, Action{Op: "Delete", Key: s.RenderKey(d.Key),
					Condition: resolve(d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues)})
				req.setWrites(len(req.Actions)-1, s.deleteWrites(""))
			case it.ConditionCheck != nil:
				c := it.ConditionCheck
				req.Table = aws.ToString(c.TableName)
				req.Actions = append(req.Actions, Action{Op: "ConditionCheck", Key: s.RenderKey(c.Key),
					Condition: resolve(c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues)})
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if g := it.Get; g != nil {
				req.Table = aws.ToString(g.TableName)
				req.Actions = append(req.Actions, Action{Op: "Get", Key: s.RenderKey(g.Key), Consistent: true,
					Projection: resolve(g.ProjectionExpression, g.ExpressionAttributeNames, nil)})
			}
		}
	}
	return req
}

// putAction is the Action of a Put of item.
func (s *Schema) putAction(item map[string]types.AttributeValue, cond *string, names map[string]string, values map[string]types.AttributeValue, ret string) Action {
	return Action{Op: "Put", Key: s.RenderKey(s.keyOf(item)), Attributes: len(item), Bytes: attrvalue.Size(item), ReturnValues: ret,
		Condition: resolve(cond, names, values)}
}

// keyOf returns the table's key attributes of item.
func (s *Schema) keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := make(map[string]types.AttributeValue, 2)
	for _, a := range s.Keys {
		key[a] = item[a]
	}
	return key
}

// add appends a Put's action and what its cost needs of its item.
func (r *Request) add(s *Schema, a Action, item map[string]types.AttributeValue) {
	r.Actions = append(r.Actions, a)
	if r.Size == nil {
		r.Size = make([]int, 0, 1)
	}
	for len(r.Size) < len(r.Actions)-1 {
		r.Size, r.IxCost = append(r.Size, 0), append(r.IxCost, 0)
	}
	r.Size, r.IxCost = append(r.Size, a.Bytes), append(r.IxCost, s.indexWriteUnits(item)) // cost.go
}

// RenderKey renders a key: the table's key attributes first, in key schema
// order, then any others by name; "" for none.
func (s *Schema) RenderKey(key map[string]types.AttributeValue) string {
	if len(key) == 0 {
		return ""
	}
	base := s.Keys
	names := sortedKeys(key)
	slices.SortStableFunc(names, func(a, b string) int {
		ia, ib := slices.Index(base, a), slices.Index(base, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return 0
	})
	var sb strings.Builder
	for i, n := range names {
		if key[n] == nil {
			continue
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(readableName(n))
		sb.WriteString(" = ")
		writeValue(&sb, key[n])
	}
	return sb.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// resolve returns an expression as sent and with its placeholders resolved:
// #names by names, :values by values rendered (writeValue). A placeholder with
// nothing to resolve it stays as it is.
func resolve(expr *string, names map[string]string, values map[string]types.AttributeValue) Expression {
	raw := aws.ToString(expr)
	if raw == "" {
		return Expression{}
	}
	var sb strings.Builder
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '#' && c != ':' {
			sb.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(raw) && isPlaceholderByte(raw[j]) {
			j++
		}
		token := raw[i:j]
		switch n, ok := names[token]; {
		case c == '#' && ok:
			sb.WriteString(readableName(n))
		case c == ':' && values[token] != nil:
			writeValue(&sb, values[token])
		default:
			sb.WriteString(token)
		}
		i = j
	}
	return Expression{Raw: raw, Text: sb.String()}
}

func isPlaceholderByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// readableName renders an attribute name: as it is when it reads as one (letters,
// digits, _ - .), quoted otherwise.
func readableName(n string) string {
	for i := 0; i < len(n); i++ {
		if c := n[i]; !isPlaceholderByte(c) && c != '-' && c != '.' {
			return strconv.Quote(n)
		}
	}
	if n == "" {
		return `""`
	}
	return n
}

// writeValue renders an attribute value for reading: strings quoted, numbers
// as they are, binary as b64"...", sets <<...>>, lists [...], maps {...} with
// their keys sorted.
func writeValue(sb *strings.Builder, av types.AttributeValue) {
	list := func(n int, each func(int)) {
		for i := range n {
			if i > 0 {
				sb.WriteString(", ")
			}
			each(i)
		}
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		sb.WriteString(strconv.Quote(v.Value))
	case *types.AttributeValueMemberN:
		sb.WriteString(v.Value)
	case *types.AttributeValueMemberB:
		sb.WriteString(`b64"` + base64.StdEncoding.EncodeToString(v.Value) + `"`)
	case *types.AttributeValueMemberBOOL:
		sb.WriteString(strconv.FormatBool(v.Value))
	case *types.AttributeValueMemberNULL:
		sb.WriteString("NULL")
	case *types.AttributeValueMemberSS:
		sb.WriteString("<<")
		list(len(v.Value), func(i int) { sb.WriteString(strconv.Quote(v.Value[i])) })
		sb.WriteString(">>")
	case *types.AttributeValueMemberNS:
		sb.WriteString("<<")
		list(len(v.Value), func(i int) { sb.WriteString(v.Value[i]) })
		sb.WriteString(">>")
	case *types.AttributeValueMemberBS:
		sb.WriteString("<<")
		list(len(v.Value), func(i int) { sb.WriteString(`b64"` + base64.StdEncoding.EncodeToString(v.Value[i]) + `"`) })
		sb.WriteString(">>")
	case *types.AttributeValueMemberL:
		sb.WriteString("[")
		list(len(v.Value), func(i int) { writeValue(sb, v.Value[i]) })
		sb.WriteString("]")
	case *types.AttributeValueMemberM:
		keys := sortedKeys(v.Value)
		sb.WriteString("{")
		list(len(keys), func(i int) {
			sb.WriteString(readableName(keys[i]) + ": ")
			writeValue(sb, v.Value[keys[i]])
		})
		sb.WriteString("}")
	default:
		fmt.Fprintf(sb, "%T", av)
	}
}

// ixWrites are the index writes of one Update or Delete (Request.IxWhole and
// IxPart).
type ixWrites struct{ whole, part int }

// setWrites records the index writes of action i.
func (r *Request) setWrites(i int, w ixWrites) {
	for len(r.IxWhole) <= i {
		r.IxWhole, r.IxPart = append(r.IxWhole, 0), append(r.IxPart, 0)
	}
	r.IxWhole[i], r.IxPart[i] = w.whole, w.part
}

// inIndex reports whether the entity's items can be in index i ("" entity: any).
func (s *Schema) inIndex(entity string, i int) bool {
	return entity == "" || s.InIndex == nil || s.InIndex(entity, i)
}

// deleteWrites are the index writes a Delete may cause: one in each index that
// can hold the entity's items (DynamoDB deletes the item's entry there).
func (s *Schema) deleteWrites(entity string) ixWrites {
	var w ixWrites
	for i, ix := range s.Indexes {
		if !s.inIndex(entity, i) {
			continue
		}
		if ix.Projection == "" || ix.Projection == types.ProjectionTypeAll {
			w.whole++
		} else {
			w.part++
		}
	}
	return w
}

// updateWrites are the index writes an Update may cause, from the attributes its
// expression names: in an index whose key attribute it sets or removes, two (the
// entry deleted and put again under the new key); in one that projects an
// attribute it changes, one; in the others none.
func (s *Schema) updateWrites(entity string, expr *string, names map[string]string) ixWrites {
	changed := map[string]bool{}
	raw := aws.ToString(expr)
	for i := 0; i < len(raw); i++ {
		if raw[i] != '#' {
			continue
		}
		j := i + 1
		for j < len(raw) && isPlaceholderByte(raw[j]) {
			j++
		}
		if n, ok := names[raw[i:j]]; ok && (i == 0 || raw[i-1] != '.') { // the attribute, not a nested member
			changed[n] = true
		}
		i = j - 1
	}
	var w ixWrites
	for i, ix := range s.Indexes {
		if !s.inIndex(entity, i) {
			continue
		}
		n := 0
		for _, k := range ix.Keys {
			if k != "" && changed[k] {
				n = 2
			}
		}
		whole := ix.Projection == "" || ix.Projection == types.ProjectionTypeAll
		if n == 0 {
			for a := range changed {
				if s.projects(ix, a) {
					n = 1
				}
			}
		}
		if whole {
			w.whole += n
		} else {
			w.part += n
		}
	}
	return w
}

// projects reports whether index ix holds attribute a (not one of the table's
// keys, which every index holds and an Update cannot change).
func (s *Schema) projects(ix Index, a string) bool {
	if slices.Contains(s.Keys, a) {
		return false
	}
	switch ix.Projection {
	case "", types.ProjectionTypeAll:
		return true
	case types.ProjectionTypeInclude:
		return slices.Contains(ix.NonKey, a) || a == s.TypeAttr || a == s.SchemaAttr
	}
	return false
}
