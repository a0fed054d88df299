package singletable

import (
	"reflect"
	"strings"

	"github.com/singletable/singletable/internal/codec"
)

// Validation. An entity type with a method Validate() error (on T or *T), and
// every function registered with [Validator], checks the whole value before each
// write that sends the whole item: Put, Create, BatchPut, TxPut, TxCreate and
// Mutate's result, after defaults and timestamps are applied. A function
// registered with [FieldValidator] checks one field: in whole items as above,
// and in [Entity.Update] and [Entity.TxUpdate] every value a change gives the
// whole field: the value of [Set] and [SetIfNotExists], and, for [Remove], the
// field's zero value (a removed field reads as its zero value, so Remove("title")
// is checked as Set("title", "") is). Update checks no other change, because the
// value stored after it depends on the stored one, which Update does not read:
// [Add], [Append], [Prepend] and [DeleteFromSet] combine with it on the server,
// and changes at a document path ("address.city") change part of it. Nor does
// Update run Validate or a Validator: it has no whole item to give them. Where
// such a change must be checked, use [Entity.Mutate], which reads the item and
// checks the whole result, or guard the Update with [If]. A check that fails
// stops the write before anything is sent (for BatchPut and Transact, before
// any item or action is sent) with a [*ValidationError] naming the entity (and
// the field), wrapping the check's error. Validate is called on a copy, so it
// cannot change what is written.

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
// written, and the value each Update gives the whole field: the value Set or
// SetIfNotExists, the zero value on Remove (see the notes on validation).
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

// validationFeature is the plan of an entity's checks, compiled at Register.
type validationFeature struct {
	// whole checks a whole value: T's Validate method first, then each Validator.
	whole []func(reflect.Value) error
	// fields checks one field's value, by attribute (FieldValidator).
	fields map[string][]func(reflect.Value) error
	noOwner
}

// plan checks a whole value with every check, or the values an Update gives
// whole fields with their fields' checks.
func (v *validationFeature) plan(p *writePlan) error {
	info := p.info
	switch {
	case p.whole():
		for _, f := range info.plan.Fields() {
			if len(v.fields[f.Name]) == 0 {
				continue
			}
			fv, ok := f.ValueOf(p.sv)
			if !ok {
				fv = reflect.Zero(f.Type)
			}
			if err := v.checkField(info, f, fv); err != nil {
				return err
			}
		}
		for _, check := range v.whole {
			if err := check(p.sv); err != nil {
				return &ValidationError{Entity: info.name, Err: err}
			}
		}
	case p.kind == kindUpdate:
		for _, c := range p.checks {
			if err := v.checkField(info, c.f, c.fv); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkField runs the checks of field f on fv.
func (v *validationFeature) checkField(info *entityInfo, f *codec.Field, fv reflect.Value) error {
	for _, check := range v.fields[f.Name] {
		if err := check(fv); err != nil {
			return &ValidationError{Entity: info.name, Field: f.GoName, Attribute: f.Name, Err: err}
		}
	}
	return nil
}
