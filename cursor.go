package singletable

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable/singletable/internal/cursor"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Every cursor the package hands out or stores (a query's, a fan-out's, a sweep's
// checkpoint) is one envelope, sealed by cursor.Seal or SealKey and opened by openCursor,
// written by package internal/cursor: kind, the query's id, payload and MAC.
// This file says what a payload means. Each format encodes only its payload:
//
//	query (1):   for each key attribute: uvarint(len) value
//	fan-out (2): see internal/fanout's cursor.go
//	sweep (3):   uvarint(len) partition key, uvarint(len) sort key
//
// Decoding also checks that the key attributes are exactly those of the queried
// index and that the partition key equals the query's: a cursor can never move a
// query to another partition, whether or not it is signed.

const (
	cursorVersion       = cursor.KindQuery  // kind of a query's cursor
	fanoutCursorVersion = cursor.KindFanout // kind of a fan-out's cursor (QueryShards, AllShards)
	scanCursorVersion   = cursor.KindSweep  // kind of a sweep's checkpoint
	cursorIDLen         = cursor.IDLen
	cursorMACLen        = cursor.MACLen
)

// cursorID is the identity of the query a cursor resumes, as a cursor holds it.
type cursorID = cursor.ID

// cursorIDOf digests a query's identity.
func cursorIDOf(identity []byte) cursorID { return cursor.IDOf(identity) }

// cursorAttrs lists the attributes of a LastEvaluatedKey for queries on ix, in order.
func (t *Table) cursorAttrs(ix Index) []string {
	out := make([]string, 0, 4)
	for _, a := range append(ix.keyAttrNames(), t.opts.PartitionKey, t.opts.SortKey) { // multiattr.go
		if a == "" {
			continue
		}
		dup := false
		for _, b := range out {
			dup = dup || a == b
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

// cursorMAC is the MAC of a cursor's kind, id and payload, keyed by the table's
// CursorSecret (a sweep checkpoint's by the checksum key always).
func (t *Table) cursorMAC(payload []byte) []byte { return cursor.MAC(t.opts.CursorSecret, payload) }

// openCursor decodes a cursor of kind for the query id and returns its payload.
// It refuses, with an error matching [ErrInvalidCursor], anything but the canonical
// encoding, a cursor altered or signed with another secret, one of another kind,
// and one of another query.
func (t *Table) openCursor(kind byte, id cursorID, c string) ([]byte, error) {
	return cursor.Open(t.opts.CursorSecret, kind, id, c, ErrInvalidCursor)
}

// tableKeys is a table as internal/cursor's key payloads see it.
type tableKeys Table

func (k *tableKeys) KeyText(key map[string]types.AttributeValue, a string) (string, bool) {
	return (*Table)(k).keyTextOf(key, a) // keytypes.go
}

func (k *tableKeys) KeyValue(a, text string) (types.AttributeValue, bool) {
	t := (*Table)(k)
	if t.keyType(a) == types.ScalarAttributeTypeN && !keytmpl.IsNumberText(text) {
		return nil, false
	}
	return t.keyAV(a, text), true
}

func (k *tableKeys) KeyTypeName(a string) string { return typeName((*Table)(k).keyType(a)) }

// sealKeys seals a cursor of kind whose payload is the values of attrs in key
// (internal/cursor). Its errors have no package prefix: callers wrap them.
func (t *Table) sealKeys(kind byte, id cursorID, attrs []string, key map[string]types.AttributeValue) (string, error) {
	return cursor.SealKey(t.opts.CursorSecret, (*tableKeys)(t), kind, id, attrs, key)
}

// openKeys opens a cursor sealed by sealKeys and returns its key.
func (t *Table) openKeys(kind byte, id cursorID, attrs []string, c string) (map[string]types.AttributeValue, error) {
	return cursor.OpenKey(t.opts.CursorSecret, (*tableKeys)(t), kind, id, attrs, c, ErrInvalidCursor)
}

func (t *Table) encodeCursor(pq *preparedQuery, last map[string]types.AttributeValue) (string, error) {
	return t.sealKeys(cursorVersion, cursorIDOf(pq.identity), t.cursorAttrs(pq.index), last)
}

func (t *Table) decodeCursor(c string, pq *preparedQuery) (map[string]types.AttributeValue, error) {
	start, err := t.openKeys(cursorVersion, cursorIDOf(pq.identity), t.cursorAttrs(pq.index), c)
	if err != nil {
		return nil, err
	}
	if pq.native != nil { // multiattr_query.go: every equality of the query
		return start, pq.native.checkStart(start)
	}
	if got, _ := keytmpl.TextOf(start[pq.index.PartitionKey]); got != pq.partition {
		return nil, fmt.Errorf("%w: it points into another partition", ErrInvalidCursor)
	}
	return start, nil
}

// baseKeyAttrs are the base table's key attributes, partition key first (one
// for a table without sort key).
func (t *Table) baseKeyAttrs() []string {
	if t.opts.NoSortKey {
		return []string{t.opts.PartitionKey}
	}
	return []string{t.opts.PartitionKey, t.opts.SortKey}
}

// scanCursorID is the identity of a sweep's checkpoints: the table and its keys.
func (t *Table) scanCursorID() cursorID {
	return cursorIDOf([]byte("sweep\x00" + t.name + "\x00" + t.opts.PartitionKey + "\x00" + t.opts.SortKey))
}
