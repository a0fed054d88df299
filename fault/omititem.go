package fault

import (
	"encoding/json"
	"net/http"
)

// OmitConditionItems forwards the request and removes from a failed
// condition's answer the item that ReturnValuesOnConditionCheckFailure asked
// for: "Item" of a ConditionalCheckFailedException (PutItem, UpdateItem,
// DeleteItem) and of each CancellationReasons entry of a
// TransactionCanceledException. It plays a DynamoDB that does not support
// the parameter (DynamoDB Local before 2.x), so that a client's fallback, a
// read after the failure, can be tested against a DynamoDB Local that does.
// Other answers pass unchanged.
func OmitConditionItems() Fault { return Fault{kind: KindOmitConditionItems} }

// omitConditionItems rewrites an error response as OmitConditionItems says.
func omitConditionItems(resp *http.Response) (*http.Response, error) {
	b, err := readResponseBody(resp)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		setResponseBody(resp, b)
		return resp, nil
	}
	delete(m, "Item")
	if raw, ok := m["CancellationReasons"]; ok {
		var reasons []map[string]json.RawMessage
		if json.Unmarshal(raw, &reasons) == nil {
			for _, r := range reasons {
				delete(r, "Item")
			}
			if out, err := json.Marshal(reasons); err == nil {
				m["CancellationReasons"] = out
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	setResponseBody(resp, out)
	return resp, nil
}
