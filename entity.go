package singletable

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Entity is the typed access to one registered entity type T on a [Table]. Create it
// with [Register]. An Entity is safe for concurrent use. No method mutates a value
// handed to it: T is taken and returned by value.
type Entity[T any] struct {
	// x is a field, not embedded: a method promoted from an embedded field is
	// compiled again, as a wrapper, for every T.
	x entity
}

// entity is what every method of an Entity[T] runs on. The generic methods are
// thin shells: each converts its T values to reflect.Values (addressable, of
// the caller's own variables) and calls a method of entity, compiled once
// whatever the number of entity types (docs/architecture.md, "The generic
// shell"). Keep it so: a line of generic code is compiled again for every
// entity type of every program that uses the library.
//
// Its fields are all pointers, so that an Entity[T] compares as memory and no
// equality function is compiled for it per T.
type entity struct {
	table *Table
	info  *entityInfo
	// unset names the type of a nil or zero Entity, whose calls it refuses.
	unset *unsetEntity
}

// unsetEntity is what a nil or zero Entity's calls say of it.
type unsetEntity struct {
	goType reflect.Type
	isNil  bool
}

// core returns e's engine: for a nil or zero Entity, one that refuses every
// call, naming T. It is not inlined, so that each shell stays a few
// instructions.
//
//go:noinline
func (e *Entity[T]) core() *entity {
	if e == nil || e.x.info == nil {
		return unsetCore(reflect.TypeFor[T](), e == nil)
	}
	return &e.x
}

// elem returns the addressable reflect.Value of the variable p points to: how a
// shell hands its T values to the engine. It is not inlined, so that each
// shell stays a few instructions.
//
//go:noinline
func elem(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// ptrTo returns the reflect.Value of the pointer p (a *[]T a shell reads pages
// into), not inlined either.
//
//go:noinline
func ptrTo(p any) reflect.Value { return reflect.ValueOf(p) }

// unsetCore is the engine of a nil (isNil) or zero Entity of type typ.
func unsetCore(typ reflect.Type, isNil bool) *entity {
	return &entity{unset: &unsetEntity{goType: typ, isNil: isNil}}
}

// refused is the error of a call on a nil or zero Entity (nil when e is usable).
func (e *entity) refused(op string) error {
	if e.info != nil {
		return nil
	}
	if e.unset.isNil {
		return errorf("%s %s: the *Entity is nil (was the error of Register ignored?): %w", op, e.unset.goType.Name(), ErrInvalidInput)
	}
	return errorf("%s %s: the Entity is a zero value; make it with Register: %w", op, e.unset.goType.Name(), ErrInvalidInput)
}

// Register compiles T for use on table t and returns its typed access. T must be a
// struct with a blank field carrying the entity tags:
//
//	type Order struct {
//	    _          struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
//	    CustomerID string   `dynamodbav:"customerId"`
//	    ...
//	}
//
// The tag under the table's type attribute name (default "Type") is the
// discriminator (default: the Go type name); one tag per key attribute of the table
// gives that attribute's template. Both base key templates are required; an index's
// templates are optional (the entity is then not in that index) but come in pairs.
// Placeholders name stored attributes (dynamodbav names) of fields that are strings,
// integers, time.Time, or pointers to those.
//
// Register checks everything once and returns an [*EntityError] (matching
// [ErrInvalidEntity]) naming Type.Field for: an unknown tag or tag option, an unknown
// placeholder, a missing base key template, a template for an attribute the table
// lacks, a discriminator used twice on the table, primary key templates that could render
// another entity's primary key (not provably disjoint: the error names both entities and
// templates, a key both render, and a prefix that separates them), a field whose name clashes with a key or type attribute,
// and an unsupported field type.
func Register[T any](t *Table, opts ...RegisterOption) (*Entity[T], error) {
	info, err := register(t, reflect.TypeFor[T](), opts)
	if err != nil {
		return nil, err
	}
	return &Entity[T]{entity{table: t, info: info}}, nil
}

// register is Register for the Go type typ.
func register(t *Table, typ reflect.Type, opts []RegisterOption) (*entityInfo, error) {
	if err := t.refused("Register[" + typ.String() + "]"); err != nil {
		return nil, err
	}
	info, err := compileEntity(t, typ)
	if err != nil {
		return nil, err
	}
	// Options complete info before other goroutines can see it; workers start once
	// the entity is registered.
	for i, o := range opts {
		if o == nil {
			return nil, &EntityError{Entity: info.name, Reason: "Register option " + strconv.Itoa(i) + " is nil"}
		}
		if err := o.apply(t, info); err != nil {
			return nil, err
		}
	}
	if info.adopt && info.migration == nil { // adopt.go: an empty schema history, to stamp adopted items
		if err := applyMigrations(t, info, info.goType, nil, nil, WriteBackSync, nil, 0); err != nil {
			return nil, err
		}
	}
	compileFeatures(info) // register.go
	if err := t.register(info); err != nil {
		return nil, err
	}
	info.start(t)
	return info, nil
}

// MustRegister is like [Register] but panics on error; for package-level setup in
// programs whose entity definitions are fixed at compile time.
func MustRegister[T any](t *Table, opts ...RegisterOption) *Entity[T] {
	e, err := Register[T](t, opts...)
	if err != nil {
		panic(err)
	}
	return e
}

// Table returns the table the entity is registered on (nil for a nil Entity).
//
//go:noinline
func (e *Entity[T]) Table() *Table {
	if e == nil {
		return nil
	}
	return e.x.table
}

// Type returns the entity's discriminator, the value of its type attribute (""
// for a nil Entity).
//
//go:noinline
func (e *Entity[T]) Type() string {
	if e == nil || e.x.info == nil {
		return ""
	}
	return e.x.info.discriminator
}

// decodeWith decodes an item of this entity read by key (a write's returned
// item, a wait's) into rv, through the read path's phases (readpath.go): an item
// not provably of the entity is ErrTypeMismatch; an older one is migrated in
// memory, and written back only when writeBack is set.
//
// Under [Explain] a write returns no item: it decodes to the zero value.
func (e *entity) decodeWith(ctx context.Context, item map[string]types.AttributeValue, writeBack bool, rv reflect.Value) error {
	if item == nil && explaining(ctx) != nil {
		rv.SetZero()
		return nil
	}
	p := readPlan{t: e.table, info: e.info, byKey: true, whole: writeBack}
	_, err := p.readItem(ctx, item, rv)
	return err
}

// decodeMigrated decodes an item read by key into rv, migrating it in memory,
// through the read path's type check and decoding (readpath.go), never written
// back; migrated is the migrated image, nil when no migration applied.
func (e *entity) decodeMigrated(item map[string]types.AttributeValue, rv reflect.Value) (migrated map[string]types.AttributeValue, err error) {
	p := readPlan{t: e.table, info: e.info, byKey: true}
	if _, _, err := p.checkType(item); err != nil {
		return nil, err
	}
	return p.decodeItem(e.info, item, rv)
}

// Get reads one item by its primary key, rendered from key (only the key's inputs
// need be set). It calls GetItem once: 0.5 RCU per 4 KB eventually consistent, 1 with
// [Consistent]. A missing item is an error matching [ErrNotFound]; an item at the
// key that is not provably of this entity type (its type attribute names another,
// or is missing or not a string) matches [ErrTypeMismatch], as a write there would.
//
//go:noinline
func (e *Entity[T]) Get(ctx context.Context, key T, opts ...GetOption) (_ T, err error) {
	var v T
	err = e.core().get(ctx, elem(&key), elem(&v), opts)
	return v, err
}

// get is Get: the item is decoded into out, left zero on an error.
func (e *entity) get(ctx context.Context, sv, out reflect.Value, opts []GetOption) (err error) {
	if err := e.refused("Get"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Get")
	defer done(&err)
	defer zeroOnError(&err, out)
	var o getOptions
	if len(opts) > 0 {
		var err error
		if o, err = collectKeyOptions("Get", e.info.name, opts); err != nil {
			return err
		}
	}
	p, err := e.table.keyPlan(e.info, o, false) // readpath.go
	if err != nil {
		return e.itemErr("Get", nil, err)
	}
	found, err := e.resolveShardItem(ctx, sv, o.consistent)
	if err != nil {
		return e.itemErr("Get", nil, err)
	}
	if found != nil { // a random shard's lookup read the item already
		if err := e.readFound(ctx, &p, found, out); err != nil {
			return e.itemErr("Get", e.info.table.keyStrings(found), err)
		}
		return nil
	}
	k, err := e.info.primaryKeyAV(sv)
	if err != nil {
		return e.itemErr("Get", nil, err)
	}
	err = e.getItem(ctx, &p, &dynamodb.GetItemInput{ // GetItem, through the read path (wire.go)
		TableName:      e.table.namePtr(),
		Key:            k,
		ConsistentRead: boolPtr(o.consistent),
	}, out)
	if err != nil {
		return e.itemErr("Get", e.table.keyStrings(k), err)
	}
	return nil
}

// zeroOnError sets rv to its zero value when *err is set: a call that fails
// returns the zero T.
func zeroOnError(err *error, rv reflect.Value) {
	if *err != nil {
		rv.SetZero()
	}
}

// readFound reads an item found by key into rv through the read path's phases: an
// item SkipExpired leaves out is ErrNotFound.
func (e *entity) readFound(ctx context.Context, p *readPlan, item map[string]types.AttributeValue, rv reflect.Value) error {
	verdict, err := p.readItem(ctx, item, rv)
	if err == nil && verdict == itemExpired {
		err = errExpired
	}
	return err
}

// itemErr wraps err with the call, the entity and the key.
func (e *entity) itemErr(op string, key map[string]string, err error) error {
	return &ItemError{Op: op, Entity: e.info.name, Key: key, Err: err}
}

// Put writes v as a whole item, replacing any item of this type at its key: every
// field, every key attribute (index keys whose inputs are empty are left out, so
// the item leaves that sparse index), and the type attribute. It refuses to replace
// an item of another entity type ([ErrTypeMismatch]). An unversioned entity's Put is
// one PutItem; a versioned entity's is one UpdateItem that stores the next version
// on the condition that the stored one is v's (see the notes on optimistic
// concurrency), and keeps attributes T does not know; so is the Put of an entity
// with a createdAt or counter field, which keeps the stored createdAt and moves the
// count. Defaults, timestamps and validation apply first (see [Validator]). Cost:
// 1 WCU per 1 KB. It returns the value stored (with its new version, defaults,
// timestamps and count); v itself is not modified, so retrying the call is safe.
// [ReturnOld] also returns the item replaced. On a versioned entity sharded at
// random, a Put at version 0 whose shard is not set is refused
// ([ErrInvalidInput]): it promises to fail if the item exists, and a shard drawn
// at random can check only itself.
//
//go:noinline
func (e *Entity[T]) Put(ctx context.Context, v T, opts ...WriteOption) (_ T, err error) {
	err = e.core().put(ctx, elem(&v), kindPut, opts)
	return v, err
}

// Create is [Entity.Put] on the condition that no item exists at v's key (one
// PutItem): if one does, the error matches [ErrAlreadyExists] and [ErrCondition]
// and nothing is written. Its receipt recognises its own earlier attempt after a
// lost response. A versioned entity's Create stores version 1 whatever v holds.
// Entities sharded at random cannot be created this way (a retried Create would
// land in another shard): shard them by a hash of their id (shardBy).
//
//go:noinline
func (e *Entity[T]) Create(ctx context.Context, v T, opts ...WriteOption) (_ T, err error) {
	err = e.core().put(ctx, elem(&v), kindCreate, opts)
	return v, err
}

// put is Put and Create: sv (the caller's copy) is settled as stored.
func (e *entity) put(ctx context.Context, sv reflect.Value, kind writeKind, opts []WriteOption) (err error) {
	if err := e.refused(kind.String()); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, kind.String())
	defer done(&err)
	var o writeOptions
	if len(opts) > 0 {
		o = collectWriteOptions(opts)
	}
	o.env = explainEnv(ctx)                    // explain.go: nil but under Explain
	w, err := e.info.planPut(sv, kind, o, nil) // planner.go
	if err != nil {
		return e.itemErr(kind.String(), nil, err)
	}
	attrs, err := e.table.execute(ctx, w) // pipeline.go; the value settled
	if err != nil {
		return err
	}
	if o.old != nil {
		if err := e.fillOld(ctx, o.old, attrs); err != nil { // returnvalues.go
			return e.itemErr(kind.String(), w.keyStrings(e.table), err)
		}
	}
	return nil
}

// Delete deletes the item at key's primary key (one DeleteItem), if it is of this
// type; an item of another type is left alone ([ErrTypeMismatch]). Deleting a
// missing item succeeds, unless an [If] condition or a version (n > 0) says
// otherwise. Cost: 1 WCU per 1 KB of the deleted item.
//
//go:noinline
func (e *Entity[T]) Delete(ctx context.Context, key T, opts ...WriteOption) (err error) {
	return e.core().delete(ctx, elem(&key), opts)
}

func (e *entity) delete(ctx context.Context, sv reflect.Value, opts []WriteOption) (err error) {
	if err := e.refused("Delete"); err != nil {
		return err
	}
	ctx, done := e.begin(ctx, "Delete")
	defer done(&err)
	var o writeOptions
	if len(opts) > 0 {
		o = collectWriteOptions(opts)
	}
	if o.err != nil {
		return e.itemErr("Delete", nil, o.err)
	}
	if err := e.resolveShard(ctx, sv, true); errors.Is(err, ErrNotFound) && !o.cond.IsSet() && o.old == nil {
		// In none of its shards: deleting a missing item succeeds, unless the
		// version held says it should be there.
		if must, perr := e.info.deleteMissing(sv, o); perr != nil || must { // planner.go
			return e.itemErr("Delete", nil, errors.Join(err, perr))
		}
		return nil
	} else if err != nil {
		return e.itemErr("Delete", nil, err)
	}
	o.env = explainEnv(ctx) // explain.go: nil but under Explain
	w, err := e.info.planDelete(sv, o, nil)
	if err != nil {
		return e.itemErr("Delete", nil, err)
	}
	attrs, err := e.table.execute(ctx, w)
	if err == nil && o.old != nil {
		if err = e.fillOld(ctx, o.old, attrs); err != nil { // returnvalues.go
			return e.itemErr("Delete", w.keyStr, err)
		}
	}
	return err
}

// Key renders every key attribute of v: the primary key and the keys of each index
// whose inputs v holds (the attributes a Put of v would write). It sends nothing; a
// random shard of a sharded entity must be set in v.
//
//go:noinline
func (e *Entity[T]) Key(v T) (map[string]string, error) {
	return e.core().key(elem(&v))
}

func (e *entity) key(sv reflect.Value) (map[string]string, error) {
	if err := e.refused("Key"); err != nil {
		return nil, err
	}
	if _, err := e.info.fillShard(sv, false); err != nil {
		return nil, err
	}
	if err := e.info.checkShard(sv); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, kt := range e.info.baseTemplates() {
		s, _, err := kt.render(e.info, sv, false)
		if err != nil {
			return nil, err
		}
		out[kt.attr] = s
	}
	for _, ix := range e.table.opts.Indexes {
		pair, ok := e.info.indexes[ix.Name]
		if !ok {
			continue
		}
		vals, ok, err := e.info.renderIndex(pair, func(kt *keyTemplate) (string, bool, error) { return kt.render(e.info, sv, true) })
		if err != nil {
			return nil, err
		}
		for j, kt := range pair {
			if ok && kt != nil {
				out[kt.attr] = vals[j]
			}
		}
	}
	return out, nil
}

// ParseKey rebuilds the key fields of a T from a rendered primary key, given as
// attribute name to value (for example a stream record's keys). Fields that do not
// feed the key are left zero.
//
//go:noinline
func (e *Entity[T]) ParseKey(key map[string]string) (T, error) {
	var v T
	err := e.core().parseKey(key, elem(&v))
	return v, err
}

func (e *entity) parseKey(key map[string]string, sv reflect.Value) error {
	if err := e.refused("ParseKey"); err != nil {
		return err
	}
	for _, kt := range e.info.baseTemplates() {
		s, ok := key[kt.attr]
		if !ok {
			return &KeyError{Entity: e.info.name, Attribute: kt.attr, Reason: "missing"}
		}
		err := kt.parseInto(e.info, s, sv, nil) // projection.go
		if err != nil {
			var ke *KeyError
			if errors.As(err, &ke) {
				out := *ke
				out.Entity, out.Attribute = e.info.name, kt.attr
				return &out
			}
			return err
		}
	}
	return nil
}

// setFromKey sets a field from the raw text of its placeholder.
func setFromKey(f *codec.Field, sv reflect.Value, raw string, format keytmpl.Format) error {
	val, err := keytmpl.ParseValue(raw, format)
	if err != nil {
		return keyError(err)
	}
	fv := sv.FieldByIndex(f.Index)
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch x := val.(type) {
	case time.Time:
		fv.Set(reflect.ValueOf(x))
		return nil
	case string:
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(x)
			return nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(x, 10, fv.Type().Bits())
			if err != nil || strconv.FormatInt(n, 10) != x {
				// Only the text the key renders ("7", not "007", "+7" or "-0"), so
				// that one key parses from one text.
				return &KeyError{Reason: strconv.Quote(x) + " is not an integer for " + f.GoName + " as keys write it"}
			}
			fv.SetInt(n)
			return nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(x, 10, fv.Type().Bits())
			if err != nil || strconv.FormatUint(n, 10) != x {
				return &KeyError{Reason: strconv.Quote(x) + " is not an unsigned integer for " + f.GoName + " as keys write it"}
			}
			fv.SetUint(n)
			return nil
		}
	case int64:
		if fv.CanInt() && !fv.OverflowInt(x) {
			fv.SetInt(x)
			return nil
		}
		if fv.CanUint() && x >= 0 && !fv.OverflowUint(uint64(x)) {
			fv.SetUint(uint64(x))
			return nil
		}
	case uint64:
		if fv.CanUint() && !fv.OverflowUint(x) {
			fv.SetUint(x)
			return nil
		}
	}
	return &KeyError{Reason: "value does not fit field " + f.GoName + " of type " + fv.Type().String()}
}
