package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Break strengths between two pieces of text, weakest first; the strongest one asked for between
// two pieces wins.
const (
	breakNone = iota
	breakSpace
	breakCell // between table cells
	breakLine
	breakPara
)

var breakText = [...]string{breakSpace: " ", breakCell: " | ", breakLine: "\n", breakPara: "\n\n"}

// layout assembles text from structured sources (HTML, DOCX): the source says where words, line
// breaks and paragraph breaks go, layout makes sure each break is written once and none at the
// start. It stops growing at limit bytes and remembers that it overflowed.
type layout struct {
	b        textBuf
	pending  int
	marker   string // a list marker waiting for its item's first text
	limit    int
	overflow bool
	// head captures the text of the heading being written (nil outside one), heads the
	// headings written so far.
	head      *strings.Builder
	headLevel int
	heads     []heading
}

// beginHeading starts capturing a heading of level (HTML's h1–h6, a DOCX heading paragraph).
func (l *layout) beginHeading(level int) {
	l.endHeading()
	l.head, l.headLevel = &strings.Builder{}, level
}

// endHeading ends the heading being captured, if any; one without text is left out.
func (l *layout) endHeading() {
	if l.head == nil {
		return
	}
	if t := l.head.String(); strings.TrimSpace(t) != "" {
		l.heads = append(l.heads, heading{level: l.headLevel, text: t})
	}
	l.head = nil
}

// mark puts a list marker ("- ", "3. ") before the next text; breaks asked for between the marker
// and that text (an item's inner <p>) are dropped, so the marker stays on the item's line.
func (l *layout) mark(s string) {
	if l.marker == "" {
		l.marker = s
	}
}

// brk asks for a break of at least strength k before the next text.
func (l *layout) brk(k int) {
	if k > l.pending && l.marker == "" {
		l.pending = k
	}
}

// flow writes text whose whitespace is not significant (HTML outside <pre>): runs of whitespace
// become one space.
func (l *layout) flow(s string) {
	if s == "" {
		return
	}
	if r, _ := utf8.DecodeRuneInString(s); isHTMLSpace(r) {
		l.brk(breakSpace)
	}
	for i, f := range strings.FieldsFunc(s, isHTMLSpace) {
		if i > 0 {
			l.brk(breakSpace)
		}
		l.write(f)
	}
	if r, _ := utf8.DecodeLastRuneInString(s); isHTMLSpace(r) {
		l.brk(breakSpace)
	}
}

// verbatim writes text whose whitespace is significant (<pre>, DOCX runs).
func (l *layout) verbatim(s string) {
	if s != "" {
		l.write(s)
	}
}

func (l *layout) write(s string) {
	if l.overflow {
		return
	}
	if l.b.Len() > 0 && l.pending > breakNone {
		sep := breakText[l.pending]
		if l.pending == breakSpace && unicode.IsSpace(l.b.lastRune()) {
			sep = ""
		}
		l.b.WriteString(sep)
		if l.head != nil && l.head.Len() > 0 {
			l.head.WriteString(sep)
		}
	}
	l.pending = breakNone
	if l.marker != "" {
		s, l.marker = l.marker+s, ""
	}
	if l.b.Len()+len(s) > l.limit {
		l.overflow = true
		return
	}
	l.b.WriteString(s)
	if l.head != nil && l.head.Len() < 4*MaxHeadingBytes {
		l.head.WriteString(s)
	}
}

func (l *layout) String() string { return l.b.String() }

// isHTMLSpace is ASCII whitespace as HTML defines it; a no-break space is content, not layout.
func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}
