package main

import (
	"context"
	"maps"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// meter is a [singletable.Client] that counts the read requests sent through
// it and adds up the read capacity DynamoDB reports for them. The library
// reports capacity only for the queries that return a page
// ([singletable.ReturnCapacity], then Page.Capacity or CollectionPage.Capacity):
// Entity.Get takes no such option and Collection.Load returns no page. So the
// meter asks for it (ReturnConsumedCapacity=TOTAL, on a copy of the input) on
// every GetItem and Query that does not ask already, and adds up what the
// responses carry. A meter is safe for concurrent use.
type meter struct {
	singletable.Client

	mu    sync.Mutex // protects usage
	usage usage
}

// usage is what a meter has seen.
type usage struct {
	Requests map[string]int // read requests by operation
	Capacity float64        // read capacity units reported
	Reports  int            // responses that carried ConsumedCapacity
}

// Sub returns the usage since an earlier snapshot.
func (u usage) Sub(before usage) usage {
	d := usage{Requests: map[string]int{}, Capacity: u.Capacity - before.Capacity, Reports: u.Reports - before.Reports}
	for op, n := range u.Requests {
		if n -= before.Requests[op]; n != 0 {
			d.Requests[op] = n
		}
	}
	return d
}

func newMeter(c singletable.Client) *meter {
	return &meter{Client: c, usage: usage{Requests: map[string]int{}}}
}

// Snapshot returns the usage so far.
func (m *meter) Snapshot() usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage
	u.Requests = maps.Clone(u.Requests)
	return u
}

func (m *meter) record(op string, cc *types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage.Requests[op]++
	if cc != nil && cc.CapacityUnits != nil {
		m.usage.Capacity += *cc.CapacityUnits
		m.usage.Reports++
	}
}

// askCapacity returns TOTAL unless r already asks for capacity.
func askCapacity(r types.ReturnConsumedCapacity) types.ReturnConsumedCapacity {
	if r == "" || r == types.ReturnConsumedCapacityNone {
		return types.ReturnConsumedCapacityTotal
	}
	return r
}

// GetItem sends in, asking for the consumed capacity, and records it. in is
// not modified.
func (m *meter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	cp := *in
	cp.ReturnConsumedCapacity = askCapacity(cp.ReturnConsumedCapacity)
	out, err := m.Client.GetItem(ctx, &cp, optFns...)
	var cc *types.ConsumedCapacity
	if err == nil {
		cc = out.ConsumedCapacity
	}
	m.record("GetItem", cc)
	return out, err
}

// Query sends in, asking for the consumed capacity, and records it. in is not
// modified.
func (m *meter) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	cp := *in
	cp.ReturnConsumedCapacity = askCapacity(cp.ReturnConsumedCapacity)
	out, err := m.Client.Query(ctx, &cp, optFns...)
	var cc *types.ConsumedCapacity
	if err == nil {
		cc = out.ConsumedCapacity
	}
	m.record("Query", cc)
	return out, err
}
