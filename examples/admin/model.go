package main

import (
	"errors"
	"time"

	"github.com/singletable/singletable"
)

// A commerce model: customers (a unique email), versioned orders in two
// indexes (a customer's orders newest first, the orders in one status oldest
// first) with a schema history, and the orders' line items, validated.
//
//	entity     PK                 SK              GSI1                            GSI2
//	Customer   CUST#{customerId}  PROFILE         -                               -
//	Order      ORDER#{orderId}    ORDER           CUST#{customerId}               STATUS#{status}
//	                                              {createdAt:rev}#{orderId}       {createdAt:time}#{orderId}
//	OrderItem  ORDER#{orderId}    ITEM#{line:04}  -                               -

// Customer is a customer's profile; no two customers share an email.
type Customer struct {
	_          struct{}  `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
	CustomerID string    `dynamodbav:"customerId"`
	Name       string    `dynamodbav:"name"`
	Email      string    `dynamodbav:"email" singletable:"unique"`
	CreatedAt  time.Time `dynamodbav:"createdAt" singletable:"createdAt"`
	Version    int64     `dynamodbav:"version" singletable:"version"`
}

// Order is an order. Schema 2 added the currency: orders written before it
// (schema 1) were in euros.
type Order struct {
	_          struct{}  `Type:"Order" PK:"ORDER#{orderId}" SK:"ORDER" GSI1PK:"CUST#{customerId}" GSI1SK:"{createdAt:rev}#{orderId}" GSI2PK:"STATUS#{status}" GSI2SK:"{createdAt:time}#{orderId}"`
	OrderID    string    `dynamodbav:"orderId"`
	CustomerID string    `dynamodbav:"customerId"`
	Status     string    `dynamodbav:"status"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	TotalCents int64     `dynamodbav:"totalCents"`
	Currency   string    `dynamodbav:"currency,omitempty"`
	Version    int64     `dynamodbav:"version" singletable:"version"`
}

// OrderItem is one line of an order.
type OrderItem struct {
	_          struct{} `Type:"OrderItem" PK:"ORDER#{orderId}" SK:"ITEM#{line:04}"`
	OrderID    string   `dynamodbav:"orderId"`
	Line       int      `dynamodbav:"line"`
	SKU        string   `dynamodbav:"sku"`
	Quantity   int      `dynamodbav:"quantity"`
	PriceCents int64    `dynamodbav:"priceCents"`
}

// Validate refuses a line without a product or a positive quantity.
func (i OrderItem) Validate() error {
	switch {
	case i.SKU == "":
		return errors.New("sku is empty")
	case i.Quantity <= 0:
		return errors.New("quantity must be positive")
	}
	return nil
}

// orderHistory is Order's schema history: schema 1 to 2 sets the currency.
var orderHistory = singletable.Migration[Order]{
	Steps: []singletable.Step[Order]{{Typed: func(o *Order) error {
		if o.Currency == "" {
			o.Currency = "EUR"
		}
		return nil
	}}},
}

// NewTable is the commerce table on client, named name, with its entities
// registered: what the application uses, and what its admin command operates.
func NewTable(client singletable.Client, name string) (*singletable.Table, error) {
	return newTable(client, name, true)
}

// newTable is NewTable; without migrations (withHistory false) it is the
// application before schema 2, which writes orders at schema 1.
func newTable(client singletable.Client, name string, withHistory bool) (*singletable.Table, error) {
	t, err := singletable.NewTable(client, name,
		singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"),
		singletable.WithIndex("GSI2", "GSI2PK", "GSI2SK"))
	if err != nil {
		return nil, err
	}
	var orderOpts []singletable.RegisterOption
	if withHistory {
		orderOpts = append(orderOpts, singletable.Migrations(orderHistory))
	}
	if _, err := singletable.Register[Customer](t); err != nil {
		return nil, err
	}
	if _, err := singletable.Register[Order](t, orderOpts...); err != nil {
		return nil, err
	}
	if _, err := singletable.Register[OrderItem](t); err != nil {
		return nil, err
	}
	return t, nil
}
