package design_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// A reader of the HCL the Terraform renderer writes: bodies of attributes
// (strings, numbers, bools, lists of strings, objects) and labelled blocks. It
// knows HCL, not the renderer, so what it reads back is what Terraform would.

// hclBlock is a block: its type, labels, attributes and nested blocks in order.
type hclBlock struct {
	Type   string
	Labels []string
	Attrs  map[string]any // string, int64, bool, []string or map[string]string
	Blocks []*hclBlock
}

// all returns the nested blocks of a type.
func (b *hclBlock) all(typ string) []*hclBlock {
	var out []*hclBlock
	for _, c := range b.Blocks {
		if c.Type == typ {
			out = append(out, c)
		}
	}
	return out
}

type hclParser struct {
	t    *testing.T
	src  string
	pos  int
	line int
}

func parseHCL(t *testing.T, src []byte) *hclBlock {
	t.Helper()
	p := &hclParser{t: t, src: string(src), line: 1}
	root := &hclBlock{Attrs: map[string]any{}}
	p.body(root, true)
	return root
}

func (p *hclParser) fail(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("HCL line %d: "+format, append([]any{p.line}, args...)...)
}

// skip passes spaces; newlines too when nl.
func (p *hclParser) skip(nl bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '\n' && nl {
			p.line++
		} else if c != ' ' && c != '\t' && c != '\r' {
			return
		}
		p.pos++
	}
}

func (p *hclParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *hclParser) expect(c byte) {
	p.t.Helper()
	p.skip(false)
	if p.peek() != c {
		p.fail("want %q, got %q", c, p.peek())
	}
	p.pos++
}

func (p *hclParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) {
		r := rune(p.src[p.pos])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			break
		}
		p.pos++
	}
	if start == p.pos {
		p.fail("want a name, got %q", p.peek())
	}
	return p.src[start:p.pos]
}

// body reads attributes and blocks up to "}" (or the end, at top level).
func (p *hclParser) body(b *hclBlock, top bool) {
	for {
		p.skip(true)
		switch c := p.peek(); {
		case c == 0:
			if !top {
				p.fail("unexpected end")
			}
			return
		case c == '}' && !top:
			p.pos++
			return
		}
		name := p.ident()
		p.skip(false)
		if p.peek() == '=' {
			p.pos++
			if _, dup := b.Attrs[name]; dup {
				p.fail("attribute %s twice", name)
			}
			b.Attrs[name] = p.value()
			p.skip(false)
			if c := p.peek(); c != '\n' && c != 0 {
				p.fail("want a new line after %s, got %q", name, c)
			}
			continue
		}
		nb := &hclBlock{Type: name, Attrs: map[string]any{}}
		for p.skip(false); p.peek() == '"'; p.skip(false) {
			nb.Labels = append(nb.Labels, p.str())
		}
		p.expect('{')
		p.body(nb, false)
		b.Blocks = append(b.Blocks, nb)
	}
}

func (p *hclParser) value() any {
	p.skip(false)
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '[':
		p.pos++
		var out []string
		for {
			p.skip(true)
			if p.peek() == ']' {
				p.pos++
				return out
			}
			out = append(out, p.str())
			p.skip(true)
			if p.peek() == ',' {
				p.pos++
			}
		}
	case c == '{':
		p.pos++
		out := map[string]string{}
		for {
			p.skip(true)
			if p.peek() == '}' {
				p.pos++
				return out
			}
			var key string
			if p.peek() == '"' {
				key = p.str()
			} else {
				key = p.ident()
			}
			p.expect('=')
			p.skip(false)
			out[key] = p.str()
		}
	case '0' <= c && c <= '9':
		start := p.pos
		for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
		require.NoError(p.t, err)
		return n
	default:
		switch word := p.ident(); word {
		case "true", "false":
			return word == "true"
		default:
			p.fail("unexpected %q (only literals are written)", word)
		}
	}
	return nil
}

// str reads a quoted string: escapes decoded, $${ and %%{ read as ${ and %{.
func (p *hclParser) str() string {
	p.expect('"')
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			p.fail("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String()
		case c == '\n':
			p.fail("a new line in a string")
		case c == '\\':
			esc := p.src[p.pos+1]
			p.pos += 2
			switch esc {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '"', '\\':
				b.WriteByte(esc)
			case 'u':
				r, err := strconv.ParseUint(p.src[p.pos:p.pos+4], 16, 32)
				require.NoError(p.t, err)
				b.WriteRune(rune(r))
				p.pos += 4
			default:
				p.fail("unknown escape \\%c", esc)
			}
		case (c == '$' || c == '%') && strings.HasPrefix(p.src[p.pos+1:], "{"):
			p.fail("an unescaped template sequence %c{ in a literal", c)
		case (c == '$' || c == '%') && strings.HasPrefix(p.src[p.pos+1:], string(c)+"{"):
			b.WriteByte(c)
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// fromTerraform reads the aws_dynamodb_table resource back into a CreateTable
// request and its TTL attribute, as the AWS provider maps the arguments.
func fromTerraform(t *testing.T, hcl []byte) (*dynamodb.CreateTableInput, string) {
	t.Helper()
	root := parseHCL(t, hcl)
	require.Len(t, root.Blocks, 1)
	r := root.Blocks[0]
	require.Equal(t, "resource", r.Type)
	require.Len(t, r.Labels, 2)
	require.Equal(t, "aws_dynamodb_table", r.Labels[0])
	str := func(b *hclBlock, k string) string { s, _ := b.Attrs[k].(string); return s }
	throughput := func(b *hclBlock) *types.ProvisionedThroughput {
		if _, ok := b.Attrs["read_capacity"]; !ok {
			return nil
		}
		return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(b.Attrs["read_capacity"].(int64)), WriteCapacityUnits: aws.Int64(b.Attrs["write_capacity"].(int64))}
	}
	keys := func(hash, rng string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
		if rng != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	projection := func(b *hclBlock) *types.Projection {
		p := &types.Projection{ProjectionType: types.ProjectionType(str(b, "projection_type"))}
		if attrs, ok := b.Attrs["non_key_attributes"].([]string); ok {
			p.NonKeyAttributes = attrs
		}
		return p
	}
	in := &dynamodb.CreateTableInput{
		TableName:             aws.String(str(r, "name")),
		BillingMode:           types.BillingMode(str(r, "billing_mode")),
		ProvisionedThroughput: throughput(r),
		TableClass:            types.TableClass(str(r, "table_class")),
		KeySchema:             keys(str(r, "hash_key"), str(r, "range_key")),
	}
	for _, a := range r.all("attribute") {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(str(a, "name")), AttributeType: types.ScalarAttributeType(str(a, "type"))})
	}
	for _, g := range r.all("global_secondary_index") {
		ix := types.GlobalSecondaryIndex{IndexName: aws.String(str(g, "name")), Projection: projection(g), ProvisionedThroughput: throughput(g)}
		if hash := str(g, "hash_key"); hash != "" {
			ix.KeySchema = keys(hash, str(g, "range_key"))
		}
		for _, k := range g.all("key_schema") {
			ix.KeySchema = append(ix.KeySchema, types.KeySchemaElement{AttributeName: aws.String(str(k, "attribute_name")), KeyType: types.KeyType(str(k, "key_type"))})
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, ix)
	}
	for _, l := range r.all("local_secondary_index") {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
			IndexName: aws.String(str(l, "name")), KeySchema: keys(str(r, "hash_key"), str(l, "range_key")), Projection: projection(l),
		})
	}
	if on, _ := r.Attrs["stream_enabled"].(bool); on {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(str(r, "stream_view_type"))}
	}
	if on, ok := r.Attrs["deletion_protection_enabled"].(bool); ok {
		in.DeletionProtectionEnabled = aws.Bool(on)
	}
	for _, s := range r.all("server_side_encryption") {
		in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(s.Attrs["enabled"].(bool))}
		if arn := str(s, "kms_key_arn"); arn != "" {
			in.SSESpecification.KMSMasterKeyId = aws.String(arn)
		}
	}
	if tags, ok := r.Attrs["tags"].(map[string]string); ok {
		for _, k := range sortedKeys(tags) {
			in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
		}
	}
	ttl := ""
	for _, b := range r.all("ttl") {
		require.Equal(t, true, b.Attrs["enabled"])
		ttl = str(b, "attribute_name")
	}
	return in, ttl
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestTerraformStructure reads each rendered resource back with the HCL reader
// and finds its request; with a terraform binary on the PATH, `terraform fmt
// -check` also finds it well formed and formatted. (`terraform validate` needs
// the AWS provider, which a test does not download.)
func TestTerraformStructure(t *testing.T) {
	tf, _ := exec.LookPath("terraform")
	for name, def := range definitions(t) {
		t.Run(name, func(t *testing.T) {
			hcl, err := def.Terraform()
			require.NoError(t, err)
			in, ttl := fromTerraform(t, hcl)
			require.Equal(t, def.Input, in)
			require.Equal(t, def.TTLAttribute, ttl)
			if tf == "" {
				t.Log("no terraform on the PATH: the formatting check is skipped")
				return
			}
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "table.tf"), hcl, 0o644))
			cmd := exec.Command(tf, "fmt", "-check", "-diff", "table.tf")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+os.DevNull, "CHECKPOINT_DISABLE=1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "terraform fmt -check:\n%s", out)
		})
	}

	// A global index keyed by several attributes is written with key_schema
	// blocks, and read back the same.
	def := definitions(t)["shop"]
	gsi := &def.Input.GlobalSecondaryIndexes[0]
	gsi.KeySchema = []types.KeySchemaElement{
		{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String("AMTPK"), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange},
	}
	hcl, err := def.Terraform()
	require.NoError(t, err)
	require.Contains(t, string(hcl), "key_schema {")
	in, _ := fromTerraform(t, hcl)
	require.Equal(t, def.Input, in)
}
