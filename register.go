package singletable

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/keytmpl"
)

// entityInfo is everything Register compiled about T, shared by all methods.
type entityInfo struct {
	name          string // Go type name, for messages
	goType        reflect.Type
	discriminator string
	table         *Table
	plan          *codec.Plan
	pk, sk        *keyTemplate
	adopt         bool                       // AdoptUntyped: untyped items at its keys are its own (adopt.go)
	indexes       map[string][2]*keyTemplate // index name -> partition, sort (sort may be nil)
	version       *codec.Field               // the `singletable:"version"` field, or nil
	shard         *shardPlan                 // write sharding, or nil
	migration     *migrationPlan             // schema history, or nil
	unique        *uniqueFeature             // unique values (unique.go), or nil
	hooks         *writeHooks                // the fields' roles: defaults, timestamps, counter, TTL, validation (fieldtags.go), or nil
	// features are the entity's feature plans, which the planner runs for every
	// write (planner.go), and owned the fields they own, by role.
	features   []featurePlan
	owned      map[*codec.Field]string
	all        []*keyTemplate  // base keys first, then index keys in table order
	baseInputs map[string]bool // attribute names that feed the primary key
	// ignored are the attributes the library stores beside T's fields (keys, type,
	// schema, receipts), which decoding skips without looking for a field.
	ignored *codec.Ignored
	// The conditions of a Put (typeGuard) and of a Create, with their names and
	// values, built once: every such write without a condition of its own sends
	// them as they are.
	putGuard, createGuard *expr.Fixed
	wire                  wireTarget             // the entity as reads decode it from JSON (wire.go)
	native                map[string]*nativeView // by native index name: the fields stored under its attributes (multiattr.go)
}

var timeType = reflect.TypeFor[time.Time]()

// compileEntity compiles T's registration, in phases: the codec plan, the field
// names, the entity tags, the key templates, the field options, sharding.
func compileEntity(t *Table, rt reflect.Type) (*entityInfo, error) {
	info, err := newEntityInfo(t, rt)
	if err != nil {
		return nil, err
	}
	if err := info.checkFieldNames(); err != nil {
		return nil, err
	}
	templates, entityOpts, err := info.entityTags(rt)
	if err != nil {
		return nil, err
	}
	if err := info.bindKeys(templates); err != nil {
		return nil, err
	}
	if err := info.bindNative(); err != nil { // multiattr.go
		return nil, err
	}
	info.ignored = info.plan.Ignore(t.libraryAttributes()...)
	var pb, cb expr.Builder
	info.putGuard = pb.Fix(info.typeGuard(&pb))
	info.createGuard = cb.Fix("attribute_not_exists(" + cb.Name(t.opts.PartitionKey) + ")")
	if err := compileFieldOptions(info, rt); err != nil {
		return nil, err
	}
	if err := compileHooks(info, rt); err != nil { // validator.go
		return nil, err
	}
	uniqueOpts, entityOpts := splitUniqueOptions(entityOpts) // unique.go
	if err := compileSharding(info, entityOpts); err != nil {
		return nil, err
	}
	if err := compileUnique(info, uniqueOpts); err != nil {
		return nil, err
	}
	return info, nil
}

// newEntityInfo starts an entity's registration with its codec plan.
func newEntityInfo(t *Table, rt reflect.Type) (*entityInfo, error) {
	name := rt.String()
	if rt.Kind() != reflect.Struct {
		return nil, &EntityError{Entity: name, Reason: "entity must be a struct type, not " + rt.Kind().String()}
	}
	name = rt.Name()
	if name == "" {
		name = rt.String()
	}
	plan, err := codec.PlanFor(rt)
	if err != nil {
		var fe *codec.FieldError
		if errors.As(err, &fe) {
			return nil, &EntityError{Entity: name, Field: fe.Field, Reason: "", Err: fe.Err}
		}
		return nil, &EntityError{Entity: name, Err: err}
	}
	return &entityInfo{
		name:          name,
		goType:        rt,
		discriminator: name,
		table:         t,
		plan:          plan,
		indexes:       map[string][2]*keyTemplate{},
		baseInputs:    map[string]bool{},
	}, nil
}

// checkFieldNames refuses fields stored under a name the library writes itself
// (key, type, schema, receipt and incarnation attributes), even but for case.
func (info *entityInfo) checkFieldNames() error {
	t := info.table
	for _, f := range info.plan.Fields() {
		if _, isKey := t.keys[f.Name]; isKey || f.Name == t.opts.TypeAttribute || t.isReceiptAttr(f.Name) || f.Name == t.opts.SchemaAttribute || f.Name == t.opts.IncarnationAttribute {
			return &EntityError{Entity: info.name, Field: f.GoName, Reason: "attribute name " + strconv.Quote(f.Name) + " is a key, type, schema, receipt or incarnation attribute of table " + t.name}
		}
		// Decoding matches names without regard to case when no name matches
		// exactly (as attributevalue does), so "type" would be filled from "Type".
		if r := t.reservedFold(f.Name); r != "" {
			return &EntityError{Entity: info.name, Field: f.GoName, Reason: "attribute name " + strconv.Quote(f.Name) + " differs only in case from the table's attribute " + strconv.Quote(r) + ", which decoding would read into it; rename one of them"}
		}
	}
	return nil
}

// entityTags reads the tags of the blank field: the key templates by attribute,
// the entity options (singletable:"..."), and the discriminator (set in info).
func (info *entityInfo) entityTags(rt reflect.Type) (templates map[string]string, entityOpts string, err error) {
	t := info.table
	var tags []codec.TagPair
	found := false
	for i := range rt.NumField() {
		sf := rt.Field(i)
		if sf.Name != "_" {
			continue
		}
		if found {
			return nil, "", &EntityError{Entity: info.name, Field: "_", Reason: "more than one blank field carries entity tags"}
		}
		found = true
		if tags, err = codec.ParseStructTag(string(sf.Tag)); err != nil {
			return nil, "", &EntityError{Entity: info.name, Field: "_", Err: &KeyError{Reason: err.Error()}}
		}
	}
	if !found {
		return nil, "", &EntityError{Entity: info.name, Reason: "no blank field with entity tags, e.g. _ struct{} `PK:\"...\" SK:\"...\"`"}
	}
	templates = map[string]string{}
	for _, tg := range tags {
		switch {
		case tg.Key == "singletable":
			entityOpts = tg.Value
		case tg.Key == t.opts.TypeAttribute:
			if tg.Value == "" {
				return nil, "", &EntityError{Entity: info.name, Field: tg.Key, Reason: "empty discriminator"}
			}
			info.discriminator = tg.Value
		case tg.Key == "dynamodbav" || tg.Key == "json":
			// Harmless on a blank field.
		default:
			if _, isKey := t.keys[tg.Key]; !isKey {
				return nil, "", &EntityError{Entity: info.name, Field: tg.Key, Reason: "unknown tag " + strconv.Quote(tg.Key) + ": table " + t.name + " has key attributes " + strings.Join(sortedKeys(t.keys), ", ") + " and type attribute " + t.opts.TypeAttribute}
			}
			templates[tg.Key] = tg.Value
		}
	}
	return templates, entityOpts, nil
}

// bindKeys binds the base table's and each index's key templates to T's fields.
func (info *entityInfo) bindKeys(templates map[string]string) error {
	t := info.table
	var err error
	if info.pk, err = info.bind(templates, t.opts.PartitionKey, "", true, MaxPartitionKeyBytes); err != nil {
		return err
	}
	if info.sk, err = info.bind(templates, t.opts.SortKey, "", false, MaxSortKeyBytes); err != nil {
		return err
	}
	if info.pk == nil || info.sk == nil && !t.opts.NoSortKey {
		missing := t.opts.PartitionKey
		if info.pk != nil {
			missing = t.opts.SortKey
		}
		return &EntityError{Entity: info.name, Field: missing, Reason: "missing template for base key attribute " + missing}
	}
	info.all = append(info.all, info.pk)
	inputs := slices.Clone(info.pk.fields)
	if info.sk != nil { // a table keyed by partition alone has none
		info.all = append(info.all, info.sk)
		inputs = append(inputs, info.sk.fields...)
	}
	for _, f := range inputs {
		info.baseInputs[f.Name] = true
	}
	for _, ix := range t.opts.Indexes {
		if ix.Local {
			if err := info.bindLocal(templates, ix); err != nil { // indexes.go
				return err
			}
			continue
		}
		p, err := info.bind(templates, ix.PartitionKey, ix.Name, true, MaxPartitionKeyBytes)
		if err != nil {
			return err
		}
		var s *keyTemplate
		if ix.SortKey != "" {
			if s, err = info.bind(templates, ix.SortKey, ix.Name, false, MaxSortKeyBytes); err != nil {
				return err
			}
		}
		if p == nil && s == nil {
			continue
		}
		if p == nil || (ix.SortKey != "" && s == nil) {
			missing := ix.PartitionKey
			if p != nil {
				missing = ix.SortKey
			}
			return &EntityError{Entity: info.name, Field: missing, Reason: "index " + ix.Name + " needs templates for both of its key attributes; " + missing + " is missing"}
		}
		info.indexes[ix.Name] = [2]*keyTemplate{p, s}
		info.all = append(info.all, p)
		if s != nil {
			info.all = append(info.all, s)
		}
	}
	return nil
}

// bind parses the template of one key attribute (nil when the entity has none)
// and binds its placeholders to T's fields.
func (info *entityInfo) bind(templates map[string]string, attr, index string, partition bool, maxBytes int) (*keyTemplate, error) {
	text, ok := templates[attr]
	if !ok {
		return nil, nil
	}
	tmpl, err := ParseTemplate(text, info.table.opts.Delimiter)
	if err != nil {
		return nil, &EntityError{Entity: info.name, Field: attr, Reason: "", Err: err}
	}
	kt := &keyTemplate{attr: attr, index: index, partition: partition, tmpl: tmpl, maxBytes: maxBytes}
	for si := range tmpl.k.Segs {
		seg := &tmpl.k.Segs[si]
		if seg.Name == "" {
			continue
		}
		f, err := info.placeholderField(text, attr, seg, info.table.keyType(attr) == types.ScalarAttributeTypeB)
		if err != nil {
			return nil, err
		}
		kt.fields = append(kt.fields, f)
		kt.access = append(kt.access, keytmpl.AccessOf(f))
	}
	if err := info.checkTypedTemplate(kt); err != nil { // keytypes.go
		return nil, err
	}
	kt.direct = keytmpl.CompileDirect(&tmpl.k, kt.access, maxBytes)
	return kt, nil
}

// placeholderField finds the field a placeholder names and checks that its type
// fits the placeholder's format (a plain time placeholder takes the time format).
func (info *entityInfo) placeholderField(text, attr string, seg *keytmpl.Seg, binary bool) (*codec.Field, error) {
	f, ok := info.plan.Field(seg.Name)
	if !ok {
		return nil, &EntityError{Entity: info.name, Field: attr, Reason: "template " + strconv.Quote(text) + " names {" + seg.Name + "}, which is not a stored attribute of " + info.name + info.suggestAttr(seg.Name)}
	}
	base := f.Type
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if binary && isBytes(base) {
		return f, nil // a binary key's input: checkTypedTemplate checks the rest
	}
	kind := keytmpl.KindOf(base)
	switch {
	case kind == keytmpl.KindMissing:
		return nil, &EntityError{Entity: info.name, Field: f.GoName, Reason: "type " + f.Type.String() + " cannot be part of a key (want a string, an integer or time.Time)"}
	case seg.Format == keytmpl.Pad && kind != keytmpl.KindInt && kind != keytmpl.KindUint:
		return nil, &EntityError{Entity: info.name, Field: f.GoName, Reason: "{" + seg.Name + ":0" + strconv.Itoa(seg.Width) + "} pads integers, but the field is " + f.Type.String()}
	case seg.Format.IsTime() && kind != keytmpl.KindTime:
		return nil, &EntityError{Entity: info.name, Field: f.GoName, Reason: "{" + seg.Name + ":" + seg.Format.Name() + "} needs a time.Time, but the field is " + f.Type.String()}
	case seg.Format == keytmpl.Plain && kind == keytmpl.KindTime:
		seg.Format, seg.Width = keytmpl.Time, keytmpl.Time.FixedWidth()
	}
	return f, nil
}

// compileFieldOptions reads the `singletable:"..."` tags of T's fields, through
// embedded structs (whose fields are stored flat, as the codec stores them).
func compileFieldOptions(info *entityInfo, rt reflect.Type) error {
	return walkFieldOptions(info, rt, nil, 0)
}

func walkFieldOptions(info *entityInfo, rt reflect.Type, at []int, depth int) error {
	for i := range rt.NumField() {
		sf := rt.Field(i)
		index := append(slices.Clone(at), i)
		if sf.Anonymous && depth < 8 {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if _, tagged := sf.Tag.Lookup("dynamodbav"); ft.Kind() == reflect.Struct && !tagged {
				if err := walkFieldOptions(info, ft, index, depth+1); err != nil {
					return err
				}
			}
		}
		opt, ok := sf.Tag.Lookup("singletable")
		if !ok || sf.Name == "_" {
			continue
		}
		if err := compileFieldTag(info, index, sf, opt); err != nil { // fieldtags.go
			return err
		}
	}
	return nil
}

// compileFeatures compiles the entity's feature plans, once its fields and
// options are compiled, in the order the planner runs them: defaults,
// timestamps, the counter (a Create's count) and validation prepare and check a
// whole value; then the version, the shard (whose checks depend on the version
// held), the schema version, return values, and receipts last (a write needs one
// by what the others planned).
func compileFeatures(info *entityInfo) {
	var fs []featurePlan
	if h := info.hooks; h != nil {
		if len(h.generated) > 0 {
			fs = append(fs, &generateFeature{fields: h.generated}) // generate.go
		}
		if len(h.defaults) > 0 {
			fs = append(fs, &defaultsFeature{defaults: h.defaults})
		}
		if h.createdAt != nil || h.updatedAt != nil {
			fs = append(fs, &stampsFeature{createdAt: h.createdAt, updatedAt: h.updatedAt})
		}
		if h.counter != nil {
			fs = append(fs, &counterFeature{f: h.counter})
		}
		if h.derivedTTL != nil {
			fs = append(fs, newDerivedTTLFeature(info)) // ttlderived.go
		}
		if len(h.validate) > 0 || len(h.fieldChecks) > 0 {
			fs = append(fs, &validationFeature{whole: h.validate, fields: h.fieldChecks})
		}
	}
	if nk := newNativeKeysFeature(info); nk != nil {
		fs = append(fs, nk) // multiattr.go
	}
	if info.version != nil {
		fs = append(fs, newVersionFeature(info))
	}
	if info.shard != nil {
		fs = append(fs, &shardFeature{sp: info.shard})
	}
	if info.migration != nil {
		fs = append(fs, newSchemaFeature(info))
	}
	if info.unique != nil {
		fs = append(fs, info.unique) // unique.go
	}
	fs = append(fs, returnsFeature{}, &receiptsFeature{incarnation: info.version != nil})
	info.features = fs
	info.owned = map[*codec.Field]string{}
	for _, f := range fs {
		f.owns(func(field *codec.Field, role string) { info.owned[field] = role })
	}
}

// attrName names a field for messages in both vocabularies: "createdAt
// (Order.CreatedAt)".
func (info *entityInfo) attrName(f *codec.Field) string { return fieldLabel(info.name, f) }

// suggestAttr returns ` (did you mean "x"?)` naming the stored attribute of the
// entity closest to name, or "" when none is close.
func (info *entityInfo) suggestAttr(name string) string {
	names := make([]string, 0, len(info.plan.Fields()))
	for _, f := range info.plan.Fields() {
		names = append(names, f.Name)
	}
	return didYouMean(name, names)
}
