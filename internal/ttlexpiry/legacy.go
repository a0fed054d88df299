package ttlexpiry

import (
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/expr"
)

// Legacy is a write that stores a derived ttl only where the item holds none
// (if_not_exists), beside a base it keeps as stored (createdAt): right for a
// new item, and for one whose ttl is stored, but an item written before the
// ttl was declared holds its base and no ttl, and the ttl it needs is the
// stored base's plus after, not the one the write derived from its own. So the
// write is guarded: the item has its ttl, or no base (Guard). When that guard
// fails, Adapt derives the ttl from the base as it stood, gives it to the
// if_not_exists clause and conditions the write on that base instead: sent
// again, the write stores base + after (once; the item then holds its ttl).
type Legacy struct {
	ttlAttr, baseAttr string
	ttl, base         string // their name placeholders
	guard             string
	// Derive is the ttl derived from a stored base; false when the base holds
	// no time (zero, or not readable as the base's field).
	Derive func(base types.AttributeValue) (types.AttributeValue, bool)
	done   bool
}

// NewLegacy returns the guard of a write that stores the ttl attribute ttl
// with if_not_exists beside base (its names built in b), and what adapts it.
func NewLegacy(b *expr.Builder, ttl, base string, derive func(types.AttributeValue) (types.AttributeValue, bool)) (*Legacy, string) {
	l := &Legacy{ttlAttr: ttl, baseAttr: base, ttl: b.Name(ttl), base: b.Name(base), Derive: derive}
	l.guard = "attribute_exists(" + l.ttl + ") OR attribute_not_exists(" + l.base + ")"
	return l, l.guard
}

// Adapt adapts the write (its update expression, its condition *cond, their
// values in b) to the item as it stood when the guard failed (cur): an item
// of the entity holding a base and no ttl. It reports whether it changed
// anything, and so whether to send again.
func (l *Legacy) Adapt(b *expr.Builder, update string, cond *string, cur map[string]types.AttributeValue) bool {
	if l == nil || l.done || cur == nil {
		return false
	}
	if _, has := cur[l.ttlAttr]; has {
		return false
	}
	base, ok := cur[l.baseAttr]
	if !ok {
		return false
	}
	ttl, ok := l.Derive(base)
	if !ok || !strings.Contains(*cond, l.guard) {
		return false
	}
	q := regexp.QuoteMeta(l.ttl)
	m := regexp.MustCompile(q + ` = if_not_exists\(` + q + `, (:v[0-9]+)\)`).FindStringSubmatch(update)
	if m == nil {
		return false
	}
	b.Set(m[1], ttl)
	*cond = strings.Replace(*cond, l.guard, l.base+" = "+b.Value(base), 1)
	l.done = true
	return true
}

// Stored is the ttl that item, written before the ttl was declared (its base
// stored, no ttl), gets from the write; nil when it holds none to derive from.
func (l *Legacy) Stored(item map[string]types.AttributeValue) types.AttributeValue {
	if l == nil {
		return nil
	}
	base, ok := item[l.baseAttr]
	if !ok {
		return nil
	}
	ttl, ok := l.Derive(base)
	if !ok {
		return nil
	}
	return ttl
}
