package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/singletable/singletable"
)

// explainJSON is what explain --json (and --dry-run --json) writes.
type explainJSON struct {
	Requests []requestJSON `json:"requests"`
	Notes    []string      `json:"notes,omitempty"`
	Cost     costJSON      `json:"cost"`
}

type requestJSON struct {
	API     string               `json:"api"`
	Table   string               `json:"table"`
	Entity  string               `json:"entity,omitempty"`
	Actions []singletable.Action `json:"actions"`
	Input   json.RawMessage      `json:"input,omitempty"`
	Cost    costJSON             `json:"cost"`
}

type costJSON struct {
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	Basis      string  `json:"basis,omitempty"`
}

// explainCall runs call under singletable.Explain, which sends nothing, and
// prints the requests it would send with their cost (each item read, updated
// or deleted without being carried counted at itemSize bytes; 0: up to 1 KB).
func (c *cli) explainCall(asJSON bool, itemSize int, call func(ctx context.Context) error) int {
	x, err := singletable.Explain(c.ctx, call)
	if err != nil {
		return c.fail(err)
	}
	if asJSON {
		out := explainJSON{Notes: x.Notes}
		for _, r := range x.Requests {
			rc := r.Cost(itemSize)
			out.Requests = append(out.Requests, requestJSON{API: r.API, Table: r.Table, Entity: r.Entity, Actions: r.Actions, Input: r.Input,
				Cost: costJSON{rc.ReadUnits, rc.WriteUnits, rc.Basis}})
		}
		tc := x.Cost(itemSize)
		out.Cost = costJSON{tc.ReadUnits, tc.WriteUnits, tc.Basis}
		if err := c.writeJSONIndent(out); err != nil {
			return c.fail(err)
		}
		return ExitOK
	}
	fmt.Fprintf(c.io.Out, "would send (nothing sent):\n%s", x.String())
	fmt.Fprintf(c.io.Out, "cost: %s\n", x.Cost(itemSize).String())
	return ExitOK
}

// explain shows what one call of an entity would send, and sends nothing.
func (c *cli) explain(args []string) int {
	f := c.newFlags("explain ENTITY get|put|create|delete|query|scan|count [the operation's flags]",
		"Shows the DynamoDB requests one call would send, as the table's client would receive them,\nwith their cost in capacity units, and sends nothing (singletable.Explain). The operation takes\nthe flags of its command: --key name=value for get, delete, query and count; the item on the\ninput for put and create; --index, --limit, --desc, --consistent for query and count.")
	itemSize := f.Int("item-size", 0, "reckon each item read, updated or deleted (not carried by the request) at this many bytes; default up to 1 KB")
	// The operation's flags, all defined: the ones an operation does not take
	// are refused below.
	q := addQueryFlags(f)
	f.positional = []string{"ENTITY", "the operation: get, put, create, delete, query, scan or count"}
	pos, code, done := f.parse(args, 2)
	if done {
		return code
	}
	e, err := c.entity(pos[0])
	if err != nil {
		return c.fail(err)
	}
	op := pos[1]
	given := map[string]bool{}
	f.Visit(func(fl *flagT) { given[fl.Name] = true })
	allowed := map[string][]string{
		"get":    {"key", "consistent"},
		"delete": {"key"},
		"put":    {},
		"create": {},
		"query":  {"key", "index", "limit", "cursor", "desc", "consistent"},
		"count":  {"key", "index", "limit", "desc", "consistent"},
		"scan":   {"index", "limit", "consistent"},
	}
	ok, known := allowed[op]
	if !known {
		return f.usageErr("unknown operation %q: want get, put, create, delete, query, scan or count", op)
	}
	for name := range given {
		if name == "json" || name == "item-size" || contains(ok, name) {
			continue
		}
		return f.usageErr("--%s does not apply to %s", name, op)
	}
	var call func(ctx context.Context) error
	switch op {
	case "get", "delete":
		key, err := keyOf(e, q.keys, true)
		if err != nil {
			return c.fail(err)
		}
		if op == "get" {
			var opts []singletable.GetOption
			if *q.consistent {
				opts = append(opts, singletable.Consistent())
			}
			call = func(ctx context.Context) error { _, err := e.Get(ctx, key, opts...); return err }
		} else {
			call = func(ctx context.Context) error { return e.Delete(ctx, key) }
		}
	case "put", "create":
		items, err := c.readItems(e)
		if err != nil {
			return c.fail(err)
		}
		write := e.Put
		if op == "create" {
			write = e.Create
		}
		call = func(ctx context.Context) error {
			for _, v := range items {
				if _, err := write(ctx, v); err != nil {
					return err
				}
			}
			return nil
		}
	case "query", "count":
		key, err := keyOf(e, q.keys, false)
		if err != nil {
			return c.fail(err)
		}
		opts, err := q.options()
		if err != nil {
			return c.fail(err)
		}
		if *q.cursor != "" {
			opts = append(opts, singletable.After(*q.cursor))
		}
		if op == "query" {
			call = func(ctx context.Context) error { _, err := e.Query(ctx, key, opts...); return err }
		} else {
			call = func(ctx context.Context) error { _, err := e.Count(ctx, key, opts...); return err }
		}
	case "scan":
		var opts []singletable.ScanOption
		if *q.index != "" {
			opts = append(opts, singletable.On(*q.index))
		}
		if *q.limit > 0 {
			opts = append(opts, singletable.Limit(*q.limit))
		}
		if *q.consistent {
			opts = append(opts, singletable.Consistent())
		}
		call = func(ctx context.Context) error { _, err := e.Scan(ctx, opts...); return err }
	}
	return c.explainCall(f.json, *itemSize, call)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
