// Command lambda is an AWS Lambda function that handles a table's DynamoDB
// stream with singletable's decoding: each record's images become the
// registered entity type (here Kitchen, with an attribute of every DynamoDB
// type), records of one item run one at a time in order, records of different
// items run concurrently, and a failed record is reported as a batch item
// failure so that Lambda retries from it (turn on ReportBatchItemFailures on the
// event source mapping; see package streamlambda).
//
// Deployed, main hands the handler to lambda.Start:
//
//	lambda.Start(handler.Handle)
//
// Here, so that it runs without AWS, main reads an event (a file in the format
// Lambda delivers; testdata/event.json was recorded from DynamoDB Local's
// stream), runs the handler on it, and prints what it did and the response:
//
//	go run ./examples/lambda [event.json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/streamlambda"
)

// Kitchen is an item with an attribute of every DynamoDB type.
type Kitchen struct {
	_     struct{}          `Type:"Kitchen" PK:"K#{id}" SK:"V"`
	ID    string            `dynamodbav:"id"`
	S     string            `dynamodbav:"s"`
	N     int64             `dynamodbav:"n"`
	F     float64           `dynamodbav:"f"`
	B     []byte            `dynamodbav:"b"`
	SS    []string          `dynamodbav:"ss,stringset"`
	NS    []int             `dynamodbav:"ns,numberset"`
	BS    [][]byte          `dynamodbav:"bs,binaryset"`
	M     map[string]int    `dynamodbav:"m"`
	L     []string          `dynamodbav:"l"`
	LM    []map[string]bool `dynamodbav:"lm"`
	Null  *string           `dynamodbav:"null"`
	Bool  bool              `dynamodbav:"bool"`
	Count int               `dynamodbav:"count"`
}

// Audit is what the function does with each change: it keeps a line per
// change. A real function would write to another table or a queue, with a
// condition that makes a repeat harmless (Lambda delivers at least once).
type Audit struct {
	mu    sync.Mutex // protects lines
	lines []string
	// failOn, when set, makes the change with this Count fail, to show a
	// batch item failure.
	failOn int
}

// Handle records one change.
func (a *Audit) Handle(_ context.Context, r singletable.StreamRecord) error {
	before, after, ok := singletable.Images[Kitchen](r)
	if !ok {
		return fmt.Errorf("a record of type %q", r.Type)
	}
	k := after
	if r.Event == singletable.StreamRemove {
		k = before
	}
	if a.failOn != 0 && k.Count == a.failOn {
		return errors.New("downstream refused the change")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lines = append(a.lines, fmt.Sprintf("%-6s %s count=%d s=%q ss=%v ns=%v bool=%v null=%v m=%v lm=%v",
		r.Event, r.Key["PK"], k.Count, k.S, k.SS, k.NS, k.Bool, k.Null != nil, k.M, k.LM))
	return nil
}

// newHandler returns the Lambda handler: a table description (no calls are
// made to decode) with Kitchen registered.
func newHandler(a *Audit) (*streamlambda.Handler, error) {
	table, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "kitchen")
	if err != nil {
		return nil, err
	}
	if _, err := singletable.Register[Kitchen](table); err != nil {
		return nil, err
	}
	return streamlambda.New(table, a.Handle)
}

// run handles the event in r and prints what happened to out.
func run(ctx context.Context, r io.Reader, out io.Writer, failOn int) (events.DynamoDBEventResponse, error) {
	var ev events.DynamoDBEvent
	if err := json.NewDecoder(r).Decode(&ev); err != nil {
		return events.DynamoDBEventResponse{}, fmt.Errorf("event: %w", err)
	}
	a := &Audit{failOn: failOn}
	h, err := newHandler(a)
	if err != nil {
		return events.DynamoDBEventResponse{}, err
	}
	resp, err := h.Handle(ctx, ev)
	if err != nil {
		return resp, err
	}
	fmt.Fprintf(out, "%d records from %s\n", len(ev.Records), ev.Records[0].EventSourceArn)
	sort.Strings(a.lines)
	fmt.Fprintln(out, strings.Join(a.lines, "\n"))
	b, _ := json.Marshal(resp)
	fmt.Fprintf(out, "response: %s\n", b)
	return resp, nil
}

func main() {
	path := "examples/lambda/testdata/event.json"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambda:", err)
		os.Exit(1)
	}
	defer f.Close()
	if _, err := run(context.Background(), f, os.Stdout, 0); err != nil {
		fmt.Fprintln(os.Stderr, "lambda:", err)
		os.Exit(1)
	}
}
