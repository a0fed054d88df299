package singletable

import (
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Receipts and incarnations: what lets a write whose response was lost be judged.
//
// A receipt is a random token a write stores in the item it writes. Reading the
// item back after a failure that may have applied the write (a reset connection, a
// timeout, a 5xx), the token tells that the write landed. Versioned writes keep
// their receipts in a few slots keyed by version ("_wr0".."_wr3" by default,
// TableOptions.Receipts), so a write is recognised even after later writes; an
// unversioned Create, an Update with Add and a clobbering write use one slot of
// their own ("_wru").
//
// An incarnation is a random id ("_inc") stored by whichever write creates an item
// and kept by every write that changes it. An item deleted and created again has
// another. A write made from an item the library read itself ([Entity.Mutate],
// migration write-back) is conditioned on that incarnation, so it can never land on
// an item created since, and its outcome can be judged in full after a lost
// response: landed (receipt), not landed (same incarnation, version unchanged: sent
// again), lost to another writer (same incarnation, version moved: a conflict).
//
// Without a receipt to find, a missing receipt proves nothing: the write may have
// landed on an item that was then deleted, or replaced, or deleted and created
// again at the version the write expected. The library then returns an error
// matching [ErrAmbiguous] and never sends the write again.

// tokenLen is the length of a token from newToken.
const tokenLen = 32

// newToken returns a random ClientRequestToken or incarnation id: 32 hex digits.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errorf("random token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// receiptLen is the length of a receipt (planEnv.receipt): 16 characters, 96 random bits.
const receiptLen = 16

// receiptAttr names the receipt slot of a version.
func (t *Table) receiptAttr(version uint64) string {
	return t.opts.ReceiptAttribute + strconv.FormatUint(version%uint64(t.opts.Receipts), 10)
}

// writeReceiptAttr names the slot of writes that have no version of their own to
// key a slot by: unversioned Creates, Updates with Add, clobbering writes.
func (t *Table) writeReceiptAttr() string { return t.opts.ReceiptAttribute + "u" }

// isReceiptAttr reports whether name is one of the receipt slots.
func (t *Table) isReceiptAttr(name string) bool {
	rest, ok := strings.CutPrefix(name, t.opts.ReceiptAttribute)
	if !ok {
		return false
	}
	if rest == "u" {
		return true
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 0 && n < t.opts.Receipts && strconv.Itoa(n) == rest
}

// reservedFold returns the attribute the library writes itself (key, type,
// schema, receipt or incarnation) that name equals but for case, or "".
func (t *Table) reservedFold(name string) string {
	for _, r := range t.libraryAttributes() {
		if strings.EqualFold(r, name) {
			return r
		}
	}
	return ""
}

// receiptsFeature is the plan of receipts and incarnations, compiled at
// Register for every entity: a write that a lost answer leaves to be judged
// stores a receipt, and a versioned entity's items carry an incarnation.
type receiptsFeature struct {
	incarnation bool // the entity is versioned: its items carry an incarnation id
	noOwner
}

// plan gives a receipt to a Create, to a versioned Put or Update (in the slot of
// the version it stores; a clobbering one, whose version is moved on the
// server, in the write slot) and to a Put or Update that would
// apply twice if sent twice (a count, Add, an append) or that depends on the
// item by the caller's condition; and an incarnation id to an item a write may
// create (if_not_exists, so that an existing item keeps its own).
func (r *receiptsFeature) plan(p *writePlan) error {
	t := p.info.table
	var receipt bool
	switch p.kind {
	case kindCreate:
		receipt = true
	case kindPut, kindUpdate:
		receipt = p.versioned || p.repeats || p.cond || p.receipt
	}
	if receipt {
		slot := t.writeReceiptAttr()
		if p.version > 0 {
			slot = t.receiptAttr(p.version)
		}
		token, err := p.env.receipt()
		if err != nil {
			return err
		}
		rp := &receiptPart{attr: slot, token: token}
		p.set(slot, rp.av())
		p.w.receipted = true
		p.stake(rp)
		tk := t.opts
		if r.incarnation {
			// The stored item holds the receipts of earlier writes and the incarnation.
			p.extra += (tk.Receipts+1)*(len(tk.ReceiptAttribute)+len(strconv.Itoa(tk.Receipts-1))+receiptLen) + len(tk.IncarnationAttribute) + tokenLen
		} else {
			p.extra += len(slot) + receiptLen
		}
	}
	if !r.incarnation {
		return nil
	}
	inc := t.opts.IncarnationAttribute
	switch {
	case p.kind == kindCreate, p.kind == kindBatchPut:
		id, err := p.env.token()
		if err != nil {
			return err
		}
		p.set(inc, &types.AttributeValueMemberS{Value: id})
	case p.kind == kindPut, p.kind == kindUpdate && p.upsert:
		id, err := p.env.token()
		if err != nil {
			return err
		}
		p.setIfAbsent(inc, &types.AttributeValueMemberS{Value: id}, nil, reflect.Value{})
		p.w.newInc = id
	}
	return nil
}

// receiptPart is one write's receipt: the token and the slot it is stored in.
type receiptPart struct {
	attr, token string
	noPart
}

// judge: the item read back holds the receipt, so the write landed.
func (rp *receiptPart) judge(_ *writeRequest, cur map[string]types.AttributeValue) (verdict, string) {
	if s, ok := cur[rp.attr].(*types.AttributeValueMemberS); ok && s.Value == rp.token {
		return landed, ""
	}
	return abstain, ""
}

// av returns the receipt as an attribute value.
func (rp *receiptPart) av() types.AttributeValue {
	return &types.AttributeValueMemberS{Value: rp.token}
}

// pin is the incarnation a write is for, as the library read it: whether an item
// existed, its incarnation id (if it had one) and version. Writes carrying a pin
// are conditioned on it and judged in full after a lost response.
type pin struct {
	exists  bool
	inc     string // "" when the item had none (written before incarnations, or by other code)
	version uint64
}

// pinOf reads the pin of an item as read (nil: missing).
func (t *Table) pinOf(info *entityInfo, item map[string]types.AttributeValue) *pin {
	if item == nil {
		return &pin{}
	}
	p := &pin{exists: true}
	if s, ok := item[t.opts.IncarnationAttribute].(*types.AttributeValueMemberS); ok {
		p.inc = s.Value
	}
	if info.version != nil {
		p.version, _ = storedVersion(item, info.version.Name)
	}
	return p
}

// same reports whether cur (nil: missing) is the incarnation p was read from; a
// write that may have set the incarnation itself (newInc) counts as the same.
func (p *pin) same(t *Table, cur map[string]types.AttributeValue, newInc string) bool {
	if cur == nil || !p.exists {
		return false
	}
	s, ok := cur[t.opts.IncarnationAttribute].(*types.AttributeValueMemberS)
	switch {
	case p.inc != "":
		return ok && s.Value == p.inc
	case !ok:
		return true
	default:
		return newInc != "" && s.Value == newInc
	}
}
