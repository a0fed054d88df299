// Package reserved names the library's own items in a user's table: the leases
// of stream consumers (package stream) and the progress of sweeps (the root
// package). Their partition keys begin with Prefix, which no registered entity
// can render (Register refuses a template that could), and their type
// attributes with TypePrefix, which no entity may take as its discriminator; a
// stream record of such an item is passed over, never handed to a handler.
package reserved

// TypePrefix begins the type attribute of every item the library writes for
// itself.
const TypePrefix = "_singletable."

// The type attributes of the library's items.
const (
	LeaseType = TypePrefix + "Lease"        // a stream consumer's lease of one shard
	SweepType = TypePrefix + "SweepSegment" // the progress of one segment of a sweep
)

// Prefix is the start of every partition key the library writes for itself:
// the table's delimiter, "singletable", the delimiter.
func Prefix(delimiter byte) string {
	d := string(delimiter)
	return d + "singletable" + d
}
