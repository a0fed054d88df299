package singletable

import (
	"github.com/singletable/singletable/internal/keyshape"
	"github.com/singletable/singletable/internal/keytmpl"
)

// Bound key templates as parts (internal/keyshape), with the kind of each
// placeholder's field: what the reserved-prefix check of registration
// (lease_table.go) and the design (describe.go) read of them.

// shape splits a bound template into its parts.
func (kt *keyTemplate) shape() *keyshape.Template {
	kinds := make(map[string]keyshape.Kind, len(kt.fields))
	for i, name := range kt.tmpl.k.Names {
		if i < len(kt.fields) {
			kinds[name] = keyshape.KindOf(keytmpl.KindOf(derefType(kt.fields[i].Type)))
		}
	}
	return keyshape.Parse(kt.tmpl.k.Text, kinds)
}

type overlap = keyshape.Overlap

const overlapNone = keyshape.None

// mayBeginWith reports whether keys rendered from kt can begin with prefix.
func mayBeginWith(kt *keyTemplate, prefix string, delim byte) overlap {
	return kt.shape().MayBeginWith(prefix, delim)
}
