package extract

import (
	"bytes"
	"fmt"
)

// Bounds on what cross-reference sections may claim. The reader sizes its object table from a
// cross-reference stream's /Size and grows it to the highest object number a section names, so a
// file of a few hundred bytes could ask for gigabytes (about 32 bytes an object). It also follows
// /Prev without remembering where it has been, so two sections naming each other loop for ever.
const (
	// minPDFObjects is the object count any file may claim, for sparse numbering.
	minPDFObjects = 1 << 19
	// pdfBytesPerObject is the least a real object takes of a file, on average, compressed in an
	// object stream or not; a larger file may claim one object per this many bytes.
	pdfBytesPerObject = 8
	// maxPDFObjectNumber is the largest object number PDF readers support (PDF 32000-1, annex C).
	maxPDFObjectNumber = 1<<23 - 1
	// maxXrefEntry bounds the bytes of one cross-reference stream entry (real ones have 3 to 12).
	maxXrefEntry = 32
)

// maxPDFObjects is how many objects a file of n bytes may claim.
func maxPDFObjects(n int) int64 {
	return min(max(minPDFObjects, int64(n)/pdfBytesPerObject), maxPDFObjectNumber+1)
}

// xrefInfo is what checkPDFXref learnt of the file's last cross-reference section.
type xrefInfo struct {
	found   bool   // the section was read; false when the reader will fail to open the file
	offset  int64  // where it starts: the file's startxref
	stream  bool   // a cross-reference stream rather than a table
	size    []byte // its /Size, /Encrypt and /ID entries as written (nil when absent)
	encrypt []byte
	id      []byte
}

// checkPDFXref follows the cross-reference sections from startxref along /Prev, as the reader
// will, and refuses a file whose sections claim more objects than its size allows, name each
// other in a loop, or declare stream entries of absurd width. Where the reader will fail on its
// own (no startxref, a damaged section) it stops without an error and the reader reports.
func checkPDFXref(data []byte) (xrefInfo, error) {
	var info xrefInfo
	if len(data) < 100 {
		return info, nil
	}
	tail := bytes.TrimRight(data[len(data)-100:], "\r\n\t ")
	if !bytes.HasSuffix(tail, []byte("%%EOF")) {
		return info, nil
	}
	i := findLastLine(tail, "startxref")
	if i < 0 {
		return info, nil
	}
	l := rawLexer{data: data, pos: len(data) - 100 + i}
	l.token()
	off, ok := rawInt(l.token())
	if !ok {
		return info, nil
	}
	maxObj := maxPDFObjects(len(data))
	seen := map[int64]bool{}
	for first := true; ; first = false {
		if off < 0 || off >= int64(len(data)) {
			return info, nil
		}
		if seen[off] {
			return info, &pdfBomb{"the PDF is damaged: its cross-reference sections refer back to each other in a loop"}
		}
		seen[off] = true
		l := rawLexer{data: data, pos: int(off)}
		tok := l.token()
		if first {
			info.offset, info.stream = off, string(tok) != "xref"
		}
		var (
			entries map[string][]byte
			err     error
		)
		if info.stream {
			entries, err = l.xrefStream(tok, maxObj, len(data))
		} else if string(tok) == "xref" {
			entries, err = l.xrefTable(maxObj, len(data))
		}
		if err != nil || entries == nil {
			return info, err
		}
		if first {
			info.found = true
			info.size, info.encrypt, info.id = entries["/Size"], entries["/Encrypt"], entries["/ID"]
		}
		if off, ok = rawInt(entries["/Prev"]); !ok {
			return info, nil
		}
	}
}

// tooManyObjects is the error for a section claiming objects up to number last.
func tooManyObjects(last int64, size int) error {
	return &pdfBomb{fmt.Sprintf("the PDF cannot be read: its cross-reference table numbers objects up to %d, more than a file of %s can hold (a damaged or malicious file?)", last, formatSize(size))}
}

// xrefTable reads a table after its "xref" keyword up to its trailer dictionary, which it returns
// (nil when the table is malformed).
func (l *rawLexer) xrefTable(maxObj int64, size int) (map[string][]byte, error) {
	for {
		t := l.token()
		if string(t) == "trailer" {
			break
		}
		start, ok1 := rawInt(t)
		n, ok2 := rawInt(l.token())
		if !ok1 || !ok2 {
			return nil, nil
		}
		if n > 0 && start > maxObj-n {
			return nil, tooManyObjects(start+n-1, size)
		}
		for i := int64(0); i < 3*n; i++ {
			if l.token() == nil {
				return nil, nil
			}
		}
	}
	if string(l.token()) != "<<" {
		return nil, nil
	}
	entries, _ := l.dict()
	return entries, nil
}

// xrefStream reads a cross-reference stream's dictionary, tok being its object number, and checks
// the table size, subsections and entry width it declares.
func (l *rawLexer) xrefStream(tok []byte, maxObj int64, size int) (map[string][]byte, error) {
	_, ok1 := rawInt(tok)
	_, ok2 := rawInt(l.token())
	if !ok1 || !ok2 || string(l.token()) != "obj" || string(l.token()) != "<<" {
		return nil, nil
	}
	entries, ok := l.dict()
	if !ok || rawName(entries["/Type"]) != "/XRef" {
		return nil, nil
	}
	n, ok := rawInt(entries["/Size"])
	if !ok {
		return nil, nil
	}
	if n > maxObj {
		return nil, tooManyObjects(n-1, size)
	}
	index := []int64{0, n}
	if v, present := entries["/Index"]; present {
		if index, ok = rawInts(v); !ok {
			return nil, nil
		}
	}
	for i := 0; i+1 < len(index); i += 2 {
		if start, count := index[i], index[i+1]; count > 0 && start > maxObj-count {
			return nil, tooManyObjects(start+count-1, size)
		}
	}
	w, _ := rawInts(entries["/W"])
	total := int64(0)
	for _, x := range w {
		total += max(0, min(x, 1<<40))
	}
	if total > maxXrefEntry {
		return nil, &pdfBomb{fmt.Sprintf("the PDF is damaged: its cross-reference stream declares entries of %d bytes", total)}
	}
	params := rawLexer{data: entries["/DecodeParms"]}
	for t := params.token(); t != nil; t = params.token() {
		if rawName(t) != "/Columns" {
			continue
		}
		if c, _ := rawInt(params.token()); c > maxPredictorColumns {
			return nil, &pdfBomb{fmt.Sprintf("the PDF cannot be read: its cross-reference stream declares predictor rows of %d bytes (a damaged or malicious file?)", c)}
		}
	}
	return entries, nil
}

// findLastLine is the reader's search for a keyword alone on a line, near the end of the file.
func findLastLine(buf []byte, s string) int {
	bs := []byte(s)
	end := len(buf)
	for {
		i := bytes.LastIndex(buf[:end], bs)
		if i <= 0 || i+len(bs) >= len(buf) {
			return -1
		}
		if (buf[i-1] == '\n' || buf[i-1] == '\r') && (buf[i+len(bs)] == '\n' || buf[i+len(bs)] == '\r') {
			return i
		}
		end = i
	}
}
