package singletable

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Write sharding spreads one hot partition over N: its partition key template holds
// the shard field's placeholder, e.g.
//
//	type Event struct {
//	    _       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8"`
//	    Day     time.Time `dynamodbav:"day"`
//	    At      time.Time `dynamodbav:"at"`
//	    EventID string    `dynamodbav:"eventId"`
//	    Shard   int       `dynamodbav:"shard" singletable:"shard"`
//	}
//
// Shards are numbered 1 to N; 0 means "not chosen yet". With `shards=N` alone a
// write picks a shard at random (the best spread; a point read then asks every
// shard in one BatchGetItem). With `shards=N,shardBy=eventId` (attributes joined by
// "+", all of them inputs of the primary key) the shard is a hash of those values,
// so a point read computes it and costs one GetItem. Reads of all shards go through
// [Entity.QueryShards], which queries them concurrently and merges them in sort key
// order.

// shardPlan is how an entity spreads its writes.
type shardPlan struct {
	field *codec.Field
	count int
	by    []*codec.Field // hash inputs; empty means random
}

func compileShardField(info *entityInfo, index []int, sf reflect.StructField) error {
	if info.shard != nil {
		return &EntityError{Entity: info.name, Field: sf.Name, Reason: "a second shard field (the first is " + info.shard.field.GoName + ")"}
	}
	f, err := storedField(info, index, sf, "shard")
	if err != nil {
		return err
	}
	if !isIntegerKind(f.Type.Kind()) {
		return &EntityError{Entity: info.name, Field: sf.Name, Reason: "the shard field must be an integer, not " + f.Type.String()}
	}
	info.shard = &shardPlan{field: f}
	return nil
}

// compileSharding reads the entity's `singletable:"shards=N,shardBy=a+b"` options.
func compileSharding(info *entityInfo, opts string) error {
	fail := func(reason string) error {
		return &EntityError{Entity: info.name, Field: "singletable", Reason: reason}
	}
	if opts == "" {
		if info.shard != nil {
			return &EntityError{Entity: info.name, Field: info.shard.field.GoName, Reason: "a shard field needs `singletable:\"shards=N\"` on the entity tags"}
		}
		return nil
	}
	count := 0
	var by []string
	for _, opt := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(opt), "=")
		if !slices.Contains(entityTagOptions, k+"=") {
			k = "" // refused below
		}
		switch k {
		case "shards":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return fail("shards=" + v + ": want a count from 1 to 10000")
			}
			count = n
		case "shardBy":
			if v == "" {
				return fail("shardBy needs attribute names")
			}
			by = strings.Split(v, "+")
		default:
			return fail("unknown entity option " + strconv.Quote(opt) + " (want shards=N, shardBy=attr+attr or unique=attr+attr)")
		}
	}
	if count == 0 {
		return fail("shardBy without shards=N")
	}
	if info.shard == nil {
		return fail("shards=N needs an integer field tagged `singletable:\"shard\"`")
	}
	inPK := false
	for _, f := range info.pk.fields {
		inPK = inPK || f == info.shard.field
	}
	if !inPK {
		return &EntityError{Entity: info.name, Field: info.shard.field.GoName, Reason: "the partition key template " + strconv.Quote(info.pk.tmpl.String()) + " has no {" + info.shard.field.Name + "} placeholder"}
	}
	info.shard.count = count
	for _, name := range by {
		f, ok := info.plan.Field(name)
		if !ok || !info.baseInputs[name] || f == info.shard.field {
			var inputs []string
			for _, in := range sortedKeys(info.baseInputs) {
				if in != info.shard.field.Name {
					inputs = append(inputs, in)
				}
			}
			return fail("shardBy " + strconv.Quote(name) + " must name an input of the primary key other than the shard" + didYouMean(name, inputs) + " (its inputs: " + listOrNone(inputs) + ")")
		}
		info.shard.by = append(info.shard.by, f)
	}
	return nil
}

// shardOf reads the shard a value holds.
func (sp *shardPlan) shardOf(sv reflect.Value) int {
	fv, _ := sp.field.ValueOf(sv)
	if fv.CanInt() {
		return int(fv.Int())
	}
	return int(fv.Uint())
}

func (sp *shardPlan) setShard(sv reflect.Value, n int) {
	fv := sv.FieldByIndex(sp.field.Index)
	if fv.CanInt() {
		fv.SetInt(int64(n))
	} else {
		fv.SetUint(uint64(n))
	}
}

// hashShard is the shard the shardBy values choose: a hash of their key renderings.
// It is part of the stored data's layout: changing it moves items to other shards.
func (sp *shardPlan) hashShard(sv reflect.Value) int {
	h := fnv.New64a()
	var buf []byte
	for _, f := range sp.by {
		v := keytmpl.ValueOfField(f, sv)
		buf = append(buf[:0], byte(v.Kind))
		switch v.Kind {
		case keytmpl.KindString:
			buf = append(buf, v.S...)
		case keytmpl.KindInt:
			buf = strconv.AppendInt(buf, v.I, 10)
		case keytmpl.KindUint:
			buf = strconv.AppendUint(buf, v.U, 10)
		case keytmpl.KindTime:
			buf = v.T.UTC().AppendFormat(buf, keytmpl.TimeLayout)
		}
		buf = append(buf, 0)
		h.Write(buf)
	}
	// FNV-1a's low bits depend on few input bits; mix them all in (MurmurHash3's
	// finalizer) so that a power-of-two shard count spreads any ids.
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return int(x%uint64(sp.count)) + 1
}

// shardFeature is the write side of sharding, compiled at Register for a sharded
// entity: a whole item gets its shard (a hash of its shardBy inputs, or drawn at
// random), and writes that promise to fail when the item exists are refused on
// an entity sharded at random, where a shard drawn at random can check only
// itself.
type shardFeature struct {
	sp *shardPlan
	noOwner
}

func (s *shardFeature) plan(p *writePlan) error {
	if !p.whole() {
		return nil // Update and Delete find the item's shard first (resolveShard)
	}
	info := p.info
	if len(s.sp.by) == 0 && p.kind != kindBatchPut {
		switch {
		case p.kind == kindCreate:
			return errorf("%s is sharded at random, so two Creates of one item can land in two shards and both succeed: Create needs one place per item; shard by a hash of the item's id (singletable:\"shards=N,shardBy=id\") or use Put: %w", info.name, ErrInvalidInput)
		case p.zeroVersion && (p.shardDrawn || s.sp.shardOf(p.sv) == 0):
			return errorf("%s is sharded at random and versioned: a Put at version 0 creates the item or fails if it exists, but a shard drawn at random can check only itself, so a copy in another shard would go unseen; set the shard, shard by a hash of the item's id (singletable:\"shards=N,shardBy=id\"), or pass Clobber(): %w", info.name, ErrInvalidInput)
		case p.env.replay:
			return fmt.Errorf("%s is sharded at random, so a TxPut planned again draws another shard: a transaction with a token must be the same when resent; shard by a hash (shardBy): %w", info.name, ErrInvalidInput)
		}
	}
	_, err := info.fillShard(p.sv, true)
	return err
}

// fillShard makes sure a value's shard is set: computed for a hashed entity, drawn
// at random when assign is set, or reported as needing a lookup (random shards,
// value with shard 0, no assign). A shard out of range or not matching the hash is
// an error.
func (info *entityInfo) fillShard(sv reflect.Value, assign bool) (needLocate bool, err error) {
	sp := info.shard
	if sp == nil {
		return false, nil
	}
	cur := sp.shardOf(sv)
	if cur < 0 || cur > sp.count {
		return false, &KeyError{Entity: info.name, Attribute: info.pk.attr, Field: sp.field.GoName, Reason: "shard " + strconv.Itoa(cur) + " is outside 1-" + strconv.Itoa(sp.count)}
	}
	if len(sp.by) > 0 {
		want := sp.hashShard(sv)
		if cur != 0 && cur != want {
			return false, &KeyError{Entity: info.name, Attribute: info.pk.attr, Field: sp.field.GoName, Reason: "shard " + strconv.Itoa(cur) + " is not the one its " + sp.byNames() + " hash to (" + strconv.Itoa(want) + ")"}
		}
		sp.setShard(sv, want)
		return false, nil
	}
	if cur != 0 {
		return false, nil
	}
	if assign {
		sp.setShard(sv, int(info.table.opts.Random()%uint64(sp.count))+1)
		return false, nil
	}
	return true, nil
}

// drawShard is fillShard for a whole item about to be written by an action
// planned later (TxPut), drawing a random shard now so that the action keeps it
// however often it is planned; drawn reports that the library drew it.
func (info *entityInfo) drawShard(sv reflect.Value) (drawn bool, err error) {
	sp := info.shard
	drawn = sp != nil && len(sp.by) == 0 && sp.shardOf(sv) == 0
	_, err = info.fillShard(sv, true)
	return drawn, err
}

func (sp *shardPlan) byNames() string {
	names := make([]string, len(sp.by))
	for i, f := range sp.by {
		names[i] = f.GoName
	}
	return strings.Join(names, "+")
}

// checkShard refuses to render a key of a sharded entity whose shard is not set.
func (info *entityInfo) checkShard(sv reflect.Value) error {
	if info.shard == nil || info.shard.shardOf(sv) != 0 {
		return nil
	}
	return &KeyError{Entity: info.name, Attribute: info.pk.attr, Field: info.shard.field.GoName,
		Reason: "shard not set: a randomly sharded item is found by its shard (returned by Put) or by Get; read many with QueryShards"}
}

// locateShard finds which shard holds the item at key (a randomly sharded entity's
// value with shard 0) with one BatchGetItem over every shard, sets it in sv and
// returns the item.
func (e *entity) locateShard(ctx context.Context, sv reflect.Value, consistent bool) (map[string]types.AttributeValue, error) {
	sp := e.info.shard
	keys := make([]map[string]types.AttributeValue, 0, sp.count)
	cp := reflect.New(sv.Type()).Elem()
	cp.Set(sv)
	for s := 1; s <= sp.count; s++ {
		sp.setShard(cp, s)
		k, _, err := e.info.primaryKey(cp)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	t := e.table
	pending := keys
	retry := t.batchRetry()
	for len(pending) > 0 {
		n := min(len(pending), maxBatchGet)
		out, err := t.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			t.name: {Keys: pending[:n], ConsistentRead: aws.Bool(consistent)},
		}})
		if err != nil {
			return nil, errorf("locate %s's shard: %w", e.info.name, err)
		}
		for _, item := range out.Responses[t.name] {
			for s, k := range keys {
				if k[t.opts.PartitionKey].(*types.AttributeValueMemberS).Value == item[t.opts.PartitionKey].(*types.AttributeValueMemberS).Value {
					sp.setShard(sv, s+1)
					return item, nil
				}
			}
		}
		again := out.UnprocessedKeys[t.name].Keys
		pending = append(again, pending[n:]...)
		if err := retry.After(ctx, n, len(again)); err != nil {
			return nil, errorf("locate %s's shard: %w: %w", e.info.name, ErrUnprocessed, err)
		}
	}
	return nil, fmt.Errorf("no item at any of its %d shards: %w", sp.count, ErrNotFound)
}

// errNoRandomCreate explains why a write that may create an item (Mutate,
// Update with Upsert) does not create one of an entity sharded at random that is
// in none of its shards: each caller would draw a shard of its own, so
// concurrent ones would store copies (issue 14, scenario 7).
func (info *entityInfo) errNoRandomCreate(op string, err error) error {
	return fmt.Errorf("%s creates no item of %s, which is sharded at random: concurrent callers would each draw a shard and store copies; create it with Put (which returns its shard), or shard by a hash of the item's id (shardBy): %w", op, info.name, err)
}

// resolveShard fills the shard of a key value for a read or a write of one item,
// looking it up when it must.
func (e *entity) resolveShard(ctx context.Context, sv reflect.Value, consistent bool) error {
	_, err := e.resolveShardItem(ctx, sv, consistent)
	return err
}

// resolveShardItem is resolveShard that also returns the item when it had to be
// looked up (nil otherwise).
func (e *entity) resolveShardItem(ctx context.Context, sv reflect.Value, consistent bool) (map[string]types.AttributeValue, error) {
	need, err := e.info.fillShard(sv, false)
	if err != nil || !need {
		return nil, err
	}
	return e.locateShard(ctx, sv, consistent)
}
