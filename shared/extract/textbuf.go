package extract

import (
	"strings"
	"unicode/utf8"
)

// Chunk sizes of textBuf: small documents stay small, large ones grow in 1 MiB steps.
const (
	textBufFirst = 4 << 10
	textBufMax   = 1 << 20
)

// textBuf accumulates extracted text in chunks that are never copied while it grows. A
// strings.Builder grows by copying into a buffer a quarter larger, leaving about four times the
// text behind as garbage; near the 32 MiB text limit that garbage alone took the heap past 100 MB
// before the collector caught up.
type textBuf struct {
	chunks [][]byte
	n      int
	last   [utf8.UTFMax]byte // the last bytes written, for lastRune
	nlast  int
}

// WriteString appends s.
func (t *textBuf) WriteString(s string) {
	if s == "" {
		return
	}
	t.n += len(s)
	t.remember(s)
	for len(s) > 0 {
		k := len(t.chunks) - 1
		if k < 0 || len(t.chunks[k]) == cap(t.chunks[k]) {
			size := textBufFirst
			if k >= 0 {
				size = min(2*cap(t.chunks[k]), textBufMax)
			}
			t.chunks = append(t.chunks, make([]byte, 0, size))
			k++
		}
		c := t.chunks[k]
		m := min(len(s), cap(c)-len(c))
		t.chunks[k] = append(c, s[:m]...)
		s = s[m:]
	}
}

// WriteBytes appends p, in small pieces: no copy of the whole of p as one string.
func (t *textBuf) WriteBytes(p []byte) {
	for len(p) > 0 {
		m := min(len(p), 1<<10)
		t.WriteString(string(p[:m]))
		p = p[m:]
	}
}

func (t *textBuf) remember(s string) {
	if len(s) >= utf8.UTFMax {
		t.nlast = copy(t.last[:], s[len(s)-utf8.UTFMax:])
		return
	}
	keep := min(t.nlast, utf8.UTFMax-len(s))
	copy(t.last[:], t.last[t.nlast-keep:t.nlast])
	t.nlast = keep + copy(t.last[keep:], s)
}

// Len is the number of bytes written.
func (t *textBuf) Len() int { return t.n }

// lastRune is the last character written, utf8.RuneError when none.
func (t *textBuf) lastRune() rune {
	r, _ := utf8.DecodeLastRune(t.last[:t.nlast])
	return r
}

// HasSuffix reports whether the text ends in s, which must be at most utf8.UTFMax bytes.
func (t *textBuf) HasSuffix(s string) bool {
	return strings.HasSuffix(string(t.last[:t.nlast]), s)
}

// String is the text, copied once into a string of the exact size.
func (t *textBuf) String() string {
	var b strings.Builder
	b.Grow(t.n)
	for _, c := range t.chunks {
		b.Write(c)
	}
	return b.String()
}
