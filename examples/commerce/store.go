package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/singletable/singletable"
)

// One method per access pattern of reference 002. Reads on the indexes (the
// timeline and the status feeds) are eventually consistent on real DynamoDB: a
// write shows there a moment later (DynamoDB Local shows it at once). Where a
// caller must see its own write, wait for it with the entity's WaitIndexed,
// WaitUnindexed or WaitMoved, as run does after a status change.

// ---- Customers ----

// CreateCustomer creates a customer's profile unless one exists (a conditional
// PutItem: no read before the write, so two concurrent sign-ups cannot both
// win). created is false when the profile existed; that is not an error, and the
// existing profile is left as it was.
func (s *Store) CreateCustomer(ctx context.Context, c Customer) (created bool, err error) {
	_, err = s.Customers.Create(ctx, c)
	switch {
	case errors.Is(err, singletable.ErrAlreadyExists):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// GetCustomer reads a profile by customer id (GetItem).
func (s *Store) GetCustomer(ctx context.Context, customerID string) (Customer, error) {
	return s.Customers.Get(ctx, Customer{CustomerID: customerID})
}

// ---- Orders: writes ----

// PlaceOrder creates an order and its line items in one transaction
// (TransactWriteItems of conditional puts): all rows are written, or, if any of
// them exists already, none is. Lines are numbered from 1 in the order given;
// empty statuses become PLACED and PENDING. The order is created at version 1
// (o's Version is ignored). It returns what was stored; o and items are not
// modified. A transaction holds at most 100 rows (25 on DynamoDB Local 1.x), so
// at most 99 (24) line items.
func (s *Store) PlaceOrder(ctx context.Context, o Order, items []OrderItem) (OrderWithItems, error) {
	if o.Status == "" {
		o.Status = StatusPlaced
	}
	agg := OrderWithItems{Order: o, Items: make([]OrderItem, len(items))}
	tx := make([]singletable.TxItem, 0, 1+len(items))
	tx = append(tx, s.Orders.TxCreate(o))
	for i, it := range items {
		it.OrderID, it.Line = o.OrderID, i+1
		if it.Status == "" {
			it.Status = ItemPending
		}
		agg.Items[i] = it
		tx = append(tx, s.Items.TxCreate(it))
	}
	if err := s.Table.Transact(ctx, tx...); err != nil {
		return OrderWithItems{}, err
	}
	agg.Order.Version = 1 // a create stores version 1; Transact returns nothing
	return agg, nil
}

// ChangeOrderStatus moves the order o, as read at version n, from its status
// o.Status to status to, and records the change in its history, in one
// transaction (TransactWriteItems, 2 WCU per KB per row):
//
//   - an Update of the order: status = to, version = n+1, and its GSI2 and GSI3
//     keys recomputed, on the condition that its version is still n. The index
//     keys' other inputs (customer id, creation time) come from o, which is why
//     this takes the order as read rather than its id;
//   - a Create of the immutable row ORDER_STATUS_EVT#{orderId}#V#{n:08}, an
//     [OrderStatusEvent] from o.Status to to, dated by s.Now.
//
// Both happen or neither does. The order leaves the feeds of its old status
// and joins those of the new one. It returns the order as now stored (o with
// the new status and version n+1; o itself is not modified).
//
// A writer whose copy is stale (the order was changed since it was read) is
// refused with a [*singletable.TxError] that matches [singletable.ErrConflict]:
// the reason for the Update carries a [*singletable.ConflictError] with the
// version held and the version found. Nothing is written: no history row
// either. Read the order again and decide again.
func (s *Store) ChangeOrderStatus(ctx context.Context, o Order, to OrderStatus) (Order, error) {
	evt := OrderStatusEvent{OrderID: o.OrderID, OrderVersion: o.Version, From: o.Status, To: to, At: s.Now()}
	err := s.Table.Transact(ctx,
		s.Orders.TxUpdate(o, singletable.Set("status", to)),
		s.Events.TxCreate(evt),
	)
	if err != nil {
		return Order{}, err
	}
	o.Status = to
	o.Version++ // the version check passed, so o was the stored order
	return o, nil
}

// OrderHistory lists an order's status changes, newest first: Query
// PK = ORDER#{orderId} AND begins_with(SK, "ORDER_STATUS_EVT#{orderId}#V#")
// with ScanIndexForward=false, every page. The prefix is rendered from a partly
// filled OrderStatusEvent: its template stops at the first missing input, the
// version.
func (s *Store) OrderHistory(ctx context.Context, orderID string) ([]OrderStatusEvent, error) {
	events := []OrderStatusEvent{}
	for e, err := range s.Events.All(ctx, OrderStatusEvent{OrderID: orderID},
		singletable.SKBeginsWith(OrderStatusEvent{OrderID: orderID}), singletable.Descending()) {
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, nil
}

// ChangeItemStatus sets the fulfilment status of one line item (UpdateItem on
// that row only), for an order shipped in parts.
func (s *Store) ChangeItemStatus(ctx context.Context, orderID string, line int, to ItemStatus) (OrderItem, error) {
	return s.Items.Update(ctx, OrderItem{OrderID: orderID, Line: line}, singletable.Set("itemStatus", to))
}

// DeleteItem deletes one line item by its key (DeleteItem). Deleting a missing
// line succeeds.
func (s *Store) DeleteItem(ctx context.Context, orderID string, line int) error {
	return s.Items.Delete(ctx, OrderItem{OrderID: orderID, Line: line})
}

// ---- Orders: point reads and the order partition ----

// GetOrder reads an order's root by its id (GetItem).
func (s *Store) GetOrder(ctx context.Context, orderID string) (Order, error) {
	return s.Orders.Get(ctx, Order{OrderID: orderID})
}

// GetItem reads one line item by order id and line number (GetItem).
func (s *Store) GetItem(ctx context.Context, orderID string, line int) (OrderItem, error) {
	return s.Items.Get(ctx, OrderItem{OrderID: orderID, Line: line})
}

// OrderItems lists an order's line items in line order: Query PK = ORDER#{orderId}
// AND begins_with(SK, "ITEM#"). With no sort key condition given, the library
// limits a query to the literal prefix of the entity's sort key template, ITEM#,
// so the order root is not even read. All follows the pages.
func (s *Store) OrderItems(ctx context.Context, orderID string) ([]OrderItem, error) {
	var items []OrderItem
	for it, err := range s.Items.All(ctx, OrderItem{OrderID: orderID}) {
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// OrderAggregate reads an order and its line items with one Query on the
// partition ORDER#{orderId} (more only if the partition exceeds a 1 MB page),
// decoding each row by its type attribute into OrderWithItems. A missing order
// matches [singletable.ErrNotFound].
func (s *Store) OrderAggregate(ctx context.Context, orderID string) (OrderWithItems, error) {
	agg, err := s.Aggregates.Load(ctx, Order{OrderID: orderID})
	if err != nil {
		return OrderWithItems{}, err
	}
	if agg.Order.OrderID == "" {
		return OrderWithItems{}, fmt.Errorf("order aggregate %s: %w", orderID, singletable.ErrNotFound)
	}
	return agg, nil
}

// ---- Orders: feeds on the indexes ----

// CustomerTimeline reads one page of a customer's orders, newest first, from
// GSI1 (GSI1PK = CUST#{customerId}, sorted by {createdAt:rev}). Pass "" as
// cursor for the first page, then the page's Cursor until it is "".
func (s *Store) CustomerTimeline(ctx context.Context, customerID string, limit int, cursor string) (singletable.Page[Order], error) {
	return s.Orders.Query(ctx, Order{CustomerID: customerID},
		singletable.On(indexByCustomer), singletable.Limit(limit), singletable.After(cursor))
}

// OrdersByStatus reads one page of all customers' orders in one status, oldest
// first (a work queue), from GSI2 (GSI2PK = STATUS#{status}).
func (s *Store) OrdersByStatus(ctx context.Context, status OrderStatus, limit int, cursor string) (singletable.Page[Order], error) {
	return s.Orders.Query(ctx, Order{Status: status},
		singletable.On(indexByStatus), singletable.Limit(limit), singletable.After(cursor))
}

// CustomerOrdersByStatus reads one page of one customer's orders in one status,
// newest first, from GSI3 (GSI3PK = CUST#{customerId}#STATUS#{status}).
func (s *Store) CustomerOrdersByStatus(ctx context.Context, customerID string, status OrderStatus, limit int, cursor string) (singletable.Page[Order], error) {
	return s.Orders.Query(ctx, Order{CustomerID: customerID, Status: status},
		singletable.On(indexByCustomerStatus), singletable.Descending(), singletable.Limit(limit), singletable.After(cursor))
}
