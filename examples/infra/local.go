package main

// Connecting to DynamoDB Local, with the public AWS SDK only: copy this file
// along with the example. On AWS, make the clients from the SDK's
// configuration instead (github.com/aws/aws-sdk-go-v2/config):
//
//	cfg, err := config.LoadDefaultConfig(ctx)
//	client := dynamodb.NewFromConfig(cfg)

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// localClient is a DynamoDB client for the DynamoDB Local at endpoint, which
// takes any region and keys.
func localClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}
