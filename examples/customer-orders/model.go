package main

import (
	"fmt"
	"time"

	"github.com/singletable/singletable"
)

// Key map (reference 001): a customer's "A record" and their orders share one
// partition, the item collection CUSTOMER#{customerId}.
//
//	entity    PK                     SK
//	Customer  CUSTOMER#{customerId}  A
//	Order     CUSTOMER#{customerId}  #ORDER#{placedAt:time}#{orderId}
//
// An order's sort key starts with '#' (0x23), which sorts before 'A' (0x41), so
// the partition reads, in sort key order, every order from oldest to newest and
// then the customer:
//
//	#ORDER#2022-01-05T10:00:00.000000000Z#o1001
//	...
//	#ORDER#2023-12-05T10:00:00.000000000Z#o1024
//	A
//
// Read backwards (ScanIndexForward=false) the customer comes first and then the
// orders, newest first: Limit N+1 is the customer and their N most recent
// orders, in one request. {placedAt:time} is a fixed-width UTC time, so keys
// sort as times do; the order id after it keeps two orders placed in the same
// instant apart (the reference uses the date alone as the order id).
//
// The design promises that nothing else in the partition sorts after A: an
// entity added later to the collection must take a sort key below "A" (such as
// "#ADDRESS#..."), or the newest-N read would meet it before the customer.
// There are no secondary indexes: every pattern is a GetItem or a Query on the
// base table.

// Customer is a customer's A record.
type Customer struct {
	_          struct{}  `Type:"Customer" PK:"CUSTOMER#{customerId}" SK:"A"`
	CustomerID string    `dynamodbav:"customerId"`
	Name       string    `dynamodbav:"name"`
	Email      string    `dynamodbav:"email"`
	Since      time.Time `dynamodbav:"since"`
}

// Order is one of a customer's orders, with its lines denormalised into it: an
// order is read whole or not at all. ShipTo is omitempty because DynamoDB
// Local 1.x refuses an empty string in any attribute (the service accepts
// them outside keys since 2020).
type Order struct {
	_          struct{}  `Type:"Order" PK:"CUSTOMER#{customerId}" SK:"#ORDER#{placedAt:time}#{orderId}"`
	CustomerID string    `dynamodbav:"customerId"`
	OrderID    string    `dynamodbav:"orderId"`
	PlacedAt   time.Time `dynamodbav:"placedAt"`
	Status     string    `dynamodbav:"status"`
	ShipTo     string    `dynamodbav:"shipTo,omitempty"`
	Lines      []Line    `dynamodbav:"lines"`
}

// Line is one line of an order.
type Line struct {
	SKU        string `dynamodbav:"sku"`
	Title      string `dynamodbav:"title"`
	Quantity   int    `dynamodbav:"quantity"`
	PriceCents int64  `dynamodbav:"priceCents"`
}

// TotalCents is the sum of the order's lines, in cents.
func (o Order) TotalCents() int64 {
	var n int64
	for _, l := range o.Lines {
		n += l.PriceCents * int64(l.Quantity)
	}
	return n
}

// CustomerOrders is the item collection CUSTOMER#{customerId} decoded by type:
// the A record and the orders, in the order the Query read them. The tags name
// the entity type each field holds, for [singletable.Collection].
type CustomerOrders struct {
	Customer *Customer `singletable:"Customer"`
	Orders   []Order   `singletable:"Order"`
}

// Store is the customer-orders model on one table: the entities and, in
// store.go, one method per access pattern. It is safe for concurrent use.
type Store struct {
	Table     *singletable.Table
	Customers *singletable.Entity[Customer]
	Orders    *singletable.Entity[Order]
	// Collections reads a customer's partition, of both types, into CustomerOrders.
	Collections *singletable.Collection[CustomerOrders]
}

// NewStore describes the table (PK/SK, no indexes) and registers the entities.
// It sends nothing; call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string) (*Store, error) {
	table, err := singletable.NewTable(client, tableName)
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table}
	if s.Customers, err = singletable.Register[Customer](table); err != nil {
		return nil, err
	}
	if s.Orders, err = singletable.Register[Order](table); err != nil {
		return nil, err
	}
	if s.Collections, err = singletable.NewCollection[CustomerOrders](table); err != nil {
		return nil, err
	}
	return s, nil
}

// money formats cents as dollars.
func money(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
