package singletable

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/tabledef"
)

// Difference is one way the deployed table differs from the model
// ([Table.Drift], [DriftError]).
type Difference struct {
	// What names the part: "key schema", "attribute PK" (a key attribute's
	// type), "index GSI1" (missing from one side, or global on one and local on
	// the other), "index GSI1 key schema", "index GSI1 projection", "stream" or
	// "TTL".
	What string
	// Model and Table say what each has, "" when it has none: "PK HASH, SK
	// RANGE", "type S", "global index: GSI1PK HASH, GSI1SK RANGE; ALL",
	// "INCLUDE status, total", "NEW_AND_OLD_IMAGES", the TTL attribute.
	Model, Table string
	// Fix says what would make them agree.
	Fix string
}

// String is the difference as one line: "index GSI1 projection: the model has
// ALL, the table has KEYS_ONLY".
func (d Difference) String() string {
	return d.What + ": the model has " + noneIfEmpty(d.Model) + ", the table has " + noneIfEmpty(d.Table)
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// DriftError is the error of [Table.EnsureTable] for a table that exists and
// differs from the model: every difference, named. It matches [ErrDrift].
type DriftError struct {
	Table       string
	Differences []Difference
}

// Error names the table and each difference with its fix.
func (e *DriftError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: EnsureTable: table ")
	b.WriteString(strconv.Quote(e.Table))
	b.WriteString(" exists and differs from the model in ")
	if len(e.Differences) == 1 {
		b.WriteString("1 way")
	} else {
		b.WriteString(strconv.Itoa(len(e.Differences)) + " ways")
	}
	for _, d := range e.Differences {
		b.WriteString("; ")
		b.WriteString(d.String())
		b.WriteString(" (")
		b.WriteString(d.Fix)
		b.WriteString(")")
	}
	return b.String()
}

// Is makes a DriftError match [ErrDrift].
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// EnsureTable makes the table ready for the model, and can be called on every
// start of a program: when the table does not exist it is [Table.CreateTable]
// with the same edits (the table, its indexes, TTL on its TTL attribute); when it
// exists, it waits until it is ACTIVE and checks it against the model
// ([Table.Drift]): the key schema and key types, each index (global or local, its
// keys, its projection), the stream and the TTL attribute. A table that differs
// is left as it is and the error is a [*DriftError] naming each difference and
// its fix; it matches [ErrDrift]. The edits are the model too: a stream enabled by
// [EnableStream] is expected on an existing table. Billing mode and capacity are
// not compared (they are the table's operation, not the model).
//
// An existing table is changed in one way only: when the model has a TTL
// attribute, the table has TTL off altogether, and that is its only
// difference from the model, TTL is turned on, the last step of CreateTable, which a creator racing with this call, or one that
// stopped after creating the table, has not reached. So callers racing to
// create the table all succeed: one creates it, the others wait for it to
// become ACTIVE, turn its TTL on as its creator does, and check it. Everything
// else is reported, never changed.
//
// It needs the client's CreateTable and DescribeTable ([TableClient]), and its
// DescribeTimeToLive ([TTLClient]) to compare TTL; without the latter the TTL is
// not compared, unless the model has a TTL attribute, which is then an error.
// Explain refuses it.
func (t *Table) EnsureTable(ctx context.Context, edits ...func(*dynamodb.CreateTableInput)) (err error) {
	if err := t.refused("Table.EnsureTable"); err != nil {
		return err
	}
	ctx, done := t.begin(ctx, "EnsureTable")
	defer done(&err)
	if err := t.refuseExplain(ctx, "EnsureTable"); err != nil { // explain.go
		return err
	}
	in, err := t.CreateTableInput(edits...) // definition.go
	if err != nil {
		return err
	}
	tc, err := t.tableCalls("EnsureTable", "CreateTable", "DescribeTable") // client.go
	if err != nil {
		return err
	}
	if _, found, err := t.describeTable(ctx, tc, "EnsureTable"); err != nil {
		return err
	} else if !found {
		_, err := tc.CreateTable(ctx, in)
		var inUse *types.ResourceInUseException
		switch {
		case err == nil:
			return t.finishCreate(ctx, tc) // definition.go
		case !errors.As(err, &inUse):
			return errorf("EnsureTable %s: CreateTable: %w", t.name, err)
		}
		// Another caller is creating it: drift waits for it to be ACTIVE.
	}
	diffs, err := t.drift(ctx, tc, in, "EnsureTable")
	if err != nil {
		return err
	}
	if len(diffs) == 1 && ttlOff(diffs) == 0 {
		// TTL is the last step of a creation: a creator racing with this call,
		// or one that stopped after CreateTable, has not reached it. Take it
		// (EnableTTL does nothing once TTL is on, and takes another's
		// UpdateTimeToLive landing in between as done). A table that differs
		// in more than that is not one this model made: it is only reported.
		if err := t.enableTTLAfterCreate(ctx); err != nil { // ttl.go
			return err
		}
		diffs = nil
	}
	if len(diffs) > 0 {
		return &DriftError{Table: t.name, Differences: diffs}
	}
	return nil
}

// ttlOff returns the index of the difference that says the model has a TTL
// attribute and the table has TTL off altogether, -1 when there is none.
func ttlOff(diffs []Difference) int {
	return slices.IndexFunc(diffs, func(d Difference) bool { return d.What == "TTL" && d.Model != "" && d.Table == "" })
}

// Drift compares the deployed table (DescribeTable, and DescribeTimeToLive when
// the client has it) with the model and the edits, as [Table.EnsureTable] does,
// and returns every difference, none when they agree. It waits for a table being
// created or updated to become ACTIVE. A table that does not exist is an error
// naming the table and how to create it; it unwraps to the SDK's
// *types.ResourceNotFoundException.
func (t *Table) Drift(ctx context.Context, edits ...func(*dynamodb.CreateTableInput)) (_ []Difference, err error) {
	if err := t.refused("Table.Drift"); err != nil {
		return nil, err
	}
	ctx, done := t.begin(ctx, "Drift")
	defer done(&err)
	if err := t.refuseExplain(ctx, "Drift"); err != nil { // explain.go
		return nil, err
	}
	in, err := t.CreateTableInput(edits...) // definition.go
	if err != nil {
		return nil, err
	}
	tc, err := t.tableCalls("Drift", "DescribeTable") // client.go
	if err != nil {
		return nil, err
	}
	return t.drift(ctx, tc, in, "Drift")
}

// describeTable is DescribeTable of the table; found is false when it does not
// exist.
func (t *Table) describeTable(ctx context.Context, tc TableClient, call string) (_ *types.TableDescription, found bool, _ error) {
	out, err := tc.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: t.namePtr()})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return nil, false, nil
	case err != nil:
		return nil, false, errorf("%s %s: DescribeTable: %w", call, t.name, err)
	case out.Table == nil:
		return nil, false, errorf("%s %s: DescribeTable answered no table description (client %T): %w", call, t.name, t.user, ErrInvalidInput)
	}
	return out.Table, true, nil
}

// drift compares the table with in, the request the model would create it
// with, once the table is ACTIVE.
func (t *Table) drift(ctx context.Context, tc TableClient, in *dynamodb.CreateTableInput, call string) ([]Difference, error) {
	td, found, err := t.describeTable(ctx, tc, call)
	if err == nil && found && td.TableStatus != types.TableStatusActive {
		if td.TableStatus == types.TableStatusDeleting {
			return nil, errorf("%s %s: the table is being deleted (DescribeTable: DELETING): wait until it is gone, then create it: %w", call, t.name, ErrInvalidInput)
		}
		if err := tabledef.WaitActive(ctx, tc, t.name); err != nil {
			return nil, err
		}
		td, found, err = t.describeTable(ctx, tc, call)
	}
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &missingTableError{table: t.name, api: call + "'s DescribeTable", err: &types.ResourceNotFoundException{Message: aws.String("Requested resource not found: Table: " + t.name + " not found")}}
	}
	d := tabledef.Deployed{Table: td}
	if c, ok := t.ttlCalls(); ok { // ttl.go
		out, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: t.namePtr()})
		if err != nil {
			return nil, errorf("%s %s: DescribeTimeToLive: %w", call, t.name, err)
		}
		d.TTLKnown = true
		if ttl := out.TimeToLiveDescription; ttl != nil &&
			(ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabled || ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
			d.TTL = aws.ToString(ttl.AttributeName)
		}
	} else if t.ttlAttribute() != "" {
		return nil, errorf("%s %s: the model has the TTL attribute %q, and the table's client (%T) has no DescribeTimeToLive (TTLClient) to compare it: %w",
			call, t.name, t.ttlAttribute(), t.user, ErrInvalidInput)
	}
	raw := tabledef.Drift(in, t.ttlAttribute(), d)
	diffs := make([]Difference, len(raw))
	for i, r := range raw {
		diffs[i] = Difference(r)
	}
	return diffs, nil
}
