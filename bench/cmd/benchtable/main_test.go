package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/singletable/singletable/bench
cpu: Intel(R) Xeon(R) Processor
BenchmarkCodec/Encode/singletable-2   	  409263	      2933 ns/op	    1880 B/op	      10 allocs/op
BenchmarkCodec/Encode/hand-2          	  395383	      3373 ns/op	    1528 B/op	      29 allocs/op
BenchmarkCodecTime/Encode-2           	    5012	      2000 hand-ns/op	      2500 singletable-ns/op
BenchmarkCodecTime/Encode-2           	    4010	      3000 hand-ns/op	      3300 singletable-ns/op
BenchmarkCodecTime/Encode-2           	    4010	      1000 hand-ns/op	      2000 singletable-ns/op
BenchmarkLocal/Get-2  	SKIP
--- SKIP: BenchmarkLocal
PASS
`

func TestParse(t *testing.T) {
	r := parse(strings.NewReader(sample))
	if r.cpu != "Intel(R) Xeon(R) Processor" || r.procs != "2" {
		t.Errorf("cpu %q procs %q", r.cpu, r.procs)
	}
	for _, tc := range []struct {
		name string
		got  func() (float64, bool)
		want float64
		ok   bool
	}{
		{"value", func() (float64, bool) { return r.value("BenchmarkCodec/Encode/hand", "allocs/op") }, 29, true},
		{"median of three", func() (float64, bool) { return r.value("BenchmarkCodecTime/Encode", "hand-ns/op") }, 2000, true},
		{"median of per-line ratios", func() (float64, bool) {
			return r.ratio("BenchmarkCodecTime/Encode", "singletable-ns/op", "hand-ns/op")
		}, 1.25, true},
		{"median of per-line differences", func() (float64, bool) {
			return r.diff("BenchmarkCodecTime/Encode", "singletable-ns/op", "hand-ns/op")
		}, 500, true},
		{"missing unit", func() (float64, bool) { return r.value("BenchmarkCodecTime/Encode", "guregu-ns/op") }, 0, false},
		{"skipped benchmark", func() (float64, bool) { return r.value("BenchmarkLocal/Get", "ns/op") }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.got()
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRows(t *testing.T) {
	r := parse(strings.NewReader(sample))
	rows := table(r)
	enc := rows[0]
	if enc.ratio != "1.25×" || enc.met != met || enc.ours != "2.50 µs, 10 allocs" || enc.baseline != "2.00 µs, 29 allocs" {
		t.Errorf("encode row = %+v", enc)
	}
	for _, x := range rows {
		if strings.Contains(x.what, "DynamoDB Local") && x.target != "" && x.met != notRun {
			t.Errorf("%s: %v, want not run", x.what, x.met)
		}
	}
	if allMet(rows) {
		t.Error("allMet with rows not run")
	}
	out := render(rows, r, runMeta{command: "test", goVersion: "go1.26"})
	if !strings.HasPrefix(out, "| what | ours | baseline | ratio | target | met? |\n") || !strings.Contains(out, "GOMAXPROCS 2") {
		t.Errorf("render:\n%s", out)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{timeText(85.4, true, false), "85 ns"},
		{timeText(2500, true, false), "2.50 µs"},
		{timeText(61234, true, false), "61.2 µs"},
		{timeText(2.3e6, true, false), "2.30 ms"},
		{timeText(-1200, true, true), "−1.20 µs"},
		{timeText(0, false, false), "—"},
		{allocsText(1, true, false), "1 alloc"},
		{allocsText(4.19, true, true), "+4.19 allocs"},
		{allocsText(-27, true, true), "−27 allocs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

const sdkSample = `BenchmarkSDK/Get/raw+hand-2     	   20000	     60000 ns/op	   30000 B/op	     380 allocs/op
BenchmarkSDK/Get/singletable-2  	   20000	     63000 ns/op	   31000 B/op	     387 allocs/op
BenchmarkSDKTime/Get-2          	    5000	     70000 raw+hand-ns/op	     40000 raw+hand-p50-ns/op	     72000 singletable-ns/op	     43500 singletable-p50-ns/op
BenchmarkSDKTime/Get-2          	    5000	     90000 raw+hand-ns/op	     41000 raw+hand-p50-ns/op	     80000 singletable-ns/op	     43000 singletable-p50-ns/op
BenchmarkSDKTime/Get-2          	    5000	     71000 raw+hand-ns/op	     40000 raw+hand-p50-ns/op	     71000 singletable-ns/op	     42000 singletable-p50-ns/op
`

// TestSDKRow checks that the library's own cost is the median of the per-run
// differences of the median calls, whatever the means do.
func TestSDKRow(t *testing.T) {
	r := parse(strings.NewReader(sdkSample))
	got := sdkRow(r, "Get", "raw+hand", 1, "x", true)
	if got.ours != "+2.00 µs, +7 allocs" || got.met != met || !strings.HasPrefix(got.ratio, "1.05× (means") {
		t.Errorf("row = %+v", got)
	}
	if got := sdkRow(r, "Put", "raw+hand", 1, "x", true); got.met != notRun {
		t.Errorf("Put without lines: %v, want not run", got.met)
	}
}

func TestBackendOf(t *testing.T) {
	for log, want := range map[string][2]string{
		"x\ndynamolocal: using jar backend at http://127.0.0.1:1: DynamoDB Local 3.3.1 (ready in 2s)\n":                                   {"jar", "3.3.1"},
		"dynamolocal: using endpoint backend at http://h:8000: DynamoDB Local of unknown version (an endpoint that was not started here)": {"endpoint", ""},
		"dynamolocal: using testcontainers backend at http://127.0.0.1:2 (ready in 3s)\n":                                                 {"testcontainers", ""},
		"nothing here\n": {"", ""},
	} {
		if b, v := backendOf(log); b != want[0] || v != want[1] {
			t.Errorf("backendOf(%q) = %q, %q; want %q, %q", log, b, v, want[0], want[1])
		}
	}
}
