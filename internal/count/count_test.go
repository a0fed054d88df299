package count

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestSum(t *testing.T) {
	var starts []Item
	c, err := Sum(2, func(part int, start Item) (Page, error) {
		starts = append(starts, start)
		p := Page{Count: 3, Scanned: 5, Capacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}
		if part == 0 && start == nil {
			p.Last = Item{"PK": s("a")}
		}
		return p, nil
	})
	require.NoError(t, err)
	assert.Equal(t, Totals{Items: 9, Scanned: 15, Capacity: 1.5, Pages: 3}, c)
	assert.Equal(t, []Item{nil, {"PK": s("a")}, nil}, starts, "part 0 over two pages, part 1 from its start")

	boom := errors.New("boom")
	c, err = Sum(2, func(part int, _ Item) (Page, error) {
		if part == 1 {
			return Page{}, boom
		}
		return Page{Count: 1, Scanned: 1}, nil
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, Totals{Items: 1, Scanned: 1, Pages: 1}, c, "the totals so far")
}

func TestNarrow(t *testing.T) {
	names := map[string]string{"#n0": "a"}
	var values map[string]types.AttributeValue
	filter := aws.String("#n0 = :x")
	n, v := names, values
	Narrow(&n, &v, &filter, "#rtype", "type", ":rtype", s("_singletable."), "NOT begins_with(#rtype, :rtype)")
	assert.Equal(t, "(#n0 = :x) AND (NOT begins_with(#rtype, :rtype))", aws.ToString(filter))
	assert.Equal(t, map[string]string{"#n0": "a", "#rtype": "type"}, n)
	assert.Equal(t, map[string]types.AttributeValue{":rtype": s("_singletable.")}, v)
	assert.Equal(t, map[string]string{"#n0": "a"}, names, "the input's map is not changed")

	var none *string
	Narrow(&n, &v, &none, "#ctype", "type", ":ctype", s("Order"), "#ctype = :ctype")
	assert.Equal(t, "#ctype = :ctype", aws.ToString(none))
}

func TestTree(t *testing.T) {
	names := map[string]string{"#n0": "PK", "#n1": "SK", "#f": "status"}
	values := map[string]types.AttributeValue{":v0": s("p"), ":v1": s("r"), ":f": s("open")}
	parts := Tree(names, values, "PK", "SK", s("p"), "r", "r#")
	require.Len(t, parts, 2)
	assert.Equal(t, "#ctpk = :ctpk AND #ctsk = :ctroot", parts[0].KeyCondition)
	assert.Equal(t, "#ctpk = :ctpk AND begins_with(#ctsk, :ctunder)", parts[1].KeyCondition)
	assert.Equal(t, map[string]string{"#f": "status", "#ctpk": "PK", "#ctsk": "SK"}, parts[0].Names, "the key condition's names go, the filter's stay")
	assert.Equal(t, map[string]types.AttributeValue{":f": s("open"), ":ctpk": s("p"), ":ctroot": s("r")}, parts[0].Values)
	assert.Equal(t, map[string]types.AttributeValue{":f": s("open"), ":ctpk": s("p"), ":ctunder": s("r#")}, parts[1].Values)
}
