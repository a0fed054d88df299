package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/expr"
)

// Lazy migration.
//
// An entity registered with [Migrations] has a schema version: 1 plus the number of
// its steps. Items carry theirs in the table's schema attribute (default "_schema";
// an item without one is at version 1). Every read path (Get, Query, QueryShards,
// BatchGet, collections, waits) migrates an older item in memory before handing it
// out: each step from the item's version on runs on the stored attributes (so shapes
// that no longer decode can still be read), the item is decoded, and each step's
// typed function runs on the value. Index keys are then recomputed from the value.
//
// The migrated item can be written back, as the entity's [Migration.WriteBack] says:
// at once (WriteBackSync, the default), by a background worker with a bounded queue
// (WriteBackAsync), or not at all (WriteBackOff). Write-back is conditional: it
// happens only if the stored item is still exactly what was read (its version, for
// a versioned entity; every attribute, otherwise), so a newer concurrent write is
// never overwritten. Losing that race is not the reader's error. The write-back is
// one UpdateItem of what the migration changed: what the raw steps added, changed
// or removed, the fields the typed steps changed (a changed map merged entry by
// entry into the stored one, so entries T does not model stay), recomputed index
// keys and the schema version; every other attribute keeps its stored bytes (a
// string set stays a set, a NULL stays). A migration that renders another
// primary key is not written back (OnError receives an error matching
// [ErrInvalidInput]): an update cannot move an item. Items read through an index
// or a projection are never written back. [Entity.Sweep] migrates the rest
// eagerly.
//
// Writes of whole items (Put, Create, batch and transaction puts) store the current
// schema version. A partial Update leaves the stored version as it is, so steps must
// keep attributes of the newer schema that an Update may have set (compute a value
// only when it is missing).

// WriteBack says when a migrated item is written back.
type WriteBack uint8

const (
	// WriteBackSync writes back during the read that migrated the item.
	WriteBackSync WriteBack = iota
	// WriteBackAsync queues the write-back for a background worker; a full queue
	// drops it (the item is migrated again on a later read, or by a sweep).
	WriteBackAsync
	// WriteBackOff migrates in memory only.
	WriteBackOff
)

// Step migrates items from one schema version to the next. Raw works on the stored
// attributes before decoding and may add, change or remove any but those the library
// writes itself (the primary key, type, version, schema and receipt attributes;
// index keys are recomputed from the migrated value);
// Typed works on the decoded value. Either may be nil. A step that fails stops the
// read with an error naming the entity, the key and the versions, and nothing is
// written.
type Step[T any] struct {
	Raw   func(item RawItem) error
	Typed func(v *T) error
}

// Migration describes an entity's schema history and how migrated items are
// written back. Items carry their schema version in the table's schema attribute
// ([TableOptions].SchemaAttribute, "_schema" by default); an item without it
// (written before the entity had migrations, or by other code) is at schema
// version 1, so Steps[0] migrates it.
type Migration[T any] struct {
	// Steps[i] migrates items at schema version i+1 to i+2; the current version is
	// len(Steps)+1.
	Steps []Step[T]
	// WriteBack is when migrated items are written back; default WriteBackSync.
	WriteBack WriteBack
	// OnError receives write-back failures (other than losing a race to a newer
	// write) and, with WriteBackAsync, write-backs dropped because the queue was
	// full. It must be safe for concurrent use. Default: errors are dropped.
	OnError func(error)
	// QueueSize bounds the WriteBackAsync queue; default 1024.
	QueueSize int
}

type migrationOption[T any] struct{ m Migration[T] }

// Migrations registers an entity's schema history; see [Migration].
func Migrations[T any](m Migration[T]) RegisterOption { return migrationOption[T]{m} }

func (o migrationOption[T]) apply(t *Table, info *entityInfo) error {
	m := o.m
	raw := make([]func(RawItem) error, len(m.Steps))
	typed := make([]func(reflect.Value) error, len(m.Steps))
	for i, s := range m.Steps {
		raw[i] = s.Raw
		if f := s.Typed; f != nil {
			typed[i] = func(v reflect.Value) error { return f((*T)(v.Addr().UnsafePointer())) }
		}
	}
	return applyMigrations(t, info, reflect.TypeFor[T](), raw, typed, m.WriteBack, m.OnError, m.QueueSize)
}

// applyMigrations is Migrations' option for the Go type typ: raw and typed are
// its steps' (typed taking the addressable value).
func applyMigrations(t *Table, info *entityInfo, typ reflect.Type, raw []func(RawItem) error, typed []func(reflect.Value) error, mode WriteBack, onError func(error), queueSize int) error {
	if typ != info.goType {
		return &EntityError{Entity: info.name, Reason: "Migrations[" + typ.String() + "] given to Register[" + info.goType.String() + "]"}
	}
	if mode > WriteBackOff {
		return &EntityError{Entity: info.name, Reason: "unknown WriteBack " + strconv.Itoa(int(mode))}
	}
	if t.isReceiptAttr(t.opts.SchemaAttribute) {
		return &EntityError{Entity: info.name, Reason: "the schema attribute is a receipt attribute"}
	}
	if _, clash := info.plan.Field(t.opts.SchemaAttribute); clash {
		return &EntityError{Entity: info.name, Field: t.opts.SchemaAttribute, Reason: "a field is stored under the schema attribute's name"}
	}
	mp := &migrationPlan{current: len(raw) + 1, mode: mode, onError: onError, reserved: t.fixedAttributes(), raw: raw, typed: typed}
	if info.version != nil {
		mp.reserved = append(mp.reserved, info.version.Name)
	}
	if mode == WriteBackAsync {
		size := queueSize
		if size <= 0 {
			size = 1024
		}
		mp.queue = make(chan *writeRequest, size)
		mp.done = make(chan struct{})
	}
	info.migration = mp
	return nil
}

// start starts the entity's background work, once it is registered.
func (info *entityInfo) start(t *Table) {
	if mp := info.migration; mp != nil && mp.queue != nil {
		go mp.work(t, info)
		t.addCloser(mp.close)
	}
}

// migrationPlan is an entity's compiled schema history.
type migrationPlan struct {
	current int
	// reserved are the attributes the library alone writes, which raw steps may
	// not change: the table's fixed attributes and the version.
	reserved []string
	raw      []func(RawItem) error
	typed    []func(reflect.Value) error
	mode     WriteBack
	onError  func(error)

	queue     chan *writeRequest // WriteBackAsync
	done      chan struct{}      // closed when the worker has drained the queue
	closeOnce sync.Once

	// Counters, for tests and the sweeper.
	written, lost, dropped atomic.Int64
}

// schemaOf reads an item's schema version: 1 without the attribute.
func (t *Table) schemaOf(item map[string]types.AttributeValue) (int, bool) {
	switch av := item[t.opts.SchemaAttribute].(type) {
	case nil:
		return 1, true
	case *types.AttributeValueMemberN:
		n, err := strconv.Atoi(av.Value)
		return n, err == nil && n >= 1
	}
	return 0, false
}

// MigrationError reports a migration step that failed. Nothing was written.
type MigrationError struct {
	Entity   string
	Key      map[string]string
	From, To int // the step's versions
	Err      error
}

// Error names the entity, the key and the versions of the failed step.
func (e *MigrationError) Error() string {
	return "singletable: migrate " + e.Entity + formatKey(e.Key) + " from schema version " + strconv.Itoa(e.From) + " to " + strconv.Itoa(e.To) + ": " + e.Err.Error()
}

// Unwrap returns the step's error.
func (e *MigrationError) Unwrap() error { return e.Err }

// decodeInto decodes a stored item into rv, migrating it first when it is older than
// the entity's schema. When it was migrated, it returns the item as the raw steps
// left it (the image a write-back starts from); nil otherwise.
func (info *entityInfo) decodeInto(item map[string]types.AttributeValue, rv reflect.Value) (migrated map[string]types.AttributeValue, err error) {
	mp := info.migration
	if mp == nil {
		return nil, info.plan.DecodeIgnoring(item, rv, info.ignored)
	}
	t := info.table
	from, ok := t.schemaOf(item)
	if ok && from == mp.current && info.unstamped(item) { // adopt.go: to be stamped
		work := maps.Clone(item)
		if err := info.plan.DecodeIgnoring(work, rv, info.ignored); err != nil {
			return nil, err
		}
		return work, nil
	}
	keyErr := func(f, to int, err error) error {
		return &MigrationError{Entity: info.name, Key: t.keyStrings(item), From: f, To: to, Err: err}
	}
	switch {
	case !ok:
		return nil, keyErr(0, mp.current, errors.New("the schema attribute "+strconv.Quote(t.opts.SchemaAttribute)+" is not a positive number"))
	case from > mp.current:
		return nil, keyErr(from, mp.current, errors.New("the item is newer than this program's schema"))
	case from == mp.current:
		return nil, info.plan.DecodeIgnoring(item, rv, info.ignored)
	}
	work := maps.Clone(item)
	reserved := mp.reservedValues(item)
	for v := from; v < mp.current; v++ {
		if f := mp.raw[v-1]; f != nil {
			if err := f(RawItem(work)); err != nil {
				return nil, keyErr(v, v+1, err)
			}
			if a := mp.rewroteReserved(reserved, work); a != "" {
				return nil, keyErr(v, v+1, fmt.Errorf("the step changed attribute %q, which only the library writes (key, type, version, schema and receipt attributes): %w", a, ErrInvalidInput))
			}
		}
	}
	if err := info.plan.DecodeIgnoring(work, rv, info.ignored); err != nil {
		return nil, keyErr(from, mp.current, err)
	}
	for v := from; v < mp.current; v++ {
		if f := mp.typed[v-1]; f != nil {
			if err := f(rv); err != nil {
				return nil, keyErr(v, v+1, err)
			}
		}
	}
	return work, nil
}

// reservedValues records the values of the reserved attributes as text, so that
// a step that changes one in place (through the shared pointer) is seen too.
func (mp *migrationPlan) reservedValues(item map[string]types.AttributeValue) []string {
	out := make([]string, len(mp.reserved))
	for i, a := range mp.reserved {
		switch v := item[a].(type) {
		case nil:
		case *types.AttributeValueMemberS:
			out[i] = "S:" + v.Value
		case *types.AttributeValueMemberN:
			out[i] = "N:" + v.Value
		default:
			out[i] = fmt.Sprintf("%T:%v", v, v)
		}
	}
	return out
}

// rewroteReserved returns an attribute that the library alone writes and whose
// value in work differs from before (as reservedValues gave it), or "".
func (mp *migrationPlan) rewroteReserved(before []string, work map[string]types.AttributeValue) string {
	after := mp.reservedValues(work)
	for i, a := range mp.reserved {
		if before[i] != after[i] {
			return a
		}
	}
	return ""
}

// afterMigrate writes a migrated item back as the entity's mode says: stored is the
// item as read (in full: never from an index or a projection), work the image the
// raw steps made of it, rv the migrated value.
func (info *entityInfo) afterMigrate(ctx context.Context, stored, work map[string]types.AttributeValue, rv reflect.Value) {
	mp := info.migration
	if mp.mode == WriteBackOff {
		return
	}
	w, err := info.planWriteBack(stored, work, rv)
	if err != nil {
		mp.report(err)
		return
	}
	if mp.mode == WriteBackSync {
		_, _ = mp.send(ctx, info.table, w) // failures go to OnError; the read stands
		return
	}
	select {
	case mp.queue <- w:
	default:
		mp.dropped.Add(1)
		mp.report(errorf("write-back of %s%s dropped: the queue of %d is full", info.name, formatKey(w.keyStr), cap(mp.queue)))
	}
}

func (mp *migrationPlan) report(err error) {
	if mp.onError != nil {
		mp.onError(err)
	}
}

// send writes a migrated item back; losing the race to a newer write is not an
// error (written=false, err=nil). A write refused by a global table's
// ReplicatedWriteConflictException applied nothing, and is sent again after the
// table's Backoff, its condition judged afresh, like every write. Other failures
// are reported and returned.
func (mp *migrationPlan) send(ctx context.Context, t *Table, w *writeRequest) (written bool, err error) {
	b := t.opts.Backoff.withDefaults()
	for attempt := 1; ; attempt++ {
		_, err = w.call(ctx, t)
		if !replicatedConflict(err) || attempt >= b.MaxAttempts {
			break
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			err = fmt.Errorf("%w (waiting to send it again: %w)", err, werr)
			break
		}
	}
	switch {
	case err == nil:
		mp.written.Add(1)
		return true, nil
	case isConditionFailed(err):
		mp.lost.Add(1)
		return false, nil
	case ctx.Err() != nil:
		return false, err // stopped: the item is migrated again later, at worst twice in memory
	default:
		err = errorf("write-back of %s: %w", formatKey(w.keyStr), err)
		mp.report(err)
		return false, err
	}
}

func (mp *migrationPlan) work(t *Table, info *entityInfo) {
	defer close(mp.done)
	for w := range mp.queue {
		_, _ = mp.send(context.Background(), t, w) // failures go to OnError
	}
}

func (mp *migrationPlan) close() {
	mp.closeOnce.Do(func() { close(mp.queue) })
	<-mp.done
}

// planWriteBack builds the write-back of a migrated item: one UpdateItem that
// changes only what the migration changed (what the raw steps added, changed or
// removed, the fields the typed steps changed, index keys recomputed, the schema
// version) and leaves every other attribute as it is, byte for byte; on the
// condition that the stored item is unchanged since it was read. stored must be
// the whole item: the library never writes back what it did not read in full.
func (info *entityInfo) planWriteBack(stored, work map[string]types.AttributeValue, rv reflect.Value) (*writeRequest, error) {
	enc, err := info.encodeItem(rv)
	if err != nil {
		return nil, err
	}
	t := info.table
	enc[t.opts.SchemaAttribute] = &types.AttributeValueMemberN{Value: strconv.Itoa(info.migration.current)}
	// What the typed steps changed: the fields of the value as the raw image
	// decodes (before the typed steps) against the migrated value's. A field they
	// left alone keeps the raw image's bytes, whatever its encoding would be (a
	// string set, a NULL, a map entry T does not model); a changed one is merged
	// into the raw image's value (attrvalue.Merge), so entries of a map that T does not
	// model survive a change to another entry.
	base := map[string]types.AttributeValue{}
	bv := reflect.New(info.goType).Elem()
	if err := info.plan.DecodeIgnoring(work, bv, info.ignored); err != nil {
		return nil, errorf("write-back of %s: %w", info.name, err)
	}
	if err := info.plan.EncodeInto(bv, base); err != nil {
		return nil, errorf("write-back of %s: %w", info.name, err)
	}
	// The image the item should have: what the raw steps left, with the fields
	// the typed steps changed, the keys recomputed, the type and the schema.
	want := maps.Clone(work)
	for _, kt := range info.all {
		delete(want, kt.attr)
	}
	for _, f := range info.plan.Fields() {
		before, after := base[f.Name], enc[f.Name]
		if attrvalue.Equal(before, after) {
			continue
		}
		if m := attrvalue.Merge(work[f.Name], before, after); m != nil {
			want[f.Name] = m
		} else {
			delete(want, f.Name)
		}
	}
	for name, av := range enc {
		if _, field := info.plan.Field(name); !field {
			want[name] = av
		}
	}
	// A migration that changes a primary key input would move the item: an update
	// cannot, and writing the other attributes under the old key would leave an
	// item whose fields disagree with its key.
	for _, a := range t.baseKeyAttrs() {
		if !attrvalue.Equal(stored[a], enc[a]) {
			return nil, errorf("write-back of %s%s: the migrated value renders another primary key (%s): a migration cannot move an item; nothing written: %w", info.name, formatKey(t.keyStrings(stored)), a, ErrInvalidInput)
		}
	}
	if err := info.unique.checkWriteBack(stored, want); err != nil { // unique.go
		return nil, err
	}
	w := &writeRequest{kind: kindWriteBack, info: info, keyStr: t.keyStrings(stored)}
	w.key = t.keyOf(stored)
	var sets, removes []string
	skip := func(name string) bool {
		return name == t.opts.PartitionKey || name == t.opts.SortKey || info.version != nil && name == info.version.Name
	}
	for _, name := range sortedKeys(want) {
		if !skip(name) && !attrvalue.Equal(stored[name], want[name]) {
			sets = append(sets, w.b.Name(name)+" = "+w.b.Value(want[name]))
		}
	}
	for _, name := range sortedKeys(stored) {
		if _, ok := want[name]; !ok && !skip(name) {
			removes = append(removes, w.b.Name(name))
		}
	}
	w.update = expr.Update(sets, removes, nil, nil)
	if info.version != nil {
		// Every write of a versioned entity moves its version: that, the schema and
		// the incarnation are enough.
		w.pin = t.pinOf(info, stored)
		w.cond = expr.And(info.unchangedVersion(&w.b, stored), w.pinGuard(t))
	} else {
		w.cond = info.unchangedImage(&w.b, stored)
	}
	return w, nil
}

// unchangedVersion: the item still has the schema and version it was read with.
func (info *entityInfo) unchangedVersion(b *expr.Builder, stored map[string]types.AttributeValue) string {
	t := info.table
	conds := []string{expr.Same(b, t.opts.SchemaAttribute, stored), expr.Same(b, info.version.Name, stored), expr.Same(b, t.opts.TypeAttribute, stored)}
	return expr.And(conds...)
}

// unchangedImage: every attribute read is still there with its value, and no
// attribute the entity knows has appeared.
func (info *entityInfo) unchangedImage(b *expr.Builder, stored map[string]types.AttributeValue) string {
	t := info.table
	known := []string{t.opts.SchemaAttribute, t.opts.TypeAttribute}
	for _, f := range info.plan.Fields() {
		known = append(known, f.Name)
	}
	for _, kt := range info.all {
		known = append(known, kt.attr)
	}
	return expr.Unchanged(b, stored, t.opts.PartitionKey, t.opts.SortKey, known)
}

// schemaFeature is the plan of a migrated entity's schema version, compiled at
// Register: every whole item written stores the current one.
type schemaFeature struct {
	attr    string
	current types.AttributeValue
	noOwner
}

func newSchemaFeature(info *entityInfo) *schemaFeature {
	return &schemaFeature{attr: info.table.opts.SchemaAttribute, current: &types.AttributeValueMemberN{Value: strconv.Itoa(info.migration.current)}}
}

func (s *schemaFeature) plan(p *writePlan) error {
	if p.whole() {
		p.set(s.attr, s.current)
	}
	return nil
}
