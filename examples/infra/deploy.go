package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	drift, err := model.Drift(ctx, edits()...) // DescribeTable and DescribeTimeToLive against the model
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
	drift, err = next.Drift(ctx, edits()...)
	if err != nil {
		return err
	}
	report(w, "the next model (with GSI2)", drift)
	return nil
}

// report prints the differences Table.Drift found, each with its fix.
func report(w io.Writer, what string, drift []singletable.Difference) {
	if len(drift) == 0 {
		fmt.Fprintf(w, "check against %s: the deployed table matches it\n", what)
		return
	}
	noun := "differences"
	if len(drift) == 1 {
		noun = "difference"
	}
	fmt.Fprintf(w, "check against %s: %d %s\n", what, len(drift), noun)
	for _, d := range drift {
		fmt.Fprintf(w, "  %s\n    fix: %s\n", d, d.Fix)
	}
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
