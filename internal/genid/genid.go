// Package genid makes the root package's generated ids (generate.go): ULIDs and
// version 7 UUIDs at a time the caller gives, from a randomness the caller
// gives, increasing strictly within one field's Source.
package genid

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Kind is the kind of a generated id.
type Kind uint8

// The kinds of ids.
const (
	ULID   Kind = iota + 1 // 26 characters of Crockford base 32, the first 10 the time in milliseconds
	UUIDv7                 // the 36-character text of an RFC 9562 version 7 UUID
)

// Parse returns the kind named text ("ulid", "uuidv7").
func Parse(text string) (Kind, bool) {
	switch text {
	case "ulid":
		return ULID, true
	case "uuidv7":
		return UUIDv7, true
	}
	return 0, false
}

// Check reads a generate= option's kind (text) for a field of type t (asString:
// with the string option): the kind, or why the field cannot be generated.
func Check(text string, t reflect.Type, asString bool) (Kind, string) {
	kind, ok := Parse(text)
	switch {
	case !ok:
		return 0, "unknown id kind (want ulid or uuidv7)"
	case t.Kind() != reflect.String:
		return 0, "a generated id is text: the field must be a string, not " + t.String()
	case asString:
		return 0, "the string option is for numbers"
	}
	return kind, ""
}

// String is the kind's name.
func (k Kind) String() string {
	if k == UUIDv7 {
		return "uuidv7"
	}
	return "ulid"
}

// Source makes the ids of one field, strictly increasing, also within a
// millisecond (ulid: monotonic entropy; uuidv7: a 12-bit counter in rand_a).
// It is safe for concurrent use.
type Source struct {
	kind Kind

	mu sync.Mutex // protects mono, lastMs and seq
	// mono is the ulid entropy, monotonic within a millisecond.
	mono *ulid.MonotonicEntropy
	// lastMs and seq are the uuidv7 time and counter last used.
	lastMs uint64
	seq    uint16
}

// NewSource returns the source of ids of kind, whose ulid entropy reads random
// (nil: crypto/rand).
func NewSource(kind Kind, random io.Reader) *Source {
	return &Source{kind: kind, mono: ulid.Monotonic(orRand(random), 0)}
}

func orRand(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return r
}

// Make makes an id at ms: from replay alone when it is not nil (see
// [Replay]), else from the source's monotonic state (see [Source.Next]), random
// (nil: crypto/rand) giving a uuidv7's random bits.
func (s *Source) Make(ms uint64, replay, random io.Reader) (string, error) {
	if replay != nil {
		return Replay(s.kind, ms, replay)
	}
	return s.Next(ms, orRand(random))
}

// Next makes an id at ms (milliseconds since 1970) from the source's
// monotonic state; a uuidv7 reads its random bits from random.
func (s *Source) Next(ms uint64, random io.Reader) (string, error) {
	if s.kind == UUIDv7 {
		var b [16]byte
		if _, err := io.ReadFull(random, b[8:]); err != nil {
			return "", fmt.Errorf("id source: %w", err)
		}
		s.mu.Lock()
		if ms <= s.lastMs {
			// The same millisecond (or the clock moved back): the next count.
			ms = s.lastMs
			s.seq++
			if s.seq > 0xfff {
				ms++
				s.seq = 0
			}
		} else {
			s.seq = 0
		}
		s.lastMs = ms
		seq := s.seq
		s.mu.Unlock()
		return uuidv7(b, ms, seq), nil
	}
	s.mu.Lock()
	id, err := ulid.New(ms, s.mono)
	s.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("ulid: %w", err)
	}
	return id.String(), nil
}

// Replay makes an id of kind at ms from stream alone, without any state: the
// same stream gives the same ids (a uuidv7's counter is drawn from it too).
func Replay(kind Kind, ms uint64, stream io.Reader) (string, error) {
	if kind == UUIDv7 {
		var b [16]byte
		if _, err := io.ReadFull(stream, b[8:]); err != nil {
			return "", fmt.Errorf("id source: %w", err)
		}
		return uuidv7(b, ms, binary.BigEndian.Uint16(b[8:10])&0xfff), nil
	}
	id, err := ulid.New(ms, stream)
	if err != nil {
		return "", fmt.Errorf("ulid: %w", err)
	}
	return id.String(), nil
}

// uuidv7 lays out a version 7 UUID: ms in the first 48 bits, the version and
// seq in rand_a, the variant and b's last 8 bytes (but 2 bits) in rand_b.
func uuidv7(b [16]byte, ms uint64, seq uint16) string {
	binary.BigEndian.PutUint64(b[0:8], ms<<16)
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = 0x80 | b[8]&0x3f
	return uuid.UUID(b).String()
}
