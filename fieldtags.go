package singletable

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/singletable/singletable/design"
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/genid"
	"github.com/singletable/singletable/internal/ttlexpiry"
)

// Field tags: `singletable:"..."` on a field gives it a role the library keeps.
//
//	version              optimistic locking (version.go)
//	shard                the write shard (shard.go)
//	createdAt            set when the item is created, never changed after (timestamps.go)
//	updatedAt            set by every write but Delete (timestamps.go)
//	createdAt,unixms     the same on an integer field, in Unix milliseconds (default: seconds)
//	counter              incremented by every write to an existing item (counter.go)
//	ttl                  the item's expiry in Unix seconds, DynamoDB's TTL attribute (ttl.go)
//	default=TEXT         the value a zero field takes before a whole item is written (defaults.go)
//	generate=ulid        a new id in a zero string field before keys are rendered; or uuidv7 (generate.go)
//	ttl,from=A,after=D   the ttl derived from the time field A plus the duration D (ttlderived.go)
//	unique               the value is held by one item of the entity at most (unique.go)
//
// One role per field. default= takes the rest of the tag, commas included, so it
// comes alone. The blank field's tag takes the entity's options (entityTagOptions).
//
// The lists below are every word of a `singletable:"..."` tag the parser
// accepts; the parser refuses any other, naming them, and TestTagReferenceComplete
// holds README.md's "Tags in brief" and the package doc (doc.go) to them.
var (
	// fieldRoles are the roles a field's tag gives (compileFieldTag).
	fieldRoles = []string{"version", "shard", "createdAt", "updatedAt", "counter", "ttl", "unique"}
	// stampOptions follow createdAt or updatedAt.
	stampOptions = []string{"unixms"}
	// ttlOptions follow ttl: a ttl derived from a time field (ttlderived.go).
	ttlOptions = ttlexpiry.TagOptions
	// fieldForms take the rest of the tag: default=TEXT, generate=KIND.
	fieldForms = []string{"default=", "generate="}
	// generateKinds are the ids generate= makes (generate.go).
	generateKinds = genid.Names
	// entityTagOptions are the blank field's options, joined by commas:
	// shards=N, shardBy=a+b (shard.go), unique=a+b (unique.go).
	entityTagOptions = []string{"shards=", "shardBy=", "unique="}
)

// writeHooks holds the roles an entity's field tags and validators give its
// fields, as Register compiles them: defaults, timestamps, a counter, a TTL
// field and validation. Register makes the feature plans of writes from them
// (compileFeatures, register.go); reads look up the TTL field. A nil *writeHooks
// (an entity with none) holds nothing.
type writeHooks struct {
	createdAt, updatedAt *stampField
	counter              *codec.Field
	ttl                  *codec.Field
	defaults             []fieldDefault
	generated            []*genField // generate.go
	derivedTTL           *derivedTTL // ttlderived.go
	// validate checks a whole value; nil when T has no Validate method and no
	// Validator was registered.
	validate []func(reflect.Value) error
	// fieldChecks check one field's value, by attribute (FieldValidator).
	fieldChecks map[string][]func(reflect.Value) error
}

// hooksOf returns info's hooks, making them on first use (at registration).
func (info *entityInfo) hooksOf() *writeHooks {
	if info.hooks == nil {
		info.hooks = &writeHooks{}
	}
	return info.hooks
}

// derefType is a field's type with one pointer taken off: the type its value
// has when set.
func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// compileFieldTag compiles the `singletable:"..."` tag of the struct field at
// index (through embedded structs).
func compileFieldTag(info *entityInfo, index []int, sf reflect.StructField, tag string) error {
	fail := func(reason string) error { return &EntityError{Entity: info.name, Field: sf.Name, Reason: reason} }
	if text, ok := strings.CutPrefix(tag, "default="); ok {
		return compileDefault(info, index, sf, text)
	}
	if text, ok := strings.CutPrefix(tag, "generate="); ok {
		if strings.Contains(text, ",") {
			return fail("generate= comes alone: a generated field takes no other role or option")
		}
		return compileGenerate(info, index, sf, text) // generate.go
	}
	opts := strings.Split(tag, ",")
	role, mods := opts[0], opts[1:]
	if !slices.Contains(fieldRoles, role) {
		return fail("unknown singletable tag option " + strconv.Quote(role) + " (want " + strings.Join(fieldRoles, ", ") + ", " + strings.Join(fieldForms, "... or ") + "...)")
	}
	if role == "ttl" && len(mods) > 0 {
		return compileTTLTag(info, index, sf, mods) // ttlderived.go
	}
	for _, m := range mods {
		switch {
		case strings.HasPrefix(m, "default="):
			return fail("default= comes alone: a field with a role (" + strconv.Quote(role) + ") takes no default")
		case !slices.Contains(stampOptions, m):
			return fail("unknown singletable tag option " + strconv.Quote(m) + " after " + strconv.Quote(role) + " (want \"unixms\" after createdAt or updatedAt)")
		case role != "createdAt" && role != "updatedAt":
			return fail(m + " applies to createdAt and updatedAt, not " + strconv.Quote(role))
		}
	}
	switch role {
	case "version":
		return compileVersion(info, index, sf)
	case "shard":
		return compileShardField(info, index, sf)
	case "createdAt", "updatedAt":
		return compileStamp(info, index, sf, role, len(mods) > 0)
	case "counter":
		return compileCounter(info, index, sf)
	case "ttl":
		return compileTTL(info, index, sf)
	case "unique":
		return compileUniqueField(info, index, sf) // unique.go
	}
	return fail("the role " + strconv.Quote(role) + " is listed in fieldRoles but not compiled") // unreachable: the switch compiles every role
}

// roleTaken refuses a field that has a role already (as version or shard).
func (info *entityInfo) roleTaken(f *codec.Field) string {
	h := info.hooks
	switch {
	case info.version == f:
		return "version"
	case info.shard != nil && info.shard.field == f:
		return "shard"
	case h == nil:
		return ""
	case h.ttl == f:
		return "ttl"
	case h.createdAt != nil && h.createdAt.f == f:
		return "createdAt"
	case h.updatedAt != nil && h.updatedAt.f == f:
		return "updatedAt"
	case h.counter == f:
		return "counter"
	}
	return ""
}

// keyInputOf returns the key attributes f feeds, base table's first.
func (info *entityInfo) keyInputOf(f *codec.Field) (attrs []string, base bool) {
	for _, kt := range info.all {
		for _, kf := range kt.fields {
			if kf == f {
				attrs = append(attrs, kt.attr)
				base = base || kt.index == ""
				break
			}
		}
	}
	return attrs, base
}

// describe adds the fields the hooks keep to an entity's design.
func (h *writeHooks) describe(e *design.Entity) {
	if h == nil {
		return
	}
	if h.createdAt != nil {
		e.CreatedAt = h.createdAt.f.Name
	}
	if h.updatedAt != nil {
		e.UpdatedAt = h.updatedAt.f.Name
	}
	if h.counter != nil {
		e.Counter = h.counter.Name
	}
	if h.ttl != nil {
		e.TTL = h.ttl.Name
	}
	for _, d := range h.defaults {
		e.Defaults = append(e.Defaults, d.f.Name)
	}
	if d := h.derivedTTL; d != nil {
		e.TTLFrom, e.TTLAfter = d.from, d.after
	}
	for _, g := range h.generated {
		if e.Generated == nil {
			e.Generated = map[string]string{}
		}
		e.Generated[g.f.Name] = g.kind.String()
	}
}
