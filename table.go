package singletable

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/keytmpl"
	"github.com/singletable/singletable/internal/tabledef"
	"github.com/singletable/singletable/internal/wrap"
)

// Index describes a secondary index: its name and its key attribute names.
// SortKey may be empty for a global index keyed by partition only.
type Index struct {
	Name         string
	PartitionKey string
	SortKey      string
	// Local marks a local secondary index ([WithLocalIndex]): its PartitionKey is
	// the table's.
	Local bool
	// Projection is what the index holds besides keys: ALL ("" too), KEYS_ONLY or
	// INCLUDE NonKeyAttributes (see [ProjectKeysOnly], [ProjectInclude]).
	Projection       types.ProjectionType
	NonKeyAttributes []string
	// PartitionAttrs and SortAttrs are a native index's key ([WithNativeIndex],
	// multiattr.go): the items' own attributes, in order. PartitionKey and
	// SortKey are then "".
	PartitionAttrs, SortAttrs []KeyAttribute
}

// TableOptions configures a [Table]. Zero fields take the defaults named below.
type TableOptions struct {
	// PartitionKey and SortKey name the base table's key attributes; default "PK", "SK".
	PartitionKey, SortKey string
	// NoSortKey makes the table's primary key its partition key alone (SortKey is
	// then ""); see [WithKeys].
	NoSortKey bool
	// KeyTypes gives the type of key attributes that are not strings: number
	// (types.ScalarAttributeTypeN) or binary (B); see [WithKeyType].
	KeyTypes map[string]types.ScalarAttributeType
	// Indexes are the table's secondary indexes, global and local.
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
	// Observer, when set, is called after every DynamoDB call the table makes,
	// table management included: the API, the entity it was for, latency, SDK
	// attempts, consumed capacity and error. It must be safe for concurrent use
	// and quick. Setting it (or Logger) makes every call that can ask for its
	// consumed capacity ask for it. It sees the calls that reach the SDK, through
	// the optFns each call passes (see [Client]).
	Observer func(Operation)
	// Logger, when set, logs every DynamoDB call at Debug level, and failed calls
	// at Warn, with the same fields as Observer.
	Logger *slog.Logger
	// Tracer, when set, receives a span for each of the table's logical
	// operations (a Put, a Mutate and each of its attempts, a fan-out and each
	// partition read, a Transact, a batch), one below it for each DynamoDB call,
	// and events for lost answers and their resolution and for unprocessed batch
	// items; see [Tracer]. Like Observer it works with any client and makes calls
	// ask for their consumed capacity. The module
	// github.com/singletable/singletable/otel implements it with OpenTelemetry.
	Tracer Tracer
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
	// IncarnationAttribute holds each item's incarnation id, 32 hex digits written
	// by whichever write creates the item; default "_inc". See [ErrAmbiguous].
	IncarnationAttribute string
	// WireDecoding, when false, makes reads decode items the SDK's way (its
	// attribute values, then the codec); true: items are decoded straight from
	// the response's JSON where they can be; nil: so where the client allows it
	// (see [ClientTraits]). See [WithWireDecoding].
	WireDecoding *bool
	// Clock gives the time of createdAt and updatedAt fields and of TTL checks
	// (timestamps.go, ttl.go); default time.Now. It is called from concurrent
	// writes, so it must be safe for concurrent use. Tests make it deterministic.
	Clock func() time.Time
	// ClientTraits, when set, declares what the table's client does with optFns
	// and outputs, over what the client declares itself; see [ClientTraits] and
	// [WithClientTraits].
	ClientTraits *ClientTraits
	// TTLAttribute names the table's TTL attribute (ttl.go), which CreateTable and
	// [Table.EnableTTL] turn on; default: the attribute of the registered
	// entities' `singletable:"ttl"` fields.
	TTLAttribute string
	// IDSource is the randomness of generated ids (`singletable:"generate=..."`,
	// generate.go; [WithIDSource]); default crypto/rand.Reader. It is read from
	// concurrent writes, so it must be safe for concurrent use. Tests make it
	// deterministic.
	IDSource io.Reader
}

type tableOptionFunc func(*TableOptions) error

func (f tableOptionFunc) applyTable(o *TableOptions) error { return f(o) }

// WithIndex adds a global secondary index; sortKey may be "". It projects every
// attribute unless an option says otherwise ([ProjectKeysOnly], [ProjectInclude]).
func WithIndex(name, partitionKey, sortKey string, opts ...IndexOption) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		ix := Index{Name: name, PartitionKey: partitionKey, SortKey: sortKey}
		if err := applyIndexOptions(&ix, opts); err != nil { // indexes.go
			return err
		}
		o.Indexes = append(o.Indexes, ix)
		return nil
	})
}

// WithKeys names the base table's key attributes (default "PK" and "SK"). A
// sortKey of "" makes a table keyed by its partition key alone (an existing
// table's, typically): entities then give a template for the partition key only.
func WithKeys(partitionKey, sortKey string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		o.PartitionKey, o.SortKey, o.NoSortKey = partitionKey, sortKey, sortKey == ""
		return nil
	})
}

// WithTypeAttribute names the attribute that holds the entity type (default "Type").
func WithTypeAttribute(name string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.TypeAttribute = name; return nil })
}

// WithDelimiter sets the key part delimiter (default '#').
func WithDelimiter(d byte) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Delimiter = d; return nil })
}

// WithCursorSecret signs cursors with HMAC-SHA256 under secret; see
// [TableOptions.CursorSecret]. secret is copied.
func WithCursorSecret(secret []byte) TableOption {
	secret = append([]byte(nil), secret...)
	return tableOptionFunc(func(o *TableOptions) error {
		o.CursorSecret = append([]byte(nil), secret...)
		return nil
	})
}

// WithBackoff sets the retry schedule for unprocessed batch items, waits, Mutate
// and resent versioned writes; see [TableOptions.Backoff].
func WithBackoff(b Backoff) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Backoff = b; return nil })
}

// WithObserver calls f after every DynamoDB call the table makes; see
// [TableOptions.Observer].
func WithObserver(f func(Operation)) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Observer = f; return nil })
}

// WithLogger logs every DynamoDB call to l; see [TableOptions.Logger].
func WithLogger(l *slog.Logger) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Logger = l; return nil })
}

// WithTracer reports the table's logical operations, their steps and DynamoDB
// calls to tr; see [TableOptions.Tracer].
func WithTracer(tr Tracer) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Tracer = tr; return nil })
}

// WithReceipts sets how many receipt slots a versioned item keeps (at least 1);
// see [TableOptions.Receipts].
func WithReceipts(n int) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		if n < 1 {
			return fmt.Errorf("WithReceipts(%d): want at least 1: %w", n, ErrInvalidInput)
		}
		o.Receipts = n
		return nil
	})
}

// WithReceiptAttribute sets the name prefix of the receipt attributes; see
// [TableOptions.ReceiptAttribute].
func WithReceiptAttribute(prefix string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.ReceiptAttribute = prefix; return nil })
}

// WithIncarnationAttribute names the attribute that holds each item's
// incarnation id; see [TableOptions.IncarnationAttribute].
func WithIncarnationAttribute(name string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.IncarnationAttribute = name; return nil })
}

// WithSchemaAttribute names the attribute that holds each item's schema version;
// see [TableOptions.SchemaAttribute].
func WithSchemaAttribute(name string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.SchemaAttribute = name; return nil })
}

// WithRandom sets the random source that draws the shards of randomly sharded
// writes, for output that repeats from run to run; it must be safe for concurrent
// use. See [TableOptions.Random].
func WithRandom(random func() uint64) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Random = random; return nil })
}

// WithClock sets the clock of timestamps and TTL checks; see [TableOptions.Clock].
func WithClock(now func() time.Time) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.Clock = now; return nil })
}

// WithLocalIndex adds a local secondary index: it shares the table's partition
// key and sorts each partition by another attribute, sortKey. An entity puts its
// items in it with a template for sortKey in its tags, as for a global index
// (the partition is the entity's own); [On] queries it. Unlike a global index it
// can be read strongly consistently ([Consistent], at the base table's price),
// and a projected read of an attribute it does not hold fetches it from the table
// (another read per item). It must be created with the table (by
// [Table.CreateTable]); DynamoDB allows 5 per table, only on tables with a sort
// key, and limits every partition key value of such a table to 10 GB of items.
func WithLocalIndex(name, sortKey string, opts ...IndexOption) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		ix := Index{Name: name, SortKey: sortKey, Local: true}
		if err := applyIndexOptions(&ix, opts); err != nil {
			return err
		}
		o.Indexes = append(o.Indexes, ix)
		return nil
	})
}

// WithKeyType declares that key attribute attr (of the base table or of an
// index) holds numbers (types.ScalarAttributeTypeN) or binary values
// (types.ScalarAttributeTypeB) rather than strings (S, the default). Templates of
// such an attribute must be a single placeholder of an integer field (N) or of a
// []byte field (B); [Table.CreateTable] declares the attribute with that type.
func WithKeyType(attr string, typ types.ScalarAttributeType) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		switch typ {
		case types.ScalarAttributeTypeS, types.ScalarAttributeTypeN, types.ScalarAttributeTypeB:
		default:
			return fmt.Errorf("WithKeyType(%q, %q): want S, N or B: %w", attr, typ, ErrInvalidInput)
		}
		if o.KeyTypes == nil {
			o.KeyTypes = map[string]types.ScalarAttributeType{}
		}
		o.KeyTypes[attr] = typ
		return nil
	})
}

// WithTTLAttribute names the table's TTL attribute; see [TableOptions.TTLAttribute].
// An entity's ttl field must then be stored under this name.
func WithTTLAttribute(name string) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		if name == "" {
			return fmt.Errorf("WithTTLAttribute(\"\"): %w", ErrInvalidInput)
		}
		o.TTLAttribute = name
		return nil
	})
}

// WithClientTraits declares the traits of the table's client, over whatever the
// client declares itself ([TraitsClient]); see [ClientTraits].
func WithClientTraits(tr ClientTraits) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.ClientTraits = &tr; return nil })
}

// WithIDSource sets the randomness of generated ids; see [TableOptions.IDSource].
// r must be safe for concurrent use.
func WithIDSource(r io.Reader) TableOption {
	return tableOptionFunc(func(o *TableOptions) error {
		if r == nil {
			return fmt.Errorf("WithIDSource(nil): %w", ErrInvalidInput)
		}
		o.IDSource = r
		return nil
	})
}

// WithNativeIndex adds a global secondary index keyed by the items' own
// attributes (DynamoDB's multi-attribute keys): no template, nothing rendered,
// nothing recomputed on Update. An item is in it when it stores every attribute
// of key (see the package's native index notes in docs/modelling.md). It projects
// every attribute unless an option says otherwise ([ProjectKeysOnly],
// [ProjectInclude]). [NewTable] refuses, with [ErrInvalidInput] naming the
// index and attribute, what DynamoDB would refuse: no or more than 4 partition
// attributes, more than 4 sort attributes, an attribute repeated, a type other
// than S, N or B, an attribute given two types on one table; and an attribute
// the library writes itself (keys of the table or of templated indexes, type,
// schema, receipt and incarnation attributes). key is copied.
func WithNativeIndex(name string, key NativeKey, opts ...IndexOption) TableOption {
	part, sort := slices.Clone(key.Partition), slices.Clone(key.Sort)
	return tableOptionFunc(func(o *TableOptions) error {
		ix := Index{Name: name, PartitionAttrs: slices.Clone(part), SortAttrs: slices.Clone(sort)}
		for i := range ix.PartitionAttrs {
			ix.PartitionAttrs[i].Type = scalarOrS(ix.PartitionAttrs[i].Type)
		}
		for i := range ix.SortAttrs {
			ix.SortAttrs[i].Type = scalarOrS(ix.SortAttrs[i].Type)
		}
		if len(ix.PartitionAttrs) == 0 {
			return fmt.Errorf("WithNativeIndex(%q): no partition attribute: a native index needs 1 to 4: %w", name, ErrInvalidInput)
		}
		if err := applyIndexOptions(&ix, opts); err != nil { // indexes.go
			return err
		}
		o.Indexes = append(o.Indexes, ix)
		return nil
	})
}

// WithWireDecoding turns the wire path of reads on or off (see
// [TableOptions.WireDecoding]). By default it is on where the table's client is
// known to apply SDK middleware and return the SDK's outputs unchanged: a
// *dynamodb.Client, or a client that declares both [ClientTraits]; through any
// other client (DAX's, a wrapper that edits outputs) reads decode the output's
// items, so what the client returns is what is read. On through a client not
// known to allow it is refused by [NewTable]. Off, every item is decoded from the
// SDK's attribute values, as the SDK's deserializer builds them. Through such a
// client the results are the same; the wire path costs less CPU and allocates
// less, and fails an attempt whose body does not match its X-Amz-Crc32 (the SDK
// retries it) where the SDK's path only logs it.
func WithWireDecoding(on bool) TableOption {
	return tableOptionFunc(func(o *TableOptions) error { o.WireDecoding = &on; return nil })
}

// Table is one DynamoDB table shared by many entity types. Create it with
// [NewTable], then [Register] each entity type. A Table is safe for concurrent use;
// registration is expected at start-up but is safe at any time.
type Table struct {
	client ItemClient   // what the library calls: user, hinted (compat.go) and observed when observing
	user   ItemClient   // the client given to NewTable
	traits ClientTraits // what user is known to do with optFns and outputs (client.go)
	name   string
	nameP  *string // a copy of name for request inputs, which nothing modifies
	opts   TableOptions
	keys   map[string]keyRole // every key attribute name of the base table and indexes

	mu       sync.RWMutex           // protects entities, byGoType and closers
	entities map[string]*entityInfo // by discriminator
	byGoType map[reflect.Type]*entityInfo
	closers  []func() // stop background workers (async write-back)

	// failedItems says whether this DynamoDB answers a failed condition with the
	// item (ReturnValuesOnConditionCheckFailure): 0 not known yet, 1 yes, -1 no
	// (DynamoDB Local before 2.x). Learnt from the answers, never from a version.
	failedItems atomic.Int32
}

// refused returns the error of a call (op) on a nil or zero Table, which only
// NewTable makes usable; nil for a Table NewTable made. Every method of Table
// that can fail, and Register and NewCollection, ask it first, so that such a
// Table is an error naming the mistake, never a panic.
func (t *Table) refused(op string) error {
	switch {
	case t == nil:
		return errorf("%s: the *Table is nil (was the error of NewTable ignored?): %w", op, ErrInvalidInput)
	case t.client == nil:
		return errorf("%s: the Table is a zero value; make it with NewTable: %w", op, ErrInvalidInput)
	}
	return nil
}

// libraryAttributes lists the attributes the library writes itself, those most
// items carry first: the base table's key and type attributes, the indexes' keys,
// the schema attribute and the receipt slots.
func (t *Table) libraryAttributes() []string {
	attrs := t.fixedAttributes()
	for _, ix := range t.opts.Indexes {
		if ix.Native() { // its attributes are the entities' own (multiattr.go)
			continue
		}
		attrs = append(attrs, ix.PartitionKey)
		if ix.SortKey != "" {
			attrs = append(attrs, ix.SortKey)
		}
	}
	return attrs
}

// checkOwnAttributes refuses options that give two of the library's own
// attributes one name (the type attribute named "PK", the schema attribute named
// like a receipt slot, the TTL attribute a key): each would overwrite the other
// on every write.
func (t *Table) checkOwnAttributes() error {
	o := &t.opts
	err := tabledef.CheckOwn(sortedKeys(t.keys), []tabledef.Own{
		{What: "the type attribute (WithTypeAttribute)", Name: o.TypeAttribute},
		{What: "the schema attribute (WithSchemaAttribute)", Name: o.SchemaAttribute},
		{What: "the incarnation attribute (WithIncarnationAttribute)", Name: o.IncarnationAttribute},
		{What: "the TTL attribute (WithTTLAttribute)", Name: o.TTLAttribute},
	}, t.isReceiptAttr, o.ReceiptAttribute)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidInput)
	}
	return nil
}

// fixedAttributes are the library's attributes that no entity recomputes: the
// primary key, type, schema and receipt attributes (index keys are rendered from
// the fields again on every write).
func (t *Table) fixedAttributes() []string {
	attrs := []string{t.opts.PartitionKey, t.opts.SortKey, t.opts.TypeAttribute, t.opts.SchemaAttribute, t.opts.IncarnationAttribute, t.writeReceiptAttr()}
	if t.opts.NoSortKey {
		attrs = slices.Delete(attrs, 1, 2)
	}
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
	if t == nil {
		return
	}
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
// Options apply in order; an option's error, or options that describe an invalid
// table, fail it with [ErrInvalidInput].
//
// client may be any [ItemClient]: a *dynamodb.Client, DAX's client, a wrapper;
// see ItemClient for which get the wire path and SDK middleware.
func NewTable(client ItemClient, name string, opts ...TableOption) (*Table, error) {
	if client == nil {
		return nil, errorf("NewTable %q: nil client: %w", name, ErrInvalidInput)
	}
	if err := checkTableName(name); err != nil {
		return nil, err
	}
	var o TableOptions
	for i, opt := range opts {
		if opt == nil {
			return nil, errorf("NewTable %q: option %d is nil: %w", name, i+1, ErrInvalidInput)
		}
		if err := opt.applyTable(&o); err != nil {
			return nil, errorf("NewTable %q: %w", name, err)
		}
	}
	o.fillDefaults()
	if err := keyError(keytmpl.CheckDelimiter(o.Delimiter)); err != nil {
		return nil, errorf("NewTable %q: %w", name, err)
	}
	traits := clientTraits(&o, client) // client.go
	if o.WireDecoding != nil && *o.WireDecoding && !traits.wire() {
		return nil, errorf("NewTable %q: WithWireDecoding(true): the client (%T) is not known to apply SDK middleware (APIOptions) and return the SDK's outputs unchanged, which the wire path needs; declare it with WithClientTraits or TraitsClient, or leave the option out: %w", name, client, ErrInvalidInput)
	}
	t := &Table{
		user:     client,
		traits:   traits,
		name:     name,
		nameP:    aws.String(name),
		opts:     o,
		keys:     map[string]keyRole{},
		entities: map[string]*entityInfo{},
		byGoType: map[reflect.Type]*entityInfo{},
	}
	// Every call runs through sendItem (compat.go): calls under Explain are
	// recorded, not sent, and errors of old DynamoDB Local releases name their
	// cause; then through observed (observe.go) when the table reports calls.
	t.client = wrap.Items{C: client, Around: t.sendItem}
	if t.observing() {
		t.client = wrap.Items{C: t.client, Around: t.observed}
	}
	if err := t.addKeys(); err != nil {
		return nil, errorf("NewTable %q: %w", name, err)
	}
	if err := t.checkOwnAttributes(); err != nil {
		return nil, errorf("NewTable %q: %w", name, err)
	}
	return t, nil
}

// fillDefaults sets the documented default of every zero field.
func (o *TableOptions) fillDefaults() {
	if o.PartitionKey == "" {
		o.PartitionKey = "PK"
	}
	if o.SortKey == "" && !o.NoSortKey {
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
	if o.IncarnationAttribute == "" {
		o.IncarnationAttribute = "_inc"
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// addKeys records the key attributes of the base table and every index, refusing
// a layout DynamoDB or the library cannot work with.
func (t *Table) addKeys() error {
	o := &t.opts
	if o.PartitionKey == o.SortKey {
		return fmt.Errorf("partition and sort key are both %q: %w", o.PartitionKey, ErrInvalidInput)
	}
	if err := o.checkLocalIndexes(); err != nil { // indexes.go
		return err
	}
	if err := t.addKey(o.PartitionKey, keyRole{partition: true}); err != nil {
		return err
	}
	if !o.NoSortKey {
		if err := t.addKey(o.SortKey, keyRole{}); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, ix := range o.Indexes {
		if ix.Name == "" || seen[ix.Name] {
			return fmt.Errorf("index name %q is empty or repeated: %w", ix.Name, ErrInvalidInput)
		}
		seen[ix.Name] = true
		if ix.Native() { // checked once every other key is recorded (multiattr.go)
			continue
		}
		if ix.PartitionKey == o.PartitionKey && ix.SortKey == o.SortKey && !ix.Local {
			return fmt.Errorf("index %q repeats the base table's keys: %w", ix.Name, ErrInvalidInput)
		}
		if err := t.addKey(ix.PartitionKey, keyRole{index: ix.Name, partition: true}); err != nil {
			return err
		}
		if ix.SortKey != "" {
			if err := t.addKey(ix.SortKey, keyRole{index: ix.Name}); err != nil {
				return err
			}
		}
	}
	if err := t.checkNativeIndexes(); err != nil { // multiattr.go
		return err
	}
	if err := t.checkProjections(); err != nil { // indexes.go
		return err
	}
	return t.checkKeyTypes() // keytypes.go
}

// addKey records one key attribute in its role.
func (t *Table) addKey(attr string, role keyRole) error {
	if attr == "" {
		return fmt.Errorf("index %q has no partition key: %w", role.index, ErrInvalidInput)
	}
	if attr == t.opts.TypeAttribute {
		return fmt.Errorf("key attribute %q is also the type attribute: %w", attr, ErrInvalidInput)
	}
	// One attribute may be a partition key in one index and a sort key in
	// another: the inverted index of an adjacency list (partition key SK, sort
	// key PK) is the best-known case. Each index reads the attribute in its own
	// role; the collision proof (disjoint.go) is the base table's alone.
	if _, dup := t.keys[attr]; !dup {
		t.keys[attr] = role
	}
	return nil
}

func checkTableName(name string) error {
	ok := len(name) >= 3 && len(name) <= 255
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			ok = false
		}
	}
	if !ok {
		return errorf("table name %q must be 3-255 characters of [a-zA-Z0-9_.-]: %w", name, ErrInvalidInput)
	}
	return nil
}

// Name returns the table name.
func (t *Table) Name() string {
	if t == nil {
		return ""
	}
	return t.name
}

// Client returns the client given to [NewTable], as it was given when it is a
// [Client]; a client without the table management methods comes back with
// those it lacks failing with [ErrInvalidInput]. Calls made through it directly
// are not the table's, and are not observed.
func (t *Table) Client() Client {
	if t == nil || t.user == nil {
		return nil
	}
	return asClient(t.user)
}

// Options returns a copy of the table's options, defaults filled in.
func (t *Table) Options() TableOptions {
	if t == nil {
		return TableOptions{}
	}
	o := t.opts
	o.Indexes = append([]Index(nil), o.Indexes...)
	for i := range o.Indexes {
		o.Indexes[i].NonKeyAttributes = slices.Clone(o.Indexes[i].NonKeyAttributes)
		o.Indexes[i].PartitionAttrs = slices.Clone(o.Indexes[i].PartitionAttrs)
		o.Indexes[i].SortAttrs = slices.Clone(o.Indexes[i].SortAttrs)
	}
	o.KeyTypes = maps.Clone(o.KeyTypes)
	o.CursorSecret = append([]byte(nil), o.CursorSecret...)
	if o.WireDecoding != nil {
		on := *o.WireDecoding
		o.WireDecoding = &on
	}
	if o.ClientTraits != nil {
		tr := *o.ClientTraits
		o.ClientTraits = &tr
	}
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// register adds an entity, refusing a discriminator or Go type seen before and key
// templates that could render the same primary key as another entity's (see
// checkDisjoint).
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
	others := make([]*entityInfo, 0, len(t.entities))
	for _, other := range t.entities {
		others = append(others, other)
	}
	slices.SortFunc(others, func(a, b *entityInfo) int { return strings.Compare(a.discriminator, b.discriminator) })
	for _, other := range others {
		if err := t.checkDisjoint(info, other); err != nil {
			return err
		}
	}
	t.entities[info.discriminator] = info
	t.byGoType[info.goType] = info
	return nil
}
