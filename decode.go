package singletable

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type decodeOptions struct{ unknown UnknownTypes }

func collectDecodeOptions(opts []DecodeOption) (decodeOptions, error) {
	var o decodeOptions
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.applyDecode(&o); err != nil {
			return o, errorf("Decode: %w", err)
		}
	}
	return o, nil
}

// Decode decodes an item image (from a stream record, a Lambda event, an
// export, a raw SDK call) into a value of the entity type its type attribute
// names, such as an Order (not an *Order), for a type switch. An item of an
// older schema is migrated in memory, as every read path does, and not written
// back: an image may be older than the item. An item whose type is missing or
// unregistered is an [*UnknownTypeError], unless [OnUnknown] says otherwise:
// UnknownSkip gives (nil, nil) and UnknownCollect gives the item as a RawItem.
// Decode sends nothing and does not modify item; the value may share byte
// slices with it. It is safe for concurrent use.
func (t *Table) Decode(item RawItem, opts ...DecodeOption) (any, error) {
	if err := t.refused("Table.Decode"); err != nil {
		return nil, err
	}
	o, err := collectDecodeOptions(opts)
	if err != nil {
		return nil, err
	}
	p := t.imagePlan(o.unknown) // readpath.go
	v, verdict, err := p.readAny(context.Background(), item)
	if err != nil || verdict != itemRead && verdict != itemRaw {
		return nil, err
	}
	return v, nil
}

// DecodeRecord returns r with Type, Old and New set from its OldImage and
// NewImage, decoded as [Table.Decode] does: the rules by which the stream
// consumers (packages stream and streamlambda) decode every record. deliver
// is false for a record to pass over: every image present is of an unknown
// type and [OnUnknown] says UnknownSkip, or the record is one of the library's
// own items (the leases and sweep progress it keeps in the table, whose type
// attribute begins with "_singletable."), which are always passed over.
// A record with one image of a registered type is delivered, the other image
// decoded as OnUnknown says. r is a value: the caller's copy is not changed.
// DecodeRecord sends nothing.
func (t *Table) DecodeRecord(r StreamRecord, opts ...DecodeOption) (_ StreamRecord, deliver bool, err error) {
	if err := t.refused("Table.DecodeRecord"); err != nil {
		return StreamRecord{}, false, err
	}
	o, err := collectDecodeOptions(opts)
	if err != nil {
		return r, false, err
	}
	r, deliver, _, err = t.decodeRecord(r, o.unknown)
	return r, deliver, err
}

// decodeRecord is DecodeRecord; own reports a record of the library's own items.
func (t *Table) decodeRecord(r StreamRecord, mode UnknownTypes) (_ StreamRecord, deliver, own bool, err error) {
	r.Type, r.Old, r.New = "", nil, nil
	p := t.imagePlan(mode) // readpath.go
	present, skipped := 0, 0
	for _, img := range []struct {
		item RawItem
		dst  *any
	}{{r.OldImage, &r.Old}, {r.NewImage, &r.New}} {
		if img.item == nil {
			continue
		}
		present++
		if s, ok := img.item[t.opts.TypeAttribute].(*types.AttributeValueMemberS); ok {
			r.Type = s.Value // the new image's, when both have one
			if strings.HasPrefix(s.Value, reservedTypePrefix) {
				return r, false, true, nil
			}
		}
		v, verdict, err := p.readAny(context.Background(), img.item) // never written back: ctx unused
		if err != nil {
			return r, false, false, err
		}
		if verdict != itemRead && verdict != itemRaw {
			skipped++
			continue
		}
		*img.dst = v
	}
	return r, present == 0 || skipped < present, false, nil
}
