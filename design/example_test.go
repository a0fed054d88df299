package design_test

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/design"
)

// The Design is plain data too, for checks of one's own.
func ExampleDesign() {
	type Post struct {
		_      struct{} `Type:"Post" PK:"BLOG#{blogId}" SK:"POST#{n}"`
		BlogID string   `dynamodbav:"blogId"`
		N      int      `dynamodbav:"n"`
	}
	table, _ := singletable.NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "blog")
	singletable.MustRegister[Post](table)

	d := table.Describe()
	for _, p := range d.Patterns {
		fmt.Printf("%s %s: %s\n", p.Operation, p.KeyCondition, p.Call)
	}
	for _, n := range d.Notes {
		fmt.Println(n)
	}
	// Output:
	// GetItem PK = "BLOG#{blogId}" AND SK = "POST#{n}": Get(k); BatchGet(ks)
	// Query PK = "BLOG#{blogId}" AND begins_with(SK, "POST#"): Query(k)
	// Post's SK `POST#{n}`: {n} is an integer without zero padding, so keys sort as text (10 before 9); {n:08} sorts as numbers.
}

// New derives a design from plain data, without a table: here a design that
// is still on paper.
func ExampleNew() {
	d := design.New(design.Table{Name: "blog", PartitionKey: "PK", SortKey: "SK", TypeAttribute: "Type", Delimiter: '#'},
		[]design.Entity{{
			Name: "Post", Type: "Post",
			Keys:   []design.Key{{PartitionKey: "PK", Partition: "BLOG#{blogId}", SortKey: "SK", Sort: "POST#{n:08}"}},
			Fields: []design.Field{{Name: "blogId", Kind: design.KindString}, {Name: "n", Kind: design.KindInt}},
		}})
	for _, p := range d.Patterns {
		fmt.Printf("%s %s: %s\n", p.Operation, p.KeyCondition, p.Call)
	}
	fmt.Println(len(d.Notes), "notes")
	// Output:
	// GetItem PK = "BLOG#{blogId}" AND SK = "POST#{n:08}": Get(k); BatchGet(ks)
	// Query PK = "BLOG#{blogId}" AND begins_with(SK, "POST#"): Query(k); Query(k, SKBetween(lo, hi))
	// 0 notes
}
