package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/updateplan"
)

// List, set and nested operations of [Entity.Update]: [Append], [Prepend],
// [DeleteFromSet], [SetIfNotExists], and [Set] and [Remove] on document paths
// ("address.city", "tags[2]"). Each is checked against T's Go types at the call
// (see the notes on document paths in internal/docpath), encoded as the field's own
// dynamodbav tag encodes it, and sent with placeholders for every name. The rules
// of Set hold for them too: inputs of the primary key, the version and the fields
// the library writes (createdAt, updatedAt, the counter) cannot be changed; a
// versioned entity's update carries its version condition and stores the next
// version; the values sent count towards the item limit. Two changes of one
// update may not overlap (one path a prefix of the other), as DynamoDB requires.
//
// Appending, prepending, and changing a list element by index are not idempotent
// (a second attempt would append again, or change another element), so such an
// update carries a receipt, as one with [Add] does, and is never sent twice after
// a lost response.
//
// Append and Prepend work on a list that is missing, stored as a list, or stored
// as NULL (a nil slice without omitempty, as the library itself stores one). No
// one update expression covers all three (if_not_exists does not see through a
// NULL), so each is planned both ways (listOp): for a list or none,
// list_append(if_not_exists(path, []), elems) on the condition that the path does
// not hold NULL; for a NULL, list_append([], elems) on the condition that it does.
// The update is sent in the first form; when its condition fails and the item as
// it stood holds NULL there, it is sent again at once in the other form (and back,
// should the item change again), carrying the same receipt: it is still applied
// once at most, and judged as any update after a lost answer.

// opNames name the operations after their options, for messages.
var opNames = updateplan.Names

// Append appends elems to the list at path (a list attribute, or a list inside
// one: "lines", "orders[0].notes"), creating the list when there is none
// (SET path = list_append(if_not_exists(path, []), elems)). Each element must be
// of the list's element type or convert to it without loss. Not idempotent: see
// the notes above.
func Append(path string, elems ...any) UpdateOption {
	return changeOption{Op: updateplan.Append, Attr: path, Values: elems}
}

// Prepend puts elems at the front of the list at path, in the order given,
// creating the list when there is none; as [Append].
func Prepend(path string, elems ...any) UpdateOption {
	return changeOption{Op: updateplan.Prepend, Attr: path, Values: elems}
}

// DeleteFromSet removes elems from the set attribute attr (a field tagged
// stringset, numberset or binaryset, or a [][]byte): DynamoDB's DELETE. Elements
// not in the set are ignored; a set left empty is removed. DynamoDB allows it on
// top-level attributes only. Idempotent.
func DeleteFromSet(attr string, elems ...any) UpdateOption {
	return changeOption{Op: updateplan.DeleteElems, Attr: attr, Values: elems}
}

// SetIfNotExists sets the attribute or document path to value only when it holds
// nothing yet (SET path = if_not_exists(path, value)); a stored value is kept. It
// cannot change an input of an index key, whose keys could then not be recomputed
// (whether it stores the value is known only on the server).
func SetIfNotExists(path string, value any) UpdateOption {
	return changeOption{Op: updateplan.SetIfNotExists, Attr: path, Value: value}
}

// listOp is an Append or Prepend planned both ways (see the notes above).
type listOp = updateplan.ListOp

// adapt switches the Appends and Prepends of an update whose condition failed to
// the form the item as it stood (cur) calls for: NULL where a list is stored as
// NULL; and a derived ttl stored with if_not_exists to the one the item's stored
// createdAt gives (ttlexpiry.Legacy). It reports whether it changed anything,
// and so whether to send again.
func (w *writeRequest) adapt(cur map[string]types.AttributeValue) bool {
	if cur == nil || !w.info.isType(cur) {
		return false
	}
	changed := w.legacy.Adapt(&w.b, w.update, &w.cond, cur)
	if len(w.lists) > 0 {
		var lists bool
		w.update, w.cond, lists = updateplan.Adapt(w.lists, w.update, w.cond, cur)
		changed = changed || lists
	}
	return changed
}

// hint names, in DynamoDB's refusal of an update (a ValidationException), the
// changes it was refused for (updateplan.Hint).
func (w *writeRequest) hint(err error) error {
	return updateplan.Hint(err, w.update, w.paths, w.changed)
}
