package singletable

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/genid"
)

// Generated ids. A string field tagged `singletable:"generate=ulid"` or
// `singletable:"generate=uuidv7"` is given a new id when it is zero in a whole
// item about to be written (Put, Create, BatchPut, TxPut, TxCreate), before
// defaults, timestamps, validation and the rendering of keys, so a key rendered
// from it renders the id. A value the caller gives is kept, never replaced.
//
//   - ulid: 26 characters of Crockford base 32 (github.com/oklog/ulid/v2), the
//     first 10 the time in milliseconds.
//   - uuidv7: the 36-character text of an RFC 9562 version 7 UUID (formatted by
//     github.com/google/uuid), the first 12 hex digits the time in milliseconds.
//
// The time is the table's clock ([WithClock]), read once per write (an id made
// with createdAt holds createdAt's millisecond); the randomness is the table's
// [WithIDSource] (crypto/rand by default). Ids of one entity made in one process
// increase strictly in the order they are made, also within a millisecond (ulid:
// monotonic entropy; uuidv7: a 12-bit counter in rand_a), whatever the
// goroutines making them: a clock reading before the last millisecond used is
// taken as that millisecond. When the counter cannot move on within a
// millisecond (it would overflow, or a constant id source gives no usable
// increment), the id takes the next millisecond: never a repeat, never a hang.
// So both sort as text by time: a sort key
// "ORDER#{id}" lists items in the order they were made, to the millisecond across
// processes (clock skew between writers reorders; use {createdAt:time}#{id} where
// exact order matters).
//
// The id is made once per call, on the library's copy of the value, before
// anything is sent: a write resent after a lost answer carries the same id, and
// the call returns it. A transaction with a token ([TxOptions]) draws its ids from
// the token's stream at TxOptions.At (required), so planning it again gives the
// same ids.
//
// A Put of an existing item whose generated field is zero and not an input of the
// primary key keeps the stored id (if_not_exists) and returns it; an Update with
// [Upsert] stores one with if_not_exists. An Update never makes an id of a key
// input: the key must be known to address the item. Migration write-back makes
// none.
//
// Register refuses a field that is not a string, has another role or a default,
// and a uuidv7 field in a key of a table whose delimiter is '-'.

// genField is one field whose id is generated, with the source
// (internal/genid) that keeps the ids of one entity increasing.
type genField struct {
	f    *codec.Field
	kind genid.Kind
	key  bool // an input of the primary key
	ids  *genid.Source
}

// compileGenerate makes the struct field at index a generated id of kind text.
func compileGenerate(info *entityInfo, index []int, sf reflect.StructField, text string) error {
	f, err := storedField(info, index, sf, "generated")
	if err != nil {
		return err
	}
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: f.GoName, Reason: "generate=" + text + " (attribute " + f.Name + "): " + reason}
	}
	kind, reason := genid.Check(text, f.Type, f.AsString)
	if reason != "" {
		return fail(reason)
	}
	if r := info.roleTaken(f); r != "" {
		return fail("the field is the " + r + " field already")
	}
	h := info.hooksOf()
	for _, g := range h.generated {
		if g.f == f {
			return fail("generated twice")
		}
	}
	attrs, base := info.keyInputOf(f)
	if len(attrs) > 0 && kind == genid.UUIDv7 && info.table.opts.Delimiter == '-' {
		return fail("a UUID's text holds '-', the table's key delimiter, and the field feeds " + strings.Join(attrs, ", ") + ": use generate=ulid or another delimiter")
	}
	h.generated = append(h.generated, &genField{f: f, kind: kind, key: base, ids: genid.NewSource(kind, info.table.opts.IDSource)})
	return nil
}

// newID makes an id at now: from the plan's stream when the plan must come out
// the same when made again (env.rand), else from the field's monotonic state.
func (g *genField) newID(info *entityInfo, env *planEnv, now time.Time) (string, error) {
	ms := uint64(now.UnixMilli())
	if now.UnixMilli() < 0 {
		return "", errorf("%s: the clock's time %s is before 1970: %w", info.attrName(g.f), now, ErrInvalidInput)
	}
	var replay io.Reader // a plan that must come out the same when made again
	if env != nil {
		replay = env.rand
	}
	id, err := g.ids.Make(ms, replay, info.table.opts.IDSource)
	if err != nil {
		return "", errorf("%s: %w", info.attrName(g.f), err)
	}
	return id, nil
}

// generateFeature is the plan of an entity's generated ids, compiled at Register.
type generateFeature struct {
	fields []*genField
	noOwner
}

// plan fills each zero generated field of a whole value with a new id; a Put
// keeps the id stored in place of one made for a non-key field, an Update with
// Upsert stores one where the item holds none.
func (g *generateFeature) plan(p *writePlan) error {
	upsert := p.kind == kindUpdate && p.upsert
	if !p.whole() && !upsert {
		return nil
	}
	info := p.info
	for _, gf := range g.fields {
		if upsert && (gf.key || p.sets(gf.f.Name) || p.setsField(gf.f)) {
			continue
		}
		fv, ok := gf.f.ValueOf(p.sv)
		given := ok && !fv.IsZero()
		if given && !upsert {
			continue
		}
		var id string
		if given {
			id = fv.String() // an upsert's key value names the id
		} else {
			if p.env.replay && !p.env.atGiven {
				return fmt.Errorf("%s has generated ids: a transaction with a token needs TxOptions.At (kept with the token), so that a resend makes the same ids: %w", info.name, ErrInvalidInput)
			}
			var err error
			if id, err = gf.newID(info, p.env, p.env.now(info.table)); err != nil {
				return err
			}
		}
		av := &types.AttributeValueMemberS{Value: id}
		if upsert {
			p.setIfAbsent(gf.f.Name, av, gf.f, reflect.ValueOf(id).Convert(gf.f.Type))
			continue
		}
		sf, err := gf.f.Settable(p.sv)
		if err != nil {
			return err
		}
		sf.SetString(id)
		if p.kind == kindPut && !gf.key {
			// A Put keeps the id stored, and returns it.
			p.keeps, p.learns = true, true
			p.setIfAbsent(gf.f.Name, av, gf.f, sf)
			p.stake(&genPart{f: gf.f})
		}
	}
	return nil
}

// setsField reports whether an Update's changes give the field a value.
func (p *writePlan) setsField(f *codec.Field) bool {
	for _, c := range p.checks {
		if c.f == f {
			return true
		}
	}
	return false
}

// genPart sets in the value a Put wrote the id stored: the one made, or the one
// the item held already.
type genPart struct {
	f *codec.Field
	noPart
}

func (g *genPart) settle(w *writeRequest, attrs map[string]types.AttributeValue, _ bool) (map[string]types.AttributeValue, error) {
	s, ok := attrs[g.f.Name].(*types.AttributeValueMemberS)
	if !ok || !w.whole.IsValid() {
		return attrs, nil
	}
	fv, err := g.f.Settable(w.whole)
	if err != nil {
		return attrs, err
	}
	fv.SetString(s.Value)
	return attrs, nil
}
