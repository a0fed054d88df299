package singletable

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type (
	rUnknownTag struct {
		_  struct{} `PK:"A#{id}" SK:"B" Foo:"x"`
		ID string   `dynamodbav:"id"`
	}
	rUnknownPlaceholder struct {
		_  struct{} `PK:"A#{nope}" SK:"B"`
		ID string   `dynamodbav:"id"`
	}
	rMissingSK struct {
		_  struct{} `PK:"A#{id}"`
		ID string   `dynamodbav:"id"`
	}
	rTableLacks struct {
		_  struct{} `PK:"A#{id}" SK:"B" GSI9PK:"X#{id}"`
		ID string   `dynamodbav:"id"`
	}
	rDup1 struct {
		_  struct{} `Type:"Same" PK:"A#{id}" SK:"B"`
		ID string   `dynamodbav:"id"`
	}
	rDup2 struct {
		_  struct{} `Type:"Same" PK:"C#{id}" SK:"D"`
		ID string   `dynamodbav:"id"`
	}
	rClashKey struct {
		_  struct{} `PK:"A#{id}" SK:"B"`
		ID string   `dynamodbav:"id"`
		PK string   `dynamodbav:"GSI1PK"`
	}
	rClashType struct {
		_    struct{} `PK:"A#{id}" SK:"B"`
		ID   string   `dynamodbav:"id"`
		Kind string   `dynamodbav:"Type"`
	}
	rUnsupported struct {
		_      struct{} `PK:"A#{id}" SK:"B"`
		ID     string   `dynamodbav:"id"`
		Events chan int `dynamodbav:"events"`
	}
	rBadOption struct {
		_    struct{} `PK:"A#{id}" SK:"B"`
		ID   string   `dynamodbav:"id"`
		Name string   `dynamodbav:"name,omitemtpy"`
	}
	rBadOwnTag struct {
		_    struct{} `PK:"A#{id}" SK:"B"`
		ID   string   `dynamodbav:"id"`
		Name string   `dynamodbav:"name" singletable:"verison"`
	}
	rFloatKey struct {
		_     struct{} `PK:"A#{price}" SK:"B"`
		Price float64  `dynamodbav:"price"`
	}
	rPadString struct {
		_  struct{} `PK:"A#{id:08}" SK:"B"`
		ID string   `dynamodbav:"id"`
	}
	rTimeFormatOnInt struct {
		_  struct{} `PK:"A#{id:date}" SK:"B"`
		ID int      `dynamodbav:"id"`
	}
	rHalfIndex struct {
		_  struct{} `PK:"A#{id}" SK:"B" GSI1PK:"X#{id}"`
		ID string   `dynamodbav:"id"`
	}
	rBadTemplate struct {
		_  struct{} `PK:"A#{id" SK:"B"`
		ID string   `dynamodbav:"id"`
	}
	rNoTags struct {
		ID string `dynamodbav:"id"`
	}
	rCollideA struct {
		_  struct{} `Type:"A" PK:"X#{id}" SK:"META"`
		ID string   `dynamodbav:"id"`
	}
	rCollideB struct {
		_    struct{} `Type:"B" PK:"X#{code}" SK:"META"`
		Code string   `dynamodbav:"code"`
	}
	rOK struct {
		_    struct{}  `PK:"A#{id}" SK:"T#{at:unixms}#{n:06}" GSI3PK:"N#{n}"`
		ID   string    `dynamodbav:"id"`
		At   time.Time `dynamodbav:"at"`
		N    *uint32   `dynamodbav:"n"`
		Rest string    `dynamodbav:"rest"`
	}
)

func TestRegisterErrors(t *testing.T) {
	type check struct {
		name   string
		reg    func(*Table) error
		field  string // Type.Field (or tag) the message must name
		reason string
	}
	reg := func(f func(*Table) error) func(*Table) error { return f }
	cases := []check{
		{"unknown tag", reg(func(t *Table) error { _, err := Register[rUnknownTag](t); return err }), "rUnknownTag.Foo", "unknown tag"},
		{"unknown placeholder", reg(func(t *Table) error { _, err := Register[rUnknownPlaceholder](t); return err }), "rUnknownPlaceholder.PK", "{nope}"},
		{"missing sort key", reg(func(t *Table) error { _, err := Register[rMissingSK](t); return err }), "rMissingSK.SK", "missing template"},
		{"attribute the table lacks", reg(func(t *Table) error { _, err := Register[rTableLacks](t); return err }), "rTableLacks.GSI9PK", "unknown tag"},
		{"duplicate discriminator", reg(func(t *Table) error {
			if _, err := Register[rDup1](t); err != nil {
				return err
			}
			_, err := Register[rDup2](t)
			return err
		}), "rDup2.Type", "already used by rDup1"},
		{"field named like a key", reg(func(t *Table) error { _, err := Register[rClashKey](t); return err }), "rClashKey.PK", "is a key, type, schema, receipt or incarnation attribute"},
		{"field named like the type", reg(func(t *Table) error { _, err := Register[rClashType](t); return err }), "rClashType.Kind", "is a key, type, schema, receipt or incarnation attribute"},
		{"unsupported type", reg(func(t *Table) error { _, err := Register[rUnsupported](t); return err }), "rUnsupported.Events", "chan"},
		{"unknown dynamodbav option", reg(func(t *Table) error { _, err := Register[rBadOption](t); return err }), "rBadOption.Name", "omitemtpy"},
		{"unknown singletable option", reg(func(t *Table) error { _, err := Register[rBadOwnTag](t); return err }), "rBadOwnTag.Name", "verison"},
		{"float key", reg(func(t *Table) error { _, err := Register[rFloatKey](t); return err }), "rFloatKey.Price", "cannot be part of a key"},
		{"padded string", reg(func(t *Table) error { _, err := Register[rPadString](t); return err }), "rPadString.ID", "pads integers"},
		{"time format on int", reg(func(t *Table) error { _, err := Register[rTimeFormatOnInt](t); return err }), "rTimeFormatOnInt.ID", "time.Time"},
		{"half an index", reg(func(t *Table) error { _, err := Register[rHalfIndex](t); return err }), "rHalfIndex.GSI1SK", "both of its key attributes"},
		{"bad template", reg(func(t *Table) error { _, err := Register[rBadTemplate](t); return err }), "rBadTemplate.PK", "unclosed"},
		{"no tags", reg(func(t *Table) error { _, err := Register[rNoTags](t); return err }), "rNoTags", "no blank field"},
		{"not a struct", reg(func(t *Table) error { _, err := Register[int](t); return err }), "int", "struct"},
		{"colliding templates", reg(func(t *Table) error {
			if _, err := Register[rCollideA](t); err != nil {
				return err
			}
			_, err := Register[rCollideB](t)
			return err
		}), "rCollideB.SK", "collide"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.reg(offlineTable(t))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidEntity)
			var ee *EntityError
			require.ErrorAs(t, err, &ee)
			assert.Contains(t, err.Error(), c.field)
			assert.Contains(t, err.Error(), c.reason)
		})
	}
}

func TestRegisterOK(t *testing.T) {
	tbl := offlineTable(t)
	e, err := Register[rOK](tbl)
	require.NoError(t, err)
	assert.Equal(t, "rOK", e.Type(), "the discriminator defaults to the Go type name")
	_, err = Register[rOK](tbl)
	assert.ErrorIs(t, err, ErrInvalidEntity, "registering a type twice")
}

func TestNewTableErrors(t *testing.T) {
	c := offlineTable(t).Client()
	for name, f := range map[string]func() error{
		"short name": func() error { _, err := NewTable(c, "ab"); return err },
		"bad name":   func() error { _, err := NewTable(c, "a b c"); return err },
		"nil client": func() error { _, err := NewTable(nil, "abc"); return err },
		"same keys":  func() error { _, err := NewTable(c, "abc", WithKeys("K", "K")); return err },
		"type is key": func() error {
			_, err := NewTable(c, "abc", WithTypeAttribute("SK"))
			return err
		},
		"bad delimiter": func() error { _, err := NewTable(c, "abc", WithDelimiter('a')); return err },
		"schema is type": func() error {
			_, err := NewTable(c, "abc", WithSchemaAttribute("Type"))
			return err
		},
		"incarnation is a receipt slot": func() error {
			_, err := NewTable(c, "abc", WithIncarnationAttribute("_wr0"))
			return err
		},
		"TTL is a key": func() error {
			_, err := NewTable(c, "abc", WithTTLAttribute("PK"))
			return err
		},
		"schema is an index key": func() error {
			_, err := NewTable(c, "abc", WithIndex("GSI1", "GSI1PK", "GSI1SK"), WithSchemaAttribute("GSI1SK"))
			return err
		},
		"type is a receipt slot": func() error {
			_, err := NewTable(c, "abc", WithReceiptAttribute("T"), WithTypeAttribute("Tu"))
			return err
		},
		"index twice": func() error {
			_, err := NewTable(c, "abc", WithIndex("I", "A", "B"), WithIndex("I", "C", "D"))
			return err
		},
	} {
		err := f()
		var ke *KeyError
		if !errors.As(err, &ke) { // a bad delimiter is a KeyError
			assert.ErrorIs(t, err, ErrInvalidInput, name)
		}
	}
	tbl, err := NewTable(c, "abc", WithIncarnationAttribute("_born"))
	require.NoError(t, err)
	assert.Equal(t, "_born", tbl.Options().IncarnationAttribute)
}

// TestRegisterNilTable (issue 30, scenario 12): Register on the nil *Table of a
// NewTable whose error was ignored returns an error that says so, and so does
// every write entry point called on the nil *Entity or nil *Table that follows:
// none panics, none sends anything.
func TestRegisterNilTable(t *testing.T) {
	tbl, err := NewTable(nil, "")
	require.Error(t, err)
	require.Nil(t, tbl)
	e, err := Register[vTask](tbl)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "the *Table is nil")
	require.Nil(t, e)
	_, err = Register[vTask](offlineTable(t), nil)
	assert.ErrorIs(t, err, ErrInvalidEntity, "a nil option")

	ctx := context.Background()
	calls := map[string]func() error{
		"Put":    func() error { _, err := e.Put(ctx, vTask{ID: "a"}); return err },
		"Create": func() error { _, err := e.Create(ctx, vTask{ID: "a"}); return err },
		"Update": func() error { _, err := e.Update(ctx, vTask{ID: "a"}, Set("id", "b")); return err },
		"Delete": func() error { return e.Delete(ctx, vTask{ID: "a"}) },
		"Mutate": func() error {
			_, err := e.Mutate(ctx, vTask{ID: "a"}, func(*vTask) error { return nil })
			return err
		},
		"BatchPut":    func() error { _, err := e.BatchPut(ctx, []vTask{{ID: "a"}}); return err },
		"BatchDelete": func() error { _, err := e.BatchDelete(ctx, []vTask{{ID: "a"}}); return err },
		"Key":         func() error { _, err := e.Key(vTask{ID: "a"}); return err },
		"ParseKey":    func() error { _, err := e.ParseKey(map[string]string{"PK": "VT#a", "SK": "VT"}); return err },
		"TxPut":       func() error { return offlineTable(t).Transact(ctx, e.TxPut(vTask{ID: "a"})) },
		"TxCreate":    func() error { return offlineTable(t).Transact(ctx, e.TxCreate(vTask{ID: "a"})) },
		"TxUpdate":    func() error { return offlineTable(t).Transact(ctx, e.TxUpdate(vTask{ID: "a"}, Set("id", "b"))) },
		"TxDelete":    func() error { return offlineTable(t).Transact(ctx, e.TxDelete(vTask{ID: "a"})) },
		"TxCheck": func() error {
			return offlineTable(t).Transact(ctx, e.TxCheck(vTask{ID: "a"}, expression.AttributeExists(expression.Name("id"))))
		},
		"BatchPutItem":     func() error { _, err := offlineTable(t).BatchWrite(ctx, e.BatchPutItem(vTask{ID: "a"})); return err },
		"BatchDeleteItem":  func() error { _, err := offlineTable(t).BatchWrite(ctx, e.BatchDeleteItem(vTask{ID: "a"})); return err },
		"Table.Transact":   func() error { return tbl.Transact(ctx) },
		"Table.BatchWrite": func() error { _, err := tbl.BatchWrite(ctx); return err },
	}
	for name, call := range calls {
		var err error
		assert.NotPanics(t, func() { err = call() }, name)
		assert.ErrorIs(t, err, ErrInvalidInput, name)
	}
	assert.Nil(t, e.Table())
	assert.Equal(t, "", e.Type())
}

// TestNilAndZeroEntityEveryCall: every call of a nil *Entity (Register failed and
// its error was ignored) and of a zero Entity (not made by Register) returns an
// error matching ErrInvalidInput that names the type and the mistake, reads and
// iterators included, and never panics; so do a nil *Collection's.
func TestNilAndZeroEntityEveryCall(t *testing.T) {
	ctx := context.Background()
	k := vTask{ID: "a"}
	for _, c := range []struct {
		name string
		e    *Entity[vTask]
		says string
	}{
		{"nil", nil, "the *Entity is nil (was the error of Register ignored?)"},
		{"zero", &Entity[vTask]{}, "the Entity is a zero value; make it with Register"},
	} {
		e := c.e
		iterErr := func(seq func(yield func(vTask, error) bool)) error {
			var last error
			for _, err := range seq {
				last = err
			}
			return last
		}
		partialErr := func(seq func(yield func(Partial[vTask], error) bool)) error {
			var last error
			for _, err := range seq {
				last = err
			}
			return last
		}
		calls := map[string]func() error{
			"Get":         func() error { _, err := e.Get(ctx, k); return err },
			"Put":         func() error { _, err := e.Put(ctx, k); return err },
			"Create":      func() error { _, err := e.Create(ctx, k); return err },
			"Update":      func() error { _, err := e.Update(ctx, k, Set("id", "b")); return err },
			"Delete":      func() error { return e.Delete(ctx, k) },
			"Mutate":      func() error { _, err := e.Mutate(ctx, k, func(*vTask) error { return nil }); return err },
			"Query":       func() error { _, err := e.Query(ctx, k); return err },
			"All":         func() error { return iterErr(e.All(ctx, k)) },
			"Scan":        func() error { _, err := e.Scan(ctx); return err },
			"ScanAll":     func() error { return iterErr(e.ScanAll(ctx)) },
			"Count":       func() error { _, err := e.Count(ctx, k); return err },
			"ScanCount":   func() error { _, err := e.ScanCount(ctx); return err },
			"QueryShards": func() error { _, err := e.QueryShards(ctx, k); return err },
			"AllShards":   func() error { return iterErr(e.AllShards(ctx, k)) },
			"BatchGet":    func() error { _, err := e.BatchGet(ctx, []vTask{k}); return err },
			"BatchPut":    func() error { _, err := e.BatchPut(ctx, []vTask{k}); return err },
			"BatchDelete": func() error { _, err := e.BatchDelete(ctx, []vTask{k}); return err },
			"WaitIndexed": func() error { _, _, err := e.WaitIndexed(ctx, "GSI1", k); return err },
			"WaitUnindexed": func() error {
				_, err := e.WaitUnindexed(ctx, "GSI1", k)
				return err
			},
			"WaitMoved":         func() error { _, err := e.WaitMoved(ctx, "GSI1", k, k); return err },
			"Sweep":             func() error { _, err := e.Sweep(ctx); return err },
			"SweepUnique":       func() error { _, err := e.SweepUnique(ctx); return err },
			"Key":               func() error { _, err := e.Key(k); return err },
			"ParseKey":          func() error { _, err := e.ParseKey(map[string]string{"PK": "x", "SK": "y"}); return err },
			"Project.Get":       func() error { _, err := e.Project("id").Get(ctx, k); return err },
			"Project.Query":     func() error { _, err := e.Project("id").Query(ctx, k); return err },
			"Project.All":       func() error { return partialErr(e.Project("id").All(ctx, k)) },
			"Project.Scan":      func() error { _, err := e.Project("id").Scan(ctx); return err },
			"Project.ScanAll":   func() error { return partialErr(e.Project("id").ScanAll(ctx)) },
			"Project.BatchGet":  func() error { _, err := e.Project("id").BatchGet(ctx, []vTask{k}); return err },
			"Ref.Value":         func() error { _, err := e.Ref(k).Value(); return err },
			"Table.TransactGet": func() error { return offlineTable(t).TransactGet(ctx, e.Ref(k)) },
			"TxPut":             func() error { return offlineTable(t).Transact(ctx, e.TxPut(k)) },
			"BatchPutItem": func() error {
				_, err := offlineTable(t).BatchWrite(ctx, e.BatchPutItem(k))
				return err
			},
		}
		for name, call := range calls {
			var err error
			assert.NotPanics(t, func() { err = call() }, "%s %s", c.name, name)
			if assert.ErrorIs(t, err, ErrInvalidInput, "%s %s", c.name, name) {
				assert.Contains(t, err.Error(), c.says, "%s %s", c.name, name)
				assert.Contains(t, err.Error(), "vTask", "%s %s", c.name, name)
			}
		}
		assert.Equal(t, "", e.Type())
		assert.Nil(t, e.Table())
	}
	var coll *Collection[struct {
		Tasks []vTask `singletable:"VTask"`
	}]
	assert.NotPanics(t, func() {
		_, err := coll.Query(ctx, "x")
		assert.ErrorIs(t, err, ErrInvalidInput)
		_, err = coll.Load(ctx, "x")
		assert.ErrorIs(t, err, ErrInvalidInput)
	})
}
