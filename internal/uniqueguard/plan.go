package uniqueguard

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
)

// MaxConstraints bounds an entity's constraints: a write that changes every
// value is 1 + 2 per constraint actions of the 100 a transaction takes.
const MaxConstraints = 16

// Set is a constraint: one set of attributes whose values together are unique among
// an entity's items.
type Set struct {
	Name   string // the attributes joined by "+"
	Fields []*codec.Field
}

// ValuesOf returns the constraint's values in item, and whether it holds one
// (every attribute non-zero).
func (c *Set) ValuesOf(item map[string]types.AttributeValue) ([]types.AttributeValue, bool) {
	out := make([]types.AttributeValue, len(c.Fields))
	for i, f := range c.Fields {
		av := item[f.Name]
		if Zero(av) {
			return nil, false
		}
		out[i] = av
	}
	return out, true
}

// Find returns the constraint of cons named name, or nil.
func Find(cons []*Set, name string) *Set {
	for _, c := range cons {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Names lists the constraints for messages: "email, orgId+slug".
func Names(cons []*Set) string {
	var out []string
	for _, c := range cons {
		out = append(out, c.Name)
	}
	return strings.Join(out, ", ")
}

// Touched returns the constraints of cons with an attribute in next, in order.
func Touched(cons []*Set, next map[string]types.AttributeValue) []*Set {
	var touched []*Set
	for _, c := range cons {
		for _, f := range c.Fields {
			if _, ok := next[f.Name]; ok {
				touched = append(touched, c)
				break
			}
		}
	}
	return touched
}

// Upsert adds to an Update with Upsert (Touched and Next planned from its
// changes) what the item it may create holds besides: the inputs of the
// primary key (base reports one; keys holds their values, as the key value
// gives them). Every constraint made of key inputs alone is touched (a created
// item holds its value whatever the changes), and the key inputs of every
// touched constraint join Next, so that a created item claims its values as
// Create does; an existing item holds the same ones.
func (w *Write) Upsert(cons []*Set, base func(string) bool, keys map[string]types.AttributeValue) {
	for _, c := range cons {
		if slices.Contains(w.Touched, c) {
			continue
		}
		all := true
		for _, f := range c.Fields {
			all = all && base(f.Name)
		}
		if all {
			w.Touched = append(w.Touched, c)
		}
	}
	for _, c := range w.Touched {
		for _, f := range c.Fields {
			if av := keys[f.Name]; base(f.Name) && av != nil {
				if _, ok := w.Next[f.Name]; !ok {
					w.Next[f.Name] = av
				}
			}
		}
	}
}

// Expiry is the owner's expiry after a write, as its guards carry it: a
// number of Unix seconds, or nil (none, or not known: the guards never expire,
// which is safe; one that expired before its owner would free a value held).
//
//   - set: the write stores the expiry av (nil: removes it).
//   - unknown: the write moves it in a way not known before it lands (Add).
//   - ifAbsent: the write stores av only where the item holds none.
//   - otherwise the write leaves it as stored.
//
// stored is the item as read (nil: none, or a transaction's action, which
// reads nothing: known false); derived gives the expiry an item written
// before it was derived gets (ifAbsent; nil: none).
func Expiry(attr string, set, unknown, ifAbsent bool, av types.AttributeValue, stored map[string]types.AttributeValue, known bool, derived func(map[string]types.AttributeValue) types.AttributeValue) types.AttributeValue {
	switch {
	case set:
		return av
	case unknown:
		return nil
	case !known: // the stored one, kept, is not known
		return nil
	case ifAbsent:
		if old, ok := stored[attr]; ok {
			return old
		}
		if stored != nil && derived != nil {
			if d := derived(stored); d != nil {
				return d
			}
		}
		return av
	}
	return stored[attr]
}

// Differs returns the first field of the constraints cons whose value differs
// between the items a and b (nil: none does), with both values.
func Differs(cons []*Set, a, b map[string]types.AttributeValue) (*codec.Field, types.AttributeValue, types.AttributeValue) {
	for _, c := range cons {
		for _, f := range c.Fields {
			x, y := a[f.Name], b[f.Name]
			if (x == nil) != (y == nil) || x != nil && !attrvalue.Equal(x, y) {
				return f, x, y
			}
		}
	}
	return nil, nil, nil
}

// Refusal is a unique field or constraint refused at Register: the field (or
// "singletable", the blank field's tag) and why.
type Refusal struct{ Field, Reason string }

// Error is the field and the reason.
func (r *Refusal) Error() string { return r.Field + ": " + r.Reason }

// SplitOptions takes the unique= options out of the blank field's singletable
// tag, leaving the others.
func SplitOptions(opts string) (unique []string, rest string) {
	if opts == "" {
		return nil, ""
	}
	var others []string
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(o), "unique="); ok {
			unique = append(unique, v)
			continue
		}
		others = append(others, o)
	}
	return unique, strings.Join(others, ",")
}

// Parse reads unique= options ("orgId+slug"): field finds a stored attribute,
// suggest says which one a name not found may mean.
func Parse(opts []string, field func(name string) (*codec.Field, bool), suggest func(name string) string) ([]*Set, *Refusal) {
	var cons []*Set
	for _, o := range opts {
		if o == "" {
			return nil, &Refusal{"singletable", "unique= needs stored attribute names, joined by + (unique=orgId+slug)"}
		}
		c := &Set{Name: o}
		for _, name := range strings.Split(o, "+") {
			f, ok := field(name)
			if !ok {
				return nil, &Refusal{"singletable", "unique=" + o + ": no stored attribute " + strconv.Quote(name) + suggest(name)}
			}
			if slices.Contains(c.Fields, f) {
				return nil, &Refusal{f.GoName, "unique=" + o + ": attribute " + strconv.Quote(name) + " named twice"}
			}
			c.Fields = append(c.Fields, f)
		}
		cons = append(cons, c)
	}
	return cons, nil
}

// Check checks an entity's constraints (at most MaxConstraints, none declared
// twice, none the whole primary key, whose inputs are baseInputs; fieldType
// checks each field) and returns every attribute of a constraint, sorted.
func Check(cons []*Set, baseInputs map[string]bool, fieldType func(*codec.Field) *Refusal) ([]string, *Refusal) {
	if len(cons) > MaxConstraints {
		return nil, &Refusal{"singletable", "more than " + strconv.Itoa(MaxConstraints) + " unique constraints: a write that changes them all would not fit in one transaction"}
	}
	var attrs []string
	seen := map[string]bool{}
	for _, c := range cons {
		names := make([]string, len(c.Fields))
		allBase := true
		for i, f := range c.Fields {
			names[i] = f.Name
			allBase = allBase && baseInputs[f.Name]
			if r := fieldType(f); r != nil {
				return nil, r
			}
			if !slices.Contains(attrs, f.Name) {
				attrs = append(attrs, f.Name)
			}
		}
		canon := strings.Join(slices.Sorted(slices.Values(names)), "+")
		if seen[canon] {
			return nil, &Refusal{c.Fields[0].GoName, "unique constraint " + strconv.Quote(c.Name) + " is declared twice"}
		}
		seen[canon] = true
		if allBase && len(baseInputs) == len(c.Fields) {
			return nil, &Refusal{c.Fields[0].GoName, "unique constraint " + strconv.Quote(c.Name) + " is the whole primary key, which is unique already"}
		}
	}
	slices.Sort(attrs)
	return attrs, nil
}

var timeType = reflect.TypeFor[time.Time]()

// TypeReason says why a field of type t cannot hold a unique value (one
// string, number, bytes or time), or "".
func TypeReason(t reflect.Type) string {
	rt := t
	if rt.Kind() == reflect.Pointer { // one pointer: a **T is refused, as the codec's other roles refuse it
		rt = rt.Elem()
	}
	k := rt.Kind()
	switch {
	case rt == timeType:
	case k == reflect.String, k >= reflect.Int && k <= reflect.Uint64 && k != reflect.Uintptr, k == reflect.Float32, k == reflect.Float64:
	case k == reflect.Slice && rt.Elem().Kind() == reflect.Uint8:
	default:
		return "a unique value is a string, a number, bytes or a time, not " + t.String()
	}
	return ""
}

// Op is what a write does to its item, as its unique values see it.
type Op uint8

// The writes of unique values.
const (
	Create Op = iota + 1 // a new item: nothing stored to condition on
	Put                  // a whole item
	Update               // some attributes (Next), the others as stored
	Delete               // no item after
)

// Write is a write's part in its entity's unique values.
type Write struct {
	Op      Op
	Attrs   []string // every attribute of the entity's constraints, sorted
	Touched []*Set   // the constraints the write may change
	// Next holds the unique attributes the write stores (nil entries: none):
	// a whole item's (Put, Create), an Update's Sets and Removes.
	Next map[string]types.AttributeValue
	// TTLAttr and TTL are the owner's expiry after the write, which each claim
	// carries (nil TTL: none, or not known, and the guard never expires).
	TTLAttr string
	TTL     types.AttributeValue
	// Guards are the guard actions of the last Build, in order.
	Guards []Guard
}

// Build plans the write against stored, the item as read (nil: none): it
// returns the conditions, built in b, that the item's action takes (but a
// Create's): that the unique values stored are those of stored; and it sets
// Guards: a claim of each value the write stores, a free of each it gives up
// but those whose guard notMine (owned by another item). key is the key of a
// constraint's values' guard; ownerType the entity's type attribute.
func (w *Write) Build(b *expr.Builder, partitionKey, ownerType string, stored map[string]types.AttributeValue,
	key func(*Set, []types.AttributeValue) map[string]types.AttributeValue, notMine func(map[string]types.AttributeValue) bool) []string {
	var conds []string
	if w.Op != Create {
		done := map[string]bool{}
		for _, c := range w.Touched {
			for _, f := range c.Fields {
				if done[f.Name] {
					continue
				}
				done[f.Name] = true
				name := b.Name(f.Name)
				if av := stored[f.Name]; av == nil {
					conds = append(conds, "attribute_not_exists("+name+")")
				} else {
					conds = append(conds, "attribute_not_exists("+b.Name(partitionKey)+") OR "+name+" = "+b.Value(av))
				}
			}
		}
	}
	after := map[string]types.AttributeValue{}
	if w.Op == Update {
		for _, a := range w.Attrs {
			after[a] = stored[a]
		}
	}
	for a, av := range w.Next {
		after[a] = av
	}
	w.Guards = w.Guards[:0]
	for _, c := range w.Touched {
		var old, next []types.AttributeValue
		var hasOld, hasNext bool
		if stored != nil {
			old, hasOld = c.ValuesOf(stored)
		}
		if w.Op != Delete {
			next, hasNext = c.ValuesOf(after)
		}
		if hasOld && !(hasNext && Same(old, next)) {
			k := key(c, old)
			if !notMine(k) {
				w.Guards = append(w.Guards, Guard{Key: k, OwnerType: ownerType, Constraint: c.Name, Values: old, Of: c})
			}
		}
		if hasNext {
			w.Guards = append(w.Guards, Guard{Key: key(c, next), Claim: true, OwnerType: ownerType, Constraint: c.Name, Values: next, Of: c, TTLAttr: w.TTLAttr, TTL: w.TTL})
		}
	}
	return conds
}

// Actions are the transaction actions of the guards, me their owner (an
// [OwnerText]), in table.
func (w *Write) Actions(table, partitionKey, typeAttr, me string) []types.TransactWriteItem {
	acts := make([]types.TransactWriteItem, 0, len(w.Guards))
	for _, g := range w.Guards {
		acts = append(acts, g.Action(table, partitionKey, typeAttr, me))
	}
	return acts
}

// Refused reads the reasons of a cancelled transaction whose actions from
// first on are the guards: the index in Guards of the first claim refused (-1:
// none), else whether a free was refused, the guards refused marked in notMine
// by id (another item's: not this write's to free).
func (w *Write) Refused(reasons []types.CancellationReason, first int, id func(map[string]types.AttributeValue) string, notMine map[string]bool) (claim int, freed bool) {
	failed := func(i int) bool {
		return i < len(reasons) && reasons[i].Code != nil && *reasons[i].Code == "ConditionalCheckFailed"
	}
	for i, g := range w.Guards {
		if failed(first+i) && g.Claim {
			return i, false
		}
	}
	for i, g := range w.Guards {
		if failed(first+i) && !g.Claim {
			notMine[id(g.Key)] = true
			freed = true
		}
	}
	return -1, freed
}

// ErrorText is a refused claim's error text: entity, fields, constraint,
// values, the holder (owner, as text; "" unknown) and the sentinel's text.
func ErrorText(entity string, fields []string, constraint string, values []string, owner, sentinel string) string {
	var b strings.Builder
	b.WriteString("singletable: ")
	b.WriteString(entity)
	b.WriteString(".")
	b.WriteString(strings.Join(fields, "+"))
	b.WriteString(" (unique ")
	b.WriteString(constraint)
	b.WriteString("): value ")
	b.WriteString(strings.Join(QuoteAll(values), ", "))
	b.WriteString(" is held by another item")
	b.WriteString(owner)
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(sentinel, "singletable: "))
	return b.String()
}

// Freed reports whether every guard the write frees is gone or held by
// another item, not by me (an [OwnerText]); read reads a guard back (its
// error: not known to be freed).
func (w *Write) Freed(me string, read func(map[string]types.AttributeValue) (map[string]types.AttributeValue, error)) bool {
	for _, g := range w.Guards {
		if g.Claim {
			continue
		}
		gc, err := read(g.Key)
		if err != nil || OwnedBy(gc, me) {
			return false
		}
	}
	return true
}
