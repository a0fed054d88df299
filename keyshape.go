package singletable

import "github.com/singletable/singletable/internal/keyshape"

// Bound key templates as parts (internal/keyshape), with the kind of each
// placeholder's field: what the reserved-prefix check of registration
// (lease_table.go) and the design (describe.go) read of them.

// shape splits a bound template into its parts.
func (kt *keyTemplate) shape() *keyshape.Template {
	kinds := make(map[string]keyshape.Kind, len(kt.fields))
	for i, name := range kt.tmpl.names {
		if i < len(kt.fields) {
			kinds[name] = shapeKind(keyKindOf(derefType(kt.fields[i].Type)))
		}
	}
	return keyshape.Parse(kt.tmpl.text, kinds)
}

type overlap = keyshape.Overlap

const overlapNone = keyshape.None

// mayBeginWith reports whether keys rendered from kt can begin with prefix.
func mayBeginWith(kt *keyTemplate, prefix string, delim byte) overlap {
	return kt.shape().MayBeginWith(prefix, delim)
}

// shapeKind names a placeholder input's kind.
func shapeKind(k kvKind) keyshape.Kind {
	switch k {
	case kvString:
		return keyshape.String
	case kvInt:
		return keyshape.Int
	case kvUint:
		return keyshape.Uint
	case kvTime:
		return keyshape.Time
	}
	return ""
}
