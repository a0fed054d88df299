package wrap

import (
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What an observer and a tracer read off a call's input and output, whatever
// the API.

var (
	capacityRequestType = reflect.TypeFor[types.ReturnConsumedCapacity]()
	capacityType        = reflect.TypeFor[*types.ConsumedCapacity]()
	capacitiesType      = reflect.TypeFor[[]types.ConsumedCapacity]()
)

// AskCapacity returns the input of a call that can report its consumed
// capacity and does not ask for it yet as a copy that asks for it (TOTAL); any
// other input as it is. The caller's input is never modified.
func AskCapacity(params any) any {
	pv := reflect.ValueOf(params)
	if pv.Kind() != reflect.Pointer || pv.IsNil() || pv.Elem().Kind() != reflect.Struct {
		return params
	}
	f := pv.Elem().FieldByName("ReturnConsumedCapacity")
	if !f.IsValid() || f.Type() != capacityRequestType || f.String() != "" {
		return params
	}
	cp := reflect.New(pv.Elem().Type())
	cp.Elem().Set(pv.Elem())
	cp.Elem().FieldByName("ReturnConsumedCapacity").SetString(string(types.ReturnConsumedCapacityTotal))
	return cp.Interface()
}

// Consumed sums the capacity units an output reports (ConsumedCapacity, one or
// a list); 0 for outputs without.
func Consumed(result any) float64 {
	rv := reflect.ValueOf(result)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return 0
	}
	f := rv.Elem().FieldByName("ConsumedCapacity")
	switch {
	case !f.IsValid():
		return 0
	case f.Type() == capacityType:
		return units(f.Interface().(*types.ConsumedCapacity))
	case f.Type() == capacitiesType:
		n := 0.0
		for _, cc := range f.Interface().([]types.ConsumedCapacity) {
			n += units(&cc)
		}
		return n
	}
	return 0
}

func units(cc *types.ConsumedCapacity) float64 {
	if cc == nil || cc.CapacityUnits == nil {
		return 0
	}
	return *cc.CapacityUnits
}

// Index returns the index a Query or Scan reads; "" for other calls.
func Index(in any) string {
	var p *string
	switch in := in.(type) {
	case *dynamodb.QueryInput:
		p = in.IndexName
	case *dynamodb.ScanInput:
		p = in.IndexName
	}
	if p == nil {
		return ""
	}
	return *p
}

// Returned counts the items an output holds: Count (Query, Scan), Item
// (GetItem: 0 or 1), Responses (BatchGetItem: every table's; TransactGetItems:
// those found); -1 for outputs that hold none.
func Returned(out any) int {
	switch out := out.(type) {
	case *dynamodb.QueryOutput:
		if out != nil {
			return int(out.Count)
		}
	case *dynamodb.ScanOutput:
		if out != nil {
			return int(out.Count)
		}
	case *dynamodb.GetItemOutput:
		if out != nil {
			return min(len(out.Item), 1)
		}
	case *dynamodb.BatchGetItemOutput:
		if out != nil {
			n := 0
			for _, items := range out.Responses {
				n += len(items)
			}
			return n
		}
	case *dynamodb.TransactGetItemsOutput:
		if out != nil {
			n := 0
			for _, r := range out.Responses {
				n += min(len(r.Item), 1)
			}
			return n
		}
	}
	return -1
}
