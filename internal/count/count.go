// Package count is the machinery of the root package's counts (Count,
// ScanCount): the pages of a Query or Scan with Select COUNT summed until the
// last, the filters a count adds to an input (an entity's type, the library's
// own items left out), and the two key conditions that count an SKTree query's
// tree. The root prepares the query and sends each page.
package count

import (
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Item is an item's key as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// Totals is what a count found, as the root's Count holds it.
type Totals struct {
	Items, Scanned int
	Capacity       float64
	Pages          int
}

// Page is one page's answer to a COUNT query or scan.
type Page struct {
	Count, Scanned int32
	Capacity       *types.ConsumedCapacity
	Last           Item // where the next page starts; nil after the last
}

// Sum counts parts queries (or scans), one after the other, each page after
// page until its last: send reads the page of part that starts at start (nil:
// the first). It stops at the first error, with the totals so far.
func Sum(parts int, send func(part int, start Item) (Page, error)) (Totals, error) {
	var c Totals
	for part := range parts {
		var start Item
		for first := true; first || start != nil; first = false {
			p, err := send(part, start)
			if err != nil {
				return c, err
			}
			c.Items += int(p.Count)
			c.Scanned += int(p.Scanned)
			c.Pages++
			if cc := p.Capacity; cc != nil && cc.CapacityUnits != nil {
				c.Capacity += *cc.CapacityUnits
			}
			start = p.Last
		}
	}
	return c, nil
}

// Narrow adds cond to an input's filter (ANDed), with the name placeholder
// name for attr and the value placeholder value for v, which cond uses. The
// input's maps are copied, not changed.
func Narrow(names *map[string]string, values *map[string]types.AttributeValue, filter **string, name, attr, value string, v types.AttributeValue, cond string) {
	*names, *values = maps.Clone(*names), maps.Clone(*values)
	if *names == nil {
		*names = map[string]string{}
	}
	if *values == nil {
		*values = map[string]types.AttributeValue{}
	}
	(*names)[name], (*values)[value] = attr, v
	*filter = expr.Ptr(expr.And(aws.ToString(*filter), cond))
}

// Part is one key condition of a count, with its names and values.
type Part struct {
	KeyCondition string
	Names        map[string]string
	Values       map[string]types.AttributeValue
}

// Tree returns the key conditions that count an SKTree query's tree as two
// ranges, the root and the keys after root and the delimiter (a filter cannot
// name a key): partition key pk (attribute pkAttr) and sort key (skAttr) root,
// or beginning with under. names and values are the query's: the key
// condition's own placeholders (#n…, :v…) are left out, the filter's kept.
func Tree(names map[string]string, values map[string]types.AttributeValue, pkAttr, skAttr string, pk types.AttributeValue, root, under string) []Part {
	var parts []Part
	for _, cond := range []string{"#ctsk = :ctroot", "begins_with(#ctsk, :ctunder)"} {
		p := Part{KeyCondition: "#ctpk = :ctpk AND " + cond, Names: map[string]string{}, Values: map[string]types.AttributeValue{}}
		for k, v := range names {
			if !strings.HasPrefix(k, "#n") { // the key condition's own names go
				p.Names[k] = v
			}
		}
		for k, v := range values {
			if !strings.HasPrefix(k, ":v") {
				p.Values[k] = v
			}
		}
		p.Names["#ctpk"], p.Names["#ctsk"] = pkAttr, skAttr
		p.Values[":ctpk"] = pk
		if cond[0] == '#' {
			p.Values[":ctroot"] = &types.AttributeValueMemberS{Value: root}
		} else {
			p.Values[":ctunder"] = &types.AttributeValueMemberS{Value: under}
		}
		parts = append(parts, p)
	}
	return parts
}
