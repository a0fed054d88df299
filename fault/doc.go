// Package fault injects the faults of the real DynamoDB service, which
// DynamoDB Local never produces, into the traffic between the AWS SDK and
// DynamoDB Local: throttling, server errors, connection resets, lost
// responses, unprocessed batch items, transaction conflicts, latency and
// global secondary index lag.
//
// An [Injector] is an HTTP client (dynamodb.Options.HTTPClient) wrapping
// the real one. It sits below the SDK's retry middleware, so the SDK's own
// retryer sees each injected fault and decides, as in production, whether
// to retry and what the caller finally gets. Faults are answered in
// DynamoDB's wire format (status, headers, JSON body, X-Amz-Crc32), so the
// SDK decodes them to its usual types:
//
//	client, inj := fault.NewClient(local.Get(t), func(o *fault.ClientOptions) { o.MaxBackoff = time.Millisecond })
//	inj.Add(fault.Rule{Ops: []string{"PutItem"}, Fault: fault.Throttle(), Times: 2})
//	_, err := client.PutItem(ctx, in) // succeeds on the SDK's third attempt
//	inj.Stats().Requests["PutItem"]   // 3
//
// # What the caller sees
//
// With the SDK's standard retryer (aws-sdk-go-v2 v1.48.0, service/dynamodb
// v1.74.0; verified by this package's tests):
//
//	Fault                  forwarded  SDK retries  error after the last attempt (errors.As finds)
//	Throttle               no         yes          *types.ProvisionedThroughputExceededException
//	APIError ThrottlingException ...  yes          *types.ThrottlingException
//	ServerError            no         yes          *types.InternalServerError
//	TxConflict (transact)  no         no           *types.TransactionCanceledException, one reason per action
//	TxConflict (Put/Update/Delete) no no           *types.TransactionConflictException
//	Reset                  no         yes          *smithyhttp.RequestSendError; errors.Is syscall.ECONNRESET
//	LoseResponse           yes        yes          as Reset, but the write landed: a retried conditional
//	                                               write can fail its condition (ConditionalCheckFailedException)
//	                                               and a retried ADD is applied twice
//	WithTimeout variants   as above   yes          errors.Is os.ErrDeadlineExceeded
//	Unprocessed            partly     n/a          no error: UnprocessedItems / UnprocessedKeys to send again
//	                                               (all withheld: a retried Throttle)
//	Delay                  yes        no (ended    the context's error in a *smithy.CanceledError
//	                                  context)
//	OmitConditionItems     yes        n/a          as DynamoDB answers, but a failed condition's
//	                                               ConditionalCheckFailedException (or transaction
//	                                               reasons) without the Item that
//	                                               ReturnValuesOnConditionCheckFailure asked for
//
// After the retries a retried error comes wrapped in *retry.MaxAttemptsError.
//
// # The SDK's retry behaviour, as read and tested
//
//   - Attempts: 3 for a retryer made by retry.NewStandard
//     (retry.DefaultMaxAttempts), as [NewClient] makes one; 4 for a DynamoDB
//     client left with its own default retryer (aws-sdk-go-v2 v1.48.0 and
//     later; 3 before). Backoff of retry.NewStandard: full jitter, random in
//     [0, min(x·2^i, 20s)) before the retry i (0 first), x 50ms (25ms in a
//     DynamoDB client's default retryer) and 1s after a throttle, which is
//     why tests set [ClientOptions.MaxBackoff] (then the backoff is
//     retry.NewExponentialJitterBackoff(MaxBackoff)).
//   - Retried: every error of the HTTP client (the SDK wraps it in
//     smithyhttp.RequestSendError, a ConnectionError) unless it says
//     RetryableError() false or the context ended; HTTP 500, 502, 503 and
//     504, and a 429 that is no modeled error (as a throttle); the codes
//     RequestTimeout and RequestTimeoutException; and the
//     throttle codes, which include ProvisionedThroughputExceededException,
//     ThrottlingException, RequestLimitExceeded, and also
//     TransactionInProgressException and LimitExceededException.
//   - Not retried: any other 4xx code, among them ConditionalCheckFailed,
//     TransactionCanceled, TransactionConflict, ValidationException,
//     ItemCollectionSizeLimitExceeded, ResourceNotFound.
//   - Retry quota: each client has a bucket of 500 tokens; a retry takes 14
//     (5 after a throttle; a timeout costs as any other error), given back if
//     that retry succeeds; every operation that succeeds at its first attempt
//     adds 1. So 50 operations that exhaust their 3 attempts on throttles
//     drain it (17 on other errors, and the 18th affords one retry of its
//     two), and from then on an operation fails after its first attempt with
//     a ratelimit.QuotaExceededError joined to the service's error, even for
//     a fault that one retry would have cleared, until successful attempts
//     have refilled the price of one retry (5 for a throttle).
//     ratelimit.None in retry.StandardOptions.RateLimiter turns the quota
//     off. (Before aws-sdk-go-v2 v1.48.0 a retry took 5 tokens, 10 after a
//     timeout; v1.48.0 made the "Retry Behavior 2.1" figures above, once
//     behind AWS_NEW_RETRIES_2026=true, the defaults.)
//   - X-Amz-Crc32: a mismatch is only logged (a WARN through
//     dynamodb.Options.Logger when the body is closed), never an error, and a
//     missing header counts as 0. DynamoDB Local sends none on its error
//     responses; the Injector fills it in, as the real service always sends
//     it, and computes it for every body it makes or rewrites.
//
// # Limits
//
// Rewriting a request body (Unprocessed, and the projection widened under a
// GSI lag) invalidates its SigV4 signature: fine for DynamoDB Local, which
// does not check signatures, not for the real service. Only the JSON 1.0
// protocol of DynamoDB is understood; PartiQL statements pass untouched.
package fault
