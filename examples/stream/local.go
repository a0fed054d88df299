package main

// Connecting to DynamoDB Local, with the public AWS SDK only: copy this file
// along with the example. On AWS, make the clients from the SDK's
// configuration instead (github.com/aws/aws-sdk-go-v2/config):
//
//	cfg, err := config.LoadDefaultConfig(ctx)
//	client := dynamodb.NewFromConfig(cfg)
//	streams := dynamodbstreams.NewFromConfig(cfg)

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// runLocal runs body against the DynamoDB Local at DYNAMODB_ENDPOINT (`make
// examples` sets it; without it the error says how to get one), on a table of
// the example's own, "singletable-NAME-xxxxxxxx", with a context that ends on
// Ctrl-C or after five minutes.
func runLocal(name string, body func(ctx context.Context, endpoint, tableName string) error) error {
	endpoint := strings.TrimSpace(os.Getenv("DYNAMODB_ENDPOINT"))
	if endpoint == "" {
		return errors.New("DYNAMODB_ENDPOINT is not set: `make examples` starts a DynamoDB Local and runs every example with it; " +
			"or start one with `make dynamodb-local-serve` (port 8000) and set DYNAMODB_ENDPOINT=http://127.0.0.1:8000")
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return body(ctx, endpoint, fmt.Sprintf("singletable-%s-%08x", name, rand.Uint32()))
}

// localClient is a DynamoDB client for the DynamoDB Local at endpoint, which
// takes any region and keys.
func localClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}

// localStreamsClient is a DynamoDB Streams client for the same DynamoDB Local,
// which serves both APIs at one endpoint.
func localStreamsClient(endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}
