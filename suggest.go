package singletable

import (
	"github.com/singletable/singletable/internal/codec"
	"github.com/singletable/singletable/internal/suggest"
)

// Names in messages. Templates, options and Set speak of stored attribute names;
// Go code speaks of fields. A message names both where it helps,
// "createdAt (Order.CreatedAt)", and when a name matches nothing it suggests the
// closest one it could have meant.

// fieldLabel names a field by its stored attribute and its Go field:
// "createdAt (Order.CreatedAt)".
func fieldLabel(entity string, f *codec.Field) string {
	return f.Name + " (" + entity + "." + f.GoName + ")"
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to name, or
// "" when none is close (internal/suggest).
func didYouMean(name string, candidates []string) string {
	return suggest.DidYouMean(name, candidates)
}
