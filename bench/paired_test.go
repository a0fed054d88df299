package bench

import (
	"slices"
	"testing"
	"time"
)

// variant is one way of doing an operation; run returns how many items it handled.
type variant struct {
	name string
	run  func() (int, error)
}

// standard runs each variant as its own sub-benchmark, the usual way: ns/op, B/op and
// allocs/op per variant, comparable across commits with benchstat. Allocation counts
// from here are exact; on a busy machine the times of two sub-benchmarks, run seconds
// apart, are not comparable to a few per cent, which is what [interleaved] is for.
func standard(b *testing.B, vs []variant) {
	for _, v := range vs {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// interleaved times the variants against each other in one benchmark: each iteration
// runs every variant batch times, in an order that rotates from one iteration to the
// next, and times each batch, so that load from other processes and the CPU's clock
// changes fall on all of them alike. It reports each variant's time as
// <name>-ns/<unit>, divided by per (items per call, for per-item figures), and with
// batch 1 also the median call as <name>-p50-ns/<unit>, which a few slow round trips
// do not move; the loop's own ns/op, meaningless here, is left out. Ratios of these
// metrics taken from one line are what the benchmark table compares.
func interleaved(b *testing.B, vs []variant, batch, per int, unit string) {
	for _, v := range vs { // warm every path (plan caches, connection pools)
		for range batch {
			if _, err := v.run(); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
		}
	}
	total := make([]time.Duration, len(vs))
	var samples [][]time.Duration // per variant, with batch 1
	if batch == 1 {
		samples = make([][]time.Duration, len(vs))
	}
	rounds := 0
	for b.Loop() {
		for k := range vs {
			j := (rounds + k) % len(vs)
			run := vs[j].run
			start := time.Now()
			for range batch {
				if _, err := run(); err != nil {
					b.Fatalf("%s: %v", vs[j].name, err)
				}
			}
			d := time.Since(start)
			total[j] += d
			if samples != nil {
				samples[j] = append(samples[j], d)
			}
		}
		rounds++
	}
	n := float64(rounds * batch * per)
	for j, v := range vs {
		b.ReportMetric(float64(total[j])/n, v.name+"-ns/"+unit)
		if samples != nil {
			slices.Sort(samples[j])
			b.ReportMetric(float64(samples[j][len(samples[j])/2])/float64(per), v.name+"-p50-ns/"+unit)
		}
	}
	b.ReportMetric(0, "ns/op")
}
