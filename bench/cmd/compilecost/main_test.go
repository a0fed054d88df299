package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramsParse checks that the generated programs are Go, with one use
// function per entity type, and that the module file names the library's
// requirements and replaces the library by the checkout.
func TestProgramsParse(t *testing.T) {
	for _, lib := range []bool{true, false} {
		var b bytes.Buffer
		if lib {
			libProgram(&b, 3, 7)
		} else {
			rawProgram(&b, 3, 7)
		}
		f, err := parser.ParseFile(token.NewFileSet(), "main.go", b.Bytes(), 0)
		if err != nil {
			t.Fatalf("lib=%v: %v\n%s", lib, err, b.String())
		}
		uses := 0
		for _, d := range f.Decls {
			if s := declName(d); strings.HasPrefix(s, "use") {
				uses++
			}
		}
		if uses != 3 {
			t.Errorf("lib=%v: %d use functions, want 3", lib, uses)
		}
		if !strings.Contains(b.String(), "const stamp = 7") {
			t.Errorf("lib=%v: the stamp is missing", lib)
		}
	}
	dir := t.TempDir()
	if err := writeModule(dir, filepath.Join("..", "..", "..")); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"github.com/aws/aws-sdk-go-v2/service/dynamodb v", "github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue v", "replace github.com/singletable/singletable => ../../.."} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
}

func TestMedian(t *testing.T) {
	got := median([]figures{{secs: 3, peak: 30, bytes: 300}, {secs: 1, peak: 10, bytes: 100}, {secs: 2, peak: 20, bytes: 200}})
	if got != (figures{secs: 2, peak: 20, bytes: 200}) {
		t.Errorf("median = %+v", got)
	}
}

// declName names a top-level function declaration ("" for other declarations).
func declName(d ast.Decl) string {
	if f, ok := d.(*ast.FuncDecl); ok {
		return f.Name.Name
	}
	return ""
}
