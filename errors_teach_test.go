package singletable

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

// teachDoc is a versioned entity of the tests of errors that teach (issue 38).
type teachDoc struct {
	_       struct{} `Type:"TeachDoc" PK:"DOC#{id}" SK:"DOC"`
	ID      string   `dynamodbav:"id"`
	Title   string   `dynamodbav:"title"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

// assertTeaches asserts err's text names each of words and says
// "singletable:" once.
func assertTeaches(t *testing.T, err error, words ...string) {
	t.Helper()
	require.Error(t, err)
	for _, w := range words {
		assert.Contains(t, err.Error(), w)
	}
	assert.Equal(t, 1, prefixes(err), "%v", err)
}

// tagMention is `singletable:"..."` in a message: a struct tag quoted (in a Go
// type or in a hint such as singletable:"shards=N,shardBy=id"), not the prefix.
var tagMention = regexp.MustCompile(`singletable:\\?"`)

// prefixes counts the "singletable:" of err's text that are not tags quoted.
func prefixes(err error) int {
	text := err.Error()
	return strings.Count(text, "singletable:") - len(tagMention.FindAllString(text, -1))
}

// TestErrorMissingTableNamesTableAndFix: every call on a table that does not
// exist fails with an error naming the call, the entity and the table, and how
// to make the table; the SDK's ResourceNotFoundException stays in the chain.
func TestErrorMissingTableNamesTableAndFix(t *testing.T) {
	ctx := context.Background()
	name := localtest.TableName(t)
	tbl, err := NewTable(local.Client(t), name)
	require.NoError(t, err)
	docs := MustRegister[teachDoc](tbl)
	fix := "create it with Table.CreateTable (or make it with your infrastructure: Table.Definition)"
	table := `table "` + name + `" does not exist`

	check := func(call string, err error, words ...string) {
		t.Helper()
		var rnf *types.ResourceNotFoundException
		assert.True(t, errors.As(err, &rnf), "%s: %v", call, err)
		assertTeaches(t, err, append([]string{table, fix}, words...)...)
	}
	_, err = docs.Put(ctx, teachDoc{ID: "d1"})
	check("Put", err, "Put teachDoc")
	_, err = docs.Create(ctx, teachDoc{ID: "d1"})
	check("Create", err, "Create teachDoc")
	_, err = docs.Get(ctx, teachDoc{ID: "d1"})
	check("Get", err, "Get teachDoc")
	_, err = docs.Update(ctx, teachDoc{ID: "d1"}, Set("title", "x"))
	check("Update", err, "Update teachDoc")
	err = docs.Delete(ctx, teachDoc{ID: "d1"})
	check("Delete", err, "Delete teachDoc")
	_, err = docs.Query(ctx, teachDoc{ID: "d1"})
	check("Query", err, "teachDoc")
	err = tbl.Transact(ctx, docs.TxPut(teachDoc{ID: "d1"}))
	check("Transact", err, "Transact")
	_, err = tbl.Query(ctx, teachDoc{ID: "d1"})
	check("Table.Query", err, "Query")
}

// TestErrorVersionZeroSaysPassTheVersion: a versioned Update or Delete (or
// Put) given a key value at version 0 while the stored item has a version
// says to pass the version read, or Clobber().
func TestErrorVersionZeroSaysPassTheVersion(t *testing.T) {
	ctx := context.Background()
	tbl, _ := newTestTable(t)
	docs := MustRegister[teachDoc](tbl)
	stored, err := docs.Put(ctx, teachDoc{ID: "d1", Title: "a"})
	require.NoError(t, err)
	require.Equal(t, int64(1), stored.Version)

	fix := []string{"expected version 0, found 1", "holds version 0", "version field", "pass the version read", "Clobber()"}
	_, err = docs.Update(ctx, teachDoc{ID: "d1"}, Set("title", "b"))
	assert.ErrorIs(t, err, ErrConflict)
	assertTeaches(t, err, append([]string{"Update teachDoc"}, fix...)...)

	err = docs.Delete(ctx, teachDoc{ID: "d1"})
	assert.ErrorIs(t, err, ErrConflict)
	assertTeaches(t, err, append([]string{"Delete teachDoc"}, fix...)...)

	_, err = docs.Put(ctx, teachDoc{ID: "d1", Title: "c"})
	assert.ErrorIs(t, err, ErrConflict)
	assertTeaches(t, err, append([]string{"Put teachDoc"}, fix...)...)

	// The fix works: the version read, or Clobber().
	got, err := docs.Update(ctx, stored, Set("title", "b"))
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Version)
	require.NoError(t, docs.Delete(ctx, teachDoc{ID: "d1"}, Clobber()))

	// A version that moved says nothing of version 0.
	_, err = docs.Put(ctx, teachDoc{ID: "d2"})
	require.NoError(t, err)
	_, err = docs.Update(ctx, teachDoc{ID: "d2", Version: 5}, Set("title", "b"))
	assert.ErrorIs(t, err, ErrConflict)
	assert.NotContains(t, err.Error(), "holds version 0")
}

// TestErrorZeroTable: a zero Table, or a nil *Table, is an error naming the
// mistake from Register, NewCollection and every call of the table, never a
// panic or a garbled message.
func TestErrorZeroTable(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		tbl  *Table
		says string
	}{
		{"zero", &Table{}, "the Table is a zero value; make it with NewTable"},
		{"nil", nil, "the *Table is nil (was the error of NewTable ignored?)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbl := c.tbl
			check := func(call string, err error) {
				t.Helper()
				assert.ErrorIs(t, err, ErrInvalidInput, call)
				assertTeaches(t, err, call, c.says)
				assert.NotContains(t, err.Error(), "has key attributes")
			}
			_, err := Register[teachDoc](tbl)
			check("Register[singletable.teachDoc]", err)
			assert.Panics(t, func() { MustRegister[teachDoc](tbl) })
			_, err = NewCollection[struct {
				Docs []teachDoc `singletable:"TeachDoc"`
			}](tbl)
			check("NewCollection", err)
			_, err = tbl.BatchGet(ctx, nil)
			check("Table.BatchGet", err)
			_, err = tbl.BatchWrite(ctx)
			check("BatchWrite", err)
			_, err = tbl.Query(ctx, "DOC#d1")
			check("Table.Query", err)
			for _, err := range tbl.All(ctx, "DOC#d1") {
				check("Table.All", err)
			}
			_, err = tbl.Count(ctx, "DOC#d1")
			check("Table.Count", err)
			_, err = tbl.ScanCount(ctx)
			check("Table.ScanCount", err)
			_, err = tbl.Scan(ctx)
			check("Table.Scan", err)
			for _, err := range tbl.ScanAll(ctx) {
				check("Table.ScanAll", err)
			}
			_, err = tbl.Decode(RawItem{})
			check("Table.Decode", err)
			_, _, err = tbl.DecodeRecord(StreamRecord{})
			check("Table.DecodeRecord", err)
			_, err = tbl.CreateTableInput()
			check("Table.CreateTableInput", err)
			_, err = tbl.Definition()
			check("Table.Definition", err)
			_, err = tbl.CreateIndexInput("GSI1")
			check("Table.CreateIndexInput", err)
			check("Table.CreateTable", tbl.CreateTable(ctx))
			check("Table.DeleteTable", tbl.DeleteTable(ctx))
			check("Table.EnableTTL", tbl.EnableTTL(ctx))
			check("Table.Transact", tbl.Transact(ctx))
			check("Table.TransactWith", tbl.TransactWith(ctx, TxOptions{}))
			check("Table.TransactGet", tbl.TransactGet(ctx))
			assert.NotPanics(t, func() {
				tbl.Close()
				_ = tbl.Name()
				_ = tbl.Options()
				_ = tbl.TTLAttribute()
				_ = tbl.Client()
				_ = tbl.Describe()
			})
		})
	}
}

// teachUnique has a unique field, for the prefix test.
type teachUnique struct {
	_     struct{} `Type:"TeachUnique" PK:"U#{id}" SK:"U"`
	ID    string   `dynamodbav:"id"`
	Email string   `dynamodbav:"email" singletable:"unique"`
}

// teachShard is sharded at random, for the prefix test.
type teachShard struct {
	_     struct{}  `Type:"TeachShard" PK:"S#{day:date}#{shard}" SK:"{id}" singletable:"shards=4"`
	Day   time.Time `dynamodbav:"day"`
	ID    string    `dynamodbav:"id"`
	Shard int       `dynamodbav:"shard" singletable:"shard"`
}

// TestErrorPrefixOnce: an error's text says "singletable:" once, for a
// representative error of every call kind: a bad key, a nil or zero entity,
// invalid input, a failed condition, a conflict, a missing table.
func TestErrorPrefixOnce(t *testing.T) {
	ctx := context.Background()
	tbl, _ := newTestTable(t)
	docs := MustRegister[teachDoc](tbl)
	uniq := MustRegister[teachUnique](tbl)
	shards := MustRegister[teachShard](tbl)
	_, err := docs.Put(ctx, teachDoc{ID: "d1"})
	require.NoError(t, err)
	_, err = uniq.Put(ctx, teachUnique{ID: "u1", Email: "a@example.com"})
	require.NoError(t, err)

	var nilCtx context.Context // a caller's mistake
	var nilDocs *Entity[teachDoc]
	var zeroDocs Entity[teachDoc]
	coll, err := NewCollection[struct {
		Docs []teachDoc `singletable:"TeachDoc"`
	}](tbl)
	require.NoError(t, err)
	noTable, err := NewTable(local.Client(t), localtest.TableName(t)+"-missing")
	require.NoError(t, err)
	missing := MustRegister[teachDoc](noTable)

	errs := map[string]func() error{
		"Get bad key":      func() error { _, err := docs.Get(ctx, teachDoc{}); return err },
		"Put bad key":      func() error { _, err := docs.Put(ctx, teachDoc{ID: "a#b"}); return err },
		"Update bad key":   func() error { _, err := docs.Update(ctx, teachDoc{}, Set("title", "x")); return err },
		"Delete bad key":   func() error { return docs.Delete(ctx, teachDoc{}) },
		"BatchGet bad key": func() error { _, err := docs.BatchGet(ctx, []teachDoc{{}}); return err },
		"BatchPut bad key": func() error { _, err := docs.BatchPut(ctx, []teachDoc{{}}); return err },
		"Query nil option": func() error { _, err := docs.Query(ctx, teachDoc{ID: "d1"}, nil); return err },
		"Query bad cursor": func() error { _, err := docs.Query(ctx, teachDoc{ID: "d1"}, After("nope")); return err },
		"Get nil entity":   func() error { _, err := nilDocs.Get(ctx, teachDoc{ID: "d1"}); return err },
		"Put zero entity":  func() error { _, err := zeroDocs.Put(ctx, teachDoc{ID: "d1"}); return err },
		"Get nil context":  func() error { _, err := docs.Get(nilCtx, teachDoc{ID: "d1"}); return err },
		"Create exists":    func() error { _, err := docs.Create(ctx, teachDoc{ID: "d1"}); return err },
		"Put condition": func() error {
			_, err := docs.Put(ctx, teachDoc{ID: "d1", Version: 1}, If(expression.Name("title").Equal(expression.Value("no"))))
			return err
		},
		"Update conflict": func() error {
			_, err := docs.Update(ctx, teachDoc{ID: "d1", Version: 7}, Set("title", "x"))
			return err
		},
		"Update missing": func() error {
			_, err := docs.Update(ctx, teachDoc{ID: "nobody", Version: 1}, Set("title", "x"))
			return err
		},
		"Get not found":       func() error { _, err := docs.Get(ctx, teachDoc{ID: "nobody"}); return err },
		"Mutate nil func":     func() error { _, err := docs.Mutate(ctx, teachDoc{ID: "d1"}, nil); return err },
		"Put not unique":      func() error { _, err := uniq.Put(ctx, teachUnique{ID: "u2", Email: "a@example.com"}); return err },
		"Create random shard": func() error { _, err := shards.Create(ctx, teachShard{ID: "s1", Day: time.Now()}); return err },
		"Transact condition":  func() error { return tbl.Transact(ctx, docs.TxCreate(teachDoc{ID: "d1"})) },
		"Transact bad key":    func() error { return tbl.Transact(ctx, docs.TxPut(teachDoc{})) },
		"BatchWrite dup": func() error {
			_, err := tbl.BatchWrite(ctx, docs.BatchPutItem(teachDoc{ID: "x"}), docs.BatchPutItem(teachDoc{ID: "x"}))
			return err
		},
		"Collection nil key": func() error { _, err := tbl.Query(ctx, nil); return err },
		"Collection.Query":   func() error { _, err := coll.Query(ctx, nil); return err },
		"Register bad tag": func() error {
			type bad struct {
				_  struct{} `Type:"Bad" PK:"B#{id}" SK:"B" Nope:"x"`
				ID string   `dynamodbav:"id"`
			}
			_, err := Register[bad](tbl)
			return err
		},
		"Put missing table":   func() error { _, err := missing.Put(ctx, teachDoc{ID: "d1"}); return err },
		"Register zero table": func() error { _, err := Register[teachDoc](&Table{}); return err },
		"WaitFor nil context": func() error {
			_, _, err := WaitFor(nilCtx, func(context.Context) (bool, error) { return true, nil }, func(bool) bool { return true })
			return err
		},
	}
	for name, call := range errs {
		err := call()
		if !assert.Error(t, err, name) {
			continue
		}
		assert.Equal(t, 1, prefixes(err), "%s: %v", name, err)
	}
}
