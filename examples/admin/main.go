// Command admin is the commerce model's admin command: the package admin
// (github.com/singletable/singletable/admin) turns the table the
// application registers into subcommands (describe, definition, drift, get,
// query, scan, put, delete, migrate, unique, explain). Build it as the
// application's own cmd/tableadmin:
//
//	go build -o tableadmin .
//	AWS_PROFILE=prod COMMERCE_TABLE=commerce ./tableadmin drift
//	./tableadmin get Order --key orderId=o1
//	./tableadmin migrate run --segments 8 --rate 200
//
// The client comes from the AWS SDK's standard configuration, as the AWS
// CLI's does: credentials and region from the environment or a profile, the
// endpoint from AWS_ENDPOINT_URL (DynamoDB Local: AWS_ENDPOINT_URL=http://127.0.0.1:8000).
// See docs/operations.md for a session of each subcommand.
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable/admin"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	table, err := NewTable(dynamodb.NewFromConfig(cfg), tableName())
	if err != nil {
		log.Fatal(err)
	}
	admin.Main(table)
}

// tableName is COMMERCE_TABLE, by default "commerce".
func tableName() string {
	if name := os.Getenv("COMMERCE_TABLE"); name != "" {
		return name
	}
	return "commerce"
}
