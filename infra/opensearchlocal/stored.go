package opensearchlocal

import (
	"bytes"
	"math"
	"strconv"
)

// storedSource is a document's _source as it was sent, kept compactly. A knn_vector array is
// most of a chunk's source (512 numbers of about 11 characters each), and its float32 values
// are kept anyway for search: an array whose text is exactly what encoding/json writes for
// those values (as opensearch-go users and shared/vectors send them) is cut out of the stored
// bytes and written again from the vector when the source is read. Any other spelling (spaces,
// "1.0", more digits than float32 holds) stays in the bytes as sent, so reads are byte-exact
// either way.
type storedSource struct {
	raw  []byte   // the source without its cut vectors; nil when _source is disabled
	cuts []vecCut // in increasing at order
}

// vecCut is one vector array removed from raw: it belongs at raw[at].
type vecCut struct {
	at  int
	vec []float32
}

// vecSpan is where a parsed knn_vector array lies in the source: src[start:end] is "[…]".
type vecSpan struct {
	start, end int
	vec        []float32
}

// compactSource stores src, cutting out the spans whose bytes re-render exactly.
func compactSource(src []byte, spans []vecSpan) storedSource {
	var keep []vecSpan
	var buf []byte
	cut, prev := 0, 0
	for _, sp := range spans {
		if sp.start < prev || sp.end > len(src) || sp.start >= sp.end {
			continue
		}
		buf = appendVectorJSON(buf[:0], sp.vec)
		if bytes.Equal(buf, src[sp.start:sp.end]) {
			keep = append(keep, sp)
			cut += sp.end - sp.start
			prev = sp.end
		}
	}
	out := storedSource{raw: make([]byte, 0, len(src)-cut)}
	prev = 0
	for _, sp := range keep {
		out.raw = append(out.raw, src[prev:sp.start]...)
		out.cuts = append(out.cuts, vecCut{at: len(out.raw), vec: sp.vec})
		prev = sp.end
	}
	out.raw = append(out.raw, src[prev:]...)
	return out
}

// bytes is the source as it was sent (nil when there is none).
func (s storedSource) bytes() []byte {
	if len(s.cuts) == 0 {
		return s.raw
	}
	size := len(s.raw)
	for _, c := range s.cuts {
		size += 12 * len(c.vec)
	}
	out := make([]byte, 0, size)
	prev := 0
	for _, c := range s.cuts {
		out = append(out, s.raw[prev:c.at]...)
		out = appendVectorJSON(out, c.vec)
		prev = c.at
	}
	return append(out, s.raw[prev:]...)
}

// parsed is the source as a JSON value (nil when there is none).
func (s storedSource) parsed() *jv {
	if s.raw == nil {
		return nil
	}
	v, err := parseJSON(s.bytes())
	if err != nil {
		return nil // stored sources were valid JSON when they were indexed
	}
	return v
}

// appendVectorJSON writes a float32 array as encoding/json does ("[0.1,-2e-7]").
func appendVectorJSON(b []byte, vec []float32) []byte {
	b = append(b, '[')
	for i, x := range vec {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat32JSON(b, x)
	}
	return append(b, ']')
}

// appendFloat32JSON is encoding/json's floatEncoder for 32 bits: the shortest decimal that
// reads back as the same float32, in exponent form below 1e-6 and from 1e21 on.
func appendFloat32JSON(b []byte, x float32) []byte {
	f := float64(x)
	format := byte('f')
	if abs := float32(math.Abs(f)); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 32)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
