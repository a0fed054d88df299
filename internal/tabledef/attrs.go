package tabledef

import (
	"fmt"
	"maps"
	"slices"
)

// Own is one of the library's own attributes: what it is, in words that name
// its option, and its name ("" for none).
type Own struct{ What, Name string }

// CheckOwn refuses two of the library's own attributes under one name: the key
// attributes keys, the attributes own, and the receipt slots (isReceipt, named
// by receiptAttr), each of which would overwrite another on every write. Its
// error says which, in words.
func CheckOwn(keys []string, own []Own, isReceipt func(string) bool, receiptAttr string) error {
	owners := map[string]string{}
	for _, attr := range keys {
		owners[attr] = "a key attribute"
	}
	for _, a := range own {
		if a.Name == "" {
			continue
		}
		if isReceipt(a.Name) {
			return fmt.Errorf("%s %q is also a receipt attribute (WithReceiptAttribute %q)", a.What, a.Name, receiptAttr)
		}
		if other, dup := owners[a.Name]; dup {
			return fmt.Errorf("%s %q is also %s", a.What, a.Name, other)
		}
		owners[a.Name] = a.What
	}
	for _, attr := range slices.Sorted(maps.Keys(owners)) {
		if isReceipt(attr) {
			return fmt.Errorf("%s %q is also a receipt attribute (WithReceiptAttribute %q)", owners[attr], attr, receiptAttr)
		}
	}
	return nil
}
