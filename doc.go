// Package singletable maps Go structs onto one shared DynamoDB table: the
// single-table design, where many entity types live side by side and their keys
// are built from templates. Describe each entity once, in struct tags, and get
// rendered keys, typed reads and writes, item collections decoded by type,
// optimistic locking that survives lost responses, write sharding, lazy
// migration, index waits and per-key ordered stream processing, on any
// DynamoDB client of aws-sdk-go-v2.
//
// Describe an entity:
//
//	type Order struct {
//	    _          struct{}  `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}" GSI1PK:"STATUS#{status}" GSI1SK:"{createdAt:time}#{orderId}"`
//	    CustomerID string    `dynamodbav:"customerId"`
//	    OrderID    string    `dynamodbav:"orderId"`
//	    Status     string    `dynamodbav:"status,omitempty"`
//	    CreatedAt  time.Time `dynamodbav:"createdAt"`
//	    Version    int64     `dynamodbav:"version" singletable:"version"`
//	}
//
// then register it on a [Table] and use the typed [Entity]:
//
//	table, err := singletable.NewTable(dynamodb.NewFromConfig(cfg), "app",
//	    singletable.WithIndex("GSI1", "GSI1PK", "GSI1SK"))
//	orders, err := singletable.Register[Order](table) // every tag checked once
//	err = table.EnsureTable(ctx)                        // created when missing, else checked against the model
//
//	o, err := orders.Put(ctx, Order{CustomerID: "c1", OrderID: "o1", Status: "NEW", CreatedAt: time.Now()})
//	o, err = orders.Get(ctx, Order{CustomerID: "c1", OrderID: "o1"})     // the key's inputs are enough
//	o, err = orders.Update(ctx, o, singletable.Set("status", "SHIPPED")) // GSI1 keys recomputed, version checked
//	page, err := orders.Query(ctx, Order{Status: "SHIPPED"}, singletable.On("GSI1"), singletable.Descending())
//
// The Examples below run each of these calls against DynamoDB Local.
//
// # Guides
//
// This documentation is the reference; the guides in the repository's docs
// folder (https://github.com/singletable/singletable/tree/main/docs) explain each
// area with the tests and commands that prove its claims: modelling.md (tags, key
// templates, key schemas, indexes, Describe), reads.md, writes.md,
// consistency-and-safety.md (optimistic locking, lost responses, bad input, index
// waits), streams.md (ordered processing, a fleet of consumers, Lambda, sweeps),
// testing.md (DynamoDB Local and its harness), performance.md, comparison.md and
// architecture.md (a map of every file and package).
//
// # Where things live
//
// This package is the modelling core, one file per concept: table.go (Table and
// every table option), entity.go (Entity), keys.go (Template), collection.go,
// occ.go, shard.go, migrate.go, consistency.go (index waits), railroad.go; every
// read goes through the read path (readpath.go), and writes are planned by the
// write planner (planner.go), which runs each feature's plan (version.go,
// timestamps.go, unique.go...) once. Package stream and package streamlambda
// process DynamoDB Streams, package design renders the model, and the modules
// otel and dynamolocal hold the OpenTelemetry tracer and the DynamoDB Local
// harness. The machinery below the root is internal: the codec and the wire
// decoder, key templates, expressions, cursors, the client boundary, the
// fan-out, sweep and count engines, the update planner, unique guards, native
// index keys, id generation, Explain's rendering, the railroad's scheduler.
//
// # Tags
//
// The blank field's tags name the entity's discriminator (under the table's type
// attribute, "Type" by default) and give one [Template] per key attribute of the
// table. Fields use the attributevalue package's `dynamodbav` tags; their encoding
// is identical to attributevalue.MarshalMap's, but compiled once per type, and an
// unknown tag option is an error rather than ignored.
//
// A field may carry one role in a `singletable:"..."` tag:
//
//	version             optimistic locking, an integer field (Concurrency, below)
//	shard               the write shard, an integer field (Write sharding, below)
//	createdAt           set when the item is created (time.Time, or Unix seconds)
//	updatedAt           set by every write but Delete; createdAt,unixms and
//	                    updatedAt,unixms store Unix milliseconds
//	counter             incremented by every write to an existing item
//	ttl                 the item's expiry in Unix seconds (DynamoDB's TTL attribute)
//	ttl,from=A,after=D  the same, derived from the time field A plus the duration
//	                    D (a Go duration, or whole days: 30d)
//	unique              no two items of the entity hold the value (guard items)
//	default=TEXT        the value of a zero field in a whole item written (the
//	                    rest of the tag, commas included)
//	generate=ulid       a new id in a zero string field before keys are rendered;
//	                    or generate=uuidv7
//
// The blank field's `singletable:"..."` tag takes the entity's options, joined by
// commas:
//
//	shards=N            spread each partition over N shards (Write sharding, below)
//	shardBy=a+b         the shard is a hash of these primary key inputs, not random
//	unique=a+b          no two items of the entity hold these values together
//
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
// and one of the package's sentinels for [errors.Is]: [ErrNotFound],
// [ErrCondition], [ErrAlreadyExists], [ErrInvalidKey], [ErrInvalidEntity],
// [ErrInvalidCursor], [ErrInvalidInput], [ErrUnprocessed], [ErrTypeMismatch],
// [ErrConflict], [ErrAmbiguous], [ErrUnknownType], [ErrConsistencyTimeout],
// [ErrQueueFull], [ErrRailroadClosed], [ErrValidation], [ErrTokenMismatch],
// [ErrNotUnique], [ErrDrift] and [ErrFenced]. Typed errors say more, for
// [errors.As]: [*KeyError], [*EntityError], [*ItemError], [*ConflictError],
// [*UniqueError], [*ValidationError], [*TxError], [*ShardError],
// [*MigrationError], [*UnknownTypeError], [*ConsistencyTimeoutError],
// [*FenceError], [*PanicError] and [*DriftError].
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
// and merges them in sort key order, with a cursor that resumes every shard. A
// partition key bucketed by day holds a time field of its own, which [Days] names
// by its stored attribute to read every day of a range:
//
//	type Event struct {
//	    _       struct{}  `Type:"Event" PK:"EVENTS#{day:date}#SHARD{shard}" SK:"{at:time}#{eventId}" singletable:"shards=8,shardBy=eventId"`
//	    Day     time.Time `dynamodbav:"day"` // the day field: Days sets it to each day in turn
//	    At      time.Time `dynamodbav:"at"`
//	    EventID string    `dynamodbav:"eventId"`
//	    Shard   int       `dynamodbav:"shard" singletable:"shard"`
//	}
//
//	page, err := events.QueryShards(ctx, Event{}, singletable.Days("day", from, to),
//	    singletable.Descending(), singletable.Limit(100)) // 8 shards × each day, merged
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
// with bounded queues. Package stream (stream.Consume) reads a table's DynamoDB
// Stream, decodes old and new images into registered entities ([StreamRecord],
// by [Table.DecodeRecord]) and handles each item's changes in order, at least
// once, on a Railroad.
//
// # A fleet of stream consumers
//
// Package stream's consumers, in many processes, share a stream's shards through
// leases kept in DynamoDB (stream.TableStore, in the single table or a table of
// its own), as the Kinesis Client Library does: one lease per shard, whose
// counter fences every write; a consumer that cannot renew a lease gives it up,
// cancelling its handlers, before another can take it; a child shard is read only
// once its parents are finished, whoever held them. It needs only this package's
// public surface; see its documentation.
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
// or a Terraform aws_dynamodb_table resource. [Table.EnsureTable] creates the
// table when it is missing and otherwise checks the deployed one against the
// model with [Table.Drift] (keys, key types, indexes, projections, stream, TTL):
// a [*DriftError] ([ErrDrift]) names each difference and its fix.
//
// # Observability
//
// [WithObserver] ([TableOptions.Observer]) is called after every DynamoDB call the
// table makes, table management included, with its API, entity, latency, SDK
// attempts, consumed capacity and error; [WithLogger] logs the same through
// log/slog. Both observe at the client boundary, so they work with any
// [ItemClient] (DAX's, a wrapper); SDK attempts are counted where the client
// accepts SDK middleware (see [ItemClient] and [ClientTraits]). [WithTracer]
// ([TableOptions.Tracer]) reports spans of the library's logical operations (a
// Mutate and its attempts, a fan-out and its partition reads, a stream handler
// run, each DynamoDB call) and events (a lost answer and its resolution) to a
// [Tracer]; the module github.com/singletable/singletable/otel implements it with
// OpenTelemetry.
//
// # Options
//
// Every option is a value of an option type named for the calls it applies to
// (all declared in options.go). An option that does not apply to a call does not
// compile there; the few that the types cannot rule out (such as [Partition] in a
// fan-out query, [ReturnOld] on Create) are refused with [ErrInvalidInput] before
// anything is sent. None is ever ignored, and a nil option is refused too.
//
//	Option type        Calls                                        Options
//	TableOption        NewTable                                     WithKeys, WithIndex, WithClock... (table.go)
//	RegisterOption     Register, MustRegister                       Migrations, Validator, FieldValidator
//	GetOption          Get, BatchGet, Project(...).Get              Consistent, SkipExpired (ReadOptions)
//	WriteOption        Put, Create, Delete, Update, Tx*             If, Clobber, ReturnOld
//	UpdateOption       Update, TxUpdate                             Set, Remove, Add, Append, Prepend,
//	                                                                DeleteFromSet, SetIfNotExists, Upsert,
//	                                                                Returning, and every WriteOption
//	QueryOption        Query, All, Count, and every query below     On, Limit, After, Filter, ReturnCapacity,
//	                                                                Consistent, SkipExpired, Descending,
//	                                                                Partition, SKEqual... SKTree
//	ShardQueryOption   QueryShards, AllShards                       Days, Parallel, AllowPartial, QueryOptions
//	CollectionOption   Table.Query, Table.All, Table.Count,         OnUnknown, QueryOptions
//	                   Collection
//	ScanOption         Scan, ScanAll, ScanCount                     On, Limit, After, Filter, ReturnCapacity,
//	                                                                Consistent, SkipExpired, Segments, Segment
//	TableScanOption    Table.Scan, Table.ScanAll, Table.ScanCount   OnUnknown, ScanOptions
//	SweepOption        Sweep                                        SegmentRange, SweepRate, PageSize,
//	                                                                SweepProgressIn, OnSweepProgress,
//	                                                                ConsistentScan, Segments, Segment
//	UniqueSweepOption  SweepUnique                                  RepairUnique, OnUniqueSweepProgress
//	RetryOption        WaitFor, WaitIndexed..., Mutate              RetryBackoff
//	DecodeOption       Table.Decode, Table.DecodeRecord             OnUnknown
//	IndexOption        WithIndex, WithLocalIndex, WithNativeIndex   ProjectAll, ProjectKeysOnly, ProjectInclude
//	RailroadOption     NewRailroad                                  RailroadOptions
//
// # Testing
//
// The harness that starts DynamoDB Local for tests lives in a module of its own,
// github.com/singletable/singletable/dynamolocal (an endpoint from AWS_ENDPOINT_URL,
// else Testcontainers when a Docker API answers, else the DynamoDB Local jar with
// Java; DynamoDB Local 3.3.1 by default), so that importing this package brings
// neither Testcontainers nor Docker's modules into a build. This module's own tests
// only read AWS_ENDPOINT_URL, which `make test` sets, as the SDK's configuration does. Pointing a Table at the real
// service needs no change but the client.
package singletable
