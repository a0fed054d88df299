package keyshape

import (
	"strings"

	"github.com/singletable/singletable/internal/keytmpl"
)

// Ph is what decides one placeholder's language besides its format: the kind
// of its field, and for the shard field the number of shards (0 otherwise).
type Ph struct {
	Kind   keytmpl.Kind
	Shards int
}

// zeros is the layout of a fixed number of digits (at most 20: internal/keytmpl).
const zeros = "00000000000000000000"

// LangOf returns the language of template tm whose placeholders, in order, are
// described by phs.
func LangOf(tm *keytmpl.Template, phs []Ph) *Lang {
	segs := make([]Seg, len(tm.Segs))
	pi := 0
	for si := range tm.Segs {
		s := &tm.Segs[si]
		if s.Name == "" {
			segs[si] = Seg{Literal: s.Literal}
			continue
		}
		ph := phs[pi]
		pi++
		seg := Seg{Placeholder: true, Kind: KindOf(ph.Kind), Shards: ph.Shards}
		switch s.Format {
		case keytmpl.Pad, keytmpl.Unix, keytmpl.UnixMs, keytmpl.Rev:
			seg.Layout = zeros[:s.Width]
		case keytmpl.Time:
			seg.Layout = keytmpl.TimeLayout
		case keytmpl.Date:
			seg.Layout = keytmpl.DateLayout
		default:
			if ph.Shards == 0 && ph.Kind == keytmpl.KindTime {
				seg.Layout = keytmpl.TimeLayout // a plain time renders as {t:time}
			}
		}
		segs[si] = seg
	}
	return NewLang(segs, tm.Delim)
}

// KindOf names a placeholder input's kind.
func KindOf(k keytmpl.Kind) Kind {
	switch k {
	case keytmpl.KindString:
		return String
	case keytmpl.KindInt:
		return Int
	case keytmpl.KindUint:
		return Uint
	case keytmpl.KindTime:
		return Time
	}
	return ""
}

// PrefixFor makes a key prefix of a discriminator: its letters and digits in
// capitals ("TYPE" when it has none).
func PrefixFor(discriminator string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(discriminator) {
		if ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "TYPE"
	}
	return b.String()
}
