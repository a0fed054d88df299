package singletable

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Every cursor the package hands out or stores (a query's, a fan-out's, a sweep's
// checkpoint) is one envelope, sealed by sealCursor and opened by openCursor:
//
//	base64url(kind(1) | id(8) | payload | mac(16))
//
// kind says which format the payload has; id is the first 8 bytes of a SHA-256 of
// the identity of the query the cursor resumes; mac is HMAC-SHA256 of everything
// before it, keyed by the table's CursorSecret, or by a fixed key when there is
// none (then it is a checksum against accidents, not forgery). Only the canonical
// encoding is accepted: unpadded base64url with no line breaks and zero trailing
// bits, so one position has exactly one cursor. Each format encodes only its
// payload:
//
//	query (1):   for each key attribute: uvarint(len) value
//	fan-out (2): see encodeFanoutCursor
//	sweep (3):   uvarint(len) partition key, uvarint(len) sort key
//
// Decoding also checks that the key attributes are exactly those of the queried
// index and that the partition key equals the query's: a cursor can never move a
// query to another partition, whether or not it is signed.

const (
	cursorVersion       = 1 // kind of a query's cursor
	fanoutCursorVersion = 2 // kind of a fan-out's cursor (QueryShards, AllShards)
	scanCursorVersion   = 3 // kind of a sweep's checkpoint
	cursorIDLen         = 8
	cursorMACLen        = 16
)

// cursorChecksumKey keys the MAC of cursors on tables without a CursorSecret, and
// of sweep checkpoints always.
var cursorChecksumKey = []byte("singletable cursor checksum v1")

// cursorID is the identity of the query a cursor resumes, as a cursor holds it.
type cursorID [cursorIDLen]byte

// cursorIDOf digests a query's identity.
func cursorIDOf(identity []byte) cursorID {
	sum := sha256.Sum256(identity)
	return cursorID(sum[:cursorIDLen])
}

// cursorKindName names a kind in errors.
func cursorKindName(kind byte) string {
	switch kind {
	case fanoutCursorVersion:
		return "fan-out cursor"
	case scanCursorVersion:
		return "sweep checkpoint"
	}
	return "cursor"
}

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

// cursorMAC is the MAC of a cursor's kind, id and payload. Sweep checkpoints stay
// with the application (in its CheckpointStore) and are never handed to a client,
// so they carry the checksum whatever the secret: a changed CursorSecret does not
// strand a sweep.
func (t *Table) cursorMAC(payload []byte) []byte {
	key := t.opts.CursorSecret
	if len(key) == 0 || (len(payload) > 0 && payload[0] == scanCursorVersion) {
		key = cursorChecksumKey
	}
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

// beginCursor starts a cursor of kind for the query id; append the payload to it,
// then pass it to sealCursor.
func beginCursor(kind byte, id cursorID) []byte {
	b := make([]byte, 0, 64+cursorMACLen)
	b = append(b, kind)
	return append(b, id[:]...)
}

// sealCursor signs a cursor begun with beginCursor and encodes it.
func (t *Table) sealCursor(cursor []byte) string {
	cursor = append(cursor, t.cursorMAC(cursor)...)
	return base64.RawURLEncoding.EncodeToString(cursor)
}

// openCursor decodes a cursor of kind for the query id and returns its payload.
// It refuses, with an error matching [ErrInvalidCursor], anything but the canonical
// encoding, a cursor altered or signed with another secret, one of another kind,
// and one of another query.
func (t *Table) openCursor(kind byte, id cursorID, cursor string) ([]byte, error) {
	what := cursorKindName(kind)
	// The decoder skips line breaks even in strict mode; a cursor has none.
	if strings.ContainsAny(cursor, "\r\n") {
		return nil, fmt.Errorf("%w: not a %s: line breaks", ErrInvalidCursor, what)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) < 1+cursorIDLen+cursorMACLen {
		return nil, fmt.Errorf("%w: not a %s", ErrInvalidCursor, what)
	}
	sealed, mac := raw[:len(raw)-cursorMACLen], raw[len(raw)-cursorMACLen:]
	if !hmac.Equal(mac, t.cursorMAC(sealed)) {
		return nil, fmt.Errorf("%w: %s altered, or signed with another secret", ErrInvalidCursor, what)
	}
	if sealed[0] != kind {
		return nil, fmt.Errorf("%w: not a %s (kind %d)", ErrInvalidCursor, what, sealed[0])
	}
	if !hmac.Equal(sealed[1:1+cursorIDLen], id[:]) {
		return nil, fmt.Errorf("%w: the %s belongs to another query", ErrInvalidCursor, what)
	}
	return sealed[1+cursorIDLen:], nil
}

// appendKeyValues appends the values of attrs in key (the text of each: a
// string, a number's digits, a binary's bytes; of the type the table declares),
// each as uvarint(len) value, for readKeyValues.
func (t *Table) appendKeyValues(b []byte, attrs []string, key map[string]types.AttributeValue) ([]byte, error) {
	for _, a := range attrs {
		s, ok := t.keyTextOf(key, a)
		if !ok {
			return nil, fmt.Errorf("key attribute %q is missing or not a %s", a, typeName(t.keyType(a)))
		}
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// readKeyValues reads what appendKeyValues wrote for attrs and returns the key and
// the bytes after it; ok is false when a value is missing, empty, cut short, or
// not a number where the table keys by numbers.
func (t *Table) readKeyValues(b []byte, attrs []string) (key map[string]types.AttributeValue, rest []byte, ok bool) {
	key = make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		n, w := binary.Uvarint(b)
		if w <= 0 || n == 0 || n > uint64(len(b)-w) {
			return nil, nil, false
		}
		text := string(b[w : w+int(n)])
		if t.keyType(a) == types.ScalarAttributeTypeN && !isNumberText(text) {
			return nil, nil, false
		}
		key[a] = t.keyAV(a, text)
		b = b[w+int(n):]
	}
	return key, b, true
}

// sealKeys seals a cursor of kind whose payload is the values of attrs in key.
// Its errors have no package prefix: callers wrap them.
func (t *Table) sealKeys(kind byte, id cursorID, attrs []string, key map[string]types.AttributeValue) (string, error) {
	if len(key) != len(attrs) {
		return "", fmt.Errorf("%s: the last evaluated key has %d attributes, want %d", cursorKindName(kind), len(key), len(attrs))
	}
	b, err := t.appendKeyValues(beginCursor(kind, id), attrs, key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cursorKindName(kind), err)
	}
	return t.sealCursor(b), nil
}

// openKeys opens a cursor sealed by sealKeys and returns its key.
func (t *Table) openKeys(kind byte, id cursorID, attrs []string, cursor string) (map[string]types.AttributeValue, error) {
	payload, err := t.openCursor(kind, id, cursor)
	if err != nil {
		return nil, err
	}
	key, rest, ok := t.readKeyValues(payload, attrs)
	if !ok {
		return nil, fmt.Errorf("%w: %s truncated", ErrInvalidCursor, cursorKindName(kind))
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %s has trailing bytes", ErrInvalidCursor, cursorKindName(kind))
	}
	return key, nil
}

func (t *Table) encodeCursor(pq *preparedQuery, last map[string]types.AttributeValue) (string, error) {
	return t.sealKeys(cursorVersion, cursorIDOf(pq.identity), t.cursorAttrs(pq.index), last)
}

func (t *Table) decodeCursor(cursor string, pq *preparedQuery) (map[string]types.AttributeValue, error) {
	start, err := t.openKeys(cursorVersion, cursorIDOf(pq.identity), t.cursorAttrs(pq.index), cursor)
	if err != nil {
		return nil, err
	}
	if pq.native != nil { // multiattr_query.go: every equality of the query
		return start, pq.native.checkStart(start)
	}
	if got, _ := keyText(start[pq.index.PartitionKey]); got != pq.partition {
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
