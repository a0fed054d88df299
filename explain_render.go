package singletable

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
)

// The readable side of Explain: each recorded input turned into a Request (its
// actions, keys and expressions resolved), its JSON as the SDK writes it, and
// the Explanation's rendering for a code review.

// describeRequest turns the input of one call to the table's client into a
// Request (without Input, which the recorder adds).
func (t *Table) describeRequest(api string, in any) Request {
	req := Request{API: api, Table: t.name}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Get", Key: t.renderKey(in.Key), Consistent: aws.ToBool(in.ConsistentRead),
			Projection: resolve(in.ProjectionExpression, in.ExpressionAttributeNames, nil)}}
	case *dynamodb.PutItemInput:
		req.Table = aws.ToString(in.TableName)
		req.add(t, t.putAction(in.Item, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, string(in.ReturnValues)), in.Item)
	case *dynamodb.UpdateItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Update", Key: t.renderKey(in.Key), ReturnValues: string(in.ReturnValues),
			Update:    resolve(in.UpdateExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues),
			Condition: resolve(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)}}
	case *dynamodb.DeleteItemInput:
		req.Table = aws.ToString(in.TableName)
		req.Actions = []Action{{Op: "Delete", Key: t.renderKey(in.Key), ReturnValues: string(in.ReturnValues),
			Condition: resolve(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)}}
	case *dynamodb.QueryInput:
		req.Table = aws.ToString(in.TableName)
		names, values := in.ExpressionAttributeNames, in.ExpressionAttributeValues
		req.Actions = []Action{{Op: "Query", Index: aws.ToString(in.IndexName), Consistent: aws.ToBool(in.ConsistentRead),
			Descending:   in.ScanIndexForward != nil && !*in.ScanIndexForward,
			Limit:        int(aws.ToInt32(in.Limit)),
			Select:       string(in.Select),
			Start:        t.renderKey(in.ExclusiveStartKey),
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
			Start:      t.renderKey(in.ExclusiveStartKey),
			Filter:     resolve(in.FilterExpression, names, values),
			Projection: resolve(in.ProjectionExpression, names, nil)}}
	case *dynamodb.BatchGetItemInput:
		for _, table := range sortedKeys(in.RequestItems) {
			ka := in.RequestItems[table]
			req.Table = table
			for _, k := range ka.Keys {
				req.Actions = append(req.Actions, Action{Op: "Get", Key: t.renderKey(k), Consistent: aws.ToBool(ka.ConsistentRead),
					Projection: resolve(ka.ProjectionExpression, ka.ExpressionAttributeNames, nil)})
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, table := range sortedKeys(in.RequestItems) {
			req.Table = table
			for _, w := range in.RequestItems[table] {
				switch {
				case w.PutRequest != nil:
					req.add(t, t.putAction(w.PutRequest.Item, nil, nil, nil, ""), w.PutRequest.Item)
				case w.DeleteRequest != nil:
					req.Actions = append(req.Actions, Action{Op: "Delete", Key: t.renderKey(w.DeleteRequest.Key)})
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
				req.add(t, t.putAction(p.Item, p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues, ""), p.Item)
			case it.Update != nil:
				u := it.Update
				req.Table = aws.ToString(u.TableName)
				req.Actions = append(req.Actions, Action{Op: "Update", Key: t.renderKey(u.Key),
					Update:    resolve(u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues),
					Condition: resolve(u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues)})
			case it.Delete != nil:
				d := it.Delete
				req.Table = aws.ToString(d.TableName)
				req.Actions = append(req.Actions, Action{Op: "Delete", Key: t.renderKey(d.Key),
					Condition: resolve(d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues)})
			case it.ConditionCheck != nil:
				c := it.ConditionCheck
				req.Table = aws.ToString(c.TableName)
				req.Actions = append(req.Actions, Action{Op: "ConditionCheck", Key: t.renderKey(c.Key),
					Condition: resolve(c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues)})
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if g := it.Get; g != nil {
				req.Table = aws.ToString(g.TableName)
				req.Actions = append(req.Actions, Action{Op: "Get", Key: t.renderKey(g.Key), Consistent: true,
					Projection: resolve(g.ProjectionExpression, g.ExpressionAttributeNames, nil)})
			}
		}
	}
	return req
}

// putAction is the Action of a Put of item.
func (t *Table) putAction(item map[string]types.AttributeValue, cond *string, names map[string]string, values map[string]types.AttributeValue, ret string) Action {
	return Action{Op: "Put", Key: t.renderKey(t.keyOf(item)), Attributes: len(item), Bytes: attrvalue.Size(item), ReturnValues: ret,
		Condition: resolve(cond, names, values)}
}

// add appends a Put's action and what its cost needs of its item.
func (r *Request) add(t *Table, a Action, item map[string]types.AttributeValue) {
	r.Actions = append(r.Actions, a)
	if r.size == nil {
		r.size = make([]int, 0, 1)
	}
	for len(r.size) < len(r.Actions)-1 {
		r.size, r.ixCost = append(r.size, 0), append(r.ixCost, 0)
	}
	r.size, r.ixCost = append(r.size, a.Bytes), append(r.ixCost, t.indexWriteUnits(item)) // explain_cost.go
}

// renderKey renders a key: the table's key attributes first, in key schema
// order, then any others by name; "" for none.
func (t *Table) renderKey(key map[string]types.AttributeValue) string {
	if len(key) == 0 {
		return ""
	}
	base := t.baseKeyAttrs()
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

// errExplainDry ends the dry client's calls at its HTTP client, the body recorded.
var errExplainDry = errors.New("singletable: Explain: written, not sent")

type dryBodyKey struct{}

// dryHTTP is the dry client's HTTP client: it keeps the body the SDK wrote and
// sends nothing.
type dryHTTP struct{}

func (dryHTTP) Do(req *http.Request) (*http.Response, error) {
	if p, ok := req.Context().Value(dryBodyKey{}).(*[]byte); ok && req.Body != nil {
		*p, _ = io.ReadAll(req.Body)
	}
	return nil, errExplainDry
}

// inputJSON returns the body the AWS SDK writes for in, through a client of
// the recorder's own that sends nothing (dryHTTP): the JSON on the wire, with
// object keys sorted. Its caller holds r.mu.
func (r *explainRecorder) inputJSON(ctx context.Context, api string, in any) (json.RawMessage, string) {
	if r.dry == nil {
		r.dry = dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://explain.invalid"),
			Credentials: aws.AnonymousCredentials{}, HTTPClient: dryHTTP{}, Retryer: aws.NopRetryer{}})
	}
	var body []byte
	ctx = context.WithValue(context.WithoutCancel(ctx), dryBodyKey{}, &body)
	var err error
	// Each input is copied first: the SDK may fill fields of the input it is
	// given (a missing idempotency token), and this one is the library's.
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		cp := *in
		_, err = r.dry.GetItem(ctx, &cp)
	case *dynamodb.PutItemInput:
		cp := *in
		_, err = r.dry.PutItem(ctx, &cp)
	case *dynamodb.UpdateItemInput:
		cp := *in
		_, err = r.dry.UpdateItem(ctx, &cp)
	case *dynamodb.DeleteItemInput:
		cp := *in
		_, err = r.dry.DeleteItem(ctx, &cp)
	case *dynamodb.QueryInput:
		cp := *in
		_, err = r.dry.Query(ctx, &cp)
	case *dynamodb.ScanInput:
		cp := *in
		_, err = r.dry.Scan(ctx, &cp)
	case *dynamodb.BatchGetItemInput:
		cp := *in
		_, err = r.dry.BatchGetItem(ctx, &cp)
	case *dynamodb.BatchWriteItemInput:
		cp := *in
		_, err = r.dry.BatchWriteItem(ctx, &cp)
	case *dynamodb.TransactWriteItemsInput:
		cp := *in
		_, err = r.dry.TransactWriteItems(ctx, &cp)
	case *dynamodb.TransactGetItemsInput:
		cp := *in
		_, err = r.dry.TransactGetItems(ctx, &cp)
	default:
		return nil, fmt.Sprintf("%s: no JSON for %T", api, in)
	}
	if body == nil {
		if err == nil {
			err = errors.New("no body")
		}
		return nil, err.Error()
	}
	out, cerr := canonicalJSON(body)
	if cerr != nil {
		return nil, cerr.Error()
	}
	return out, ""
}

// canonicalJSON re-encodes a JSON document with its object keys sorted and
// its numbers as written, without HTML escaping.
func canonicalJSON(body []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// String renders the explanation for a code review: each request with its
// actions (keys, expressions as sent and resolved), its cost for items of up to
// 1 KB where the request does not carry the item (see [Request.Cost]), and its
// JSON; then the notes and the total. The same requests always render the same.
func (x *Explanation) String() string {
	var sb strings.Builder
	for i, r := range x.Requests {
		fmt.Fprintf(&sb, "%d. %s", i+1, r.API)
		if r.Table != "" {
			fmt.Fprintf(&sb, " %s", r.Table)
		}
		if r.Entity != "" {
			fmt.Fprintf(&sb, " (%s)", r.Entity)
		}
		sb.WriteString("\n")
		for _, a := range r.Actions {
			a.render(&sb, len(r.Actions) > 1)
		}
		if r.Token != "" {
			line(&sb, "   token:", r.Token)
		}
		line(&sb, "   cost:", r.Cost(0).String())
		if r.Input != nil {
			line(&sb, "   input:", string(r.Input))
		} else if r.InputErr != "" {
			line(&sb, "   input:", "not written: "+r.InputErr)
		}
	}
	for _, n := range x.Notes {
		line(&sb, "note:", n)
	}
	fmt.Fprintf(&sb, "total: %d requests, %s\n", len(x.Requests), x.Cost(0).total())
	return sb.String()
}

func line(sb *strings.Builder, label, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(sb, "%-18s%s\n", label, text)
}

// render writes an action's lines; many marks one of several, shown by its Op.
func (a Action) render(sb *strings.Builder, many bool) {
	indent := "   "
	if many {
		line(sb, "   -", a.Op)
		indent = "     "
	}
	what := a.Key
	switch {
	case a.Op == "Put":
		what = fmt.Sprintf("%s (%d attributes, %d bytes)", a.Key, a.Attributes, a.Bytes)
	case a.Op == "Query" || a.Op == "Scan":
		what = ""
	}
	line(sb, indent+"key:", what)
	line(sb, indent+"index:", a.Index)
	writeExpr(sb, indent+"key condition:", a.KeyCondition)
	writeExpr(sb, indent+"filter:", a.Filter)
	writeExpr(sb, indent+"condition:", a.Condition)
	writeExpr(sb, indent+"update:", a.Update)
	writeExpr(sb, indent+"projection:", a.Projection)
	var opts []string
	if a.Consistent {
		opts = append(opts, "consistent")
	}
	if a.Descending {
		opts = append(opts, "descending")
	}
	if a.Limit > 0 {
		opts = append(opts, "limit "+strconv.Itoa(a.Limit))
	}
	if a.Select != "" {
		opts = append(opts, "select "+a.Select)
	}
	if a.Segments > 0 {
		opts = append(opts, fmt.Sprintf("segment %d of %d", a.Segment, a.Segments))
	}
	if a.ReturnValues != "" && a.ReturnValues != string(types.ReturnValueNone) {
		opts = append(opts, "returns "+a.ReturnValues)
	}
	line(sb, indent+"options:", strings.Join(opts, ", "))
	line(sb, indent+"after:", a.Start)
}

// writeExpr writes an expression as sent and, when it reads otherwise, resolved.
func writeExpr(sb *strings.Builder, label string, e Expression) {
	if e.Raw == "" {
		return
	}
	line(sb, label, e.Raw)
	if e.Text != e.Raw {
		line(sb, "", "= "+e.Text)
	}
}
