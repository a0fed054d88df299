package singletable_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fileMapDoc is the guide that holds the file map, between fileMapBegin and
// fileMapEnd: Markdown tables whose first column names a file of the root
// package (`table.go`) or a package directory (`internal/codec/`).
const (
	fileMapDoc   = "docs/architecture.md"
	fileMapBegin = "<!-- filemap:begin -->"
	fileMapEnd   = "<!-- filemap:end -->"
)

// TestFileMapComplete keeps the file map of docs/architecture.md true: it names
// every non-test .go file of the root package (whatever its build tags) and
// every directory of the repository that holds a Go package (nested modules,
// commands and examples included), each once, and nothing that does not exist.
func TestFileMapComplete(t *testing.T) {
	listed, err := fileMap(fileMapDoc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := goFilesAndPackages(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, name := range listed {
		if seen[name] {
			t.Errorf("%s names %s twice", fileMapDoc, name)
		}
		seen[name] = true
		if !slices.Contains(want, name) {
			t.Errorf("%s names %s, which is neither a non-test .go file of the root package nor a package directory", fileMapDoc, name)
		}
	}
	for _, name := range want {
		if !seen[name] {
			what := "the root package's file"
			if strings.HasSuffix(name, "/") {
				what = "the package directory"
			}
			t.Errorf("%s does not name %s %s: add a row for it between %s and %s", fileMapDoc, what, name, fileMapBegin, fileMapEnd)
		}
	}
}

// fileMap returns the names in the first column of the table rows between
// fileMapBegin and fileMapEnd of the Markdown file at path.
func fileMap(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(b)
	_, after, ok := strings.Cut(text, fileMapBegin)
	if !ok {
		return nil, &fs.PathError{Op: "find " + fileMapBegin, Path: path, Err: fs.ErrNotExist}
	}
	inside, _, ok := strings.Cut(after, fileMapEnd)
	if !ok {
		return nil, &fs.PathError{Op: "find " + fileMapEnd, Path: path, Err: fs.ErrNotExist}
	}
	row := regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	var names []string
	for line := range strings.Lines(inside) {
		if m := row.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			names = append(names, m[1])
		}
	}
	return names, nil
}

// goFilesAndPackages returns the non-test .go files of the package in root
// ("table.go") and, below root, every directory holding a non-test .go file
// ("internal/codec/"), skipping testdata and hidden directories.
func goFilesAndPackages(root string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." {
			names = append(names, filepath.Base(rel))
		} else if name := dir + "/"; !slices.Contains(names, name) {
			names = append(names, name)
		}
		return nil
	})
	slices.Sort(names)
	return names, err
}
