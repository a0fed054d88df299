package codec

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Types shared by the differential, fuzz and benchmark tests.

type (
	Status  string
	Count   int32
	Money   float64
	Blob    []byte
	Tags    []string
	Attrs   map[string]string
	Flag    bool
	MyTime  time.Time
	Counts  map[string]int64
	Matrix  [][]int
	ByteArr [4]byte
)

// valMarshaler marshals on a value receiver and unmarshals on a pointer receiver.
type valMarshaler struct{ A int }

func (v valMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: "vm:" + strconv.Itoa(v.A)}, nil
}

func (v *valMarshaler) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		n, err := strconv.Atoi(strings.TrimPrefix(a.Value, "vm:"))
		if err != nil {
			return err
		}
		v.A = n
	case *types.AttributeValueMemberNULL, nil:
		v.A = -1
	default:
		return errors.New("valMarshaler: want S")
	}
	return nil
}

// ptrMarshaler marshals and unmarshals on pointer receivers only: attributevalue uses them only when it
// can take the address.
type ptrMarshaler struct{ B string }

func (p *ptrMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(len(p.B))}, nil
}

func (p *ptrMarshaler) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		p.B = strings.Repeat("x", len(n.Value))
		return nil
	}
	p.B = "?"
	return nil
}

// nilMarshaler declines to marshal (nil, nil), so attributevalue encodes it as a plain string.
type nilMarshaler string

func (nilMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) { return nil, nil }

// errMarshaler fails for 13.
type errMarshaler int

func (e errMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if e == 13 {
		return nil, errors.New("unlucky")
	}
	return &types.AttributeValueMemberN{Value: strconv.Itoa(int(e))}, nil
}

// funcMarshaler is a func type with both interfaces, so it is supported.
type funcMarshaler func() string

func (f funcMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if f == nil {
		return &types.AttributeValueMemberS{Value: "nil func"}, nil
	}
	return &types.AttributeValueMemberS{Value: f()}, nil
}

func (f *funcMarshaler) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		v := s.Value
		*f = func() string { return v }
	}
	return nil
}

type Inner struct {
	X string
	Y int       `dynamodbav:"y,omitempty"`
	T time.Time `dynamodbav:"t"`
	P *Inner    `dynamodbav:",omitempty"`
}

type Base struct {
	ID      string `dynamodbav:"id"`
	Created time.Time
	Shadow  string
}

type PtrBase struct {
	Note   string
	Shadow string // hidden by Kitchen.Shadow
}

type unexportedBase struct {
	Visible string
	hidden  string
}

type Kitchen struct {
	_ struct{} `Type:"Kitchen" PK:"K#{S}"`

	S   string
	SP  *string
	SO  string `dynamodbav:",omitempty"`
	SN  string `dynamodbav:",nullempty"`
	B   bool
	BP  *bool
	BO  bool `dynamodbav:",omitempty"`
	I   int
	I8  int8
	I16 int16
	I32 int32
	I64 int64
	U   uint
	U8  uint8
	U16 uint16
	U32 uint32
	U64 uint64
	F32 float32
	F64 float64
	FS  float64 `dynamodbav:",string"`
	IS  int     `dynamodbav:",string"`
	IO  int     `dynamodbav:",omitempty"`
	IN  int64   `dynamodbav:",nullempty"`
	IP  *int
	FP  *float64
	IPO *int `dynamodbav:",omitempty"`

	Bytes  []byte
	BytesO []byte `dynamodbav:",omitempty"`
	Blob   Blob
	Arr    ByteArr

	T   time.Time
	TP  *time.Time
	TU  time.Time  `dynamodbav:",unixtime"`
	TUP *time.Time `dynamodbav:",unixtime"`
	TO  time.Time  `dynamodbav:",omitempty"`
	UT  attributevalue.UnixTime
	MT  MyTime

	Strs    []string
	StrsO   []string `dynamodbav:",omitempty"`
	StrsOE  []string `dynamodbav:",omitemptyelem"`
	StrsNE  []string `dynamodbav:",nullemptyelem"`
	SS      []string `dynamodbav:",stringset"`
	SSO     []string `dynamodbav:",stringset,omitempty,omitemptyelem"`
	Ints    []int
	NS      []int     `dynamodbav:",numberset"`
	FNS     []float64 `dynamodbav:",numberset"`
	BS      [][]byte
	BSet    []Blob `dynamodbav:",binaryset"`
	Bools   []bool
	PtrStrs []*string
	Matrix  Matrix
	TimeSS  []time.Time `dynamodbav:",stringset"`

	M       map[string]string
	MI      map[string]int
	MO      map[string]string `dynamodbav:",omitemptyelem"`
	MN      map[string]string `dynamodbav:",nullemptyelem"`
	MS      map[Status]int
	MInt    map[int]string
	MP      map[string]*int
	MSl     map[string][]string
	Counts  Counts
	Tags    Tags
	Attrs   Attrs
	IntArr  [3]int
	StrArr  [2]string
	EmptyAr [0]int

	Any    interface{}
	AnyO   any `dynamodbav:",omitempty"`
	Anys   []interface{}
	AnyMap map[string]interface{}

	Nested    Inner
	NestedP   *Inner
	NestedPO  *Inner `dynamodbav:",omitempty"`
	Nesteds   []Inner
	NestedPs  []*Inner
	NestedMap map[string]Inner

	Status Status
	Count  Count
	Money  Money
	Flag   Flag
	Num    attributevalue.Number
	NumS   attributevalue.Number `dynamodbav:",string"`
	PP     **string

	VM    valMarshaler
	VMP   *valMarshaler
	PM    ptrMarshaler
	PMP   *ptrMarshaler
	VMs   []valMarshaler
	PMs   []ptrMarshaler
	PMMap map[string]ptrMarshaler
	NilM  nilMarshaler
	EM    errMarshaler
	FM    funcMarshaler

	Renamed string `dynamodbav:"renamed_attr"`
	Skip    string `dynamodbav:"-"`
	Dash    string `dynamodbav:"-,omitempty"`

	unexported string

	Base
	*PtrBase
	unexportedBase
}

// Order is the 14-field benchmark item.
type Order struct {
	CustomerID string            `dynamodbav:"customerId"`
	OrderID    string            `dynamodbav:"orderId"`
	Status     string            `dynamodbav:"status"`
	Currency   string            `dynamodbav:"currency"`
	Email      string            `dynamodbav:"email"`
	ShipTo     string            `dynamodbav:"shipTo"`
	CreatedAt  time.Time         `dynamodbav:"createdAt"`
	Tags       []string          `dynamodbav:"tags"`
	Attrs      map[string]string `dynamodbav:"attrs"`
	Version    int64             `dynamodbav:"version"`
	Quantity   int64             `dynamodbav:"quantity"`
	WeightG    int64             `dynamodbav:"weightG"`
	Total      float64           `dynamodbav:"total"`
	Paid       bool              `dynamodbav:"paid"`
}

func sampleOrder() Order {
	return Order{
		CustomerID: "cust-7d3f2a",
		OrderID:    "ord-2024-000981",
		Status:     "SHIPPED",
		Currency:   "EUR",
		Email:      "someone@example.com",
		ShipTo:     "Rue de la Paix 1, 75002 Paris",
		CreatedAt:  time.Date(2024, 3, 9, 14, 5, 7, 123456789, time.UTC),
		Tags:       []string{"gift", "express", "fragile"},
		Attrs:      map[string]string{"channel": "web", "coupon": "SPRING24"},
		Version:    17,
		Quantity:   3,
		WeightG:    1250,
		Total:      129.95,
		Paid:       true,
	}
}
