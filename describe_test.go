package singletable_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable"
)

// The design's rendering and analysis are tested in package design; these tests
// are of Table.Describe, which builds a design from the registered entities.

// offlineClient is a client that is never called: describing a table sends nothing.
func offlineClient() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1"})
}

// TestDescribeDeterministic registers the same entities in another order and gets
// the same text, however often it asks.
func TestDescribeDeterministic(t *testing.T) {
	type A struct {
		_  struct{} `Type:"A" PK:"P#{id}" SK:"A#{n:04}"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n"`
	}
	type B struct {
		_  struct{} `Type:"B" PK:"P#{id}" SK:"B#{n:04}" GSI1PK:"B#{id}" GSI1SK:"{n:04}"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n"`
	}
	type C struct {
		_  struct{} `Type:"C" PK:"C#{id}" SK:"C"`
		ID string   `dynamodbav:"id"`
	}
	build := func(order string) string {
		table, err := singletable.NewTable(offlineClient(), "det", singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
		require.NoError(t, err)
		for _, c := range order {
			switch c {
			case 'A':
				_, err = singletable.Register[A](table)
			case 'B':
				_, err = singletable.Register[B](table)
			case 'C':
				_, err = singletable.Register[C](table)
			}
			require.NoError(t, err)
		}
		d := table.Describe()
		return d.Markdown() + d.Mermaid()
	}
	want := build("ABC")
	for _, order := range []string{"CBA", "BCA", "ACB"} {
		for range 3 {
			require.Equal(t, want, build(order), order)
		}
	}
}

// TestDescribeConcurrent describes a table while entities are being registered on
// it; run with -race.
func TestDescribeConcurrent(t *testing.T) {
	type E1 struct {
		_  struct{} `Type:"E1" PK:"E1#{id}" SK:"E1"`
		ID string   `dynamodbav:"id"`
	}
	type E2 struct {
		_  struct{} `Type:"E2" PK:"E2#{id}" SK:"E2"`
		ID string   `dynamodbav:"id"`
	}
	table, err := singletable.NewTable(offlineClient(), "busy")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			_ = table.Describe().Markdown()
		}
	}()
	singletable.MustRegister[E1](table)
	singletable.MustRegister[E2](table)
	<-done
	require.Len(t, table.Describe().Entities, 2)
}
