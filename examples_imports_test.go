package singletable_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesUsePublicAPI: the programs under examples/ and their tests are
// written to be copied, so none of their files imports a package under
// internal/, which no other module can import: they connect through the AWS
// SDK's configuration (AWS_ENDPOINT_URL; exampleenv only guards and names
// things) and use the library's public API alone.
func TestExamplesUsePublicAPI(t *testing.T) {
	var files []string
	err := filepath.WalkDir("examples", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/singletable/singletable/") && (strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal")) {
				t.Errorf("%s imports %s: an example must use only the public API (connect with the AWS SDK's configuration, as exampleenv.Run does)", path, p)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d example files", checked)
	}
}
