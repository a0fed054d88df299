package sweepstore

import (
	"errors"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/reserved"
)

var errCondition = errors.New("condition failed")

// TestMemory: progress only moves forward, per segment, and is listed by entity.
func TestMemory(t *testing.T) {
	var m Memory
	assert.Equal(t, Progress{Entity: "E", Segment: 1, Total: 4}, m.Load("E", 1, 4), "none yet: the ids set")
	p := Progress{Entity: "E", Segment: 1, Total: 4, Cursor: "c", Pages: 2, Seen: 5}
	require.NoError(t, m.Save(p, errCondition))
	assert.Equal(t, p, m.Load("E", 1, 4))
	assert.Equal(t, Progress{Entity: "E", Segment: 1, Total: 2}, m.Load("E", 1, 2), "another division is another segment")
	err := m.Save(p, errCondition)
	require.ErrorIs(t, err, errCondition)
	assert.Equal(t, "singletable: sweep E segment 1/4: progress at page 2, not 2: condition failed", err.Error())
	p.Pages = 3
	require.NoError(t, m.Save(p, errCondition))
	require.NoError(t, m.Save(Progress{Entity: "F", Pages: 1}, errCondition))
	assert.Equal(t, []Progress{p}, m.Of("E"))
	assert.Empty(t, m.Of("G"))

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { _ = m.Save(Progress{Entity: "C", Segment: i, Total: 8, Pages: 1}, errCondition) })
	}
	wg.Wait()
	assert.Len(t, m.Of("C"), 8)
}

// TestItem: the item a save writes, and the progress the table store reads
// from it.
func TestItem(t *testing.T) {
	tbl := &Table{PartitionKey: "PK", SortKey: "SK", TypeAttribute: "Type", Delimiter: '#'}
	p := Progress{Entity: "Order", Segment: 3, Total: 16, Cursor: "cur", Pages: 7, Done: true, Seen: 1, Migrated: 2, Lost: 3, Failed: 4}
	item := tbl.item(p)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	assert.Equal(t, map[string]types.AttributeValue{
		"PK": s("#singletable#sweep#Order"), "SK": s("00000003/00000016"), "Type": s(reserved.SweepType),
		"cursor": s("cur"), "pages": num("7"), "done": &types.AttributeValueMemberBOOL{Value: true},
		"seen": num("1"), "migrated": num("2"), "lost": num("3"), "failed": num("4"),
	}, item)
	p.Cursor = ""
	_, has := tbl.item(p)[AttrCursor]
	assert.False(t, has, "no cursor at the start")
	assert.Equal(t, int64(7), intAttr(item, AttrPages))
	assert.Zero(t, intAttr(item, "missing"))
	assert.Zero(t, intAttr(item, AttrCursor), "not a number")
	assert.Zero(t, intAttr(map[string]types.AttributeValue{"n": num("1.5")}, "n"), "not an integer")
}

// TestJudge: what the item read back after a lost answer says of a save.
func TestJudge(t *testing.T) {
	tbl := &Table{PartitionKey: "PK", SortKey: "SK", TypeAttribute: "Type", Delimiter: '#'}
	p := Progress{Entity: "E", Total: 1, Cursor: "c", Pages: 5}
	mine := tbl.item(p)
	fewer := tbl.item(Progress{Entity: "E", Total: 1, Pages: 4})
	other := tbl.item(Progress{Entity: "E", Total: 1, Cursor: "d", Pages: 5})
	more := tbl.item(Progress{Entity: "E", Total: 1, Pages: 6})
	foreign := tbl.item(p)
	foreign["Type"] = &types.AttributeValueMemberS{Value: "Order"}
	for name, c := range map[string]struct {
		cur  condwrite.Item
		want condwrite.Verdict
	}{
		"missing": {nil, condwrite.NotLanded}, "as written": {mine, condwrite.Landed}, "fewer pages": {fewer, condwrite.NotLanded},
		"as many pages, another cursor": {other, condwrite.Overtaken}, "more pages": {more, condwrite.Overtaken}, "not progress": {foreign, condwrite.Overtaken},
	} {
		assert.Equal(t, c.want, Judge(c.cur, mine, "Type", p.Pages), name)
	}
	assert.True(t, sameAV(&types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: true}))
	assert.False(t, sameAV(&types.AttributeValueMemberS{Value: "1"}, &types.AttributeValueMemberN{Value: "1"}))
	assert.False(t, sameAV(&types.AttributeValueMemberL{}, &types.AttributeValueMemberL{}), "not a kind the store writes")
}
