package wire

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkReadVsValid times the wire path's decoding of a 100-item page against encoding/json's
// json.Valid of the same body, interleaved, as a yardstick that a loaded machine slows alike.
func BenchmarkReadVsValid(b *testing.B) {
	body := benchBody(b, 100)
	p := planOf[benchOrder](b)
	tg, err := NewTarget(p, p.Ignore("PK", "SK", "Type", "_schema", "_wr0", "_wr1", "_wr2", "_wr3"), "Type", "Order", "", 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	var read, valid time.Duration
	for b.Loop() {
		t0 := time.Now()
		var sl slots[benchOrder]
		s := &Sink{Op: Query, Target: tg, Slots: &sl}
		if _, ok := s.read(body); !ok || len(sl.items) != 100 {
			b.Fatal("not decoded")
		}
		t1 := time.Now()
		if !json.Valid(body) {
			b.Fatal("invalid")
		}
		valid += time.Since(t1)
		read += t1.Sub(t0)
	}
	b.ReportMetric(float64(read)/float64(b.N)/100, "read-ns/item")
	b.ReportMetric(float64(valid)/float64(b.N)/100, "valid-ns/item")
	b.ReportMetric(float64(read)/float64(valid), "ratio")
}
