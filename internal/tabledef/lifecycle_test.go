package tabledef

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestIndexInput(t *testing.T) {
	in := &dynamodb.CreateTableInput{
		TableName: aws.String("app"),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI1SK"), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String("LSI1SK"), AttributeType: types.ScalarAttributeTypeS},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("GSI1"),
			KeySchema:  KeySchema("GSI1PK", "GSI1SK"),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{IndexName: aws.String("LSI1"), KeySchema: KeySchema("PK", "LSI1SK")}},
	}
	up, local, names := IndexInput(in, "GSI1")
	if up == nil || local || names != nil {
		t.Fatalf("GSI1: %v %v %v", up, local, names)
	}
	if aws.ToString(up.TableName) != "app" || len(up.AttributeDefinitions) != 2 ||
		aws.ToString(up.AttributeDefinitions[1].AttributeName) != "GSI1SK" || up.AttributeDefinitions[1].AttributeType != types.ScalarAttributeTypeN {
		t.Fatalf("GSI1 definitions: %+v", up.AttributeDefinitions)
	}
	c := up.GlobalSecondaryIndexUpdates[0].Create
	if aws.ToString(c.IndexName) != "GSI1" || len(c.KeySchema) != 2 || c.Projection.ProjectionType != types.ProjectionTypeKeysOnly {
		t.Fatalf("GSI1 create: %+v", c)
	}
	if up, local, _ := IndexInput(in, "LSI1"); up != nil || !local {
		t.Fatalf("LSI1: %v %v", up, local)
	}
	if up, local, names := IndexInput(in, "GSI2"); up != nil || local || len(names) != 1 || names[0] != "GSI1" {
		t.Fatalf("GSI2: %v %v %v", up, local, names)
	}
}

// describer answers DescribeTable from a script, one answer a call.
type describer struct {
	answers []error // nil: the table, with status
	status  types.TableStatus
	calls   int
}

func (d *describer) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	i := min(d.calls, len(d.answers)-1)
	d.calls++
	if err := d.answers[i]; err != nil {
		return nil, err
	}
	st := types.TableStatusCreating
	if d.calls == len(d.answers) {
		st = d.status
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableStatus: st}}, nil
}

func TestWait(t *testing.T) {
	ctx := context.Background()
	nf := &types.ResourceNotFoundException{Message: aws.String("no table")}
	d := &describer{answers: []error{nf, nil, nil}, status: types.TableStatusActive}
	if err := WaitActive(ctx, d, "app"); err != nil || d.calls != 3 {
		t.Fatalf("WaitActive: %v after %d calls", err, d.calls)
	}
	d = &describer{answers: []error{nil, nf}}
	if err := WaitGone(ctx, d, "app"); err != nil || d.calls != 2 {
		t.Fatalf("WaitGone: %v after %d calls", err, d.calls)
	}
	boom := errors.New("boom")
	d = &describer{answers: []error{boom}}
	if err := WaitActive(ctx, d, "app"); !errors.Is(err, boom) || !strings.Contains(err.Error(), "DescribeTable app") {
		t.Fatalf("WaitActive on a failing call: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	d = &describer{answers: []error{nil}, status: types.TableStatusCreating}
	if err := WaitActive(cctx, d, "app"); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for table app") {
		t.Fatalf("WaitActive, context ended: %v", err)
	}
}
