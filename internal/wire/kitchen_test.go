package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// kitchen has a field of every type the codec supports, and some it leaves to attributevalue.
type (
	status   string
	blob     []byte
	attrs    map[string]string
	tags     []string
	myTime   time.Time
	counts   map[string]int
	numbered json.Number

	inner struct {
		X    string            `dynamodbav:"x"`
		Y    int               `dynamodbav:"y,omitempty"`
		T    time.Time         `dynamodbav:"t"`
		P    *inner            `dynamodbav:"p"`
		L    []inner           `dynamodbav:"l"`
		M    map[string]string `dynamodbav:"m"`
		Case string            // matched ignoring case: "case", "CASE"
	}
	Base struct {
		ID      string    `dynamodbav:"id"`
		Created time.Time `dynamodbav:"created"`
		Shadow  string    `dynamodbav:"shadow"`
	}
	PtrBase struct {
		Note   string `dynamodbav:"note"`
		Shadow string // same depth as Base.Shadow (untagged): ambiguous, dropped
	}

	// unmarshaler decodes itself: the wire path leaves its items to the attribute-value path.
	unmarshaler struct{ V string }

	kitchen struct {
		S      string   `dynamodbav:"s"`
		SP     *string  `dynamodbav:"sp"`
		SO     string   `dynamodbav:"so,omitempty"`
		Status status   `dynamodbav:"status"`
		Num    numbered `dynamodbav:"num"`
		B      bool     `dynamodbav:"b"`
		BP     *bool    `dynamodbav:"bp"`
		I      int      `dynamodbav:"i"`
		I8     int8     `dynamodbav:"i8"`
		I16    int16    `dynamodbav:"i16"`
		I32    int32    `dynamodbav:"i32"`
		I64    int64    `dynamodbav:"i64"`
		U      uint     `dynamodbav:"u"`
		U8     uint8    `dynamodbav:"u8"`
		U16    uint16   `dynamodbav:"u16"`
		U32    uint32   `dynamodbav:"u32"`
		U64    uint64   `dynamodbav:"u64"`
		F32    float32  `dynamodbav:"f32"`
		F64    float64  `dynamodbav:"f64"`
		IS     int      `dynamodbav:"is,string"`
		FS     float64  `dynamodbav:"fs,string"`
		IP     *int     `dynamodbav:"ip"`
		FP     *float64 `dynamodbav:"fp"`

		Bytes []byte     `dynamodbav:"bytes"`
		Blob  blob       `dynamodbav:"blob"`
		T     time.Time  `dynamodbav:"t"`
		TP    *time.Time `dynamodbav:"tp"`
		TU    time.Time  `dynamodbav:"tu,unixtime"`
		MT    myTime     `dynamodbav:"mt"` // convertible to time.Time: attribute values only

		Strs    []string    `dynamodbav:"strs"`
		Tags    tags        `dynamodbav:"tags"`
		SS      []string    `dynamodbav:"ss,stringset"`
		NS      []int       `dynamodbav:"ns,numberset"`
		FNS     []float64   `dynamodbav:"fns,numberset"`
		U8S     []uint16    `dynamodbav:"u8s,numberset"`
		BS      [][]byte    `dynamodbav:"bs"`
		Ints    []int       `dynamodbav:"ints"`
		Bools   []bool      `dynamodbav:"bools"`
		PtrStrs []*string   `dynamodbav:"ptrStrs"`
		Matrix  [][]int     `dynamodbav:"matrix"`
		Times   []time.Time `dynamodbav:"times"`

		M      map[string]string   `dynamodbav:"m"`
		Attrs  attrs               `dynamodbav:"attrs"`
		MI     map[string]int      `dynamodbav:"mi"`
		Counts counts              `dynamodbav:"counts"`
		MP     map[string]*int     `dynamodbav:"mp"`
		MSl    map[string][]string `dynamodbav:"msl"`
		MS     map[status]int      `dynamodbav:"ms"`

		Inner    inner            `dynamodbav:"inner"`
		InnerP   *inner           `dynamodbav:"innerP"`
		Inners   []inner          `dynamodbav:"inners"`
		InnerPs  []*inner         `dynamodbav:"innerPs"`
		InnerMap map[string]inner `dynamodbav:"innerMap"`

		Base
		*PtrBase

		// Decoded only from attribute values.
		Any   any               `dynamodbav:"any"`
		Arr   [3]int            `dynamodbav:"arr"`
		UM    unmarshaler       `dynamodbav:"um"`
		UMP   *unmarshaler      `dynamodbav:"ump"`
		MInt  map[int]string    `dynamodbav:"mint"`
		PP    **string          `dynamodbav:"pp"`
		Anys  []any             `dynamodbav:"anys"`
		AnyMp map[string]any    `dynamodbav:"anyMap"`
		UMs   []unmarshaler     `dynamodbav:"ums"`
		UMMap map[string]*inner `dynamodbav:"umMap"` // a plain map, for contrast

		CaseField string // no tag: "CaseField", matched ignoring case too
	}
)

func (u *unmarshaler) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		u.V = "S:" + v.Value
	case *types.AttributeValueMemberNULL:
		u.V = "NULL"
	default:
		return fmt.Errorf("unmarshaler: cannot take %T", av)
	}
	return nil
}

func (u unmarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: u.V}, nil
}

// avOnly are kitchen's attributes that only the attribute-value path decodes.
var avOnly = []string{"mt", "any", "arr", "um", "ump", "mint", "pp", "anys", "anyMap", "ums"}

// gen makes random values and attribute values, with DynamoDB's edge cases.
type gen struct{ r *rand.Rand }

var (
	strPool = []string{
		"", "a", "plain", "Ünïcödé ✓", "emoji 😀🎉", "quote \" backslash \\ slash /", "tab\there\nnewline",
		"\x01\x1f control", "\u2028\u2029", "日本語テキスト", "\xff\xfe invalid", "\xed\xa0\x80 surrogate bytes",
		strings.Repeat("long ", 50), "ORDER#2024-01-01#x", "NaN", "1e5", "-0",
	}
	// Numbers at DynamoDB's limits and texts the codec parses in its own ways.
	numPool = []string{
		"0", "-0", "1", "-1", "42", "3.25", "-0.5", "1e5", "1E-130", "-1E-130", "9.9999999999999999999999999999999999999E+125",
		"-9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999",
		"12345678901234567890123456789012345678", "0.00000000000000000000000000000000000001",
		"127", "128", "-128", "-129", "255", "256", "32767", "32768", "65535", "65536", "2147483647", "2147483648",
		"4294967295", "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616", "3.4028235e38", "3.5e38", "1e39",
		"1.7976931348623157e308", "1e309", "NaN", "Infinity", "-Infinity", "+Inf", "0x10", "1_000", "", " 1", "1.", ".5",
		"1700000000", "-62135596800", "253402300799",
	}
	timePool = []string{
		"2024-03-09T14:05:07.123456789Z", "2024-03-09T14:05:07Z", "1999-12-31T19:00:00.000000001-05:00",
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2024-02-30T00:00:00Z", "not a time", "2024-03-09",
		"2024-03-09T14:05:07+14:00",
	}
)

func (g *gen) str() string {
	if g.r.IntN(4) == 0 {
		b := make([]rune, g.r.IntN(8))
		for i := range b {
			switch g.r.IntN(4) {
			case 0:
				b[i] = rune(g.r.IntN(0x80))
			case 1:
				b[i] = rune(0x80 + g.r.IntN(0x780))
			case 2:
				b[i] = rune(0x800 + g.r.IntN(0xd000))
			default:
				b[i] = rune(0x10000 + g.r.IntN(0x100000))
			}
		}
		return string(b)
	}
	return strPool[g.r.IntN(len(strPool))]
}

func (g *gen) num() string {
	if g.r.IntN(3) == 0 {
		return strconv.FormatInt(g.r.Int64N(2000)-1000, 10)
	}
	return numPool[g.r.IntN(len(numPool))]
}

// value fills v (settable) with a random value of its type.
func (g *gen) value(v reflect.Value, depth int) {
	t := v.Type()
	if t == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(g.time()))
		return
	}
	if t == reflect.TypeFor[myTime]() {
		v.Set(reflect.ValueOf(myTime(g.time())))
		return
	}
	if t == reflect.TypeFor[numbered]() {
		v.SetString(strconv.Itoa(g.r.IntN(1000)))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(g.str())
	case reflect.Bool:
		v.SetBool(g.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		g.integer(v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if g.r.IntN(3) == 0 {
			v.SetUint(math.MaxUint64 >> (64 - t.Bits()))
		} else {
			v.SetUint(uint64(g.r.IntN(1000)))
		}
	case reflect.Float32, reflect.Float64:
		fs := []float64{0, 1.5, -0.25, 1e-130, 9.99e125, 123456.789, math.SmallestNonzeroFloat32, math.MaxFloat32}
		v.SetFloat(fs[g.r.IntN(len(fs))])
	case reflect.Pointer:
		if depth > 3 || g.r.IntN(4) == 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.value(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		g.slice(v, depth)
	case reflect.Map:
		g.mapOf(v, depth)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				g.value(v.Field(i), depth+1)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			g.value(v.Index(i), depth+1)
		}
	case reflect.Interface:
		g.iface(v)
	}
}

// integer fills v, a signed integer, with its type's least or greatest value
// or a small one.
func (g *gen) integer(v reflect.Value) {
	bits := v.Type().Bits()
	switch g.r.IntN(4) {
	case 0:
		v.SetInt(-1 << (bits - 1))
	case 1:
		v.SetInt(1<<(bits-1) - 1)
	default:
		v.SetInt(g.r.Int64N(1000) - 500)
	}
}

// slice fills v, a slice, with random bytes or up to 3 random elements, or
// leaves it nil.
func (g *gen) slice(v reflect.Value, depth int) {
	t := v.Type()
	if t.Elem().Kind() == reflect.Uint8 {
		if g.r.IntN(5) != 0 || depth > 0 { // elements of [][]byte must not be nil (a binary set)
			b := make([]byte, g.r.IntN(20))
			for i := range b {
				b[i] = byte(g.r.IntN(256))
			}
			v.Set(reflect.ValueOf(b).Convert(t))
		}
		return
	}
	if depth > 3 || g.r.IntN(5) == 0 {
		return
	}
	n := g.r.IntN(4)
	s := reflect.MakeSlice(t, n, n)
	for i := range n {
		g.value(s.Index(i), depth+1)
	}
	v.Set(s)
}

// mapOf fills v, a map, with up to 3 random entries, or leaves it nil.
func (g *gen) mapOf(v reflect.Value, depth int) {
	if depth > 3 || g.r.IntN(5) == 0 {
		return
	}
	t := v.Type()
	m := reflect.MakeMap(t)
	for range g.r.IntN(4) {
		k := reflect.New(t.Key()).Elem()
		g.value(k, depth+1)
		if k.Kind() == reflect.String && k.Len() == 0 {
			k.SetString("k") // attributevalue refuses empty map keys
		}
		e := reflect.New(t.Elem()).Elem()
		g.value(e, depth+1)
		m.SetMapIndex(k, e)
	}
	v.Set(m)
}

// iface fills v, an interface, with a string or a float64, or leaves it nil.
func (g *gen) iface(v reflect.Value) {
	switch g.r.IntN(3) {
	case 0:
		v.Set(reflect.ValueOf(g.str()))
	case 1:
		v.Set(reflect.ValueOf(float64(g.r.IntN(100))))
	}
}

func (g *gen) time() time.Time {
	zones := []*time.Location{time.UTC, time.FixedZone("", -5*3600), time.FixedZone("X", 14*3600)}
	return time.Unix(g.r.Int64N(1<<34)-1<<33, g.r.Int64N(1e9)).In(zones[g.r.IntN(len(zones))])
}

// av returns a random attribute value of any type.
func (g *gen) av(depth int) types.AttributeValue {
	n := 10
	if depth > 2 {
		n = 6
	}
	switch g.r.IntN(n) {
	case 0:
		return &types.AttributeValueMemberS{Value: g.str()}
	case 1:
		if g.r.IntN(3) == 0 {
			return &types.AttributeValueMemberS{Value: timePool[g.r.IntN(len(timePool))]}
		}
		return &types.AttributeValueMemberN{Value: g.num()}
	case 2:
		return &types.AttributeValueMemberN{Value: g.num()}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: g.r.IntN(2) == 0}
	case 4:
		return &types.AttributeValueMemberNULL{Value: g.r.IntN(8) != 0}
	case 5:
		b := make([]byte, g.r.IntN(6))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return &types.AttributeValueMemberB{Value: b}
	case 6:
		l := make([]types.AttributeValue, g.r.IntN(4))
		for i := range l {
			l[i] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberL{Value: l}
	case 7:
		m := map[string]types.AttributeValue{}
		for range g.r.IntN(4) {
			m[g.key()] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberM{Value: m}
	case 8:
		ss := make([]string, g.r.IntN(3))
		for i := range ss {
			ss[i] = g.num()
		}
		if g.r.IntN(2) == 0 {
			return &types.AttributeValueMemberNS{Value: ss}
		}
		return &types.AttributeValueMemberSS{Value: ss}
	default:
		bs := make([][]byte, g.r.IntN(3))
		for i := range bs {
			bs[i] = []byte(g.str())
		}
		return &types.AttributeValueMemberBS{Value: bs}
	}
}

// key returns an attribute name: one of kitchen's or inner's (in another case, sometimes), or another.
func (g *gen) key() string {
	names := []string{"s", "i", "x", "y", "t", "p", "l", "m", "Case", "case", "CASE", "CaseField", "casefield", "id", "note", "shadow", "other", "ünï", "b"}
	k := names[g.r.IntN(len(names))]
	if g.r.IntN(6) == 0 {
		k = strings.ToUpper(k)
	}
	return k
}

// kitchenItem returns a random kitchen item as the SDK would hold it, mutated at random so that some
// attributes are of unexpected types: a stored item with a type and keys.
func (g *gen) kitchenItem(mutate bool) map[string]types.AttributeValue {
	var k kitchen
	g.value(reflect.ValueOf(&k).Elem(), 0)
	m, err := attributevalue.MarshalMap(&k)
	if err != nil {
		panic(fmt.Sprintf("attributevalue cannot encode %+v: %v", k, err))
	}
	// Most items leave out the fields only the attribute-value path decodes, so that most decode on the
	// wire.
	if g.r.IntN(4) != 0 {
		for _, a := range avOnly {
			delete(m, a)
		}
	}
	m["PK"] = &types.AttributeValueMemberS{Value: "P#" + g.str()}
	m["SK"] = &types.AttributeValueMemberS{Value: "S#" + strconv.Itoa(g.r.IntN(1000))}
	m["Type"] = &types.AttributeValueMemberS{Value: "Kitchen"}
	if !mutate {
		return m
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	for range g.r.IntN(3) {
		switch g.r.IntN(4) {
		case 0: // an attribute of another type
			m[names[g.r.IntN(len(names))]] = g.av(0)
		case 1: // a new attribute, perhaps one matching a field ignoring case
			m[g.key()] = g.av(0)
		case 2:
			delete(m, names[g.r.IntN(len(names))])
		default: // a number at a limit into a numeric field
			nums := []string{"i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f32", "f64", "ip", "fp", "tu", "t"}
			m[nums[g.r.IntN(len(nums))]] = &types.AttributeValueMemberN{Value: g.num()}
		}
	}
	return m
}
