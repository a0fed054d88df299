package singletable

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Stream records, as handlers get them. The consumers live in packages of
// their own, which need only this package's public surface: package stream
// (stream.Consume: a table's DynamoDB Stream read by a fleet of consumers that
// share its shards by leases) and package streamlambda (the stream in AWS
// Lambda). Both decode records by [Table.DecodeRecord].

// EnableStream is an edit for [Table.CreateTable] that turns on the table's
// stream with both images of every change (NEW_AND_OLD_IMAGES), which stream
// consumers decode into [StreamRecord.Old] and [StreamRecord.New].
func EnableStream() func(*dynamodb.CreateTableInput) {
	return func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		}
	}
}

// StreamEvent is what happened to an item.
type StreamEvent string

// The events of a stream record.
const (
	StreamInsert StreamEvent = "INSERT" // the item was created; New holds it
	StreamModify StreamEvent = "MODIFY" // the item was changed; Old and New hold it before and after
	StreamRemove StreamEvent = "REMOVE" // the item was deleted; Old holds it
)

// StreamRecord is one change to one item, as a stream consumer (package
// stream, package streamlambda) hands it to its handler. Old and New hold
// values of the entity types registered on the table (an Order, not an
// *Order), for a type switch or [Images]; they are nil when the stream does not
// carry that image (an INSERT has no old image, a REMOVE no new one, a
// KEYS_ONLY stream neither). The handler may keep the record; the consumer
// does not touch it afterwards.
type StreamRecord struct {
	Event StreamEvent
	// Type is the item's type attribute, from the new image, else the old; ""
	// when neither image carries one.
	Type string
	// Key is the item's primary key, such as {"PK": "CUST#c1", "SK": "ORDER#o1"}.
	Key map[string]string
	// Old and New are the decoded images; with OnUnknown UnknownCollect, an
	// image of an unregistered type is a RawItem.
	Old, New any
	// OldImage and NewImage are the images as the stream carried them.
	OldImage, NewImage RawItem
	// Expired is true for a REMOVE made by DynamoDB's time to live.
	Expired bool
	// ShardID and SequenceNumber place the record in the stream. Sequence
	// numbers grow within a shard; compare them as numbers, not strings.
	ShardID        string
	SequenceNumber string
	// ApproximateTime is when the change was made, to the second or coarser.
	ApproximateTime time.Time
}

// Images returns the record's old and new values when they are of type T; ok
// reports whether either is. An image that is absent or of another type gives
// T's zero value.
func Images[T any](r StreamRecord) (before, after T, ok bool) {
	before, okBefore := r.Old.(T)
	after, okAfter := r.New.(T)
	return before, after, okBefore || okAfter
}
