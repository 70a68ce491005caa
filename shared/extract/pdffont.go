package extract

import (
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxGlyphWidths bounds the width tables read from one font.
const maxGlyphWidths = 1 << 16

// fontInfo is what text extraction needs of a font: how to decode its strings and how wide each
// glyph is, so the walker knows where a string ends.
type fontInfo struct {
	enc      pdf.TextEncoding // nil: bytes are read as Latin-1
	unmapped bool             // a composite font whose codes cannot be turned into text
	twoByte  bool             // composite (Type0) fonts use two-byte codes
	first    int              // simple fonts: the code of widths[0]
	widths   []float64
	cidW     map[int]float64 // composite fonts: widths by CID
	missing  float64         // width of codes without an entry
	scale    float64         // glyph space to text space: 1/1000, or a Type3 font's FontMatrix

	// Decoded codes, filled as met: the library's encoders search the Differences array or the
	// ToUnicode map linearly for every glyph, which made decoding most of the extraction time.
	single  [256]string
	singleK [256]bool
	pairs   map[uint16]string
}

// noFont stands in when a string is shown before any font is set.
var noFont = fontInfo{missing: 500, scale: 0.001}

// font returns the font a content stream names, parsed once per document. Fonts are cached under
// the text of the font resource dictionary plus the name (pages usually share that dictionary, and
// its text names the font objects), and under the text of the font dictionary itself, which names
// the objects (ToUnicode, descendants) that decide decoding.
func (w *pageWalker) font(sc *scope, name string) *fontInfo {
	byName := sc.fontsKey + "\x00" + name
	if f, ok := w.doc.fonts[byName]; ok {
		return f
	}
	var f *fontInfo
	if v := sc.fonts.Key(name); v.Kind() == pdf.Dict {
		key := v.String()
		if f = w.doc.fonts[key]; f == nil {
			w.guard(v.Key("ToUnicode"), "the character map of a font on page %d")
			f = newFontInfo(v)
			w.doc.fonts[key] = f
		}
	}
	w.doc.fonts[byName] = f
	return f
}

func newFontInfo(v pdf.Value) *fontInfo {
	pf := &pdf.Font{V: v}
	f := &fontInfo{scale: 0.001, missing: 500}
	if v.Key("Subtype").Name() == "Type0" {
		f.twoByte = true
		// The library decodes composite fonts only through Identity-H with a ToUnicode map (or the
		// UCS-2 CMap); any other CMap would come out as raw code bytes, so that text is left out
		// and reported rather than emitted as garbage.
		enc := v.Key("Encoding").Name()
		hasMap := v.Key("ToUnicode").Kind() == pdf.Stream
		if enc == "Identity-H" && hasMap || enc == "UniGB-UCS2-H" {
			f.enc = pf.Encoder()
		} else {
			f.unmapped = true
		}
		desc := v.Key("DescendantFonts").Index(0)
		f.missing = 1000
		if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.missing = dw.Float64()
		}
		f.cidW = cidWidths(desc.Key("W"))
		return f
	}
	f.enc = pf.Encoder()
	f.first = int(v.Key("FirstChar").Int64())
	ws := v.Key("Widths")
	for i := 0; i < ws.Len() && i < maxGlyphWidths; i++ {
		f.widths = append(f.widths, ws.Index(i).Float64())
	}
	if mw := v.Key("FontDescriptor").Key("MissingWidth").Float64(); mw > 0 {
		f.missing = mw
	}
	if v.Key("Subtype").Name() == "Type3" {
		if m := v.Key("FontMatrix"); m.Len() == 6 && m.Index(0).Float64() != 0 {
			f.scale = m.Index(0).Float64()
		}
	}
	return f
}

// cidWidths reads a composite font's W array: "c [w1 w2 …]" gives widths from CID c on,
// "cfirst clast w" one width for a range.
func cidWidths(a pdf.Value) map[int]float64 {
	m := map[int]float64{}
	for i := 0; i+1 < a.Len() && len(m) < maxGlyphWidths; {
		c := int(a.Index(i).Float64())
		next := a.Index(i + 1)
		if next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && len(m) < maxGlyphWidths; j++ {
				m[c+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		last, w := int(next.Float64()), a.Index(i+2).Float64()
		for k := c; k <= last && len(m) < maxGlyphWidths; k++ {
			m[k] = w
		}
		i += 3
	}
	return m
}

// decode turns a string's codes into text, one code at a time (one byte for simple fonts, two
// for composite ones, as the encoders the library builds for them read them).
func (f *fontInfo) decode(raw string) string {
	var b strings.Builder
	if f.enc == nil {
		for i := 0; i < len(raw); i++ {
			b.WriteRune(rune(raw[i]))
		}
		return b.String()
	}
	if f.twoByte {
		if f.pairs == nil {
			f.pairs = map[uint16]string{}
		}
		for i := 0; i+1 < len(raw); i += 2 {
			code := uint16(raw[i])<<8 | uint16(raw[i+1])
			s, ok := f.pairs[code]
			if !ok {
				s = f.enc.Decode(raw[i : i+2])
				f.pairs[code] = s
			}
			b.WriteString(s)
		}
		return b.String()
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !f.singleK[c] {
			f.single[c], f.singleK[c] = f.enc.Decode(raw[i:i+1]), true
		}
		b.WriteString(f.single[c])
	}
	return b.String()
}

// advance is how far a string moves the text position (PDF 32000-1:2008, 9.4.4): each glyph's
// width scaled by the font size, plus character spacing, plus word spacing after a single-byte
// space, all times the horizontal scaling.
func (f *fontInfo) advance(raw string, s *textState) float64 {
	var adv float64
	step := 1
	if f.twoByte {
		step = 2
	}
	for i := 0; i+step <= len(raw); i += step {
		code := int(raw[i])
		if f.twoByte {
			code = code<<8 | int(raw[i+1])
		}
		g := f.width(code)*f.scale*s.size + s.tc
		if code == 32 && !f.twoByte {
			g += s.tw
		}
		adv += g * s.th
	}
	return adv
}

func (f *fontInfo) width(code int) float64 {
	if f.twoByte {
		if w, ok := f.cidW[code]; ok {
			return w
		}
		return f.missing
	}
	if i := code - f.first; i >= 0 && i < len(f.widths) && f.widths[i] > 0 {
		return f.widths[i]
	}
	return f.missing
}
