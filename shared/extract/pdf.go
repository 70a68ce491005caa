package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxPageTreeDepth bounds the walk of the page tree and of inherited page attributes; a cycle in
// a damaged file would otherwise loop for ever.
const maxPageTreeDepth = 64

// pdfText extracts the text layer of a PDF with github.com/ledongthuc/pdf (pure Go), page by page,
// pages separated by a blank line. Words are placed by their positions (pdfpage.go), not glued
// together as the library's GetPlainText does.
//
// The reader panics on some damaged input and may spend long on a pathological page, so it runs in
// its own goroutine behind recover(): Text returns as soon as the context's deadline passes, naming
// the page it reached, and the goroutine stops within the operator or stream read it is on. A PDF without a single
// letter or digit in its text layer is the scanned-PDF error, never an empty success.
func pdfText(ctx context.Context, in input) (output, error) {
	type message struct {
		pages int       // page count, sent once after opening
		page  *pageText // one page's result
		err   error
	}
	ch := make(chan message)
	stop := make(chan struct{})
	defer close(stop)
	send := func(m message) bool {
		select {
		case ch <- m:
			return true
		case <-stop:
			return false
		}
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				send(message{err: pdfDamaged(fmt.Errorf("panic: %v", r))})
			}
		}()
		unpacked, unmeasured, err := checkPDFStreams(in.data, in.lim, stop)
		if errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			send(message{err: invalidf("%s", err.Error())})
			return
		}
		doc, err := openPDF(in.data, in.lim, pdfUnpacked{unpacked, unmeasured}, stop)
		if err != nil {
			send(message{err: err})
			return
		}
		if !send(message{pages: len(doc.pages)}) {
			return
		}
		for i, p := range doc.pages {
			pt := doc.text(i+1, p)
			if !send(message{page: &pt}) {
				return
			}
		}
	}()

	var first message
	select {
	case <-ctx.Done():
		return output{}, contextError(ctx, "while opening the PDF")
	case first = <-ch:
	}
	if first.err != nil {
		return output{}, first.err
	}
	var (
		b                           textBuf
		imageOnly, failed, unmapped []int
		anyUnmapped, allFailed      = false, true
	)
	for i := 0; i < first.pages; i++ {
		var m message
		select {
		case <-ctx.Done():
			return output{}, contextError(ctx, fmt.Sprintf("at page %d of %d", i+1, first.pages))
		case m = <-ch:
		}
		if m.err != nil {
			return output{}, m.err
		}
		p := m.page
		if p.bomb != nil {
			return output{}, invalidf("%s", p.bomb.msg)
		}
		if p.err == nil {
			allFailed = false
		} else {
			failed = append(failed, p.number)
		}
		if p.unmapped > 0 {
			anyUnmapped = true
			unmapped = append(unmapped, p.number)
		}
		words := hasWords(p.text)
		if !words && p.images > 0 {
			imageOnly = append(imageOnly, p.number)
		}
		if words {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(p.text)
		}
		if b.Len() > in.lim.MaxText || p.overflow {
			return output{}, invalidf("the file holds more than %s of text, the limit", formatSize(in.lim.MaxText))
		}
	}
	text := b.String()
	if !hasWords(text) {
		switch {
		case first.pages > 0 && allFailed:
			return output{}, invalidf("the PDF is damaged: none of its %d pages could be read", first.pages)
		case anyUnmapped:
			return output{}, invalidf("no text could be extracted from this PDF: its fonts have no Unicode mapping (the text is stored as glyph numbers); export it again or run OCR on it")
		}
		return output{}, errScanned()
	}
	var warnings []string
	if len(imageOnly) > 0 {
		warnings = append(warnings, pageList(imageOnly)+" only images and no text (scanned?)")
	}
	if len(unmapped) > 0 {
		warnings = append(warnings, pageList(unmapped)+" text in fonts without a Unicode mapping, which was left out")
	}
	if len(failed) > 0 {
		warnings = append(warnings, pageList(failed)+" damaged content; the text read before the damage was kept")
	}
	return output{text: text, pages: first.pages, warnings: warnings}, nil
}

// pageList names pages for a warning, runs as ranges: "page 3 has", "pages 3-5 and 9 have".
func pageList(pages []int) string {
	var runs []string
	for i := 0; i < len(pages); {
		j := i
		for j+1 < len(pages) && pages[j+1] == pages[j]+1 {
			j++
		}
		if j == i {
			runs = append(runs, strconv.Itoa(pages[i]))
		} else {
			runs = append(runs, strconv.Itoa(pages[i])+"-"+strconv.Itoa(pages[j]))
		}
		i = j + 1
	}
	if len(pages) == 1 {
		return "page " + runs[0] + " has"
	}
	if len(runs) == 1 {
		return "pages " + runs[0] + " have"
	}
	return "pages " + strings.Join(runs[:len(runs)-1], ", ") + " and " + runs[len(runs)-1] + " have"
}

// pdfDoc is an opened PDF and its pages in order.
type pdfDoc struct {
	r       *pdf.Reader
	pages   []pdf.Value
	fonts   map[string]*fontInfo // shared by all pages, keyed by the font dictionary's text
	maxText int
	done    <-chan struct{} // closed when nobody waits for the text any more
}

// pdfUnpacked is what checkPDFStreams measured before the file was opened.
type pdfUnpacked struct {
	bytes      int64 // inflated
	unmeasured bool  // some filtered stream could not be measured without the reader
}

// openPDF opens a PDF and lists its pages, translating the reader's failures into messages. The
// cross-reference sections are checked before the reader sizes its table from them, and the object
// streams (and streams the raw pass could not measure) before any object is read from them.
func openPDF(data []byte, lim Limits, unpacked pdfUnpacked, done <-chan struct{}) (*pdfDoc, error) {
	maxPages := lim.MaxPages
	data, ra := repairPDF(data)
	xi, err := checkPDFXref(data)
	if err != nil {
		return nil, invalidf("%s", err.Error())
	}
	r, err := pdf.NewReader(ra, int64(len(data)))
	if err != nil {
		return nil, pdfOpenError(data, err)
	}
	if xi.stream || xi.encrypt != nil || unpacked.unmeasured {
		if err := checkPDFObjects(data, ra, xi, lim, unpacked.bytes, done); err != nil {
			var bomb *pdfBomb
			if errors.As(err, &bomb) {
				return nil, invalidf("%s", bomb.msg)
			}
			if errors.Is(err, errStopped) {
				return nil, err
			}
			return nil, pdfDamaged(err)
		}
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if n := root.Key("Count").Int64(); n > int64(maxPages) {
		return nil, invalidf("the PDF has %d pages; the limit is %d, split it into smaller files", n, maxPages)
	}
	doc := &pdfDoc{r: r, fonts: map[string]*fontInfo{}, maxText: lim.MaxText, done: done}
	visits := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		visits++
		if depth > maxPageTreeDepth || visits > 4*maxPages+64 {
			return invalidf("the PDF is damaged: its page tree is malformed")
		}
		kids := v.Key("Kids")
		if v.Key("Type").Name() == "Pages" || v.Key("Type").Name() != "Page" && kids.Kind() == pdf.Array {
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if v.Kind() != pdf.Dict {
			return nil
		}
		doc.pages = append(doc.pages, v)
		if len(doc.pages) > maxPages {
			return invalidf("the PDF has more than %d pages, the limit; split it into smaller files", maxPages)
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	if len(doc.pages) == 0 {
		return nil, invalidf("the PDF has no pages")
	}
	return doc, nil
}

// repairPDF works around two strictnesses of the reader that reject files other readers open:
// it wants "%PDF-1.0" to "%PDF-1.7" followed by a line end at byte 0 (so PDF 2.0 and headers with
// a space before the line end fail), and "%%EOF" within the last 100 bytes (so trailing padding
// fails). Bytes before the header are dropped, the file is cut after its last "%%EOF", and the
// header is presented as "%PDF-1.7\n" without copying the data.
func repairPDF(data []byte) ([]byte, io.ReaderAt) {
	if i := bytes.Index(data[:min(len(data), 1024)], []byte("%PDF-")); i > 0 {
		data = data[i:]
	}
	tail := max(0, len(data)-4096)
	if i := bytes.LastIndex(data[tail:], []byte("%%EOF")); i >= 0 {
		data = data[:tail+i+len("%%EOF")]
	}
	ra := io.ReaderAt(bytes.NewReader(data))
	if len(data) >= 9 && bytes.HasPrefix(data, []byte("%PDF-")) {
		ra = headerReader{ReaderAt: ra, header: []byte("%PDF-1.7\n")}
	}
	return data, ra
}

// headerReader presents a replacement for the first bytes of a file.
type headerReader struct {
	io.ReaderAt
	header []byte
}

func (h headerReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.ReaderAt.ReadAt(p, off)
	for i := 0; i < n; i++ {
		if pos := off + int64(i); pos < int64(len(h.header)) {
			p[i] = h.header[pos]
		}
	}
	return n, err
}

// pdfOpenError explains why the reader refused a file.
func pdfOpenError(data []byte, err error) error {
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return wrapInvalid(err, "the PDF is encrypted (password-protected); upload a copy without a password")
	case bytes.Contains(data, []byte("/Encrypt")):
		// A trailer (or cross-reference stream, which is never compressed itself) names an
		// encryption dictionary the reader could not handle, such as AES-256.
		return wrapInvalid(err, "the PDF is encrypted with a method that cannot be read (such as AES-256); upload a copy without protection")
	case !bytes.Contains(data[max(0, len(data)-1024):], []byte("%%EOF")):
		return wrapInvalid(err, "the PDF is truncated: its end is missing (an incomplete upload or download?)")
	}
	return pdfDamaged(err)
}

// pdfDamaged is the error for a PDF the reader cannot make sense of.
func pdfDamaged(err error) error {
	return wrapInvalid(err, "the PDF is damaged and could not be read; open and re-save (or print to PDF) and upload the new file")
}
