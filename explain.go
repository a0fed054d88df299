package singletable

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/singletable/singletable/internal/explain"
	"github.com/singletable/singletable/internal/wrap"
)

// Explain: the requests a call would send, recorded at the client boundary
// instead of sent. Every call of a table's client runs through sendItem
// (compat.go, NewTable), below the observer; a call whose context carries an
// Explain's recorder is recorded there and answered as an empty table that
// accepts every write would answer it (explain.Answer), without reaching the
// table's client. The answers, the rendering of what was recorded, its JSON and the cost model are in
// internal/explain, which works on the SDK's inputs and on plain structs that
// this file copies into the public types.

// Explain runs fn with a context under which no table of this package sends
// anything: each DynamoDB request a call made with that context would send is
// recorded instead, exactly as it would reach the table's client (the table's
// observer included, which adds ReturnConsumedCapacity), and answered as an empty
// table that accepts every write answers it. It returns the requests in the
// order they were made (the concurrent ones of a fan-out, QueryShards and Sweep,
// are made one at a time, in shard and segment order), with their cost.
//
// What fn's calls see, and so what Explain shows:
//   - Reads find nothing: Get fails with [ErrNotFound], a Query or Scan page is
//     empty and the last (so a paginated read shows its first page), a batch
//     finds none of its keys, a TransactGet leaves its refs not found.
//   - Writes succeed and return no item: Put, Create, Update, Delete, batches and
//     transactions show the one request they send when nothing goes wrong; the
//     write pipeline's read-back after a lost answer, the retries of unprocessed
//     batch items and of conflicts never happen.
//   - A call that reads before it writes shows its read, then the write it would
//     send after finding nothing: Mutate's consistent GetItem, then its write of
//     key at version 0 (the item created); the lookup of a randomly sharded item
//     (one BatchGetItem across its shards), then nothing. No item is ever read,
//     so no migration is written back.
//   - Waits stop at their first wait: [WaitFor] and the index waits show their
//     first read, and [Explanation.Notes] says the call would wait and read again.
//   - Table management ([Table.CreateTable], [Table.DeleteTable],
//     [Table.EnableTTL]) is refused with [ErrInvalidInput]: [Table.Definition]
//     shows its request.
//
// So the values fn's calls return are meaningless: an empty table's answers,
// never the table's. Values drawn afresh for each call (ClientRequestToken,
// receipts, incarnation ids, generated ids, random shards, timestamps of the
// table's clock) differ from those of the same call made later, unless the
// table's Clock, IDSource and Random and a transaction's Token make them
// repeat.
//
// Explain returns fn's error, wrapped, as the call's own: bad input (a key
// that cannot be rendered, an invalid option) fails as it would when sent, and
// what was recorded before it comes back too. Errors that an empty table's
// answers cause are not errors of Explain: fn's error matching [ErrNotFound] or
// [ErrAmbiguous] (a write judged by reading it back, which the empty table
// cannot show: under Explain no request fails, so nothing else makes one), or a
// wait stopped by Explain, returns nil. A nil fn, or an Explain inside another
// (ctx already explaining), fails with [ErrInvalidInput]. Calls with fn's
// context made after fn returns are answered the same way, sent nowhere and
// recorded nowhere. Explain is safe for concurrent use, and so is fn's context.
func Explain(ctx context.Context, fn func(context.Context) error) (*Explanation, error) {
	switch {
	case ctx == nil:
		return nil, errorf("Explain: a nil context: %w", ErrInvalidInput)
	case fn == nil:
		return nil, errorf("Explain: a nil function: %w", ErrInvalidInput)
	case explaining(ctx) != nil:
		return nil, errorf("Explain inside an Explain: the context already records its calls; call Explain once, around them all: %w", ErrInvalidInput)
	}
	rec := &explain.Recorder{Rand: &syncReader{r: newDerivedStream("singletable/explain", "plans")}}
	err := fn(context.WithValue(ctx, explainKey{}, rec))
	reqs, notes := rec.Finish()
	x := &Explanation{Notes: notes}
	for i := range reqs { // nil Requests when nothing was recorded, as before
		x.Requests = append(x.Requests, requestOf(&reqs[i]))
	}
	switch {
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrAmbiguous), errors.Is(err, explain.ErrWait):
		return x, nil
	}
	return x, errorf("Explain: %w", err)
}

// Explanation is what [Explain] recorded: the requests a call would send, in
// order, with the notes that say where it would go on (a wait). It is a value
// of its own, safe to keep and to read concurrently.
type Explanation struct {
	Requests []Request
	// Notes say what the call would do that is not a request: after which
	// request it would wait and read again.
	Notes []string
}

// Request is one DynamoDB request a call would send.
type Request struct {
	// API is the DynamoDB operation: "GetItem", "PutItem", "Query",
	// "TransactWriteItems"...
	API string
	// Table is the name of the table the request is for.
	Table string
	// Entity is the Go type name of the entity the call was for; "" for calls
	// of the table's (collections, Table.BatchGet, transactions).
	Entity string
	// Actions are the request's item operations, readable: one for GetItem,
	// PutItem, UpdateItem, DeleteItem, Query and Scan; one per key or item of
	// a batch or a transaction, in the request's order.
	Actions []Action
	// Token is a transaction's ClientRequestToken; "" otherwise.
	Token string
	// Input is the request's JSON body as the AWS SDK writes it (the
	// DynamoDB JSON of the input: the same names and values the wire carries;
	// what `aws dynamodb <api> --cli-input-json` takes), with its object keys
	// sorted. nil when the SDK refused to write it (see InputErr).
	Input json.RawMessage
	// InputErr says why Input is nil: the SDK's validation of the input.
	InputErr string

	size   []int     // item sizes of the Puts, by action (the cost model's)
	ixCost []float64 // the index write units of the Puts, by action
	// ixWhole and ixPart are the index writes of the Updates and Deletes, by
	// action (internal/explain).
	ixWhole, ixPart []int
}

// Action is one item operation of a [Request], with its key and expressions
// shown both as sent (placeholders) and with the names and values resolved.
type Action struct {
	// Op is "Get", "Put", "Update", "Delete", "ConditionCheck", "Query" or
	// "Scan".
	Op string
	// Key is the item's primary key, "PK = \"CUST#c1\", SK = \"ORDER#1\"":
	// of a Put, from its item; "" for a Query or Scan.
	Key string
	// Index is the index a Query or Scan reads; "" for the table.
	Index string
	// KeyCondition, Filter, Condition, Update and Projection are the
	// action's expressions; the zero Expression where it has none.
	KeyCondition, Filter, Condition, Update, Projection Expression
	// Consistent is set for a strongly consistent read.
	Consistent bool
	// Descending is set for a Query that reads backwards
	// (ScanIndexForward false).
	Descending bool
	// Limit is a Query's or Scan's Limit: the most items a page evaluates; 0
	// for none (a page then reads up to 1 MB).
	Limit int
	// Select is a Query's or Scan's Select ("COUNT"), "" when not given.
	Select string
	// Segment and Segments are a parallel Scan's Segment and TotalSegments.
	Segment, Segments int
	// Start is the key a page resumes after (ExclusiveStartKey), rendered as
	// Key is; "" for a first page.
	Start string
	// Attributes and Bytes are a Put's item: its attributes and its size as
	// DynamoDB counts it (names and values; numbers at their text's length,
	// an upper bound).
	Attributes, Bytes int
	// ReturnValues is what a write asks back ("ALL_NEW", "ALL_OLD"...); "" for
	// none.
	ReturnValues string
}

// Expression is one expression of an [Action]: as sent, with its #name and
// :value placeholders, and with them resolved for reading.
type Expression struct {
	Raw  string // "#0 = :0"
	Text string // "version = 3"
}

// String returns the expression resolved (Text).
func (e Expression) String() string { return e.Text }

type explainKey struct{}

// explaining returns the recorder of an Explain that ctx runs under, or nil.
func explaining(ctx context.Context) *explain.Recorder {
	if ctx == nil { // a caller's mistake, refused by the call (usable, trace.go)
		return nil
	}
	r, _ := ctx.Value(explainKey{}).(*explain.Recorder)
	return r
}

// explainEnv is the plan environment of a write under Explain: its receipts,
// incarnation ids and tokens drawn from the Explain's fixed stream, so that the
// same calls explain the same; nil (the table's clock and crypto/rand) when ctx
// is not explaining.
func explainEnv(ctx context.Context) *planEnv {
	if r := explaining(ctx); r != nil {
		return &planEnv{rand: r.Rand}
	}
	return nil
}

// txToken draws a transaction's token: from the Explain's stream under Explain,
// else newToken.
func txToken(ctx context.Context) (string, error) {
	if env := explainEnv(ctx); env != nil {
		return env.token()
	}
	return newToken()
}

// syncReader is r for concurrent readers.
type syncReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *syncReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// explainSchema is what describing t's requests reads of t.
func (t *Table) explainSchema() *explain.Schema {
	s := &explain.Schema{Table: t.name, Keys: t.baseKeyAttrs(), TypeAttr: t.opts.TypeAttribute, SchemaAttr: t.opts.SchemaAttribute}
	for _, ix := range t.opts.Indexes {
		s.Indexes = append(s.Indexes, explain.Index{Keys: ix.keyAttrNames(), Projection: ix.Projection, NonKey: ix.NonKeyAttributes})
	}
	s.InIndex = t.entityInIndex
	return s
}

// entityInIndex reports whether items of the entity named entity (its Go name)
// can be in the table's index i: it renders the index's keys, or stores every
// attribute of a native index's key; an unknown name can be in any.
func (t *Table) entityInIndex(entity string, i int) bool {
	ix := t.opts.Indexes[i]
	for _, info := range t.entities {
		if info.name != entity {
			continue
		}
		if ix.Native() {
			v := info.native[ix.Name]
			return v != nil && v.Member()
		}
		_, ok := info.indexes[ix.Name]
		return ok
	}
	return true
}

// explainWait is what a wait does under Explain: nothing, but a note and
// explain.ErrWait; nil when ctx is not explaining, and the wait goes on.
func explainWait(ctx context.Context) error {
	if r := explaining(ctx); r != nil {
		return r.Wait()
	}
	return nil
}

// refuseExplain refuses a call that Explain does not cover (table management).
func (t *Table) refuseExplain(ctx context.Context, op string) error {
	if explaining(ctx) == nil {
		return nil
	}
	return errorf("%s %s under Explain: table management is not explained, and nothing is sent; Table.Definition shows the CreateTable request: %w", op, t.name, ErrInvalidInput)
}

// recordExplained records a call to t's client made under Explain, and reports
// whether it did: the table's client (sendItem, compat.go) then answers it
// as an empty table that accepts every write would, without sending it.
func (t *Table) recordExplained(ctx context.Context, api string, in any) bool {
	r := explaining(ctx)
	if r == nil {
		return false
	}
	entity, _ := ctx.Value(entityKey{}).(string)
	r.Add(ctx, t.explainSchema(), entity, api, in)
	return true
}

// wrap.Items does not embed the client: a method added to ItemClient without
// one there does not compile, rather than be sent under Explain.
var _ ItemClient = wrap.Items{}

// String renders the explanation for a code review: each request with its
// actions (keys, expressions as sent and resolved), its cost for items of up to
// 1 KB where the request does not carry the item (see [Request.Cost]), and its
// JSON; then the notes and the total. The same requests always render the same.
func (x *Explanation) String() string {
	return explain.Render(x.internal(), x.Notes)
}

// Cost is what a request consumes in capacity units: read (RCU) and write
// (WCU) request units for on-demand tables are counted the same way.
type Cost struct {
	ReadUnits, WriteUnits float64
	// Basis says how the figures were reckoned and what in them is an
	// estimate: the assumed size of items the request does not carry, an item
	// a Put replaces that may be larger than the new one, index writes.
	Basis string
}

// String renders the cost and its basis.
func (c Cost) String() string { return explain.Cost(c).String() }

// Cost returns what the request consumes when each item it reads, updates or
// deletes without carrying it is itemSize bytes (0: up to 1 KB); a Put counts its
// own item. The figures are estimates where [Cost.Basis] says so.
func (r Request) Cost(itemSize int) Cost {
	x := r.internal()
	return Cost(x.Cost(itemSize))
}

// Cost returns the cost of every request, summed (see [Request.Cost]).
func (x *Explanation) Cost(itemSize int) Cost {
	return Cost(explain.Total(x.internal(), itemSize))
}

// internal copies x's requests for internal/explain.
func (x *Explanation) internal() []explain.Request {
	out := make([]explain.Request, len(x.Requests))
	for i, r := range x.Requests {
		out[i] = r.internal()
	}
	return out
}

// internal copies r for internal/explain.
func (r Request) internal() explain.Request {
	x := explain.Request{API: r.API, Table: r.Table, Entity: r.Entity, Token: r.Token, Input: r.Input, InputErr: r.InputErr,
		Size: r.size, IxCost: r.ixCost, IxWhole: r.ixWhole, IxPart: r.ixPart, Actions: make([]explain.Action, len(r.Actions))}
	for i, a := range r.Actions {
		x.Actions[i] = explain.Action{Op: a.Op, Key: a.Key, Index: a.Index,
			KeyCondition: explain.Expression(a.KeyCondition), Filter: explain.Expression(a.Filter), Condition: explain.Expression(a.Condition),
			Update: explain.Expression(a.Update), Projection: explain.Expression(a.Projection),
			Consistent: a.Consistent, Descending: a.Descending, Limit: a.Limit, Select: a.Select, Segment: a.Segment, Segments: a.Segments,
			Start: a.Start, Attributes: a.Attributes, Bytes: a.Bytes, ReturnValues: a.ReturnValues}
	}
	return x
}

// requestOf copies a request that internal/explain described into a Request.
func requestOf(x *explain.Request) Request {
	r := Request{API: x.API, Table: x.Table, Entity: x.Entity, Token: x.Token, Input: x.Input, InputErr: x.InputErr,
		size: x.Size, ixCost: x.IxCost, ixWhole: x.IxWhole, ixPart: x.IxPart, Actions: make([]Action, len(x.Actions))}
	for i, a := range x.Actions {
		r.Actions[i] = Action{Op: a.Op, Key: a.Key, Index: a.Index,
			KeyCondition: Expression(a.KeyCondition), Filter: Expression(a.Filter), Condition: Expression(a.Condition),
			Update: Expression(a.Update), Projection: Expression(a.Projection),
			Consistent: a.Consistent, Descending: a.Descending, Limit: a.Limit, Select: a.Select, Segment: a.Segment, Segments: a.Segments,
			Start: a.Start, Attributes: a.Attributes, Bytes: a.Bytes, ReturnValues: a.ReturnValues}
	}
	return r
}
