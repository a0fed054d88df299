package main

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// results are parsed `go test -bench` lines: per benchmark (without its -GOMAXPROCS
// suffix), one map of unit to value per line, in the order the lines came.
type results struct {
	lines map[string][]map[string]float64
	cpu   string
	procs string // GOMAXPROCS, from the name suffix
}

// parse reads benchmark output; lines that are not results are skipped.
func parse(r io.Reader) *results {
	res := &results{lines: map[string][]map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
			res.cpu = strings.TrimSpace(cpu)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // "BenchmarkX ... SKIP" and the like
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				res.procs = name[i+1:]
				name = name[:i]
			}
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				m = nil
				break
			}
			m[f[i+1]] = v
		}
		if m != nil {
			res.lines[name] = append(res.lines[name], m)
		}
	}
	return res
}

// median of the values of fn over the lines of bench where every unit fn needs is
// present (fn says so with ok); ok is false when there is none.
func (r *results) median(bench string, fn func(m map[string]float64) (float64, bool)) (float64, bool) {
	var vs []float64
	for _, m := range r.lines[bench] {
		if v, ok := fn(m); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
}

// value is the median of one unit.
func (r *results) value(bench, unit string) (float64, bool) {
	return r.median(bench, func(m map[string]float64) (float64, bool) {
		v, ok := m[unit]
		return v, ok
	})
}

// ratio is the median over lines of a/b, both units of one line.
func (r *results) ratio(bench, a, b string) (float64, bool) {
	return r.median(bench, func(m map[string]float64) (float64, bool) {
		x, okx := m[a]
		y, oky := m[b]
		return x / y, okx && oky && y != 0
	})
}

// diff is the median over lines of a-b, both units of one line.
func (r *results) diff(bench, a, b string) (float64, bool) {
	return r.median(bench, func(m map[string]float64) (float64, bool) {
		x, okx := m[a]
		y, oky := m[b]
		return x - y, okx && oky
	})
}
