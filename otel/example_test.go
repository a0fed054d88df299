package otel_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/localtest"
	stotel "github.com/singletable/singletable/otel"
)

// init leaves Example out of the run when there is no DynamoDB Local to run it
// on (and CI is not true), as the root package does with its examples.
func init() {
	if endpoint, _ := localtest.EndpointFrom(os.Getenv); endpoint != "" {
		return
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		return
	}
	testing.Init()
	if skip := flag.Lookup("test.skip"); skip != nil && skip.Value.String() == "" {
		_ = flag.Set("test.skip", "^Example$")
		fmt.Fprintln(os.Stderr, "otel_test: AWS_ENDPOINT_URL is not set: Example is skipped")
	}
}

// Example traces a Put and a Mutate into an in-memory exporter and prints the
// span tree: each API call, a Mutate's attempt, and each DynamoDB call below
// them. In production the tracer provider exports to a collector.
func Example() {
	ctx := context.Background()
	local, err := localtest.Open(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer local.Close()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx)
	tracer, err := stotel.New(stotel.WithTracerProvider(tp)) // and WithMeterProvider for the metrics
	if err != nil {
		panic(err)
	}
	name := fmt.Sprintf("otel-example-%08x", rand.Uint32())
	table, err := singletable.NewTable(local.Client(), name, singletable.WithTracer(tracer))
	if err != nil {
		panic(err)
	}
	if err := table.CreateTable(ctx); err != nil {
		panic(err)
	}
	defer table.DeleteTable(ctx)
	orders := singletable.MustRegister[Order](table)
	spans.Reset() // CreateTable's span

	if _, err := orders.Put(ctx, Order{Customer: "c1", ID: "o1", Total: 10}); err != nil {
		panic(err)
	}
	if _, err := orders.Mutate(ctx, Order{Customer: "c1", ID: "o1"}, func(o *Order) error { o.Total += 5; return nil }); err != nil {
		panic(err)
	}
	printTree(spans.GetSpans(), name)
	// Output:
	// Put Order
	//   UpdateItem TABLE
	// Mutate Order
	//   Mutate attempt
	//     GetItem TABLE
	//     UpdateItem TABLE
}

// printTree prints spanTree.
func printTree(spans tracetest.SpanStubs, table string) { fmt.Print(spanTree(spans, table)) }

// spanTree renders the spans' names as an indented tree, children in the order
// they started, the table's name (when not "") replaced by TABLE.
func spanTree(spans tracetest.SpanStubs, table string) string {
	slices.SortStableFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	var b strings.Builder
	var walk func(parent trace.SpanID, depth int)
	walk = func(parent trace.SpanID, depth int) {
		for _, s := range spans {
			if s.Parent.SpanID() == parent {
				name := s.Name
				if table != "" {
					name = strings.ReplaceAll(name, table, "TABLE")
				}
				b.WriteString(strings.Repeat("  ", depth) + name + "\n")
				walk(s.SpanContext.SpanID(), depth+1)
			}
		}
	}
	walk(trace.SpanID{}, 0)
	return b.String()
}
