package singletable

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the package returns wraps one of these (or an AWS
// error, or the context's error) with %w, so callers test with [errors.Is].
var (
	// ErrNotFound means the item does not exist (Get, Update without upsert).
	ErrNotFound = errors.New("singletable: item not found")
	// ErrCondition means a condition expression failed on the server
	// (ConditionalCheckFailedException).
	ErrCondition = errors.New("singletable: condition failed")
	// ErrAlreadyExists means Create found an item at the key. It also matches ErrCondition.
	ErrAlreadyExists = errors.New("singletable: item already exists")
	// ErrInvalidKey means a key could not be rendered or parsed: a missing or empty
	// input, a value holding the delimiter, a key over DynamoDB's size limit.
	ErrInvalidKey = errors.New("singletable: invalid key")
	// ErrInvalidEntity means a type could not be registered; the message names Type.Field.
	ErrInvalidEntity = errors.New("singletable: invalid entity")
	// ErrInvalidCursor means a cursor was tampered with, truncated, or belongs to another query.
	ErrInvalidCursor = errors.New("singletable: invalid cursor")
	// ErrInvalidInput means a call's arguments were rejected before anything was sent.
	ErrInvalidInput = errors.New("singletable: invalid input")
	// ErrUnprocessed means a batch call gave up (context ended or retries exhausted)
	// with some keys or items not processed; the call returns exactly those.
	ErrUnprocessed = errors.New("singletable: unprocessed items remain")
	// ErrTypeMismatch means an item was found at the key but its Type attribute names
	// another entity.
	ErrTypeMismatch = errors.New("singletable: item has another type")
	// ErrConflict means a write lost a race: a versioned write's version is not
	// the one the caller held, or the item is gone (the error is then a
	// [*ConflictError]); or a write of unique values gave up after
	// Backoff.MaxAttempts attempts, each lost to another write that changed the
	// item's unique values (or to conflicting transactions), with nothing
	// written (see the notes on unique values).
	ErrConflict = errors.New("singletable: version conflict")
	// ErrAmbiguous means a write's response was lost and reading the item back could
	// not prove whether the write was applied: it may have landed on an item that was
	// deleted or replaced since. It also means a write that asked for the item it
	// replaced ([ReturnOld], [Returning]) lost that item with its response, though the
	// write may have landed. Nothing is sent again; read the item and decide.
	ErrAmbiguous = errors.New("singletable: write outcome unknown")
	// ErrUnknownType means a collection query met an item whose type attribute is
	// missing or names no entity registered on the table. The error is an
	// [*UnknownTypeError]; see [OnUnknown] for the alternatives.
	ErrUnknownType = errors.New("singletable: unknown item type")
	// ErrConsistencyTimeout means a wait gave up before the read showed what was
	// expected: its context's deadline passed or its attempts ran out. The error is a
	// [*ConsistencyTimeoutError] saying how many attempts were made over how long.
	ErrConsistencyTimeout = errors.New("singletable: consistency wait timed out")
	// ErrQueueFull is returned by [Railroad.TrySubmit] when the task's key already
	// holds [RailroadOptions.QueueSize] tasks or the railroad holds
	// [RailroadOptions.MaxPending].
	ErrQueueFull = errors.New("singletable: railroad queue full")
	// ErrRailroadClosed is returned by a submission to a closed [Railroad], and is
	// the error of every task that [Railroad.Close] dropped before it could run.
	ErrRailroadClosed = errors.New("singletable: railroad closed")
	// ErrValidation means a value was refused by its entity's validation (a
	// Validate method, a [Validator] or a [FieldValidator]) before anything was
	// sent. The error is a [*ValidationError] wrapping the check's error; it also
	// matches ErrInvalidInput.
	ErrValidation = errors.New("singletable: validation failed")
	// ErrTokenMismatch means DynamoDB refused a transaction because its
	// idempotency token (ClientRequestToken, see [Table.TransactWith]) was used in
	// the last ten minutes for a different transaction
	// (IdempotentParameterMismatchException). Nothing was applied.
	ErrTokenMismatch = errors.New("singletable: idempotency token reused for another transaction")
	// ErrNotUnique means a write was refused because another item of the entity
	// holds a value of a unique field or combination (see [UniqueError]).
	ErrNotUnique = errors.New("singletable: value not unique")
)

// KeyError reports a key that could not be rendered, parsed or accepted.
// It matches [ErrInvalidKey].
type KeyError struct {
	Entity    string // Go type name of the entity, e.g. "Order"
	Attribute string // key attribute, e.g. "SK" or "GSI1PK"
	Field     string // Go field (or placeholder) at fault, if any
	Reason    string
}

// Error names the entity, the key attribute and the field at fault, and says why.
func (e *KeyError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: invalid key")
	if e.Entity != "" || e.Attribute != "" {
		b.WriteString(" ")
		b.WriteString(e.Entity)
		if e.Attribute != "" {
			if e.Entity != "" {
				b.WriteString(".")
			}
			b.WriteString(e.Attribute)
		}
	}
	if e.Field != "" {
		b.WriteString(" (field ")
		b.WriteString(e.Field)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Is reports whether target is [ErrInvalidKey].
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// EntityError reports why a type could not be registered. It matches
// [ErrInvalidEntity] and names the Go type and, when one is at fault, the field.
type EntityError struct {
	Entity string // Go type name
	Field  string // Go field name or tag key, if one is at fault
	Reason string
	Err    error // underlying error, if any
}

// Error names Type.Field and says why the type could not be registered.
func (e *EntityError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: register ")
	b.WriteString(e.Entity)
	if e.Field != "" {
		b.WriteString(".")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		if e.Reason != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is [ErrInvalidEntity].
func (e *EntityError) Is(target error) bool { return target == ErrInvalidEntity }

// Unwrap returns the underlying error.
func (e *EntityError) Unwrap() error { return e.Err }

// ItemError reports an operation on one item that failed, naming the entity and the
// item's primary key. It wraps the cause, so errors.Is(err, ErrNotFound),
// errors.Is(err, ErrCondition) and errors.As to AWS error types all work.
type ItemError struct {
	Op     string            // "Get", "Put", "Create", "Update", "Delete", ...
	Entity string            // Go type name of the entity
	Key    map[string]string // rendered primary key attributes
	Err    error
}

// Error names the operation, the entity and the key, then the cause.
func (e *ItemError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: ")
	b.WriteString(e.Op)
	b.WriteString(" ")
	b.WriteString(e.Entity)
	b.WriteString(formatKey(e.Key))
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "singletable: "))
	return b.String()
}

// Unwrap returns the cause.
func (e *ItemError) Unwrap() error { return e.Err }

// errorf is fmt.Errorf for the package's own messages: the text starts with
// "singletable: " once, however deep the wrapping. Every error argument (a
// sentinel such as ErrInvalidInput, whose text starts "singletable: ", or an
// error made by errorf or a typed error) is rendered without that prefix, and
// still wrapped as itself (%w), so errors.Is and errors.As see what they saw.
func errorf(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok && err != nil {
			args[i] = unprefixed{err}
		}
	}
	return fmt.Errorf("singletable: "+format, args...)
}

// unprefixed is an error whose text is its cause's without a leading
// "singletable: " (errorf). It unwraps to the cause.
type unprefixed struct{ err error }

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), "singletable: ") }
func (u unprefixed) Unwrap() error { return u.err }
