// Package singletable maps Go structs onto one shared DynamoDB table: the
// single-table design, where many entity types live side by side and their keys
// are built from templates.
//
// # Where things live
//
// One file per concept, its test beside it:
//
//	table.go        Table, TableOptions and the WithX table options, Client, NewTable, CreateTable
//	observe.go      Operation; the observer and logger, one SDK middleware on every call
//	compat.go       errors of old DynamoDB Local releases that name their cause
//	keys.go         key templates: parse, render, extract (Template)
//	tags.go         struct tag parsing
//	register.go     Register: tags parsed and checked once, key templates bound to T's fields
//	disjoint.go     the proof that two entities' primary keys never collide (automata product)
//	render.go       keys rendered from a value; the whole item encoded
//	validate.go     items checked before sending (sizes, numbers, UTF-8); attribute values compared
//	entity.go       Entity[T]: the typed surface (Get, Put, Create, Delete, Key, ParseKey)
//	options.go      options of point reads and writes (Consistent, If)
//	write.go        the write plans: write kinds, Put/Create/Delete planned, conditions, the request
//	pipeline.go     the write pipeline: send, read back, judge; failed conditions explained
//	version.go      version plans: the rule for version 0, conditions, the next version
//	receipt.go      receipts and incarnations: how a write whose answer was lost is judged
//	occ.go          optimistic concurrency: Clobber, Mutate, ConflictError
//	update.go       Update and its options (Set, Remove, Add, Upsert), planned in phases
//	update_ops.go   Append, Prepend, DeleteFromSet, SetIfNotExists; changes at document paths
//	docpath.go      document paths ("address.city", "tags[2]"): parsed, checked against T's types
//	returnvalues.go ReturnOld, Old, Returning: the items writes return
//	fieldtags.go    field tags (createdAt, updatedAt, counter, ttl, default=) and the write hooks
//	wholeitem.go    the whole-item phases: defaults, timestamps, counter, validation; Put's kept fields
//	timestamps.go   createdAt and updatedAt, stamped by the table's clock (WithClock)
//	counter.go      the counter field, moved on the server by every write
//	defaults.go     default= values, parsed at Register
//	validator.go    Validate methods, Validator, FieldValidator, ValidationError
//	ttl.go          the TTL field, EnableTTL, SkipExpired
//	planenv.go      the time and randomness a plan takes (token-derived for TransactWith)
//	batch.go        BatchGet, BatchPut, BatchDelete with unprocessed-item retry
//	tx.go           transactions (Table.Transact, TransactWith and its idempotency token, TxItem)
//	query.go        query options by call kind; Entity.Query and All; preparing and paging a query
//	sortkey.go      sort key conditions (SKEqual..., SK[T]) and the narrowing by a partial key
//	cursor.go       cursors: seal, open, check against their query
//	collection.go   item collections: Table.Query/All, Collection[C], OnUnknown
//	wire.go         the wire path: reads decoded from the response's JSON (internal/wire)
//	wire_default.go whether the wire path is the default (the build tag singletable_sdkdecoding)
//	shard.go        write sharding: shard plans, choosing and locating an item's shard
//	fanout.go       fan-out reads: QueryShards/AllShards, the merge, the fan-out cursor
//	consistency.go  index waits (WaitIndexed, WaitFor), RetryOption
//	backoff.go      Backoff: exponential with full jitter
//	migrate.go      schema versions, migration on read, write-back of what a migration changed
//	sweep.go        Sweep: migrating every item eagerly, in segments
//	sweep_store.go  SweepProgress and SweepStore: a sweep's progress kept in memory or in the table
//	stream.go       ConsumeStream: a table's stream in order per item
//	stream_options.go  StreamOption: Leases, Worker, LeaseTiming, FromStream, batch and poll settings
//	stream_fleet.go the lease leader: takes, renews, balances, hands over and releases shards
//	stream_shard.go reading one shard: records to the railroad, checkpoints in order
//	lease.go        Lease, LeaseStore, MemoryStore: the fleet's leases and checkpoints
//	lease_table.go  TableStore: leases and sweep progress as items of a DynamoDB table
//	decode.go       Table.Decode and DecodeRecord: items and stream records decoded by type
//	railroad.go     Railroad: per-key ordered execution
//	describe.go     Table.Describe: the registered entities as a design (package design)
//	keyshape.go     bound key templates as parts (internal/keyshape), for the design and the reserved-prefix check
//	definition.go   CreateTableInput, Definition and the table-definition edits (StreamView, Provisioned, DeletionProtection, Tags)
//	errors.go       sentinels and typed errors
//	suggest.go      names in messages: "attr (Type.Field)", "did you mean"
//
// Describe each entity once, in struct tags:
//
//	type Order struct {
//	    _          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
//	    CustomerID string    `dynamodbav:"customerId"`
//	    OrderID    string    `dynamodbav:"orderId"`
//	    Status     string    `dynamodbav:"status,omitempty"`
//	    CreatedAt  time.Time `dynamodbav:"createdAt"`
//	}
//
// then register it on a [Table] and use the typed [Entity]:
//
//	table, _ := singletable.NewTable(client, "app", singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
//	orders, err := singletable.Register[Order](table)
//	_, err = orders.Put(ctx, order)
//	o, err := orders.Get(ctx, Order{CustomerID: "c1", OrderID: "o1"})
//	page, err := orders.Query(ctx, Order{Status: "SHIPPED"}, singletable.On("GSI1"), singletable.Descending())
//
// # Tags
//
// The blank field's tags name the entity's discriminator (under the table's type
// attribute, "Type" by default) and give one [Template] per key attribute of the
// table. Fields use the attributevalue package's `dynamodbav` tags; their encoding
// is identical to attributevalue.MarshalMap's, but compiled once per type, and an
// unknown tag option is an error rather than ignored.
//
// Fields may carry a role in a `singletable:"..."` tag: version, shard,
// createdAt, updatedAt (time.Time, or Unix seconds; ",unixms"), counter, ttl (Unix
// seconds), or default=TEXT (the value of a zero field in a whole item written).
// A Validate() error method on T, [Validator] and [FieldValidator] check values
// before they are sent.
//
// # Keys
//
// Placeholders name stored attributes. Formats make keys sort as their values do:
// {n:08} zero-pads integers, {t:time} is a fixed-width UTC time, {t:date},
// {t:unix} and {t:unixms} are coarser, and {t:rev} sorts newest first. A value
// holding the delimiter ('#' by default) is rejected, so two different inputs never
// render the same key and a key can be parsed back ([Entity.ParseKey]). Two
// entities whose primary key templates could render one key are refused by
// [Register] (a batch write, which has no condition, would overwrite the other's
// item): the error names both, a key both render, and a prefix to tell them apart.
// An index
// key with an empty input is left out of the item, which leaves the index (a sparse
// index); an empty input to a primary key is an error. Keys over DynamoDB's limits
// (2048 bytes for a partition key, 1024 for a sort key) and items over 400 KB are
// refused before anything is sent.
//
// # Safety
//
// Every expression is built with placeholders for names and values. Writes carry
// a condition that keeps them off items of another entity type at the same key.
// No method mutates the values handed to it. Cursors are checked against the query
// they resume and can never move it to another partition. Errors wrap the AWS error
// and one of the package's sentinels ([ErrNotFound], [ErrCondition],
// [ErrAlreadyExists], [ErrInvalidKey], [ErrInvalidEntity], [ErrInvalidCursor],
// [ErrInvalidInput], [ErrUnprocessed], [ErrTypeMismatch]) for [errors.Is], and
// typed errors ([*KeyError], [*EntityError], [*ItemError], [*TxError]) for
// [errors.As].
//
// # Concurrency and exactly-once writes
//
// An integer field tagged `singletable:"version"` turns on optimistic locking:
// writes carry a condition on the version held and store the next one; a stale
// write fails with a [*ConflictError]; [Entity.Mutate] reads, applies and retries.
// Each versioned write stores a random receipt, so a write whose response was lost
// is recognised when the item is read back: reported as the success it was, never
// as a conflict, never sent twice. Transactions carry a ClientRequestToken: a
// random one per call, or the caller's ([Table.TransactWith]), so that a
// transaction resent after a crash is applied once.
//
// # Item collections
//
// [Table.Query] and [Table.All] read every entity type in a partition, decoding each
// item by its type attribute; [Collection] decodes a partition into a struct whose
// fields are tagged with the types they hold, such as a customer and its orders, or
// an order and its line items ([SKTree] reads an item and the items under it).
//
// # Write sharding
//
// `singletable:"shards=N"` on the blank field and a `singletable:"shard"` field
// spread a hot partition over N; [Entity.QueryShards] reads them all concurrently
// and merges them in sort key order, with a cursor that resumes every shard.
//
// # Lazy migration
//
// [Migrations] gives an entity a schema history: every read migrates older items in
// memory and writes them back conditionally (sync, async or off); [Entity.Sweep]
// migrates the rest with a parallel, rate-limited, resumable scan, which a fleet
// splits by [SegmentRange] of [Segments], each segment's progress kept in a
// [SweepStore] ([TableStore] for a fleet) so that a stopped sweep resumes per
// segment. The scan is eventually consistent (0.5 RCU per 4 KB of the whole
// table): every write-back is conditional on the item being as read.
//
// # Index waits
//
// Global secondary indexes are eventually consistent. [Entity.WaitIndexed],
// [Entity.WaitUnindexed], [Entity.WaitMoved] and [WaitFor] retry a read with
// exponential backoff and full jitter until it shows what was written.
//
// # Ordered processing
//
// [Railroad] runs tasks one after another per key and concurrently across keys,
// with bounded queues. [ConsumeStream] reads a table's DynamoDB Stream, decodes old
// and new images into registered entities and handles each item's changes in
// order, at least once.
//
// # A fleet of stream consumers
//
// Consumers in many processes share a stream's shards through leases kept in
// DynamoDB ([TableStore], in the single table or a table of its own), as the
// Kinesis Client Library does: one lease per shard with its owner, a counter that
// fences every write (take, renew, checkpoint, release, hand-over are all
// conditional on it and the owner), the checkpoint (compared as a number: it never
// moves back), the parent shards and a finished flag. Each consumer, every renewal
// interval, lists the leases (one consistent Query), renews its own (one write
// each), takes free or expired ones up to its fair share, and, when none is free,
// asks the busiest worker to hand one over; the owner drains the shard's records in
// flight and checkpoints before it hands over, so no shard has two readers. A lease
// expires when its counter has not moved for a lease duration by the observer's own
// clock; a consumer killed without releasing loses its shards after that, and
// another resumes after its checkpoint. A child shard is read only once its parents
// are finished, whoever held them. Duplicates come only from records handled after
// the last checkpoint a consumer wrote before it died or lost the lease, from
// handlers cut short by a stop, and from retries; see [ConsumeStream].
//
// Lambda users get the same decoding from package streamlambda, which turns
// events.DynamoDBEvent records into [StreamRecord] values, runs them on per-key
// rails and reports batch item failures; any handler can decode an item image
// with [Table.Decode] or a record with [Table.DecodeRecord].
//
// # Describing a table
//
// [Table.Describe] builds the design from the registered entities: key templates,
// versioning, sharding and schema versions, the access patterns the templates serve
// (with key conditions and calls), notes on costly designs, and a Mermaid key map.
// The design and its renderings live in package design
// (github.com/singletable/singletable/design): Markdown for a README or a design
// review, a Mermaid key map.
//
// [Table.CreateTableInput] is the CreateTable request [Table.CreateTable] sends
// (CreateTable is built on it), with edits for what the model does not say:
// [StreamView], [Provisioned], [DeletionProtection], [Tags]. [Table.Definition]
// adds the TTL attribute, and package design renders it as a CloudFormation
// AWS::DynamoDB::Table resource (JSON, which NoSQL Workbench imports, or YAML)
// or a Terraform aws_dynamodb_table resource.
//
// # Observability
//
// [WithObserver] ([TableOptions.Observer]) is called after every DynamoDB call the
// table makes, table management included, with its API, entity, latency, SDK
// attempts, consumed capacity and error; [WithLogger] logs the same through
// log/slog. Both ride on one SDK middleware that each call adds through its
// optFns, so a [Client] wrapper must pass optFns on.
//
// # Options
//
// Every option is a value of an option type named for the calls it applies to:
// [TableOption] for [NewTable], [QueryOption] for every query, [ShardQueryOption]
// and [CollectionOption] for fan-out and collection queries (which also take every
// QueryOption), [GetOption], [WriteOption], [UpdateOption], [RetryOption]. An
// option that does not apply to a call does not compile there; the few that the
// types cannot rule out (such as [Partition] in a fan-out query) are refused with
// [ErrInvalidInput] before anything is sent. None is ever ignored.
//
// # Testing
//
// The harness that starts DynamoDB Local for tests lives in a module of its own,
// github.com/singletable/singletable/dynamolocal (an endpoint from DYNAMODB_ENDPOINT,
// else Testcontainers when a Docker API answers, else the DynamoDB Local jar with
// Java; DynamoDB Local 3.3.1 by default), so that importing this package brings
// neither Testcontainers nor Docker's modules into a build. This module's own tests
// only read DYNAMODB_ENDPOINT, which `make test` sets. Pointing a Table at the real
// service needs no change but the client.
package singletable
