// Command compilecost measures what each entity type adds to a user's build: the
// compile seconds and binary kilobytes of a program of N entity types, each
// registered and used by Put, Get, Update, Query, Mutate, Delete and All, against
// the same N structs used through the raw SDK and attributevalue (PutItem, GetItem,
// UpdateItem, Query, a read-modify-write, a paginated Query and DeleteItem).
//
// It writes four programs into a temporary module that replaces the library by
// this checkout (singletable with 1 and with -n entity types, the raw SDK with 1
// and with -n), builds each once to fill the build cache with their dependencies,
// then builds each -runs times with only the program's own package changed (a
// fresh constant in it), and prints the medians: whole-build seconds, the build's
// peak memory (the largest process: compile or link) and the binary's size, then
// per entity type ((N-type figure - 1-type figure) / (N-1)) and the ratio of the two
// N-type builds. `make bench` runs it:
//
//	go run ./cmd/compilecost [-n 41] [-runs 3] [-lib ..] [-keep]
//
// The figures depend on the machine and on what else runs on it: run it on a quiet
// machine, and compare a library change against its parent in the same run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	var (
		n       = flag.Int("n", 41, "entity types of the large program")
		runs    = flag.Int("runs", 3, "builds of each program; figures are medians")
		lib     = flag.String("lib", "..", "the library's checkout (its go.mod is read for the SDK's versions)")
		goCmd   = flag.String("go", "go", "the go command")
		keep    = flag.Bool("keep", false, "keep the generated module and print its folder")
		measure = flag.Bool("measure", false, "internal: run the rest of the command line and print its children's peak memory")
	)
	flag.Parse()
	if *measure {
		os.Exit(measureChild(flag.Args()))
	}
	if *n < 2 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "compilecost: -n must be at least 2 and -runs at least 1")
		os.Exit(2)
	}
	if err := run(*goCmd, *lib, *n, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "compilecost:", err)
		os.Exit(1)
	}
}

// program is one generated main package.
type program struct {
	name  string // folder and label
	lib   bool   // singletable, or the raw SDK
	types int
}

// figures are one build's measurements.
type figures struct {
	secs  float64
	peak  int64 // bytes
	bytes int64 // the binary's size
}

func run(goCmd, lib string, n, runs int, keep bool) error {
	libDir, err := filepath.Abs(lib)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "compilecost-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "compilecost: the programs are in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := writeModule(dir, libDir); err != nil {
		return err
	}
	progs := []program{{"st1", true, 1}, {"stN", true, n}, {"raw1", false, 1}, {"rawN", false, n}}
	for _, p := range progs {
		if err := writeProgram(dir, p, 0); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Dependencies compiled once (the library included): what follows rebuilds only
	// each program's own package and links it.
	for _, p := range progs {
		if _, err := build(self, goCmd, dir, p); err != nil {
			return err
		}
	}
	got := map[string][]figures{}
	for r := 1; r <= runs; r++ {
		for _, p := range progs { // interleaved, so a loaded machine slows them alike
			if err := writeProgram(dir, p, r); err != nil {
				return err
			}
			f, err := build(self, goCmd, dir, p)
			if err != nil {
				return err
			}
			got[p.name] = append(got[p.name], f)
		}
	}
	med := map[string]figures{}
	for name, fs := range got {
		med[name] = median(fs)
	}
	report(goCmd, n, runs, med)
	return nil
}

// writeModule writes the temporary module's go.mod (the library's requirements, the
// library replaced by the checkout) and go.sum (the library's).
func writeModule(dir, libDir string) error {
	mod, err := os.ReadFile(filepath.Join(libDir, "go.mod"))
	if err != nil {
		return err
	}
	var reqs []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:require\s+)?(github\.com/aws/\S+|github\.com/google/uuid|github\.com/oklog/ulid/v2|go\.yaml\.in/yaml/v3)\s+(v\S+)`).FindAllSubmatch(mod, -1) {
		reqs = append(reqs, "\t"+string(m[1])+" "+string(m[2]))
	}
	gomod := "module compilecost\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/singletable/singletable v0.0.0\n" +
		strings.Join(reqs, "\n") + "\n)\n\nreplace github.com/singletable/singletable => " + libDir + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(libDir, "go.sum"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// writeProgram writes p's main package; stamp changes a constant so that the build
// compiles the package again.
func writeProgram(dir string, p program, stamp int) error {
	pd := filepath.Join(dir, p.name)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if p.lib {
		libProgram(&b, p.types, stamp)
	} else {
		rawProgram(&b, p.types, stamp)
	}
	return os.WriteFile(filepath.Join(pd, "main.go"), b.Bytes(), 0o644)
}

// build builds p once under the measuring child and returns its figures.
func build(self, goCmd, dir string, p program) (figures, error) {
	bin := filepath.Join(dir, p.name+".bin")
	cmd := exec.Command(self, "-measure", "--", goCmd, "build", "-o", bin, "./"+p.name)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return figures{}, fmt.Errorf("go build ./%s: %v\n%s", p.name, err, out.String())
	}
	secs := time.Since(start).Seconds()
	m := regexp.MustCompile(`peak-rss-kb (\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		return figures{}, fmt.Errorf("go build ./%s: no peak memory in %q", p.name, out.String())
	}
	kb, _ := strconv.ParseInt(m[1], 10, 64)
	st, err := os.Stat(bin)
	if err != nil {
		return figures{}, err
	}
	return figures{secs: secs, peak: kb << 10, bytes: st.Size()}, nil
}

// measureChild runs args and prints the peak resident memory of the largest
// process among its descendants (the compiler or the linker, for go build).
func measureChild(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	var ru syscall.Rusage
	if e := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); e == nil {
		fmt.Printf("peak-rss-kb %d\n", ru.Maxrss)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func median(fs []figures) figures {
	pick := func(get func(figures) float64) float64 {
		v := make([]float64, len(fs))
		for i, f := range fs {
			v[i] = get(f)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return figures{
		secs:  pick(func(f figures) float64 { return f.secs }),
		peak:  int64(pick(func(f figures) float64 { return float64(f.peak) })),
		bytes: int64(pick(func(f figures) float64 { return float64(f.bytes) })),
	}
}

func report(goCmd string, n, runs int, m map[string]figures) {
	ver, _ := exec.Command(goCmd, "env", "GOVERSION").Output()
	fmt.Printf("Compile cost per entity type: programs of 1 and %d entity types, each used by Put, Get, Update, Query, Mutate, Delete and All;\n", n)
	fmt.Printf("dependencies cached, the program's package rebuilt; medians of %d builds; %s, %s/%s, %d CPUs.\n\n", runs, strings.TrimSpace(string(ver)), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| | singletable | raw SDK + attributevalue | ratio |")
	fmt.Println("|---|---|---|---|")
	per := func(name string, get func(figures) float64) float64 {
		return (get(m[name+"N"]) - get(m[name+"1"])) / float64(n-1)
	}
	secs := func(f figures) float64 { return f.secs }
	kb := func(f figures) float64 { return float64(f.bytes) / 1024 }
	fmt.Printf("| compile time added by each entity type | %.3f s | %.3f s | |\n", per("st", secs), per("raw", secs))
	fmt.Printf("| binary added by each entity type | %.1f KB | %.1f KB | |\n", per("st", kb), per("raw", kb))
	for _, k := range []string{"1", "N"} {
		types := "1 entity type"
		if k == "N" {
			types = strconv.Itoa(n) + " entity types"
		}
		s, r := m["st"+k], m["raw"+k]
		fmt.Printf("| build of %s | %.2f s, %.2f GB peak, %.1f MB | %.2f s, %.2f GB peak, %.1f MB | %.2fx |\n", types,
			s.secs, float64(s.peak)/(1<<30), float64(s.bytes)/(1<<20),
			r.secs, float64(r.peak)/(1<<30), float64(r.bytes)/(1<<20), s.secs/r.secs)
	}
	fmt.Printf("\nper-entity-type-seconds %.4f per-entity-type-kb %.1f build-ratio-%d %.2f\n", per("st", secs), per("st", kb), n, m["stN"].secs/m["rawN"].secs)
}
