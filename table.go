package singletable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Client is the part of the DynamoDB API the package calls. *dynamodb.Client
// satisfies it; tests wrap it to count calls or inject faults.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Index describes a global secondary index: its name and its key attribute names.
// SortKey may be empty for an index keyed by partition only.
type Index struct {
	Name         string
	PartitionKey string
	SortKey      string
}

// TableOptions configures a [Table]. Zero fields take the defaults named below.
type TableOptions struct {
	// PartitionKey and SortKey name the base table's key attributes; default "PK", "SK".
	PartitionKey, SortKey string
	// Indexes are the table's global secondary indexes.
	Indexes []Index
	// TypeAttribute names the attribute holding each item's entity type; default "Type".
	// In struct tags, the entity's discriminator is given under this name too.
	TypeAttribute string
	// Delimiter separates key parts; default '#'. Values of variable width may not contain it.
	Delimiter byte
	// CursorSecret, when set, signs cursors with HMAC-SHA256 so that a client cannot
	// forge one. Without it cursors carry a checksum that catches tampering by
	// accident; either way a cursor is checked against the query it resumes and can
	// never read another partition. Tables that hand cursors to one another (several
	// servers behind a load balancer) must share the secret.
	CursorSecret []byte
	// Backoff is the retry schedule for unprocessed batch items, waits, Mutate and
	// the resending of versioned writes; zero fields take [Backoff]'s defaults.
	Backoff Backoff
	// ReceiptAttribute is the name prefix of the attributes that hold the receipts
	// of versioned writes (see [ErrAmbiguous]); default "_wr", giving "_wr0", "_wr1"...
	ReceiptAttribute string
	// OnOperation, when set, is called after every DynamoDB call the table makes:
	// the API, the entity it was for, latency, SDK attempts, consumed capacity and
	// error. It must be safe for concurrent use and quick. Setting it (or Logger)
	// makes every call ask for its consumed capacity.
	OnOperation func(Operation)
	// Logger, when set, logs every DynamoDB call at Debug level, and failed calls
	// at Warn, with the same fields as OnOperation.
	Logger *slog.Logger
	// SchemaAttribute holds each item's schema version, for entities registered
	// with [Migrations]; default "_schema".
	SchemaAttribute string
	// Random draws the shard of a randomly sharded write; default
	// math/rand/v2.Uint64. It is called from concurrent writes, so it must be safe
	// for concurrent use. Tests make it deterministic.
	Random func() uint64
	// Receipts is how many receipt slots a versioned item keeps, each about 20
	// bytes; default 4. A write whose response was lost can still be recognised
	// after this many later writes.
	Receipts int
}

// WithIndex adds a global secondary index; sortKey may be "".
func WithIndex(name, partitionKey, sortKey string) func(*TableOptions) {
	return func(o *TableOptions) {
		o.Indexes = append(o.Indexes, Index{Name: name, PartitionKey: partitionKey, SortKey: sortKey})
	}
}

// WithKeys names the base table's key attributes (default "PK" and "SK").
func WithKeys(partitionKey, sortKey string) func(*TableOptions) {
	return func(o *TableOptions) { o.PartitionKey, o.SortKey = partitionKey, sortKey }
}

// WithTypeAttribute names the attribute that holds the entity type (default "Type").
func WithTypeAttribute(name string) func(*TableOptions) {
	return func(o *TableOptions) { o.TypeAttribute = name }
}

// WithDelimiter sets the key part delimiter (default '#').
func WithDelimiter(d byte) func(*TableOptions) {
	return func(o *TableOptions) { o.Delimiter = d }
}

// WithCursorSecret signs cursors with HMAC-SHA256 under secret; see [TableOptions.CursorSecret].
func WithCursorSecret(secret []byte) func(*TableOptions) {
	return func(o *TableOptions) { o.CursorSecret = append([]byte(nil), secret...) }
}

// WithRandom sets the random source that draws shards; it must be safe for
// concurrent use. See [TableOptions.Random].
func WithRandom(random func() uint64) func(*TableOptions) {
	return func(o *TableOptions) { o.Random = random }
}

// WithObserver calls f after every DynamoDB call; see [TableOptions.OnOperation].
func WithObserver(f func(Operation)) func(*TableOptions) {
	return func(o *TableOptions) { o.OnOperation = f }
}

// WithLogger logs every DynamoDB call to l; see [TableOptions.Logger].
func WithLogger(l *slog.Logger) func(*TableOptions) {
	return func(o *TableOptions) { o.Logger = l }
}

// WithBackoff sets the retry schedule for unprocessed batch items.
func WithBackoff(b Backoff) func(*TableOptions) {
	return func(o *TableOptions) { o.Backoff = b }
}

// Table is one DynamoDB table shared by many entity types. Create it with
// [NewTable], then [Register] each entity type. A Table is safe for concurrent use;
// registration is expected at start-up but is safe at any time.
type Table struct {
	client Client
	name   string
	nameP  *string // a copy of name for request inputs, which nothing modifies
	opts   TableOptions
	keys   map[string]keyRole // every key attribute name of the base table and indexes

	mu       sync.RWMutex           // protects entities, byGoType and closers
	entities map[string]*entityInfo // by discriminator
	byGoType map[reflect.Type]*entityInfo
	closers  []func() // stop background workers (async write-back)
}

// libraryAttributes lists the attributes the library writes itself, those most
// items carry first: the base table's key and type attributes, the indexes' keys,
// the schema attribute and the receipt slots.
func (t *Table) libraryAttributes() []string {
	attrs := t.fixedAttributes()
	for _, ix := range t.opts.Indexes {
		attrs = append(attrs, ix.PartitionKey)
		if ix.SortKey != "" {
			attrs = append(attrs, ix.SortKey)
		}
	}
	return attrs
}

// fixedAttributes are the library's attributes that no entity recomputes: the
// primary key, type, schema and receipt attributes (index keys are rendered from
// the fields again on every write).
func (t *Table) fixedAttributes() []string {
	attrs := []string{t.opts.PartitionKey, t.opts.SortKey, t.opts.TypeAttribute, t.opts.SchemaAttribute}
	for i := range t.opts.Receipts {
		attrs = append(attrs, t.opts.ReceiptAttribute+strconv.Itoa(i))
	}
	return attrs
}

// namePtr returns the table name for a request input.
func (t *Table) namePtr() *string {
	if t.nameP == nil {
		return aws.String(t.name)
	}
	return t.nameP
}

func (t *Table) addCloser(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closers = append(t.closers, f)
}

// Close stops the table's background work: the queues of asynchronous migration
// write-backs are drained, then their workers exit. The table stays usable for
// everything else (a later migrated read then writes back nothing). Close is
// idempotent and safe to call concurrently with reads.
func (t *Table) Close() {
	t.mu.Lock()
	closers := t.closers
	t.closers = nil
	t.mu.Unlock()
	for _, f := range closers {
		f()
	}
}

// keyRole says which index (""= base table) a key attribute belongs to and whether
// it is the partition or the sort key.
type keyRole struct {
	index     string
	partition bool
}

// NewTable describes a table. It calls nothing; use [Table.CreateTable] to create it.
func NewTable(client Client, name string, opts ...func(*TableOptions)) (*Table, error) {
	o := TableOptions{}
	for _, f := range opts {
		f(&o)
	}
	if o.PartitionKey == "" {
		o.PartitionKey = "PK"
	}
	if o.SortKey == "" {
		o.SortKey = "SK"
	}
	if o.TypeAttribute == "" {
		o.TypeAttribute = "Type"
	}
	if o.Delimiter == 0 {
		o.Delimiter = DefaultDelimiter
	}
	if o.ReceiptAttribute == "" {
		o.ReceiptAttribute = "_wr"
	}
	if o.Receipts <= 0 {
		o.Receipts = 4
	}
	if o.Random == nil {
		o.Random = rand.Uint64
	}
	if o.SchemaAttribute == "" {
		o.SchemaAttribute = "_schema"
	}
	if client == nil {
		return nil, fmt.Errorf("singletable: NewTable %q: nil client: %w", name, ErrInvalidInput)
	}
	if err := checkTableName(name); err != nil {
		return nil, err
	}
	if err := checkDelimiter(o.Delimiter); err != nil {
		return nil, fmt.Errorf("singletable: NewTable %q: %w", name, err)
	}
	if o.OnOperation != nil || o.Logger != nil {
		client = observed{Client: client, t: nil}
	}
	t := &Table{
		client:   client,
		name:     name,
		nameP:    aws.String(name),
		opts:     o,
		keys:     map[string]keyRole{},
		entities: map[string]*entityInfo{},
		byGoType: map[reflect.Type]*entityInfo{},
	}
	if ob, ok := t.client.(observed); ok {
		ob.t = t
		t.client = ob
	}
	addKey := func(attr string, role keyRole) error {
		if attr == "" {
			return fmt.Errorf("singletable: NewTable %q: index %q has no partition key: %w", name, role.index, ErrInvalidInput)
		}
		if attr == o.TypeAttribute {
			return fmt.Errorf("singletable: NewTable %q: key attribute %q is also the type attribute: %w", name, attr, ErrInvalidInput)
		}
		if prev, dup := t.keys[attr]; dup && (prev.partition != role.partition) {
			return fmt.Errorf("singletable: NewTable %q: attribute %q is a partition key in one index and a sort key in another: %w", name, attr, ErrInvalidInput)
		}
		if _, dup := t.keys[attr]; !dup {
			t.keys[attr] = role
		}
		return nil
	}
	if o.PartitionKey == o.SortKey {
		return nil, fmt.Errorf("singletable: NewTable %q: partition and sort key are both %q: %w", name, o.PartitionKey, ErrInvalidInput)
	}
	if err := addKey(o.PartitionKey, keyRole{partition: true}); err != nil {
		return nil, err
	}
	if err := addKey(o.SortKey, keyRole{}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, ix := range o.Indexes {
		if ix.Name == "" || seen[ix.Name] {
			return nil, fmt.Errorf("singletable: NewTable %q: index name %q is empty or repeated: %w", name, ix.Name, ErrInvalidInput)
		}
		seen[ix.Name] = true
		if ix.PartitionKey == o.PartitionKey && ix.SortKey == o.SortKey {
			return nil, fmt.Errorf("singletable: NewTable %q: index %q repeats the base table's keys: %w", name, ix.Name, ErrInvalidInput)
		}
		if err := addKey(ix.PartitionKey, keyRole{index: ix.Name, partition: true}); err != nil {
			return nil, err
		}
		if ix.SortKey != "" {
			if err := addKey(ix.SortKey, keyRole{index: ix.Name}); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

func checkTableName(name string) error {
	ok := len(name) >= 3 && len(name) <= 255
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("singletable: table name %q must be 3-255 characters of [a-zA-Z0-9_.-]: %w", name, ErrInvalidInput)
	}
	return nil
}

// Name returns the table name.
func (t *Table) Name() string { return t.name }

// Client returns the client the table calls: the one given to [NewTable], wrapped,
// when OnOperation or Logger is set, to report every call.
func (t *Table) Client() Client { return t.client }

// Options returns a copy of the table's options, defaults filled in.
func (t *Table) Options() TableOptions {
	o := t.opts
	o.Indexes = append([]Index(nil), o.Indexes...)
	o.CursorSecret = append([]byte(nil), o.CursorSecret...)
	return o
}

// index returns the named index, or the base table's keys for "".
func (t *Table) index(name string) (Index, bool) {
	if name == "" {
		return Index{PartitionKey: t.opts.PartitionKey, SortKey: t.opts.SortKey}, true
	}
	for _, ix := range t.opts.Indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return Index{}, false
}

// CreateTable calls CreateTable for the table as described: string key attributes,
// on-demand billing, every index projecting all attributes; then waits (DescribeTable)
// until the table is ACTIVE or ctx ends. Each edit may adjust the input before it is
// sent, for example to enable a stream.
func (t *Table) CreateTable(ctx context.Context, edits ...func(*dynamodb.CreateTableInput)) error {
	attrs := make([]types.AttributeDefinition, 0, len(t.keys))
	for _, name := range sortedKeys(t.keys) {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS})
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(t.name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema:            keySchema(t.opts.PartitionKey, t.opts.SortKey),
	}
	for _, ix := range t.opts.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PartitionKey, ix.SortKey),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	for _, e := range edits {
		e(in)
	}
	if _, err := t.client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("singletable: CreateTable %s: %w", t.name, err)
	}
	return t.waitStatus(ctx, func(out *dynamodb.DescribeTableOutput, err error) (bool, error) {
		if err != nil {
			var nf *types.ResourceNotFoundException
			if errors.As(err, &nf) {
				return false, nil
			}
			return false, err
		}
		return out.Table != nil && out.Table.TableStatus == types.TableStatusActive, nil
	})
}

// DeleteTable calls DeleteTable and waits until the table is gone. A table that does
// not exist is not an error. Meant for tests.
func (t *Table) DeleteTable(ctx context.Context) error {
	_, err := t.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.name)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("singletable: DeleteTable %s: %w", t.name, err)
	}
	return t.waitStatus(ctx, func(_ *dynamodb.DescribeTableOutput, err error) (bool, error) {
		if errors.As(err, &nf) {
			return true, nil
		}
		return false, err
	})
}

// waitStatus polls DescribeTable until done says so, with a short fixed interval.
func (t *Table) waitStatus(ctx context.Context, done func(*dynamodb.DescribeTableOutput, error) (bool, error)) error {
	for {
		out, err := t.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
		if ok, derr := done(out, err); derr != nil {
			return fmt.Errorf("singletable: DescribeTable %s: %w", t.name, derr)
		} else if ok {
			return nil
		}
		if err := sleepContext(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("singletable: waiting for table %s: %w", t.name, err)
		}
	}
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
	if sk != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	return ks
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// register adds an entity, refusing a discriminator or Go type seen before and key
// templates that could render the same primary key as another entity's.
func (t *Table) register(info *entityInfo) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, dup := t.entities[info.discriminator]; dup {
		return &EntityError{Entity: info.name, Field: t.opts.TypeAttribute, Reason: "discriminator " + strconv.Quote(info.discriminator) + " is already used by " + prev.name}
	}
	if _, dup := t.byGoType[info.goType]; dup {
		return &EntityError{Entity: info.name, Reason: "type is already registered on table " + t.name}
	}
	if err := t.checkReserved(info); err != nil {
		return err
	}
	for _, other := range t.entities {
		if sameShape(info.pk.tmpl, other.pk.tmpl) && sameShape(info.sk.tmpl, other.sk.tmpl) {
			return &EntityError{Entity: info.name, Field: t.opts.SortKey, Reason: "key templates " + strconv.Quote(info.pk.tmpl.String()) + " / " + strconv.Quote(info.sk.tmpl.String()) +
				" collide with " + other.name + "'s " + strconv.Quote(other.pk.tmpl.String()) + " / " + strconv.Quote(other.sk.tmpl.String()) + ": the two types could render the same key"}
		}
	}
	t.entities[info.discriminator] = info
	t.byGoType[info.goType] = info
	return nil
}

// sameShape reports whether two templates have the same literal text and formats
// in the same places, so that they can render the same key.
func sameShape(a, b *Template) bool {
	if len(a.segs) != len(b.segs) {
		return false
	}
	for i := range a.segs {
		x, y := a.segs[i], b.segs[i]
		if (x.name == "") != (y.name == "") || x.literal != y.literal || x.format != y.format || x.width != y.width {
			return false
		}
	}
	return true
}
