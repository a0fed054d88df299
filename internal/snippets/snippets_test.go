package snippets

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// snippet is one ```go block of a Markdown file.
type snippet struct {
	file string // relative to root
	line int    // of the ``` line
	code string
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

var goBlock = regexp.MustCompile("(?s)\n```go\n(.*?)\n```\n")

// collect returns every Go block of README.md and docs/*.md.
func collect(t *testing.T) []snippet {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []snippet
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, m := range goBlock.FindAllSubmatchIndex(text, -1) {
			out = append(out, snippet{file: rel, line: bytes.Count(text[:m[0]+1], []byte("\n")) + 1, code: string(text[m[2]:m[3]])})
		}
	}
	return out
}

// imports maps the package names snippets use to their paths.
var imports = map[string]string{
	"context":         "context",
	"errors":          "errors",
	"fmt":             "fmt",
	"log":             "log",
	"os":              "os",
	"sync":            "sync",
	"testing":         "testing",
	"time":            "time",
	"aws":             "github.com/aws/aws-sdk-go-v2/aws",
	"config":          "github.com/aws/aws-sdk-go-v2/config",
	"dynamodb":        "github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"dynamodbstreams": "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams",
	"types":           "github.com/aws/aws-sdk-go-v2/service/dynamodb/types",
	"expression":      "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression",
	"lambda":          "github.com/aws/aws-lambda-go/lambda",
	"require":         "github.com/stretchr/testify/require",
	"singletable":     "github.com/singletable/singletable",
	"stream":          "github.com/singletable/singletable/stream",
	"streamlambda":    "github.com/singletable/singletable/streamlambda",
	"dynamolocal":     "github.com/singletable/singletable/dynamolocal",
	"fault":           "github.com/singletable/singletable/fault",
	"admin":           "github.com/singletable/singletable/admin",
	"metric":          "go.opentelemetry.io/otel/metric",
	"trace":           "go.opentelemetry.io/otel/trace",
}

var (
	importLine = regexp.MustCompile(`^import\s+(\w+\s+)?"[^"]+"$`)
	qualified  = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Za-z_]`)
	comment    = regexp.MustCompile(`//.*`)
)

// importsFor returns the import lines for the package names code qualifies,
// leaving out the names in have.
func importsFor(code string, have map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range qualified.FindAllStringSubmatch(comment.ReplaceAllString(code, ""), -1) {
		name := m[1]
		path, ok := imports[name]
		if !ok || seen[name] || have[name] {
			continue
		}
		seen[name] = true
		out = append(out, strconv.Quote(path))
	}
	slices.Sort(out)
	return out
}

// split divides a fragment into its import lines, its declarations (the
// paragraphs that begin with type, func, var or const at the left margin, and
// parse as declarations) and its statements (the rest, in order).
func split(code string) (importLines []string, decls, stmts string) {
	var d, s strings.Builder
	for _, para := range strings.Split(code, "\n\n") {
		var kept []string
		for _, l := range strings.Split(para, "\n") {
			if importLine.MatchString(strings.TrimSpace(l)) {
				importLines = append(importLines, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "import")))
				continue
			}
			kept = append(kept, l)
		}
		para = strings.Join(kept, "\n")
		first := ""
		for _, l := range kept {
			if l != "" && !strings.HasPrefix(l, "//") {
				first = l
				break
			}
		}
		isDecl := false
		for _, kw := range []string{"type ", "func ", "var ", "const "} {
			if strings.HasPrefix(first, kw) {
				_, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+para, 0)
				isDecl = err == nil
			}
		}
		if isDecl {
			d.WriteString(para + "\n\n")
		} else {
			s.WriteString(para + "\n\n")
		}
	}
	return importLines, d.String(), s.String()
}

// declared returns the names declared at the top level of src (a file).
func declared(t *testing.T, src string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	names := map[string]bool{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names
}

// preamble returns the declarations of preamble.go.txt that src does not
// declare itself, and a func init that uses each of its values (so that no
// linter calls them unused).
func preamble(t *testing.T, pkg string, own map[string]bool) string {
	t.Helper()
	text, err := os.ReadFile("preamble.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "preamble.go", text, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var used []string
	for _, decl := range f.Decls {
		var name string
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
			used = append(used, name)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				name = s.Name.Name
			case *ast.ValueSpec:
				name = s.Names[0].Name
				used = append(used, name)
			}
		}
		if own[name] {
			continue
		}
		var buf bytes.Buffer
		if err := format.Node(&buf, fset, decl); err != nil {
			t.Fatal(err)
		}
		b.WriteString(buf.String() + "\n\n")
	}
	var keep []string
	for _, n := range used {
		if !own[n] {
			keep = append(keep, n)
		}
	}
	body := b.String() + "func init() { _ = []any{" + strings.Join(keep, ", ") + "} }\n"
	return "package " + pkg + "\n\nimport (\n" + strings.Join(importsFor(body, nil), "\n") + "\n)\n\n" + body
}

// locals returns the names the statements of fn's body declare at its top
// level (x := ..., var x ...), for the lines that use them.
func locals(t *testing.T, src, fn string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !slices.Contains(names, id.Name) {
			names = append(names, id.Name)
		}
	}
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.FuncDecl)
		if !ok || d.Name.Name != fn {
			continue
		}
		for _, st := range d.Body.List {
			switch s := st.(type) {
			case *ast.AssignStmt:
				if s.Tok == token.DEFINE {
					for _, e := range s.Lhs {
						if id, ok := e.(*ast.Ident); ok {
							add(id)
						}
					}
				}
			case *ast.DeclStmt:
				if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
					for _, spec := range g.Specs {
						for _, id := range spec.(*ast.ValueSpec).Names {
							add(id)
						}
					}
				}
			}
		}
	}
	return names
}

// write makes the package of snippet s in dir: the snippet as it is when it
// is a whole file (it begins with package), else its declarations and, in a
// func Snippet, its statements, beside the preamble's declarations.
func write(t *testing.T, dir, pkg string, s snippet) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(s.code, "package ") {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(s.code), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if regexp.MustCompile(`(?m)^func main\(\)`).MatchString(s.code) {
		pkg = "main" // a program's main, which a linter would call unused elsewhere
	}
	importLines, decls, stmts := split(s.code)
	have := map[string]bool{}
	for _, l := range importLines {
		if f := strings.Fields(l); len(f) == 2 {
			have[f[0]] = true
		}
	}
	src := func(tail string) string {
		all := append(slices.Clone(importLines), importsFor(decls+stmts, have)...)
		return "package " + pkg + "\n\nimport (\n" + strings.Join(all, "\n") + "\n)\n\n" + decls + "\n" +
			"// Snippet holds the statements of " + s.String() + ".\nfunc Snippet() error {\n" + stmts + tail + "}\n"
	}
	code := src("")
	if strings.TrimSpace(stmts) == "" {
		code = "package " + pkg + "\n\nimport (\n" + strings.Join(append(slices.Clone(importLines), importsFor(decls, have)...), "\n") + "\n)\n\n" + decls
	} else {
		var uses strings.Builder
		for _, n := range locals(t, code, "Snippet") {
			uses.WriteString("\t_ = &" + n + "\n")
		}
		lines := strings.Split(strings.TrimSpace(stmts), "\n")
		if !strings.HasPrefix(lines[len(lines)-1], "return ") {
			uses.WriteString("\treturn nil\n")
		}
		code = src(uses.String())
	}
	own := declared(t, code)
	name := "snippet.go"
	if strings.Contains(s.code, "*testing.") {
		name = "snippet_test.go" // a test file's functions (TestMain, TestX)
	}
	for file, text := range map[string]string{name: code, "preamble.go": preamble(t, pkg, own)} {
		formatted, err := format.Source([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v\n%s", s, err, text)
		}
		if err := os.WriteFile(filepath.Join(dir, file), formatted, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// staticcheck returns the staticcheck that `make lint` built for this Go
// release, "" when there is none.
func staticcheck(t *testing.T) string {
	if p := os.Getenv("STATICCHECK"); p != "" && strings.Contains(p, runtime.Version()) {
		return p
	}
	found, _ := filepath.Glob(filepath.Join(root, ".bin", "staticcheck-*-"+runtime.Version(), "staticcheck"))
	if len(found) == 0 {
		return ""
	}
	abs, err := filepath.Abs(found[len(found)-1])
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestDocSnippets builds, vets and staticchecks every Go snippet of README.md
// and docs/*.md, each in a package of its own in a workspace with the
// repository's modules.
func TestDocSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the snippets are built by the go command")
	}
	snippets := collect(t)
	if len(snippets) < 15 {
		t.Fatalf("found %d Go snippets in README.md and docs/*.md", len(snippets))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	mod := filepath.Join(work, "snippets")
	where := map[string]snippet{}
	for i, s := range snippets {
		pkg := fmt.Sprintf("s%02d", i+1)
		where[pkg] = s
		write(t, filepath.Join(mod, pkg), pkg, s)
	}
	files := map[string]string{
		filepath.Join(mod, "go.mod"): "module snippets\n\ngo 1.26.0\n",
		filepath.Join(work, "go.work"): "go 1.26.0\n\nuse (\n\t./snippets\n\t" + abs + "\n\t" +
			filepath.Join(abs, "otel") + "\n\t" + filepath.Join(abs, "dynamolocal") + "\n\t" + filepath.Join(abs, "admin") + "\n)\n",
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOWORK="+filepath.Join(work, "go.work"), "GOFLAGS=")
	run := func(what string, argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = mod
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		// Name each failing snippet by its Markdown file and line.
		text := string(out)
		for pkg, s := range where {
			text = strings.ReplaceAll(text, pkg+"/", s.String()+" ("+pkg+")/")
		}
		t.Errorf("%s of the snippets of README.md and docs/*.md failed (%v): fix the snippet in its Markdown file:\n%s", what, err, text)
		t.Logf("the snippets' packages are in %s", mod)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	run("go build", goCmd, "build", "./...")
	run("go vet", goCmd, "vet", "./...")
	if sc := staticcheck(t); sc != "" {
		run("staticcheck", sc, "./...")
	} else if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Errorf("no staticcheck built for %s under .bin/ (make lint builds it): under CI=true the snippets must be staticchecked", runtime.Version())
	} else {
		t.Logf("staticcheck skipped: none built for %s under .bin/ (make lint builds it)", runtime.Version())
	}
}
