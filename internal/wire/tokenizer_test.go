//go:build go1.27 && goexperiment.jsonv2

package wire

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"io"
	"testing"
	"time"
)

// BenchmarkTokenizers times, interleaved, on one 100-item Query body: the wire path's whole decoding
// (scanning and setting every field), a bare token walk with the standard library's tokenizer
// encoding/json/jsontext (each token read, strings unquoted; nothing decoded), and json.Valid. It
// builds on Go 1.27 and later, where encoding/json/jsontext is on by default (the constraint says
// go1.27 so that the file's language version allows it under the module's go directive):
//
//	GOTOOLCHAIN=go1.27.3 go test -run '^$' -bench BenchmarkTokenizers ./internal/wire
func BenchmarkTokenizers(b *testing.B) {
	body := benchBody(b, 100)
	p := planOf[benchOrder](b)
	tg, err := NewTarget(p, p.Ignore("PK", "SK", "Type"), "Type", "Order", "", 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	runs := []func(){
		func() {
			var sl slots[benchOrder]
			s := &Sink{Op: Query, Target: tg, Slots: &sl}
			if _, ok := s.read(body); !ok || len(sl.items) != 100 {
				b.Fatal("not decoded")
			}
		},
		func() {
			dec.Reset(bytes.NewReader(body))
			for {
				tok, err := dec.ReadToken()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if tok.Kind() == '"' {
					_ = tok.String()
				}
			}
		},
		func() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		},
	}
	var took [3]time.Duration
	round := 0
	for b.Loop() {
		for k := range runs {
			j := (round + k) % len(runs) // rotate, so that none always runs first
			t := time.Now()
			runs[j]()
			took[j] += time.Since(t)
		}
		round++
	}
	read, walk, valid := took[0], took[1], took[2]
	n := float64(b.N) * 100
	b.ReportMetric(float64(read)/n, "wire-decode-ns/item")
	b.ReportMetric(float64(walk)/n, "jsontext-tokens-ns/item")
	b.ReportMetric(float64(valid)/n, "json.Valid-ns/item")
	b.ReportMetric(float64(read)/float64(walk), "wire/jsontext")
}
