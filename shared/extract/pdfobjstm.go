package extract

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/ledongthuc/pdf"
)

// Bounds on what the reader builds from an object stream. It decodes the stream (decrypted, through
// every filter) and parses the object asked for whole, so one array of 30 million zeros in a 60 KB
// file took 1.2 GB; a stream doubly deflated or wrapped in ASCII85 escaped the first pass.
const (
	// maxPDFObjectValues bounds the values of one object read from an object stream (the largest
	// real ones, page trees and structure trees, hold thousands).
	maxPDFObjectValues = 1 << 18
	// maxPredictorColumns bounds a predictor's row, for which the reader allocates two buffers.
	maxPredictorColumns = 1 << 20
	// streamsKey names the list of streams in the update appended for checkPDFObjects.
	streamsKey = "/AgentorchStreams"
)

// checkPDFObjects reads, through the reader's own decoding, every object stream of the file and
// every filtered stream the raw pass could not measure (encrypted, or through a chain of filters),
// before any page is read. Object streams are parsed as the reader will parse them: no object may
// hold more than maxPDFObjectValues values or maxPDFStrings of strings, and /N and /Extends must be
// sane. Other streams count towards the unpack limit, which the raw pass started at unpacked.
//
// The reader has no way to fetch an object by number, so the file is opened a second time with an
// incremental update appended (the way editors extend a PDF) whose trailer lists every object that
// may be a stream; its other entries are the last trailer's, so the second reader decrypts alike.
func checkPDFObjects(data []byte, ra io.ReaderAt, xi xrefInfo, lim Limits, unpacked int64, done <-chan struct{}) error {
	refs := objectHeaders(data)
	if len(refs) == 0 || !xi.found {
		return nil
	}
	update := pdfUpdate(len(data), xi, refs)
	r, err := pdf.NewReader(appendedReader{ReaderAt: ra, n: int64(len(data)), tail: update}, int64(len(data)+len(update)))
	if err != nil {
		return fmt.Errorf("reopen with the streams listed: %w", err)
	}
	limit := int64(pdfUnpackPerText) * int64(lim.MaxText)
	encrypted := xi.encrypt != nil
	list := r.Trailer().Key(streamsKey[1:])
	type candidate struct {
		v      pdf.Value
		num    int64
		objStm bool
	}
	var streams []candidate
	for i := 0; i < list.Len(); i++ {
		v, objStm, ok := pdfStreamAt(list, i, encrypted)
		if ok {
			streams = append(streams, candidate{v, refs[i][0], objStm})
		}
	}
	nObjStm := 0
	for _, c := range streams {
		if c.objStm {
			nObjStm++
		}
	}
	for _, c := range streams {
		n, err := checkPDFObjStream(c.v, c.num, c.objStm, nObjStm, done)
		if err != nil {
			return err
		}
		if unpacked += n; unpacked > limit {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: its streams expand to more than %s together, the limit (a decompression bomb?)", formatSize(int(limit)))}
		}
	}
	return nil
}

// pdfStreamAt resolves the i-th object listed and says whether it is a stream to read: an object
// stream, or one the raw pass could not measure. An object the reader cannot load is left out:
// the reader fails on it too, should a page need it.
func pdfStreamAt(list pdf.Value, i int, encrypted bool) (v pdf.Value, objStm, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	v = list.Index(i)
	if v.Kind() != pdf.Stream {
		return v, false, false
	}
	if v.Key("Type").Name() == "ObjStm" {
		return v, true, true
	}
	f := v.Key("Filter")
	if v.Key("Subtype").Name() == "Image" || !encrypted && (f.Kind() == pdf.Null || f.Kind() == pdf.Name && f.Name() == "FlateDecode") {
		return v, false, false // the reader never inflates images; the raw pass measured the rest
	}
	return v, false, true
}

// checkPDFObjStream reads one stream, object number num, and returns the bytes it decoded. An
// object stream is scanned as the reader parses it, and its /N and /Extends checked: the reader
// reads /N pairs of numbers for every object it looks up in it (each pair takes at least 4 bytes)
// and follows /Extends until it finds the object, so a loop among the nObjStm streams never ends.
func checkPDFObjStream(v pdf.Value, num int64, objStm bool, nObjStm int, done <-chan struct{}) (n int64, err error) {
	defer func() {
		if recover() != nil {
			n, err = 0, nil // a damaged entry: the reader fails on it too
		}
	}()
	what := fmt.Sprintf("a stream (object %d)", num)
	var sc *pdfScan
	if objStm {
		sc = &pdfScan{objects: true}
		what = fmt.Sprintf("an object stream (object %d)", num)
	}
	if n, err = readPDFStream(v, what, sc, done, true); err != nil || !objStm {
		return n, err
	}
	if count := v.Key("N").Int64(); count > n/4+1 {
		return n, &pdfBomb{fmt.Sprintf("the PDF is damaged: %s claims %d objects in %s", what, count, formatSize(int(n)))}
	}
	ext := v.Key("Extends")
	for hops := 0; ext.Kind() == pdf.Stream; hops++ {
		if hops >= nObjStm {
			return n, &pdfBomb{fmt.Sprintf("the PDF is damaged: %s extends object streams in a loop", what)}
		}
		ext = ext.Key("Extends")
	}
	return n, nil
}

// objectHeaders finds every "n g obj" in the file: the objects the reader may read, streams among
// them. Some are not objects (a header quoted in a string, bytes of a compressed stream); the
// reader's cross-reference table tells them apart.
func objectHeaders(data []byte) [][2]int64 {
	var refs [][2]int64
	seen := map[[2]int64]bool{}
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte("obj"))
		if k < 0 {
			return refs
		}
		at := i + k
		i = at + 3
		if i < len(data) && !isPDFSpace(data[i]) && !isPDFDelim(data[i]) {
			continue
		}
		gen, p := digitsBefore(data, at)
		num, p := digitsBefore(data, p)
		if num < 0 || gen < 0 || p > 0 && !isPDFSpace(data[p-1]) && !isPDFDelim(data[p-1]) {
			continue
		}
		if ref := [2]int64{num, gen}; !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
}

// digitsBefore reads the number that ends, after at least one space, just before at.
func digitsBefore(data []byte, at int) (int64, int) {
	p := at
	for p > 0 && isPDFSpace(data[p-1]) {
		p--
	}
	end := p
	for p > 0 && end-p < 10 && data[p-1] >= '0' && data[p-1] <= '9' {
		p--
	}
	if p == end || end == at {
		return -1, p
	}
	x, err := strconv.ParseInt(string(data[p:end]), 10, 64)
	if err != nil || x > maxPDFObjectNumber {
		return -1, p
	}
	return x, p
}

// pdfUpdate is an incremental update for a file of size bytes whose last cross-reference section
// is xi: an empty section of the same kind, before it the file's, and a trailer that lists refs.
func pdfUpdate(size int, xi xrefInfo, refs [][2]int64) []byte {
	var b bytes.Buffer
	b.WriteString("\n")
	start := size + b.Len()
	entries := func() {
		fmt.Fprintf(&b, "/Size %s /Prev %d", xi.size, xi.offset)
		if xi.encrypt != nil {
			fmt.Fprintf(&b, " /Encrypt %s", xi.encrypt)
		}
		if xi.id != nil {
			fmt.Fprintf(&b, " /ID %s", xi.id)
		}
		b.WriteString(" " + streamsKey + " [")
		for _, r := range refs {
			fmt.Fprintf(&b, "%d %d R ", r[0], r[1])
		}
		b.WriteString("]")
	}
	if xi.stream {
		b.WriteString("0 0 obj\n<< /Type /XRef /W [1 1 1] /Index [0 0] /Length 0 ")
		entries()
		b.WriteString(" >>\nstream\n\nendstream\nendobj\n")
	} else {
		b.WriteString("xref\n0 0\ntrailer\n<< ")
		entries()
		b.WriteString(" >>\n")
	}
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", start)
	return b.Bytes()
}

// appendedReader is a file with bytes appended, without copying the file.
type appendedReader struct {
	io.ReaderAt
	n    int64
	tail []byte
}

func (a appendedReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < a.n {
		var err error
		n, err = a.ReaderAt.ReadAt(p[:min(int64(len(p)), a.n-off)], off)
		if err != nil && err != io.EOF {
			return n, err
		}
		if n == len(p) {
			return n, nil
		}
	}
	t := off + int64(n) - a.n
	if t < 0 || t >= int64(len(a.tail)) {
		return n, io.EOF
	}
	n += copy(p[n:], a.tail[t:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
