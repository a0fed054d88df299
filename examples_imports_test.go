package singletable_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesUsePublicAPI: the programs under examples/ are written to be
// copied, so none of their non-test files imports a package under internal/,
// which no other module can import: they connect through the public AWS SDK
// (each example's local.go) and use the library's public API alone.
func TestExamplesUsePublicAPI(t *testing.T) {
	files, err := filepath.Glob("examples/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/singletable/singletable/") && (strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal")) {
				t.Errorf("%s imports %s: an example must use only the public API (connect with the AWS SDK, as local.go does)", path, p)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d example files", checked)
	}
}
