package codec

import (
	"errors"
	"strings"
)

// FieldError reports a problem with one struct field: an invalid tag or an unsupported type found when a
// [Plan] is compiled, or a value that could not be encoded or decoded. Type and Field are Go names
// ("Order", "Total"). For a field inside a nested struct, Err is itself a *FieldError naming the inner
// field, so the message reads "codec: Order.Lines: Line.Price: ...".
type FieldError struct {
	Type  string // Go name of the struct type that holds the field
	Field string // Go name of the field; empty when the error is about the type itself
	Err   error
}

// Error implements error.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("codec: ")
	e.write(&b)
	return b.String()
}

func (e *FieldError) write(b *strings.Builder) {
	b.WriteString(e.Type)
	if e.Field != "" {
		b.WriteByte('.')
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	var inner *FieldError
	if errors.As(e.Err, &inner) && inner == e.Err {
		inner.write(b)
		return
	}
	if e.Err == nil {
		b.WriteString("<nil>")
		return
	}
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "codec: "))
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }
