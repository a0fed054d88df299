package singletable_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

// Explain shows the requests a call would send, for a code review or a test,
// and sends nothing: the client here is never called. A Put of a customer, then a page of
// the orders of a status, newest first.
func ExampleExplain() {
	table, err := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "app",
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
	if err != nil {
		fmt.Println(err)
		return
	}
	customers := singletable.MustRegister[Customer](table)
	orders := singletable.MustRegister[Order](table)
	x, err := singletable.Explain(context.Background(), func(ctx context.Context) error {
		if _, err := customers.Put(ctx, Customer{CustomerID: "c1", Name: "Ada"}); err != nil {
			return err
		}
		_, err := orders.Query(ctx, Order{Status: "PLACED"}, singletable.On("GSI1"), singletable.Limit(20), singletable.Descending())
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(x)
	// A page of 20 items of 2 KB: 40 KB, 10 blocks of 4 KB, eventually consistent.
	fmt.Println(x.Requests[1].Cost(2000).ReadUnits)
	// Output:
	// 1. PutItem app (Customer)
	//    key:           PK = "CUST#c1", SK = "PROFILE" (6 attributes, 56 bytes)
	//    condition:     attribute_not_exists(#n0) OR #n1 = :v0
	//                   = attribute_not_exists(PK) OR Type = "Customer"
	//    cost:          1 WCU (1 WCU per KB of each item; a Put's from its item, and from what each index holding it projects, more if it replaces a larger item)
	//    input:         {"ConditionExpression":"attribute_not_exists(#n0) OR #n1 = :v0","ExpressionAttributeNames":{"#n0":"PK","#n1":"Type"},"ExpressionAttributeValues":{":v0":{"S":"Customer"}},"Item":{"PK":{"S":"CUST#c1"},"SK":{"S":"PROFILE"},"Type":{"S":"Customer"},"customerId":{"S":"c1"},"name":{"S":"Ada"},"orders":{"N":"0"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD","TableName":"app"}
	// 2. Query app (Order)
	//    index:         GSI1
	//    key condition: #n0 = :v0
	//                   = GSI1PK = "STATUS#PLACED"
	//    options:       descending, limit 20
	//    cost:          2.5 RCU (a page: 0.5 RCU per 4 KB (eventually consistent) of the items read, summed; at most Limit 20 × items of up to 1 KB, filters do not lower it; each further page costs again)
	//    input:         {"ExpressionAttributeNames":{"#n0":"GSI1PK"},"ExpressionAttributeValues":{":v0":{"S":"STATUS#PLACED"}},"IndexName":"GSI1","KeyConditionExpression":"#n0 = :v0","Limit":20,"ScanIndexForward":false,"TableName":"app"}
	// total: 2 requests, 1 WCU + 2.5 RCU
	// 5
}
