package updateplan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/singletable/singletable/internal/docpath"
)

// Hint names, in DynamoDB's refusal of an update (a ValidationException), the
// changes it was refused for, which only the server could check against the
// stored item: an operand of another type than the change needs (Add to a string,
// Append to a map), or a nested path whose parent the item does not hold. update
// is the update expression sent ("": none), paths the document paths changed,
// changed the changes named for messages. Any other error is returned as it is.
func Hint(err error, update string, paths []docpath.Path, changed []string) error {
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" || update == "" {
		return err
	}
	if strings.Contains(api.ErrorMessage(), "document path") {
		var nested []string
		for _, p := range paths {
			if len(p.Steps) > 1 {
				nested = append(nested, strconv.Quote(p.Text))
			}
		}
		if len(nested) > 0 {
			return fmt.Errorf("a path of %s goes into a map or list the stored item does not hold (missing or NULL): Set the whole attribute first; nothing was written: %w", strings.Join(nested, ", "), err)
		}
	}
	if len(changed) == 0 {
		changed = []string{"the library's own attributes"}
	}
	what := "DynamoDB refused the update"
	if strings.Contains(api.ErrorMessage(), "incorrect data type") {
		what = "a value stored in the item is not of the type a change needs (Add a number or a set, Append and Prepend a list, DeleteFromSet a set)"
	}
	return fmt.Errorf("%s (changes: %s); nothing was written: %w", what, strings.Join(changed, ", "), err)
}
