package fanout

import (
	"encoding/binary"
	"fmt"

	"github.com/singletable/singletable/internal/cursor"
	"github.com/singletable/singletable/internal/keytmpl"
)

// A fan-out cursor records, per partition, where the next page starts. Its
// payload, in the envelope of internal/cursor (kind cursor.KindFanout):
//
//	boundary | per partition: state(1) [| per key attribute: uvarint(len) value]
//
// boundary is 0, or 1 | uvarint(stream) | uvarint(len) sort key: the merge position
// of the last item returned. state 0: not read yet; 1: after the key that follows;
// 2: read to the end; 3 and 4: as 0 and 1 for a partition that failed, whose items
// before the boundary are still to be returned.

// Seal returns the cursor that resumes q where it stands, for the query id,
// signed with secret; kt says how the table's keys are written.
func (q *Query) Seal(secret []byte, kt cursor.KeyTypes, id cursor.ID) (string, error) {
	b, err := q.appendCursor(cursor.Begin(cursor.KindFanout, id), kt)
	if err != nil {
		return "", err
	}
	return cursor.Seal(secret, b), nil
}

// Open sets q's boundary and streams from a cursor Seal made for the query id.
// Its errors match invalid.
func (q *Query) Open(secret []byte, kt cursor.KeyTypes, id cursor.ID, c string, invalid error) error {
	rest, err := cursor.Open(secret, cursor.KindFanout, id, c, invalid)
	if err != nil {
		return err
	}
	return q.readCursor(rest, kt, invalid)
}

// appendCursor appends to b the payload of the cursor that resumes q.
func (q *Query) appendCursor(b []byte, kt cursor.KeyTypes) ([]byte, error) {
	if p := q.Boundary; p != nil {
		b = append(b, 1)
		b = cursor.AppendText(binary.AppendUvarint(b, uint64(p.Stream)), p.SK)
	} else {
		b = append(b, 0)
	}
	for _, s := range q.Streams {
		exempt := byte(0)
		switch {
		case s.Failed == nil && len(s.Buf) == 0 && s.Done && s.Fetched:
			// Read to the end (also after failing on an earlier page).
			b = append(b, 2)
			continue
		case s.Failed != nil || s.Exempt:
			exempt = 3 // resume where it stood, without skipping to the boundary
		}
		if s.Pos == nil {
			b = append(b, 0+exempt)
			continue
		}
		b = append(b, 1+exempt)
		var err error
		if b, err = cursor.AppendKey(b, kt, q.KeyAttrs, s.Pos); err != nil {
			return nil, fmt.Errorf("singletable: cursor: %w", err)
		}
	}
	return b, nil
}

// readCursor sets q's boundary and streams from a payload appendCursor wrote.
func (q *Query) readCursor(rest []byte, kt cursor.KeyTypes, invalid error) error {
	if len(rest) == 0 {
		return fmt.Errorf("%w: truncated", invalid)
	}
	switch rest[0] {
	case 1:
		rest = rest[1:]
		stream, w := binary.Uvarint(rest)
		if w <= 0 || stream >= uint64(len(q.Streams)) {
			return fmt.Errorf("%w: bad boundary", invalid)
		}
		sk, after, ok := cursor.ReadText(rest[w:])
		if !ok {
			return fmt.Errorf("%w: bad boundary", invalid)
		}
		q.Boundary = &Pos{Stream: int(stream), SK: sk}
		rest = after
	case 0:
		rest = rest[1:]
	default:
		return fmt.Errorf("%w: bad boundary", invalid)
	}
	for _, s := range q.Streams {
		if len(rest) == 0 {
			return fmt.Errorf("%w: truncated", invalid)
		}
		state := rest[0]
		rest = rest[1:]
		if state >= 3 {
			s.Exempt = true
			state -= 3
		}
		switch state {
		case 0:
		case 2:
			s.Done, s.Fetched = true, true
		case 1:
			start, after, ok := cursor.ReadKey(rest, kt, q.KeyAttrs)
			if !ok {
				return fmt.Errorf("%w: truncated", invalid)
			}
			rest = after
			if got, _ := keytmpl.TextOf(start[q.PartitionKey]); got != s.Partition {
				return fmt.Errorf("%w: it points into another partition", invalid)
			}
			s.Start, s.Pos = start, start
		default:
			return fmt.Errorf("%w: bad partition state", invalid)
		}
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: trailing bytes", invalid)
	}
	return nil
}
