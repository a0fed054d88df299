package singletable

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchWriteClient answers every write at once and with nothing, without the SDK:
// through it a write's cost is the library's own, its planning and judging.
type benchWriteClient struct{ Client }

func (benchWriteClient) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}

// UpdateItem answers an Update (which asks for ALL_NEW) with an item at the key:
// the key and the type attribute of the entity the key's prefix names, which the
// read path checks (other attributes are left out: the benchmark times the
// library's planning and judging, not decoding). A Put planned as an UpdateItem
// asks for nothing and gets nothing.
func (benchWriteClient) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if in.ReturnValues != types.ReturnValueAllNew {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	item := maps.Clone(in.Key)
	pk, _ := in.Key["PK"].(*types.AttributeValueMemberS)
	typ := "BenchPlain"
	if pk != nil && strings.HasPrefix(pk.Value, "BF#") {
		typ = "BenchFull"
	}
	item["Type"] = &types.AttributeValueMemberS{Value: typ}
	return &dynamodb.UpdateItemOutput{Attributes: item}, nil
}

func (benchWriteClient) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return &dynamodb.DeleteItemOutput{}, nil
}

// benchPlain is unversioned, without timestamps: its Put is a plain PutItem.
type benchPlain struct {
	_      struct{} `Type:"BenchPlain" PK:"BP#{id}" SK:"BP"`
	ID     string   `dynamodbav:"id"`
	Name   string   `dynamodbav:"name"`
	Status string   `dynamodbav:"status"`
	Total  int64    `dynamodbav:"total"`
}

// benchFull is versioned, with timestamps, a default and a counter: its Put is an
// UpdateItem planned by every feature.
type benchFull struct {
	_       struct{}  `Type:"BenchFull" PK:"BF#{id}" SK:"BF"`
	ID      string    `dynamodbav:"id"`
	Name    string    `dynamodbav:"name"`
	Status  string    `dynamodbav:"status" singletable:"default=new"`
	Total   int64     `dynamodbav:"total"`
	Created time.Time `dynamodbav:"created" singletable:"createdAt"`
	Updated time.Time `dynamodbav:"updated" singletable:"updatedAt"`
	Edits   int       `dynamodbav:"edits" singletable:"counter"`
	Version int64     `dynamodbav:"version" singletable:"version"`
}

// BenchmarkWrite times the library's own cost of each write kind (planning,
// sending to a client that answers at once, settling): Put of a plain entity
// (PutItem), Put, Create and Update of an entity with a version, timestamps, a
// default and a counter, and Delete.
func BenchmarkWrite(b *testing.B) {
	tbl, err := NewTable(benchWriteClient{}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	plain := MustRegister[benchPlain](tbl)
	full := MustRegister[benchFull](tbl)
	ctx := context.Background()
	pv := benchPlain{ID: "p1", Name: "plain", Status: "open", Total: 42}
	fv := benchFull{ID: "f1", Name: "full", Total: 42, Version: 3}
	run := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("PutPlain", func() error { _, err := plain.Put(ctx, pv); return err })
	run("PutVersioned", func() error { _, err := full.Put(ctx, fv); return err })
	run("CreateVersioned", func() error { _, err := full.Create(ctx, fv); return err })
	run("UpdateVersioned", func() error {
		_, err := full.Update(ctx, fv, Set("name", "other"), Set("total", 7))
		return err
	})
	run("UpdatePlain", func() error { _, err := plain.Update(ctx, pv, Set("name", "other")); return err })
	run("DeleteVersioned", func() error { return full.Delete(ctx, fv) })
}
