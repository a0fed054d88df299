// Package tabledef checks a CreateTable request against the table it is for
// and against what DynamoDB refuses, so that the root package's
// Table.CreateTableInput, Table.Definition and Table.CreateTable never carry a
// request DynamoDB or the table would refuse. Its errors say what is wrong in
// words; the root package wraps them with its ErrInvalidInput. It also derives
// from that request the UpdateTable that adds one of its global indexes to an
// existing table (Table.CreateIndexInput), and holds the waits of
// Table.CreateTable and Table.DeleteTable (lifecycle.go).
package tabledef

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeySchema is the key schema of a table or an index keyed by partition key
// pk and sort key sk ("" for none).
func KeySchema(pk, sk string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
	if sk != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	return ks
}

// Check refuses a request that edits made wrong: one for another table than
// name, or with another primary key than pk and sk; capacity that does not fit
// the billing mode; a stream without a view type; tags with an empty or
// repeated key.
func Check(in *dynamodb.CreateTableInput, name, pk, sk string) error {
	if aws.ToString(in.TableName) != name {
		return fmt.Errorf("an edit renamed the table to %q", aws.ToString(in.TableName))
	}
	if want := KeySchema(pk, sk); !sameKeySchema(in.KeySchema, want) {
		return fmt.Errorf("an edit changed the primary key to %s, but the table's is %s (WithKeys)", keySchemaText(in.KeySchema), keySchemaText(want))
	}
	if err := checkCapacity(in); err != nil {
		return err
	}
	if s := in.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) && s.StreamViewType == "" {
		return errors.New("the stream is enabled without a view type (StreamView)")
	}
	seen := map[string]bool{}
	for _, tag := range in.Tags {
		k := aws.ToString(tag.Key)
		if k == "" || seen[k] {
			return fmt.Errorf("tag key %q is empty or repeated", k)
		}
		seen[k] = true
	}
	return nil
}

// checkCapacity checks that the table and its global indexes have provisioned
// capacity exactly when the billing mode says so.
func checkCapacity(in *dynamodb.CreateTableInput) error {
	provisioned := in.BillingMode == "" || in.BillingMode == types.BillingModeProvisioned // DynamoDB's default
	check := func(what string, p *types.ProvisionedThroughput) error {
		switch {
		case !provisioned && p != nil:
			return fmt.Errorf("%s has provisioned throughput, but the billing mode is %s", what, in.BillingMode)
		case provisioned && (p == nil || aws.ToInt64(p.ReadCapacityUnits) < 1 || aws.ToInt64(p.WriteCapacityUnits) < 1):
			return fmt.Errorf("%s needs read and write capacity units of at least 1 under PROVISIONED billing (Provisioned)", what)
		}
		return nil
	}
	if err := check("the table", in.ProvisionedThroughput); err != nil {
		return err
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		if err := check("index "+strconv.Quote(aws.ToString(ix.IndexName)), ix.ProvisionedThroughput); err != nil {
			return err
		}
	}
	return nil
}

func sameKeySchema(a, b []types.KeySchemaElement) bool {
	return slices.EqualFunc(a, b, func(x, y types.KeySchemaElement) bool {
		return aws.ToString(x.AttributeName) == aws.ToString(y.AttributeName) && x.KeyType == y.KeyType
	})
}

// keySchemaText writes a key schema for a message: "PK HASH, SK RANGE".
func keySchemaText(ks []types.KeySchemaElement) string {
	out := ""
	for i, k := range ks {
		if i > 0 {
			out += ", "
		}
		out += aws.ToString(k.AttributeName) + " " + string(k.KeyType)
	}
	return out
}
