package singletable

import (
	"reflect"
	"strings"
)

// Validation. An entity type with a method Validate() error (on T or *T), and
// every function registered with [Validator], checks the whole value before each
// write that sends the whole item: Put, Create, BatchPut, TxPut, TxCreate and
// Mutate's result, after defaults and timestamps are applied. A function
// registered with [FieldValidator] checks one field: in whole items as above, and
// in [Entity.Update] and [Entity.TxUpdate] the value each [Set] or [SetIfNotExists]
// gives it (Update has no whole item to give Validate; Add, list and set
// operations and nested paths change parts of values the library has not read, and
// are not checked). A check that fails stops the write before anything is sent
// (for BatchPut and Transact, before any item or action is sent) with a
// [*ValidationError] naming the entity (and the field), wrapping the check's error.
// Validate is called on a copy, so it cannot change what is written.

// ValidationError reports a value that its entity's validation refused. Nothing
// was sent. It matches [ErrValidation] and [ErrInvalidInput], and unwraps to the
// error the check returned.
type ValidationError struct {
	Entity    string // Go type name
	Field     string // Go field name, for a FieldValidator; "" for Validate and Validator
	Attribute string // the field's attribute name, with Field
	Err       error  // the check's error
}

// Error names the entity, the field and attribute when there is one, and the
// check's error.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: invalid ")
	b.WriteString(e.Entity)
	if e.Field != "" {
		b.WriteString("." + e.Field + " (attribute " + e.Attribute + ")")
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is matches ErrValidation and ErrInvalidInput.
func (e *ValidationError) Is(target error) bool {
	return target == ErrValidation || target == ErrInvalidInput
}

// Unwrap returns the check's error.
func (e *ValidationError) Unwrap() error { return e.Err }

type validatorIface = interface{ Validate() error }

var validatorType = reflect.TypeFor[validatorIface]()

// compileHooks finds T's Validate method, once its fields are compiled.
func compileHooks(info *entityInfo, rt reflect.Type) error {
	switch {
	case rt.Implements(validatorType), reflect.PointerTo(rt).Implements(validatorType):
		h := info.hooksOf()
		h.validate = append(h.validate, func(sv reflect.Value) error {
			cp := reflect.New(rt)
			cp.Elem().Set(sv)
			return cp.Interface().(validatorIface).Validate()
		})
	}
	return nil
}

type validatorOption[T any] struct{ fn func(T) error }

// Validator registers a check of whole values of T, called as T's own Validate
// method would be (see the notes on validation): before every write that sends
// the whole item. Several may be registered; a Validate method runs first.
func Validator[T any](fn func(T) error) RegisterOption { return validatorOption[T]{fn} }

func (o validatorOption[T]) apply(_ *Table, info *entityInfo) error {
	if reflect.TypeFor[T]() != info.goType {
		return &EntityError{Entity: info.name, Reason: "Validator[" + reflect.TypeFor[T]().String() + "] given to Register[" + info.goType.String() + "]"}
	}
	if o.fn == nil {
		return &EntityError{Entity: info.name, Reason: "Validator with a nil function"}
	}
	fn := o.fn
	h := info.hooksOf()
	h.validate = append(h.validate, func(sv reflect.Value) error { return fn(sv.Interface().(T)) })
	return nil
}

type fieldValidatorOption[T, F any] struct {
	attr string
	fn   func(F) error
}

// FieldValidator registers a check of one field of T, named by its stored
// attribute, whose Go type must be F: it checks the field in every whole item
// written, and the value each Update Sets it to (see the notes on validation).
func FieldValidator[T, F any](attr string, fn func(F) error) RegisterOption {
	return fieldValidatorOption[T, F]{attr, fn}
}

func (o fieldValidatorOption[T, F]) apply(_ *Table, info *entityInfo) error {
	if reflect.TypeFor[T]() != info.goType {
		return &EntityError{Entity: info.name, Reason: "FieldValidator[" + reflect.TypeFor[T]().String() + ", ...] given to Register[" + info.goType.String() + "]"}
	}
	f, ok := info.plan.Field(o.attr)
	switch {
	case !ok:
		return &EntityError{Entity: info.name, Field: o.attr, Reason: "FieldValidator: " + o.attr + " is not a stored attribute of " + info.name + info.suggestAttr(o.attr)}
	case f.Type != reflect.TypeFor[F]():
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "FieldValidator for attribute " + o.attr + " checks a " + reflect.TypeFor[F]().String() + ", but the field is " + f.Type.String()}
	case o.fn == nil:
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "FieldValidator with a nil function"}
	}
	fn := o.fn
	h := info.hooksOf()
	if h.fieldChecks == nil {
		h.fieldChecks = map[string][]func(reflect.Value) error{}
	}
	h.fieldChecks[f.Name] = append(h.fieldChecks[f.Name], func(fv reflect.Value) error { return fn(fv.Interface().(F)) })
	return nil
}

// validateWhole runs every check of a whole value.
func (h *writeHooks) validateWhole(info *entityInfo, sv reflect.Value) error {
	if h == nil {
		return nil
	}
	for _, f := range info.plan.Fields() {
		checks := h.fieldChecks[f.Name]
		if len(checks) == 0 {
			continue
		}
		fv, ok := f.ValueOf(sv)
		if !ok {
			fv = reflect.Zero(f.Type)
		}
		if err := h.checkField(info, f.Name, fv); err != nil {
			return err
		}
	}
	for _, check := range h.validate {
		if err := check(sv); err != nil {
			return &ValidationError{Entity: info.name, Err: err}
		}
	}
	return nil
}

// checkField runs the checks of the field stored under attr on fv.
func (h *writeHooks) checkField(info *entityInfo, attr string, fv reflect.Value) error {
	if h == nil {
		return nil
	}
	for _, check := range h.fieldChecks[attr] {
		if err := check(fv); err != nil {
			f, _ := info.plan.Field(attr)
			return &ValidationError{Entity: info.name, Field: f.GoName, Attribute: attr, Err: err}
		}
	}
	return nil
}
