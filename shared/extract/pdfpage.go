package extract

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on form XObjects (content streams a page draws by name): how deep they may nest and how
// many one page may draw, so a self-referencing form cannot loop.
const (
	maxFormDepth = 8
	maxFormCalls = 2000
)

// pageText is what one page yielded.
type pageText struct {
	number   int
	text     string
	images   int      // image XObjects and inline images drawn
	unmapped int      // glyphs in fonts without a Unicode mapping, left out
	overflow bool     // the page alone holds more text than the limit
	err      error    // set when the page's content was damaged; text holds what came before
	bomb     *pdfBomb // set when a stream of the page must not be read: the file is refused
}

// errTextLimit stops a page's interpretation once its text passes the limit.
var errTextLimit = errors.New("text limit reached")

// text extracts one page. It reads the content stream itself (with the library's Interpret) rather
// than calling Page.GetPlainText, which writes the strings of a line with no space between words
// that are positioned apart, the norm in TeX and many other producers ("ThisisversionO.21"). Here
// every string is placed by the text and graphics matrices: a move to another baseline is a line
// break (a large one a paragraph break), a gap wider than 0.15 em on the same line a space.
func (d *pdfDoc) text(number int, page pdf.Value) (pt pageText) {
	pt.number = number
	w := &pageWalker{doc: d, l: layout{limit: d.maxText + 1}}
	defer func() {
		if r := recover(); r != nil {
			if b, ok := r.(*pdfBomb); ok {
				pt.bomb = b
			} else if err, ok := r.(error); ok && errors.Is(err, errTextLimit) {
				pt.overflow = true
			} else {
				pt.err = fmt.Errorf("page %d: %v", number, r)
			}
		}
		pt.text, pt.images, pt.unmapped = ligatures.Replace(w.l.String()), w.images, w.unmapped
	}()
	w.state = textState{ctm: identity, th: 1}
	w.number = number
	w.guard(page.Key("Contents"), "the content of page %d")
	w.run(page.Key("Contents"), inherited(page, "Resources"), 0)
	return pt
}

// ligatures spells out the Latin ligature characters that PDF fonts map glyphs such as "fi" to, so
// "speciﬁcation" is found by a search for "specification".
var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi",
	"\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// inherited looks up a page attribute that may sit on an ancestor in the page tree.
func inherited(page pdf.Value, key string) pdf.Value {
	for v, i := page, 0; !v.IsNull() && i < maxPageTreeDepth; v, i = v.Key("Parent"), i+1 {
		if r := v.Key(key); !r.IsNull() {
			return r
		}
	}
	return pdf.Value{}
}

// matrix is a PDF transformation [a b c d e f]: x' = a·x + c·y + e, y' = b·x + d·y + f.
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul is m×n: first m, then n.
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func (m matrix) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

func translate(x, y float64) matrix { return matrix{1, 0, 0, 1, x, y} }

// textState is the part of the graphics state that q and Q save and restore.
type textState struct {
	ctm  matrix
	font *fontInfo
	size float64 // Tfs
	tc   float64 // character spacing
	tw   float64 // word spacing
	th   float64 // horizontal scaling, 1 = 100 %
	tl   float64 // leading
	rise float64
}

// pageWalker interprets content streams and lays out their text.
type pageWalker struct {
	doc       *pdfDoc
	l         layout
	state     textState
	stack     []textState
	tm, tlm   matrix
	inImage   bool // between BI and EI, where the lexer sees image bytes as operators
	images    int
	unmapped  int
	formCalls int
	number    int // the page's number, for messages

	// where the last string ended, in user space, its direction and its font size there
	have       bool
	endX, endY float64
	dirX, dirY float64
	lastSize   float64
}

// scope is the resources a content stream draws with.
type scope struct {
	res      pdf.Value
	fonts    pdf.Value // res.Key("Font"), resolved once: resolving is slow in object streams
	fontsKey string    // the font dictionary's text, naming the font objects
	xobjects *pdf.Value
	depth    int // form XObject nesting
}

// run interprets one content stream with its resources.
func (w *pageWalker) run(content, resources pdf.Value, depth int) {
	if content.IsNull() {
		return
	}
	fonts := resources.Key("Font")
	sc := &scope{res: resources, fonts: fonts, fontsKey: fonts.String(), depth: depth}
	pdf.Interpret(content, func(stk *pdf.Stack, op string) {
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		w.op(op, args, sc)
		if w.l.overflow {
			panic(errTextLimit)
		}
		select {
		case <-w.doc.done:
			panic(errStopped)
		default:
		}
	})
}

func num(args []pdf.Value, i int) float64 {
	if i < len(args) {
		return args[i].Float64()
	}
	return 0
}

func (w *pageWalker) op(op string, args []pdf.Value, sc *scope) {
	if w.inImage {
		if op == "EI" || op == "BT" {
			w.inImage = false
		}
		if op != "BT" {
			return
		}
	}
	s := &w.state
	switch op {
	case "q":
		if len(w.stack) < 256 {
			w.stack = append(w.stack, w.state)
		}
	case "Q":
		if k := len(w.stack) - 1; k >= 0 {
			w.state, w.stack = w.stack[k], w.stack[:k]
		}
	case "cm":
		if len(args) == 6 {
			s.ctm = matrixOf(args).mul(s.ctm)
		}
	case "BT":
		w.tm, w.tlm = identity, identity
	case "Tc":
		s.tc = num(args, 0)
	case "Tw":
		s.tw = num(args, 0)
	case "Tz":
		s.th = num(args, 0) / 100
	case "TL":
		s.tl = num(args, 0)
	case "Ts":
		s.rise = num(args, 0)
	case "Tf":
		if len(args) == 2 {
			s.font = w.font(sc, args[0].Name())
			s.size = args[1].Float64()
		}
	case "Td":
		w.moveLine(num(args, 0), num(args, 1))
	case "TD":
		s.tl = -num(args, 1)
		w.moveLine(num(args, 0), num(args, 1))
	case "Tm":
		if len(args) == 6 {
			w.tlm = matrixOf(args)
			w.tm = w.tlm
		}
	case "T*":
		w.moveLine(0, -s.tl)
	case "Tj":
		if len(args) > 0 {
			w.show(args[len(args)-1].RawString())
		}
	case "'":
		w.moveLine(0, -s.tl)
		if len(args) > 0 {
			w.show(args[len(args)-1].RawString())
		}
	case "\"":
		if len(args) == 3 {
			s.tw, s.tc = args[0].Float64(), args[1].Float64()
			w.moveLine(0, -s.tl)
			w.show(args[2].RawString())
		}
	case "TJ":
		if len(args) > 0 {
			a := args[len(args)-1]
			for i := 0; i < a.Len(); i++ {
				v := a.Index(i)
				if v.Kind() == pdf.String {
					w.show(v.RawString())
				} else {
					w.tm = translate(-v.Float64()/1000*s.size*s.th, 0).mul(w.tm)
				}
			}
		}
	case "Do":
		if len(args) > 0 {
			w.xobject(sc, args[0].Name())
		}
	case "BI", "ID":
		w.inImage = true
		if op == "BI" {
			w.images++
		}
	}
}

func matrixOf(args []pdf.Value) matrix {
	var m matrix
	for i := range m {
		m[i] = args[i].Float64()
	}
	return m
}

func (w *pageWalker) moveLine(tx, ty float64) {
	w.tlm = translate(tx, ty).mul(w.tlm)
	w.tm = w.tlm
}

// xobject draws a named XObject: a form's content is interpreted in place, an image is counted.
func (w *pageWalker) xobject(sc *scope, name string) {
	if sc.xobjects == nil {
		xo := sc.res.Key("XObject")
		sc.xobjects = &xo
	}
	x := sc.xobjects.Key(name)
	switch x.Key("Subtype").Name() {
	case "Image":
		w.images++
	case "Form":
		if sc.depth >= maxFormDepth || w.formCalls >= maxFormCalls {
			return
		}
		w.formCalls++
		w.guard(x, "a form drawn on page %d")
		saved, savedStack, tm, tlm := w.state, w.stack, w.tm, w.tlm
		if m := x.Key("Matrix"); m.Len() == 6 {
			var fm matrix
			for i := range fm {
				fm[i] = m.Index(i).Float64()
			}
			w.state.ctm = fm.mul(w.state.ctm)
		}
		w.stack = nil
		formRes := x.Key("Resources")
		if formRes.IsNull() {
			formRes = sc.res
		}
		w.run(x, formRes, sc.depth+1)
		w.state, w.stack, w.tm, w.tlm = saved, savedStack, tm, tlm
	}
}

// guard stops the page, and with it the file, at a stream the reader must not be given.
func (w *pageWalker) guard(v pdf.Value, what string) {
	if err := checkPDFContent(v, fmt.Sprintf(what, w.number), w.doc.done); err != nil {
		panic(err)
	}
}

// show lays out one string: a break or space before it when it starts away from where the last
// one ended, then its text, then the text matrix advanced by its glyph widths.
func (w *pageWalker) show(raw string) {
	s := &w.state
	f := s.font
	if f == nil {
		f = &noFont
	}
	trm := matrix{s.size * s.th, 0, 0, s.size, 0, s.rise}.mul(w.tm).mul(s.ctm)
	x, y := trm.apply(0, 0)
	// The text direction is trm's x axis; the font size on the page is the length of its y axis.
	dx, dy := trm[0], trm[1]
	size := math.Hypot(trm[2], trm[3])
	if l := math.Hypot(dx, dy); l > 0 {
		dx, dy = dx/l, dy/l
	} else {
		dx, dy = 1, 0
	}
	if size == 0 || math.IsNaN(size) || math.IsInf(size, 0) {
		size = 1
	}

	if f.unmapped {
		w.unmapped += len(raw) / 2
	} else if text := f.decode(raw); text != "" {
		if w.have {
			w.separate(x, y, size)
		}
		w.l.verbatim(text)
		w.have = true
	}

	w.tm = translate(f.advance(raw, s), 0).mul(w.tm)
	if w.have {
		end := matrix{s.size * s.th, 0, 0, s.size, 0, s.rise}.mul(w.tm).mul(s.ctm)
		w.endX, w.endY = end.apply(0, 0)
		w.dirX, w.dirY, w.lastSize = dx, dy, size
	}
}

// separate asks for the break between the last string and one starting at (x, y).
func (w *pageWalker) separate(x, y, size float64) {
	h := math.Max(size, w.lastSize)
	vx, vy := x-w.endX, y-w.endY
	along := vx*w.dirX + vy*w.dirY
	across := math.Abs(vy*w.dirX - vx*w.dirY)
	switch {
	case across > 2*h:
		w.l.brk(breakPara)
	case across > 0.5*h:
		w.l.brk(breakLine)
	case along > 0.15*h || along < -0.5*h:
		w.l.brk(breakSpace)
	}
}
