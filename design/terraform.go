package design

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table as a Terraform aws_dynamodb_table resource, written as `terraform
// fmt` writes it.

// Terraform renders the definition as a Terraform resource of the AWS
// provider, aws_dynamodb_table, in HCL: name, billing mode and capacity, keys,
// attributes, global and local secondary indexes with their projections (and
// capacity), table class, stream, TTL, server-side encryption, deletion
// protection and tags, each where the request has it. Global index keys of one
// attribute each are written as hash_key and range_key, which every provider
// version reads; a global index with a multi-attribute key is written with
// key_schema blocks, which need a provider recent enough to have them. It
// fails with [ErrUnsupported] for what it cannot write (see [Definition]), such
// as an SSE type other than KMS.
func (d *Definition) Terraform() ([]byte, error) {
	if err := d.check("Terraform"); err != nil {
		return nil, err
	}
	name, err := d.terraformName()
	if err != nil {
		return nil, err
	}
	in := d.Input
	var body hclBody
	if err := d.tfTable(&body); err != nil {
		return nil, err
	}
	for _, a := range in.AttributeDefinitions {
		var b hclBody
		b.attr("name", hclString(aws.ToString(a.AttributeName)))
		b.attr("type", hclString(string(a.AttributeType)))
		body.block("attribute", b)
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		body.block("global_secondary_index", tfGlobalIndex(ix))
	}
	for _, ix := range in.LocalSecondaryIndexes {
		b, err := d.tfLocalIndex(ix)
		if err != nil {
			return nil, err
		}
		body.block("local_secondary_index", b)
	}
	if d.TTLAttribute != "" {
		var b hclBody
		b.attr("attribute_name", hclString(d.TTLAttribute))
		b.attr("enabled", "true")
		body.block("ttl", b)
	}
	if err := d.tfEncryption(&body); err != nil {
		return nil, err
	}
	if len(in.Tags) > 0 {
		var b hclBody
		for _, tag := range in.Tags {
			b.attr(hclKey(aws.ToString(tag.Key)), hclString(aws.ToString(tag.Value)))
		}
		body.object("tags", b)
	}

	var out bytes.Buffer
	out.WriteString("resource \"aws_dynamodb_table\" " + hclString(name) + " {\n")
	body.write(&out, "  ")
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// tfUnsupported is Terraform's error for what it cannot write.
func (d *Definition) tfUnsupported(what string) error {
	return fmt.Errorf("design: Terraform of table %s: %s: %w", aws.ToString(d.Input.TableName), what, ErrUnsupported)
}

// tfTable writes the table's own attributes to body: name, billing mode and
// capacity, keys, table class, stream and deletion protection.
func (d *Definition) tfTable(body *hclBody) error {
	in := d.Input
	body.attr("name", hclString(aws.ToString(in.TableName)))
	body.attr("billing_mode", hclString(string(billingMode(in))))
	tfCapacity(body, in.ProvisionedThroughput)
	hash, rng, ok := singleKeys(in.KeySchema)
	if !ok {
		return d.tfUnsupported("the table's key schema is not one HASH and at most one RANGE attribute")
	}
	body.attr("hash_key", hclString(hash))
	if rng != "" {
		body.attr("range_key", hclString(rng))
	}
	if in.TableClass != "" {
		body.attr("table_class", hclString(string(in.TableClass)))
	}
	if view := streamView(in); view != "" {
		body.attr("stream_enabled", "true")
		body.attr("stream_view_type", hclString(string(view)))
	}
	if in.DeletionProtectionEnabled != nil {
		body.attr("deletion_protection_enabled", strconv.FormatBool(aws.ToBool(in.DeletionProtectionEnabled)))
	}
	return nil
}

// tfCapacity writes provisioned capacity, if any, to b.
func tfCapacity(b *hclBody, p *types.ProvisionedThroughput) {
	if p != nil {
		b.attr("read_capacity", strconv.FormatInt(aws.ToInt64(p.ReadCapacityUnits), 10))
		b.attr("write_capacity", strconv.FormatInt(aws.ToInt64(p.WriteCapacityUnits), 10))
	}
}

// tfGlobalIndex is the global_secondary_index block of ix: its keys as
// hash_key and range_key when each is one attribute, else as key_schema
// blocks.
func tfGlobalIndex(ix types.GlobalSecondaryIndex) hclBody {
	var b hclBody
	b.attr("name", hclString(aws.ToString(ix.IndexName)))
	hash, rng, single := singleKeys(ix.KeySchema)
	if single {
		b.attr("hash_key", hclString(hash))
		if rng != "" {
			b.attr("range_key", hclString(rng))
		}
	}
	tfCapacity(&b, ix.ProvisionedThroughput)
	tfProjection(&b, ix.Projection)
	if !single {
		for _, k := range ix.KeySchema {
			var ks hclBody
			ks.attr("attribute_name", hclString(aws.ToString(k.AttributeName)))
			ks.attr("key_type", hclString(string(k.KeyType)))
			b.block("key_schema", ks)
		}
	}
	return b
}

// tfLocalIndex is the local_secondary_index block of ix, which must be keyed
// by the table's partition key and one sort key.
func (d *Definition) tfLocalIndex(ix types.LocalSecondaryIndex) (hclBody, error) {
	hash, rng, single := singleKeys(ix.KeySchema)
	if !single || hash != aws.ToString(d.Input.KeySchema[0].AttributeName) || rng == "" {
		return hclBody{}, d.tfUnsupported("local index " + strconv.Quote(aws.ToString(ix.IndexName)) + " is not keyed by the table's partition key and one sort key")
	}
	var b hclBody
	b.attr("name", hclString(aws.ToString(ix.IndexName)))
	b.attr("range_key", hclString(rng))
	tfProjection(&b, ix.Projection)
	return b, nil
}

// tfEncryption writes the server_side_encryption block, if the request has
// one, to body; only KMS can be written.
func (d *Definition) tfEncryption(body *hclBody) error {
	s := d.Input.SSESpecification
	if s == nil {
		return nil
	}
	if s.SSEType != "" && s.SSEType != types.SSETypeKms {
		return d.tfUnsupported("SSESpecification.SSEType " + string(s.SSEType) + " (the provider's server_side_encryption is KMS)")
	}
	var b hclBody
	b.attr("enabled", strconv.FormatBool(aws.ToBool(s.Enabled)))
	if s.KMSMasterKeyId != nil {
		b.attr("kms_key_arn", hclString(aws.ToString(s.KMSMasterKeyId)))
	}
	body.block("server_side_encryption", b)
	return nil
}

// singleKeys returns the attributes of a key schema of one HASH and at most one
// RANGE element; ok is false for any other.
func singleKeys(ks []types.KeySchemaElement) (hash, rng string, ok bool) {
	switch {
	case len(ks) == 1 && ks[0].KeyType == types.KeyTypeHash:
		return aws.ToString(ks[0].AttributeName), "", true
	case len(ks) == 2 && ks[0].KeyType == types.KeyTypeHash && ks[1].KeyType == types.KeyTypeRange:
		return aws.ToString(ks[0].AttributeName), aws.ToString(ks[1].AttributeName), true
	}
	return "", "", false
}

func tfProjection(b *hclBody, p *types.Projection) {
	proj := projectionOf(p)
	b.attr("projection_type", hclString(string(proj.ProjectionType)))
	if len(proj.NonKeyAttributes) > 0 {
		items := make([]string, len(proj.NonKeyAttributes))
		for i, a := range proj.NonKeyAttributes {
			items[i] = hclString(a)
		}
		b.attr("non_key_attributes", "["+strings.Join(items, ", ")+"]")
	}
}

// hclBody is the body of a block: attributes first, aligned on their equals
// signs as terraform fmt aligns them, then nested blocks and objects, each
// after a blank line.
type hclBody struct {
	attrs []hclAttr
	items []hclItem
}

type hclAttr struct{ name, value string }

// hclItem is a nested block (name { ... }) or an object attribute (name = { ... }).
type hclItem struct {
	name   string
	object bool
	body   hclBody
}

func (b *hclBody) attr(name, value string)        { b.attrs = append(b.attrs, hclAttr{name, value}) }
func (b *hclBody) block(name string, in hclBody)  { b.items = append(b.items, hclItem{name, false, in}) }
func (b *hclBody) object(name string, in hclBody) { b.items = append(b.items, hclItem{name, true, in}) }

func (b *hclBody) write(out *bytes.Buffer, indent string) {
	width := 0
	for _, a := range b.attrs {
		width = max(width, len(a.name))
	}
	for _, a := range b.attrs {
		out.WriteString(indent + a.name + strings.Repeat(" ", width-len(a.name)) + " = " + a.value + "\n")
	}
	for i, it := range b.items {
		if i > 0 || len(b.attrs) > 0 {
			out.WriteString("\n")
		}
		if it.object {
			out.WriteString(indent + it.name + " = {\n")
		} else {
			out.WriteString(indent + it.name + " {\n")
		}
		it.body.write(out, indent+"  ")
		out.WriteString(indent + "}\n")
	}
}

var hclIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// hclKey writes an object key: bare when it is an identifier, else quoted.
func hclKey(k string) string {
	if hclIdentifier.MatchString(k) {
		return k
	}
	return hclString(k)
}

// hclString quotes s as an HCL string literal: escapes for quotes, backslashes
// and control characters, and template sequences (${, %{) doubled so that they
// stay literal text.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
