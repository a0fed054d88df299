package fault

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
)

// withheld are the items or keys that [Unprocessed] took out of a batch
// request, to be reported unprocessed in its response.
type withheld struct {
	op string
	// writes are BatchWriteItem's withheld WriteRequests, by table.
	writes map[string][]json.RawMessage
	// keys are BatchGetItem's withheld KeysAndAttributes (the table's
	// parameters with the withheld Keys), by table.
	keys map[string]map[string]json.RawMessage
}

// batchEntry is one item or key of a batch request.
type batchEntry struct {
	table string
	raw   json.RawMessage
}

// withhold takes about fraction of the items (BatchWriteItem) or keys
// (BatchGetItem) out of body. It returns the rewritten body and what was
// withheld, or all when nothing would be left to forward.
func (i *Injector) withhold(op string, body []byte, fraction float64) (out []byte, held *withheld, all bool, err error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, false, fmt.Errorf("fault: %s: decode request: %w", op, err)
	}
	var entries []batchEntry
	var writeItems map[string][]json.RawMessage
	var getItems map[string]map[string]json.RawMessage
	switch op {
	case opBatchWrite:
		if err := json.Unmarshal(req["RequestItems"], &writeItems); err != nil {
			return nil, nil, false, fmt.Errorf("fault: %s: decode RequestItems: %w", op, err)
		}
		for _, t := range slices.Sorted(maps.Keys(writeItems)) {
			for _, w := range writeItems[t] {
				entries = append(entries, batchEntry{t, w})
			}
		}
	case opBatchGet:
		if err := json.Unmarshal(req["RequestItems"], &getItems); err != nil {
			return nil, nil, false, fmt.Errorf("fault: %s: decode RequestItems: %w", op, err)
		}
		for _, t := range slices.Sorted(maps.Keys(getItems)) {
			var keys []json.RawMessage
			if err := json.Unmarshal(getItems[t]["Keys"], &keys); err != nil {
				return nil, nil, false, fmt.Errorf("fault: %s: decode Keys of %s: %w", op, t, err)
			}
			for _, k := range keys {
				entries = append(entries, batchEntry{t, k})
			}
		}
	default:
		return nil, nil, false, fmt.Errorf("fault: Unprocessed on %s", op)
	}

	// Withhold n entries, n being fraction*len rounded at random so that
	// its mean is exact.
	var pick []int
	i.random(func(r *rand.Rand) {
		exact := fraction * float64(len(entries))
		n := int(math.Floor(exact))
		if r.Float64() < exact-float64(n) {
			n++
		}
		pick = r.Perm(len(entries))[:n]
	})
	if len(pick) == len(entries) {
		return nil, nil, true, nil
	}
	out = body
	if len(pick) == 0 {
		return body, nil, false, nil
	}
	isHeld := make([]bool, len(entries))
	for _, k := range pick {
		isHeld[k] = true
	}
	kept := map[string][]json.RawMessage{}
	heldBy := map[string][]json.RawMessage{}
	for k, e := range entries {
		if isHeld[k] {
			heldBy[e.table] = append(heldBy[e.table], e.raw)
		} else {
			kept[e.table] = append(kept[e.table], e.raw)
		}
	}
	held = &withheld{op: op}
	switch op {
	case opBatchWrite:
		req["RequestItems"] = mustMarshal(kept)
		held.writes = heldBy
	case opBatchGet:
		newItems := map[string]map[string]json.RawMessage{}
		held.keys = map[string]map[string]json.RawMessage{}
		for t, params := range getItems {
			if ks := kept[t]; len(ks) > 0 {
				p := maps.Clone(params)
				p["Keys"] = mustMarshal(ks)
				newItems[t] = p
			}
			if ks := heldBy[t]; len(ks) > 0 {
				p := maps.Clone(params)
				p["Keys"] = mustMarshal(ks)
				held.keys[t] = p
			}
		}
		req["RequestItems"] = mustMarshal(newItems)
	}
	return mustMarshal(req), held, false, nil
}

// addTo adds the withheld entries to the UnprocessedItems or
// UnprocessedKeys of a successful response.
func (h *withheld) addTo(resp *http.Response) (*http.Response, error) {
	body, err := readResponseBody(resp)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("fault: %s: decode response: %w", h.op, err)
	}
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	switch h.op {
	case opBatchWrite:
		unprocessed := map[string][]json.RawMessage{}
		if raw := out["UnprocessedItems"]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &unprocessed); err != nil {
				return nil, fmt.Errorf("fault: %s: decode UnprocessedItems: %w", h.op, err)
			}
			if unprocessed == nil {
				unprocessed = map[string][]json.RawMessage{}
			}
		}
		for t, ws := range h.writes {
			unprocessed[t] = append(unprocessed[t], ws...)
		}
		out["UnprocessedItems"] = mustMarshal(unprocessed)
	case opBatchGet:
		unprocessed := map[string]map[string]json.RawMessage{}
		if raw := out["UnprocessedKeys"]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &unprocessed); err != nil {
				return nil, fmt.Errorf("fault: %s: decode UnprocessedKeys: %w", h.op, err)
			}
			if unprocessed == nil {
				unprocessed = map[string]map[string]json.RawMessage{}
			}
		}
		for t, params := range h.keys {
			cur, ok := unprocessed[t]
			if !ok {
				unprocessed[t] = params
				continue
			}
			var a, b []json.RawMessage
			if err := json.Unmarshal(cur["Keys"], &a); err != nil {
				return nil, fmt.Errorf("fault: %s: decode UnprocessedKeys: %w", h.op, err)
			}
			_ = json.Unmarshal(params["Keys"], &b) // marshalled by withhold
			cur["Keys"] = mustMarshal(append(a, b...))
		}
		out["UnprocessedKeys"] = mustMarshal(unprocessed)
	}
	setResponseBody(resp, mustMarshal(out))
	return resp, nil
}
