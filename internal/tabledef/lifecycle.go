package tabledef

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/backoff"
)

// IndexInput returns the UpdateTable request that adds the global secondary
// index name of the CreateTable request in to its table: the index's key schema
// and projection, and the definitions of its key attributes. When in declares no
// such global index it returns nil, with local set if name is a local index
// (which only CreateTable can add) and names, the global indexes in declares.
func IndexInput(in *dynamodb.CreateTableInput, name string) (_ *dynamodb.UpdateTableInput, local bool, names []string) {
	for _, gsi := range in.GlobalSecondaryIndexes {
		if aws.ToString(gsi.IndexName) != name {
			names = append(names, aws.ToString(gsi.IndexName))
			continue
		}
		var defs []types.AttributeDefinition
		for _, k := range gsi.KeySchema {
			for _, d := range in.AttributeDefinitions {
				if aws.ToString(d.AttributeName) == aws.ToString(k.AttributeName) {
					defs = append(defs, d)
				}
			}
		}
		return &dynamodb.UpdateTableInput{
			TableName:            in.TableName,
			AttributeDefinitions: defs,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName:  gsi.IndexName,
				KeySchema:  gsi.KeySchema,
				Projection: gsi.Projection,
			}}},
		}, false, nil
	}
	for _, lsi := range in.LocalSecondaryIndexes {
		if aws.ToString(lsi.IndexName) == name {
			return nil, true, nil
		}
	}
	return nil, false, names
}

// Describer is the DescribeTable call of a DynamoDB client.
type Describer interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// WaitActive polls DescribeTable of table name until it is ACTIVE (a table not
// found yet is waited for), with a short fixed interval.
func WaitActive(ctx context.Context, c Describer, name string) error {
	return wait(ctx, c, name, func(out *dynamodb.DescribeTableOutput, err error) (bool, error) {
		if err != nil {
			var nf *types.ResourceNotFoundException
			if errors.As(err, &nf) {
				return false, nil
			}
			return false, err
		}
		return out.Table != nil && out.Table.TableStatus == types.TableStatusActive, nil
	})
}

// WaitGone polls DescribeTable of table name until the table is not found.
func WaitGone(ctx context.Context, c Describer, name string) error {
	return wait(ctx, c, name, func(_ *dynamodb.DescribeTableOutput, err error) (bool, error) {
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			return true, nil
		}
		return false, err
	})
}

// wait polls DescribeTable until done says so, with a short fixed interval.
func wait(ctx context.Context, c Describer, name string, done func(*dynamodb.DescribeTableOutput, error) (bool, error)) error {
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if ok, derr := done(out, err); derr != nil {
			return fmt.Errorf("singletable: DescribeTable %s: %w", name, derr)
		} else if ok {
			return nil
		}
		if err := backoff.Sleep(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("singletable: waiting for table %s: %w", name, err)
		}
	}
}
