package design

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table as a CloudFormation AWS::DynamoDB::Table resource. The property
// names are CloudFormation's, which are the CreateTable request's but for the
// stream (a StreamSpecification holds only its view type) and TTL (which
// CloudFormation sets with the table: TimeToLiveSpecification).

// CloudFormationJSON renders the definition as a CloudFormation template in
// JSON, holding one AWS::DynamoDB::Table resource: the table name, billing mode
// and capacity, table class, attribute definitions, key schema, global and
// local secondary indexes with their projections (and capacity), stream, TTL,
// server-side encryption, deletion protection and tags, each where the request
// has it. NoSQL Workbench imports it as a data model. It fails with
// [ErrUnsupported] for what it cannot write (see [Definition]).
func (d *Definition) CloudFormationJSON() ([]byte, error) {
	t, err := d.cloudFormation("CloudFormation")
	if err != nil {
		return nil, err
	}
	return writeJSON(t), nil
}

// CloudFormationYAML renders the template [Definition.CloudFormationJSON]
// renders, in YAML.
func (d *Definition) CloudFormationYAML() ([]byte, error) {
	t, err := d.cloudFormation("CloudFormation")
	if err != nil {
		return nil, err
	}
	return writeYAML(t), nil
}

// cloudFormation builds the template.
func (d *Definition) cloudFormation(format string) (object, error) {
	if err := d.check(format); err != nil {
		return nil, err
	}
	id, err := d.logicalID()
	if err != nil {
		return nil, err
	}
	in := d.Input
	var p object
	p.add("TableName", aws.ToString(in.TableName))
	p.add("BillingMode", string(billingMode(in)))
	if in.ProvisionedThroughput != nil {
		p.add("ProvisionedThroughput", cfnThroughput(in.ProvisionedThroughput))
	}
	if in.TableClass != "" {
		p.add("TableClass", string(in.TableClass))
	}
	var attrs list
	for _, a := range in.AttributeDefinitions {
		attrs = append(attrs, object{{"AttributeName", aws.ToString(a.AttributeName)}, {"AttributeType", string(a.AttributeType)}})
	}
	p.add("AttributeDefinitions", attrs)
	p.add("KeySchema", cfnKeySchema(in.KeySchema))
	if len(in.GlobalSecondaryIndexes) > 0 {
		var gsis list
		for _, ix := range in.GlobalSecondaryIndexes {
			o := object{{"IndexName", aws.ToString(ix.IndexName)}, {"KeySchema", cfnKeySchema(ix.KeySchema)}, {"Projection", cfnProjection(ix.Projection)}}
			if ix.ProvisionedThroughput != nil {
				o.add("ProvisionedThroughput", cfnThroughput(ix.ProvisionedThroughput))
			}
			gsis = append(gsis, o)
		}
		p.add("GlobalSecondaryIndexes", gsis)
	}
	if len(in.LocalSecondaryIndexes) > 0 {
		var lsis list
		for _, ix := range in.LocalSecondaryIndexes {
			lsis = append(lsis, object{{"IndexName", aws.ToString(ix.IndexName)}, {"KeySchema", cfnKeySchema(ix.KeySchema)}, {"Projection", cfnProjection(ix.Projection)}})
		}
		p.add("LocalSecondaryIndexes", lsis)
	}
	if view := streamView(in); view != "" {
		p.add("StreamSpecification", object{{"StreamViewType", string(view)}})
	}
	if d.TTLAttribute != "" {
		p.add("TimeToLiveSpecification", object{{"AttributeName", d.TTLAttribute}, {"Enabled", true}})
	}
	if s := in.SSESpecification; s != nil {
		o := object{{"SSEEnabled", aws.ToBool(s.Enabled)}}
		if s.SSEType != "" {
			o.add("SSEType", string(s.SSEType))
		}
		if s.KMSMasterKeyId != nil {
			o.add("KMSMasterKeyId", aws.ToString(s.KMSMasterKeyId))
		}
		p.add("SSESpecification", o)
	}
	if in.DeletionProtectionEnabled != nil {
		p.add("DeletionProtectionEnabled", aws.ToBool(in.DeletionProtectionEnabled))
	}
	if len(in.Tags) > 0 {
		var tags list
		for _, tag := range in.Tags {
			tags = append(tags, object{{"Key", aws.ToString(tag.Key)}, {"Value", aws.ToString(tag.Value)}})
		}
		p.add("Tags", tags)
	}
	return object{
		{"AWSTemplateFormatVersion", "2010-09-09"},
		{"Description", "DynamoDB table " + aws.ToString(in.TableName) + ", as its singletable model defines it"},
		{"Resources", object{{id, object{{"Type", "AWS::DynamoDB::Table"}, {"Properties", p}}}}},
	}, nil
}

func cfnKeySchema(ks []types.KeySchemaElement) list {
	out := make(list, len(ks))
	for i, k := range ks {
		out[i] = object{{"AttributeName", aws.ToString(k.AttributeName)}, {"KeyType", string(k.KeyType)}}
	}
	return out
}

func cfnProjection(p *types.Projection) object {
	proj := projectionOf(p)
	o := object{{"ProjectionType", string(proj.ProjectionType)}}
	if len(proj.NonKeyAttributes) > 0 {
		attrs := make(list, len(proj.NonKeyAttributes))
		for i, a := range proj.NonKeyAttributes {
			attrs[i] = a
		}
		o.add("NonKeyAttributes", attrs)
	}
	return o
}

func cfnThroughput(p *types.ProvisionedThroughput) object {
	return object{{"ReadCapacityUnits", aws.ToInt64(p.ReadCapacityUnits)}, {"WriteCapacityUnits", aws.ToInt64(p.WriteCapacityUnits)}}
}
