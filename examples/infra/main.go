// Command infra keeps one design in one place: the Go model. From the entities
// registered on a table it writes the table's infrastructure definitions, a
// CloudFormation AWS::DynamoDB::Table template (JSON, which NoSQL Workbench
// imports, and YAML) and a Terraform aws_dynamodb_table resource, with the
// design document beside them. Then it deploys the CloudFormation template to
// DynamoDB Local, as a stack would create the table, and checks the deployed
// table against the model, as a CI job would check a real one for drift.
//
// Run it with
//
//	go run ./examples/infra              # print the definitions, deploy and check
//	go run ./examples/infra -out infra/  # write shop.cfn.json, shop.cfn.yaml, shop.tf, shop.md
//
// The definitions need no database. The deployment needs DYNAMODB_ENDPOINT
// naming a DynamoDB Local (`make examples` starts one and runs every example
// with it set); without it, the example says so and stops after the
// definitions. It creates a table of its own and deletes it when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// Order, Customer and Session are the model: customers and their orders in one
// partition, orders by status newest first on GSI1 (projecting what a status
// page shows), and sessions that DynamoDB's TTL deletes when they expire.
type Customer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
}

type Order struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:rev}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	Status     string    `dynamodbav:"status"`
	Total      int64     `dynamodbav:"total"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Version    int64     `dynamodbav:"version" singletable:"version"`
}

type Session struct {
	_          struct{} `Type:"Session" PK:"CUST#{customerId}" SK:"SESSION#{sessionId}"`
	CustomerID string   `dynamodbav:"customerId"`
	SessionID  string   `dynamodbav:"sessionId"`
	ExpiresAt  int64    `dynamodbav:"expiresAt" singletable:"ttl"`
}

// NewTable describes the table of the model on client; opts add to it.
func NewTable(client singletable.Client, name string, opts ...singletable.TableOption) (*singletable.Table, error) {
	opts = append([]singletable.TableOption{singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK", singletable.ProjectInclude("status", "total", "createdAt"))}, opts...)
	table, err := singletable.NewTable(client, name, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := singletable.Register[Customer](table); err != nil {
		return nil, err
	}
	if _, err := singletable.Register[Order](table); err != nil {
		return nil, err
	}
	if _, err := singletable.Register[Session](table); err != nil {
		return nil, err
	}
	return table, nil
}

// edits are what the model does not say: the stream the order pipeline reads,
// and the tags. In production add singletable.DeletionProtection() (it is left
// out here so that the example can delete its table) and, for provisioned
// capacity, singletable.Provisioned(read, write).
func edits() []func(*dynamodb.CreateTableInput) {
	return []func(*dynamodb.CreateTableInput){
		singletable.StreamView(types.StreamViewTypeNewAndOldImages),
		singletable.Tags(map[string]string{"app": "shop", "owner": "orders-team"}),
	}
}

func main() {
	out := flag.String("out", "", "write the definitions and the design into this directory instead of printing them")
	flag.Parse()
	if err := start(*out); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

// start writes the definitions, then deploys and checks them on the DynamoDB
// Local at DYNAMODB_ENDPOINT.
func start(dir string) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	files, err := definitions()
	if err != nil {
		return err
	}
	if err := write(files, dir, os.Stdout); err != nil {
		return err
	}
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		fmt.Println("\nDYNAMODB_ENDPOINT is not set: no deployment to DynamoDB Local (`make examples` starts one).")
		return nil
	}
	endpoint := strings.TrimSpace(os.Getenv("DYNAMODB_ENDPOINT"))
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	tableName := fmt.Sprintf("singletable-infra-%08x", rand.Uint32())
	return deploy(ctx, localClient(endpoint), files["shop.cfn.json"], tableName, os.Stdout) // on AWS: dynamodb.NewFromConfig(cfg)
}

// definitions renders the shop table's definitions and design, by file name.
func definitions() (map[string][]byte, error) {
	// Rendering calls nothing: any client does.
	table, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "shop")
	if err != nil {
		return nil, err
	}
	def, err := table.Definition(edits()...)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"shop.md": []byte(table.Describe().Markdown())}
	for name, render := range map[string]func() ([]byte, error){
		"shop.cfn.json": def.CloudFormationJSON, "shop.cfn.yaml": def.CloudFormationYAML, "shop.tf": def.Terraform,
	} {
		if files[name], err = render(); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// write writes the files into dir, or, without one, prints the Terraform
// resource and says what the others hold.
func write(files map[string][]byte, dir string, w io.Writer) error {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, name := range []string{"shop.cfn.json", "shop.cfn.yaml", "shop.tf", "shop.md"} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, files[name], 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s (%d lines)\n", path, strings.Count(string(files[name]), "\n"))
		}
		return nil
	}
	fmt.Fprintf(w, "== shop.tf (Terraform)\n%s\n", files["shop.tf"])
	for _, name := range []string{"shop.cfn.json", "shop.cfn.yaml", "shop.md"} {
		fmt.Fprintf(w, "== %s: %d lines (-out DIR writes it)\n", name, strings.Count(string(files[name]), "\n"))
	}
	return nil
}
