package design

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Definition is a table's definition for infrastructure as code: the CreateTable
// request that creates it and the TTL attribute that is turned on after it. The
// root package's Table.Definition makes one from the table's model, the same
// request Table.CreateTable sends; render it with [Definition.CloudFormationJSON]
// (which NoSQL Workbench imports), [Definition.CloudFormationYAML] or
// [Definition.Terraform].
//
// A renderer writes every field of the request it reads, or fails: a field it
// cannot write (WarmThroughput, OnDemandThroughput, ResourcePolicy,
// VectorIndexes, global table settings) is refused with [ErrUnsupported], never
// left out, so that the template creates the table the request would. The
// renderers only read the Definition.
type Definition struct {
	// Input is the CreateTable request.
	Input *dynamodb.CreateTableInput
	// TTLAttribute is the attribute DynamoDB's time to live reads; "" for none.
	TTLAttribute string
	// Resource names the table's resource in a template: CloudFormation's
	// logical ID (letters and digits) and Terraform's resource name (letters,
	// digits, underscores and dashes, not starting with a digit or dash). ""
	// derives one from the table name: "orders-v2" gives OrdersV2Table and
	// orders_v2.
	Resource string
}

// ErrUnsupported is the error of a rendering that cannot write what the
// definition holds. Errors wrap it with the field and the format.
var ErrUnsupported = errors.New("not supported by this format")

// check refuses what no renderer writes, and a request without its essentials.
func (d *Definition) check(format string) error {
	in := d.Input
	if in == nil {
		return fmt.Errorf("design: %s: the definition has no CreateTable input", format)
	}
	if aws.ToString(in.TableName) == "" || len(in.KeySchema) == 0 {
		return fmt.Errorf("design: %s: the CreateTable input has no table name or no key schema", format)
	}
	unsupported := func(field string) error {
		return fmt.Errorf("design: %s of table %s: CreateTableInput.%s is set; remove it, or add it to the template by hand: %w", format, aws.ToString(in.TableName), field, ErrUnsupported)
	}
	switch {
	case in.OnDemandThroughput != nil:
		return unsupported("OnDemandThroughput")
	case in.WarmThroughput != nil:
		return unsupported("WarmThroughput")
	case in.ResourcePolicy != nil:
		return unsupported("ResourcePolicy")
	case len(in.VectorIndexes) > 0:
		return unsupported("VectorIndexes")
	case in.GlobalTableSourceArn != nil || in.GlobalTableSettingsReplicationMode != "":
		return unsupported("GlobalTableSourceArn/GlobalTableSettingsReplicationMode")
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		switch {
		case ix.OnDemandThroughput != nil:
			return unsupported("GlobalSecondaryIndexes[" + aws.ToString(ix.IndexName) + "].OnDemandThroughput")
		case ix.WarmThroughput != nil:
			return unsupported("GlobalSecondaryIndexes[" + aws.ToString(ix.IndexName) + "].WarmThroughput")
		}
	}
	return nil
}

// billingMode is the request's billing mode, DynamoDB's default filled in.
func billingMode(in *dynamodb.CreateTableInput) types.BillingMode {
	if in.BillingMode == "" {
		return types.BillingModeProvisioned
	}
	return in.BillingMode
}

// projectionOf is an index's projection, the default (ALL) filled in.
func projectionOf(p *types.Projection) types.Projection {
	if p == nil || p.ProjectionType == "" {
		out := types.Projection{ProjectionType: types.ProjectionTypeAll}
		if p != nil {
			out.NonKeyAttributes = p.NonKeyAttributes
		}
		return out
	}
	return *p
}

// streamView is the stream's view type, or "" when the request turns no stream on.
func streamView(in *dynamodb.CreateTableInput) types.StreamViewType {
	if s := in.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
		return s.StreamViewType
	}
	return ""
}

var (
	logicalID     = regexp.MustCompile(`^[A-Za-z0-9]{1,255}$`)
	terraformName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// logicalID returns the CloudFormation logical ID of the table's resource.
func (d *Definition) logicalID() (string, error) {
	if d.Resource != "" {
		if !logicalID.MatchString(d.Resource) {
			return "", fmt.Errorf("design: CloudFormation: resource name %q is not a logical ID (1-255 letters and digits): %w", d.Resource, ErrUnsupported)
		}
		return d.Resource, nil
	}
	var b strings.Builder
	for _, word := range strings.FieldsFunc(aws.ToString(d.Input.TableName), func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String() + "Table", nil
}

// terraformName returns the Terraform name of the table's resource.
func (d *Definition) terraformName() (string, error) {
	if d.Resource != "" {
		if !terraformName.MatchString(d.Resource) {
			return "", fmt.Errorf("design: Terraform: resource name %q is not a Terraform name (letters, digits, underscores and dashes, starting with a letter or underscore): %w", d.Resource, ErrUnsupported)
		}
		return d.Resource, nil
	}
	name := []byte(strings.ToLower(aws.ToString(d.Input.TableName)))
	for i, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			name[i] = '_'
		}
	}
	if len(name) == 0 || '0' <= name[0] && name[0] <= '9' {
		return "table_" + string(name), nil
	}
	return string(name), nil
}
