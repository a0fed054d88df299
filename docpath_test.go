package singletable

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/docpath"
)

// exprPath is what an expression may hold of a path: placeholders and indexes,
// never a name of the caller's.
var exprPath = regexp.MustCompile(`^#n[0-9]+(\.#n[0-9]+|\[[0-9]+\])*$`)

// FuzzDocPath parses arbitrary paths: a path that parses renders back to itself
// and into an expression of placeholders only; checking it against opsDoc's
// types and encoding a zero value at its end never panics; every failure is an
// error.
func FuzzDocPath(f *testing.F) {
	for _, s := range []string{"a", "address.city", "tags[2]", "lines[0].sku", "meta.k", "fixed[2]", "address.geo.lat",
		"a[", "a]", "[0]", ".a", "a..b", "a[01]", "lines[999999]", "meta.x.y", "any.x", "labels[0]", "tags[0].x", "a#b.:c[3]", "size"} {
		f.Add(s)
	}
	info, err := compileEntity(offlineTable(f), reflect.TypeFor[opsDoc]())
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := docpath.Parse(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("%q renders as %q", s, p.String())
		}
		again, err := docpath.Parse(p.String())
		if err != nil || !reflect.DeepEqual(again.Steps, p.Steps) {
			t.Fatalf("%q does not parse back: %v", s, err)
		}
		var w writeRequest
		if e := p.Expr(&w.b); !exprPath.MatchString(e) {
			t.Fatalf("%q renders the expression %q", s, e)
		}
		for ph, name := range w.b.Names() {
			found := false
			for _, st := range p.Steps {
				found = found || !st.IsIndex && st.Name == name
			}
			if !found {
				t.Fatalf("%q: placeholder %s names %q, no step of the path", s, ph, name)
			}
		}
		rp, err := info.resolvePath(p)
		if err != nil {
			return
		}
		if _, _, err := rp.Encode(reflect.Zero(rp.Leaf)); err != nil {
			t.Logf("%q: encoding a zero %s: %v", s, rp.Leaf, err)
		}
	})
}
