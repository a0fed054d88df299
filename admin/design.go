package admin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/design"
)

// describe prints the design (Table.Describe) as text, Markdown, a Mermaid key
// map or JSON. It sends nothing.
func (c *cli) describe(args []string) int {
	f := c.newFlags("describe [--format text|markdown|mermaid|json]",
		"Prints the table's design from the model: entities, key templates, indexes, the access\npatterns the templates serve with their key conditions and costs, and notes. Sends nothing.")
	format := f.String("format", "text", "text, markdown, mermaid (the key map) or json")
	if _, code, done := f.parse(args, 0); done {
		return code
	}
	d := c.t.Describe()
	if f.json {
		*format = "json"
	}
	switch *format {
	case "text":
		fmt.Fprint(c.io.Out, designText(d))
	case "markdown", "md":
		fmt.Fprint(c.io.Out, d.Markdown())
	case "mermaid":
		fmt.Fprint(c.io.Out, d.Mermaid())
	case "json":
		if err := c.writeJSONIndent(d); err != nil {
			return c.fail(err)
		}
	default:
		return f.usageErr("--format %q: want text, markdown, mermaid or json", *format)
	}
	return ExitOK
}

// designText renders a design as plain text for a terminal: the table, each
// entity with its keys and options, the access patterns with their costs, the
// notes. (describe --format markdown is the design package's full rendering.)
func designText(d *design.Design) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s: partition key %s", d.Name, d.PartitionKey)
	if d.SortKey != "" {
		fmt.Fprintf(&b, ", sort key %s", d.SortKey)
	}
	fmt.Fprintf(&b, ", type attribute %s\n", d.TypeAttribute)
	for _, ix := range d.Indexes {
		kind := "global"
		if ix.Local {
			kind = "local"
		}
		proj := string(ix.Projection)
		if proj == "" {
			proj = "ALL"
		}
		fmt.Fprintf(&b, "  index %s (%s): %s", ix.Name, kind, ix.PartitionKey)
		if ix.SortKey != "" {
			fmt.Fprintf(&b, ", %s", ix.SortKey)
		}
		fmt.Fprintf(&b, "; projection %s\n", proj)
	}
	b.WriteString("\nentities:\n")
	for _, e := range d.Entities {
		fmt.Fprintf(&b, "  %s (type %s)\n", e.Name, e.Type)
		for _, k := range e.Keys {
			where := "table"
			if k.Index != "" {
				where = k.Index
			}
			fmt.Fprintf(&b, "    %-6s %s = %s", where, k.PartitionKey, k.Partition)
			if k.SortKey != "" {
				fmt.Fprintf(&b, "  %s = %s", k.SortKey, k.Sort)
			}
			b.WriteString("\n")
		}
		var opts []string
		if e.Version != "" {
			opts = append(opts, "versioned ("+e.Version+")")
		}
		if e.Schema > 0 {
			opts = append(opts, fmt.Sprintf("schema v%d, write-back %s", e.Schema, e.WriteBack))
		}
		if e.Shards > 0 {
			opts = append(opts, fmt.Sprintf("%d shards", e.Shards))
		}
		for _, u := range e.Unique {
			opts = append(opts, "unique "+strings.Join(u, "+"))
		}
		if e.CreatedAt != "" {
			opts = append(opts, "createdAt "+e.CreatedAt)
		}
		if e.UpdatedAt != "" {
			opts = append(opts, "updatedAt "+e.UpdatedAt)
		}
		if e.TTL != "" {
			opts = append(opts, "ttl "+e.TTL)
		}
		if len(opts) > 0 {
			fmt.Fprintf(&b, "    %s\n", strings.Join(opts, "; "))
		}
	}
	b.WriteString("\naccess patterns:\n")
	for _, p := range append(append([]design.AccessPattern{}, d.Patterns...), d.Scans...) {
		on := "table"
		if p.Index != "" {
			on = p.Index
		}
		fmt.Fprintf(&b, "  %s: %s on %s", strings.Join(p.Entities, ", "), p.Operation, on)
		if p.KeyCondition != "" {
			fmt.Fprintf(&b, " where %s", p.KeyCondition)
		}
		fmt.Fprintf(&b, "\n    %s\n    call: %s\n    cost: %s\n", strings.ReplaceAll(p.Description, "`", ""), p.Call, strings.ReplaceAll(p.Cost, "`", ""))
	}
	if len(d.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "  - %s\n", strings.ReplaceAll(n, "`", ""))
		}
	}
	return b.String()
}

// tableEdits are the flags for what the model does not say about the table
// (definition and drift take the same).
type tableEdits struct {
	stream             *string
	deletionProtection *bool
}

func addTableEdits(f *flags) *tableEdits {
	return &tableEdits{
		stream:             f.String("stream", "", "the table has a stream of this view: NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES or KEYS_ONLY"),
		deletionProtection: f.Bool("deletion-protection", false, "the table has deletion protection"),
	}
}

func (e *tableEdits) edits() ([]func(*dynamodb.CreateTableInput), error) {
	var out []func(*dynamodb.CreateTableInput)
	if *e.stream != "" {
		view := types.StreamViewType(*e.stream)
		ok := false
		for _, v := range view.Values() {
			ok = ok || v == view
		}
		if !ok {
			return nil, usagef("--stream %q: want one of %v", *e.stream, view.Values())
		}
		out = append(out, singletable.StreamView(view))
	}
	if *e.deletionProtection {
		out = append(out, singletable.DeletionProtection())
	}
	return out, nil
}

// definition prints the table's definition (Table.Definition).
func (c *cli) definition(args []string) int {
	f := c.newFlags("definition --format cloudformation|cloudformation-yaml|terraform|json",
		"Prints the table as infrastructure as code, from the model: a CloudFormation AWS::DynamoDB::Table\nresource (JSON, which NoSQL Workbench imports, or YAML), a Terraform aws_dynamodb_table\nresource, or the CreateTable request as JSON. Sends nothing.")
	format := f.String("format", "cloudformation", "cloudformation, cloudformation-yaml, terraform or json")
	edits := addTableEdits(f)
	if _, code, done := f.parse(args, 0); done {
		return code
	}
	ed, err := edits.edits()
	if err != nil {
		return c.fail(err)
	}
	def, err := c.t.Definition(ed...)
	if err != nil {
		return c.fail(err)
	}
	if f.json {
		*format = "json"
	}
	var out []byte
	switch *format {
	case "cloudformation", "cloudformation-json":
		out, err = def.CloudFormationJSON()
	case "cloudformation-yaml", "yaml":
		out, err = def.CloudFormationYAML()
	case "terraform":
		out, err = def.Terraform()
	case "json":
		err = c.writeJSONIndent(def.Input)
	default:
		return f.usageErr("--format %q: want cloudformation, cloudformation-yaml, terraform or json", *format)
	}
	if err != nil {
		return c.fail(err)
	}
	if len(out) > 0 {
		if !strings.HasSuffix(string(out), "\n") {
			out = append(out, '\n')
		}
		_, _ = c.io.Out.Write(out)
	}
	return ExitOK
}

// driftJSON is one difference, as --json writes it.
type driftJSON struct {
	What  string `json:"what"`
	Model string `json:"model"`
	Table string `json:"table"`
	Fix   string `json:"fix"`
}

// drift compares the deployed table with the model (Table.Drift).
func (c *cli) drift(args []string) int {
	f := c.newFlags("drift [--stream VIEW] [--deletion-protection] [--json]",
		"Compares the deployed table (DescribeTable, DescribeTimeToLive) with the model: key schema and\nkey types, each index's kind, keys and projection, the stream and TTL. Prints each difference\nand its fix; exit code 1 when there is any. Cost: two describe calls (no capacity).")
	edits := addTableEdits(f)
	if _, code, done := f.parse(args, 0); done {
		return code
	}
	ed, err := edits.edits()
	if err != nil {
		return c.fail(err)
	}
	diffs, err := c.t.Drift(c.ctx, ed...)
	if err != nil {
		return c.fail(err)
	}
	return c.reportDrift(f, diffs)
}

// reportDrift prints the differences drift and ensure found; exit code 1 when
// there is any.
func (c *cli) reportDrift(f *flags, diffs []singletable.Difference) int {
	if f.json {
		out := make([]driftJSON, 0, len(diffs))
		for _, d := range diffs {
			out = append(out, driftJSON{What: d.What, Model: d.Model, Table: d.Table, Fix: d.Fix})
		}
		if err := c.writeJSONIndent(out); err != nil {
			return c.fail(err)
		}
	} else if len(diffs) == 0 {
		fmt.Fprintf(c.io.Out, "table %s agrees with the model\n", c.t.Name())
	} else {
		ways := "ways"
		if len(diffs) == 1 {
			ways = "way"
		}
		fmt.Fprintf(c.io.Out, "table %s differs from the model in %d %s:\n", c.t.Name(), len(diffs), ways)
		for _, d := range diffs {
			fmt.Fprintf(c.io.Out, "  %s\n", d.String())
		}
	}
	if len(diffs) > 0 {
		return ExitFound
	}
	return ExitOK
}

// ensure creates the table when it is missing (Table.EnsureTable), else
// compares it with the model as drift does.
func (c *cli) ensure(args []string) int {
	f := c.newFlags("ensure [--stream VIEW] [--deletion-protection] [--yes] [--dry-run] [--json]",
		"Creates the table when it does not exist, as the model says (key schema, indexes and their\n"+
			"projections, the stream of the edits), waits until it is ACTIVE and turns its TTL on\n"+
			"(Table.EnsureTable). When it exists nothing is changed: it is compared with the model as\n"+
			"drift does, exit code 1 on any difference. Asks before creating unless --yes; --dry-run\n"+
			"says what it would do and sends nothing. Cost: describe calls; a table created on demand\n"+
			"billing costs nothing until it is used.")
	edits := addTableEdits(f)
	f.writer()
	if _, code, done := f.parse(args, 0); done {
		return code
	}
	ed, err := edits.edits()
	if err != nil {
		return c.fail(err)
	}
	diffs, err := c.t.Drift(c.ctx, ed...)
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		if err != nil {
			return c.fail(err)
		}
		return c.reportDrift(f, diffs)
	}
	if *f.dry {
		fmt.Fprintf(c.io.Out, "table %s does not exist: ensure would create it as the model says (definition --format json shows the request)\n", c.t.Name())
		return ExitOK
	}
	if !c.confirm(*f.yes, fmt.Sprintf("create table %s?", c.t.Name())) {
		return ExitDeclined
	}
	if err := c.t.EnsureTable(c.ctx, ed...); err != nil {
		return c.fail(err)
	}
	if f.json {
		if err := c.writeJSONIndent(map[string]any{"table": c.t.Name(), "created": true}); err != nil {
			return c.fail(err)
		}
	} else {
		fmt.Fprintf(c.io.Out, "created table %s as the model says\n", c.t.Name())
	}
	return ExitOK
}
