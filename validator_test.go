package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/fault"
)

var errNoTitle = errors.New("a task needs a title")

// vdTask has defaults (one feeding an index key), a Validate method and, when
// registered so, a FieldValidator on priority.
type vdTask struct {
	_        struct{}   `Type:"VdTask" PK:"TASK#{id}" SK:"TASK" GSI1PK:"STATUS#{status}" GSI1SK:"{id}"`
	ID       string     `dynamodbav:"id"`
	Status   string     `dynamodbav:"status" singletable:"default=OPEN"`
	Priority int        `dynamodbav:"priority" singletable:"default=3"`
	Due      *time.Time `dynamodbav:"due,omitempty" singletable:"default=2030-01-01T00:00:00Z"`
	Weight   float64    `dynamodbav:"weight" singletable:"default=0.5"`
	Done     bool       `dynamodbav:"done"`
	Title    string     `dynamodbav:"title"`
	Version  int64      `dynamodbav:"version" singletable:"version"`
}

func (v vdTask) Validate() error {
	if v.Title == "" {
		return errNoTitle
	}
	return nil
}

var errPriority = errors.New("priority is 1 to 5")

func checkPriority(p int) error {
	if p < 1 || p > 5 {
		return fmt.Errorf("%d: %w", p, errPriority)
	}
	return nil
}

// TestDefaultsBeforeKeyRendering: zero fields take their defaults before the keys
// are rendered, in every write of a whole item; a value set is kept.
func TestDefaultsBeforeKeyRendering(t *testing.T) {
	tbl, _ := newTestTable(t)
	tasks := MustRegister[vdTask](tbl)
	ctx := context.Background()

	put, err := tasks.Put(ctx, vdTask{ID: "t1", Title: "a"})
	require.NoError(t, err)
	assert.Equal(t, "OPEN", put.Status, "the value returned holds the defaults")
	assert.Equal(t, 3, put.Priority)
	require.NotNil(t, put.Due)
	assert.True(t, put.Due.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
	item := rawItem(t, tbl, "TASK#t1", "TASK")
	assert.Equal(t, "STATUS#OPEN", item["GSI1PK"].(*types.AttributeValueMemberS).Value, "the index key renders the default")
	assert.Equal(t, "OPEN", item["status"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, "3", item["priority"].(*types.AttributeValueMemberN).Value)
	assert.Equal(t, "0.5", item["weight"].(*types.AttributeValueMemberN).Value)
	assert.Equal(t, "2030-01-01T00:00:00Z", item["due"].(*types.AttributeValueMemberS).Value)

	// A value the caller set is kept.
	_, err = tasks.Create(ctx, vdTask{ID: "t2", Title: "b", Status: "DONE", Priority: 1})
	require.NoError(t, err)
	item = rawItem(t, tbl, "TASK#t2", "TASK")
	assert.Equal(t, "STATUS#DONE", item["GSI1PK"].(*types.AttributeValueMemberS).Value)
	assert.Equal(t, "1", item["priority"].(*types.AttributeValueMemberN).Value)

	// BatchPut and transactions too.
	_, err = tasks.BatchPut(ctx, []vdTask{{ID: "t3", Title: "c"}})
	require.NoError(t, err)
	assert.Equal(t, "STATUS#OPEN", rawItem(t, tbl, "TASK#t3", "TASK")["GSI1PK"].(*types.AttributeValueMemberS).Value)
	require.NoError(t, tbl.Transact(ctx, tasks.TxCreate(vdTask{ID: "t4", Title: "d"})))
	assert.Equal(t, "STATUS#OPEN", rawItem(t, tbl, "TASK#t4", "TASK")["GSI1PK"].(*types.AttributeValueMemberS).Value)
	page, err := tasks.Query(ctx, vdTask{Status: "OPEN"}, On("GSI1"))
	require.NoError(t, err)
	assert.Len(t, page.Items, 3, "t1, t3 and t4 are in the OPEN partition of GSI1")
}

// TestDefaultsRegistrationErrors: a default that does not parse for its field's
// type is refused at Register, naming the entity, the field and the attribute.
func TestDefaultsRegistrationErrors(t *testing.T) {
	tbl := offlineTable(t)
	type badInt struct {
		_  struct{} `PK:"A#{id}" SK:"A"`
		ID string   `dynamodbav:"id"`
		N  int8     `dynamodbav:"n" singletable:"default=300"`
	}
	type badTime struct {
		_  struct{}  `PK:"B#{id}" SK:"B"`
		ID string    `dynamodbav:"id"`
		At time.Time `dynamodbav:"at" singletable:"default=yesterday"`
	}
	type badKind struct {
		_    struct{} `PK:"C#{id}" SK:"C"`
		ID   string   `dynamodbav:"id"`
		Tags []string `dynamodbav:"tags" singletable:"default=a"`
	}
	type badUTF8 struct {
		_  struct{} `PK:"D#{id}" SK:"D"`
		ID string   `dynamodbav:"id"`
		S  string   `dynamodbav:"s" singletable:"default=\xff"`
	}
	for name, reg := range map[string]func() error{
		"int8 300":      func() error { _, err := Register[badInt](tbl); return err },
		"time":          func() error { _, err := Register[badTime](tbl); return err },
		"slice":         func() error { _, err := Register[badKind](tbl); return err },
		"invalid UTF-8": func() error { _, err := Register[badUTF8](tbl); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := reg()
			require.ErrorIs(t, err, ErrInvalidEntity)
			var ee *EntityError
			require.ErrorAs(t, err, &ee)
			assert.NotEmpty(t, ee.Field)
			assert.Contains(t, err.Error(), "attribute")
			t.Log(err)
		})
	}
}

// requests returns the requests an injector has seen, by operation.
func requests(inj *fault.Injector) map[string]int { return maps.Clone(inj.Stats().Requests) }

// TestValidationRefusesBeforeSending: a value its validation refuses is never
// sent, whatever the write: Put, Create, BatchPut, transactions, Update (a
// FieldValidator on the value it Sets) and Mutate. Requests are counted at the
// HTTP layer.
func TestValidationRefusesBeforeSending(t *testing.T) {
	tbl, inj := faultTable(t)
	tasks := MustRegister[vdTask](tbl, FieldValidator[vdTask, int]("priority", checkPriority))
	ctx := context.Background()
	good, err := tasks.Put(ctx, vdTask{ID: "ok", Title: "fine"})
	require.NoError(t, err)

	checkRefused := func(t *testing.T, err error, want error, field string) {
		t.Helper()
		require.ErrorIs(t, err, ErrValidation)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorIs(t, err, want, "the check's own error is wrapped")
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "vdTask", ve.Entity)
		assert.Equal(t, field, ve.Field)
		assert.Contains(t, err.Error(), "vdTask")
	}
	cases := []struct {
		name  string
		call  func() error
		want  error
		field string
	}{
		{"Put", func() error { _, err := tasks.Put(ctx, vdTask{ID: "x"}); return err }, errNoTitle, ""},
		{"Create", func() error { _, err := tasks.Create(ctx, vdTask{ID: "x"}); return err }, errNoTitle, ""},
		{"Put, field", func() error { _, err := tasks.Put(ctx, vdTask{ID: "x", Title: "t", Priority: 9}); return err }, errPriority, "Priority"},
		{"BatchPut", func() error {
			_, err := tasks.BatchPut(ctx, []vdTask{{ID: "y", Title: "fine"}, {ID: "x"}})
			return err
		}, errNoTitle, ""},
		{"TxPut", func() error {
			return tbl.Transact(ctx, tasks.TxPut(vdTask{ID: "y", Title: "fine"}), tasks.TxPut(vdTask{ID: "x"}))
		}, errNoTitle, ""},
		{"TxCreate", func() error { return tbl.Transact(ctx, tasks.TxCreate(vdTask{ID: "x", Priority: 2})) }, errNoTitle, ""},
		{"TxUpdate", func() error { return tbl.Transact(ctx, tasks.TxUpdate(good, Set("priority", 7))) }, errPriority, "Priority"},
		{"Update", func() error { _, err := tasks.Update(ctx, good, Set("priority", 0)); return err }, errPriority, "Priority"},
		{"Update SetIfNotExists", func() error { _, err := tasks.Update(ctx, good, SetIfNotExists("priority", 6)); return err }, errPriority, "Priority"},
		{"Mutate", func() error {
			_, err := tasks.Mutate(ctx, vdTask{ID: "ok"}, func(v *vdTask) error { v.Title = ""; return nil })
			return err
		}, errNoTitle, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := requests(inj)
			err := c.call()
			checkRefused(t, err, c.want, c.field)
			after := requests(inj)
			if c.name == "Mutate" { // Mutate reads before its function runs; nothing is written
				before["GetItem"]++
			}
			assert.Equal(t, before, after, "nothing sent")
		})
	}
	got, err := tasks.Get(ctx, vdTask{ID: "ok"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, good, got, "the stored item is as it was")
	_, err = tasks.Get(ctx, vdTask{ID: "y"})
	assert.ErrorIs(t, err, ErrNotFound, "no item of a refused batch or transaction was written")
}

// TestValidatorRegistration: Validator and FieldValidator check their types at
// Register.
func TestValidatorRegistration(t *testing.T) {
	tbl := offlineTable(t)
	_, err := Register[vdTask](tbl, FieldValidator[vdTask, string]("priority", func(string) error { return nil }))
	assert.ErrorIs(t, err, ErrInvalidEntity, "priority is an int")
	_, err = Register[vdTask](tbl, FieldValidator[vdTask, int]("priorty", checkPriority))
	assert.ErrorIs(t, err, ErrInvalidEntity, "no attribute priorty")
	assert.Contains(t, err.Error(), `did you mean "priority"`)
	_, err = Register[vdTask](tbl, Validator[vTask](func(vTask) error { return nil }))
	assert.ErrorIs(t, err, ErrInvalidEntity, "a validator of another type")

	// A registered Validator runs as the method does.
	tbl2 := offlineTable(t)
	calls := 0
	tasks := MustRegister[vdTask](tbl2, Validator[vdTask](func(v vdTask) error {
		calls++
		if v.Status == "BAD" {
			return errors.New("bad status")
		}
		return nil
	}))
	_, err = tasks.Put(context.Background(), vdTask{ID: "a", Title: "t", Status: "BAD"})
	assert.ErrorIs(t, err, ErrValidation)
	assert.Equal(t, 1, calls)
}

type vTask struct {
	_  struct{} `PK:"VT#{id}" SK:"VT"`
	ID string   `dynamodbav:"id"`
}

// rmTask has a title that its FieldValidator (registered by the test) and its
// Validate method both need.
type rmTask struct {
	_       struct{} `Type:"RmTask" PK:"RM#{id}" SK:"RM"`
	ID      string   `dynamodbav:"id"`
	Title   string   `dynamodbav:"title"`
	Note    string   `dynamodbav:"note"`
	Version int64    `dynamodbav:"version" singletable:"version"`
}

func (v rmTask) Validate() error {
	if v.Title == "" {
		return errNoTitle
	}
	return nil
}

func checkTitle(s string) error {
	if s == "" {
		return errNoTitle
	}
	return nil
}

// TestRemoveOfValidatedFieldIsChecked (issue 30, scenario 5): Remove of a field
// with a FieldValidator is checked as a Set of its zero value is, in Update and
// TxUpdate, and refused before anything is sent; the item keeps a value that
// passes its checks, so a later Mutate (which validates the whole item) works.
func TestRemoveOfValidatedFieldIsChecked(t *testing.T) {
	tbl, inj := faultTable(t)
	tasks := MustRegister[rmTask](tbl, FieldValidator[rmTask, string]("title", checkTitle))
	ctx := context.Background()
	v, err := tasks.Put(ctx, rmTask{ID: "a", Title: "t", Note: "n"})
	require.NoError(t, err)

	before := requests(inj)
	_, err = tasks.Update(ctx, v, Set("title", ""))
	require.ErrorIs(t, err, ErrValidation, "Set of the zero value")
	_, err = tasks.Update(ctx, v, Remove("title"))
	require.ErrorIs(t, err, ErrValidation, "Remove is checked as a Set of the zero value is")
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Title", ve.Field)
	assert.ErrorIs(t, err, errNoTitle)
	_, err = tasks.Update(ctx, v, Set("note", "m"), Remove("title"))
	require.ErrorIs(t, err, ErrValidation, "whatever else the update changes")
	err = tbl.Transact(ctx, tasks.TxUpdate(v, Remove("title")))
	require.ErrorIs(t, err, ErrValidation, "TxUpdate too")
	assert.Equal(t, before, requests(inj), "nothing was sent")

	got, err := tasks.Get(ctx, rmTask{ID: "a"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "t", got.Title, "the title is still stored")
	// A field without checks may be removed; the item stays valid for Mutate.
	got, err = tasks.Update(ctx, got, Remove("note"))
	require.NoError(t, err)
	assert.Equal(t, "", got.Note)
	got, err = tasks.Mutate(ctx, rmTask{ID: "a"}, func(x *rmTask) error { x.Note = "back"; return nil })
	require.NoError(t, err)
	assert.Equal(t, "t", got.Title)
}
