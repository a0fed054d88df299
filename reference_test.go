package singletable

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// section returns the text of path from the line starting with begin up to
// the next line starting with end (or the end of the file).
func section(t *testing.T, path, begin, end string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+begin)
	if i < 0 {
		t.Fatalf("%s has no line starting %q", path, begin)
	}
	text = text[i+1:]
	if j := strings.Index(text[len(begin):], "\n"+end); j >= 0 {
		text = text[:len(begin)+j]
	}
	return text
}

// mentions reports whether text names word as a word of a tag: not inside a
// longer word ("shard" is not in "shards=" or "shardBy"); a word ending in "="
// is followed by its value.
func mentions(text, word string) bool {
	pat := `(^|[^A-Za-z0-9])` + regexp.QuoteMeta(word)
	if !strings.HasSuffix(word, "=") {
		pat += `($|[^A-Za-z0-9=])`
	}
	return regexp.MustCompile(pat).MatchString(text)
}

// TestTagReferenceComplete holds README.md's "Tags in brief" and the package
// doc's Tags section to the parser's own lists of the words a
// `singletable:"..."` tag takes (fieldtags.go): every role, option and form.
func TestTagReferenceComplete(t *testing.T) {
	var words []string
	for _, list := range [][]string{fieldRoles, stampOptions, ttlOptions, fieldForms, generateKinds, entityTagOptions} {
		words = append(words, list...)
	}
	if len(words) < 15 {
		t.Fatalf("the parser's lists hold %d words: %q", len(words), words)
	}
	docs := map[string]string{
		`README.md "Tags in brief"`: section(t, "README.md", "## Tags in brief", "## "),
		"doc.go (# Tags)":           section(t, "doc.go", "// # Tags", "// # "),
	}
	for where, text := range docs {
		for _, w := range words {
			if !mentions(text, w) {
				t.Errorf("%s does not list the tag word %q, which the parser accepts", where, w)
			}
		}
	}
}

// TestTagReferenceRefusesOthers: the parser takes its words from the lists;
// a word in none of them is refused, naming the list.
func TestTagReferenceRefusesOthers(t *testing.T) {
	tbl, err := NewTable(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "app")
	if err != nil {
		t.Fatal(err)
	}
	type badRole struct {
		_  struct{} `Type:"BadRole" PK:"R#{id}" SK:"R"`
		ID string   `dynamodbav:"id"`
		N  int      `dynamodbav:"n" singletable:"uniq"`
	}
	_, err = Register[badRole](tbl)
	if err == nil || !strings.Contains(err.Error(), strings.Join(fieldRoles, ", ")) {
		t.Errorf("an unknown role: %v, want the roles named", err)
	}
	type badOption struct {
		_  struct{} `Type:"BadOption" PK:"R#{id}" SK:"R" singletable:"shard=2"`
		ID string   `dynamodbav:"id"`
	}
	_, err = Register[badOption](tbl)
	if err == nil || !strings.Contains(err.Error(), "shards=N, shardBy=attr+attr or unique=attr+attr") {
		t.Errorf("an unknown entity option: %v, want the options named", err)
	}
}

// TestErrorReferenceComplete holds the package doc (doc.go) to errors.go and
// the package's error types: every exported sentinel of errors.go and every
// exported type of the root package with an Error() string method is named
// there as a doc link ([ErrX], [*XError]).
func TestErrorReferenceComplete(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sentinels []string
	for _, decl := range f.Decls {
		if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, spec := range g.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if name.IsExported() {
						sentinels = append(sentinels, name.Name)
					}
				}
			}
		}
	}
	if len(sentinels) < 15 {
		t.Fatalf("errors.go declares %d exported variables: %q", len(sentinels), sentinels)
	}
	for _, s := range sentinels {
		if !strings.Contains(string(doc), "["+s+"]") {
			t.Errorf("doc.go does not name the sentinel %s of errors.go: add [%s] to its error section (# Safety)", s, s)
		}
	}
	files, _ := filepath.Glob("*.go")
	var types []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Error" || fd.Type.Params.NumFields() != 0 ||
				fd.Type.Results.NumFields() != 1 || typeText(fd.Type.Results.List[0].Type) != "string" {
				continue
			}
			recv := strings.TrimPrefix(typeText(fd.Recv.List[0].Type), "*")
			if ast.IsExported(recv) {
				types = append(types, recv)
			}
		}
	}
	if !slices.Contains(types, "ConflictError") || len(types) < 10 {
		t.Fatalf("found the error types %q", types)
	}
	for _, typ := range types {
		if !strings.Contains(string(doc), "[*"+typ+"]") && !strings.Contains(string(doc), "["+typ+"]") {
			t.Errorf("doc.go does not name the error type %s: add [*%s] to its error section (# Safety)", typ, typ)
		}
	}
}

// typeText renders a simple type expression (string, *T, T[X]).
func typeText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + typeText(e.X)
	case *ast.IndexExpr:
		return typeText(e.X)
	}
	return ""
}

// TestDependencySentence keeps the README's sentence on what the package
// compiles in true: every module outside the AWS SDK for Go v2 (and its
// smithy-go) that the root package depends on is named in README.md.
func TestDependencySentence(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		if seen[m] || m == "github.com/singletable/singletable" || strings.HasPrefix(m, "github.com/aws/aws-sdk-go-v2") || m == "github.com/aws/smithy-go" {
			continue
		}
		seen[m] = true
		if !strings.Contains(string(readme), "`"+m+"`") {
			t.Errorf("the root package compiles in the module %s, which README.md's dependency sentence (## Install) does not name", m)
		}
	}
	if len(seen) == 0 {
		t.Log("the root package compiles in the AWS SDK alone")
	}
}
