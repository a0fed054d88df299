package singletable

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Cursors are opaque to callers: base64url of
//
//	version(1) | sha256(query identity)[:8] | for each key attribute: uvarint(len) value | mac(16)
//
// The mac is HMAC-SHA256 keyed by the table's CursorSecret, or by a fixed key when
// there is none (then it is a checksum against accidents, not forgery). Decoding
// also checks that the key attributes are exactly those of the queried index and
// that the partition key equals the query's: a cursor can never move a query to
// another partition, whether or not it is signed.

const (
	cursorVersion = 1
	cursorIDLen   = 8
	cursorMACLen  = 16
)

// cursorAttrs lists the attributes of a LastEvaluatedKey for queries on ix, in order.
func (t *Table) cursorAttrs(ix Index) []string {
	out := make([]string, 0, 4)
	for _, a := range []string{ix.PartitionKey, ix.SortKey, t.opts.PartitionKey, t.opts.SortKey} {
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

func (t *Table) cursorMAC(payload []byte) []byte {
	key := t.opts.CursorSecret
	if len(key) == 0 {
		key = []byte("singletable cursor checksum v1")
	}
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

func (t *Table) encodeCursor(pq *preparedQuery, last map[string]types.AttributeValue) (string, error) {
	attrs := t.cursorAttrs(pq.index)
	if len(last) != len(attrs) {
		return "", fmt.Errorf("LastEvaluatedKey has %d attributes, want %d", len(last), len(attrs))
	}
	id := sha256.Sum256(pq.identity)
	payload := make([]byte, 0, 64)
	payload = append(payload, cursorVersion)
	payload = append(payload, id[:cursorIDLen]...)
	for _, a := range attrs {
		s, ok := last[a].(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("LastEvaluatedKey attribute %q is missing or not a string", a)
		}
		payload = binary.AppendUvarint(payload, uint64(len(s.Value)))
		payload = append(payload, s.Value...)
	}
	payload = append(payload, t.cursorMAC(payload)...)
	return base64.RawURLEncoding.EncodeToString(payload), nil
}

func (t *Table) decodeCursor(cursor string, pq *preparedQuery) (map[string]types.AttributeValue, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < 1+cursorIDLen+cursorMACLen {
		return nil, fmt.Errorf("%w: not a cursor", ErrInvalidCursor)
	}
	payload, mac := raw[:len(raw)-cursorMACLen], raw[len(raw)-cursorMACLen:]
	if !hmac.Equal(mac, t.cursorMAC(payload)) {
		return nil, fmt.Errorf("%w: altered, or signed with another secret", ErrInvalidCursor)
	}
	if payload[0] != cursorVersion {
		return nil, fmt.Errorf("%w: version %d", ErrInvalidCursor, payload[0])
	}
	id := sha256.Sum256(pq.identity)
	if !hmac.Equal(payload[1:1+cursorIDLen], id[:cursorIDLen]) {
		return nil, fmt.Errorf("%w: it belongs to another query", ErrInvalidCursor)
	}
	rest := payload[1+cursorIDLen:]
	attrs := t.cursorAttrs(pq.index)
	start := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) || n == 0 {
			return nil, fmt.Errorf("%w: truncated", ErrInvalidCursor)
		}
		v := string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		start[a] = &types.AttributeValueMemberS{Value: v}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", ErrInvalidCursor)
	}
	if got := start[pq.index.PartitionKey].(*types.AttributeValueMemberS).Value; got != pq.partition {
		return nil, fmt.Errorf("%w: it points into another partition", ErrInvalidCursor)
	}
	return start, nil
}
