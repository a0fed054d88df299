package design

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A Design as text: Markdown tables for a README or a design review, and the key
// map as a Mermaid flowchart.

// String returns [Design.Markdown].
func (d *Design) String() string { return d.Markdown() }

// Markdown renders the design as a Markdown document: the key attributes and which
// entities use them, each entity's options and key templates, the access patterns
// (each with its key condition and the call that makes it), notes, and the key map
// as a Mermaid flowchart in a fenced block, which GitHub renders as a picture.
func (d *Design) Markdown() string {
	var b strings.Builder
	b.WriteString("# Table " + code(d.Name) + "\n\n")
	if d.SortKey == "" {
		b.WriteString("Base table key " + keyLabel(d, d.PartitionKey) + " (partition only)")
	} else {
		b.WriteString("Base table keys " + keyLabel(d, d.PartitionKey) + " (partition) and " + keyLabel(d, d.SortKey) + " (sort)")
	}
	b.WriteString("; entity type in " + code(d.TypeAttribute) + "; key parts separated by " + code(string(d.Delimiter)) + ".\n\n")

	users := map[string][]string{} // index -> entity names
	for _, e := range d.Entities {
		for _, k := range e.Keys {
			users[k.Index] = append(users[k.Index], e.Name)
		}
		for _, ix := range e.NativeIndexes {
			users[ix] = append(users[ix], e.Name)
		}
	}
	d.indexTable(&b, users)

	b.WriteString("\n## Entities\n\n")
	if len(d.Entities) == 0 {
		b.WriteString("No entity is registered.\n")
	} else {
		b.WriteString("| entity | " + code(d.TypeAttribute) + " | version | shards | schema |\n|---|---|---|---|---|\n")
		for _, e := range d.Entities {
			shards := "-"
			if e.Shards > 0 {
				shards = strconv.Itoa(e.Shards) + " in " + code("{"+e.ShardAttribute+"}") + ", "
				if len(e.ShardBy) == 0 {
					shards += "random"
				} else {
					shards += "hash of " + codes(e.ShardBy, " + ")
				}
			}
			schema := "-"
			if e.Schema > 0 {
				schema = "v" + strconv.Itoa(e.Schema) + ", write-back " + e.WriteBack
			}
			row(&b, e.Name, code(e.Type), orDash(code(e.Version)), shards, schema)
		}

		fieldRoles(&b, d)
		b.WriteString("\n## Key templates\n\n")
		var attrs []string
		for _, a := range []string{d.PartitionKey, d.SortKey} {
			if a != "" {
				attrs = append(attrs, a)
			}
		}
		for _, ix := range d.Indexes {
			if ix.native() { // no template: the entities' own attributes
				continue
			}
			if !ix.Local {
				attrs = append(attrs, ix.PartitionKey)
			}
			if ix.SortKey != "" {
				attrs = append(attrs, ix.SortKey)
			}
		}
		b.WriteString("| entity |")
		for _, a := range attrs {
			b.WriteString(" " + code(a) + " |")
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(attrs)) + "\n")
		for _, e := range d.Entities {
			cells := []string{e.Name}
			for _, a := range attrs {
				cells = append(cells, orDash(code(templateFor(e, a))))
			}
			row(&b, cells...)
		}
		if len(d.Indexes) > 0 {
			b.WriteString("\nAn index key with an empty input is left out of the item, which is then not in that index (a sparse index).\n")
		}
	}

	if len(d.Patterns) > 0 {
		b.WriteString("\n## Access patterns\n\n| # | entities | index | pattern | key | DynamoDB | call |\n|---|---|---|---|---|---|---|\n")
		for i, p := range d.Patterns {
			row(&b, strconv.Itoa(i+1), strings.Join(p.Entities, ", "), cmp.Or(p.Index, "table"), cell(p.Description), code(p.KeyCondition), p.Operation, codes(strings.Split(p.Call, "; "), "<br>"))
		}
		b.WriteString("\nReads of the base table are strongly consistent with " + code("Consistent()") + ".")
		if len(d.Indexes) > 0 {
			b.WriteString(" Index reads are eventually consistent: " + code("WaitIndexed") + " and " + code("WaitMoved") + " wait until a write shows.")
		}
		b.WriteString("\n")
	}

	d.scansSection(&b)

	if len(d.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range d.Notes {
			b.WriteString("- " + n + "\n")
		}
	}

	b.WriteString("\n## Key map\n\n```mermaid\n")
	b.WriteString(d.Mermaid())
	b.WriteString("```\n")
	return b.String()
}

// Mermaid renders the key map as a Mermaid flowchart: each entity is a node with an
// edge to the base table and to each index it is in, labelled with its key
// templates, as in a hand-drawn single-table key map. An entity missing from an
// index has no edge to it.
func (d *Design) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	baseKeys := d.PartitionKey
	if d.SortKey != "" {
		baseKeys += ", " + d.SortKey
	}
	b.WriteString("  base[(" + mermaidText("table "+d.Name+"\n"+baseKeys) + ")]\n")
	ids := map[string]string{"": "base"}
	for i, ix := range d.Indexes {
		id := "ix" + strconv.Itoa(i+1)
		ids[ix.Name] = id
		keys := ix.PartitionKey
		if ix.SortKey != "" {
			keys += ", " + ix.SortKey
		}
		name := ix.Name
		if ix.Local {
			name += " (local)"
		}
		if ix.native() {
			name += " (native)"
			keys = nativeKeys(ix)
		}
		if ix.Projection != "" && ix.Projection != types.ProjectionTypeAll {
			name += "\n" + string(ix.Projection)
		}
		b.WriteString("  " + id + "[(" + mermaidText(name+"\n"+keys) + ")]\n")
	}
	for i, e := range d.Entities {
		id := "e" + strconv.Itoa(i+1)
		label := e.Name
		if e.Type != e.Name {
			label += " (" + d.TypeAttribute + " " + e.Type + ")"
		}
		var traits []string
		if e.Version != "" {
			traits = append(traits, "versioned")
		}
		if e.Shards > 0 {
			traits = append(traits, strconv.Itoa(e.Shards)+" shards")
		}
		if e.Schema > 0 {
			traits = append(traits, "schema v"+strconv.Itoa(e.Schema))
		}
		if e.TTL != "" {
			traits = append(traits, "TTL "+e.TTL)
		}
		if len(traits) > 0 {
			label += "\n" + strings.Join(traits, ", ")
		}
		b.WriteString("  " + id + "[" + mermaidText(label) + "]\n")
		for _, k := range e.Keys {
			text := k.PartitionKey + " " + k.Partition
			if k.SortKey != "" {
				text += "\n" + k.SortKey + " " + k.Sort
			}
			b.WriteString("  " + id + " -->|" + mermaidText(text) + "| " + ids[k.Index] + "\n")
		}
		for _, name := range e.NativeIndexes {
			if ix, ok := d.index(name); ok {
				b.WriteString("  " + id + " -->|" + mermaidText("stores "+nativeAttrNames(ix)) + "| " + ids[name] + "\n")
			}
		}
	}
	return b.String()
}

// templateFor returns an entity's template for a key attribute, or "".
func templateFor(e Entity, attr string) string {
	for _, k := range e.Keys {
		switch attr {
		case k.PartitionKey:
			return k.Partition
		case k.SortKey:
			return k.Sort
		}
	}
	return ""
}

// row writes one Markdown table row.
func row(b *strings.Builder, cells ...string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
}

// code renders s as a Markdown code span safe inside a table cell; "" stays "".
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// codes renders each of ss as code, joined by sep.
func codes(ss []string, sep string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = code(s)
	}
	return strings.Join(out, sep)
}

// cell makes Markdown text safe inside a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mermaidText quotes a Mermaid label: characters Mermaid would read as syntax or
// as entity codes are written as entity codes, and newlines as <br/>.
func mermaidText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\n':
			b.WriteString("<br/>")
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case ';':
			b.WriteString("#59;")
		case '`':
			b.WriteString("#96;")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fieldRoles writes the fields the library keeps (timestamps, counters, TTL,
// defaults) and the table's TTL attribute, when an entity has any.
func fieldRoles(b *strings.Builder, d *Design) {
	has := false
	for _, e := range d.Entities {
		has = has || e.CreatedAt != "" || e.UpdatedAt != "" || e.Counter != "" || e.TTL != "" || len(e.Defaults) > 0 || len(e.Generated) > 0 || len(e.Unique) > 0
	}
	if !has && d.TTLAttribute == "" {
		return
	}
	b.WriteString("\nFields the library keeps:\n\n| entity | createdAt | updatedAt | counter | ttl | defaults |\n|---|---|---|---|---|---|\n")
	for _, e := range d.Entities {
		ttl := code(e.TTL)
		if e.TTLFrom != "" {
			ttl += " = " + code(e.TTLFrom) + " + " + e.TTLAfter.String()
		}
		row(b, e.Name, orDash(code(e.CreatedAt)), orDash(code(e.UpdatedAt)), orDash(code(e.Counter)), orDash(ttl), orDash(codes(e.Defaults, ", ")))
	}
	for _, e := range d.Entities {
		if len(e.Generated) == 0 {
			continue
		}
		var ids []string
		for _, attr := range slices.Sorted(maps.Keys(e.Generated)) {
			ids = append(ids, code(attr)+" ("+e.Generated[attr]+")")
		}
		b.WriteString("\n" + e.Name + ": the library generates " + strings.Join(ids, ", ") + " when zero; such ids sort by time as text.\n")
	}
	for _, e := range d.Entities {
		if len(e.Unique) == 0 {
			continue
		}
		var cs []string
		for _, c := range e.Unique {
			if len(c) == 1 {
				cs = append(cs, code(c[0])+" (unique)")
			} else {
				cs = append(cs, codes(c, "+")+" (unique together)")
			}
		}
		b.WriteString("\n" + e.Name + ": " + strings.Join(cs, ", ") + "; each value held has a guard item `#singletable#unique#" + e.Type + "#<constraint>#<sha256>`, written in the same transaction as the item (a write that stores or frees a value is a transaction: 2 WCU per 1 KB per action).\n")
	}
	if d.TTLAttribute != "" {
		b.WriteString("\nItems expire by DynamoDB's TTL on " + code(d.TTLAttribute) + " (Unix seconds), once TTL is on for the table (`CreateTable` or `EnableTTL`).\n")
	}
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
func keyLabel(d *Design, attr string) string {
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
func (d *Design) indexTable(b *strings.Builder, users map[string][]string) {
	special := false
	for _, ix := range d.Indexes {
		special = special || ix.Local || (ix.Projection != "" && ix.Projection != types.ProjectionTypeAll)
	}
	if !special {
		b.WriteString("| index | partition key | sort key | entities |\n|---|---|---|---|\n")
		row(b, "table", keyLabel(d, d.PartitionKey), keyLabel(d, d.SortKey), orDash(strings.Join(users[""], ", ")))
		for _, ix := range d.Indexes {
			if ix.native() {
				row(b, ix.Name+" (native)", strings.Join(ix.PartitionAttrs, ", "), orDash(strings.Join(ix.SortAttrs, ", ")), orDash(strings.Join(users[ix.Name], ", ")))
				continue
			}
			row(b, ix.Name, keyLabel(d, ix.PartitionKey), keyLabel(d, ix.SortKey), orDash(strings.Join(users[ix.Name], ", ")))
		}
		return
	}
	b.WriteString("| index | partition key | sort key | projection | entities |\n|---|---|---|---|---|\n")
	row(b, "table", keyLabel(d, d.PartitionKey), keyLabel(d, d.SortKey), "-", orDash(strings.Join(users[""], ", ")))
	for _, ix := range d.Indexes {
		if ix.native() {
			row(b, ix.Name+" (native)", strings.Join(ix.PartitionAttrs, ", "), orDash(strings.Join(ix.SortAttrs, ", ")), projectionLabel(ix), orDash(strings.Join(users[ix.Name], ", ")))
			continue
		}
		row(b, ix.Name, keyLabel(d, ix.PartitionKey), keyLabel(d, ix.SortKey), projectionLabel(ix), orDash(strings.Join(users[ix.Name], ", ")))
	}
}

// scansSection writes the scans, with their cost, and how counts cost.
func (d *Design) scansSection(b *strings.Builder) {
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

// nativeKeys describes a native index's key for the diagram: "HASH tenant S,
// status S" and "RANGE created N" on lines of their own.
// nativeAttrNames lists a native index's key attributes by name: "tenant,
// status, created".
func nativeAttrNames(ix Index) string {
	var names []string
	for _, a := range append(slices.Clone(ix.PartitionAttrs), ix.SortAttrs...) {
		names = append(names, attrOf(a))
	}
	return strings.Join(names, ", ")
}

// attrOf is the name in a native key attribute's text: "tenant" of "tenant S".
func attrOf(text string) string {
	name, _, _ := strings.Cut(text, " ")
	return name
}

func nativeKeys(ix Index) string {
	keys := "HASH " + strings.Join(ix.PartitionAttrs, ", ")
	if len(ix.SortAttrs) > 0 {
		keys += "\nRANGE " + strings.Join(ix.SortAttrs, ", ")
	}
	return keys
}
