package singletable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Explain: the requests a call would send, recorded at the client boundary
// instead of sent. Every table's client is wrapped in explainClient (NewTable),
// below the observer; a call whose context carries an Explain's recorder is
// recorded there and answered as an empty table that accepts every write would
// answer it, without reaching the table's client. The rendering of what was
// recorded is in explain_render.go, the cost model in explain_cost.go.

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
		return nil, fmt.Errorf("singletable: Explain: a nil context: %w", ErrInvalidInput)
	case fn == nil:
		return nil, fmt.Errorf("singletable: Explain: a nil function: %w", ErrInvalidInput)
	case explaining(ctx) != nil:
		return nil, fmt.Errorf("singletable: Explain inside an Explain: the context already records its calls; call Explain once, around them all: %w", ErrInvalidInput)
	}
	rec := &explainRecorder{}
	err := fn(context.WithValue(ctx, explainKey{}, rec))
	x := rec.finish()
	switch {
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrAmbiguous), errors.Is(err, errExplainWait):
		return x, nil
	}
	return x, fmt.Errorf("singletable: Explain: %w", err)
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

	size   []int // item sizes of the Puts, by action (explain_cost.go)
	ixCost []float64
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
func explaining(ctx context.Context) *explainRecorder {
	r, _ := ctx.Value(explainKey{}).(*explainRecorder)
	return r
}

// errExplainWait is what a wait returns under Explain: the call stops there
// instead of waiting (backoff.go). Explain does not report it as an error.
var errExplainWait = errors.New("singletable: Explain: the call would wait here and try again; Explain stops at the first wait")

// explainRecorder collects one Explain's requests. Its methods are safe for
// concurrent use.
type explainRecorder struct {
	mu    sync.Mutex // protects reqs, notes, done and dry
	reqs  []Request
	notes []string
	done  bool
	dry   *dynamodb.Client // writes inputs' JSON (explain_render.go), made on first use
}

// add records the request of one call to t's client.
func (r *explainRecorder) add(ctx context.Context, t *Table, api string, in any) {
	entity, _ := ctx.Value(entityKey{}).(string)
	req := t.describeRequest(api, in) // explain_render.go
	req.Entity = entity
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	req.Input, req.InputErr = r.inputJSON(ctx, api, in)
	r.reqs = append(r.reqs, req)
}

// wait notes that the call would wait (and try again) after the last request.
func (r *explainRecorder) wait() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.notes = append(r.notes, fmt.Sprintf("after request %d: the call would wait (backoff) and try again; Explain shows its first attempt", len(r.reqs)))
	}
	return errExplainWait
}

// finish ends the recording and returns what was recorded.
func (r *explainRecorder) finish() *Explanation {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	return &Explanation{Requests: r.reqs, Notes: r.notes}
}

// explainWait is what a wait does under Explain: nothing, but a note and
// errExplainWait; nil when ctx is not explaining, and the wait goes on.
func explainWait(ctx context.Context) error {
	if r := explaining(ctx); r != nil {
		return r.wait()
	}
	return nil
}

// refuseExplain refuses a call that Explain does not cover (table management).
func (t *Table) refuseExplain(ctx context.Context, op string) error {
	if explaining(ctx) == nil {
		return nil
	}
	return fmt.Errorf("singletable: %s %s under Explain: table management is not explained, and nothing is sent; Table.Definition shows the CreateTable request: %w", op, t.name, ErrInvalidInput)
}

// explainClient is the table's client with calls under Explain recorded and
// answered as by an empty table that accepts every write, not sent. Like
// observedClient, it does not embed the client: a method added to ItemClient
// without one here does not compile, rather than be sent under Explain.
type explainClient struct {
	c ItemClient
	t *Table
}

var _ ItemClient = explainClient{}

func (c explainClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "GetItem", in)
		return &dynamodb.GetItemOutput{}, nil
	}
	return c.c.GetItem(ctx, in, f...)
}

func (c explainClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, f ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "PutItem", in)
		return &dynamodb.PutItemOutput{}, nil
	}
	return c.c.PutItem(ctx, in, f...)
}

func (c explainClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, f ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "UpdateItem", in)
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return c.c.UpdateItem(ctx, in, f...)
}

func (c explainClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "DeleteItem", in)
		return &dynamodb.DeleteItemOutput{}, nil
	}
	return c.c.DeleteItem(ctx, in, f...)
}

func (c explainClient) Query(ctx context.Context, in *dynamodb.QueryInput, f ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "Query", in)
		return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{}}, nil
	}
	return c.c.Query(ctx, in, f...)
}

func (c explainClient) Scan(ctx context.Context, in *dynamodb.ScanInput, f ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "Scan", in)
		return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{}}, nil
	}
	return c.c.Scan(ctx, in, f...)
}

func (c explainClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "BatchGetItem", in)
		out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
		for table := range in.RequestItems {
			out.Responses[table] = []map[string]types.AttributeValue{}
		}
		return out, nil
	}
	return c.c.BatchGetItem(ctx, in, f...)
}

func (c explainClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, f ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "BatchWriteItem", in)
		return &dynamodb.BatchWriteItemOutput{}, nil
	}
	return c.c.BatchWriteItem(ctx, in, f...)
}

func (c explainClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "TransactWriteItems", in)
		return &dynamodb.TransactWriteItemsOutput{}, nil
	}
	return c.c.TransactWriteItems(ctx, in, f...)
}

func (c explainClient) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, f ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	if r := explaining(ctx); r != nil {
		r.add(ctx, c.t, "TransactGetItems", in)
		// One response per item, none holding an item: what DynamoDB answers
		// when none of the keys has an item.
		return &dynamodb.TransactGetItemsOutput{Responses: make([]types.ItemResponse, len(in.TransactItems))}, nil
	}
	return c.c.TransactGetItems(ctx, in, f...)
}
