package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// deploy creates the table a CloudFormation template describes, under the name
// tableName, as a stack would (CreateTable from the resource's properties, then
// its time to live); checks it against the model; shows what a model change
// not yet deployed looks like; and deletes the table.
func deploy(ctx context.Context, client *dynamodb.Client, template []byte, tableName string, w io.Writer) (err error) {
	in, ttl, err := fromTemplate(template)
	if err != nil {
		return err
	}
	in.TableName = aws.String(tableName)
	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("deploying the template: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, derr := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: in.TableName}); derr != nil {
			err = errors.Join(err, fmt.Errorf("deleting the table: %w", derr))
		}
	}()
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, time.Minute); err != nil {
		return err
	}
	if ttl != "" {
		spec := &types.TimeToLiveSpecification{AttributeName: aws.String(ttl), Enabled: aws.Bool(true)}
		if _, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: in.TableName, TimeToLiveSpecification: spec}); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\ndeployed shop.cfn.json to DynamoDB Local as %s\n", tableName)

	model, err := NewTable(client, tableName)
	if err != nil {
		return err
	}
	drift, err := check(ctx, client, model)
	if err != nil {
		return err
	}
	report(w, "the model", drift)

	// The model moves on: an index for orders by customer and total is
	// declared, and not yet deployed. The check says what the table lacks.
	next, err := NewTable(client, tableName, singletable.WithIndex("GSI2", "GSI2PK", "GSI2SK", singletable.ProjectKeysOnly()))
	if err != nil {
		return err
	}
	drift, err = check(ctx, client, next)
	if err != nil {
		return err
	}
	report(w, "the next model (with GSI2)", drift)
	return nil
}

func report(w io.Writer, what string, drift []string) {
	if len(drift) == 0 {
		fmt.Fprintf(w, "check against %s: the deployed table matches it\n", what)
		return
	}
	fmt.Fprintf(w, "check against %s: %d differences\n", what, len(drift))
	for _, d := range drift {
		fmt.Fprintln(w, "  "+d)
	}
}

// check compares the deployed table (DescribeTable, DescribeTimeToLive) with
// the request the model would create it with, and lists the differences.
func check(ctx context.Context, client *dynamodb.Client, model *singletable.Table) ([]string, error) {
	want, err := model.CreateTableInput(edits()...)
	if err != nil {
		return nil, err
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(model.Name())})
	if err != nil {
		return nil, err
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(model.Name())})
	if err != nil {
		return nil, err
	}
	td := out.Table
	got := &dynamodb.CreateTableInput{
		KeySchema: td.KeySchema, AttributeDefinitions: td.AttributeDefinitions, StreamSpecification: td.StreamSpecification,
		BillingMode: types.BillingModeProvisioned,
	}
	if td.BillingModeSummary != nil {
		got.BillingMode = td.BillingModeSummary.BillingMode
	}
	for _, ix := range td.GlobalSecondaryIndexes {
		got.GlobalSecondaryIndexes = append(got.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection})
	}
	for _, ix := range td.LocalSecondaryIndexes {
		got.LocalSecondaryIndexes = append(got.LocalSecondaryIndexes, types.LocalSecondaryIndex{IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection})
	}
	gotTTL := ""
	if d := ttl.TimeToLiveDescription; d != nil && d.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
		gotTTL = aws.ToString(d.AttributeName)
	}
	have, wanted := facts(got, gotTTL), facts(want, model.TTLAttribute())
	var drift []string
	for _, f := range wanted {
		if !slices.Contains(have, f) {
			drift = append(drift, "the table lacks: "+f)
		}
	}
	for _, f := range have {
		if !slices.Contains(wanted, f) {
			drift = append(drift, "the model lacks: "+f)
		}
	}
	return drift, nil
}

// facts lists what a table definition says, one line per key, attribute,
// index, setting: "index GSI1: GSI1PK HASH, GSI1SK RANGE; INCLUDE ...".
func facts(in *dynamodb.CreateTableInput, ttl string) []string {
	keys := func(ks []types.KeySchemaElement) string {
		var parts []string
		for _, k := range ks {
			parts = append(parts, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		return strings.Join(parts, ", ")
	}
	projection := func(p *types.Projection) string {
		if p == nil {
			return "ALL"
		}
		attrs := slices.Sorted(slices.Values(p.NonKeyAttributes))
		return strings.TrimSpace(string(p.ProjectionType) + " " + strings.Join(attrs, ", "))
	}
	out := []string{"key schema: " + keys(in.KeySchema), "billing: " + string(in.BillingMode), "ttl: " + ttl}
	for _, a := range in.AttributeDefinitions {
		out = append(out, "attribute "+aws.ToString(a.AttributeName)+": "+string(a.AttributeType))
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		out = append(out, "global index "+aws.ToString(ix.IndexName)+": "+keys(ix.KeySchema)+"; "+projection(ix.Projection))
	}
	for _, ix := range in.LocalSecondaryIndexes {
		out = append(out, "local index "+aws.ToString(ix.IndexName)+": "+keys(ix.KeySchema)+"; "+projection(ix.Projection))
	}
	stream := "off"
	if s := in.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
		stream = string(s.StreamViewType)
	}
	return append(out, "stream: "+stream)
}

// fromTemplate reads the AWS::DynamoDB::Table resource of a CloudFormation
// template (JSON) into a CreateTable request and its TTL attribute: the
// properties this example's templates hold.
func fromTemplate(template []byte) (*dynamodb.CreateTableInput, string, error) {
	type key struct{ AttributeName, KeyType string }
	type projection struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
	var t struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				TableName, BillingMode string
				AttributeDefinitions   []struct{ AttributeName, AttributeType string }
				KeySchema              []key
				GlobalSecondaryIndexes []struct {
					IndexName  string
					KeySchema  []key
					Projection projection
				}
				StreamSpecification     *struct{ StreamViewType string }
				TimeToLiveSpecification *struct{ AttributeName string }
				Tags                    []struct{ Key, Value string }
			}
		}
	}
	if err := json.Unmarshal(template, &t); err != nil {
		return nil, "", err
	}
	keys := func(ks []key) []types.KeySchemaElement {
		var out []types.KeySchemaElement
		for _, k := range ks {
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
		}
		return out
	}
	for _, r := range t.Resources {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		p := r.Properties
		in := &dynamodb.CreateTableInput{TableName: aws.String(p.TableName), BillingMode: types.BillingMode(p.BillingMode), KeySchema: keys(p.KeySchema)}
		for _, a := range p.AttributeDefinitions {
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
		}
		for _, ix := range p.GlobalSecondaryIndexes {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName: aws.String(ix.IndexName), KeySchema: keys(ix.KeySchema),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection.ProjectionType), NonKeyAttributes: ix.Projection.NonKeyAttributes},
			})
		}
		if s := p.StreamSpecification; s != nil {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(s.StreamViewType)}
		}
		for _, tag := range p.Tags {
			in.Tags = append(in.Tags, types.Tag{Key: aws.String(tag.Key), Value: aws.String(tag.Value)})
		}
		ttl := ""
		if s := p.TimeToLiveSpecification; s != nil {
			ttl = s.AttributeName
		}
		return in, ttl, nil
	}
	return nil, "", fmt.Errorf("the template has no AWS::DynamoDB::Table resource")
}
