// Package cursor is the envelope of every cursor the library hands out or
// stores (a query's, a fan-out's, a sweep's checkpoint):
//
//	base64url(kind(1) | id(8) | payload | mac(16))
//
// kind says which format the payload has; id is the first 8 bytes of a SHA-256
// of the identity of the query the cursor resumes; mac is HMAC-SHA256 of
// everything before it, keyed by the table's CursorSecret, or by a fixed key
// when there is none (then it is a checksum against accidents, not forgery).
// Only the canonical encoding is accepted: unpadded base64url with no line
// breaks and zero trailing bits, so one position has exactly one cursor.
//
// What a payload means (which key attributes, which partition) is the root
// package's (cursor.go, sweep.go) and internal/fanout's; this package seals,
// opens and writes the length-prefixed texts payloads are made of, and the
// payloads made of a key's values (keys.go), through the table's [KeyTypes].
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// The kinds of cursor, and the sizes of the envelope's fixed parts.
const (
	KindQuery  = 1 // a query's cursor: for each key attribute, uvarint(len) value
	KindFanout = 2 // a fan-out's cursor (QueryShards, AllShards): see internal/fanout
	KindSweep  = 3 // a sweep's checkpoint: uvarint(len) partition key, uvarint(len) sort key
	IDLen      = 8
	MACLen     = 16
)

// checksumKey keys the MAC of cursors on tables without a CursorSecret, and of
// sweep checkpoints always.
var checksumKey = []byte("singletable cursor checksum v1")

// ID is the identity of the query a cursor resumes, as a cursor holds it.
type ID [IDLen]byte

// IDOf digests a query's identity.
func IDOf(identity []byte) ID {
	sum := sha256.Sum256(identity)
	return ID(sum[:IDLen])
}

// KindName names a kind in errors.
func KindName(kind byte) string {
	switch kind {
	case KindFanout:
		return "fan-out cursor"
	case KindSweep:
		return "sweep checkpoint"
	}
	return "cursor"
}

// MAC is the MAC of a cursor's kind, id and payload, keyed by secret. Sweep
// checkpoints stay with the application (in its CheckpointStore) and are never
// handed to a client, so they carry the checksum whatever the secret: a changed
// CursorSecret does not strand a sweep.
func MAC(secret, payload []byte) []byte {
	key := secret
	if len(key) == 0 || (len(payload) > 0 && payload[0] == KindSweep) {
		key = checksumKey
	}
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:MACLen]
}

// Begin starts a cursor of kind for the query id; append the payload to it,
// then pass it to Seal.
func Begin(kind byte, id ID) []byte {
	b := make([]byte, 0, 64+MACLen)
	b = append(b, kind)
	return append(b, id[:]...)
}

// Seal signs a cursor begun with Begin and encodes it.
func Seal(secret, c []byte) string {
	c = append(c, MAC(secret, c)...)
	return base64.RawURLEncoding.EncodeToString(c)
}

// Open decodes a cursor of kind for the query id and returns its payload. It
// refuses, with an error wrapping invalid, anything but the canonical encoding,
// a cursor altered or signed with another secret, one of another kind, and one
// of another query.
func Open(secret []byte, kind byte, id ID, c string, invalid error) ([]byte, error) {
	what := KindName(kind)
	// The decoder skips line breaks even in strict mode; a cursor has none.
	if strings.ContainsAny(c, "\r\n") {
		return nil, fmt.Errorf("%w: not a %s: line breaks", invalid, what)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || len(raw) < 1+IDLen+MACLen {
		return nil, fmt.Errorf("%w: not a %s", invalid, what)
	}
	sealed, mac := raw[:len(raw)-MACLen], raw[len(raw)-MACLen:]
	if !hmac.Equal(mac, MAC(secret, sealed)) {
		return nil, fmt.Errorf("%w: %s altered, or signed with another secret", invalid, what)
	}
	if sealed[0] != kind {
		return nil, fmt.Errorf("%w: not a %s (kind %d)", invalid, what, sealed[0])
	}
	if !hmac.Equal(sealed[1:1+IDLen], id[:]) {
		return nil, fmt.Errorf("%w: the %s belongs to another query", invalid, what)
	}
	return sealed[1+IDLen:], nil
}

// AppendText appends s as uvarint(len) s.
func AppendText(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ReadText reads what AppendText wrote and returns the text and the bytes
// after it; ok is false when b is cut short.
func ReadText(b []byte) (s string, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
