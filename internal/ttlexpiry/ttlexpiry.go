// Package ttlexpiry holds the time-to-live arithmetic of the root package: a
// derived ttl's options and expiry (base plus after, in Unix seconds) and how it
// is stored in the ttl field, SkipExpired's rule on a TTL as stored (a number of
// Unix seconds at or before now, and no more than five years before it, as
// DynamoDB's TTL deletes), and turning DynamoDB's TTL on for an attribute.
package ttlexpiry

import (
	"context"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/expr"
	"github.com/singletable/singletable/internal/wrap"
)

var timeType = reflect.TypeFor[time.Time]()

// FieldProblem says why field f cannot hold a TTL ("": it can): DynamoDB's TTL
// is a number of Unix seconds, an integer or a time.Time stored with unixtime.
func FieldProblem(f *codec.Field) string {
	base := derefType(f.Type)
	switch {
	case base == timeType && !f.UnixTime:
		return "a time.Time is stored as RFC 3339 text, which DynamoDB's TTL ignores: tag it dynamodbav:\"" + f.Name + ",unixtime\" to store Unix seconds"
	case f.AsString:
		return "the string option stores the number as text, which DynamoDB's TTL ignores"
	case base != timeType && !isInteger(base.Kind()):
		return "DynamoDB's TTL is a number of Unix seconds: use an integer field or a time.Time tagged unixtime, not " + f.Type.String()
	}
	return ""
}

// BaseProblem says why field f cannot be the base a ttl is derived from ("":
// it can): a time.Time (stored any way) or an integer of Unix seconds.
func BaseProblem(f *codec.Field) string {
	base := derefType(f.Type)
	if base != timeType && (!isInteger(base.Kind()) || f.AsString) {
		return "the base must be a time.Time or an integer of Unix seconds, not " + f.Type.String()
	}
	return ""
}

// derefType is t with one pointer taken off.
func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// isInteger reports whether k is a signed or unsigned integer kind.
func isInteger(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64 && k != reflect.Uintptr
}

// TagOptions are the options ParseTag accepts after ttl, as a tag writes them;
// it refuses any other.
var TagOptions = []string{"from=", "after="}

// ParseTag parses the options of a derived ttl's tag ("from=ATTR",
// "after=DURATION"); reason says what is wrong with them ("": nothing).
func ParseTag(mods []string) (from string, after time.Duration, reason string) {
	var afterText string
	for _, m := range mods {
		k, v, _ := strings.Cut(m, "=")
		if !slices.Contains(TagOptions, k+"=") {
			k = "" // refused below
		}
		switch k {
		case "from":
			from = v
		case "after":
			afterText = v
		default:
			return "", 0, "unknown ttl option " + strconv.Quote(m) + " (want from=ATTR,after=DURATION)"
		}
	}
	if from == "" || afterText == "" {
		return "", 0, "a derived ttl needs both from=ATTR and after=DURATION"
	}
	after, err := ParseAfter(afterText)
	if err != nil {
		return "", 0, "ttl after=" + afterText + ": " + err.Error()
	}
	return from, after, ""
}

// ParseAfter parses a duration: time.ParseDuration's text, or whole days ("30d").
func ParseAfter(text string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(text, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 365*1000 {
			return 0, fmt.Errorf("want a count of days from 1, or a Go duration such as 720h")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(text)
}

// Expiry returns the ttl derived from the base's value fv (a time.Time, or an
// integer of Unix seconds, of milliseconds with ms) plus after; false: no base
// (nil or zero).
func Expiry(fv reflect.Value, after time.Duration, ms bool) (int64, bool) {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return 0, false
		}
		fv = fv.Elem()
	}
	if fv.IsZero() {
		return 0, false
	}
	var t time.Time
	switch {
	case fv.Type() == timeType:
		t = fv.Interface().(time.Time)
	case fv.CanInt() && ms:
		t = time.UnixMilli(fv.Int())
	case fv.CanInt():
		t = time.Unix(fv.Int(), 0)
	case ms:
		t = time.UnixMilli(int64(fv.Uint()))
	default:
		t = time.Unix(int64(fv.Uint()), 0)
	}
	return t.Add(after).Unix(), true
}

// Store sets the settable ttl field fv to sec (ok false: to its zero value): a
// time.Time or an integer, or a pointer to one. A sec the integer cannot hold is
// refused, naming the field as label, with an error wrapping invalid.
func Store(fv reflect.Value, sec int64, ok bool, label string, invalid error) error {
	fv.Set(reflect.Zero(fv.Type()))
	if !ok {
		return nil
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch {
	case fv.Type() == timeType:
		fv.Set(reflect.ValueOf(time.Unix(sec, 0)))
	case fv.CanInt():
		if fv.OverflowInt(sec) {
			return fmt.Errorf("singletable: %s: %d does not fit %s: %w", label, sec, fv.Type(), invalid)
		}
		fv.SetInt(sec)
	default:
		if sec < 0 || fv.OverflowUint(uint64(sec)) {
			return fmt.Errorf("singletable: %s: %d does not fit %s: %w", label, sec, fv.Type(), invalid)
		}
		fv.SetUint(uint64(sec))
	}
	return nil
}

// horizon is how far in the past, in years, a TTL may lie and still be deleted
// by DynamoDB: an older one is ignored.
const horizon = 5

// Oldest is the oldest TTL DynamoDB still deletes at now, in Unix seconds.
func Oldest(now time.Time) int64 { return max(1, now.AddDate(-horizon, 0, 0).Unix()) }

// Filter is the filter expression on attribute attr that keeps the items not
// expired from oldest to now (Unix seconds): no TTL, a TTL that is not a
// number, or one outside oldest..now.
func Filter(b *expr.Builder, attr string, now, oldest int64) string {
	name := b.Name(attr)
	return "attribute_not_exists(" + name + ") OR NOT attribute_type(" + name + ", " + b.S("N") + ") OR " +
		name + " > " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(now, 10)}) + " OR " +
		name + " < " + b.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(oldest, 10)})
}

// Expired reports whether a TTL stored as the number text n lies from oldest to
// now, both included.
func Expired(n string, now, oldest int64) bool {
	return numberAtLeast(n, oldest) && !numberAtLeast(n, now+1)
}

// numberAtLeast reports whether the DynamoDB number text n is at least v,
// exactly (n may be a decimal or carry an exponent); false for a text that is not
// a number.
func numberAtLeast(n string, v int64) bool {
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return i >= v
	}
	r, ok := new(big.Rat).SetString(n)
	return ok && r.Cmp(new(big.Rat).SetInt64(v)) >= 0
}

// Enable turns DynamoDB's TTL on for attribute attr of the table
// (DescribeTimeToLive, then UpdateTimeToLive unless it is on already). TTL on
// for another attribute is an error wrapping invalid; errors are worded after
// "singletable: EnableTTL <table>: ".
func Enable(ctx context.Context, c wrap.TTLClient, table *string, attr string, invalid error) error {
	d, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: table})
	if err != nil {
		return err
	}
	if desc := d.TimeToLiveDescription; desc != nil && desc.AttributeName != nil {
		switch cur := aws.ToString(desc.AttributeName); {
		case (desc.TimeToLiveStatus == types.TimeToLiveStatusEnabled || desc.TimeToLiveStatus == types.TimeToLiveStatusEnabling) && cur == attr:
			return nil
		case desc.TimeToLiveStatus == types.TimeToLiveStatusEnabled || desc.TimeToLiveStatus == types.TimeToLiveStatusEnabling:
			return fmt.Errorf("TTL is on for attribute %q, not %q; DynamoDB allows one: %w", cur, attr, invalid)
		}
	}
	_, err = c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)}})
	return err
}
