package singletable

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/keyshape"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Disjoint primary keys. Two entities on one table must never render the same
// primary key: a batch write, which carries no condition, would overwrite the
// other entity's item. Register proves it: each key template is a regular
// language over bytes (literal text exactly; each placeholder what keys.go can
// render for its field), and two entities are refused when their partition key
// languages intersect and their sort key languages do too. The languages
// (internal/keyshape's Lang) are nondeterministic automata over byte classes,
// and an intersection is found by a breadth-first search of their product,
// which also gives the shortest key both can render, for the error. This file
// describes each template's segments to them and builds the error.
//
// What a placeholder renders (see internal/keytmpl's Template.AppendValueAt):
//
//	string            one or more bytes, none the delimiter
//	signed integer    0, or a non-zero digit then digits, maybe after '-' (never with
//	                  the delimiter '-', which refuses negative values)
//	unsigned integer  0, or a non-zero digit then digits
//	shard field       1 to N in decimal (its digits, as an over-approximation), or
//	                  zero-padded as its format says
//	{n:0W}            exactly W digits
//	{t}, {t:time}     2006-01-02T15:04:05.000000000Z with any digits
//	{t:date}          2006-01-02 with any digits
//	{t:unix}, unixms, rev   10, 13, 19 digits
//
// A collision is reported with the shortest key both templates accept, which
// they really render unless a literal of one of them is such a time or shard.

// phLang is what decides one placeholder's language besides its format.
type phLang = keyshape.Ph

type keyLang = keyshape.Lang

// newKeyLang returns the language of template tm whose placeholders, in order,
// are described by phs.
func newKeyLang(tm *Template, phs []phLang) *keyLang { return keyshape.LangOf(&tm.k, phs) }

// commonKey returns a key that both languages accept, the shortest there is, or
// ok=false when none exists.
func commonKey(a, b *keyLang) (key string, ok bool) { return keyshape.CommonKey(a, b) }

// phLangs describes kt's placeholders for newKeyLang.
func (info *entityInfo) phLangs(kt *keyTemplate) []phLang {
	out := make([]phLang, len(kt.fields))
	for i, f := range kt.fields {
		out[i].Kind = keytmpl.KindOf(derefType(f.Type))
		if kt.typ == types.ScalarAttributeTypeB {
			out[i].Kind = keytmpl.KindString // a binary key's bytes: any text, as far as colliding goes
		}
		if info.shard != nil && f == info.shard.field {
			out[i].Shards = info.shard.count
		}
	}
	return out
}

// primaryLangs returns the languages of info's partition and sort key templates.
func (info *entityInfo) primaryLangs() (pk, sk *keyLang) {
	if info.sk == nil { // a table keyed by partition alone
		return newKeyLang(info.pk.tmpl, info.phLangs(info.pk)), nil
	}
	return newKeyLang(info.pk.tmpl, info.phLangs(info.pk)), newKeyLang(info.sk.tmpl, info.phLangs(info.sk))
}

// sharedPrimaryKey returns a primary key that entities a and b could both render,
// or ok=false when their templates prove that they never can.
func sharedPrimaryKey(a, b *entityInfo) (pk, sk string, ok bool) {
	apk, ask := a.primaryLangs()
	bpk, bsk := b.primaryLangs()
	if pk, ok = commonKey(apk, bpk); !ok {
		return "", "", false
	}
	if ask == nil || bsk == nil {
		return pk, "", true
	}
	if sk, ok = commonKey(ask, bsk); !ok {
		return "", "", false
	}
	return pk, sk, true
}

// checkDisjoint refuses info when its primary key templates could render a key
// that other's can: the error names both entities and their templates, a key
// both render, and a fix.
func (t *Table) checkDisjoint(info, other *entityInfo) error {
	pk, sk, ok := sharedPrimaryKey(info, other)
	if !ok {
		return nil
	}
	if info.sk == nil {
		reason := "key template " + strconv.Quote(info.pk.tmpl.String()) + " collides with " + other.name + "'s " + strconv.Quote(other.pk.tmpl.String()) +
			": both render " + t.opts.PartitionKey + " " + strconv.Quote(t.keyDisplay(t.opts.PartitionKey, pk)) + ", so a batch write of one would overwrite the other's item; " + t.disjointAdvice(t.opts.PartitionKey)
		return &EntityError{Entity: info.name, Field: t.opts.PartitionKey, Reason: reason}
	}
	reason := "key templates " + strconv.Quote(info.pk.tmpl.String()) + " / " + strconv.Quote(info.sk.tmpl.String()) +
		" collide with " + other.name + "'s " + strconv.Quote(other.pk.tmpl.String()) + " / " + strconv.Quote(other.sk.tmpl.String()) +
		": both render " + t.opts.PartitionKey + " " + strconv.Quote(pk) + ", " + t.opts.SortKey + " " + strconv.Quote(sk) +
		", so a batch write of one would overwrite the other's item; " + t.disjointAdvice(t.opts.PartitionKey, t.opts.SortKey)
	if fix := t.disjointFix(info, other); fix != "" && t.keyType(t.opts.PartitionKey) == types.ScalarAttributeTypeS && t.keyType(t.opts.SortKey) == types.ScalarAttributeTypeS {
		reason += ", e.g. " + fix
	}
	return &EntityError{Entity: info.name, Field: t.opts.SortKey, Reason: reason}
}

// disjointAdvice says how to make two colliding entities disjoint: a static
// prefix where a key attribute holds strings; a number or binary key attribute
// holds no prefix, so such entities need keys of their own.
func (t *Table) disjointAdvice(attrs ...string) string {
	for _, a := range attrs {
		if t.keyType(a) == types.ScalarAttributeTypeS {
			return "give one of them a distinct static prefix"
		}
	}
	return "a number or binary key holds no prefix, so keep one of them in another table (or make a key attribute a string and give one a distinct static prefix)"
}

// disjointFix suggests a static prefix that makes the two entities disjoint: the
// discriminator in capitals before the sort key (then the partition key) of the
// one whose sort key starts with a placeholder, else of info. It returns "" when
// no such prefix would do.
func (t *Table) disjointFix(info, other *entityInfo) string {
	order := []*entityInfo{info, other}
	if info.sk.tmpl.StaticPrefix() != "" && other.sk.tmpl.StaticPrefix() == "" {
		order = []*entityInfo{other, info}
	}
	for _, e := range order {
		that := other
		if e == other {
			that = info
		}
		prefix := keyshape.PrefixFor(e.discriminator)
		tpk, tsk := that.primaryLangs()
		for _, kt := range []*keyTemplate{e.sk, e.pk} {
			text := prefix + string(t.opts.Delimiter) + kt.tmpl.String()
			tm, err := ParseTemplate(text, t.opts.Delimiter)
			if err != nil {
				continue
			}
			pk, sk := e.primaryLangs()
			if kt == e.sk {
				sk = newKeyLang(tm, e.phLangs(kt))
			} else {
				pk = newKeyLang(tm, e.phLangs(kt))
			}
			_, pkMeet := commonKey(pk, tpk)
			_, skMeet := commonKey(sk, tsk)
			if !pkMeet || !skMeet {
				return e.name + "'s " + kt.attr + " " + strconv.Quote(text)
			}
		}
	}
	return ""
}
