package dynamolocal_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/singletable/singletable/dynamolocal"
)

// Start one DynamoDB Local, use it, and stop it. In a test package, use a
// [dynamolocal.Shared] instead, as the package documentation shows.
func Example() {
	ctx := context.Background()
	local, err := dynamolocal.Start(ctx) // AWS_ENDPOINT_URL, else Testcontainers, else the jar
	if err != nil {
		fmt.Println(err)
		return
	}
	defer local.Close()

	client := local.Client()
	out, err := client.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(local.Backend(), local.Endpoint(), out.TableNames)
}

// A test package's whole set-up: one DynamoDB Local for the test binary,
// started by the first test that asks for it, here with options.
func ExampleShared() {
	// At package level in a _test.go file:
	local := dynamolocal.Shared{Options: []func(*dynamolocal.Options){
		dynamolocal.WithBackend(dynamolocal.BackendJar), // never Docker
		dynamolocal.WithLogf(func(string, ...any) {}),   // quiet
	}}

	// func TestMain(m *testing.M) { os.Exit(local.Run(m)) }
	//
	// func TestSomething(t *testing.T) {
	//	client := local.Client(t) // skipped, or failed under CI=true, when none can be had
	//	table := dynamolocal.TableName(t)
	//	...
	// }
	_ = &local
}

// Start DynamoDB Local 3.3.1 on port 8000 and read a table's stream with a
// Streams client that shares the instance's connections.
func ExampleInstance_StreamsClient() {
	ctx := context.Background()
	local, err := dynamolocal.Start(ctx, dynamolocal.WithVersion(dynamolocal.DefaultVersion), dynamolocal.WithPort(8000))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer local.Close() // closes the connections of both clients too

	streams := local.StreamsClient()
	out, err := streams.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(local.Version(), len(out.Streams))
}
