package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable"
)

// itemLine is one item as the item commands write it: a line of JSON.
type itemLine struct {
	Type string            `json:"type"`
	Key  map[string]string `json:"key,omitempty"`
	Item map[string]any    `json:"item"`
	// Partial says the item lacks attributes (read through an index that does
	// not project them all).
	Partial bool `json:"partial,omitempty"`
	// Unknown says the item's type names no registered entity: Item is the raw
	// item.
	Unknown bool `json:"unknown,omitempty"`
}

// cursorLine is the last line of a query page that has more: the --cursor
// that reads the next.
type cursorLine struct {
	Cursor string `json:"cursor"`
}

// line is the JSON line of v, a value of e.
func line(e *singletable.AnyEntity, v any, partial bool) (itemLine, error) {
	attrs, err := e.Attributes(v)
	if err != nil {
		return itemLine{}, err
	}
	l := itemLine{Type: e.Type(), Item: attrs, Partial: partial}
	if k, err := e.Key(v); err == nil {
		l.Key = k
	}
	return l, nil
}

// keyOf builds the value of e the --key inputs give; a missing input of the
// primary key is named (unless the call's own rule, a query's prefix, allows
// it).
func keyOf(e *singletable.AnyEntity, keys keyFlags, needAll bool) (any, error) {
	v, err := e.FromKeyInputs(keys)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	if _, rendered := keys["PK"]; needAll && !rendered { // given as rendered key attributes, ParseKey checked them
		for _, in := range e.KeyInputs() {
			if _, ok := keys[in]; !ok {
				return nil, usagef("%s's key is rendered from %v: --key %s=... is missing", e.Type(), e.KeyInputs(), in)
			}
		}
	}
	return v, nil
}

// itemCommand parses an item command of ENTITY (get, query, delete...) and
// returns the entity with its flags parsed; done when it has finished.
func (c *cli) entityArg(f *flags, args []string) (e *singletable.AnyEntity, code int, done bool) {
	f.positional = []string{"ENTITY (one of " + fmt.Sprint(c.t.EntityTypes()) + ")"}
	pos, code, done := f.parse(args, 1)
	if done {
		return nil, code, true
	}
	e, err := c.entity(pos[0])
	if err != nil {
		return nil, c.fail(err), true
	}
	return e, 0, false
}

// runCall runs call, or with --dry-run explains it: prints the requests it
// would send and their cost, and sends nothing.
func (c *cli) runCall(f *flags, call func(ctx context.Context) error) int {
	if f.dry != nil && *f.dry {
		return c.explainCall(f.json, 0, call)
	}
	if err := call(c.ctx); err != nil {
		return c.fail(err)
	}
	return ExitOK
}

// get reads one item.
func (c *cli) get(args []string) int {
	f := c.newFlags("get ENTITY --key name=value ... [--consistent]",
		"Reads one item of ENTITY by its primary key, rendered from the --key inputs (the entity's\nattributes, e.g. --key customerId=c1; or the table's key attributes, --key PK=... --key SK=...),\nand writes it as a line of JSON: {\"type\",\"key\",\"item\"}. Exit code 3 when there is none.\nCost: one GetItem, 0.5 RCU per 4 KB (1 with --consistent).")
	keys := keyFlags{}
	f.Var(keys, "key", "a key input, name=value (repeat for each)")
	consistent := f.Bool("consistent", false, "a strongly consistent read")
	e, code, done := c.entityArg(f, args)
	if done {
		return code
	}
	key, err := keyOf(e, keys, true)
	if err != nil {
		return c.fail(err)
	}
	var opts []singletable.GetOption
	if *consistent {
		opts = append(opts, singletable.Consistent())
	}
	v, err := e.Get(c.ctx, key, opts...)
	if err != nil {
		return c.fail(err)
	}
	l, err := line(e, v, false)
	if err != nil {
		return c.fail(err)
	}
	if err := c.writeJSON(l); err != nil {
		return c.fail(err)
	}
	return ExitOK
}

// queryOpts are the query flags.
type queryOpts struct {
	keys                   keyFlags
	index, cursor          *string
	limit                  *int
	descending, consistent *bool
}

func addQueryFlags(f *flags) *queryOpts {
	q := &queryOpts{keys: keyFlags{}}
	f.Var(q.keys, "key", "a key input, name=value (repeat for each): the partition key's inputs, then sort key inputs to narrow")
	q.index = f.String("index", "", "query this index instead of the base table")
	q.limit = f.Int("limit", 0, "read one page of at most N items (DynamoDB's Limit) and print the --cursor of the next; default every page")
	q.cursor = f.String("cursor", "", "resume after the page that printed this cursor")
	q.descending = f.Bool("desc", false, "in descending sort key order")
	q.consistent = f.Bool("consistent", false, "a strongly consistent read (not on a global index)")
	return q
}

func (q *queryOpts) options(extra ...singletable.QueryOption) ([]singletable.QueryOption, error) {
	opts := extra
	if *q.index != "" {
		opts = append(opts, singletable.On(*q.index))
	}
	if *q.limit < 0 {
		return nil, usagef("--limit %d: want a positive number", *q.limit)
	}
	if *q.limit > 0 {
		opts = append(opts, singletable.Limit(*q.limit))
	}
	if *q.descending {
		opts = append(opts, singletable.Descending())
	}
	if *q.consistent {
		opts = append(opts, singletable.Consistent())
	}
	return opts, nil
}

// query reads the entity's items under a key.
func (c *cli) query(args []string) int {
	f := c.newFlags("query ENTITY [--index I] --key name=value ... [--limit N] [--cursor C] [--desc]",
		"Queries ENTITY's items in the partition the --key inputs render (of the base table, or of\n--index), narrowed by the sort key's inputs given, and writes each as a line of JSON. With\n--limit, one page: its last line is {\"cursor\":...} when there are more (pass it to --cursor).\nCost: 0.5 RCU per 4 KB read (items of other types in the partition included).")
	q := addQueryFlags(f)
	e, code, done := c.entityArg(f, args)
	if done {
		return code
	}
	key, err := keyOf(e, q.keys, false)
	if err != nil {
		return c.fail(err)
	}
	opts, err := q.options()
	if err != nil {
		return c.fail(err)
	}
	cursor := *q.cursor
	for {
		page, err := e.Query(c.ctx, key, append(opts, singletable.After(cursor))...)
		if err != nil {
			return c.fail(err)
		}
		for _, v := range page.Items {
			l, err := line(e, v, page.Partial)
			if err != nil {
				return c.fail(err)
			}
			if err := c.writeJSON(l); err != nil {
				return c.fail(err)
			}
		}
		cursor = page.Cursor
		if cursor == "" {
			return ExitOK
		}
		if *q.limit > 0 {
			if err := c.writeJSON(cursorLine{Cursor: cursor}); err != nil {
				return c.fail(err)
			}
			return ExitOK
		}
	}
}

// scan reads every item of the table, or of one entity.
func (c *cli) scan(args []string) int {
	f := c.newFlags("scan [--type ENTITY] [--segments N] [--limit N]",
		"Scans the table and writes every item, decoded by its type, as a line of JSON; an item of\nno registered type is written raw, with \"unknown\":true. --type keeps one entity's items.\n--segments N reads N segments in parallel (lines then interleave). Progress is shown on a\nterminal. Cost: every item of the table, of every type, 0.5 RCU per 4 KB.")
	typ := f.String("type", "", "only the items of this entity")
	segments := f.Int("segments", 1, "read the table in N parallel segments")
	limit := f.Int("limit", 0, "stop after N items written; default all")
	if _, code, done := f.parse(args, 0); done {
		return code
	}
	if *segments < 1 || *segments > 1000000 {
		return f.usageErr("--segments %d: want 1 to 1000000", *segments)
	}
	if *limit < 0 {
		return f.usageErr("--limit %d: want a positive number", *limit)
	}
	byGo := map[reflect.Type]*singletable.AnyEntity{}
	for _, name := range c.t.EntityTypes() {
		e, err := c.t.AnyEntity(name)
		if err != nil {
			return c.fail(err)
		}
		byGo[e.GoType()] = e
	}
	var only *singletable.AnyEntity
	if *typ != "" {
		e, err := c.entity(*typ)
		if err != nil {
			return c.fail(err)
		}
		only = e
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	total, _ := c.tableSize(ctx)
	bar := c.newProgress("scan "+c.t.Name(), total.items, "items")
	var (
		mu       sync.Mutex
		written  int
		scanned  int64
		firstErr error
	)
	emit := func(l itemLine) bool { // false: stop
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil || *limit > 0 && written >= *limit {
			return false
		}
		if err := c.writeJSON(l); err != nil {
			firstErr = err
			return false
		}
		written++
		return !(*limit > 0 && written >= *limit)
	}
	seg := func(ctx context.Context, i int) error {
		var opts []singletable.ScanOption
		if *segments > 1 {
			opts = append(opts, singletable.Segments(*segments), singletable.Segment(i))
		}
		cursor := ""
		for {
			var items []any
			var page singletable.Page[any]
			var err error
			if only != nil {
				page, err = only.Scan(ctx, append(opts, singletable.After(cursor))...)
			} else {
				topts := []singletable.TableScanOption{singletable.OnUnknown(singletable.UnknownCollect), singletable.After(cursor)}
				for _, o := range opts {
					topts = append(topts, o)
				}
				page, err = c.t.Scan(ctx, topts...)
			}
			if err != nil {
				return err
			}
			items = page.Items
			mu.Lock()
			scanned += int64(page.Scanned)
			n, w := scanned, written
			mu.Unlock()
			bar.set(n, fmt.Sprintf("%d written", w))
			for _, v := range items {
				var l itemLine
				if raw, ok := v.(singletable.RawItem); ok {
					l = itemLine{Type: rawType(raw, c.t.Options().TypeAttribute), Item: raw.JSON(), Unknown: true}
				} else if e := byGo[reflect.TypeOf(v)]; e != nil {
					if l, err = line(e, v, page.Partial); err != nil {
						return err
					}
				} else {
					return fmt.Errorf("an item of Go type %T matches no entity", v)
				}
				if !emit(l) {
					cancel()
					return nil
				}
			}
			cursor = page.Cursor
			if cursor == "" {
				return nil
			}
		}
	}
	errs := make([]error, *segments)
	var wg sync.WaitGroup
	for i := range *segments {
		wg.Go(func() { errs[i] = seg(ctx, i) })
	}
	wg.Wait()
	bar.finish(scanned, fmt.Sprintf("%d written", written))
	if firstErr != nil {
		return c.fail(firstErr)
	}
	for _, err := range errs {
		if err != nil && !(errors.Is(err, context.Canceled) && c.ctx.Err() == nil) {
			return c.fail(err)
		}
	}
	return ExitOK
}

// rawType is the type attribute of an item of no registered type.
func rawType(item singletable.RawItem, attr string) string {
	if s, ok := item[attr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}


// readItems reads the JSON objects of the input, each an item of e (its
// attributes by stored name; or a line as get writes it, whose "item" is
// taken).
func (c *cli) readItems(e *singletable.AnyEntity) ([]any, error) {
	d := json.NewDecoder(bufio.NewReader(c.io.In))
	d.UseNumber()
	var out []any
	for n := 1; ; n++ {
		var obj map[string]any
		if err := d.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			return nil, usagef("item %d of the input: %v (want JSON objects of %s's attributes)", n, err, e.Type())
		}
		if inner, ok := obj["item"].(map[string]any); ok && len(obj) <= 5 && obj["type"] != nil {
			if obj["type"] != e.Type() {
				return nil, usagef("item %d of the input is a %v, not a %s", n, obj["type"], e.Type())
			}
			obj = inner // a line of get, query or scan
		}
		v, err := e.FromAttributes(obj)
		if err != nil {
			return nil, usagef("item %d of the input: %v", n, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usagef("no item on the input: give %s's attributes as a JSON object, e.g. %s put %s < item.json", e.Type(), c.prog, e.Type())
	}
	return out, nil
}

// put writes items through the entity's write pipeline.
func (c *cli) put(args []string) int {
	f := c.newFlags("put ENTITY [--create] [--yes] [--dry-run] < items.json",
		"Writes each JSON object of the input (ENTITY's attributes by stored name, or a line that get,\nquery or scan wrote) through the entity's write pipeline, as Entity.Put does: version checked\nand incremented, unique values guarded, timestamps, defaults and validation applied. What the\npipeline refuses is refused (exit code 4): a stale version, a value another item holds.\n--create fails if the item exists. Writes each stored item as a line of JSON. Asks first\nunless --yes (without a terminal, --yes is needed). Cost: 1 WCU per KB; a versioned or unique\nentity's write is an update or a transaction.")
	create := f.Bool("create", false, "create: refuse an item that exists (Entity.Create)")
	f.writer()
	e, code, done := c.entityArg(f, args)
	if done {
		return code
	}
	items, err := c.readItems(e)
	if err != nil {
		return c.fail(err)
	}
	write := e.Put
	verb := "put"
	if *create {
		write, verb = e.Create, "create"
	}
	call := func(ctx context.Context) error {
		for _, v := range items {
			stored, err := write(ctx, v)
			if err != nil {
				return err
			}
			if *f.dry {
				continue
			}
			l, err := line(e, stored, false)
			if err != nil {
				return err
			}
			if err := c.writeJSON(l); err != nil {
				return err
			}
		}
		return nil
	}
	if !*f.dry && !c.confirm(*f.yes, fmt.Sprintf("%s %d %s item(s) in table %s?", verb, len(items), e.Type(), c.t.Name())) {
		return ExitDeclined
	}
	return c.runCall(f, call)
}

// delete deletes an item through the entity's write pipeline.
func (c *cli) delete(args []string) int {
	f := c.newFlags("delete ENTITY --key name=value ... [--yes] [--dry-run]",
		"Deletes the item of ENTITY at the key the --key inputs render, through the entity's write\npipeline, as Entity.Delete does: an item of another type is left alone (exit code 4), its\nunique values' guards are freed, and a versioned entity's item is deleted only at the version\ngiven (--key version=N, the version read) unless --any-version. Deleting a missing item\nsucceeds. Asks first unless --yes. Cost: 1 WCU per KB (a transaction, 2, with unique values).")
	keys := keyFlags{}
	f.Var(keys, "key", "a key input, name=value (repeat for each)")
	anyVersion := f.Bool("any-version", false, "delete whatever version is stored (singletable.Clobber)")
	f.writer()
	e, code, done := c.entityArg(f, args)
	if done {
		return code
	}
	key, err := keyOf(e, keys, true)
	if err != nil {
		return c.fail(err)
	}
	k, _ := e.Key(key)
	if !*f.dry && !c.confirm(*f.yes, fmt.Sprintf("delete %s %s from table %s?", e.Type(), keyText(k), c.t.Name())) {
		return ExitDeclined
	}
	return c.runCall(f, func(ctx context.Context) error {
		var opts []singletable.WriteOption
		if *anyVersion {
			opts = append(opts, singletable.Clobber())
		}
		if err := e.Delete(ctx, key, opts...); err != nil {
			return err
		}
		if !*f.dry {
			if f.json {
				return c.writeJSON(map[string]any{"deleted": e.Type(), "key": k})
			}
			fmt.Fprintf(c.io.Out, "deleted %s %s\n", e.Type(), keyText(k))
		}
		return nil
	})
}

// keyText renders a primary key: "PK=ORDER#o1 SK=ORDER".
func keyText(k map[string]string) string {
	names := make([]string, 0, len(k))
	for name := range k {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, name+"="+k[name])
	}
	return strings.Join(parts, " ")
}
