package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// row is one line of the table. A row without a target is for reference.
type row struct {
	what, ours, baseline, ratio, target string
	met                                 verdict
}

type verdict uint8

const (
	noTarget verdict = iota
	met
	missed
	notRun
)

func (v verdict) String() string {
	return [...]string{"", "yes", "**no**", "not run"}[v]
}

// check turns the conditions of a row with a target into its verdict.
func check(measured bool, conds ...bool) verdict {
	if !measured {
		return notRun
	}
	for _, c := range conds {
		if !c {
			return missed
		}
	}
	return met
}

func allMet(rows []row) bool {
	for _, r := range rows {
		if r.met == missed || r.met == notRun {
			return false
		}
	}
	return true
}

// table computes the rows from the results.
func table(r *results) []row {
	rows := []row{
		codecRow(r, "Encode", "hand", "hand-written", codecTarget{maxRatio: 1.3, maxAllocs: 15}),
		codecRow(r, "Encode", "guregu", "guregu/dynamo", codecTarget{faster: true}),
		codecRow(r, "Encode", "attributevalue", "attributevalue.MarshalMap", codecTarget{speedup: 2.5}),
		codecRow(r, "Encode", "hand-slab", "hand-written, one slab", codecTarget{}),
		codecRow(r, "Decode", "hand", "hand-written", codecTarget{maxRatio: 1.5, maxAllocs: 5}),
		codecRow(r, "Decode", "guregu", "guregu/dynamo", codecTarget{faster: true}),
		codecRow(r, "Decode", "attributevalue", "attributevalue.UnmarshalMap", codecTarget{speedup: 3}),
		// The targets: the library over the raw SDK call doing the same work with the
		// hand-written codec, so that what is left is the library's own cost (keys,
		// expressions, type checks, options) and what its codec costs over hand-written
		// code. The rows after each are for reference.
		sdkRow(r, "Get", "raw+hand", 1, "GetItem + hand-written decoder", true),
		sdkRow(r, "Get", "raw", 1, "GetItem alone (no decoding)", false),
		sdkRow(r, "Get", "raw+av", 1, "GetItem + attributevalue.UnmarshalMap", false),
		sdkRow(r, "Put", "raw+hand+guard", 1, "hand-written encoder + PutItem with the library's condition", true),
		sdkRow(r, "Put", "raw+hand", 1, "hand-written encoder + unconditional PutItem", false),
		sdkRow(r, "Put", "raw+av+guard", 1, "attributevalue.MarshalMap + PutItem with the library's condition", false),
		sdkRow(r, "Query100", "raw+hand", queryPage, "Query + hand-written decoder", true),
		sdkRow(r, "Query100", "raw", queryPage, "Query alone (no decoding)", false),
		sdkRow(r, "Query100", "raw+av", queryPage, "Query + attributevalue.UnmarshalListOfMaps", false),
		keyRow(r),
		// Issue 20: decoding on the wire path, against the raw SDK call with
		// attributevalue, and the floor: the same call answered with nothing.
		wireRow(r, "Get", 1, "raw+av", "GetItem + attributevalue.UnmarshalMap", wireTarget{maxRatio: 0.75, maxAllocRatio: 0.6}),
		wireRow(r, "Get", 1, "singletable-sdk", "the library decoding the SDK's attribute values (WithWireDecoding(false))", wireTarget{}),
		floorRow(r, "Get", 1),
		wireRow(r, "Query100", queryPage, "raw+av", "Query + attributevalue.UnmarshalListOfMaps", wireTarget{maxRatio: 0.35, maxAllocs: 12}),
		wireRow(r, "Query100", queryPage, "singletable-sdk", "the library decoding the SDK's attribute values (WithWireDecoding(false))", wireTarget{}),
		floorRow(r, "Query100", queryPage),
	}
	for _, n := range []int{1, 10, 100, 1000} {
		rows = append(rows, scaleRow(r, "Query"+fmt.Sprint(n), n, fmt.Sprintf("Query, %d-item page", n)))
	}
	rows = append(rows, scaleRow(r, "Scan10000", 10000, "Scan, 10,000 items in pages of 1,000 (the library's wire decoder on the SDK's Scan)"))
	rows = append(rows,
		localRow(r, "Get", "raw+av", "raw SDK + attributevalue", true),
		localRow(r, "Get", "singletable-sdk", "the library decoding the SDK's attribute values (as before the wire path)", true),
		localRow(r, "Put", "raw+av+guard", "raw SDK + attributevalue, same condition", true),
		localRow(r, "Put", "raw+av", "raw SDK + attributevalue, unconditional PutItem", false),
		localRow(r, "Query100", "raw+av", "raw SDK + attributevalue", true),
		localRow(r, "Query100", "singletable-sdk", "the library decoding the SDK's attribute values (as before the wire path)", true),
	)
	return rows
}

// wireTarget is what a wire row must meet; zero fields set no target.
type wireTarget struct {
	maxRatio      float64 // median call at most this times the baseline's
	maxAllocRatio float64 // allocations at most this times the baseline's
	maxAllocs     float64 // allocations per call, or per item
}

// wireRow compares the library, on the wire path, with a baseline through the
// canned transport: median calls (per item for Query) from the interleaved
// benchmark, allocations from the standard one.
func wireRow(r *results, op string, per float64, base, label string, t wireTarget) row {
	unit, p50 := "-ns/op", "-p50-ns/op"
	if per > 1 {
		unit, p50 = "-ns/item", "-p50-ns/item"
	}
	tb := "BenchmarkSDKTime/" + op
	ab := "BenchmarkSDK/" + op + "/"
	ns, ok1 := r.value(tb, "singletable"+p50)
	bns, ok2 := r.value(tb, base+p50)
	allocs, ok3 := r.value(ab+"singletable", "allocs/op")
	ballocs, ok4 := r.value(ab+base, "allocs/op")
	ratio, ok5 := r.ratio(tb, "singletable"+p50, base+p50)
	mean, ok6 := r.ratio(tb, "singletable"+unit, base+unit)
	text := ratioText(ratio, ok5)
	if ok6 {
		text += fmt.Sprintf(" (means %.2f×)", mean)
	}
	if ok3 && ok4 && ballocs > 0 {
		text += fmt.Sprintf("; allocs %.2f×", allocs/ballocs)
	}
	out := row{
		what:     opNames[op] + ", canned transport: the library vs " + label,
		ours:     timeAllocs(ns, allocs/per, ok1, ok3, false),
		baseline: timeAllocs(bns, ballocs/per, ok2, ok4, false),
		ratio:    text,
	}
	var targets []string
	var conds []bool
	if t.maxRatio > 0 {
		targets = append(targets, fmt.Sprintf("≤ %.2f×", t.maxRatio))
		conds = append(conds, ratio <= t.maxRatio)
	}
	if t.maxAllocRatio > 0 {
		targets = append(targets, fmt.Sprintf("allocs ≤ %.1f×", t.maxAllocRatio))
		conds = append(conds, ballocs > 0 && allocs/ballocs <= t.maxAllocRatio)
	}
	if t.maxAllocs > 0 {
		targets = append(targets, fmt.Sprintf("≤ %.0f allocs per item", t.maxAllocs))
		conds = append(conds, allocs/per <= t.maxAllocs)
	}
	if len(targets) > 0 {
		out.target = strings.Join(targets, ", ")
		out.met = check(ok1 && ok2 && ok3 && ok4 && ok5, conds...)
	}
	return out
}

// floorRow is the floor of an operation: the raw SDK call answered with nothing (no
// item, an empty page), against the call with attributevalue: what no decoder can
// take off.
func floorRow(r *results, op string, per float64) row {
	p50 := "-p50-ns/op"
	what := "GetItem floor (the canned call answered with {})"
	if per > 1 {
		p50 = "-p50-ns/item"
		what = fmt.Sprintf("Query floor (an empty page), per item of a %.0f-item page", per)
	}
	tb := "BenchmarkSDKTime/" + op
	ab := "BenchmarkSDK/" + op + "/"
	ns, ok1 := r.value(tb, "floor"+p50)
	bns, ok2 := r.value(tb, "raw+av"+p50)
	allocs, ok3 := r.value(ab+"floor", "allocs/op")
	ballocs, ok4 := r.value(ab+"raw+av", "allocs/op")
	ratio, ok5 := r.ratio(tb, "floor"+p50, "raw+av"+p50)
	text := ratioText(ratio, ok5)
	if ok3 && ok4 && ballocs > 0 {
		text += fmt.Sprintf("; allocs %.2f×", allocs/ballocs)
	}
	return row{
		what:     what + ", canned transport, vs the call + attributevalue",
		ours:     timeAllocs(ns, allocs/per, ok1, ok3, false),
		baseline: timeAllocs(bns, ballocs/per, ok2, ok4, false),
		ratio:    text,
	}
}

// scaleRow is one point of the scale curve: the library per item against the raw
// SDK call with attributevalue, with the hand-written decoder's figure and ratio
// beside it.
func scaleRow(r *results, sub string, n int, label string) row {
	tb := "BenchmarkScaleTime/" + sub
	ab := "BenchmarkScale/" + sub + "/"
	per := float64(n)
	ns, ok1 := r.value(tb, "singletable-p50-ns/item")
	av, ok2 := r.value(tb, "raw+av-p50-ns/item")
	hand, ok3 := r.value(tb, "raw+hand-p50-ns/item")
	allocs, ok4 := r.value(ab+"singletable", "allocs/op")
	avAllocs, ok5 := r.value(ab+"raw+av", "allocs/op")
	rav, ok6 := r.ratio(tb, "singletable-p50-ns/item", "raw+av-p50-ns/item")
	rhand, ok7 := r.ratio(tb, "singletable-p50-ns/item", "raw+hand-p50-ns/item")
	return row{
		what:     label + ", per item, canned transport: the library vs raw SDK + attributevalue (and vs raw SDK + hand-written decoder)",
		ours:     timeAllocs(ns, allocs/per, ok1, ok4, false),
		baseline: timeAllocs(av, avAllocs/per, ok2, ok5, false) + " (hand: " + timeText(hand, ok3, false) + ")",
		ratio:    ratioText(rav, ok6) + " (hand: " + ratioText(rhand, ok7) + ")",
	}
}

const queryPage = 100 // items per canned and local Query page

var opNames = map[string]string{"Get": "Get", "Put": "Put", "Query100": "Query (100-item page), per item"}

// noRegression is the end-to-end target against the library as it was: no slower,
// within the noise of a shared machine.
const noRegression = 1.03

// codecTarget is what a codec row must meet; zero fields set no target.
type codecTarget struct {
	maxRatio  float64 // time at most this times the baseline's
	speedup   float64 // baseline's time at least this times ours
	faster    bool    // time under the baseline's
	maxAllocs float64
}

// codecRow compares the codec with one baseline: time ratio from the interleaved
// benchmark, allocations from the standard one.
func codecRow(r *results, op, base, label string, t codecTarget) row {
	tb := "BenchmarkCodecTime/" + op
	ab := "BenchmarkCodec/" + op + "/"
	ns, ok1 := r.value(tb, "singletable-ns/op")
	allocs, ok2 := r.value(ab+"singletable", "allocs/op")
	bns, ok3 := r.value(tb, base+"-ns/op")
	ballocs, ok4 := r.value(ab+base, "allocs/op")
	ratio, ok5 := r.ratio(tb, "singletable-ns/op", base+"-ns/op")
	measured := ok1 && ok2 && ok3 && ok4 && ok5
	out := row{
		what:     op + " Order (14 fields) vs " + label,
		ours:     timeAllocs(ns, allocs, ok1, ok2, false),
		baseline: timeAllocs(bns, ballocs, ok3, ok4, false),
		ratio:    ratioText(ratio, ok5),
	}
	var targets []string
	var conds []bool
	if t.faster {
		targets = append(targets, "faster (< 1×)")
		conds = append(conds, ratio < 1)
	}
	if t.maxRatio > 0 {
		targets = append(targets, fmt.Sprintf("≤ %.1f×", t.maxRatio))
		conds = append(conds, ratio <= t.maxRatio)
	}
	if t.speedup > 0 {
		targets = append(targets, fmt.Sprintf("≥ %.1f× faster (≤ %.2f×)", t.speedup, 1/t.speedup))
		conds = append(conds, ratio*t.speedup <= 1)
	}
	if t.maxAllocs > 0 {
		targets = append(targets, fmt.Sprintf("≤ %.0f allocs", t.maxAllocs))
		conds = append(conds, allocs <= t.maxAllocs)
	}
	if len(targets) > 0 {
		out.target = strings.Join(targets, ", ")
		out.met = check(measured, conds...)
	}
	return out
}

// sdkRow is the library's own cost over a raw SDK baseline through the canned
// transport: the difference of the median calls from the interleaved benchmark
// (means, which carry every pause of a shared machine, are in the ratio column for
// reference), and the allocation difference from the standard one; both per call, or
// per item of Query.
func sdkRow(r *results, op, base string, per float64, label string, targeted bool) row {
	unit, p50 := "-ns/op", "-p50-ns/op"
	if per > 1 {
		unit, p50 = "-ns/item", "-p50-ns/item"
	}
	tb := "BenchmarkSDKTime/" + op
	ab := "BenchmarkSDK/" + op + "/"
	over, ok1 := r.diff(tb, "singletable"+p50, base+p50)
	libAllocs, ok2 := r.value(ab+"singletable", "allocs/op")
	baseAllocs, ok3 := r.value(ab+base, "allocs/op")
	bns, ok4 := r.value(tb, base+p50)
	ratio, ok5 := r.ratio(tb, "singletable"+p50, base+p50)
	mean, ok6 := r.ratio(tb, "singletable"+unit, base+unit)
	overAllocs := (libAllocs - baseAllocs) / per
	measured := ok1 && ok2 && ok3 && ok4 && ok5
	text := ratioText(ratio, ok5)
	if ok6 {
		text += fmt.Sprintf(" (means %.2f×)", mean)
	}
	out := row{
		what:     opNames[op] + ", canned transport: library's own cost over " + label,
		ours:     timeAllocs(over, overAllocs, ok1, ok2 && ok3, true),
		baseline: timeAllocs(bns, baseAllocs/per, ok4, ok3, false),
		ratio:    text,
	}
	if targeted {
		out.target = "≤ 3 µs, ≤ 10 allocs"
		out.met = check(measured, over <= 3000, overAllocs <= 10)
	}
	return out
}

// keyRow is the three-part key render against the same key written by hand.
func keyRow(r *results) row {
	ns, ok1 := r.value("BenchmarkKeyRender/entity", "ns/op")
	allocs, ok2 := r.value("BenchmarkKeyRender/entity", "allocs/op")
	hns, ok3 := r.value("BenchmarkKeyRender/hand", "ns/op")
	hallocs, ok4 := r.value("BenchmarkKeyRender/hand", "allocs/op")
	return row{
		what:     "Three-part key ORDER#{customerId}#{createdAt:time}#{orderId} vs hand-written append",
		ours:     timeAllocs(ns, allocs, ok1, ok2, false),
		baseline: timeAllocs(hns, hallocs, ok3, ok4, false),
		ratio:    ratioText(ns/hns, ok1 && ok3),
		target:   "≤ 100 ns, ≤ 1 alloc",
		met:      check(ok1 && ok2, ns <= 100, allocs <= 1),
	}
}

// localRow is the library over a raw SDK variant end to end, by the median call of
// each, with the ratio of the means for reference.
func localRow(r *results, op, base, label string, targeted bool) row {
	tb := "BenchmarkLocal/" + op
	lib, ok1 := r.value(tb, "singletable-p50-ns/op")
	raw, ok2 := r.value(tb, base+"-p50-ns/op")
	ratio, ok3 := r.ratio(tb, "singletable-p50-ns/op", base+"-p50-ns/op")
	mean, ok4 := r.ratio(tb, "singletable-ns/op", base+"-ns/op")
	name := op
	if op == "Query100" {
		name = "Query (100-item page)"
	}
	text := ratioText(ratio, ok3)
	if ok4 {
		text += fmt.Sprintf(" (means %.2f×)", mean)
	}
	out := row{
		what:     name + " end to end, DynamoDB Local, median call, vs " + label,
		ours:     timeText(lib, ok1, false),
		baseline: timeText(raw, ok2, false),
		ratio:    text,
	}
	if targeted && base == "singletable-sdk" {
		out.target = fmt.Sprintf("no regression: ≤ 1.0× (≤ %.2f× within noise)", noRegression)
		out.met = check(ok1 && ok2 && ok3, ratio <= noRegression)
	} else if targeted {
		out.target = "≤ 1.05×"
		out.met = check(ok1 && ok2 && ok3, ratio <= 1.05)
	}
	return out
}

func ratioText(v float64, ok bool) string {
	if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

func timeAllocs(ns, allocs float64, okT, okA, signed bool) string {
	return timeText(ns, okT, signed) + ", " + allocsText(allocs, okA, signed)
}

// timeText formats nanoseconds; signed adds + or − for differences.
func timeText(ns float64, ok, signed bool) string {
	if !ok {
		return "—"
	}
	sign := ""
	if signed {
		sign = "+"
		if ns < 0 {
			sign = "−"
		}
	}
	a := math.Abs(ns)
	switch {
	case a < 1000:
		return fmt.Sprintf("%s%.0f ns", sign, a)
	case a < 10_000:
		return fmt.Sprintf("%s%.2f µs", sign, a/1e3)
	case a < 1_000_000:
		return fmt.Sprintf("%s%.1f µs", sign, a/1e3)
	}
	return fmt.Sprintf("%s%.2f ms", sign, a/1e6)
}

func allocsText(n float64, ok, signed bool) string {
	if !ok {
		return "—"
	}
	sign := ""
	if signed {
		sign = "+"
		if n < 0 {
			sign = "−"
		}
	}
	a := math.Abs(n)
	unit := " allocs"
	if a == 1 {
		unit = " alloc"
	}
	if a == math.Trunc(a) {
		return fmt.Sprintf("%s%.0f%s", sign, a, unit)
	}
	return fmt.Sprintf("%s%.2f%s", sign, a, unit)
}

// render prints the table and a caption saying how and where it was measured.
func render(rows []row, r *results, m runMeta) string {
	var b strings.Builder
	b.WriteString("| what | ours | baseline | ratio | target | met? |\n|---|---|---|---|---|---|\n")
	for _, x := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", x.what, x.ours, x.baseline, x.ratio, orDash(x.target), orDash(x.met.String()))
	}
	b.WriteString("\n")
	var cap []string
	if !m.started.IsZero() {
		cap = append(cap, "Measured "+m.started.UTC().Format("2006-01-02 15:04 MST"))
	} else {
		cap = append(cap, "Measured")
	}
	machine := "on " + orDash(r.cpu)
	if r.procs != "" {
		machine += ", GOMAXPROCS " + r.procs
	}
	cap = append(cap, machine+", "+m.goVersion)
	if m.backend != "" {
		ddb := "DynamoDB Local"
		if m.version != "" {
			ddb += " " + m.version
		}
		cap = append(cap, ddb+" from the "+m.backend+" backend")
	}
	if len(m.loads) > 0 {
		cap = append(cap, "1-minute load average "+strings.Join(m.loads, " → ")+" across the steps")
	}
	b.WriteString(strings.Join(cap, ", ") + ".\n")
	if m.label != "" {
		fmt.Fprintf(&b, "Command: `%s`, which runs `%s` in bench/", m.label, m.command)
	} else {
		fmt.Fprintf(&b, "Command: `%s`", m.command)
	}
	if m.took > 0 {
		fmt.Fprintf(&b, " (%s)", m.took.Round(time.Second))
	}
	b.WriteString(". Figures are medians of the runs; ratios and differences are medians of per-run ratios and differences " +
		"between variants timed interleaved in one benchmark (BenchmarkCodecTime, BenchmarkSDKTime, BenchmarkLocal); " +
		"allocation counts are exact, from BenchmarkCodec and BenchmarkSDK. \"raw+av\" is the bare SDK call with attributevalue; " +
		"\"canned transport\" is the SDK client over an HTTP client that answers from memory. Times through it and end to end " +
		"are median calls (the means, which carry every pause of a shared machine, in brackets), and the library's own cost " +
		"is the difference of the medians; codec times are means over batches of 64 calls.\n")
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
