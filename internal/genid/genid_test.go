package genid

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counter is a fixed random source: 0, 1, 2, ... as bytes.
type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

const ms = 1700000000123 // 2023-11-14T22:13:20.123Z

// TestNextGolden: for a fixed clock and random source the ids come out
// byte-identical to those the root package made before the move (stored keys
// hold them), and increase within a millisecond.
func TestNextGolden(t *testing.T) {
	u := NewSource(ULID, &counter{})
	var got []string
	for _, m := range []uint64{ms, ms, ms, ms + 1} {
		id, err := u.Next(m, nil)
		require.NoError(t, err)
		got = append(got, id)
	}
	assert.Equal(t, goldenULID, got)

	v := NewSource(UUIDv7, nil)
	r := &counter{}
	got = nil
	for _, m := range []uint64{ms, ms, ms - 5, ms + 1} {
		id, err := v.Next(m, r)
		require.NoError(t, err)
		got = append(got, id)
	}
	assert.Equal(t, goldenUUID, got)
	for _, ids := range [][]string{goldenULID, goldenUUID} {
		for i := 1; i < len(ids); i++ {
			assert.Less(t, ids[i-1], ids[i], "ids increase as text")
		}
	}
}

var (
	goldenULID = []string{"01HF7YAT3V000G40R40M30E209", "01HF7YAT3V000G40R40M9H64RM", "01HF7YAT3V000G40R40MJ268H3", "01HF7YAT3W289H858P2WC1J6GV"}
	// ms in the first 12 hex digits, then version 7 and the counter (the
	// clock moved back: the next count), the variant, the source's bytes.
	goldenUUID = []string{"018bcfe5-687b-7000-8001-020304050607", "018bcfe5-687b-7001-8809-0a0b0c0d0e0f", "018bcfe5-687b-7002-9011-121314151617", "018bcfe5-687c-7000-9819-1a1b1c1d1e1f"}
)

// TestUUIDv7Counter: 4096 ids in one millisecond, then the next millisecond.
func TestUUIDv7Counter(t *testing.T) {
	v := NewSource(UUIDv7, nil)
	r := &counter{}
	var last string
	for i := range 4097 {
		id, err := v.Next(ms, r)
		require.NoError(t, err)
		require.Less(t, last, id, i)
		last = id
		assert.Equal(t, "7", id[14:15], "version")
		assert.Contains(t, "89ab", id[19:20], "variant")
	}
	assert.Equal(t, "018bcfe5-687c-7000", last[:18], "carried into the next millisecond, counter 0")
}

// TestReplay: the same stream gives the same id, without state.
func TestReplay(t *testing.T) {
	stream := bytes.Repeat([]byte{0xab, 0xcd}, 16)
	for _, k := range []Kind{ULID, UUIDv7} {
		a, err := Replay(k, ms, bytes.NewReader(stream))
		require.NoError(t, err)
		b, err := Replay(k, ms, bytes.NewReader(stream))
		require.NoError(t, err)
		assert.Equal(t, a, b)
	}
	id, err := Replay(UUIDv7, ms, bytes.NewReader(stream))
	require.NoError(t, err)
	assert.Equal(t, goldenReplayUUID, id)
	id, err = Replay(ULID, ms, bytes.NewReader(stream))
	require.NoError(t, err)
	assert.Equal(t, goldenReplayULID, id)
}

var goldenReplayUUID, goldenReplayULID = "018bcfe5-687b-7bcd-abcd-abcdabcdabcd", "01HF7YAT3VNF6TQKDBSPNWVAYD"

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("drained") }

// TestErrors: a source that fails is the error, named.
func TestErrors(t *testing.T) {
	_, err := NewSource(UUIDv7, nil).Next(ms, failing{})
	assert.EqualError(t, err, "id source: drained")
	_, err = NewSource(ULID, failing{}).Next(ms, nil)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "ulid: "), err.Error())
	_, err = Replay(UUIDv7, ms, failing{})
	assert.EqualError(t, err, "id source: drained")
}

// TestKinds: names and parsing.
func TestKinds(t *testing.T) {
	for _, k := range []Kind{ULID, UUIDv7} {
		p, ok := Parse(k.String())
		assert.True(t, ok)
		assert.Equal(t, k, p)
	}
	_, ok := Parse("uuidv4")
	assert.False(t, ok)
	assert.Equal(t, ULID, Kind(1), "numeric values kept")
	assert.Equal(t, UUIDv7, Kind(2))
}

// TestConcurrent: ids of one source stay distinct under concurrent use.
func TestConcurrent(t *testing.T) {
	for _, k := range []Kind{ULID, UUIDv7} {
		s := NewSource(k, &lockedCounter{})
		var mu sync.Mutex
		seen := map[string]bool{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 200 {
					id, err := s.Next(ms, &lockedCounter{})
					assert.NoError(t, err)
					mu.Lock()
					assert.False(t, seen[id])
					seen[id] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
}

type lockedCounter struct {
	mu sync.Mutex
	c  counter
}

func (l *lockedCounter) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.Read(p)
}

// TestCheck: the fields and kinds a generate= option takes.
func TestCheck(t *testing.T) {
	k, reason := Check("uuidv7", reflect.TypeFor[string](), false)
	assert.Equal(t, UUIDv7, k)
	assert.Empty(t, reason)
	type ID string
	k, reason = Check("ulid", reflect.TypeFor[ID](), false)
	assert.Equal(t, ULID, k)
	assert.Empty(t, reason)
	_, reason = Check("uuid", reflect.TypeFor[string](), false)
	assert.Equal(t, "unknown id kind (want ulid or uuidv7)", reason)
	_, reason = Check("ulid", reflect.TypeFor[int](), false)
	assert.Equal(t, "a generated id is text: the field must be a string, not int", reason)
	_, reason = Check("ulid", reflect.TypeFor[*string](), false)
	assert.Equal(t, "a generated id is text: the field must be a string, not *string", reason)
	_, reason = Check("ulid", reflect.TypeFor[string](), true)
	assert.Equal(t, "the string option is for numbers", reason)
}

// TestMake: a replay stream makes the replayed id and leaves the state alone;
// without one, the source's next id; nil randomness is crypto/rand's.
func TestMake(t *testing.T) {
	s := NewSource(UUIDv7, nil)
	stream := bytes.Repeat([]byte{0xab, 0xcd}, 16)
	id, err := s.Make(ms, bytes.NewReader(stream), &counter{})
	require.NoError(t, err)
	assert.Equal(t, goldenReplayUUID, id)
	id, err = s.Make(ms, nil, &counter{})
	require.NoError(t, err)
	assert.Equal(t, goldenUUID[0], id, "the counter starts at 0: the replay left it")
	id, err = s.Make(ms, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "018bcfe5-687b-7001-", id[:19])
	u, err := NewSource(ULID, nil).Make(ms, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "01HF7YAT3V", u[:10])
}

// down is a fixed random source whose bytes decrease: 255, 254, ...
type down struct{ n byte }

func (d *down) Read(p []byte) (int, error) {
	for i := range p {
		d.n--
		p[i] = d.n
	}
	return len(p), nil
}

// constant is a random source that gives the same byte every read.
type constant byte

func (c constant) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestNextIncreasesAcrossInterleavedClocks (issue 37, scenario 5): ids of one
// source increase strictly in the order they are made, also when another
// goroutine made one at a later millisecond in between (its clock read later,
// or this one's read earlier): the millisecond never goes back.
func TestNextIncreasesAcrossInterleavedClocks(t *testing.T) {
	for _, kind := range []Kind{ULID, UUIDv7} {
		s := NewSource(kind, &down{})
		r := &down{}
		a, err := s.Next(ms, r)
		require.NoError(t, err)
		b, err := s.Next(ms+1, r) // another goroutine, its clock a millisecond on
		require.NoError(t, err)
		c, err := s.Next(ms, r) // this goroutine again, within its millisecond
		require.NoError(t, err)
		assert.Less(t, a, b, kind)
		assert.Less(t, b, c, "%s: never below an id made before it", kind)
	}
}

// TestNextIncreasesPerGoroutineUnderConcurrency (issue 37, scenario 5): with
// the real clock and many goroutines, each goroutine's ids increase strictly.
func TestNextIncreasesPerGoroutineUnderConcurrency(t *testing.T) {
	for _, kind := range []Kind{ULID, UUIDv7} {
		s := NewSource(kind, nil)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for range 8 {
			wg.Go(func() {
				last := ""
				for range 20000 {
					id, err := s.Next(uint64(time.Now().UnixMilli()), nil)
					if err != nil {
						mu.Lock()
						bad = append(bad, err.Error())
						mu.Unlock()
						return
					}
					if id <= last {
						mu.Lock()
						bad = append(bad, last+" then "+id)
						mu.Unlock()
					}
					last = id
				}
			})
		}
		wg.Wait()
		assert.Empty(t, bad, "%s: one goroutine's ids decreased", kind)
	}
}

// TestNextConstantSourceMovesOn (issue 37, scenario 6): a constant random
// source (the way to make tests deterministic) never hangs the monotonic
// counter nor repeats an id: when the counter cannot move within the
// millisecond, the id takes the next one.
func TestNextConstantSourceMovesOn(t *testing.T) {
	for _, src := range []constant{0xFF, 0x00, 0x7F} {
		for _, kind := range []Kind{ULID, UUIDv7} {
			s := NewSource(kind, src)
			done := make(chan []string, 1)
			go func() {
				var ids []string
				for range 5000 {
					id, err := s.Next(ms, src)
					if err != nil {
						break
					}
					ids = append(ids, id)
				}
				done <- ids
			}()
			select {
			case ids := <-done:
				require.Len(t, ids, 5000, "source %#x, %s", byte(src), kind)
				for i := 1; i < len(ids); i++ {
					require.Less(t, ids[i-1], ids[i], "source %#x, %s: ids increase, never repeat", byte(src), kind)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("source %#x, %s: Next hangs", byte(src), kind)
			}
		}
	}
}
