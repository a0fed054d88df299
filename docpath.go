package singletable

import (
	"fmt"

	"github.com/singletable/singletable/internal/docpath"
)

// Document paths ("address.city", "tags[2]", "lines[0].sku") name a part of a
// stored attribute for an Update: parsed and checked against T's Go types in
// internal/docpath, so a typo fails at the call, not as a silent write to an
// attribute no field reads.

// resolvePath checks a path against the entity's types: its first step must
// name a stored attribute of the entity, the rest is docpath.Resolve's.
func (info *entityInfo) resolvePath(p docpath.Path) (*docpath.Resolved, error) {
	top, ok := info.plan.Field(p.Steps[0].Name)
	if !ok {
		return nil, fmt.Errorf("%q is not a stored attribute of %s%s: %w", p.Steps[0].Name, info.name, info.suggestAttr(p.Steps[0].Name), ErrInvalidInput)
	}
	return docpath.Resolve(p, top, info.attrName(top), ErrInvalidInput)
}
