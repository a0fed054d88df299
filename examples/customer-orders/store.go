package main

import (
	"context"
	"fmt"

	"github.com/singletable/singletable"
)

// One method per access pattern of reference 001. Every read is one request
// (GetItem or Query) on the base table, eventually consistent: 0.5 RCU per
// 4 KB read.

// CreateCustomer creates a customer's A record unless one exists (a
// conditional PutItem); if one does, the error matches
// [singletable.ErrAlreadyExists].
func (s *Store) CreateCustomer(ctx context.Context, c Customer) error {
	_, err := s.Customers.Create(ctx, c)
	return err
}

// PlaceOrder creates an order in its customer's partition unless an order with
// the same key exists (a conditional PutItem). It does not check that the
// customer exists: an order written for an unknown customer is an order without
// an A record, which the reads below report as not found.
func (s *Store) PlaceOrder(ctx context.Context, o Order) error {
	_, err := s.Orders.Create(ctx, o)
	return err
}

// GetCustomer reads a customer by id: GetItem PK = CUSTOMER#{id}, SK = A.
// A missing customer matches [singletable.ErrNotFound].
func (s *Store) GetCustomer(ctx context.Context, customerID string) (Customer, error) {
	return s.Customers.Get(ctx, Customer{CustomerID: customerID})
}

// CustomerWithOrders reads a customer and all their orders, oldest first, with
// one Query on PK = CUSTOMER#{id} and no sort key condition (more requests only
// if the partition exceeds a 1 MB page), each row decoded by its Type into
// CustomerOrders. A partition without an A record matches
// [singletable.ErrNotFound].
func (s *Store) CustomerWithOrders(ctx context.Context, customerID string) (CustomerOrders, error) {
	co, err := s.Collections.Load(ctx, Customer{CustomerID: customerID})
	if err != nil {
		return CustomerOrders{}, err
	}
	if co.Customer == nil {
		return CustomerOrders{}, fmt.Errorf("customer %s: %w", customerID, singletable.ErrNotFound)
	}
	return co, nil
}

// CustomerWithRecentOrders reads a customer and their n most recent orders,
// newest first, in one request: Query PK = CUSTOMER#{id} with
// ScanIndexForward=false and Limit n+1. Read backwards, the partition starts
// with the A record (SK "A" sorts after every "#ORDER#..."), then the orders
// from the newest. The page's Capacity is the read capacity the Query consumed
// (ReturnConsumedCapacity=TOTAL), and its Cursor, when not "", continues with
// older orders (give it to [Store.OlderOrders]). A partition without an A
// record matches [singletable.ErrNotFound]. n may be 0: the customer alone.
func (s *Store) CustomerWithRecentOrders(ctx context.Context, customerID string, n int) (singletable.CollectionPage[CustomerOrders], error) {
	if n < 0 {
		return singletable.CollectionPage[CustomerOrders]{}, fmt.Errorf("customer %s: %d recent orders: %w", customerID, n, singletable.ErrInvalidInput)
	}
	page, err := s.Collections.Query(ctx, Customer{CustomerID: customerID},
		singletable.Descending(), singletable.Limit(n+1), singletable.ReturnCapacity())
	if err != nil {
		return page, err
	}
	if page.Value.Customer == nil {
		return singletable.CollectionPage[CustomerOrders]{}, fmt.Errorf("customer %s: %w", customerID, singletable.ErrNotFound)
	}
	return page, nil
}

// OlderOrders continues [Store.CustomerWithRecentOrders] after its page, n
// orders at a time, newest first: the same Query, resumed after cursor. The
// library checks that the cursor came from that query.
func (s *Store) OlderOrders(ctx context.Context, customerID string, n int, cursor string) (singletable.CollectionPage[CustomerOrders], error) {
	return s.Collections.Query(ctx, Customer{CustomerID: customerID},
		singletable.Descending(), singletable.Limit(n), singletable.After(cursor), singletable.ReturnCapacity())
}

// OrdersOf reads one page of a customer's orders alone, oldest first: Query
// PK = CUSTOMER#{id} AND begins_with(SK, "#ORDER#"). With no sort key
// condition given, the library keeps an entity query to the literal prefix of
// its sort key template, so the A record is not even read. The page's Capacity
// is the read capacity the Query consumed. Pass "" as cursor for the first
// page, then the page's Cursor until it is "".
func (s *Store) OrdersOf(ctx context.Context, customerID string, limit int, cursor string) (singletable.Page[Order], error) {
	return s.Orders.Query(ctx, Order{CustomerID: customerID},
		singletable.Limit(limit), singletable.After(cursor), singletable.ReturnCapacity())
}
