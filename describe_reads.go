package singletable

import (
	"cmp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The reads Describe adds beyond gets and queries: scans, counts, and what index
// projections and local indexes make of a read; and the cost of every pattern.

// scanPattern is the scan of one entity's items: every item of the table read.
func scanPattern(info *entityInfo) AccessPattern {
	return AccessPattern{
		Entities:     []string{info.name},
		Description:  "scan the whole table for " + info.name + " items (a filter on the type attribute); in parallel with `Segments(n), Segment(i)`",
		KeyCondition: "",
		Operation:    "Scan",
		Call:         "Scan(); ScanAll(); ScanCount()",
	}
}

// tableScanPattern is the scan of every item, decoded by type.
func tableScanPattern(infos []*entityInfo) AccessPattern {
	names := make([]string, len(infos))
	for i, info := range infos {
		names[i] = info.name
	}
	return AccessPattern{
		Entities:    names,
		Description: "scan every item of the table, each decoded by its type; in parallel with `Segments(n), Segment(i)`",
		Operation:   "Scan",
		Call:        "Table.Scan(); Table.ScanAll(); Table.ScanCount()",
	}
}

// countCall is the Count call of a query pattern: its first call with Count for
// Query ("Count(k, On(...))", "Table.Count(k)").
func countCall(call string) string {
	first, _, _ := strings.Cut(call, "; ")
	name, args, ok := strings.Cut(first, "(")
	if !ok || !strings.HasSuffix(name, "Query") {
		return "Count"
	}
	return "`" + strings.TrimSuffix(name, "Query") + "Count(" + args + "`"
}

// patternCost says what a pattern's read costs.
func (t *Table) patternCost(p AccessPattern) string {
	ix, _ := t.index(p.Index)
	var cost string
	switch {
	case p.Operation == "GetItem":
		cost = "1 read: 0.5 RCU per 4 KB of the item, 1 consistent"
	case p.Operation == "Scan":
		return "every item of the table, of every type: 0.5 RCU per 4 KB of the whole table (1 consistent), whatever it returns; filters save none"
	case ix.Name == "" || ix.Local:
		cost = "0.5 RCU per 4 KB of the items read, 1 consistent; " + countCall(p.Call) + " counts them (Select COUNT) at the same cost"
	default:
		cost = "0.5 RCU per 4 KB of the items read, eventually consistent; " + countCall(p.Call) + " counts them (Select COUNT) at the same cost"
	}
	if strings.HasPrefix(p.Operation, "Query per shard") {
		cost = "one Query per shard; " + cost
	}
	if ix.Name != "" && !ix.projectsAll() {
		cost += "; partial: the index projects " + t.projectionText(ix)
	}
	return cost
}

// projectionNotes point out indexes whose reads are partial, and what local
// indexes limit.
func (t *Table) projectionNotes(infos []*entityInfo) []string {
	var notes []string
	for _, ix := range t.opts.Indexes {
		if ix.Local {
			notes = append(notes, "Index "+ix.Name+" is local: it shares the table's partitions, can be read consistently, and limits each partition key value to 10 GB of items.")
		}
		if ix.projectsAll() {
			continue
		}
		for _, info := range infos {
			if _, in := info.indexes[ix.Name]; !in || t.covers(ix, info) {
				continue
			}
			var missing []string
			for _, f := range info.plan.Fields() {
				if !t.indexHolds(ix, f.Name) {
					missing = append(missing, "`"+f.Name+"`")
				}
			}
			notes = append(notes, "Reads of "+info.name+" through "+ix.Name+" ("+t.projectionText(ix)+") are partial: without "+andList(missing)+
				"; Page.Partial says so, iterators refuse them (use Project), and nothing read through it is written back.")
		}
	}
	return notes
}

// designIndexes are the table's indexes as a design shows them: an INCLUDE
// list with the attributes CreateTable adds.
func (t *Table) designIndexes() []Index {
	out := slices.Clone(t.opts.Indexes)
	for i := range out {
		out[i].NonKeyAttributes = t.included(out[i])
	}
	return out
}

// keyTypeText names a key attribute's type for the design, "" for a string.
func keyTypeText(kinds map[string]types.ScalarAttributeType, attr string) string {
	switch kinds[attr] {
	case "N":
		return "number"
	case "B":
		return "binary"
	}
	return ""
}

// keyLabel is a key attribute in Markdown, with its type when not a string:
// "`acct` (number)".
func keyLabel(d Design, attr string) string {
	if attr == "" {
		return "-"
	}
	if k := keyTypeText(d.KeyTypes, attr); k != "" {
		return code(attr) + " (" + k + ")"
	}
	return code(attr)
}

// projectionLabel describes an index's projection in Markdown.
func projectionLabel(ix Index) string {
	p := string(ix.Projection)
	if p == "" {
		p = "ALL"
	}
	if len(ix.NonKeyAttributes) > 0 {
		p += " " + codes(ix.NonKeyAttributes, ", ")
	}
	if ix.Local {
		return "local, " + p
	}
	return "global, " + p
}

// indexTable writes the table of key attributes and indexes: with a projection
// column when an index is local or does not project every attribute.
func (d Design) indexTable(b *strings.Builder, users map[string][]string) {
	special := false
	for _, ix := range d.Indexes {
		special = special || ix.Local || (ix.Projection != "" && ix.Projection != types.ProjectionTypeAll)
	}
	if !special {
		b.WriteString("| index | partition key | sort key | entities |\n|---|---|---|---|\n")
		row(b, "table", keyLabel(d, d.PartitionKey), keyLabel(d, d.SortKey), orDash(strings.Join(users[""], ", ")))
		for _, ix := range d.Indexes {
			row(b, ix.Name, keyLabel(d, ix.PartitionKey), keyLabel(d, ix.SortKey), orDash(strings.Join(users[ix.Name], ", ")))
		}
		return
	}
	b.WriteString("| index | partition key | sort key | projection | entities |\n|---|---|---|---|---|\n")
	row(b, "table", keyLabel(d, d.PartitionKey), keyLabel(d, d.SortKey), "-", orDash(strings.Join(users[""], ", ")))
	for _, ix := range d.Indexes {
		row(b, ix.Name, keyLabel(d, ix.PartitionKey), keyLabel(d, ix.SortKey), projectionLabel(ix), orDash(strings.Join(users[ix.Name], ", ")))
	}
}

// scansSection writes the scans, with their cost, and how counts cost.
func (d Design) scansSection(b *strings.Builder) {
	if len(d.Scans) == 0 {
		return
	}
	b.WriteString("\n## Scans and counts\n\n| entities | index | pattern | DynamoDB | call | cost |\n|---|---|---|---|---|---|\n")
	for _, p := range d.Scans {
		row(b, strings.Join(p.Entities, ", "), cmp.Or(p.Index, "table"), cell(p.Description), p.Operation, codes(strings.Split(p.Call, "; "), "<br>"), cell(p.Cost))
	}
	b.WriteString("\nEvery query above can be counted instead (" + code("Count(k, ...)") + ", " + code("Table.Count(k, ...)") +
		": Select COUNT, every page, no item returned or decoded) at the cost of reading its items: 0.5 RCU per 4 KB read, 1 consistent.\n")
}
