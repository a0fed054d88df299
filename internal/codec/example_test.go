package codec_test

import (
	"fmt"
	"reflect"
	"time"

	"github.com/singletable/singletable/internal/codec"
)

type Item struct {
	ID      string    `dynamodbav:"id"`
	Created time.Time `dynamodbav:"created,unixtime"`
	Tags    []string  `dynamodbav:"tags,stringset,omitempty"`
	Note    string    `dynamodbav:"note,omitempty"`
}

func Example() {
	p, err := codec.PlanFor(reflect.TypeFor[Item]())
	if err != nil {
		panic(err)
	}
	for _, f := range p.Fields() {
		fmt.Println(f.GoName, "->", f.Name)
	}

	in := Item{ID: "i-1", Created: time.Unix(1700000000, 0), Tags: []string{"a", "b"}}
	m, err := p.Encode(reflect.ValueOf(&in).Elem())
	if err != nil {
		panic(err)
	}
	fmt.Println(len(m), "attributes")

	var out Item
	if err := p.Decode(m, reflect.ValueOf(&out).Elem()); err != nil {
		panic(err)
	}
	fmt.Println(out.ID, out.Created.Unix(), out.Tags)
	// Output:
	// ID -> id
	// Created -> created
	// Tags -> tags
	// Note -> note
	// 3 attributes
	// i-1 1700000000 [a b]
}

func ExamplePlanFor_error() {
	type Order struct {
		Total complex128
	}
	_, err := codec.PlanFor(reflect.TypeFor[Order]())
	fmt.Println(err)
	// Output:
	// codec: Order.Total: unsupported type complex128
}
