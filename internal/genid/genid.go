// Package genid makes the root package's generated ids (generate.go): ULIDs and
// version 7 UUIDs at a time the caller gives, from a randomness the caller
// gives, increasing strictly within one field's Source.
package genid

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
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

// Names are the kinds' names, in the order of their values (ULID first): the
// words generate= accepts.
var Names = []string{"ulid", "uuidv7"}

// Parse returns the kind named text ("ulid", "uuidv7").
func Parse(text string) (Kind, bool) {
	i := slices.Index(Names, text)
	if i < 0 {
		return 0, false
	}
	return Kind(i + 1), true
}

// Check reads a generate= option's kind (text) for a field of type t (asString:
// with the string option): the kind, or why the field cannot be generated.
func Check(text string, t reflect.Type, asString bool) (Kind, string) {
	kind, ok := Parse(text)
	switch {
	case !ok:
		return 0, "unknown id kind (want " + strings.Join(Names, " or ") + ")"
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
		return Names[UUIDv7-1]
	}
	return Names[ULID-1]
}

// Source makes the ids of one field, strictly increasing in the order they
// are made, also within a millisecond (ulid: monotonic entropy; uuidv7: a
// 12-bit counter in rand_a), whatever the order in which concurrent callers
// read their clocks: a millisecond before the last one used is taken as the
// last one. When the counter cannot move on within the millisecond (it would
// overflow, or the random source gives no usable increment, as a constant
// source does), the id takes the next millisecond: ids never repeat, and
// making one never hangs. It is safe for concurrent use.
type Source struct {
	kind Kind

	mu sync.Mutex // protects mono, lastMs and seq
	// mono is the ulid entropy, monotonic within a millisecond.
	mono monotonic
	// lastMs and seq are the uuidv7 time and counter last used.
	lastMs uint64
	seq    uint16
}

// NewSource returns the source of ids of kind, whose ulid entropy reads random
// (nil: crypto/rand).
func NewSource(kind Kind, random io.Reader) *Source {
	return &Source{kind: kind, mono: monotonic{r: bufio.NewReader(orRand(random))}}
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
// monotonic state; a uuidv7 reads its random bits from random (nil:
// crypto/rand).
func (s *Source) Next(ms uint64, random io.Reader) (string, error) {
	if s.kind == UUIDv7 {
		var b [16]byte
		if _, err := io.ReadFull(orRand(random), b[8:]); err != nil {
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
	id, err := s.mono.next(ms)
	s.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("ulid: %w", err)
	}
	return id.String(), nil
}

// monotonic is ULID entropy monotonic within a millisecond: the entropy of the
// first id of a millisecond is random, each next one the last plus a random
// increment in [1, 2^32), read as github.com/oklog/ulid/v2's MonotonicEntropy
// reads it (so the same source gives the same ids), but for what that one
// gets wrong: a millisecond before the last is taken as the last (ids never
// decrease), and an increment that overflows or that the source cannot give
// (a constant source's bytes are all rejected) moves the id to the next
// millisecond, never looping or repeating (zero entropy is entropy too).
type monotonic struct {
	r    *bufio.Reader
	ms   uint64
	has  bool   // an id was made: ms, hi and lo are its
	hi   uint16 // the entropy's 80 bits
	lo   uint64
	rand [10]byte
}

// maxIncrement bounds the increment, as ulid.Monotonic(r, 0) does.
const maxIncrement = math.MaxUint32

// rejections bounds the increments drawn and rejected (0, or the bound) before
// the id moves to the next millisecond: a random source rejects one in 2^31.
const rejections = 8

func (m *monotonic) next(ms uint64) (ulid.ULID, error) {
	var id ulid.ULID
	if m.has && ms < m.ms {
		ms = m.ms
	}
	if m.has && ms == m.ms {
		if inc, ok, err := m.increment(); err != nil {
			return id, err
		} else if ok && !m.add(inc) {
			return m.id(ms)
		}
		ms++ // the counter cannot move on within the millisecond
	}
	if _, err := io.ReadFull(m.r, m.rand[:]); err != nil {
		return id, err
	}
	m.hi, m.lo = binary.BigEndian.Uint16(m.rand[:2]), binary.BigEndian.Uint64(m.rand[2:])
	return m.id(ms)
}

// id is the ulid of ms and the entropy; ms becomes the last one used.
func (m *monotonic) id(ms uint64) (ulid.ULID, error) {
	var id ulid.ULID
	if err := id.SetTime(ms); err != nil {
		return id, err
	}
	binary.BigEndian.PutUint16(id[6:8], m.hi)
	binary.BigEndian.PutUint64(id[8:], m.lo)
	m.ms, m.has = ms, true
	return id, nil
}

// increment draws an increment in [1, maxIncrement); ok is false when the
// source gave none in rejections draws.
func (m *monotonic) increment() (uint64, bool, error) {
	var b [4]byte
	for range rejections {
		if _, err := io.ReadFull(m.r, b[:]); err != nil {
			return 0, false, err
		}
		if inc := uint64(binary.LittleEndian.Uint32(b[:])); inc != 0 && inc < maxIncrement {
			return 1 + inc, true, nil
		}
	}
	return 0, false, nil
}

// add adds inc to the entropy; it reports an overflow, leaving it unchanged.
func (m *monotonic) add(inc uint64) (overflow bool) {
	lo, hi := m.lo+inc, m.hi
	if lo < m.lo {
		if hi == math.MaxUint16 {
			return true
		}
		hi++
	}
	m.lo, m.hi = lo, hi
	return false
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
