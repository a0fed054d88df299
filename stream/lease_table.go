package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/internal/condwrite"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/reserved"
)

// The attributes of lease items.
const (
	attrOwner      = "leaseOwner"
	attrCounter    = "leaseCounter"
	attrExpires    = "leaseExpires"
	attrCheckpoint = "checkpoint"
	attrCPOrder    = "checkpointOrder"
	attrParents    = "parentShardIds"
	attrFinished   = "finished"
	attrHandOff    = "handOff"
	attrEpoch      = "leaseEpoch"
	attrHandled    = "handled"
)

var leaseAttrs = []string{attrOwner, attrCounter, attrExpires, attrCheckpoint, attrCPOrder, attrParents, attrFinished, attrHandOff, attrEpoch, attrHandled}

// TableStore is a [LeaseStore] kept in a DynamoDB table: the single table
// itself, or one of its own (any table keyed like a [singletable.Table], e.g.
// made with singletable.NewTable and [singletable.Table.CreateTable]). Its
// items have partition keys beginning with "<delimiter>singletable<delimiter>",
// which no registered entity can render (see [singletable.Register]), and type
// attributes beginning with "_singletable.": one item per shard of a stream
// (partition "#singletable#lease#<stream ARN>", sort key the shard id), about
// 300 bytes, beside the sweep progress of [singletable.TableStore]. Stream
// consumers pass over the records of these items.
//
// Every write is conditional, and is judged as the entity pipeline judges its
// writes: the SDK's retryer resends no failure that may have applied it (a
// lost answer, a reset, a 5xx, an ended context); after one, and after a
// failed condition, the item is read back consistently, and the write counts
// as done when the item shows its result (the counter one on, the owner, the
// expiry or checkpoint it wrote), is sent again when the item is as it found
// it, and is refused ([ErrLeaseLost], [ErrLeaseExists]) when another write
// overtook it; when the item cannot be read back the error matches
// [singletable.ErrAmbiguous].
//
// It calls the table's client as [singletable.Table.Client] returns it: its
// calls are not reported to the table's Observer or Logger.
//
// Cost: [TableStore.Leases] is one consistent Query (1 RCU per 4 KB of leases:
// about 13 leases), every other call one UpdateItem or PutItem (1 WCU), plus
// one consistent GetItem after a lost answer or a refusal. A consumer makes
// one Leases call and one renewal per held lease every renewal interval, plus
// a write per checkpoint; see [Consume].
//
// A TableStore is safe for concurrent use.
type TableStore struct {
	client   singletable.Client
	table    string
	pk, sk   string // the table's key attributes
	typeAttr string
	prefix   string // the reserved prefix of the library's partition keys
	delim    byte
	backoff  singletable.Backoff
}

var (
	_ LeaseStore   = (*TableStore)(nil)
	_ HandledStore = (*TableStore)(nil)
)

// NewTableStore returns a store that keeps leases in t's table. It sends
// nothing. It fails if the table's keys are not strings, or if one of the
// store's attribute names (leaseOwner, leaseCounter, leaseExpires, checkpoint,
// checkpointOrder, parentShardIds, finished, handOff) is a key or type
// attribute of t.
func NewTableStore(t *singletable.Table) (*TableStore, error) {
	if t == nil {
		return nil, fmt.Errorf("singletable: stream: NewTableStore: nil table: %w", singletable.ErrInvalidInput)
	}
	o := t.Options()
	if !stringKeys(o) {
		return nil, fmt.Errorf("singletable: stream: NewTableStore %s: the store keeps its items under string partition and sort keys, and this table has a number, binary or no sort key: use a table of its own: %w", t.Name(), singletable.ErrInvalidInput)
	}
	keys := map[string]bool{o.PartitionKey: true, o.SortKey: true, o.TypeAttribute: true}
	for _, ix := range o.Indexes {
		keys[ix.PartitionKey], keys[ix.SortKey] = true, true
	}
	for _, a := range leaseAttrs {
		if keys[a] {
			return nil, fmt.Errorf("singletable: stream: NewTableStore %s: attribute %q is a key or type attribute of the table: %w", t.Name(), a, singletable.ErrInvalidInput)
		}
	}
	if o.Backoff.MaxAttempts <= 0 {
		o.Backoff.MaxAttempts = 10 // Backoff's default
	}
	return &TableStore{client: t.Client(), table: t.Name(), pk: o.PartitionKey, sk: o.SortKey, typeAttr: o.TypeAttribute,
		prefix: reserved.Prefix(o.Delimiter), delim: o.Delimiter, backoff: o.Backoff}, nil
}

// stringKeys reports whether the table's primary key is a string partition
// key and a string sort key.
func stringKeys(o singletable.TableOptions) bool {
	if o.NoSortKey {
		return false
	}
	for _, typ := range o.KeyTypes {
		if typ != types.ScalarAttributeTypeS {
			return false
		}
	}
	return true
}

func (s *TableStore) leasePK(group string) string {
	return s.prefix + "lease" + string(s.delim) + group
}

func (s *TableStore) leaseKey(group, shard string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		s.pk: &types.AttributeValueMemberS{Value: s.leasePK(group)},
		s.sk: &types.AttributeValueMemberS{Value: shard},
	}
}

func checkLeaseID(group, shard string) error {
	if group == "" || shard == "" {
		return fmt.Errorf("singletable: lease with an empty group or shard id: %w", singletable.ErrInvalidInput)
	}
	return nil
}

// Leases returns the group's leases in shard id order: a consistent Query of
// the group's partition, page by page.
func (s *TableStore) Leases(ctx context.Context, group string) ([]Lease, error) {
	var b expr.Builder
	cond := b.Name(s.pk) + " = " + b.S(s.leasePK(group))
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	var out []Lease
	for {
		page, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("singletable: leases of %s: Query: %w", group, err)
		}
		for _, item := range page.Items {
			if typ, _ := item[s.typeAttr].(*types.AttributeValueMemberS); typ == nil || typ.Value != reserved.LeaseType {
				continue
			}
			out = append(out, s.decodeLease(group, item))
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func (s *TableStore) decodeLease(group string, item map[string]types.AttributeValue) Lease {
	l := Lease{Group: group}
	str := func(a string) string {
		v, _ := item[a].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	num := func(a string) int64 { return intAttr(item, a) }
	l.Shard = str(s.sk)
	l.Owner = str(attrOwner)
	l.Counter = num(attrCounter)
	l.Epoch = num(attrEpoch)
	if ms := num(attrExpires); ms != 0 {
		l.Expires = time.UnixMilli(ms)
	}
	l.Checkpoint = str(attrCheckpoint)
	if p, ok := item[attrParents].(*types.AttributeValueMemberL); ok {
		for _, e := range p.Value {
			if v, ok := e.(*types.AttributeValueMemberS); ok {
				l.Parents = append(l.Parents, v.Value)
			}
		}
	}
	if f, ok := item[attrFinished].(*types.AttributeValueMemberBOOL); ok {
		l.Finished = f.Value
	}
	l.HandOff = str(attrHandOff)
	if h, ok := item[attrHandled].(*types.AttributeValueMemberSS); ok {
		l.Handled = slices.SortedFunc(slices.Values(h.Value), compareSeq)
	}
	return l
}

// CreateLease creates l, free and at counter 0: one conditional PutItem
// (attribute_not_exists on the partition key).
func (s *TableStore) CreateLease(ctx context.Context, l Lease) error {
	if err := checkLeaseID(l.Group, l.Shard); err != nil {
		return err
	}
	if err := checkSeq(l.Checkpoint); err != nil {
		return err
	}
	item := s.leaseKey(l.Group, l.Shard)
	item[s.typeAttr] = &types.AttributeValueMemberS{Value: reserved.LeaseType}
	item[attrCounter] = &types.AttributeValueMemberN{Value: "0"}
	item[attrFinished] = &types.AttributeValueMemberBOOL{Value: l.Finished}
	item[attrCPOrder] = &types.AttributeValueMemberS{Value: seqOrder(l.Checkpoint)}
	if l.Checkpoint != "" {
		item[attrCheckpoint] = &types.AttributeValueMemberS{Value: l.Checkpoint}
	}
	if len(l.Parents) > 0 {
		ps := make([]types.AttributeValue, len(l.Parents))
		for i, p := range l.Parents {
			ps[i] = &types.AttributeValueMemberS{Value: p}
		}
		item[attrParents] = &types.AttributeValueMemberL{Value: ps}
	}
	var b expr.Builder
	cond := "attribute_not_exists(" + b.Name(s.pk) + ")"
	in := &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: b.Names(),
	}
	w := s.write(l.Group, l.Shard, func(ctx context.Context, optFn func(*dynamodb.Options)) (condwrite.Item, error) {
		_, err := s.client.PutItem(ctx, in, optFn)
		return nil, err
	}, func(cur Lease, found bool) condwrite.Verdict {
		switch {
		case !found:
			return condwrite.NotLanded
		case cur.Counter == 0 && cur.Owner == "" && cur.Checkpoint == l.Checkpoint && cur.Finished == l.Finished && slices.Equal(cur.Parents, l.Parents):
			return condwrite.Landed // this create, or another consumer's of the same lease: created either way
		}
		return condwrite.Overtaken
	})
	w.TrustRefusals = true // an identical lease made by another consumer cannot be told from this one's
	_, refused, err := w.Do(ctx)
	switch {
	case refused:
		return fmt.Errorf("singletable: lease %s of %s: %w", l.Shard, l.Group, ErrLeaseExists)
	case err != nil:
		return fmt.Errorf("singletable: create lease %s of %s: PutItem: %w", l.Shard, l.Group, ambiguity(err))
	}
	return nil
}

// write is one conditional write of the lease item of group and shard, sent and
// judged by internal/condwrite: the SDK resends no failure that may have applied
// it; after such a failure, and after a failed condition, the lease is read back
// consistently and judge says whether this write landed, did not (sent again) or
// was overtaken (refused). found is false when the item is missing or not a lease.
func (s *TableStore) write(group, shard string, send func(context.Context, func(*dynamodb.Options)) (condwrite.Item, error), judge func(cur Lease, found bool) condwrite.Verdict) condwrite.Write {
	key := s.leaseKey(group, shard)
	b := s.backoff
	return condwrite.Write{
		Send: send,
		ReadBack: func(ctx context.Context) (condwrite.Item, error) {
			return condwrite.ReadBack(ctx, s.client.GetItem, s.table, key, b.MaxAttempts, b.Wait)
		},
		Judge: func(item condwrite.Item) condwrite.Verdict {
			if typ, _ := item[s.typeAttr].(*types.AttributeValueMemberS); typ == nil || typ.Value != reserved.LeaseType {
				return judge(Lease{}, false)
			}
			return judge(s.decodeLease(group, item), true)
		},
		Attempts: b.MaxAttempts,
		Wait:     b.Wait,
	}
}

// ambiguity makes an outcome condwrite could not learn match ErrAmbiguous.
func ambiguity(err error) error {
	if errors.Is(err, condwrite.ErrUnproven) {
		return fmt.Errorf("%w: %w", singletable.ErrAmbiguous, err)
	}
	return err
}

// update sends one conditional UpdateItem of l's item and returns the lease as
// stored afterwards. guard is the condition besides the item's being a lease;
// judge tells from the lease as read back whether this write landed (see write).
func (s *TableStore) update(ctx context.Context, op string, l Lease, b *expr.Builder, set, remove []string, guard string, judge func(cur Lease, found bool) condwrite.Verdict) (Lease, error) {
	if err := checkLeaseID(l.Group, l.Shard); err != nil {
		return Lease{}, err
	}
	update := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	cond := expr.And(b.Name(s.typeAttr)+" = "+b.S(reserved.LeaseType), guard)
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.leaseKey(l.Group, l.Shard),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	}
	attrs, refused, err := s.write(l.Group, l.Shard, func(ctx context.Context, optFn func(*dynamodb.Options)) (condwrite.Item, error) {
		out, err := s.client.UpdateItem(ctx, in, optFn)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	}, judge).Do(ctx)
	if refused {
		return Lease{}, fmt.Errorf("singletable: %s lease %s of %s (owner %q, counter %d): %w: %w", op, l.Shard, l.Group, l.Owner, l.Counter, ErrLeaseLost, err)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("singletable: %s lease %s of %s: UpdateItem: %w", op, l.Shard, l.Group, ambiguity(err))
	}
	return s.decodeLease(l.Group, attrs), nil
}

// leaseVerdict is the judgement of a lease write from the lease as read back: landed
// when it shows this write's result, not landed when it is still as the write
// found it, otherwise overtaken.
func leaseVerdict(found, landed, untouched bool) condwrite.Verdict {
	switch {
	case found && landed:
		return condwrite.Landed
	case found && untouched:
		return condwrite.NotLanded
	}
	return condwrite.Overtaken
}

// moved reports whether cur is l one write later, by owner, with expires: the
// receipt of a take, renewal or hand-over (the expiry, to the millisecond, is
// the writer's own).
func moved(cur, l Lease, owner string, expires time.Time) bool {
	return cur.Counter == l.Counter+1 && cur.Owner == owner && cur.Expires.UnixMilli() == expires.UnixMilli() && !cur.Finished
}

// heldAt reports whether cur is still l as its owner holds it, at its counter.
func heldAt(cur, l Lease) bool {
	return cur.Counter == l.Counter && cur.Owner == l.Owner && l.Owner != "" && !cur.Finished
}

// owns is the condition that l.Owner holds the lease at l.Counter.
func owns(b *expr.Builder, l Lease) string {
	return b.Name(attrCounter) + " = " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(l.Counter, 10)}) +
		" AND " + b.Name(attrOwner) + " = " + b.S(l.Owner)
}

// newEpoch moves the epoch on: a lease changes hands.
func newEpoch(b *expr.Builder) string {
	return b.Name(attrEpoch) + " = if_not_exists(" + b.Name(attrEpoch) + ", " + b.Value(&types.AttributeValueMemberN{Value: "0"}) + ") + " + b.Value(&types.AttributeValueMemberN{Value: "1"})
}

func bump(b *expr.Builder) string {
	return b.Name(attrCounter) + " = " + b.Name(attrCounter) + " + " + b.Value(&types.AttributeValueMemberN{Value: "1"})
}

func expiresAV(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

// TakeLease gives l to owner: one UpdateItem conditional on the counter being
// l.Counter and the lease not finished.
func (s *TableStore) TakeLease(ctx context.Context, l Lease, owner string, expires time.Time) (Lease, error) {
	if owner == "" {
		return Lease{}, fmt.Errorf("singletable: TakeLease: empty owner: %w", singletable.ErrInvalidInput)
	}
	var b expr.Builder
	set := []string{bump(&b), newEpoch(&b), b.Name(attrOwner) + " = " + b.S(owner), b.Name(attrExpires) + " = " + b.Value(expiresAV(expires))}
	guard := b.Name(attrCounter) + " = " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(l.Counter, 10)}) +
		" AND " + b.Name(attrFinished) + " = " + b.Value(&types.AttributeValueMemberBOOL{Value: false})
	return s.update(ctx, "take", l, &b, set, []string{b.Name(attrHandOff)}, guard, func(cur Lease, found bool) condwrite.Verdict {
		return leaseVerdict(found, moved(cur, l, owner, expires), cur.Counter == l.Counter && !cur.Finished)
	})
}

// RenewLease moves l's counter on and sets its expiry: one UpdateItem
// conditional on l.Owner owning it at l.Counter.
func (s *TableStore) RenewLease(ctx context.Context, l Lease, expires time.Time) (Lease, error) {
	var b expr.Builder
	set := []string{bump(&b), b.Name(attrExpires) + " = " + b.Value(expiresAV(expires))}
	return s.update(ctx, "renew", l, &b, set, nil, owns(&b, l), func(cur Lease, found bool) condwrite.Verdict {
		return leaseVerdict(found, moved(cur, l, l.Owner, expires), heldAt(cur, l))
	})
}

// Checkpoint sets l's checkpoint: one UpdateItem conditional on l.Owner owning
// it at l.Counter and the stored checkpoint not being ahead.
func (s *TableStore) Checkpoint(ctx context.Context, l Lease, checkpoint string, finished bool) (Lease, error) {
	return s.checkpoint(ctx, l, checkpoint, finished, nil)
}

// CheckpointHandled is Checkpoint, not finished, that also sets the records
// after the checkpoint already handled (a string set; removed when empty):
// one UpdateItem, as Checkpoint's.
func (s *TableStore) CheckpointHandled(ctx context.Context, l Lease, checkpoint string, handled []string) (Lease, error) {
	if err := checkHandled(checkpoint, handled); err != nil {
		return Lease{}, err
	}
	return s.checkpoint(ctx, l, checkpoint, false, &handled)
}

func (s *TableStore) checkpoint(ctx context.Context, l Lease, checkpoint string, finished bool, handled *[]string) (Lease, error) {
	if err := checkSeq(checkpoint); err != nil {
		return Lease{}, err
	}
	var b expr.Builder
	set := []string{bump(&b), b.Name(attrCPOrder) + " = " + b.S(seqOrder(checkpoint))}
	var remove []string
	if checkpoint != "" {
		set = append(set, b.Name(attrCheckpoint)+" = "+b.S(checkpoint))
	}
	switch {
	case handled == nil:
	case len(*handled) == 0:
		remove = append(remove, b.Name(attrHandled))
	default:
		set = append(set, b.Name(attrHandled)+" = "+b.Value(&types.AttributeValueMemberSS{Value: slices.Compact(slices.Sorted(slices.Values(*handled)))}))
	}
	if finished {
		set = append(set, b.Name(attrFinished)+" = "+b.Value(&types.AttributeValueMemberBOOL{Value: true}))
		remove = append(remove, b.Name(attrOwner), b.Name(attrExpires), b.Name(attrHandOff))
	}
	guard := owns(&b, l) + " AND " + b.Name(attrCPOrder) + " <= " + b.S(seqOrder(checkpoint))
	return s.update(ctx, "checkpoint", l, &b, set, remove, guard, func(cur Lease, found bool) condwrite.Verdict {
		landed := cur.Counter == l.Counter+1 && (checkpoint == "" || cur.Checkpoint == checkpoint) &&
			(finished && cur.Finished && cur.Owner == "" || !finished && !cur.Finished && cur.Owner == l.Owner)
		return leaseVerdict(found, landed, heldAt(cur, l) && compareSeq(cur.Checkpoint, checkpoint) <= 0)
	})
}

// ReleaseLease frees l: one UpdateItem conditional on l.Owner owning it at
// l.Counter.
func (s *TableStore) ReleaseLease(ctx context.Context, l Lease) error {
	var b expr.Builder
	_, err := s.update(ctx, "release", l, &b, []string{bump(&b)}, []string{b.Name(attrOwner), b.Name(attrExpires), b.Name(attrHandOff)}, owns(&b, l),
		func(cur Lease, found bool) condwrite.Verdict {
			return leaseVerdict(found, cur.Counter == l.Counter+1 && cur.Owner == "" && !cur.Finished, heldAt(cur, l))
		})
	return err
}

// AskHandOff asks l's owner for it: one UpdateItem conditional on l.Owner
// owning it and no other worker having asked. The counter is left as it is.
func (s *TableStore) AskHandOff(ctx context.Context, l Lease, worker string) error {
	if worker == "" {
		return fmt.Errorf("singletable: AskHandOff: empty worker: %w", singletable.ErrInvalidInput)
	}
	var b expr.Builder
	if l.Owner == "" {
		return fmt.Errorf("singletable: AskHandOff: lease %s has no owner: %w", l.Shard, ErrLeaseLost)
	}
	guard := b.Name(attrOwner) + " = " + b.S(l.Owner) + " AND (attribute_not_exists(" + b.Name(attrHandOff) + ") OR " + b.Name(attrHandOff) + " = " + b.S(worker) + ")"
	_, err := s.update(ctx, "ask for", l, &b, []string{b.Name(attrHandOff) + " = " + b.S(worker)}, nil, guard, func(cur Lease, found bool) condwrite.Verdict {
		mine := cur.Owner == l.Owner && !cur.Finished
		return leaseVerdict(found, mine && cur.HandOff == worker, mine && cur.HandOff == "")
	})
	return err
}

// HandOver gives l to l.HandOff: one UpdateItem conditional on l.Owner owning
// it at l.Counter and l.HandOff still asking.
func (s *TableStore) HandOver(ctx context.Context, l Lease, expires time.Time) (Lease, error) {
	if l.HandOff == "" {
		return Lease{}, fmt.Errorf("singletable: hand over lease %s of %s: nobody asked for it: %w", l.Shard, l.Group, ErrLeaseLost)
	}
	var b expr.Builder
	set := []string{bump(&b), newEpoch(&b), b.Name(attrOwner) + " = " + b.S(l.HandOff), b.Name(attrExpires) + " = " + b.Value(expiresAV(expires))}
	guard := owns(&b, l) + " AND " + b.Name(attrHandOff) + " = " + b.S(l.HandOff)
	return s.update(ctx, "hand over", l, &b, set, []string{b.Name(attrHandOff)}, guard, func(cur Lease, found bool) condwrite.Verdict {
		return leaseVerdict(found, moved(cur, l, l.HandOff, expires), heldAt(cur, l) && cur.HandOff == l.HandOff)
	})
}

// intAttr is item's number attribute a as an int64; 0 when it is missing, not
// a number or not an integer (the stores' own items, written by them).
func intAttr(item map[string]types.AttributeValue, a string) int64 {
	v, _ := item[a].(*types.AttributeValueMemberN)
	if v == nil {
		return 0
	}
	n, _ := strconv.ParseInt(v.Value, 10, 64)
	return n
}
