package singletable

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// Optimistic concurrency control.
//
// An entity with an integer field tagged `singletable:"version"` is versioned. Every
// write then carries a condition on the version the caller holds and stores the
// next one:
//
//   - Put with version 0 creates: it succeeds only if no item exists at the key (or
//     the item there has no version yet, as items written before versioning was
//     adopted), and stores version 1.
//   - Put, Update and Delete with version n > 0 succeed only if the stored version
//     is n; Put and Update store n+1. Update and Delete with version 0 are refused
//     before sending: read the item first, or use [Clobber].
//   - A write that loses the race fails with a [*ConflictError] (errors.Is
//     ErrConflict) that tells a moved version from a missing item.
//   - The value passed in is never modified: Put returns the stored value with its
//     new version, Update the item as stored.
//
// Exactly once. A write whose response is lost (a reset connection, a timeout, a
// 5xx) may or may not have been applied. The SDK does not retry versioned writes
// after such errors; instead the item is read back (consistently) and each write's
// random receipt, stored with the item in one of a few slots keyed by version
// (TableOptions.Receipts), tells whether it landed. A write that landed is reported
// as a success, never as a conflict, and is never sent again; one that did not is
// sent again, within the Backoff's attempts. Only when more writes than there are
// receipt slots landed in between can the outcome not be known: then the error
// matches [ErrAmbiguous]. Throttling errors (nothing applied) are retried by the SDK
// as usual.
//
// A Create of an unversioned entity carries a receipt too (in the slot of version
// 1, "_wr1" by default, a 32-byte token stored with the item), so that after a lost
// response it is reported as created, not as [ErrAlreadyExists] because of its own
// earlier attempt. Other unversioned writes carry none: Put and Delete are
// idempotent, and an Update with Add applies again when retried (at least once);
// guard it with a version, or a condition, where that matters.

// ErrConflict means a versioned write lost a race: the item's version is not the
// one the caller held, or the item is gone. The error is a [*ConflictError].
var ErrConflict = errors.New("singletable: version conflict")

// ErrAmbiguous means a write's response was lost and reading the item back could
// not tell whether the write was applied. Retrying it blindly may apply it twice.
var ErrAmbiguous = errors.New("singletable: write outcome unknown")

// ConflictError reports a versioned write that lost a race. It matches ErrConflict
// and ErrCondition, ErrNotFound when the item is missing, and ErrAlreadyExists for
// a Create.
type ConflictError struct {
	Op       string            // "Put", "Create", "Update", "Delete"
	Entity   string            // Go type name of the entity
	Key      map[string]string // rendered primary key
	Expected uint64            // the version the write held
	// Current is the version stored when the conflict was seen, if CurrentKnown.
	Current      uint64
	CurrentKnown bool
	Missing      bool  // no item exists at the key
	Err          error // the AWS error, when there was one
}

// Error names the write, the key, the version expected and what was found.
func (e *ConflictError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: " + e.Op + " " + e.Entity + formatKey(e.Key) + ": version conflict: expected version " + strconv.FormatUint(e.Expected, 10))
	switch {
	case e.Missing:
		b.WriteString(", but the item is missing")
	case e.CurrentKnown:
		b.WriteString(", found " + strconv.FormatUint(e.Current, 10))
	default:
		b.WriteString(", found an unreadable version")
	}
	return b.String()
}

// Is matches ErrConflict, ErrCondition, and ErrNotFound or ErrAlreadyExists as the
// case may be.
func (e *ConflictError) Is(target error) bool {
	switch target {
	case ErrConflict, ErrCondition:
		return true
	case ErrNotFound:
		return e.Missing
	case ErrAlreadyExists:
		return e.Op == "Create" && !e.Missing
	}
	return false
}

// Unwrap returns the AWS error, if any.
func (e *ConflictError) Unwrap() error { return e.Err }

// Clobber skips the version check of a versioned entity's write, and says so: the
// write replaces (or deletes) whatever version is stored. The stored version is
// still incremented, on the server, so that holders of the old version see a
// conflict; Put and Update return the version stored. A clobbering write carries no
// receipt and is not protected against being applied twice.
func Clobber() WriteOption { return clobberOption{} }

type clobberOption struct{}

func (clobberOption) applyWrite(w *writeOptions) { w.clobber = true }
func (clobberOption) applyUpdate(u *updateOptions) error {
	u.clobber = true
	return nil
}

// versionPlan is the version part of one write.
type versionPlan struct {
	attr     string // version attribute
	expected uint64
	next     uint64
	token    string // this write's receipt
	slot     string // the receipt attribute for version next
	clobber  bool
}

// storedField returns the plan field of the struct's i-th field.
func storedField(info *entityInfo, i int, sf reflect.StructField, what string) (*codec.Field, error) {
	for _, pf := range info.plan.Fields() {
		if len(pf.Index) == 1 && pf.Index[0] == i {
			return pf, nil
		}
	}
	return nil, &EntityError{Entity: info.name, Field: sf.Name, Reason: "the " + what + " field is not stored (unexported or tagged \"-\")"}
}

func isIntegerKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64 && k != reflect.Uintptr
}

// compileVersion makes the struct's i-th field the version.
func compileVersion(info *entityInfo, i int, sf reflect.StructField) error {
	if info.version != nil {
		return &EntityError{Entity: info.name, Field: sf.Name, Reason: "a second version field (the first is " + info.version.GoName + ")"}
	}
	f, err := storedField(info, i, sf, "version")
	if err != nil {
		return err
	}
	if !isIntegerKind(f.Type.Kind()) {
		return &EntityError{Entity: info.name, Field: sf.Name, Reason: "the version field must be an integer, not " + f.Type.String()}
	}
	for _, kt := range info.all {
		for _, kf := range kt.fields {
			if kf == f {
				return &EntityError{Entity: info.name, Field: sf.Name, Reason: "the version cannot be part of a key (" + kt.attr + ")"}
			}
		}
	}
	info.version = f
	return nil
}

// versionOf reads the version a value holds.
func (info *entityInfo) versionOf(sv reflect.Value) (uint64, error) {
	fv, _ := info.version.ValueOf(sv)
	if fv.CanInt() {
		n := fv.Int()
		if n < 0 {
			return 0, fmt.Errorf("singletable: %s.%s: negative version %d: %w", info.name, info.version.GoName, n, ErrInvalidInput)
		}
		return uint64(n), nil
	}
	return fv.Uint(), nil
}

// maxVersion is the largest version the field can hold.
func (info *entityInfo) maxVersion() uint64 {
	bits := info.version.Type.Bits()
	if info.version.Type.Kind() >= reflect.Uint && info.version.Type.Kind() <= reflect.Uint64 {
		return 1<<bits - 1
	}
	return 1<<(bits-1) - 1
}

// setVersion stores n in a value's version field.
func (info *entityInfo) setVersion(sv reflect.Value, n uint64) {
	fv := sv.FieldByIndex(info.version.Index)
	if fv.CanInt() {
		fv.SetInt(int64(n))
	} else {
		fv.SetUint(n)
	}
}

// planVersion works out the version part of a write of sv.
func (info *entityInfo) planVersion(sv reflect.Value, clobber bool) (*versionPlan, error) {
	exp, err := info.versionOf(sv)
	if err != nil {
		return nil, err
	}
	vp := &versionPlan{attr: info.version.Name, expected: exp, clobber: clobber}
	if clobber {
		return vp, nil
	}
	if exp >= info.maxVersion() {
		return nil, fmt.Errorf("singletable: %s.%s: version %d is the largest the field holds; the next write would overflow: %w", info.name, info.version.GoName, exp, ErrInvalidInput)
	}
	vp.next = exp + 1
	if vp.token, err = newReceipt(); err != nil {
		return nil, err
	}
	vp.slot = info.table.receiptAttr(vp.next)
	return vp, nil
}

func newReceipt() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("singletable: random receipt: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// receiptAttr names the receipt slot of a version.
func (t *Table) receiptAttr(version uint64) string {
	return t.opts.ReceiptAttribute + strconv.FormatUint(version%uint64(t.opts.Receipts), 10)
}

// reservedFold returns the attribute the library writes itself (key, type,
// schema or receipt) that name equals but for case, or "".
func (t *Table) reservedFold(name string) string {
	for _, r := range t.libraryAttributes() {
		if strings.EqualFold(r, name) {
			return r
		}
	}
	return ""
}

// isReceiptAttr reports whether name is one of the receipt slots.
func (t *Table) isReceiptAttr(name string) bool {
	rest, ok := strings.CutPrefix(name, t.opts.ReceiptAttribute)
	if !ok {
		return false
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 0 && n < t.opts.Receipts && strconv.Itoa(n) == rest
}

// planVersionedPut plans a Put of a versioned entity as an UpdateItem that sets
// every stored attribute and removes every empty one, so that the receipts of
// earlier writes survive it. Attributes that T does not know are kept.
func (info *entityInfo) planVersionedPut(sv reflect.Value, o writeOptions, vp *versionPlan) (*writeRequest, error) {
	item, err := info.encodeItem(sv)
	if err != nil {
		return nil, err
	}
	tk := info.table.opts
	// The stored item also holds the version and up to Receipts receipts.
	receipts := tk.Receipts * (len(tk.ReceiptAttribute) + len(strconv.Itoa(tk.Receipts-1)) + tokenLen)
	if err := info.checkSize(item, len(vp.attr)+20+receipts); err != nil {
		return nil, err
	}
	w := &writeRequest{op: "Put", version: vp, returnNew: vp.clobber}
	w.key = map[string]types.AttributeValue{tk.PartitionKey: item[tk.PartitionKey], tk.SortKey: item[tk.SortKey]}
	w.keyStr = map[string]string{tk.PartitionKey: item[tk.PartitionKey].(*types.AttributeValueMemberS).Value, tk.SortKey: item[tk.SortKey].(*types.AttributeValueMemberS).Value}
	var sets, removes []string
	for _, name := range sortedKeys(item) {
		if name == tk.PartitionKey || name == tk.SortKey || name == vp.attr {
			continue
		}
		sets = append(sets, w.b.Name(name)+" = "+w.b.Value(item[name]))
	}
	for _, f := range info.plan.Fields() {
		if _, ok := item[f.Name]; !ok && f.Name != vp.attr {
			removes = append(removes, w.b.Name(f.Name))
		}
	}
	for _, kt := range info.all {
		if _, ok := item[kt.attr]; !ok {
			removes = append(removes, w.b.Name(kt.attr))
		}
	}
	sets = append(sets, info.versionSets(&w.b, vp)...)
	w.update = joinUpdate(sets, removes, nil)
	ver, t := w.b.Name(vp.attr), w.b.Name(tk.TypeAttribute)
	var guard string
	switch {
	case vp.clobber:
		guard = info.typeGuard(&w.b)
	case vp.expected == 0:
		guard = "attribute_not_exists(" + w.b.Name(tk.PartitionKey) + ") OR (" + t + " = " + w.b.S(info.discriminator) +
			" AND (attribute_not_exists(" + ver + ") OR attribute_type(" + ver + ", " + w.b.S("NULL") + ")))"
	default:
		guard = ver + " = " + w.b.Value(numberAV(vp.expected)) + " AND " + t + " = " + w.b.S(info.discriminator)
	}
	if err := w.setCondition(guard, o.cond); err != nil {
		return nil, err
	}
	return w, nil
}

// versionSets returns the SET clauses that store the next version and the receipt:
// for a clobbering write, an increment on the server.
func (info *entityInfo) versionSets(b *expr.Builder, vp *versionPlan) []string {
	ver := b.Name(vp.attr)
	if vp.clobber {
		return []string{ver + " = if_not_exists(" + ver + ", " + b.Value(numberAV(0)) + ") + " + b.Value(numberAV(1))}
	}
	return []string{
		ver + " = " + b.Value(numberAV(vp.next)),
		b.Name(vp.slot) + " = " + b.S(vp.token),
	}
}

func numberAV(n uint64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatUint(n, 10)}
}

func joinUpdate(sets, removes, adds []string) string {
	var upd strings.Builder
	upd.WriteString("SET ")
	upd.WriteString(strings.Join(sets, ", "))
	if len(removes) > 0 {
		upd.WriteString(" REMOVE ")
		upd.WriteString(strings.Join(removes, ", "))
	}
	if len(adds) > 0 {
		upd.WriteString(" ADD ")
		upd.WriteString(strings.Join(adds, ", "))
	}
	return upd.String()
}

// outcome is what reading an item back says of a versioned write.
type outcome uint8

const (
	notLanded outcome = iota
	landed
	unknownOutcome
)

// storedVersion reads the version attribute of a raw item: 0 when it is missing or
// NULL; known=false when it is not a number that fits.
func storedVersion(item map[string]types.AttributeValue, attr string) (v uint64, known bool) {
	switch av := item[attr].(type) {
	case nil, *types.AttributeValueMemberNULL:
		return 0, true
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseUint(av.Value, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// judge tells from the item as read back (nil if missing) whether the write landed.
func (t *Table) judge(w *writeRequest, cur map[string]types.AttributeValue) outcome {
	vp := w.version
	if w.op == "Delete" {
		if cur == nil {
			return landed // gone, as asked
		}
		v, _ := storedVersion(cur, vp.attr)
		if v >= vp.expected {
			return notLanded
		}
		return unknownOutcome // deleted and created again since
	}
	if cur == nil {
		return notLanded
	}
	v, known := storedVersion(cur, vp.attr)
	if !known || v < vp.next {
		return notLanded
	}
	if s, ok := cur[vp.slot].(*types.AttributeValueMemberS); ok && s.Value == vp.token {
		return landed
	}
	if v-vp.next < uint64(t.opts.Receipts) {
		return notLanded // the slot still holds the receipt of whoever wrote version next
	}
	return unknownOutcome
}

// ambiguous reports whether a failed call may have been applied: the request may
// have reached DynamoDB but no answer came back, or the answer was a 5xx.
func ambiguous(err error) bool {
	var send *smithyhttp.RequestSendError
	var de *smithy.DeserializationError
	var ce *smithy.CanceledError
	var re *smithyhttp.ResponseError
	switch {
	case errors.As(err, &send), errors.As(err, &de), errors.As(err, &ce):
		return true
	case errors.As(err, &re):
		return re.HTTPStatusCode() >= 500
	}
	return false
}

// definiteRetryer lets the SDK retry only failures that certainly applied nothing
// (throttling, for one), leaving ambiguous ones to the caller.
type definiteRetryer struct{ aws.RetryerV2 }

func (r definiteRetryer) IsErrorRetryable(err error) bool {
	return !ambiguous(err) && r.RetryerV2.IsErrorRetryable(err)
}

func definiteRetries(o *dynamodb.Options) {
	switch r := o.Retryer.(type) {
	case nil:
	case aws.RetryerV2:
		o.Retryer = definiteRetryer{r}
	default:
		o.Retryer = definiteRetryer{retryerV2{r}}
	}
}

// retryerV2 adapts a plain Retryer.
type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// readBack reads an item consistently after a failed versioned write, retrying
// failed reads by the table's Backoff. It returns nil for a missing item.
func (t *Table) readBack(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	b := t.opts.Backoff.withDefaults()
	for attempt := 1; ; attempt++ {
		out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.name), Key: key, ConsistentRead: aws.Bool(true)})
		if err == nil {
			return out.Item, nil
		}
		if attempt >= b.MaxAttempts || ctx.Err() != nil {
			return nil, err
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}

// send runs a single-item write and returns the attributes DynamoDB returned (for
// Update) or, when the outcome had to be read back, the item as read. Versioned
// writes resolve ambiguous failures and conditional check failures by reading the
// item back; see the package's notes on optimistic concurrency.
func (e *Entity[T]) send(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	t := e.table
	if w.receipt != "" {
		return e.sendCreate(ctx, w)
	}
	if w.version == nil || w.version.clobber {
		attrs, err := w.call(ctx, t)
		if err != nil && w.op == "Update" && w.userCond && isConditionFailed(err) {
			// Tell a missing item from the caller's condition failing.
			if cur, rerr := t.readBack(ctx, w.key); rerr == nil && (cur == nil || !e.info.isType(cur)) {
				return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w", ErrNotFound, err))
			}
		}
		if err != nil {
			return nil, e.writeErr(w, err)
		}
		return attrs, nil
	}
	b := t.opts.Backoff.withDefaults()
	maybeSent := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		attrs, err := w.call(ctx, t, definiteRetries)
		if err == nil {
			return attrs, nil
		}
		ccf := isConditionFailed(err)
		if !ccf && !ambiguous(err) {
			return nil, e.writeErr(w, err)
		}
		if ccf && !maybeSent {
			// Nothing of this write was applied: the condition failed on its only
			// attempt. Read the item back to explain the conflict.
			cur, rerr := t.readBack(ctx, w.key)
			if rerr != nil {
				return nil, e.writeErr(w, err)
			}
			return nil, e.conflict(w, cur, err)
		}
		maybeSent = maybeSent || !ccf
		if ctx.Err() != nil {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w", ErrAmbiguous, err))
		}
		cur, rerr := t.readBack(ctx, w.key)
		if rerr != nil {
			if ccf {
				return nil, e.writeErr(w, err)
			}
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w (reading the item back also failed: %w)", ErrAmbiguous, err, rerr))
		}
		switch t.judge(w, cur) {
		case landed:
			return cur, nil
		case unknownOutcome:
			v, _ := storedVersion(cur, w.version.attr)
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: the write expected version %d and the item is at %d, past the %d receipts kept: %w", ErrAmbiguous, w.version.expected, v, t.opts.Receipts, err))
		}
		if ccf || !e.stillHeld(w, cur) {
			return nil, e.conflict(w, cur, err)
		}
		// Not applied, and the version it holds is still the stored one: send it again.
		if attempt >= b.MaxAttempts {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("not applied after %d attempts: %w", attempt, err))
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("not applied: %w: %w", err, werr))
		}
	}
}

// sendCreate runs a Create of an unversioned entity. As for versioned writes, the
// SDK does not retry failures that may have been applied; the item is read back
// instead, and the write's receipt tells whether it landed: if so it is reported
// created (not ErrAlreadyExists because of its own earlier attempt), if no item is
// there it is sent again, and if another write's item is there it already exists.
func (e *Entity[T]) sendCreate(ctx context.Context, w *writeRequest) (map[string]types.AttributeValue, error) {
	t := e.table
	b := t.opts.Backoff.withDefaults()
	maybeSent := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		attrs, err := w.call(ctx, t, definiteRetries)
		if err == nil {
			return attrs, nil
		}
		ccf := isConditionFailed(err)
		if ccf && !maybeSent && w.userCond {
			// The guard or the caller's condition: an item there tells which.
			if cur, rerr := t.readBack(ctx, w.key); rerr == nil && cur == nil {
				return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w", ErrCondition, err))
			}
		}
		if !ccf && !ambiguous(err) || ccf && !maybeSent {
			return nil, e.writeErr(w, err)
		}
		maybeSent = true
		if ctx.Err() != nil {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w", ErrAmbiguous, err))
		}
		cur, rerr := t.readBack(ctx, w.key)
		if rerr != nil {
			// An earlier attempt may be the item that made this one fail.
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w (reading the item back also failed: %w)", ErrAmbiguous, err, rerr))
		}
		if s, ok := cur[w.receiptAttr].(*types.AttributeValueMemberS); ok && s.Value == w.receipt {
			return cur, nil // landed
		}
		switch {
		case cur != nil: // another write's item
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w: %w", ErrAlreadyExists, ErrCondition, err))
		case ccf: // no item: the caller's own condition failed
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w", ErrCondition, err))
		}
		if attempt >= b.MaxAttempts {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("not applied after %d attempts: %w", attempt, err))
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return nil, e.itemErr(w.op, w.keyStr, fmt.Errorf("not applied: %w: %w", err, werr))
		}
	}
}

// stillHeld reports whether the item as read back still has the version the write
// expects, so that sending the write again can succeed.
func (e *Entity[T]) stillHeld(w *writeRequest, cur map[string]types.AttributeValue) bool {
	if cur == nil {
		return w.version.expected == 0 && w.op != "Delete"
	}
	v, known := storedVersion(cur, w.version.attr)
	return known && v == w.version.expected && e.info.isType(cur)
}

// conflict explains a failed condition on a versioned write, given the item as read
// back afterwards.
func (e *Entity[T]) conflict(w *writeRequest, cur map[string]types.AttributeValue, err error) error {
	if cur != nil && !e.info.isType(cur) {
		return e.itemErr(w.op, w.keyStr, fmt.Errorf("%w: %w: %w", ErrTypeMismatch, ErrCondition, err))
	}
	ce := explainConflict(e.info, w, cur)
	if ce == nil {
		return e.writeErr(w, err) // the version held; the caller's own condition failed
	}
	ce.Err = err
	return ce
}

// explainConflict returns the version conflict that the item as read back (nil if
// missing) shows for a failed versioned write, or nil when the version held and
// something else failed (the caller's condition, or the item's type).
func explainConflict(info *entityInfo, w *writeRequest, cur map[string]types.AttributeValue) *ConflictError {
	ce := &ConflictError{Op: w.op, Entity: info.name, Key: w.keyStr, Expected: w.version.expected}
	if cur == nil {
		if w.op == "Put" && w.version.expected == 0 {
			return nil
		}
		ce.Missing = true
		return ce
	}
	if !info.isType(cur) {
		return nil
	}
	ce.Current, ce.CurrentKnown = storedVersion(cur, w.version.attr)
	if ce.CurrentKnown && ce.Current == w.version.expected && w.op != "Create" {
		return nil
	}
	return ce
}

// Mutate reads the item at key's primary key, applies fn to it and writes it back
// with a version check; on a conflict it reads again, applies fn again and retries,
// with the Backoff's delays, up to its MaxAttempts (default: the table's Backoff), or
// until ctx ends. When no item exists, fn gets key with version 0 and the write
// creates the item. fn must only change the value it is given, and may be called
// several times; an error from it ends Mutate with nothing written. fn may not
// change the key's inputs or the version. Each attempt costs a consistent GetItem
// and an UpdateItem. Mutate needs a versioned entity.
func (e *Entity[T]) Mutate(ctx context.Context, key T, fn func(*T) error, opts ...RetryOption) (T, error) {
	ctx = e.observe(ctx)
	var zero T
	if e.info.version == nil {
		return zero, fmt.Errorf("singletable: Mutate %s: the entity has no version field: %w", e.info.name, ErrInvalidInput)
	}
	b := e.table.opts.Backoff
	for _, o := range opts {
		o.applyRetry(&b)
	}
	b = b.withDefaults()
	ksv := reflect.ValueOf(&key).Elem()
	if err := e.resolveShard(ctx, ksv, true); errors.Is(err, ErrNotFound) {
		_, err = e.info.fillShard(ksv, true) // a new item of a randomly sharded entity
		if err != nil {
			return zero, e.itemErr("Mutate", nil, err)
		}
	} else if err != nil {
		return zero, e.itemErr("Mutate", nil, err)
	}
	_, wantKey, err := e.info.primaryKey(ksv)
	if err != nil {
		return zero, e.itemErr("Mutate", nil, err)
	}
	for attempt := 1; ; attempt++ {
		cur, err := e.Get(ctx, key, Consistent())
		switch {
		case errors.Is(err, ErrNotFound):
			cur = key
			e.info.setVersion(reflect.ValueOf(&cur).Elem(), 0)
		case err != nil:
			return zero, err
		}
		held, _ := e.info.versionOf(reflect.ValueOf(&cur).Elem())
		next := cur
		if err := fn(&next); err != nil {
			return zero, err
		}
		nv := reflect.ValueOf(&next).Elem()
		_, gotKey, err := e.info.primaryKey(nv)
		if err != nil || gotKey[e.table.opts.PartitionKey] != wantKey[e.table.opts.PartitionKey] || gotKey[e.table.opts.SortKey] != wantKey[e.table.opts.SortKey] {
			return zero, e.itemErr("Mutate", wantKey, fmt.Errorf("the function changed the key: %w", ErrInvalidInput))
		}
		if v, _ := e.info.versionOf(nv); v != held {
			return zero, e.itemErr("Mutate", wantKey, fmt.Errorf("the function changed the version: %w", ErrInvalidInput))
		}
		stored, err := e.Put(ctx, next)
		if err == nil {
			return stored, nil
		}
		if !errors.Is(err, ErrConflict) {
			return zero, err
		}
		if attempt >= b.MaxAttempts {
			return zero, fmt.Errorf("singletable: Mutate %s: gave up after %d conflicts: %w", e.info.name, attempt, err)
		}
		if werr := b.Wait(ctx, attempt); werr != nil {
			return zero, fmt.Errorf("singletable: Mutate %s: %w (last: %w)", e.info.name, werr, err)
		}
	}
}
