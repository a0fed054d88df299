package fault

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Lag is how long global secondary indexes lag behind the table; the zero
// Lag is none. Set it with [Injector.SetGSILag].
//
// # Model
//
// For every write that DynamoDB Local applies (PutItem, UpdateItem,
// DeleteItem, BatchWriteItem, TransactWriteItems) to a table that has a GSI,
// the Injector remembers the primary key written, when, and the item's image
// before the write, which it reads just before forwarding the write with a
// consistent GetItem (BatchGetItem for many keys) of its own. It learns each
// table's key schema and indexes once, with a DescribeTable of its own
// (forgotten when a CreateTable, UpdateTable or DeleteTable goes through).
//
// A write is pending while it is younger than Duration or while fewer than
// Reads+1 index reads of its table have been made since (so exactly Reads
// reads miss it); it is visible once neither holds. Every Query or Scan
// request (page) of a GSI of the table counts as one index read, whatever
// the index.
//
// While any write of a key is pending, a Query or Scan of a GSI of its table
// does not show the item's current image: the item is removed from the
// response's Items. If the item existed before the first pending write of
// the key, that old image had the index's key attributes, and it satisfies
// the Query's key condition (KeyConditionExpression or KeyConditions, both
// the partition and the sort key conditions), the old image is put back in,
// at its place in sort-key order for the Query's direction. So a new item
// appears late, an updated item keeps its old attribute values (and stays
// in its old index partition while its index keys change), and a deleted
// item stays visible, until the lag has passed. Count and ScannedCount are
// fixed to match.
//
// # Approximations
//
//   - The old image is read just before the write is forwarded: a concurrent
//     write of the same key in between makes it slightly wrong. A write whose
//     old image could not be read only hides the current image.
//   - Several pending writes of one key show the image before the first of
//     them until the last has passed (DynamoDB shows them one by one).
//   - The old image is not checked against FilterExpression. It is projected
//     to the index's projection and to ProjectionExpression or
//     AttributesToGet by top-level attribute names only (a path a.b keeps all
//     of a). To recognize items, an index read whose projection leaves out
//     the table's key attributes is forwarded with them added, and they are
//     removed from its response.
//   - Pages: the old image is put back only if it sorts inside the page, after
//     the request's ExclusiveStartKey and before the response's
//     LastEvaluatedKey (compared on the index sort key; ties go to the later
//     page). A page may then hold more than Limit items. On an index without
//     sort key, and for a Scan, it is put back only on a last page; for a Scan
//     also only on the first page of an unsegmented scan, at the end.
//   - Select=COUNT responses are not changed.
//   - Local secondary indexes and base-table reads, which DynamoDB serves
//     consistently anyway, are never changed.
//   - Writes are recorded when they succeed, including those whose response
//     [LoseResponse] then drops; PartiQL (ExecuteStatement) is not seen.
type Lag struct {
	// Duration is how long after a write it stays invisible to index reads.
	Duration time.Duration
	// Reads is how many index reads of the table miss a write after it.
	Reads int
}

func (l Lag) enabled() bool { return l.Duration > 0 || l.Reads > 0 }

// pending reports whether w is still invisible to the index read number
// read of its table at time now.
func (l Lag) pending(w pendingWrite, now time.Time, read int64) bool {
	return l.Duration > 0 && now.Sub(w.at) < l.Duration ||
		l.Reads > 0 && read-w.reads <= int64(l.Reads)
}

// tableLag is the GSI-lag state of one table.
type tableLag struct {
	reads  int64                     // index reads so far
	writes map[string][]pendingWrite // pending writes by key ID, oldest first
}

// pendingWrite is a write not yet visible to index reads.
type pendingWrite struct {
	at       time.Time
	reads    int64 // the table's index reads when the write landed
	old      item  // the image before the write; nil when there was no item
	oldKnown bool  // old could be read
}

// prune forgets the writes of key id that are visible to the read number
// read at now; they never become pending again.
func (st *tableLag) prune(id string, l Lag, now time.Time, read int64) {
	ws := st.writes[id]
	k := 0
	for k < len(ws) && !l.pending(ws[k], now, read) {
		k++
	}
	switch {
	case k == len(ws):
		delete(st.writes, id)
	case k > 0:
		st.writes[id] = slices.Clone(ws[k:])
	}
}

// pendingKey is a key about to be written, with its old image.
type pendingKey struct {
	table    string
	id       string
	key      item
	old      item
	oldKnown bool
}

// writeTarget is an item or key a write request writes.
type writeTarget struct {
	table string
	it    item // the Item of a put, the Key otherwise
}

// writeTargets returns what a write request writes.
func writeTargets(op string, body []byte) []writeTarget {
	type put struct {
		TableName string
		Item      item
		Key       item
	}
	var ts []writeTarget
	add := func(table string, p *put) {
		if p == nil {
			return
		}
		if table == "" {
			table = p.TableName
		}
		if p.Item != nil {
			ts = append(ts, writeTarget{table, p.Item})
		} else if p.Key != nil {
			ts = append(ts, writeTarget{table, p.Key})
		}
	}
	switch op {
	case opPut, opUpdate, opDelete:
		var p put
		if json.Unmarshal(body, &p) == nil {
			add("", &p)
		}
	case opBatchWrite:
		var in struct {
			RequestItems map[string][]struct{ PutRequest, DeleteRequest *put }
		}
		if json.Unmarshal(body, &in) == nil {
			for _, t := range slices.Sorted(maps.Keys(in.RequestItems)) {
				for _, w := range in.RequestItems[t] {
					add(t, w.PutRequest)
					add(t, w.DeleteRequest)
				}
			}
		}
	case opTransactWrite:
		var in struct {
			TransactItems []struct{ Put, Update, Delete *put }
		}
		if json.Unmarshal(body, &in) == nil {
			for _, a := range in.TransactItems {
				add("", a.Put)
				add("", a.Update)
				add("", a.Delete)
			}
		}
	}
	return ts
}

// prepareWrites returns the keys a write request is about to write in
// tables with a GSI, with their current images read from the next client.
func (i *Injector) prepareWrites(req *http.Request, op string, body []byte) []pendingKey {
	var keys []pendingKey
	infos := map[string]*tableInfo{}
	seen := map[string]bool{}
	for _, t := range writeTargets(op, body) {
		info, ok := infos[t.table]
		if !ok {
			info, _ = i.table(req, t.table)
			infos[t.table] = info
		}
		if info == nil || len(info.gsis) == 0 {
			continue
		}
		key, ok := info.keyOf(t.it)
		if !ok {
			continue
		}
		id, ok := info.keyID(key)
		if !ok || seen[t.table+"\x00"+id] {
			continue
		}
		seen[t.table+"\x00"+id] = true
		keys = append(keys, pendingKey{table: t.table, id: id, key: key})
	}
	switch {
	case len(keys) == 1:
		var out struct{ Item item }
		k := &keys[0]
		in := map[string]any{"TableName": k.table, "Key": k.key, "ConsistentRead": true}
		if i.probe(req, opGet, in, &out) == nil {
			k.old, k.oldKnown = out.Item, true
		}
	case len(keys) > 1:
		for start := 0; start < len(keys); start += 100 {
			i.readOldImages(req, infos, keys[start:min(start+100, len(keys))])
		}
	}
	return keys
}

// readOldImages reads the current images of keys (at most 100) with one
// BatchGetItem.
func (i *Injector) readOldImages(req *http.Request, infos map[string]*tableInfo, keys []pendingKey) {
	type keysAndAttributes struct {
		Keys           []item
		ConsistentRead bool
	}
	in := map[string]*keysAndAttributes{}
	for _, k := range keys {
		if in[k.table] == nil {
			in[k.table] = &keysAndAttributes{ConsistentRead: true}
		}
		in[k.table].Keys = append(in[k.table].Keys, k.key)
	}
	var out struct {
		Responses       map[string][]item
		UnprocessedKeys map[string]json.RawMessage
	}
	if i.probe(req, opBatchGet, map[string]any{"RequestItems": in}, &out) != nil {
		return
	}
	found := map[string]item{}
	for t, items := range out.Responses {
		for _, it := range items {
			if id, ok := infos[t].keyID(it); ok {
				found[t+"\x00"+id] = it
			}
		}
	}
	for n := range keys {
		k := &keys[n]
		if _, unprocessed := out.UnprocessedKeys[k.table]; unprocessed {
			continue // which keys were left is not worth decoding: Local never leaves any
		}
		k.old, k.oldKnown = found[k.table+"\x00"+k.id], true
	}
}

// recordWrites remembers that keys were just written.
func (i *Injector) recordWrites(keys []pendingKey) {
	now := i.now()
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.lag.enabled() {
		return
	}
	for _, k := range keys {
		st := i.lagState[k.table]
		if st == nil {
			st = &tableLag{writes: map[string][]pendingWrite{}}
			i.lagState[k.table] = st
		}
		st.prune(k.id, i.lag, now, st.reads+1)
		st.writes[k.id] = append(st.writes[k.id], pendingWrite{at: now, reads: st.reads, old: k.old, oldKnown: k.oldKnown})
	}
}

// readRequest is what the GSI lag needs of a Query or Scan.
type readRequest struct {
	TableName                 string
	IndexName                 string
	KeyConditionExpression    string
	KeyConditions             map[string]legacyCondition
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]json.RawMessage
	ScanIndexForward          *bool
	ExclusiveStartKey         item
	ProjectionExpression      string
	AttributesToGet           []string
	Select                    string
	TotalSegments             int
}

// pendingFor counts an index read of table and returns the pending writes
// it must not see, by key ID: for each key the oldest pending write.
func (i *Injector) pendingFor(table string) map[string]pendingWrite {
	now := i.now()
	i.mu.Lock()
	defer i.mu.Unlock()
	st := i.lagState[table]
	if st == nil {
		return nil
	}
	st.reads++
	pend := map[string]pendingWrite{}
	for id := range st.writes {
		st.prune(id, i.lag, now, st.reads)
		if ws := st.writes[id]; len(ws) > 0 {
			pend[id] = ws[0]
		}
	}
	return pend
}

// widenProjection makes a Query or Scan of a GSI that projects some
// attributes return the table's key attributes too, which lagRead needs to
// recognize items. It returns the request to forward and the attributes
// added, which lagRead strips from the response.
func (i *Injector) widenProjection(body []byte) ([]byte, []string) {
	var q readRequest
	if json.Unmarshal(body, &q) != nil || q.IndexName == "" ||
		q.ProjectionExpression == "" && len(q.AttributesToGet) == 0 {
		return body, nil
	}
	info := i.cachedTable(q.TableName)
	if info == nil {
		return body, nil
	}
	if _, ok := info.gsis[q.IndexName]; !ok {
		return body, nil
	}
	var have []string
	if q.ProjectionExpression != "" {
		for _, path := range strings.Split(q.ProjectionExpression, ",") {
			have = append(have, topAttribute(strings.TrimSpace(path), q.ExpressionAttributeNames))
		}
	} else {
		have = q.AttributesToGet
	}
	var missing []string
	for _, a := range []string{info.hash, info.sort} {
		if a != "" && !slices.Contains(have, a) {
			missing = append(missing, a)
		}
	}
	var m map[string]json.RawMessage
	if len(missing) == 0 || json.Unmarshal(body, &m) != nil {
		return body, nil
	}
	if q.ProjectionExpression != "" {
		names := maps.Clone(q.ExpressionAttributeNames)
		if names == nil {
			names = map[string]string{}
		}
		expr := q.ProjectionExpression
		k := 0
		for _, a := range missing {
			ph := ""
			for ph == "" || names[ph] != "" {
				ph = fmt.Sprintf("#faultkey%d", k)
				k++
			}
			names[ph] = a
			expr += ", " + ph
		}
		m["ProjectionExpression"] = mustMarshal(expr)
		m["ExpressionAttributeNames"] = mustMarshal(names)
	} else {
		m["AttributesToGet"] = mustMarshal(append(slices.Clone(q.AttributesToGet), missing...))
	}
	return mustMarshal(m), missing
}

// lagRead rewrites the successful response of a Query or Scan (body is
// the request as the SDK sent it) so that pending writes are not visible in
// it, and strips the attributes that widenProjection added.
func (i *Injector) lagRead(op string, body []byte, resp *http.Response, strip []string) (*http.Response, error) {
	var q readRequest
	if json.Unmarshal(body, &q) != nil || q.IndexName == "" {
		return resp, nil
	}
	info := i.cachedTable(q.TableName)
	if info == nil {
		return resp, nil // no write of this table was seen
	}
	ix, ok := info.gsis[q.IndexName]
	if !ok {
		return resp, nil // a local secondary index
	}
	pend := i.pendingFor(q.TableName)
	if len(pend) == 0 && len(strip) == 0 || q.Select == "COUNT" {
		return resp, nil
	}

	raw, err := readResponseBody(resp)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	var items []item
	if json.Unmarshal(raw, &out) != nil || json.Unmarshal(out["Items"], &items) != nil {
		setResponseBody(resp, raw)
		return resp, nil
	}
	var lek item
	_ = json.Unmarshal(out["LastEvaluatedKey"], &lek)

	kept := hidePending(items, info, pend, strip)
	removed := len(items) - len(kept)
	kept, inserted := insertOldImages(op, &q, info, ix, pend, kept, lek)
	if removed == 0 && inserted == 0 && len(strip) == 0 {
		setResponseBody(resp, raw)
		return resp, nil
	}
	setCounts(out, kept, removed, inserted)
	setResponseBody(resp, mustMarshal(out))
	return resp, nil
}

// hidePending returns the items of a page that no pending write hides, without the attributes strip
// names.
func hidePending(items []item, info *tableInfo, pend map[string]pendingWrite, strip []string) []item {
	kept := items[:0:0]
	for _, it := range items {
		if id, ok := info.keyID(it); ok {
			if _, hidden := pend[id]; hidden {
				continue
			}
		}
		for _, a := range strip {
			delete(it, a)
		}
		kept = append(kept, it)
	}
	return kept
}

// insertOldImages puts into kept, a page of a read q (op) of ix that ends with lek, the old images of
// the pending writes that the read would have returned before them, each at its place; inserted is how
// many. Only a Query whose key condition parses, or a Scan of the whole index in one page, gets them.
func insertOldImages(op string, q *readRequest, info *tableInfo, ix indexInfo, pend map[string]pendingWrite, kept []item, lek item) (_ []item, inserted int) {
	pl := placer{ix: ix, forward: q.ScanIndexForward == nil || *q.ScanIndexForward}
	var terms []keyTerm
	var canInsert bool
	if op == opQuery {
		var err error
		terms, err = keyTermsOf(q)
		canInsert = err == nil
	} else {
		canInsert = q.ExclusiveStartKey == nil && lek == nil && q.TotalSegments <= 1
	}
	for _, id := range slices.Sorted(maps.Keys(pend)) {
		w := pend[id]
		if !canInsert || w.old == nil || !hasAttrs(w.old, ix.hash, ix.sort) {
			continue
		}
		if op == opQuery && (!matchesKey(terms, w.old, ix) || !pl.inPage(w.old, q.ExclusiveStartKey, lek)) {
			continue
		}
		kept = pl.insert(kept, project(w.old, info, ix, q))
		inserted++
	}
	return kept, inserted
}

// setCounts sets the Items and Count of the response out to kept, and its ScannedCount, when it has
// one, to account for the items removed and inserted.
func setCounts(out map[string]json.RawMessage, kept []item, removed, inserted int) {
	out["Items"] = mustMarshal(kept)
	out["Count"] = mustMarshal(len(kept))
	if sc, ok := out["ScannedCount"]; ok {
		var n int
		if json.Unmarshal(sc, &n) == nil {
			out["ScannedCount"] = mustMarshal(max(n-removed+inserted, len(kept)))
		}
	}
}

// hasAttrs reports whether it has every named attribute ("" is ignored).
func hasAttrs(it item, names ...string) bool {
	for _, n := range names {
		if _, ok := it[n]; n != "" && !ok {
			return false
		}
	}
	return true
}

// matchesKey reports whether it satisfies the key condition terms on ix: a
// partition key equality and any sort key condition. A term on another
// attribute, or no partition term, means no.
func matchesKey(terms []keyTerm, it item, ix indexInfo) bool {
	partition := false
	for _, t := range terms {
		if t.attr != ix.hash && (t.attr != ix.sort || ix.sort == "") {
			return false
		}
		v, err := parseScalar(it[t.attr])
		if err != nil || !t.matches(v) {
			return false
		}
		if t.attr == ix.hash && t.op == "=" {
			partition = true
		}
	}
	return partition
}

// placer puts old images at their place in a page of an index.
type placer struct {
	ix      indexInfo
	forward bool
}

// after reports how a sorts against b in the read's direction: > 0 when a
// comes after b.
func (p placer) after(a, b item) (int, bool) {
	va, err := parseScalar(a[p.ix.sort])
	if err != nil {
		return 0, false
	}
	vb, err := parseScalar(b[p.ix.sort])
	if err != nil {
		return 0, false
	}
	c, ok := compare(va, vb)
	if !p.forward {
		c = -c
	}
	return c, ok
}

// inPage reports whether it belongs in the page that starts after esk and
// ends with lek (either nil).
func (p placer) inPage(it, esk, lek item) bool {
	if p.ix.sort == "" {
		return lek == nil
	}
	if esk != nil {
		if c, ok := p.after(it, esk); ok && c < 0 {
			return false
		}
	}
	if lek != nil {
		if c, ok := p.after(it, lek); ok && c >= 0 {
			return false
		}
	}
	return true
}

// insert puts it into items after every item that does not sort after it.
func (p placer) insert(items []item, it item) []item {
	if p.ix.sort == "" {
		return append(items, it)
	}
	for j, x := range items {
		if c, ok := p.after(it, x); ok && c < 0 {
			return slices.Insert(items, j, it)
		}
	}
	return append(items, it)
}

// project returns the attributes of it that a read of ix with q returns.
func project(it item, info *tableInfo, ix indexInfo, q *readRequest) item {
	img := maps.Clone(it)
	if ix.projection == "KEYS_ONLY" || ix.projection == "INCLUDE" {
		keep := map[string]bool{info.hash: true, info.sort: true, ix.hash: true, ix.sort: true}
		for _, a := range ix.include {
			keep[a] = true
		}
		maps.DeleteFunc(img, func(a string, _ json.RawMessage) bool { return !keep[a] })
	}
	var want []string
	switch {
	case q.ProjectionExpression != "":
		for _, path := range strings.Split(q.ProjectionExpression, ",") {
			want = append(want, topAttribute(strings.TrimSpace(path), q.ExpressionAttributeNames))
		}
	case len(q.AttributesToGet) > 0:
		want = q.AttributesToGet
	default:
		return img
	}
	maps.DeleteFunc(img, func(a string, _ json.RawMessage) bool { return !slices.Contains(want, a) })
	return img
}

// topAttribute returns the top-level attribute of a document path such as
// "#a.b[2]" or "a".
func topAttribute(path string, names map[string]string) string {
	end := strings.IndexAny(path, ".[")
	if end < 0 {
		end = len(path)
	}
	first := path[:end]
	if strings.HasPrefix(first, "#") {
		return names[first]
	}
	return first
}
