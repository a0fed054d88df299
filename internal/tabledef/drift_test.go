package tabledef

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func ks(pairs ...string) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(pairs[i]), KeyType: types.KeyType(pairs[i+1])})
	}
	return out
}

func TestDrift(t *testing.T) {
	want := &dynamodb.CreateTableInput{
		KeySchema:            ks("PK", "HASH", "SK", "RANGE"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("N"), KeySchema: ks("a", "HASH", "b", "HASH", "c", "RANGE"), Projection: &types.Projection{ProjectionType: "INCLUDE", NonKeyAttributes: []string{"y", "x"}}},
			{IndexName: aws.String("L"), KeySchema: ks("PK", "HASH", "LSK", "RANGE"), Projection: &types.Projection{ProjectionType: "ALL"}},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("LSI"), KeySchema: ks("PK", "HASH", "LSK", "RANGE"), Projection: &types.Projection{ProjectionType: "KEYS_ONLY"}},
		},
	}
	same := &types.TableDescription{
		KeySchema:            ks("PK", "HASH", "SK", "RANGE"),
		AttributeDefinitions: want.AttributeDefinitions,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{
			{IndexName: aws.String("N"), KeySchema: ks("a", "HASH", "b", "HASH", "c", "RANGE"), Projection: &types.Projection{ProjectionType: "INCLUDE", NonKeyAttributes: []string{"x", "y"}}},
			{IndexName: aws.String("L"), KeySchema: ks("PK", "HASH", "LSK", "RANGE"), Projection: nil, IndexStatus: types.IndexStatusCreating},
			{IndexName: aws.String("OLD"), KeySchema: ks("o", "HASH"), IndexStatus: types.IndexStatusDeleting},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndexDescription{
			{IndexName: aws.String("LSI"), KeySchema: ks("PK", "HASH", "LSK", "RANGE"), Projection: &types.Projection{ProjectionType: "KEYS_ONLY"}},
		},
	}
	if d := Drift(want, "exp", Deployed{Table: same, TTL: "exp", TTLKnown: true}); len(d) != 0 {
		t.Errorf("same table: %+v", d)
	}
	if d := Drift(want, "exp", Deployed{Table: same}); len(d) != 0 {
		t.Errorf("TTL unknown is not compared: %+v", d)
	}

	other := *same
	other.KeySchema = ks("PK", "HASH")
	other.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{
		{IndexName: aws.String("N"), KeySchema: ks("b", "HASH", "a", "HASH", "c", "RANGE"), Projection: &types.Projection{ProjectionType: "INCLUDE", NonKeyAttributes: []string{"x"}}},
		{IndexName: aws.String("LSI"), KeySchema: ks("PK", "HASH", "LSK", "RANGE"), Projection: &types.Projection{ProjectionType: "KEYS_ONLY"}},
	}
	other.LocalSecondaryIndexes = nil
	got := Drift(want, "", Deployed{Table: &other, TTL: "exp", TTLKnown: true})
	wantWhat := []string{"key schema", "index L", "index LSI", "index N key schema", "index N projection", "TTL"}
	if len(got) != len(wantWhat) {
		t.Fatalf("got %d differences, want %d: %+v", len(got), len(wantWhat), got)
	}
	for i, d := range got {
		if d.What != wantWhat[i] || d.Fix == "" {
			t.Errorf("difference %d: %+v, want What %q and a fix", i, d, wantWhat[i])
		}
	}
	if got[0].Model != "PK HASH, SK RANGE" || got[0].Table != "PK HASH" {
		t.Errorf("key schema: %+v", got[0])
	}
	if got[2].Model != "local" || got[2].Table != "global" {
		t.Errorf("index kind: %+v", got[2])
	}
	if got[3].Model != "a HASH, b HASH, c RANGE" || got[3].Table != "b HASH, a HASH, c RANGE" {
		t.Errorf("a multi-attribute key's order counts: %+v", got[3])
	}
	if got[4].Model != "INCLUDE x, y" || got[4].Table != "INCLUDE x" {
		t.Errorf("projection: %+v", got[4])
	}
	if got[5].Model != "" || got[5].Table != "exp" {
		t.Errorf("TTL: %+v", got[5])
	}
}
