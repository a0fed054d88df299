package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(m.Run())) }

// canned is an SDK HTTP client that answers every call with the next body queued (or the last one),
// with a correct X-Amz-Crc32 unless crc is set. Safe for concurrent use.
type canned struct {
	mu     sync.Mutex // protects the fields below
	bodies [][]byte
	status int
	crc    string // overrides the checksum header when set; "-" leaves it out
	// badCalls is how many calls, the first, get a wrong checksum.
	badCalls int
	gzip     bool
	calls    int
}

func (c *canned) answer(bodies ...[]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies, c.calls = bodies, 0
}

func (c *canned) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	c.mu.Lock()
	body := c.bodies[min(c.calls, len(c.bodies)-1)]
	c.calls++
	status, crc, gz := c.status, c.crc, c.gzip
	if c.calls <= c.badCalls {
		crc = "1"
	}
	c.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	if gz {
		body = gzipped(body)
	}
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"TEST"}}
	switch crc {
	case "":
		h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	case "-":
	default:
		h.Set("X-Amz-Crc32", crc)
	}
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	return &http.Response{
		Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body)), Request: r,
	}, nil
}

func client(h *canned, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		HTTPClient:  h,
	}, opts...)
}

// slots keeps decoded values of T in a slice.
type slots[T any] struct{ items []T }

func (s *slots[T]) Hint(n int) { s.items = slices.Grow(s.items, n) }
func (s *slots[T]) Next(*Target) unsafe.Pointer {
	var zero T
	s.items = append(s.items, zero)
	return unsafe.Pointer(&s.items[len(s.items)-1])
}
func (s *slots[T]) Drop(*Target) { s.items = s.items[:len(s.items)-1] }
func (s *slots[T]) Reset()       { s.items = s.items[:0] }

// anySlots keeps decoded values of any target's type, for collections.
type anySlots struct{ items []reflect.Value }

func (s *anySlots) Hint(int) {}
func (s *anySlots) Next(t *Target) unsafe.Pointer {
	v := reflect.New(t.Plan.Type())
	s.items = append(s.items, v)
	return v.UnsafePointer()
}
func (s *anySlots) Drop(*Target) { s.items = s.items[:len(s.items)-1] }
func (s *anySlots) Reset()       { s.items = s.items[:0] }

// jsonEnc writes attribute values as DynamoDB sends them, with random variations the SDK reads
// alike: whitespace, escapes (\uXXXX, surrogate pairs, \/), member order.
type jsonEnc struct {
	r     *rand.Rand
	plain bool // no variations
	// names escapes nothing in attribute names (escaped names are left to the SDK by design).
	names bool
}

func (e *jsonEnc) ws(b []byte) []byte {
	if e.plain || e.r.IntN(8) != 0 {
		return b
	}
	return append(b, " \n\t\r"[:1+e.r.IntN(4)]...)
}

// str writes s as a JSON string, escaping what JSON requires and, at random, more.
func (e *jsonEnc) str(b []byte, s string) []byte { return e.quote(b, s, e.plain) }

// quote writes s as a JSON string, escaping only what JSON requires when plain is set.
func (e *jsonEnc) quote(b []byte, s string, plain bool) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := s[i]
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, c) // invalid UTF-8 goes raw, as some services send it
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			switch c {
			case '\n':
				b = append(b, `\n`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = fmt.Appendf(b, `\u%04x`, c)
			}
		case !plain && e.r.IntN(16) == 0:
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				b = fmt.Appendf(b, `\u%04X\u%04x`, r1, r2)
			} else if r == '/' {
				b = append(b, `\/`...)
			} else {
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func (e *jsonEnc) av(b []byte, av types.AttributeValue) []byte {
	b = append(e.ws(b), '{')
	b = e.ws(b)
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		b = e.str(append(b, `"S":`...), v.Value)
	case *types.AttributeValueMemberN:
		b = e.str(append(b, `"N":`...), v.Value)
	case *types.AttributeValueMemberB:
		b = append(b, `"B":"`...)
		b = append(b, base64.StdEncoding.EncodeToString(v.Value)...)
		b = append(b, '"')
	case *types.AttributeValueMemberBOOL:
		b = strconv.AppendBool(append(b, `"BOOL":`...), v.Value)
	case *types.AttributeValueMemberNULL:
		b = strconv.AppendBool(append(b, `"NULL":`...), v.Value)
	case *types.AttributeValueMemberM:
		b = e.item(append(b, `"M":`...), v.Value)
	case *types.AttributeValueMemberL:
		b = append(b, `"L":[`...)
		for i, x := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.av(b, x)
		}
		b = append(b, ']')
	case *types.AttributeValueMemberSS:
		b = e.strs(append(b, `"SS":`...), v.Value)
	case *types.AttributeValueMemberNS:
		b = e.strs(append(b, `"NS":`...), v.Value)
	case *types.AttributeValueMemberBS:
		b = append(b, `"BS":[`...)
		for i, x := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, base64.StdEncoding.EncodeToString(x)...)
			b = append(b, '"')
		}
		b = append(b, ']')
	default:
		panic(fmt.Sprintf("av %T", av))
	}
	return append(e.ws(b), '}')
}

func (e *jsonEnc) strs(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.str(e.ws(b), s)
	}
	return append(b, ']')
}

// item writes a map of attribute values, in a random order (sorted when plain).
func (e *jsonEnc) item(b []byte, m map[string]types.AttributeValue) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !e.plain {
		e.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	}
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.quote(e.ws(b), k, e.plain || e.names)
		b = append(e.ws(b), ':')
		b = e.av(b, m[k])
	}
	return append(e.ws(b), '}')
}

var ctx = context.Background()

var tableName = aws.String("tbl")

var key = map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"}}

// planOf returns the plan of T.
func planOf[T any](tb testing.TB) *codec.Plan {
	tb.Helper()
	p, err := codec.PlanFor(reflect.TypeFor[T]())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}
