package fault

import (
	"fmt"
	"time"
)

// Kind names a family of faults; [Stats.Faults] counts fired faults by Kind.
type Kind string

// The kinds of fault, one per constructor (APIError's kind is KindAPIError
// whatever its code).
const (
	KindThrottle     Kind = "Throttle"
	KindServerError  Kind = "ServerError"
	KindAPIError     Kind = "APIError"
	KindReset        Kind = "Reset"
	KindLoseResponse Kind = "LoseResponse"
	KindUnprocessed  Kind = "Unprocessed"
	KindTxConflict   Kind = "TxConflict"
	KindDelay        Kind = "Delay"
	// KindOmitConditionItems is [OmitConditionItems].
	KindOmitConditionItems Kind = "OmitConditionItems"
)

// Fault is what a [Rule] does to a request it fires on. Make one with a
// constructor of this package; the zero Fault is invalid. A Fault is a small
// value, safe to copy and to share between rules.
type Fault struct {
	kind     Kind
	status   int           // API errors: HTTP status
	code     string        // API errors: the error code, as in __type
	message  string        // API errors: the message
	fraction float64       // Unprocessed
	delay    time.Duration // Delay
	timeout  bool          // Reset, LoseResponse: an i/o timeout instead of a connection reset
	then     func()        // LoseResponse: run after the request was forwarded, before the loss is reported
}

// Kind returns the family of f.
func (f Fault) Kind() Kind { return f.kind }

// String describes f, for logs.
func (f Fault) String() string {
	switch f.kind {
	case KindThrottle, KindServerError, KindAPIError:
		return fmt.Sprintf("%s(%d %s)", f.kind, f.status, f.code)
	case KindUnprocessed:
		return fmt.Sprintf("%s(%g)", f.kind, f.fraction)
	case KindDelay:
		return fmt.Sprintf("%s(%s)", f.kind, f.delay)
	case KindReset, KindLoseResponse:
		if f.timeout {
			return string(f.kind) + "(timeout)"
		}
	}
	return string(f.kind)
}

// Throttle answers, without forwarding, what DynamoDB answers a request over
// a provisioned table's capacity: HTTP 400 with
// {"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",...}.
// The SDK retries it (a throttle error code, retry cost 5 tokens) and, after
// its last attempt, returns an error in which errors.As finds a
// *types.ProvisionedThroughputExceededException (inside a
// *retry.MaxAttemptsError).
func Throttle() Fault {
	return Fault{kind: KindThrottle, status: 400, code: "ProvisionedThroughputExceededException",
		message: "The level of configured provisioned throughput for the table was exceeded. " +
			"Consider increasing your provisioning level with the UpdateTable API."}
}

// ServerError answers, without forwarding, HTTP 500 with DynamoDB's
// InternalServerError. The SDK retries it (status 500) and finally returns
// an error holding a *types.InternalServerError.
func ServerError() Fault {
	return Fault{kind: KindServerError, status: 500, code: "InternalServerError", message: "Internal server error"}
}

// APIError answers, without forwarding, any DynamoDB error response: the
// given HTTP status and {"__type":"com.amazonaws.dynamodb.v20120810#<code>",
// "message":message}. The SDK decodes a modelled code to its type in
// service/dynamodb/types (for example "ThrottlingException",
// "RequestLimitExceeded", "ItemCollectionSizeLimitExceededException") and
// any other code to a *smithy.GenericAPIError. Whether it retries depends on
// the status (500, 502, 503, 504) and the code (throttle codes and
// RequestTimeout): see the package documentation.
func APIError(status int, code, message string) Fault {
	if status < 400 || status > 599 || code == "" {
		panic(fmt.Sprintf("fault: APIError(%d, %q): want a 4xx or 5xx status and a code", status, code))
	}
	return Fault{kind: KindAPIError, status: status, code: code, message: message}
}

// Reset fails the request as a TCP connection reset before it reaches
// DynamoDB Local: Do returns a *url.Error whose chain holds
// syscall.ECONNRESET, as net/http would. The SDK wraps it in a
// RequestSendError and retries it; nothing was written.
func Reset() Fault { return Fault{kind: KindReset} }

// LoseResponse forwards the request, so a write lands, then drops
// DynamoDB Local's response and fails the request as a connection reset
// (syscall.ECONNRESET), as when a connection dies while the response is on
// its way. The SDK retries it like [Reset]: a retried write is applied a
// second time, and a retried conditional write may fail its condition
// because of the first. [Stats.LostWrites] counts the writes that landed
// before their response was lost.
func LoseResponse() Fault { return Fault{kind: KindLoseResponse} }

// WithTimeout returns f, a [Reset] or [LoseResponse], failing with an i/o
// timeout (os.ErrDeadlineExceeded, whose Timeout() is true) instead of a
// connection reset. The SDK retries it too, at twice the retry-quota cost of
// other errors (10 tokens).
func (f Fault) WithTimeout() Fault {
	if f.kind != KindReset && f.kind != KindLoseResponse {
		panic("fault: WithTimeout applies to Reset and LoseResponse only, not " + string(f.kind))
	}
	f.timeout = true
	return f
}

// Then returns f, a [LoseResponse], running fn after the request was
// forwarded (so a write has landed) and before its loss is reported to the
// SDK: fn plays another client whose write lands in between, before the
// caller can read the item back. fn must not use the Injector's client.
func (f Fault) Then(fn func()) Fault {
	if f.kind != KindLoseResponse {
		panic("fault: Then applies to LoseResponse only, not " + string(f.kind))
	}
	f.then = fn
	return f
}

// Unprocessed makes a BatchWriteItem or BatchGetItem leave about fraction
// (0 < fraction <= 1) of its items or keys unprocessed, as DynamoDB does
// under load: the injector removes them from the request before forwarding,
// so they are genuinely not written or read, and adds them to the response's
// UnprocessedItems or UnprocessedKeys (keys keep their table's
// ProjectionExpression, ConsistentRead and other parameters). The number
// withheld is fraction times the number of items, rounded up or down at
// random so that its mean is exact; which ones is random. When that is all
// of them, the answer is a [Throttle] error instead, as DynamoDB answers a
// batch of which nothing could be processed. A rule with this fault fires
// only on BatchWriteItem and BatchGetItem.
func Unprocessed(fraction float64) Fault {
	if !(fraction > 0 && fraction <= 1) {
		panic(fmt.Sprintf("fault: Unprocessed(%g): want 0 < fraction <= 1", fraction))
	}
	return Fault{kind: KindUnprocessed, fraction: fraction}
}

// TxConflict answers, without forwarding, what DynamoDB answers when an item
// is part of another ongoing transaction. TransactWriteItems and
// TransactGetItems get HTTP 400 TransactionCanceledException with one
// CancellationReason per action: {"Code":"TransactionConflict",...} for one
// action chosen at random and {"Code":"None"} for the others. PutItem,
// UpdateItem and DeleteItem get TransactionConflictException. The SDK
// retries neither. A rule with this fault fires only on those five
// operations.
func TxConflict() Fault { return Fault{kind: KindTxConflict} }

// Delay waits d (real time, whatever [Options.Now] says) before forwarding
// the request, then handles it normally. When the request's context ends
// first, the request is not forwarded and Do returns the context's error
// wrapped in a *url.Error, as net/http does; the SDK then returns a
// *smithy.CanceledError and does not retry.
func Delay(d time.Duration) Fault {
	if d <= 0 {
		panic(fmt.Sprintf("fault: Delay(%s): want a positive duration", d))
	}
	return Fault{kind: KindDelay, delay: d}
}

// appliesTo reports whether f can fire on operation op.
func (f Fault) appliesTo(op string) bool {
	switch f.kind {
	case KindUnprocessed:
		return op == opBatchWrite || op == opBatchGet
	case KindTxConflict:
		switch op {
		case opTransactWrite, opTransactGet, opPut, opUpdate, opDelete:
			return true
		}
		return false
	}
	return true
}
