package fault

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
)

// Do sends req as the SDK asked, unless a rule answers it first. It
// implements [HTTPClient]; it is what the SDK calls once per attempt, below
// its retry middleware. Like http.Client.Do it always closes req.Body, and
// returns a non-nil error only with a nil response.
//
// In order, Do: counts the request; lets the first rule that fires answer
// it ([Throttle], [ServerError], [APIError], [TxConflict], [Reset]) or wait
// first ([Delay]); withholds items ([Unprocessed]); under a GSI lag, reads
// the old images of the items a write is about to change, or widens an
// index read's projection to the table's keys; forwards the request to the
// next client; records the write; drops the response ([LoseResponse]);
// fills in X-Amz-Crc32 where DynamoDB Local left it out; hides pending
// writes from an index read; adds the withheld items to the response.
// Every body it makes or rewrites gets its Content-Length and X-Amz-Crc32.
func (i *Injector) Do(req *http.Request) (*http.Response, error) {
	body, err := readRequestBody(req)
	if err != nil {
		return nil, err
	}
	op := operation(req)
	f, fired := i.pick(op, body)
	if !fired {
		return i.forward(req, op, body, nil)
	}
	switch f.kind {
	case KindThrottle, KindServerError, KindAPIError:
		return i.errorResponse(req, f.status, f.code, f.message, nil), nil
	case KindTxConflict:
		return i.txConflict(req, op, body), nil
	case KindReset:
		return nil, transportError(req, f.timeout)
	case KindDelay:
		if err := sleep(req, f.delay); err != nil {
			return nil, err
		}
		return i.forward(req, op, body, nil)
	}
	return i.forward(req, op, body, &f)
}

// forward sends the request on, applying f (Unprocessed or LoseResponse,
// or nil) and the GSI lag.
func (i *Injector) forward(req *http.Request, op string, body []byte, f *Fault) (*http.Response, error) {
	var held *withheld
	if f != nil && f.kind == KindUnprocessed {
		var all bool
		var err error
		body, held, all, err = i.withhold(op, body, f.fraction)
		if err != nil {
			return nil, err
		}
		if all {
			t := Throttle()
			return i.errorResponse(req, t.status, t.code, t.message, nil), nil
		}
	}

	lag := i.gsiLag()
	orig := body
	body, writes, strip := i.prepareLag(req, op, body, lag)
	i.forgetSchemaOnDDL(op, body)

	i.mu.Lock()
	i.stats.Forwarded[op]++
	i.mu.Unlock()
	resp, err := i.next.Do(withBody(req, body))
	if err != nil {
		return nil, err
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300

	if ok && len(writes) > 0 {
		i.recordWrites(writes)
	}
	if f != nil && f.kind == KindLoseResponse {
		return nil, i.loseResponse(req, op, resp, ok, f)
	}
	if err := fillChecksum(resp); err != nil {
		return nil, err
	}
	if !ok {
		if f != nil && f.kind == KindOmitConditionItems {
			return omitConditionItems(resp)
		}
		return resp, nil
	}
	if lag.enabled() && (op == opQuery || op == opScan) {
		if resp, err = i.lagRead(op, orig, resp, strip); err != nil {
			return nil, err
		}
	}
	if held != nil {
		if resp, err = held.addTo(resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// prepareLag readies a request for the GSI lag, when it is on: a write's
// old images are read (writes, recorded once it succeeds), and an index
// read's projection is widened to the table's keys (strip, the attributes
// added). It returns the body to send.
func (i *Injector) prepareLag(req *http.Request, op string, body []byte, lag Lag) (_ []byte, writes []pendingKey, strip []string) {
	switch {
	case lag.enabled() && isWrite(op):
		writes = i.prepareWrites(req, op, body)
	case lag.enabled() && (op == opQuery || op == opScan):
		body, strip = i.widenProjection(body)
	}
	return body, writes, strip
}

// loseResponse drops resp, the response to a request that f (LoseResponse)
// loses, and returns the transport error the SDK sees instead. ok is
// whether the request succeeded.
func (i *Injector) loseResponse(req *http.Request, op string, resp *http.Response, ok bool, f *Fault) error {
	drain(resp)
	if ok && isWrite(op) {
		i.mu.Lock()
		i.stats.LostWrites++
		i.mu.Unlock()
	}
	if f.then != nil {
		f.then()
	}
	return transportError(req, f.timeout)
}

// fillChecksum gives resp an X-Amz-Crc32 when it has none. DynamoDB always
// sends it; DynamoDB Local leaves it out of its error responses, and this
// SDK then checks the body against 0.
func fillChecksum(resp *http.Response) error {
	if resp.Header.Get("X-Amz-Crc32") != "" {
		return nil
	}
	b, err := readResponseBody(resp)
	if err != nil {
		return err
	}
	setResponseBody(resp, b)
	return nil
}

// txConflict answers a transaction or a single-item write as DynamoDB does
// when an item is in another ongoing transaction.
func (i *Injector) txConflict(req *http.Request, op string, body []byte) *http.Response {
	const conflict = "Transaction is ongoing for the item"
	if op != opTransactWrite && op != opTransactGet {
		return i.errorResponse(req, 400, "TransactionConflictException", conflict, nil)
	}
	var in struct{ TransactItems []json.RawMessage }
	_ = json.Unmarshal(body, &in)
	n := max(len(in.TransactItems), 1)
	var blamed int
	i.random(func(r *rand.Rand) { blamed = r.IntN(n) })
	reasons := make([]map[string]string, n)
	codes := make([]string, n)
	for k := range reasons {
		reasons[k] = map[string]string{"Code": "None"}
		codes[k] = "None"
	}
	reasons[blamed] = map[string]string{"Code": "TransactionConflict", "Message": conflict}
	codes[blamed] = "TransactionConflict"
	return i.errorResponse(req, 400, "TransactionCanceledException", "", map[string]any{
		"CancellationReasons": reasons,
		"Message": fmt.Sprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]",
			strings.Join(codes, ", ")),
	})
}
