package singletable

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"io"
	"time"
)

// planEnv is what a write plan takes from outside its arguments: the time its
// timestamps get and the random source of its receipts and incarnation ids. A nil
// *planEnv reads the table's clock and crypto/rand, which is what every call but a
// transaction with a caller's token wants. A transaction with a token plans each
// action from a stream derived from the token, at the time the caller gives, so
// that planning it again after a restart gives the same request, byte for byte
// (see [Table.TransactWith]).
type planEnv struct {
	at   time.Time // the plan's time; zero: the table's clock, read once (see now)
	rand io.Reader // nil: crypto/rand
	// replay is set when the plan must come out the same when made again (a
	// transaction with a caller's token): the plans refuse what they cannot
	// plan the same way twice. atGiven is set when the caller gave the time,
	// tx when the write is a transaction's action, which returns nothing.
	replay, atGiven, tx bool
}

// now reads the table's clock.
func (t *Table) now() time.Time { return t.opts.Clock() }

// now returns the plan's time: the one given, else the table's clock, read once
// and kept so that every timestamp of one write is the same instant.
func (e *planEnv) now(t *Table) time.Time {
	if e == nil {
		return t.now()
	}
	if e.at.IsZero() {
		e.at = t.now()
	}
	return e.at
}

// read fills b from the plan's random source.
func (e *planEnv) read(b []byte) error {
	var r io.Reader = rand.Reader
	if e != nil && e.rand != nil {
		r = e.rand
	}
	if _, err := io.ReadFull(r, b); err != nil {
		return errorf("random source: %w", err)
	}
	return nil
}

// token returns an incarnation id: 32 hex digits (see newToken).
func (e *planEnv) token() (string, error) {
	var b [16]byte
	if err := e.read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// receipt returns a receipt: 16 characters (see newReceipt).
func (e *planEnv) receipt() (string, error) {
	var b [12]byte
	if err := e.read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// derivedStream is a deterministic random stream: HMAC-SHA256 of a label and a
// block counter under a key, block after block. The same key and label always
// give the same bytes.
type derivedStream struct {
	key, label []byte
	block      uint64
	buf        []byte
}

func newDerivedStream(key string, label string) *derivedStream {
	return &derivedStream{key: []byte(key), label: []byte(label)}
}

func (d *derivedStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(d.buf) == 0 {
			m := hmac.New(sha256.New, d.key)
			m.Write(d.label)
			var ctr [8]byte
			binary.BigEndian.PutUint64(ctr[:], d.block)
			m.Write(ctr[:])
			d.buf = m.Sum(nil)
			d.block++
		}
		c := copy(p[n:], d.buf)
		d.buf = d.buf[c:]
		n += c
	}
	return n, nil
}
