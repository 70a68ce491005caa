package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"golang.org/x/net/html/charset"
)

// docxUnpackFactor and docxXMLPerText bound how much XML a DOCX may unpack to: a multiple of
// Limits.MaxBytes (text-heavy DOCX compress about 10:1) and a multiple of Limits.MaxText (Word's
// markup is rarely more than ten times the text it holds), whichever is less. Far above real
// documents, far below a zip bomb; reading is streamed, so the bound is on time, not memory.
const (
	docxUnpackFactor = 32
	docxXMLPerText   = 16
)

// docxUnpackLimit is the most XML a DOCX may unpack to under lim.
func docxUnpackLimit(lim Limits) int64 {
	return min(int64(docxUnpackFactor)*int64(lim.MaxBytes), int64(docxXMLPerText)*int64(lim.MaxText))
}

// docxText reads a Word document with archive/zip and encoding/xml: the main document part (found
// through _rels/.rels, normally word/document.xml), then footnotes and endnotes. Paragraphs become
// lines, headings and tables stand apart as paragraphs, table cells are joined with " | ", list
// paragraphs start with "- ", w:tab is a tab and w:br a line break (a page break a paragraph
// break). Deleted text (w:delText), field codes and the fallback copies of text boxes are left out.
func docxText(ctx context.Context, in input) (output, error) {
	zr, err := zip.NewReader(bytes.NewReader(in.data), int64(len(in.data)))
	if err != nil {
		return output{}, wrapInvalid(err, "the DOCX is damaged: it is not a readable ZIP archive (truncated or corrupted?)")
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[strings.TrimPrefix(f.Name, "/")] = f
	}
	main := mainPart(files)
	if files[main] == nil {
		return output{}, notDOCX(files)
	}
	budget := &budget{left: docxUnpackLimit(in.lim), limit: docxUnpackLimit(in.lim)}
	w := docxWalker{ctx: ctx, l: layout{limit: in.lim.MaxText + 1}}
	parts := []string{main, path.Join(path.Dir(main), "footnotes.xml"), path.Join(path.Dir(main), "endnotes.xml")}
	for i, name := range parts {
		f := files[name]
		if f == nil {
			continue
		}
		if i > 0 {
			w.l.brk(breakPara)
		}
		if err := w.part(f, budget); err != nil {
			return output{}, err
		}
		if w.l.overflow {
			return output{}, invalidf("the file holds more than %s of text, the limit", formatSize(in.lim.MaxText))
		}
	}
	w.l.endHeading()
	return output{text: w.l.String(), headings: w.l.heads}, nil
}

// mainPart is the name of the main document part: the target of the officeDocument relationship
// in _rels/.rels, or word/document.xml.
func mainPart(files map[string]*zip.File) string {
	const fallback = "word/document.xml"
	f := files["_rels/.rels"]
	if f == nil {
		return fallback
	}
	rc, err := f.Open()
	if err != nil {
		return fallback
	}
	defer func() { _ = rc.Close() }() // a reader: its Close has nothing to report that Read did not
	var rels struct {
		Rel []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := xml.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&rels); err != nil {
		return fallback
	}
	for _, r := range rels.Rel {
		if strings.HasSuffix(r.Type, "/officeDocument") && r.Target != "" {
			return strings.TrimPrefix(path.Clean("/"+r.Target), "/")
		}
	}
	return fallback
}

// notDOCX explains a ZIP without a Word document in it.
func notDOCX(files map[string]*zip.File) error {
	for name := range files {
		switch {
		case strings.HasPrefix(name, "xl/"):
			return invalidf("the file is an Excel workbook (XLSX), not a DOCX; unsupported file type (supported: %s)", SupportedFormats)
		case strings.HasPrefix(name, "ppt/"):
			return invalidf("the file is a PowerPoint presentation (PPTX), not a DOCX; unsupported file type (supported: %s)", SupportedFormats)
		}
	}
	return invalidf("the file is a ZIP archive but not a DOCX: it has no word/document.xml")
}

// budget is the unpacked bytes a DOCX may still produce.
type budget struct{ left, limit int64 }

// errBudget marks a part that unpacked beyond the budget.
var errBudget = errors.New("unpacked size limit reached")

func (b *budget) Read(r io.Reader, p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBudget
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := r.Read(p)
	b.left -= int64(n)
	return n, err
}

// budgetReader charges every byte read to a budget.
type budgetReader struct {
	r io.Reader
	b *budget
}

func (r budgetReader) Read(p []byte) (int, error) { return r.b.Read(r.r, p) }

// docxWalker turns WordprocessingML into text.
type docxWalker struct {
	ctx      context.Context
	l        layout
	run      int   // depth of w:r elements
	text     int   // depth of w:t elements
	fallback int   // depth of mc:Fallback elements, whose content duplicates mc:Choice
	cells    []int // per open table row: cells seen so far
	tokens   int
}

// part walks one XML part.
func (w *docxWalker) part(f *zip.File, b *budget) error {
	rc, err := f.Open()
	if err != nil {
		return wrapInvalid(err, fmt.Sprintf("the DOCX is damaged: %s cannot be unpacked", f.Name))
	}
	defer func() { _ = rc.Close() }() // a reader: its Close has nothing to report that Read did not
	// The splitter keeps every token the decoder builds small: the decoder holds a whole token in
	// memory before returning it, and the budget alone would let one token be hundreds of MB.
	raw := &xmlSplitter{r: budgetReader{r: rc, b: b}}
	dec := xml.NewDecoder(raw)
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		// A part declared in a legacy code page: the splitter works on the converted UTF-8, where
		// it cannot cut a multi-byte character in two.
		r, err := charset.NewReaderLabel(label, in)
		if err != nil {
			return nil, err
		}
		raw.off = true
		return &xmlSplitter{r: r}, nil
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return docxError(f.Name, err, b.limit)
		}
		w.tokens++
		if w.tokens%8192 == 0 && w.ctx.Err() != nil {
			return contextError(w.ctx, "")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			w.start(t)
		case xml.EndElement:
			w.end(t)
		case xml.CharData:
			if w.text > 0 && w.fallback == 0 {
				w.l.verbatim(string(t))
			}
		}
		if w.l.overflow {
			return nil
		}
	}
}

func (w *docxWalker) start(t xml.StartElement) {
	if t.Name.Local == "Fallback" {
		w.fallback++
	}
	if w.fallback > 0 {
		return
	}
	switch t.Name.Local {
	case "r":
		w.run++
	case "t":
		if w.run > 0 {
			w.text++
		}
	case "pStyle":
		if v := xmlAttr(t, "val"); strings.HasPrefix(v, "Heading") || v == "Title" || v == "Subtitle" {
			w.l.brk(breakPara)
			if level := docxHeadingLevel(v); level > 0 && len(w.cells) == 0 {
				w.l.beginHeading(level)
			}
		}
	case "numPr":
		w.l.mark("- ")
	case "tab":
		if w.run > 0 {
			w.l.verbatim("\t")
		}
	case "br", "cr":
		if w.run > 0 {
			if xmlAttr(t, "type") == "page" {
				w.l.brk(breakPara)
			} else {
				w.l.brk(breakLine)
			}
		}
	case "noBreakHyphen":
		if w.run > 0 {
			w.l.verbatim("-")
		}
	case "tbl":
		w.l.brk(breakPara)
	case "tr":
		w.l.brk(breakLine)
		w.cells = append(w.cells, 0)
	case "tc":
		if k := len(w.cells) - 1; k >= 0 {
			if w.cells[k] > 0 {
				w.l.brk(breakCell)
			}
			w.cells[k]++
		}
	}
}

func (w *docxWalker) end(t xml.EndElement) {
	if t.Name.Local == "Fallback" {
		w.fallback--
		return
	}
	if w.fallback > 0 {
		return
	}
	switch t.Name.Local {
	case "r":
		w.run--
	case "t":
		if w.text > 0 {
			w.text--
		}
	case "p":
		w.l.endHeading()
		if len(w.cells) > 0 {
			w.l.brk(breakSpace) // paragraphs inside a table cell stay in the cell
		} else {
			w.l.brk(breakLine)
		}
	case "tbl":
		w.l.brk(breakPara)
	case "tr":
		if len(w.cells) > 0 {
			w.cells = w.cells[:len(w.cells)-1]
		}
		w.l.brk(breakLine)
	}
}

// docxHeadingLevel is the level of a heading paragraph style: Title 1, Subtitle 2, Heading N
// N (at most 6); 0 for another style.
func docxHeadingLevel(style string) int {
	switch style {
	case "Title":
		return 1
	case "Subtitle":
		return 2
	}
	n, err := strconv.Atoi(strings.TrimPrefix(style, "Heading"))
	if err != nil || n < 1 {
		return 0
	}
	return min(n, 6)
}

// xmlAttr is the value of the attribute with this local name, whatever its namespace.
func xmlAttr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// docxError explains a failure to read a part.
func docxError(part string, err error, unpackLimit int64) error {
	var syn *xml.SyntaxError
	switch {
	case errors.Is(err, errBudget):
		return invalidf("the DOCX is too large: %s unpacks to more than %s of XML, the limit (a decompression bomb?)", part, formatSize(int(unpackLimit)))
	case errors.Is(err, errXMLMarkup):
		return invalidf("the DOCX cannot be read: %s holds an XML tag or comment longer than %s", part, formatSize(maxXMLMarkup))
	case errors.As(err, &syn):
		return wrapInvalid(err, fmt.Sprintf("the DOCX is damaged: %s is not well-formed XML (line %d: %s)", part, syn.Line, syn.Msg))
	case errors.Is(err, zip.ErrChecksum):
		return wrapInvalid(err, fmt.Sprintf("the DOCX is damaged: %s fails its checksum", part))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return wrapInvalid(err, fmt.Sprintf("the DOCX is damaged: %s is truncated", part))
	}
	return wrapInvalid(err, fmt.Sprintf("the DOCX is damaged: %s cannot be read", part))
}
