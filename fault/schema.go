package fault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// item is an item or key in DynamoDB's JSON: attribute name to attribute
// value ({"S":"x"}, {"N":"1"}, ...), kept as raw JSON.
type item = map[string]json.RawMessage

// tableInfo is what the GSI lag needs of a table's schema.
type tableInfo struct {
	hash, sort string               // key attribute names; sort is "" without a sort key
	gsis       map[string]indexInfo // global secondary indexes, by name
}

// indexInfo is a global secondary index.
type indexInfo struct {
	hash, sort string   // key attribute names; sort is "" without a sort key
	projection string   // ALL, KEYS_ONLY or INCLUDE
	include    []string // NonKeyAttributes, for INCLUDE
}

// keyOf returns the primary key attributes of it, or false when one is
// missing.
func (t *tableInfo) keyOf(it item) (item, bool) {
	k := item{}
	for _, a := range []string{t.hash, t.sort} {
		if a == "" {
			continue
		}
		v, ok := it[a]
		if !ok {
			return nil, false
		}
		k[a] = v
	}
	return k, true
}

// keyID returns a string that identifies the primary key of it, equal for
// equal keys whatever their JSON spelling, or false when a key attribute
// is missing or not a scalar.
func (t *tableInfo) keyID(it item) (string, bool) {
	var b bytes.Buffer
	for _, a := range []string{t.hash, t.sort} {
		if a == "" {
			continue
		}
		v, err := parseScalar(it[a])
		if err != nil {
			return "", false
		}
		b.WriteString(v.canonical())
		b.WriteByte(0)
	}
	return b.String(), true
}

// describedTable is the part of DescribeTable's answer that tableInfo needs.
type describedTable struct {
	Table struct {
		KeySchema              []keySchemaElement
		GlobalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []keySchemaElement
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
		}
	}
}

type keySchemaElement struct {
	AttributeName string
	KeyType       string
}

func keyNames(ks []keySchemaElement) (hash, sort string) {
	for _, k := range ks {
		switch k.KeyType {
		case "HASH":
			hash = k.AttributeName
		case "RANGE":
			sort = k.AttributeName
		}
	}
	return hash, sort
}

// table returns the schema of the table named name, from the cache or by a
// DescribeTable sent to the next client with the headers of orig.
func (i *Injector) table(orig *http.Request, name string) (*tableInfo, error) {
	i.mu.Lock()
	t, ok := i.tables[name]
	i.mu.Unlock()
	if ok {
		return t, nil
	}
	var d describedTable
	if err := i.probe(orig, opDescribeTable, map[string]any{"TableName": name}, &d); err != nil {
		return nil, err
	}
	t = &tableInfo{gsis: map[string]indexInfo{}}
	t.hash, t.sort = keyNames(d.Table.KeySchema)
	if t.hash == "" {
		return nil, fmt.Errorf("fault: DescribeTable %s: no HASH key", name)
	}
	for _, g := range d.Table.GlobalSecondaryIndexes {
		ix := indexInfo{projection: g.Projection.ProjectionType, include: g.Projection.NonKeyAttributes}
		ix.hash, ix.sort = keyNames(g.KeySchema)
		t.gsis[g.IndexName] = ix
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if cur, ok := i.tables[name]; ok {
		return cur, nil
	}
	i.tables[name] = t
	return t, nil
}

// cachedTable returns the schema of a table learnt before, if any.
func (i *Injector) cachedTable(name string) *tableInfo {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.tables[name]
}

// forgetSchemaOnDDL drops what is known of a table that a CreateTable,
// UpdateTable or DeleteTable is about to change.
func (i *Injector) forgetSchemaOnDDL(op string, body []byte) {
	switch op {
	case "CreateTable", "UpdateTable", "DeleteTable":
	default:
		return
	}
	var in struct{ TableName string }
	if json.Unmarshal(body, &in) != nil || in.TableName == "" {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.tables, in.TableName)
	delete(i.lagState, in.TableName)
}

// probe sends an operation of the Injector's own to the next client, with
// the URL, context and headers (credentials included) of orig, and decodes
// its answer into out. Rules do not apply to it.
func (i *Injector) probe(orig *http.Request, op string, in, out any) error {
	body := mustMarshal(in)
	req := withBody(orig, body)
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	req.Header.Del("Amz-Sdk-Request")
	i.mu.Lock()
	i.stats.Probes++
	i.mu.Unlock()
	resp, err := i.next.Do(req)
	if err != nil {
		return fmt.Errorf("fault: %s: %w", op, err)
	}
	b, err := readResponseBody(resp)
	if err != nil {
		return fmt.Errorf("fault: %s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fault: %s: %s: %s", op, resp.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("fault: %s: decode: %w", op, err)
	}
	return nil
}
