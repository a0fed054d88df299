package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

// counter is a [singletable.Client] that counts the requests sent through it,
// by operation, and the items the Queries read, so that the example can print
// what each step cost. It is safe for concurrent use: QueryShards sends its
// Queries from several goroutines.
type counter struct {
	singletable.Client

	mu sync.Mutex // protects u
	u  usage
}

// usage is what a counter has seen.
type usage struct {
	requests map[string]int // requests by operation
	read     int            // items the Queries read (ScannedCount)
}

func newCounter(c singletable.Client) *counter {
	return &counter{Client: c, u: usage{requests: map[string]int{}}}
}

func (c *counter) add(op string, read int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.u.requests[op]++
	c.u.read += read
}

// snapshot returns the usage so far.
func (c *counter) snapshot() usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return usage{requests: maps.Clone(c.u.requests), read: c.u.read}
}

// since returns the usage since an earlier snapshot.
func (c *counter) since(before usage) usage {
	now := c.snapshot()
	d := usage{requests: map[string]int{}, read: now.read - before.read}
	for op, n := range now.requests {
		if n -= before.requests[op]; n != 0 {
			d.requests[op] = n
		}
	}
	return d
}

// String lists the requests by operation, such as "requests: 1 BatchGetItem,
// 1 GetItem", and the items read by Queries if any.
func (u usage) String() string {
	if len(u.requests) == 0 {
		return "no requests"
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(u.requests)) {
		parts = append(parts, fmt.Sprintf("%d %s", u.requests[op], op))
	}
	s := "requests: " + strings.Join(parts, ", ")
	if u.read > 0 {
		s += fmt.Sprintf("; %d items read", u.read)
	}
	return s
}

func (c *counter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.add("GetItem", 0)
	return c.Client.GetItem(ctx, in, optFns...)
}

func (c *counter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.add("PutItem", 0)
	return c.Client.PutItem(ctx, in, optFns...)
}

func (c *counter) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, optFns...)
	read := 0
	if err == nil {
		read = int(out.ScannedCount)
	}
	c.add("Query", read)
	return out, err
}

func (c *counter) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.add("BatchGetItem", 0)
	return c.Client.BatchGetItem(ctx, in, optFns...)
}

func (c *counter) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.add("BatchWriteItem", 0)
	return c.Client.BatchWriteItem(ctx, in, optFns...)
}
