package singletable

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cursorKind is one cursor format, as TestCursorOnlyCanonical tries it: a good
// cursor, how to open a cursor as it, and cursors of other queries.
type cursorKind struct {
	name    string
	good    string
	open    func(string) error
	foreign map[string]string // name -> another query's cursor
}

func cursorKinds(t *testing.T) []cursorKind {
	t.Helper()
	q := newFuzzQueries(t)
	queryOf := func(e *Entity[tOrder], key tOrder) (*preparedQuery, string) {
		pq, err := e.core().prepareQuery(reflectValue(&key), nil)
		require.NoError(t, err)
		c, err := e.x.table.encodeCursor(pq, map[string]types.AttributeValue{"PK": sAV(pq.partition), "SK": sAV("ORDER#o001")})
		require.NoError(t, err)
		return pq, c
	}
	_, query := queryOf(q.orders, tOrder{CustomerID: "c1"})
	_, otherQuery := queryOf(q.orders, tOrder{CustomerID: "c2"})
	_, signedQuery := queryOf(q.signedOrders, tOrder{CustomerID: "c1"})

	fanoutOf := func(key sEvent) string {
		fq, err := q.events.core().prepareFanout(reflect.ValueOf(key), nil)
		require.NoError(t, err)
		c, err := q.plain.encodeFanoutCursor(fq)
		require.NoError(t, err)
		return c
	}
	fanout := fanoutOf(sEvent{Day: day0})
	otherFanout := fanoutOf(sEvent{Day: day0.AddDate(0, 0, 1)})

	key := map[string]types.AttributeValue{"PK": sAV("CUST#c1"), "SK": sAV("ORDER#o001")}
	scan, err := q.plain.encodeScanCursor(key)
	require.NoError(t, err)
	other, err := NewTable(offlineClient{}, "another", testTableOptions)
	require.NoError(t, err)
	otherScan, err := other.encodeScanCursor(key)
	require.NoError(t, err)
	legacyScan := base64.RawURLEncoding.EncodeToString([]byte("\x07CUST#c1\x0aORDER#o001")) // before the envelope

	return []cursorKind{
		{
			name: "query", good: query,
			open: func(c string) error {
				k := tOrder{CustomerID: "c1"}
				_, err := q.orders.core().prepareQuery(reflectValue(&k), []QueryOption{After(c)})
				return err
			},
			foreign: map[string]string{"another partition's": otherQuery, "a signed table's": signedQuery, "a fan-out's": fanout, "a sweep's": scan},
		},
		{
			name: "fan-out", good: fanout,
			open: func(c string) error {
				_, err := q.events.core().prepareFanout(reflect.ValueOf(sEvent{Day: day0}), []ShardQueryOption{After(c)})
				return err
			},
			foreign: map[string]string{"another day's": otherFanout, "a query's": query, "a sweep's": scan},
		},
		{
			name: "sweep checkpoint", good: scan,
			open:    func(c string) error { _, err := q.plain.decodeScanCursor(c); return err },
			foreign: map[string]string{"another table's": otherScan, "a query's": query, "a fan-out's": fanout, "a bare key (the format before the envelope)": legacyScan},
		},
	}
}

// Every cursor format goes through one seal and open: only the canonical
// encoding of an unaltered cursor of the same query opens; line breaks, padding,
// non-zero trailing bits, a flipped bit, truncation and other queries' cursors are
// refused with ErrInvalidCursor.
func TestCursorOnlyCanonical(t *testing.T) {
	for _, k := range cursorKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			require.NoError(t, k.open(k.good), "the cursor as sealed opens")
			refused := func(t *testing.T, what, c string) {
				t.Helper()
				err := k.open(c)
				assert.True(t, errors.Is(err, ErrInvalidCursor), "%s %q: %v", what, c, err)
			}
			mid := len(k.good) / 2
			for _, brk := range []string{"\n", "\r\n", "\r"} {
				refused(t, "a line break inside", k.good[:mid]+brk+k.good[mid:])
				refused(t, "a line break at the end", k.good+brk)
				refused(t, "a line break at the start", brk+k.good)
			}
			for _, pad := range []string{"=", "==", "===="} {
				refused(t, "padding", k.good+pad)
			}
			refused(t, "a space inside", k.good[:mid]+" "+k.good[mid:])
			refused(t, "the standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(k.good)+"+/")

			raw, err := base64.RawURLEncoding.DecodeString(k.good)
			require.NoError(t, err)
			if extra := len(k.good)*6 - len(raw)*8; extra > 0 {
				// The last character carries bits beyond the last byte: set one.
				const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
				last := strings.IndexByte(alphabet, k.good[len(k.good)-1])
				loose := k.good[:len(k.good)-1] + string(alphabet[last|1])
				dec, err := base64.RawURLEncoding.DecodeString(loose)
				require.NoError(t, err, "the lenient decoder reads it")
				require.Equal(t, raw, dec, "as the same bytes")
				refused(t, "non-zero trailing bits", loose)
			}
			for i := range raw {
				for bit := range 8 {
					flipped := append([]byte(nil), raw...)
					flipped[i] ^= 1 << bit
					refused(t, "a flipped bit", base64.RawURLEncoding.EncodeToString(flipped))
				}
			}
			for n := 1; n < len(raw); n++ {
				refused(t, "a truncated cursor", base64.RawURLEncoding.EncodeToString(raw[:n]))
			}
			refused(t, "a cut cursor", k.good[:len(k.good)-1])
			refused(t, "an extended cursor", k.good+"A")
			for what, c := range k.foreign {
				refused(t, what+" cursor", c)
			}
		})
	}
}
