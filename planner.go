package singletable

import (
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// The write planner. Every write of an entity's items (Put, Create, Update,
// Delete, BatchPut, the transaction actions, Mutate's write) is planned here into
// a writeRequest, which the pipeline runs (pipeline.go). The planner knows the
// shape of each write kind (a PutItem; a Put as an UpdateItem that keeps what is
// stored; an UpdateItem of changes, planned with update.go; a DeleteItem) and the
// type guard every write carries, and nothing of the entity's features: it runs
// each of the entity's feature plans once, in the order Register compiled them
// (register.go), as encoding/json's struct encoder runs the encoder of each field.
//
// A feature plan (version, receipts and incarnation, timestamps, the counter,
// defaults, validation, the shard, the schema version of a migrated entity, return
// values) contributes through the writePlan what the write sets, what it guards,
// whether it needs a receipt; what it owns it tells Register. What it must learn
// once the write was sent (how the write is judged after a lost answer, why its
// condition failed, what the value written takes from what was stored) it leaves
// with the write as a writePart. A new feature (unique values, generated ids) is
// one more plan: a file of its own and a line in Register.

// featurePlan is one entity feature's part in the writes of its entity, compiled
// at Register.
type featurePlan interface {
	// owns reports the fields the feature writes itself, which an Update may not
	// change, with their role ("version", "createdAt", ...). Asked once, at
	// Register.
	owns(own func(f *codec.Field, role string))
	// plan contributes the feature's parts to one write.
	plan(p *writePlan) error
}

// writePart is a feature's stake in one planned write, kept with it for the
// pipeline. Embed noPart for the methods a part does not need.
type writePart interface {
	// judge says what the item read back after a lost answer (nil: missing)
	// shows of the write as far as the feature can tell (abstain: nothing), and
	// what to say of the item if the outcome cannot be proven ("": nothing).
	judge(w *writeRequest, cur map[string]types.AttributeValue) (verdict, string)
	// explain returns why the write's condition failed, given the item as it
	// stood (nil: missing), when the feature's guard is why; nil otherwise. A
	// *ConflictError is returned as it is; any other error is wrapped with the
	// write.
	explain(w *writeRequest, cur map[string]types.AttributeValue) error
	// settle sets in the value written whole (w.whole) what the write stored that
	// the value could not know, and returns what the call returns of attrs: what
	// DynamoDB returned or, when lost is set, the item read back.
	settle(w *writeRequest, attrs map[string]types.AttributeValue, lost bool) (map[string]types.AttributeValue, error)
}

// noPart is the writePart of a feature with nothing to judge, explain or settle.
type noPart struct{}

func (noPart) judge(*writeRequest, map[string]types.AttributeValue) (verdict, string) {
	return abstain, ""
}
func (noPart) explain(*writeRequest, map[string]types.AttributeValue) error { return nil }
func (noPart) settle(_ *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	return attrs, nil
}

// noOwner is the owns of a feature that owns no field.
type noOwner struct{}

func (noOwner) owns(func(*codec.Field, string)) {}

// writePlan is one write being planned: what its kind and the caller give, and
// what the feature plans contribute. It holds the writeRequest it plans, so that
// planning a write allocates once.
type writePlan struct {
	w    writeRequest
	info *entityInfo
	kind writeKind
	// sv is the value written whole (Put, Create, BatchPut; a copy the library
	// owns, which the plans may change), or the key value (Update, Delete).
	sv  reflect.Value
	env *planEnv

	// The caller's options, as the plans read them.
	clobber, upsert bool
	cond            bool // the caller gave a condition (If)
	shardDrawn      bool // the library drew the value's shard (TxPut)
	old             oldSink
	ret             types.ReturnValue // Returning (Update)
	// checks are the values an Update gives whole fields: Set and SetIfNotExists
	// their value, Remove the field's zero value (validation).
	checks []fieldValue

	// What the plans contribute.
	attrs  []attrSet // stored as given
	absent []attrSet // stored where the item holds none (if_not_exists)
	incs   []attrInc // numbers moved on the server
	left   []string  // attributes a plan keeps as stored without a clause
	guards []string  // conditions on the item, when there is one
	// mustExist: the write needs the item (a version n > 0 is held).
	mustExist bool
	// keeps: a Put keeps something of the stored item (a version, createdAt, a
	// count), so it is sent as an UpdateItem.
	keeps bool
	// learns: the value written takes something from the item as stored (a
	// clobbered version, the createdAt kept, the count), so the answer carries it.
	learns bool
	// repeats: sent twice, the write would apply twice (Add, an append, a count).
	repeats bool
	// counts: the write changes the item by itself (a count), so an Update needs
	// no change of the caller's.
	counts bool
	// judged: after a lost answer the write is judged from the item read back,
	// never sent again blindly (a versioned write).
	judged bool
	// zeroVersion: a versioned Put at version 0 (not clobbering), which creates
	// the item or fails when the item holds a version.
	zeroVersion bool
	// versioned: the write stores a version, the next one (0: moved on the
	// server), whose receipt slot it keys.
	versioned bool
	version   uint64
	// extra counts the bytes the stored item holds besides what a Put sends.
	extra int
	// edits are an Update's changes, for the plans that look at them (unique.go).
	edits []change
	// receipt: a plan needs the write to carry a receipt (unique.go).
	receipt bool
}

// attrSet is an attribute a plan stores: the library's own (f nil), or a field
// with its Go value (fv), for the index keys it feeds.
type attrSet struct {
	name string
	av   types.AttributeValue
	f    *codec.Field
	fv   reflect.Value
}

// attrInc is a number a plan moves on the server: start when there is none,
// plus one.
type attrInc struct {
	name  string
	start int64
}

// fieldValue is a value an Update gives a whole field.
type fieldValue struct {
	f       *codec.Field
	fv      reflect.Value
	removed bool // Remove: fv is the zero value the field reads as
}

// set stores an attribute of the library's own as given.
func (p *writePlan) set(name string, av types.AttributeValue) {
	p.attrs = append(p.attrs, attrSet{name: name, av: av})
}

// setField stores a field's value as given; fv is its Go value.
func (p *writePlan) setField(f *codec.Field, av types.AttributeValue, fv reflect.Value) {
	p.attrs = append(p.attrs, attrSet{name: f.Name, av: av, f: f, fv: fv})
}

// setIfAbsent stores an attribute only where the item holds none. f is the field
// it is (nil for the library's own), fv its Go value: the index keys a field
// feeds are kept consistent with the value stored.
func (p *writePlan) setIfAbsent(name string, av types.AttributeValue, f *codec.Field, fv reflect.Value) {
	p.absent = append(p.absent, attrSet{name: name, av: av, f: f, fv: fv})
}

// leave keeps an attribute as stored: a Put neither sets nor removes it.
func (p *writePlan) leave(name string) { p.left = append(p.left, name) }

// increment moves a number on the server: start when there is none, plus one.
func (p *writePlan) increment(name string, start int64) {
	p.incs = append(p.incs, attrInc{name: name, start: start})
}

// guard adds a condition on the item as it stands, when there is one.
func (p *writePlan) guard(cond string) {
	if cond != "" {
		p.guards = append(p.guards, cond)
	}
}

// stake keeps a feature's part with the write.
func (p *writePlan) stake(part writePart) { p.w.parts = append(p.w.parts, part) }

// whole reports whether the write sends a whole item (Put, Create, BatchPut).
func (p *writePlan) whole() bool {
	return p.kind == kindPut || p.kind == kindCreate || p.kind == kindBatchPut
}

// sets reports whether a plan sets the attribute name, by a clause of its own.
func (p *writePlan) sets(name string) bool {
	for i := range p.attrs {
		if p.attrs[i].name == name {
			return true
		}
	}
	for i := range p.absent {
		if p.absent[i].name == name {
			return true
		}
	}
	for i := range p.incs {
		if p.incs[i].name == name {
			return true
		}
	}
	for _, l := range p.left {
		if l == name {
			return true
		}
	}
	return false
}

// start readies the plan of a write of kind on sv, for the incarnation pin when
// the library read it (nil otherwise).
func (p *writePlan) start(info *entityInfo, kind writeKind, sv reflect.Value, env *planEnv, pin *pin) {
	if env == nil {
		env = &planEnv{} // one clock reading for the whole write
	}
	p.info, p.kind, p.sv, p.env = info, kind, sv, env
	p.w.kind, p.w.info, p.w.pin, p.w.env = kind, info, pin, env
	p.w.parts = p.w.partBuf[:0]
	if p.whole() {
		p.w.whole = sv
	}
}

// withOptions takes the options of a Put, Create or Delete.
func (p *writePlan) withOptions(o writeOptions) {
	p.clobber, p.cond, p.old, p.shardDrawn = o.clobber, o.cond.IsSet(), o.old, o.shardDrawn
}

// run runs every feature plan of the entity once, in order.
func (p *writePlan) run() error {
	for _, f := range p.info.features {
		if err := f.plan(p); err != nil {
			return err
		}
	}
	return nil
}

// planPut plans a Put or a Create of sv (a copy the library owns, which the plans
// change; shard may be unset), for the incarnation p when the library read it
// (Mutate; nil otherwise). A Put that keeps something stored (a version, a
// createdAt, a count) is an UpdateItem that sets every attribute of the item and
// removes every empty one (putAsUpdate); any other Put is a PutItem, and a Create
// a PutItem on the condition that no item exists.
func (info *entityInfo) planPut(sv reflect.Value, kind writeKind, o writeOptions, pin *pin) (*writeRequest, error) {
	if o.err != nil {
		return nil, o.err
	}
	p := &writePlan{}
	p.start(info, kind, sv, o.env, pin)
	p.withOptions(o)
	if err := p.run(); err != nil {
		return nil, err
	}
	item, err := info.encodeWhole(sv)
	if err != nil {
		return nil, err
	}
	if kind == kindPut && p.keeps {
		return &p.w, p.putAsUpdate(item, o)
	}
	for _, s := range p.attrs {
		item[s.name] = s.av
	}
	if len(p.attrs) > 0 {
		// What the plans added (version, receipt, incarnation, schema) counts too.
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
	}
	w := &p.w
	w.item = item
	if kind == kindCreate {
		w.setKey(info.table, item)
	}
	// A plain Put is idempotent and needs no key until something fails.
	w.resendable = p.resendable()
	return w, p.condition(o.cond)
}

// putAsUpdate plans a Put as an UpdateItem: it sets every attribute of the item
// and removes every field and key attribute it lacks, but for those a plan sets
// by a clause of its own (the version, createdAt, the count, a receipt), so that
// the receipts of earlier writes, the incarnation and attributes T does not know
// are kept. A Mutate writes what its function left alone as stored (base).
func (p *writePlan) putAsUpdate(item map[string]types.AttributeValue, o writeOptions) error {
	info, w := p.info, &p.w
	t := info.table
	if o.base != nil {
		o.base.keepUnchanged(info, item, p.sets) // occ.go: Mutate writes what its function left alone as stored
	}
	if err := info.checkSize(item, p.extra); err != nil {
		return err
	}
	w.setKey(t, item)
	w.returnNew = p.learns
	tk := t.opts
	own := func(name string) bool {
		return name == tk.PartitionKey || name == tk.SortKey || p.sets(name)
	}
	var sets, removes []string
	for _, name := range sortedKeys(item) {
		if !own(name) {
			sets = append(sets, w.b.Name(name)+" = "+w.b.Value(item[name]))
		}
	}
	for _, f := range info.plan.Fields() {
		if _, ok := item[f.Name]; !ok && !own(f.Name) {
			removes = append(removes, w.b.Name(f.Name))
		}
	}
	for _, kt := range info.all {
		if _, ok := item[kt.attr]; !ok {
			removes = append(removes, w.b.Name(kt.attr))
		}
	}
	sets = p.setClauses(sets)
	for _, a := range p.absent {
		name := w.b.Name(a.name)
		value := w.b.Value(a.av)
		sets = append(sets, name+" = if_not_exists("+name+", "+value+")")
		if index := info.firstIndexFed(a.f); index != "" {
			// The index keys were rendered from the value's; the write holds only
			// where the stored one is the same, or there is none.
			w.inputs = append(w.inputs, storedInput{field: a.f, index: index, av: a.av, orAbsent: true})
			p.guard("attribute_not_exists(" + name + ") OR " + name + " = " + w.b.Value(a.av))
		}
	}
	w.update = expr.Update(sets, removes, nil, nil)
	w.resendable = p.resendable()
	return p.condition(o.cond)
}

// setClauses appends the SET clauses of what the plans store as given and the
// numbers they move.
func (p *writePlan) setClauses(sets []string) []string {
	b := &p.w.b
	for _, s := range p.attrs {
		sets = append(sets, b.Name(s.name)+" = "+b.Value(s.av))
	}
	for _, n := range p.incs {
		name := b.Name(n.name)
		sets = append(sets, name+" = if_not_exists("+name+", "+b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(n.start, 10)})+") + "+b.Value(numberAV(1)))
	}
	return sets
}

// firstIndexFed returns the first index key attribute the field f feeds ("" for
// none, or a nil f).
func (info *entityInfo) firstIndexFed(f *codec.Field) string {
	if f == nil {
		return ""
	}
	for _, kt := range info.all {
		if kt.index == "" {
			continue
		}
		for _, kf := range kt.fields {
			if kf == f {
				return kt.attr
			}
		}
	}
	return ""
}

// planBatchPut plans the item of one BatchPut (sv: a copy the library owns): a
// whole item written without condition.
func (info *entityInfo) planBatchPut(sv reflect.Value, env *planEnv) (map[string]types.AttributeValue, error) {
	p := &writePlan{}
	p.start(info, kindBatchPut, sv, env, nil)
	if err := p.run(); err != nil {
		return nil, err
	}
	item, err := info.encodeWhole(sv)
	if err != nil {
		return nil, err
	}
	for _, s := range p.attrs {
		item[s.name] = s.av
	}
	if len(p.attrs) > 0 {
		if err := info.checkSize(item, 0); err != nil {
			return nil, err
		}
	}
	return item, nil
}

// planDelete plans a Delete of the item at sv's key, for the incarnation pin when
// the library read it (nil otherwise).
func (info *entityInfo) planDelete(sv reflect.Value, o writeOptions, pin *pin) (*writeRequest, error) {
	if o.err != nil {
		return nil, o.err
	}
	k, ks, err := info.primaryKey(sv)
	if err != nil {
		return nil, err
	}
	p := &writePlan{}
	p.start(info, kindDelete, sv, o.env, pin)
	p.withOptions(o)
	p.w.key, p.w.keyStr = k, ks
	if err := p.run(); err != nil {
		return nil, err
	}
	p.w.resendable = p.resendable()
	return &p.w, p.condition(o.cond)
}

// deleteMissing decides a Delete of an item that is in none of its places (a
// randomly sharded entity's): nil when deleting a missing item succeeds, as it
// does unless the plans say the write needs the item (a version n > 0 held).
func (info *entityInfo) deleteMissing(sv reflect.Value, o writeOptions) (mustExist bool, err error) {
	p := &writePlan{}
	p.start(info, kindDelete, sv, o.env, nil)
	p.withOptions(o)
	if err := p.run(); err != nil {
		return false, err
	}
	return p.mustExist, nil
}

// resendable reports whether the write may be sent again after a failure that
// may have applied it, without judging the item first: it stores no receipt, is
// not judged (versioned), depends on no condition of the caller's (which could
// hold on an item created or deleted since) and asks for nothing only its answer
// carries. Such writes (unversioned Puts, Deletes, Updates without Add) are
// idempotent.
func (p *writePlan) resendable() bool {
	return !p.w.receipted && !p.judged && !p.cond && !p.w.answerOnly
}

// mayCreate reports whether the write may find no item: a Put or Delete unless
// the plans need the item, an Update with Upsert unless they do.
func (p *writePlan) mayCreate() bool {
	if p.kind == kindUpdate {
		return p.upsert && !p.mustExist
	}
	return !p.mustExist
}

// condition sets the write's condition: the pin (the incarnation read), the type
// guard (the item is of this type, or absent where the write may find none) with
// the plans' guards on it, and the caller's condition. Writes with nothing but
// the type guard send the one built at Register.
func (p *writePlan) condition(user expression.ConditionBuilder) error {
	info, w := p.info, &p.w
	t := info.table
	switch {
	case p.kind == kindCreate:
		return w.setFixedCondition(info.createGuard, user)
	case len(p.guards) == 0 && w.pin == nil && w.update == "":
		return w.setFixedCondition(info.putGuard, user)
	}
	existing := func() string { return expr.And(append([]string{info.typeIs(&w.b)}, p.guards...)...) } // adopt.go
	var guard string
	switch {
	case p.mayCreate():
		guard = info.absentOr(&w.b, existing())
	case p.kind == kindUpdate && info.adopt: // the type guard is an OR (adopt.go): each term in parentheses
		guard = expr.And(append([]string{"attribute_exists(" + w.b.Name(t.opts.PartitionKey) + ")", info.typeIs(&w.b)}, p.guards...)...)
	case p.kind == kindUpdate:
		guard = "attribute_exists(" + w.b.Name(t.opts.PartitionKey) + ") AND " + existing()
	default:
		guard = existing()
	}
	return w.setCondition(expr.And(w.pinGuard(t), guard), user)
}

// settle runs the parts of a write that was sent (attrs: what DynamoDB returned,
// or, when lost is set, the item read back) and returns what the call returns.
func (w *writeRequest) settle(attrs map[string]types.AttributeValue, lost bool) (map[string]types.AttributeValue, error) {
	var err error
	for _, part := range w.parts {
		if attrs, err = part.settle(w, attrs, lost); err != nil {
			return attrs, err
		}
	}
	return attrs, nil
}

// setCondition joins the library's guard with the caller's condition, if any.
func (w *writeRequest) setCondition(guard string, cond expression.ConditionBuilder) error {
	user, err := w.b.Condition(cond)
	if err != nil {
		return errorf("condition: %w: %w", ErrInvalidInput, err)
	}
	w.userCond = user != ""
	w.cond = expr.And(guard, user)
	return nil
}

// setFixedCondition is setCondition for a guard built once (f), with w's builder
// still unused.
func (w *writeRequest) setFixedCondition(f *expr.Fixed, cond expression.ConditionBuilder) error {
	guard := w.b.Use(f)
	if !cond.IsSet() {
		w.cond, w.condP, w.userCond = guard, f.TextPtr(), false
		return nil
	}
	return w.setCondition(guard, cond)
}

// setKey sets the write's key and key strings from a whole item.
func (w *writeRequest) setKey(t *Table, item map[string]types.AttributeValue) {
	w.key = t.keyOf(item)
	w.keyStr = t.keyStrings(item)
}

// pinGuard conditions a write on the incarnation it was read from: the item as
// read is still there (or still missing).
func (w *writeRequest) pinGuard(t *Table) string {
	p := w.pin
	if p == nil {
		return ""
	}
	switch {
	case !p.exists:
		return "attribute_not_exists(" + w.b.Name(t.opts.PartitionKey) + ")"
	case p.inc == "":
		return "attribute_exists(" + w.b.Name(t.opts.PartitionKey) + ") AND attribute_not_exists(" + w.b.Name(t.opts.IncarnationAttribute) + ")"
	default:
		return w.b.Name(t.opts.IncarnationAttribute) + " = " + w.b.S(p.inc)
	}
}

// typeGuard is the condition that keeps a write from touching an item of another
// entity type at the same key: the item is absent or of this type.
func (info *entityInfo) typeGuard(b *expr.Builder) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR " + info.typeIs(b) // adopt.go
}

// absentOr is the guard of a write that may create the item: none at the key, or
// the guard cond on the one there.
func (info *entityInfo) absentOr(b *expr.Builder, cond string) string {
	return "attribute_not_exists(" + b.Name(info.table.opts.PartitionKey) + ") OR (" + cond + ")"
}
