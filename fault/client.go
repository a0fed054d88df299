package fault

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ClientOptions configure [NewClient]. The zero value of every field means
// its documented default.
type ClientOptions struct {
	// Injector configures the Injector (seed, clock).
	Injector Options

	// MaxAttempts is the SDK retryer's maximum number of attempts per
	// operation, the first included. Default: the SDK's (3).
	MaxAttempts int

	// MaxBackoff, when set, replaces the SDK's backoff (exponential with full
	// jitter, 0 to 1s·2^attempt, capped at 20s) by
	// retry.NewExponentialJitterBackoff(MaxBackoff), which for MaxBackoff
	// under 2s waits exactly MaxBackoff before each retry: tests stay fast.
	// Default: the SDK's backoff.
	MaxBackoff time.Duration

	// DynamoDB options apply last and may change anything, including the
	// retryer.
	DynamoDB []func(*dynamodb.Options)
}

// Local is a DynamoDB Local that hands out clients: localtest.Instance in this
// module's tests, dynamolocal.Instance in the harness's module.
type Local interface {
	// Client returns a new client of the instance; optFns apply last.
	Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client
}

// NewClient returns a DynamoDB client of inst whose requests go through a
// new Injector, and that Injector. The client is inst.Client
// with the Injector as HTTPClient in front of the instance's, response CRC32
// validation on (the Injector keeps X-Amz-Crc32 right when it rewrites a
// body; this SDK only logs a mismatch, through dynamodb.Options.Logger), and
// the SDK's standard retryer (retry.NewStandard: its retryable errors and
// its retry quota of 500 tokens, per client) with MaxAttempts and
// MaxBackoff applied. It makes no request.
func NewClient(inst Local, optFns ...func(*ClientOptions)) (*dynamodb.Client, *Injector) {
	var co ClientOptions
	for _, fn := range optFns {
		if fn != nil {
			fn(&co)
		}
	}
	var inj *Injector
	setup := func(o *dynamodb.Options) {
		inj = New(o.HTTPClient, func(o *Options) { *o = co.Injector })
		o.HTTPClient = inj
		o.DisableValidateResponseChecksum = false
		if co.MaxAttempts > 0 || co.MaxBackoff > 0 {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				if co.MaxAttempts > 0 {
					so.MaxAttempts = co.MaxAttempts
				}
				if co.MaxBackoff > 0 {
					so.MaxBackoff = co.MaxBackoff
					so.Backoff = retry.NewExponentialJitterBackoff(co.MaxBackoff)
				}
			})
		}
	}
	client := inst.Client(append([]func(*dynamodb.Options){setup}, co.DynamoDB...)...)
	return client, inj
}
