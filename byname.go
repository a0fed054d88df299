package singletable

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Untyped access to a registered entity, by its type: for tools that know the
// table but not its Go types (an admin command, a console), which build values
// from text and JSON. Nothing here is generic: each method converts at the
// boundary and runs the same engine (entity) as Entity[T]'s, so an AnyEntity's
// writes go through the entity's write pipeline (versions, unique values,
// timestamps, validation) exactly as the typed calls' do.

// AnyEntity is the untyped access to one entity registered on a [Table]: the
// calls of [Entity] on values held in an any, each of the entity's Go type T (a
// T, not a *T). Get one with [Table.AnyEntity]. Values are built from stored
// attribute names and JSON values ([AnyEntity.FromAttributes]) or key inputs
// as text ([AnyEntity.FromKeyInputs]), and read back the same way
// ([AnyEntity.Attributes]). An AnyEntity is safe for concurrent use.
type AnyEntity struct {
	x entity
}

// EntityTypes returns the types (discriminators) of the entities registered on
// t, sorted.
func (t *Table) EntityTypes() []string {
	if t.refused("EntityTypes") != nil {
		return nil
	}
	var out []string
	for _, info := range t.registered() {
		out = append(out, info.discriminator)
	}
	slices.Sort(out)
	return out
}

// AnyEntity returns the untyped access to the entity registered under typ, its
// discriminator (the value of its type attribute). An unknown type is an error
// matching [ErrUnknownType] that lists the registered ones.
func (t *Table) AnyEntity(typ string) (*AnyEntity, error) {
	if err := t.refused("AnyEntity"); err != nil {
		return nil, err
	}
	info := t.entityByType(typ)
	if info == nil {
		types := t.EntityTypes()
		return nil, errorf("table %s has no entity of type %q%s (its types: %s): %w", t.name, typ, didYouMean(typ, types), strings.Join(types, ", "), ErrUnknownType)
	}
	return &AnyEntity{entity{table: t, info: info}}, nil
}

// unusable refuses a call on a nil or zero AnyEntity (nil when e is usable).
func (e *AnyEntity) unusable(op string) error {
	if e == nil || e.x.info == nil {
		return errorf("%s: the AnyEntity is nil or a zero value; get one with Table.AnyEntity: %w", op, ErrInvalidInput)
	}
	return nil
}

// Type returns the entity's discriminator ("" for a nil or zero AnyEntity).
func (e *AnyEntity) Type() string {
	if e.unusable("Type") != nil {
		return ""
	}
	return e.x.info.discriminator
}

// GoType returns the entity's Go type, T (nil for a nil or zero AnyEntity).
func (e *AnyEntity) GoType() reflect.Type {
	if e.unusable("GoType") != nil {
		return nil
	}
	return e.x.info.goType
}

// AttributeNames names the entity's stored attributes (dynamodbav names), in the
// order of its fields.
func (e *AnyEntity) AttributeNames() []string {
	if e.unusable("AttributeNames") != nil {
		return nil
	}
	var out []string
	for _, f := range e.x.info.plan.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// KeyInputs names the stored attributes the entity's primary key is rendered
// from, in template order: what [AnyEntity.FromKeyInputs] needs for a Get or a
// Delete.
func (e *AnyEntity) KeyInputs() []string {
	if e.unusable("KeyInputs") != nil {
		return nil
	}
	var out []string
	for _, kt := range e.x.info.baseTemplates() {
		for _, f := range kt.fields {
			if !slices.Contains(out, f.Name) {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// value checks that v holds a T and returns an addressable copy of it: no
// method modifies the caller's value.
func (e *AnyEntity) value(op string, v any) (reflect.Value, error) {
	if err := e.unusable(op); err != nil {
		return reflect.Value{}, err
	}
	rt := e.x.info.goType
	if v == nil || reflect.TypeOf(v) != rt {
		got := "nil"
		if v != nil {
			got = reflect.TypeOf(v).String()
		}
		return reflect.Value{}, errorf("%s %s: the value is a %s, not a %s: %w", op, e.x.info.name, got, rt.String(), ErrInvalidInput)
	}
	sv := reflect.New(rt).Elem()
	sv.Set(reflect.ValueOf(v))
	return sv, nil
}

// FromAttributes builds a T from stored attribute names and JSON values, as
// encoding/json decodes them into an any (numbers as float64 or, better,
// json.Number; a time as its RFC 3339 text; binary as base64 text; sets as
// arrays). An attribute the entity does not store, or a value that does not fit
// its field, is an error matching [ErrInvalidInput] naming both.
func (e *AnyEntity) FromAttributes(attrs map[string]any) (any, error) {
	if err := e.unusable("FromAttributes"); err != nil {
		return nil, err
	}
	info := e.x.info
	item := make(map[string]types.AttributeValue, len(attrs))
	for name, v := range attrs {
		f, ok := info.plan.Field(name)
		if !ok {
			return nil, errorf("%s has no attribute %q%s: %w", info.name, name, info.suggestAttr(name), ErrInvalidInput)
		}
		av, err := jsonToAV(v, fieldBase(f.Type))
		if err != nil {
			return nil, errorf("attribute %s: %v: %w", info.attrName(f), err, ErrInvalidInput)
		}
		item[name] = av
	}
	sv := reflect.New(info.goType).Elem()
	for name, av := range item {
		f, _ := info.plan.Field(name)
		if err := info.plan.Decode(map[string]types.AttributeValue{name: av}, sv); err != nil {
			return nil, errorf("attribute %s: %v: %w", info.attrName(f), err, ErrInvalidInput)
		}
	}
	return sv.Interface(), nil
}

// FromKeyInputs builds a T from inputs given as text by stored attribute name,
// such as a command line's customerId=c1 orderId=o1: a string field takes the
// text, an integer field its decimal value, a time.Time field RFC 3339 (or a
// date, 2006-01-02), a bool true or false. Given instead the table's key
// attributes (PK=CUST#c1 SK=PROFILE), it parses the rendered key back
// ([Entity.ParseKey]); the two cannot be mixed. A name the entity does not
// store, or a value that does not fit, is an error matching [ErrInvalidInput]
// naming both.
func (e *AnyEntity) FromKeyInputs(inputs map[string]string) (any, error) {
	if err := e.unusable("FromKeyInputs"); err != nil {
		return nil, err
	}
	info, t := e.x.info, e.x.table
	keyAttrs := 0
	for name := range inputs {
		if _, isKey := t.keys[name]; isKey {
			keyAttrs++
		}
	}
	sv := reflect.New(info.goType).Elem()
	if keyAttrs > 0 {
		if keyAttrs != len(inputs) {
			return nil, errorf("%s: give either the table's key attributes (%s) or the entity's attributes, not both: %w", info.name, strings.Join(sortedKeys(t.keys), ", "), ErrInvalidInput)
		}
		if err := e.x.parseKey(inputs, sv); err != nil {
			return nil, err
		}
		return sv.Interface(), nil
	}
	attrs := make(map[string]any, len(inputs))
	for name, text := range inputs {
		f, ok := info.plan.Field(name)
		if !ok {
			return nil, errorf("%s has no attribute %q%s (its key is rendered from %s): %w", info.name, name, info.suggestAttr(name), strings.Join(e.KeyInputs(), ", "), ErrInvalidInput)
		}
		base := fieldBase(f.Type)
		switch {
		case base == timeType:
			tm, err := parseTimeText(text)
			if err != nil {
				return nil, errorf("attribute %s: %q is not a time (want RFC 3339, e.g. 2026-01-02T15:04:05Z, or a date 2026-01-02): %w", info.attrName(f), text, ErrInvalidInput)
			}
			attrs[name] = tm.Format(time.RFC3339Nano)
		case base.Kind() == reflect.Bool:
			b, err := strconv.ParseBool(text)
			if err != nil {
				return nil, errorf("attribute %s: %q is not true or false: %w", info.attrName(f), text, ErrInvalidInput)
			}
			attrs[name] = b
		case keytmpl.KindOf(base) == keytmpl.KindInt || keytmpl.KindOf(base) == keytmpl.KindUint || base.Kind() == reflect.Float32 || base.Kind() == reflect.Float64:
			if _, err := strconv.ParseFloat(text, 64); err != nil {
				return nil, errorf("attribute %s: %q is not a number: %w", info.attrName(f), text, ErrInvalidInput)
			}
			attrs[name] = json.Number(text)
		case base.Kind() == reflect.String:
			attrs[name] = text
		default:
			return nil, errorf("attribute %s: a %s cannot be given as text; give a string, number, bool or time attribute: %w", info.attrName(f), f.Type.String(), ErrInvalidInput)
		}
	}
	return e.FromAttributes(attrs)
}

// parseTimeText reads RFC 3339 (with or without fractions) or a date.
func parseTimeText(text string) (time.Time, error) {
	if tm, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return tm, nil
	}
	return time.Parse(time.DateOnly, text)
}

// Attributes returns v's stored attributes as JSON values, by attribute name,
// as [AnyEntity.FromAttributes] reads them: strings, json.Number, bools, nil,
// []any (lists and sets) and map[string]any; binary as base64 text. Only the
// entity's fields are there, not the keys or the attributes the library keeps.
func (e *AnyEntity) Attributes(v any) (map[string]any, error) {
	sv, err := e.value("Attributes", v)
	if err != nil {
		return nil, err
	}
	item, err := e.x.info.plan.Encode(sv)
	if err != nil {
		return nil, errorf("Attributes %s: %w", e.x.info.name, err)
	}
	return RawItem(item).JSON(), nil
}

// Key renders every key attribute of v, as [Entity.Key] does.
func (e *AnyEntity) Key(v any) (map[string]string, error) {
	sv, err := e.value("Key", v)
	if err != nil {
		return nil, err
	}
	return e.x.key(sv)
}

// Get is [Entity.Get]: it reads the item at key's primary key and returns it,
// a T.
func (e *AnyEntity) Get(ctx context.Context, key any, opts ...GetOption) (any, error) {
	sv, err := e.value("Get", key)
	if err != nil {
		return nil, err
	}
	out := reflect.New(e.x.info.goType).Elem()
	if err := e.x.get(ctx, sv, out, opts); err != nil {
		return nil, err
	}
	return out.Interface(), nil
}

// Put is [Entity.Put], through the entity's write pipeline: it returns the
// value stored, a T.
func (e *AnyEntity) Put(ctx context.Context, v any, opts ...WriteOption) (any, error) {
	sv, err := e.value("Put", v)
	if err != nil {
		return nil, err
	}
	if err := e.x.put(ctx, sv, kindPut, opts); err != nil {
		return nil, err
	}
	return sv.Interface(), nil
}

// Create is [Entity.Create]: it returns the value stored, a T.
func (e *AnyEntity) Create(ctx context.Context, v any, opts ...WriteOption) (any, error) {
	sv, err := e.value("Create", v)
	if err != nil {
		return nil, err
	}
	if err := e.x.put(ctx, sv, kindCreate, opts); err != nil {
		return nil, err
	}
	return sv.Interface(), nil
}

// Delete is [Entity.Delete].
func (e *AnyEntity) Delete(ctx context.Context, key any, opts ...WriteOption) error {
	sv, err := e.value("Delete", key)
	if err != nil {
		return err
	}
	return e.x.delete(ctx, sv, opts)
}

// Query is [Entity.Query]: the page's Items are T values.
func (e *AnyEntity) Query(ctx context.Context, key any, opts ...QueryOption) (_ Page[any], err error) {
	sv, err := e.value("Query", key)
	if err != nil {
		return Page[any]{}, err
	}
	if err := e.x.refused("Query"); err != nil {
		return Page[any]{}, err
	}
	ctx, done := e.x.begin(ctx, "Query")
	defer done(&err)
	pq, err := e.x.prepareQuery(sv, opts)
	if err != nil {
		return Page[any]{}, err
	}
	items := reflect.New(reflect.SliceOf(e.x.info.goType))
	r, err := e.x.queryPage(ctx, pq, nil, items)
	return anyPage(items.Elem(), r, err)
}

// Scan is [Entity.Scan]: the page's Items are T values.
func (e *AnyEntity) Scan(ctx context.Context, opts ...ScanOption) (_ Page[any], err error) {
	if err := e.unusable("Scan"); err != nil {
		return Page[any]{}, err
	}
	if err := e.x.refused("Scan"); err != nil {
		return Page[any]{}, err
	}
	ctx, done := e.x.begin(ctx, "Scan")
	defer done(&err)
	pq, err := e.x.prepareScan(opts, nil)
	if err != nil {
		return Page[any]{}, err
	}
	items := reflect.New(reflect.SliceOf(e.x.info.goType))
	r, err := e.x.queryPage(ctx, pq, nil, items)
	return anyPage(items.Elem(), r, err)
}

// anyPage is a Page[any] of the T values in items (a []T).
func anyPage(items reflect.Value, r pageInfo, err error) (Page[any], error) {
	var page Page[any]
	if ferr := fillPage(reflect.ValueOf(&page).Elem(), r, err); ferr != nil && !r.read {
		return page, ferr
	}
	for i := range items.Len() {
		page.Items = append(page.Items, items.Index(i).Interface())
	}
	return page, err
}

// Count is [Entity.Count].
func (e *AnyEntity) Count(ctx context.Context, key any, opts ...QueryOption) (Count, error) {
	sv, err := e.value("Count", key)
	if err != nil {
		return Count{}, err
	}
	return e.x.count(ctx, sv, opts)
}

// ScanCount is [Entity.ScanCount].
func (e *AnyEntity) ScanCount(ctx context.Context, opts ...ScanOption) (Count, error) {
	if err := e.unusable("ScanCount"); err != nil {
		return Count{}, err
	}
	return e.x.scanCount(ctx, opts)
}

// Sweep is [Entity.Sweep].
func (e *AnyEntity) Sweep(ctx context.Context, opts ...SweepOption) (SweepStats, error) {
	if err := e.unusable("Sweep"); err != nil {
		return SweepStats{}, err
	}
	return e.x.sweep(ctx, opts)
}

// SweepUnique is [Entity.SweepUnique].
func (e *AnyEntity) SweepUnique(ctx context.Context, opts ...UniqueSweepOption) (UniqueSweepReport, error) {
	if err := e.unusable("SweepUnique"); err != nil {
		return UniqueSweepReport{}, err
	}
	return e.x.sweepUnique(ctx, opts)
}

// fieldBase is a field's type without its pointer.
func fieldBase(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// jsonToAV converts a JSON value to the attribute value a field of type ft
// decodes: numbers are N, text is S (B for a []byte field, from base64), arrays
// are L, or a set when the field is one (SS, NS, BS: the codec reads either).
func jsonToAV(v any, ft reflect.Type) (types.AttributeValue, error) {
	switch x := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}, nil
	case json.Number:
		return &types.AttributeValueMemberN{Value: x.String()}, nil
	case float64:
		return &types.AttributeValueMemberN{Value: strconv.FormatFloat(x, 'f', -1, 64)}, nil
	case string:
		if ft != nil && ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8 {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, errorf("binary values are base64 text: %w", err)
			}
			return &types.AttributeValueMemberB{Value: b}, nil
		}
		return &types.AttributeValueMemberS{Value: x}, nil
	case []any:
		var elem reflect.Type
		if ft != nil && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) {
			elem = fieldBase(ft.Elem())
		} else if ft != nil && ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Bool || ft != nil && ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct && ft.Elem().NumField() == 0 {
			elem = ft.Key() // a set held as a map[T]bool or map[T]struct{}
		}
		l := make([]types.AttributeValue, 0, len(x))
		for i, e := range x {
			av, err := jsonToAV(e, elem)
			if err != nil {
				return nil, errorf("element %d: %w", i, err)
			}
			l = append(l, av)
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		var elem reflect.Type
		if ft != nil && ft.Kind() == reflect.Map {
			elem = fieldBase(ft.Elem())
		}
		m := make(map[string]types.AttributeValue, len(x))
		for k, e := range x {
			var fe reflect.Type = elem
			if ft != nil && ft.Kind() == reflect.Struct {
				if f, ok := structFieldByAttr(ft, k); ok {
					fe = fieldBase(f)
				}
			}
			av, err := jsonToAV(e, fe)
			if err != nil {
				return nil, errorf("key %q: %w", k, err)
			}
			m[k] = av
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, errorf("a %T is not a JSON value", v)
}

// structFieldByAttr finds the type of the field of struct type st stored under
// attr, for nested binary values; false when the plan cannot say.
func structFieldByAttr(st reflect.Type, attr string) (reflect.Type, bool) {
	p, err := codec.PlanFor(st)
	if err != nil {
		return nil, false
	}
	f, ok := p.Field(attr)
	if !ok {
		return nil, false
	}
	return f.Type, true
}

// JSON returns the item as JSON values, as [AnyEntity.Attributes] gives a
// typed item's: strings, numbers as json.Number, binary as base64 text, sets as
// arrays, lists and maps as arrays and objects, NULL as nil.
func (r RawItem) JSON() map[string]any {
	out := make(map[string]any, len(r))
	for k, av := range r {
		out[k] = avToJSON(av)
	}
	return out
}

// avToJSON converts an attribute value to a JSON value (avToJSON and jsonToAV
// round-trip an entity's fields).
func avToJSON(av types.AttributeValue) any {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return x.Value
	case *types.AttributeValueMemberN:
		return json.Number(x.Value)
	case *types.AttributeValueMemberBOOL:
		return x.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberB:
		return base64.StdEncoding.EncodeToString(x.Value)
	case *types.AttributeValueMemberSS:
		out := make([]any, len(x.Value))
		for i, s := range x.Value {
			out[i] = s
		}
		return out
	case *types.AttributeValueMemberNS:
		out := make([]any, len(x.Value))
		for i, s := range x.Value {
			out[i] = json.Number(s)
		}
		return out
	case *types.AttributeValueMemberBS:
		out := make([]any, len(x.Value))
		for i, b := range x.Value {
			out[i] = base64.StdEncoding.EncodeToString(b)
		}
		return out
	case *types.AttributeValueMemberL:
		out := make([]any, len(x.Value))
		for i, e := range x.Value {
			out[i] = avToJSON(e)
		}
		return out
	case *types.AttributeValueMemberM:
		out := make(map[string]any, len(x.Value))
		for k, e := range x.Value {
			out[k] = avToJSON(e)
		}
		return out
	}
	return nil
}
