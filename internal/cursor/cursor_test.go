package cursor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errInvalid = errors.New("invalid cursor")

// TestSealOpen: a sealed cursor opens to its payload with the same secret,
// kind and id, and is refused, naming why, with any other.
func TestSealOpen(t *testing.T) {
	id := IDOf([]byte("query"))
	payload := AppendText(AppendText(nil, "CUST#c1"), "")
	for _, secret := range [][]byte{nil, []byte("s3cret")} {
		c := Seal(secret, append(Begin(KindQuery, id), payload...))
		got, err := Open(secret, KindQuery, id, c, errInvalid)
		require.NoError(t, err)
		assert.Equal(t, payload, got)

		_, err = Open([]byte("other"), KindQuery, id, c, errInvalid)
		assert.ErrorIs(t, err, errInvalid)
		assert.Contains(t, err.Error(), "altered, or signed with another secret")
		_, err = Open(secret, KindFanout, id, c, errInvalid)
		assert.EqualError(t, err, "invalid cursor: not a fan-out cursor (kind 1)")
		_, err = Open(secret, KindQuery, IDOf([]byte("other")), c, errInvalid)
		assert.EqualError(t, err, "invalid cursor: the cursor belongs to another query")
		_, err = Open(secret, KindQuery, id, c+"\n", errInvalid)
		assert.EqualError(t, err, "invalid cursor: not a cursor: line breaks")
		_, err = Open(secret, KindQuery, id, c[:10], errInvalid)
		assert.EqualError(t, err, "invalid cursor: not a cursor")
	}
	// A sweep checkpoint carries the checksum whatever the secret.
	c := Seal([]byte("s3cret"), Begin(KindSweep, id))
	_, err := Open([]byte("changed"), KindSweep, id, c, errInvalid)
	assert.NoError(t, err)
}

func TestReadText(t *testing.T) {
	b := AppendText(AppendText(nil, "abc"), "")
	s, rest, ok := ReadText(b)
	require.True(t, ok)
	assert.Equal(t, "abc", s)
	s, rest, ok = ReadText(rest)
	require.True(t, ok)
	assert.Empty(t, s)
	assert.Empty(t, rest)
	_, _, ok = ReadText([]byte{5, 'a'})
	assert.False(t, ok, "cut short")
	_, _, ok = ReadText(nil)
	assert.False(t, ok)
}

// FuzzOpen: whatever a string is, Open either refuses it, wrapping the
// invalid error, or returns a payload that seals back to that very string (one
// position, one cursor), and ReadText never reads past its input.
func FuzzOpen(f *testing.F) {
	id := IDOf([]byte("query"))
	f.Add(Seal(nil, append(Begin(KindQuery, id), AppendText(nil, "CUST#c1")...)), false)
	f.Add(Seal([]byte("k"), Begin(KindFanout, id)), true)
	f.Add("", false)
	f.Fuzz(func(t *testing.T, c string, signed bool) {
		var secret []byte
		if signed {
			secret = []byte("k")
		}
		for _, kind := range []byte{KindQuery, KindFanout, KindSweep} {
			payload, err := Open(secret, kind, id, c, errInvalid)
			if err != nil {
				if !errors.Is(err, errInvalid) {
					t.Fatalf("error %v does not wrap the invalid error", err)
				}
				continue
			}
			if got := Seal(secret, append(Begin(kind, id), payload...)); got != c {
				t.Fatalf("opened %q, which seals back to %q", c, got)
			}
			for rest := payload; len(rest) > 0; {
				s, after, ok := ReadText(rest)
				if !ok {
					break
				}
				if len(s)+len(after) >= len(rest)+1 && len(after) >= len(rest) {
					t.Fatalf("ReadText made no progress on %x", rest)
				}
				rest = after
			}
		}
	})
}
