package tabledef

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Diff is one way a deployed table differs from the request that would create
// it: What names the part ("key schema", "attribute PK", "index GSI1",
// "index GSI1 projection", "stream", "TTL"), Model and Table say what each has
// ("" when it has none), and Fix says what would make them agree.
type Diff struct {
	What, Model, Table, Fix string
}

// Deployed is what DescribeTable and DescribeTimeToLive say of a table: TTL is
// the attribute whose TTL is ENABLED or ENABLING ("" for none), and TTLKnown is
// false when DescribeTimeToLive could not be asked.
type Deployed struct {
	Table    *types.TableDescription
	TTL      string
	TTLKnown bool
}

// Drift lists how the deployed table d differs from want (the request the model
// would create the table with) and wantTTL (the model's TTL attribute), in a
// fixed order: the table's key schema, the key attributes' types, the indexes by
// name (kind, key schema, projection), the stream, the TTL. Billing mode and
// capacity are left out: they are the table's operation, not the model. An index
// being deleted counts as gone. Every difference is named, both ways: what the
// model has and the table lacks, and what the table has and the model lacks (what
// deploying the model's definition would remove).
func Drift(want *dynamodb.CreateTableInput, wantTTL string, d Deployed) []Diff {
	got := d.Table
	var out []Diff
	if w, g := keySchemaText(want.KeySchema), keySchemaText(got.KeySchema); w != g {
		out = append(out, Diff{What: "key schema", Model: w, Table: g,
			Fix: "a table's key schema cannot change: create a new table with Table.EnsureTable (or CreateTable) under another name and copy the items, or change the model's keys (WithKeys, WithKeyType) to the table's"})
	}
	gotTypes := map[string]types.ScalarAttributeType{}
	for _, a := range got.AttributeDefinitions {
		gotTypes[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	for _, a := range want.AttributeDefinitions {
		name := aws.ToString(a.AttributeName)
		if g, ok := gotTypes[name]; ok && g != a.AttributeType {
			out = append(out, Diff{What: "attribute " + name, Model: "type " + string(a.AttributeType), Table: "type " + string(g),
				Fix: "a key attribute's type cannot change while an index or the table uses it: change the model's key type (WithKeyType) or rebuild what uses " + name})
		}
	}
	wantIx, gotIx := indexesOf(want), deployedIndexes(got)
	names := make([]string, 0, len(wantIx)+len(gotIx))
	for n := range wantIx {
		names = append(names, n)
	}
	for n := range gotIx {
		if _, ok := wantIx[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w, inModel := wantIx[n]
		g, inTable := gotIx[n]
		switch {
		case !inTable:
			fix := "add it with the UpdateTable request of Table.CreateIndexInput(" + `"` + n + `"` + ") and wait for it to become ACTIVE"
			if w.local {
				fix = "a local index can only be created with its table: create a new table, or drop the index from the model"
			}
			out = append(out, Diff{What: "index " + n, Model: w.text(), Fix: fix})
		case !inModel:
			fix := "delete it with UpdateTable (GlobalSecondaryIndexUpdates Delete), or declare it in the model (WithIndex, WithNativeIndex)"
			if g.local {
				fix = "a local index can only be removed with its table; declare it in the model (WithLocalIndex)"
			}
			out = append(out, Diff{What: "index " + n, Table: g.text(), Fix: fix})
		case w.local != g.local:
			out = append(out, Diff{What: "index " + n, Model: w.kind(), Table: g.kind(),
				Fix: "declare it in the model as the table has it, or rebuild the table"})
		default:
			if w.keys != g.keys {
				out = append(out, Diff{What: "index " + n + " key schema", Model: w.keys, Table: g.keys,
					Fix: "an index's key schema cannot change: delete the index and add it again (Table.CreateIndexInput), or change the model's index to the table's"})
			}
			if w.projection != g.projection {
				out = append(out, Diff{What: "index " + n + " projection", Model: w.projection, Table: g.projection,
					Fix: "an index's projection cannot change: delete the index and add it again (Table.CreateIndexInput), or change the model's projection (ProjectAll, ProjectKeysOnly, ProjectInclude) to the table's"})
			}
		}
	}
	if w, g := streamText(want.StreamSpecification), streamText(got.StreamSpecification); w != g {
		out = append(out, Diff{What: "stream", Model: w, Table: g,
			Fix: "set it with UpdateTable (StreamSpecification; a stream's view type changes by disabling it, then enabling it), or give the model's edits the table's (EnableStream, StreamView)"})
	}
	if d.TTLKnown && wantTTL != d.TTL {
		fix := "turn it on with Table.EnableTTL"
		switch {
		case wantTTL == "":
			fix = "turn it off with UpdateTimeToLive, or tag the attribute's field singletable:\"ttl\" (or WithTTLAttribute)"
		case d.TTL != "":
			fix = "turn the table's off with UpdateTimeToLive, wait, then turn the model's on with Table.EnableTTL (DynamoDB allows one change an hour)"
		}
		out = append(out, Diff{What: "TTL", Model: wantTTL, Table: d.TTL, Fix: fix})
	}
	return out
}

// ixFacts is what the drift check compares of an index.
type ixFacts struct {
	local            bool
	keys, projection string
}

func (f ixFacts) kind() string {
	if f.local {
		return "local"
	}
	return "global"
}

func (f ixFacts) text() string { return f.kind() + " index: " + f.keys + "; " + f.projection }

// factsOf is what the drift check compares of an index with this key schema
// and projection.
func factsOf(local bool, ks []types.KeySchemaElement, p *types.Projection) ixFacts {
	return ixFacts{local: local, keys: keySchemaText(ks), projection: projectionText(p)}
}

func indexesOf(in *dynamodb.CreateTableInput) map[string]ixFacts {
	m := map[string]ixFacts{}
	for _, ix := range in.GlobalSecondaryIndexes {
		m[aws.ToString(ix.IndexName)] = factsOf(false, ix.KeySchema, ix.Projection)
	}
	for _, ix := range in.LocalSecondaryIndexes {
		m[aws.ToString(ix.IndexName)] = factsOf(true, ix.KeySchema, ix.Projection)
	}
	return m
}

func deployedIndexes(td *types.TableDescription) map[string]ixFacts {
	m := map[string]ixFacts{}
	for _, ix := range td.GlobalSecondaryIndexes {
		if ix.IndexStatus == types.IndexStatusDeleting {
			continue
		}
		m[aws.ToString(ix.IndexName)] = factsOf(false, ix.KeySchema, ix.Projection)
	}
	for _, ix := range td.LocalSecondaryIndexes {
		m[aws.ToString(ix.IndexName)] = factsOf(true, ix.KeySchema, ix.Projection)
	}
	return m
}

// projectionText is a projection as "ALL", "KEYS_ONLY" or "INCLUDE a, b" (the
// attributes sorted: their order means nothing).
func projectionText(p *types.Projection) string {
	if p == nil {
		return "ALL"
	}
	t := string(p.ProjectionType)
	if t == "" {
		t = "ALL"
	}
	if p.ProjectionType == types.ProjectionTypeInclude {
		attrs := slices.Clone(p.NonKeyAttributes)
		slices.Sort(attrs)
		t += " " + strings.Join(attrs, ", ")
	}
	return t
}

// streamText is a stream as its view type, "" when there is none.
func streamText(s *types.StreamSpecification) string {
	if s == nil || !aws.ToBool(s.StreamEnabled) {
		return ""
	}
	return string(s.StreamViewType)
}
