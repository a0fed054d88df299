package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// What version 1 of the program wrote, and a census of schema versions: the
// example and its tests write old issues through the client, as the old
// program did, and read the versions straight from the table.

// version1Repo is the repository item as version 1 wrote it. The repository's
// schema did not change: it is what s.Repos.Put writes today.
func version1Repo(r Repo) map[string]types.AttributeValue {
	key := "REPO#" + r.Owner + "#" + r.Name
	item := map[string]types.AttributeValue{
		"PK": avS(key), "SK": avS(key), "Type": avS("Repo"),
		"owner": avS(r.Owner), "name": avS(r.Name),
		"createdAt":  avS(r.CreatedAt.Format(time.RFC3339Nano)),
		"issueCount": avN(r.IssueCount),
	}
	if r.Description != "" {
		item["description"] = avS(r.Description)
	}
	return item
}

// version1Issue is an issue as version 1 wrote it: its primary and GSI4 keys
// and its fields, but no priority, no GSI5 keys and no schema attribute. is's
// Priority is ignored.
func version1Issue(is Issue) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"PK":     avS("REPO#" + is.Owner + "#" + is.Repo),
		"SK":     avS(fmt.Sprintf("ISSUE#%08d", is.Number)),
		"GSI4PK": avS("REPO#" + is.Owner + "#" + is.Repo),
		"GSI4SK": avS(fmt.Sprintf("ISSUE#%s#%08d", is.Status, is.Number)),
		"Type":   avS("Issue"),
		"owner":  avS(is.Owner), "repo": avS(is.Repo), "number": avN(is.Number),
		"title": avS(is.Title), "author": avS(is.Author), "status": avS(string(is.Status)),
		"createdAt": avS(is.CreatedAt.Format(time.RFC3339Nano)),
	}
	if len(is.Labels) > 0 {
		labels := &types.AttributeValueMemberL{}
		for _, l := range is.Labels {
			labels.Value = append(labels.Value, avS(l))
		}
		item["labels"] = labels
	}
	return item
}

// putVersion1 writes a repository and its issues as version 1 of the program
// did: one unconditional PutItem each, straight through the client.
func putVersion1(ctx context.Context, client singletable.Client, table string, r Repo, issues []Issue) error {
	items := []map[string]types.AttributeValue{version1Repo(r)}
	for _, is := range issues {
		items = append(items, version1Issue(is))
	}
	for _, item := range items {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			pk, sk := item["PK"].(*types.AttributeValueMemberS), item["SK"].(*types.AttributeValueMemberS)
			return fmt.Errorf("put version 1 item %s %s: %w", pk.Value, sk.Value, err)
		}
	}
	return nil
}

// schemaVersions counts a repository's issues by the schema version their
// items hold in the table's schema attribute (1 without it): Query
// PK = REPO#{owner}#{repo} AND begins_with(SK, "ISSUE#"), strongly
// consistent, projecting the schema attribute only, every page. It reads the
// items as stored, so unlike the entity's reads it migrates nothing.
func schemaVersions(ctx context.Context, tbl *singletable.Table, owner, repo string) (map[int]int, error) {
	opts := tbl.Options()
	kc := expression.Key(opts.PartitionKey).Equal(expression.Value("REPO#" + owner + "#" + repo)).
		And(expression.Key(opts.SortKey).BeginsWith("ISSUE#"))
	e, err := expression.NewBuilder().WithKeyCondition(kc).WithProjection(expression.NamesList(expression.Name(opts.SchemaAttribute))).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(tbl.Name()),
		KeyConditionExpression:    e.KeyCondition(),
		ProjectionExpression:      e.Projection(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	versions := map[int]int{}
	for {
		out, err := tbl.Client().Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("count schema versions of %s/%s: %w", owner, repo, err)
		}
		for _, item := range out.Items {
			v := 1
			if av, ok := item[opts.SchemaAttribute].(*types.AttributeValueMemberN); ok {
				if v, err = strconv.Atoi(av.Value); err != nil {
					return nil, fmt.Errorf("count schema versions of %s/%s: %s = %q", owner, repo, opts.SchemaAttribute, av.Value)
				}
			}
			versions[v]++
		}
		if len(out.LastEvaluatedKey) == 0 {
			return versions, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
