package main

import (
	"fmt"
	"time"

	"github.com/singletable/singletable"
)

// The table: base keys PK/SK and three global secondary indexes, one per
// access pattern that does not start from a known order id.
const (
	indexByCustomer       = "GSI1" // a customer's orders, newest first
	indexByStatus         = "GSI2" // every order in one status, oldest first
	indexByCustomerStatus = "GSI3" // one customer's orders in one status, newest first
)

// Key map (compare with reference 002, which keeps everything in the customer's
// partition):
//
//	entity      PK                 SK              GSI1 (customer timeline)        GSI2 (status feed)                    GSI3 (customer + status feed)
//	Customer    CUST#{customerId}  PROFILE         -                               -                                     -
//	Order       ORDER#{orderId}    ORDER           CUST#{customerId}               STATUS#{status}                       CUST#{customerId}#STATUS#{status}
//	                                               {createdAt:rev}#{orderId}       {createdAt:time}#{orderId}            {createdAt:time}#{orderId}
//	OrderItem   ORDER#{orderId}    ITEM#{line:04}  -                               -                                     -
//
// An order and its line items share the partition ORDER#{orderId}, so the whole
// aggregate is one Query with no sort key condition, and the line items alone are
// begins_with(SK, "ITEM#"). The reference instead puts orders in the customer's
// partition with SKs ORDER#{orderId} and ORDER#{orderId}#ITEM#{itemId}; its
// aggregate query begins_with(SK, "ORDER#o1") also matches order o10 (the
// library's SKTree avoids that, for designs that nest that way). A partition per
// order also keeps a big customer's history out of one hot partition, and the
// customer's view of their orders is GSI1 anyway. Line items carry no index keys,
// so they never show up in the three order feeds.
//
// {createdAt:rev} is reverse time (reference 004): it sorts newest first in
// ascending order, so the timeline needs no Descending. GSI3 uses plain
// {createdAt:time} and reads it with Descending instead, to show both ways.
//
// Status history (reference 002) adds a fourth entity to the order's partition:
//
//	entity            PK               SK                                              indexes
//	OrderStatusEvent  ORDER#{orderId}  ORDER_STATUS_EVT#{orderId}#V#{orderVersion:08}  -
//
// An order is versioned, and every status change is one transaction that
// updates the order (status, version n -> n+1, its GSI2 and GSI3 keys) on the
// condition that its version is still n, and creates the immutable row
// ORDER_STATUS_EVT#{orderId}#V#{n:08}. The version is zero-padded so that the
// rows sort as numbers; read backwards they are the history, newest first. The
// rows carry no index keys, so they never show up in the order feeds, and the
// order aggregate (a Collection with no field for them) and the line items
// query (begins_with ITEM#) leave them out. The reference keeps the order id in
// the event's sort key because its partition is the customer's; here it is
// redundant but harmless.

// Customer is a customer's profile.
type Customer struct {
	_          struct{} `Type:"Customer" PK:"CUST#{customerId}" SK:"PROFILE"`
	CustomerID string   `dynamodbav:"customerId"`
	Name       string   `dynamodbav:"name"`
	Email      string   `dynamodbav:"email"`
}

// OrderStatus is the life cycle of an order.
type OrderStatus string

// Order statuses.
const (
	StatusPlaced    OrderStatus = "PLACED"
	StatusShipped   OrderStatus = "SHIPPED"
	StatusDelivered OrderStatus = "DELIVERED"
	StatusReturned  OrderStatus = "RETURNED"
	StatusCancelled OrderStatus = "CANCELLED"
)

// Order is the root of an order aggregate. Its status feeds two indexes, so
// changing it moves the order from one status feed to another.
//
// Order is versioned (optimistic locking): it is created at version 1, and a
// change must hold the version stored, which it increments. Read an order
// before changing it: a writer holding an older version is refused with an
// error matching [singletable.ErrConflict].
type Order struct {
	_ struct{} `Type:"Order" PK:"ORDER#{orderId}" SK:"ORDER" GSI1PK:"CUST#{customerId}" GSI1SK:"{createdAt:rev}#{orderId}" GSI2PK:"STATUS#{status}" GSI2SK:"{createdAt:time}#{orderId}" GSI3PK:"CUST#{customerId}#STATUS#{status}" GSI3SK:"{createdAt:time}#{orderId}"`

	OrderID    string      `dynamodbav:"orderId"`
	CustomerID string      `dynamodbav:"customerId"`
	Status     OrderStatus `dynamodbav:"status"`
	CreatedAt  time.Time   `dynamodbav:"createdAt"`
	Version    int64       `dynamodbav:"version" singletable:"version"`
}

// OrderStatusEvent is one status change of an order: an immutable row of its
// history. OrderVersion is the version of the order the change was made on;
// the change took the order to OrderVersion+1. Only one writer can change an
// order from a given version, so the rows' keys never collide, and an order
// changed only through [Store.ChangeOrderStatus] has events 1, 2, 3... in the
// order of its changes. Orders placed in a status other than PLACED start
// without history.
type OrderStatusEvent struct {
	_            struct{}    `Type:"OrderStatusEvent" PK:"ORDER#{orderId}" SK:"ORDER_STATUS_EVT#{orderId}#V#{orderVersion:08}"`
	OrderID      string      `dynamodbav:"orderId"`
	OrderVersion int64       `dynamodbav:"orderVersion"`
	From         OrderStatus `dynamodbav:"from"`
	To           OrderStatus `dynamodbav:"to"`
	At           time.Time   `dynamodbav:"at"`
}

// ItemStatus is the fulfilment status of one line item.
type ItemStatus string

// Item statuses.
const (
	ItemPending ItemStatus = "PENDING"
	ItemShipped ItemStatus = "SHIPPED"
)

// OrderItem is one line of an order. Line numbers are zero-padded in the key
// (ITEM#0001) so that they sort as numbers.
type OrderItem struct {
	_          struct{}   `Type:"OrderItem" PK:"ORDER#{orderId}" SK:"ITEM#{line:04}"`
	OrderID    string     `dynamodbav:"orderId"`
	Line       int        `dynamodbav:"line"`
	SKU        string     `dynamodbav:"sku"`
	Quantity   int        `dynamodbav:"quantity"`
	PriceCents int64      `dynamodbav:"priceCents"`
	Status     ItemStatus `dynamodbav:"itemStatus"`
}

// Subtotal is the line's price times its quantity, in cents.
func (it OrderItem) Subtotal() int64 { return it.PriceCents * int64(it.Quantity) }

// OrderWithItems is the order aggregate: the root and its line items in line
// order. The tags name the entity type each field holds, for
// [singletable.Collection], which decodes the rows of one Query into it.
type OrderWithItems struct {
	Order Order       `singletable:"Order"`
	Items []OrderItem `singletable:"OrderItem"`
}

// Total is the sum of the line items, in cents.
func (a OrderWithItems) Total() int64 {
	var n int64
	for _, it := range a.Items {
		n += it.Subtotal()
	}
	return n
}

// Store is the commerce model on one table: the entities and, in store.go, one
// method per access pattern. It is safe for concurrent use.
type Store struct {
	Table     *singletable.Table
	Customers *singletable.Entity[Customer]
	Orders    *singletable.Entity[Order]
	Items     *singletable.Entity[OrderItem]
	Events    *singletable.Entity[OrderStatusEvent]
	// Aggregates reads an order's partition (its root and line items; the
	// status events are left out) into OrderWithItems.
	Aggregates *singletable.Collection[OrderWithItems]
	// Now dates status changes; NewStore sets time.Now in UTC. Set it before
	// the Store is used.
	Now func() time.Time
}

// NewStore describes the table and registers the entities. It sends nothing;
// call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string) (*Store, error) {
	table, err := singletable.NewTable(client, tableName,
		singletable.WithIndex(indexByCustomer, "GSI1PK", "GSI1SK"),
		singletable.WithIndex(indexByStatus, "GSI2PK", "GSI2SK"),
		singletable.WithIndex(indexByCustomerStatus, "GSI3PK", "GSI3SK"),
	)
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table, Now: func() time.Time { return time.Now().UTC() }}
	if s.Customers, err = singletable.Register[Customer](table); err != nil {
		return nil, err
	}
	if s.Orders, err = singletable.Register[Order](table); err != nil {
		return nil, err
	}
	if s.Items, err = singletable.Register[OrderItem](table); err != nil {
		return nil, err
	}
	if s.Events, err = singletable.Register[OrderStatusEvent](table); err != nil {
		return nil, err
	}
	if s.Aggregates, err = singletable.NewCollection[OrderWithItems](table); err != nil {
		return nil, err
	}
	return s, nil
}

// money formats cents as dollars.
func money(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
