package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Render renders requests and notes for a code review (the root package's
// Explanation.String): each request with its actions (keys, expressions as sent
// and resolved), its cost for items of up to 1 KB where the request does not
// carry the item, and its JSON; then the notes and the total.
func Render(reqs []Request, notes []string) string {
	var sb strings.Builder
	for i := range reqs {
		r := &reqs[i]
		fmt.Fprintf(&sb, "%d. %s", i+1, r.API)
		if r.Table != "" {
			fmt.Fprintf(&sb, " %s", r.Table)
		}
		if r.Entity != "" {
			fmt.Fprintf(&sb, " (%s)", r.Entity)
		}
		sb.WriteString("\n")
		for _, a := range r.Actions {
			a.render(&sb, len(r.Actions) > 1)
		}
		if r.Token != "" {
			line(&sb, "   token:", r.Token)
		}
		line(&sb, "   cost:", r.Cost(0).String())
		if r.Input != nil {
			line(&sb, "   input:", string(r.Input))
		} else if r.InputErr != "" {
			line(&sb, "   input:", "not written: "+r.InputErr)
		}
	}
	for _, n := range notes {
		line(&sb, "note:", n)
	}
	fmt.Fprintf(&sb, "total: %d requests, %s\n", len(reqs), Total(reqs, 0).Total())
	return sb.String()
}

func line(sb *strings.Builder, label, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(sb, "%-18s%s\n", label, text)
}

// render writes an action's lines; many marks one of several, shown by its Op.
func (a Action) render(sb *strings.Builder, many bool) {
	indent := "   "
	if many {
		line(sb, "   -", a.Op)
		indent = "     "
	}
	what := a.Key
	switch {
	case a.Op == "Put":
		what = fmt.Sprintf("%s (%d attributes, %d bytes)", a.Key, a.Attributes, a.Bytes)
	case a.Op == "Query" || a.Op == "Scan":
		what = ""
	}
	line(sb, indent+"key:", what)
	line(sb, indent+"index:", a.Index)
	writeExpr(sb, indent+"key condition:", a.KeyCondition)
	writeExpr(sb, indent+"filter:", a.Filter)
	writeExpr(sb, indent+"condition:", a.Condition)
	writeExpr(sb, indent+"update:", a.Update)
	writeExpr(sb, indent+"projection:", a.Projection)
	var opts []string
	if a.Consistent {
		opts = append(opts, "consistent")
	}
	if a.Descending {
		opts = append(opts, "descending")
	}
	if a.Limit > 0 {
		opts = append(opts, "limit "+strconv.Itoa(a.Limit))
	}
	if a.Select != "" {
		opts = append(opts, "select "+a.Select)
	}
	if a.Segments > 0 {
		opts = append(opts, fmt.Sprintf("segment %d of %d", a.Segment, a.Segments))
	}
	if a.ReturnValues != "" && a.ReturnValues != string(types.ReturnValueNone) {
		opts = append(opts, "returns "+a.ReturnValues)
	}
	line(sb, indent+"options:", strings.Join(opts, ", "))
	line(sb, indent+"after:", a.Start)
}

// writeExpr writes an expression as sent and, when it reads otherwise, resolved.
func writeExpr(sb *strings.Builder, label string, e Expression) {
	if e.Raw == "" {
		return
	}
	line(sb, label, e.Raw)
	if e.Text != e.Raw {
		line(sb, "", "= "+e.Text)
	}
}
