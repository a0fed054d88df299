// Command benchtable runs singletable's comparative benchmarks and prints one Markdown
// table: each row a measurement, the library's figure, its baseline's, their ratio,
// the target and whether it is met. `make bench` runs it from the bench module:
//
//	go run ./cmd/benchtable [-count 5] [-benchtime 1s] [-local-benchtime 3s] [-skip-local] [-check]
//
// It runs, in order: the key rendering benchmark of the root package; the codec,
// canned-transport and scale benchmarks of this module, once for allocation counts
// (BenchmarkCodec, BenchmarkSDK, BenchmarkScale) and -count times interleaved for
// times (BenchmarkCodecTime, BenchmarkSDKTime, BenchmarkScaleTime); then BenchmarkLocal
// against DynamoDB Local. Each figure is the
// median of the -count runs, and each ratio or difference the median of the per-run
// ratios or differences, taken within one benchmark line whose variants ran
// interleaved. The raw output goes to -raw (bench.out), and -in formats such a file
// instead of running anything. With -check the exit status is 1 when a target is
// missed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	var (
		goCmd     = flag.String("go", "go", "the go command")
		count     = flag.Int("count", 5, "runs of each timing benchmark; figures are medians over runs")
		benchtime = flag.String("benchtime", "1s", "-benchtime of the key, codec and canned-transport benchmarks")
		localTime = flag.String("local-benchtime", "3s", "-benchtime of the DynamoDB Local benchmarks")
		skipLocal = flag.Bool("skip-local", false, "do not run the DynamoDB Local benchmarks")
		rawPath   = flag.String("raw", "bench.out", "file for the raw go test output (\"\" for none)")
		inPath    = flag.String("in", "", "format this saved output instead of running the benchmarks")
		check     = flag.Bool("check", false, "exit 1 when a target is missed or a measurement is missing")
		benchDir  = flag.String("dir", ".", "the bench module's folder (the library's is its parent)")
		label     = flag.String("label", "", "how the caption names the command, e.g. \"make bench\"")
	)
	flag.Parse()
	var (
		out  []byte
		meta runMeta
		err  error
	)
	if *inPath != "" {
		out, err = os.ReadFile(*inPath)
		meta.command = "benchtable -in " + *inPath
	} else {
		steps := plan(*benchDir, *count, *benchtime, *localTime, *skipLocal)
		out, meta, err = run(*goCmd, steps)
		meta.command, meta.label = commandLine(), *label
		if *rawPath != "" {
			if werr := os.WriteFile(*rawPath, out, 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "benchtable:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	res := parse(bytes.NewReader(out))
	if meta.goVersion == "" {
		meta.goVersion = runtime.Version()
	}
	rows := table(res)
	fmt.Print(render(rows, res, meta))
	if *check && !allMet(rows) {
		os.Exit(1)
	}
}

// commandLine is the go run command of this run, with the flags set to other than
// their defaults (all but -label).
func commandLine() string {
	cmd := "go run ./cmd/benchtable"
	flag.Visit(func(f *flag.Flag) {
		switch v := f.Value.String(); {
		case f.Name == "label" || v == f.DefValue:
		case v == "true":
			cmd += " -" + f.Name // a bool flag
		default:
			cmd += " -" + f.Name + " " + v
		}
	})
	return cmd
}

// step is one go test run.
type step struct {
	dir  string
	args []string
}

func plan(benchDir string, count int, benchtime, localTime string, skipLocal bool) []step {
	root := filepath.Join(benchDir, "..")
	c := fmt.Sprint(count)
	test := func(dir, bench, count, benchtime string) step {
		return step{dir: dir, args: []string{"test", "-run", "^$", "-bench", bench, "-count", count, "-benchtime", benchtime, "."}}
	}
	steps := []step{
		test(root, "^BenchmarkKeyRender$", c, benchtime),
		test(benchDir, "^Benchmark(Codec|SDK|Scale)$", "1", benchtime),
		test(benchDir, "^BenchmarkCodecTime$", c, benchtime),
		test(benchDir, "^BenchmarkSDKTime$", c, benchtime),
		test(benchDir, "^BenchmarkScaleTime$", c, benchtime),
	}
	if !skipLocal {
		steps = append(steps, test(benchDir, "^BenchmarkLocal$", c, localTime))
	}
	return steps
}

// runMeta is what the table's caption says about the run.
type runMeta struct {
	command   string
	label     string // how the user ran it, e.g. "make bench"; command is then run in bench/
	goVersion string
	loads     []string // 1-minute load average before each step and after the last
	started   time.Time
	took      time.Duration
	backend   string // DynamoDB Local's, as dynamolocal logged it
	version   string // DynamoDB Local's release, as dynamolocal logged it ("" when unknown)
}

// run runs the steps, copying their output to stderr as it comes, and returns the
// standard output of all of them.
func run(goCmd string, steps []step) ([]byte, runMeta, error) {
	meta := runMeta{started: time.Now()}
	if v, err := exec.Command(goCmd, "env", "GOVERSION").Output(); err == nil {
		meta.goVersion = strings.TrimSpace(string(v))
	}
	var all bytes.Buffer
	for _, s := range steps {
		meta.loads = append(meta.loads, loadAverage())
		fmt.Fprintf(os.Stderr, "benchtable: (cd %s && %s %s)  [load %s]\n", s.dir, goCmd, strings.Join(s.args, " "), meta.loads[len(meta.loads)-1])
		cmd := exec.Command(goCmd, s.args...)
		cmd.Dir = s.dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout = io.MultiWriter(&stdout, os.Stderr)
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
		err := cmd.Run()
		all.Write(stdout.Bytes())
		if b, v := backendOf(stderr.String() + stdout.String()); b != "" {
			meta.backend, meta.version = b, v
		}
		if err != nil {
			return all.Bytes(), meta, fmt.Errorf("go %s in %s: %w", strings.Join(s.args, " "), s.dir, err)
		}
	}
	meta.loads = append(meta.loads, loadAverage())
	meta.took = time.Since(meta.started)
	return all.Bytes(), meta, nil
}

// backendOf finds dynamolocal's line "using jar backend at URL: DynamoDB Local
// 3.3.1 (ready in 2.1s)" and returns the backend and the version ("" when the
// line names none).
func backendOf(log string) (backend, version string) {
	for line := range strings.Lines(log) {
		if _, rest, ok := strings.Cut(line, "dynamolocal: using "); ok {
			if b, rest, ok := strings.Cut(rest, " backend"); ok {
				if _, v, ok := strings.Cut(rest, ": DynamoDB Local "); ok && v != "" && v[0] >= '0' && v[0] <= '9' {
					version, _, _ = strings.Cut(v, " ")
				}
				return b, version
			}
		}
	}
	return "", ""
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
