package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/singletable/singletable"
)

type Order struct {
	_          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId" singletable:"generate=ulid"` // a new id on each Put that leaves it empty
	Status     string    `dynamodbav:"status,omitempty"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	Version    int64     `dynamodbav:"version" singletable:"version"`
}

func main() {
	ctx := context.Background()
	cfg := must(config.LoadDefaultConfig(ctx)) // AWS_ENDPOINT_URL, AWS_REGION and keys, as the AWS CLI reads them
	table := must(singletable.NewTable(dynamodb.NewFromConfig(cfg), "app",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK")))
	orders := must(singletable.Register[Order](table)) // checks every tag once
	if err := table.EnsureTable(ctx); err != nil {     // creates the table and GSI1, or checks them
		log.Fatal(err)
	}

	o := must(orders.Put(ctx, Order{CustomerID: "c1", Status: "NEW", CreatedAt: time.Now()}))
	o = must(orders.Get(ctx, Order{CustomerID: "c1", OrderID: o.OrderID})) // only the key's inputs
	o = must(orders.Update(ctx, o, singletable.Set("status", "SHIPPED")))  // GSI1 keys recomputed, version checked
	page := must(orders.Query(ctx, Order{Status: "SHIPPED"}, singletable.On("GSI1"),
		singletable.Descending(), singletable.Limit(20))) // page.Items, page.Cursor
	o = must(orders.Mutate(ctx, o, func(o *Order) error {
		o.Status = "DELIVERED" // read-modify-write, retried on conflict
		return nil
	}))
	fmt.Println(len(page.Items), o.Status, o.Version) // 1 DELIVERED 3
}

// must stops the program on an error.
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
