package singletable

import (
	"strconv"
	"strings"

	"github.com/singletable/singletable/internal/reserved"
)

// The library's own items (sweep progress here, the leases of package stream)
// live under partition keys that begin with the table's delimiter:
// "#singletable#sweep#<entity>", "#singletable#lease#<stream ARN>". No
// registered entity can render such a key, because a key value may not hold
// the delimiter and a base key input may not be empty; [Register] refuses, as
// well, an entity whose partition key template could begin with the reserved
// prefix, or whose discriminator begins with the reserved type prefix
// (internal/reserved).
const reservedTypePrefix = reserved.TypePrefix

// reservedPrefix is the start of every partition key the library writes for
// itself: the delimiter, "singletable", the delimiter.
func (t *Table) reservedPrefix() string { return reserved.Prefix(t.opts.Delimiter) }

// checkReserved refuses an entity that could write into the library's own
// items: a discriminator in its namespace, or a partition key template that can
// render a key beginning with the reserved prefix.
func (t *Table) checkReserved(info *entityInfo) error {
	if strings.HasPrefix(info.discriminator, reservedTypePrefix) {
		return &EntityError{Entity: info.name, Field: t.opts.TypeAttribute, Reason: "discriminator " + strconv.Quote(info.discriminator) + " is in the library's reserved namespace " + strconv.Quote(reservedTypePrefix)}
	}
	if info.pk != nil && mayBeginWith(info.pk, t.reservedPrefix(), t.opts.Delimiter) != overlapNone {
		return &EntityError{Entity: info.name, Field: t.opts.PartitionKey, Reason: "template " + strconv.Quote(info.pk.tmpl.String()) + " can render keys beginning with " +
			strconv.Quote(t.reservedPrefix()) + ", which the library keeps for its leases and sweep progress; begin it with something else"}
	}
	return nil
}
