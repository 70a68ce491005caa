package extract

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxPeakHeap is the most heap one extraction of an input of at most 4 MiB may add.
const maxPeakHeap = 128 << 20

// peakHeap runs fn and returns the highest heap in use above the level before it, sampled every
// 200µs (runtime/metrics reads without stopping the world), after a collection.
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if v := read(); v > peak {
		peak = v
	}
	if peak < base {
		return 0
	}
	return peak - base
}

// repeatReader yields s n times without holding the whole.
func repeatReader(s string, n int) io.Reader {
	rs := make([]io.Reader, 0, 3)
	rs = append(rs, &repeated{s: s, n: n})
	return io.MultiReader(rs...)
}

type repeated struct {
	s   string
	n   int
	off int
}

func (r *repeated) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) && r.n > 0 {
		c := copy(p[w:], r.s[r.off:])
		w += c
		r.off += c
		if r.off == len(r.s) {
			r.off, r.n = 0, r.n-1
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// zipStream builds a ZIP whose entries are deflated from readers, so a part of hundreds of
// megabytes never sits in memory.
func zipStream(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err == nil {
			_, err = io.Copy(w, e.r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name string
	r    io.Reader
}

func docxParts(body ...io.Reader) []zipEntry {
	doc := io.MultiReader(append(append([]io.Reader{strings.NewReader(wordHead)}, body...), strings.NewReader(wordTail))...)
	return []zipEntry{
		{"[Content_Types].xml", strings.NewReader(contentTypes)},
		{"_rels/.rels", strings.NewReader(rootRels)},
		{"word/document.xml", doc},
	}
}

// zlibOf compresses what r yields.
func zlibOf(t testing.TB, r io.Reader) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	return buf.String()
}

// bomb is a small file that unpacks or parses into far more than its size.
type bomb struct {
	name string // file name given to Text
	data []byte
	want string // the message Text must fail with; "" when the file may be read
	lim  Limits
}

func bombs(t testing.TB) []bomb {
	const mb = 1 << 20
	run := func(body string, n int, tail string) io.Reader {
		return io.MultiReader(repeatReader(body, n), strings.NewReader(tail))
	}
	// flatePDF is a one-page PDF whose content stream is the given one, deflated.
	flatePDF := func(content io.Reader, encrypt bool) []byte {
		b := &pdfBuilder{}
		if encrypt {
			b.encrypt("", "owner") // the raw scan cannot inflate it; the walker's check must
		}
		catalog, pages, font := b.add(""), b.add(""), b.add(helvetica)
		c := b.addStream("<< /Filter /FlateDecode >>", zlibOf(t, content))
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", pages, c, font))
		b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
		b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
		return b.bytes(catalog)
	}
	// onePage adds a one-page document to b and returns its catalog.
	onePage := func(b *pdfBuilder) int {
		catalog, pages, font := b.add(""), b.add(""), b.add(helvetica)
		c := b.addStream("<< >>", "BT /F1 12 Tf 72 720 Td (Small) Tj ET")
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", pages, c, font))
		b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
		b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
		return catalog
	}
	// xrefPDF is a one-page PDF whose cross-reference section says more than it should: a table
	// gets another subsection, a stream extra dictionary entries (the reader keeps the last of a
	// repeated key), and prev names the section itself as the one before it.
	xrefPDF := func(stream bool, subsection, extra string, prev bool) []byte {
		b := &pdfBuilder{header: "%PDF-1.5"}
		catalog := onePage(b)
		build := func() []byte {
			if stream {
				return b.bytesXRefStream(catalog, extra)
			}
			return bytes.Replace(b.bytes(catalog), []byte("trailer\n"), []byte(subsection+"trailer\n"), 1)
		}
		data := build()
		if prev {
			at := bytes.LastIndex(data, []byte("startxref\n"))
			b.trailer = "/Prev " + strings.TrimSpace(string(data[at+len("startxref\n"):len(data)-len("%%EOF\n")]))
			data = build()
		}
		return data
	}
	// packedPDF is a one-page PDF 1.5 whose page dictionary sits in an object stream, as modern
	// writers store it, and ends with an entry whose value junk yields (read, never held whole).
	// enc encodes the object stream for the given /Filter; an encrypted file has it encrypted too.
	// With lost set the stream's header names another object, so the reader searches it to the
	// end (and on through /Extends) for the page; stmExtra is added to the stream's dictionary,
	// "{self}" standing for its own number.
	packedPDF := func(junk io.Reader, filter string, enc func(io.Reader) string, encrypt, lost bool, stmExtra string) []byte {
		b := &pdfBuilder{header: "%PDF-1.5"}
		if encrypt {
			b.encrypt("", "owner")
		}
		catalog, pages, font := b.add(""), b.add(""), b.add(helvetica)
		c := b.addStream("<< >>", "BT /F1 12 Tf 72 720 Td (Packed) Tj ET")
		page := b.add("")
		head := fmt.Sprintf("%d 0 ", page)
		if lost {
			head = "99 0 "
		}
		dict := fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> /Junk ", pages, c, font)
		body := enc(io.MultiReader(strings.NewReader(head+dict), junk, strings.NewReader(" >>")))
		stm := len(b.objs) + 1
		b.addStream(fmt.Sprintf("<< /Type /ObjStm /N 1 /First %d /Filter %s %s >>", len(head), filter, strings.ReplaceAll(stmExtra, "{self}", fmt.Sprint(stm))), body)
		b.pack(page, stm, 0)
		b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
		b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
		return b.bytesXRefStream(catalog, "")
	}
	flate := func(r io.Reader) string { return zlibOf(t, r) }
	flate2 := func(r io.Reader) string { return zlibOf(t, strings.NewReader(zlibOf(t, r))) }
	a85 := func(r io.Reader) string {
		var buf bytes.Buffer
		w := ascii85.NewEncoder(&buf)
		_, _ = w.Write([]byte(zlibOf(t, r)))
		_ = w.Close()
		return buf.String() + "~>"
	}
	predictorPDF := func(columns int) []byte {
		b := &pdfBuilder{}
		catalog, pages, font := b.add(""), b.add(""), b.add(helvetica)
		row := "\x02" + strings.Repeat("\x00", 3)
		c := b.addStream(fmt.Sprintf("<< /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns %d >> >>", columns), zlibOf(t, strings.NewReader(row)))
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", pages, c, font))
		b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
		b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
		return b.bytes(catalog)
	}
	deepJSON := func(depth, key int) []byte {
		k := `"` + strings.Repeat("k", key) + `":`
		return []byte(strings.Repeat("{"+k, depth) + "1" + strings.Repeat("}", depth))
	}
	csvRow := []byte("a" + strings.Repeat(",1", 2<<20-1))
	return []bomb{
		{"one-run.docx", zipStream(t, docxParts(strings.NewReader("<w:p><w:r><w:t>"), run("a", 300*mb, "</w:t></w:r></w:p>"))...),
			"more than 32.0 MiB of text", Limits{}},
		{"many-runs.docx", zipStream(t, docxParts(run("<w:p><w:r><w:t>"+strings.Repeat("ab ", 1<<18)+"</w:t></w:r></w:p>", 400, ""))...),
			"more than 32.0 MiB of text", Limits{}},
		// Parts of markup without text: the unpack limit, 16 times the text limit, stops them (a
		// smaller text limit keeps the test short: encoding/xml reads <w:p/> at a few MB/s).
		{"markup-parts.docx", zipStream(t, append(docxParts(strings.NewReader("<w:p><w:r><w:t>hi</w:t></w:r></w:p>"), run("<w:p/>", 3*mb, "")),
			zipEntry{"word/footnotes.xml", run("<w:p/>", 3*mb, "")}, zipEntry{"word/endnotes.xml", run("<w:p/>", 3*mb, "")},
			zipEntry{"word/media/a.xml", run("<w:p/>", 100*mb, "")})...),
			"unpacks to more than 32.0 MiB of XML", Limits{MaxBytes: 512 << 20, MaxText: 2 << 20}},
		{"attribute.docx", zipStream(t, docxParts(strings.NewReader(`<w:p><w:r w:x="`), run("a", 200*mb, `"><w:t>hi</w:t></w:r></w:p>`))...),
			"holds an XML tag or comment longer than 2.0 MiB", Limits{}},
		{"attributes.docx", zipStream(t, docxParts(strings.NewReader(`<w:p><w:r `), run(`a="" `, 10*mb, `><w:t>hi</w:t></w:r></w:p>`))...),
			"holds an XML tag or comment longer than 2.0 MiB", Limits{}},
		{"string.pdf", flatePDF(io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 720 Td ("), run("a", 300*mb, ") Tj ET")), false),
			"a stream at byte 270 expands to more than 64.0 MiB", Limits{}},
		// Encrypted streams are measured through the reader before any page is read, and again as
		// the walker reads them.
		{"string-encrypted.pdf", flatePDF(io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 720 Td ("), run("a", 300*mb, ") Tj ET")), true),
			"a stream (object 5) expands to more than 64.0 MiB", Limits{}},
		{"string-small-encrypted.pdf", flatePDF(io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 720 Td ("), run("a", 40*mb, ") Tj ET")), true),
			"the content of page 1 holds more than 4.0 MiB of strings before one operator", Limits{}},
		{"string-small.pdf", flatePDF(io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 720 Td ("), run("a", 40*mb, ") Tj ET")), false),
			"the content of page 1 holds more than 4.0 MiB of strings before one operator", Limits{}},
		{"operands.pdf", flatePDF(io.MultiReader(strings.NewReader("BT /F1 12 Tf 72 720 Td "), run("0 ", 20*mb, "(x) Tj ET")), false),
			"the content of page 1 holds more than 131072 operands before one operator", Limits{}},
		{"packed.pdf", packedPDF(strings.NewReader("[1 2 3]"), "/FlateDecode", flate, false, false, ""), "", Limits{}},
		{"packed-encrypted.pdf", packedPDF(strings.NewReader("[1 2 3]"), "/FlateDecode", flate, true, false, ""), "", Limits{}},
		{"packed-chain.pdf", packedPDF(strings.NewReader("[1 2 3]"), "[/ASCII85Decode /FlateDecode]", a85, false, false, ""), "", Limits{}},
		{"xref-start.pdf", xrefPDF(false, "16777216 1\n0000000009 00000 n \n", "", false),
			"its cross-reference table numbers objects up to 16777216", Limits{}},
		{"xref-size.pdf", xrefPDF(true, "", "/Size 16777216", false), "its cross-reference table numbers objects up to 16777215", Limits{}},
		{"xref-index.pdf", xrefPDF(true, "", "/Index [16777216 8]", false), "its cross-reference table numbers objects up to 16777223", Limits{}},
		{"xref-width.pdf", xrefPDF(true, "", "/W [1 268435456 2]", false), "its cross-reference stream declares entries of 268435459 bytes", Limits{}},
		{"xref-loop.pdf", xrefPDF(false, "", "", true), "its cross-reference sections refer back to each other in a loop", Limits{}},
		{"xref-stream-loop.pdf", xrefPDF(true, "", "", true), "its cross-reference sections refer back to each other in a loop", Limits{}},
		{"predictor.pdf", predictorPDF(1 << 28), "the content of page 1 declares predictor rows of 268435456 bytes", Limits{}},
		{"objstm-count.pdf", packedPDF(strings.NewReader("1"), "/FlateDecode", flate, false, true, "/N 1099511627776"),
			"an object stream (object 6) claims 1099511627776 objects in", Limits{}},
		{"objstm-extends.pdf", packedPDF(strings.NewReader("1"), "/FlateDecode", flate, false, true, "/Extends {self} 0 R"),
			"an object stream (object 6) extends object streams in a loop", Limits{}},
		{"objstm-array.pdf", packedPDF(io.MultiReader(strings.NewReader("["), run("0 ", 30*mb, "]")), "/FlateDecode", flate, false, false, ""), "an object stream (object 6) holds an object of more than 262144 values", Limits{}},
		{"objstm-string.pdf", packedPDF(io.MultiReader(strings.NewReader("("), run("a", 60*mb, ")")), "/FlateDecode", flate, false, false, ""), "an object stream (object 6) holds an object with more than 4.0 MiB of strings", Limits{}},
		{"objstm-double.pdf", packedPDF(io.MultiReader(strings.NewReader("["), run("0 ", 48*mb, "]")), "[/FlateDecode /FlateDecode]", flate2, false, false, ""), "an object stream (object 6) holds an object of more than 262144 values", Limits{}},
		{"objstm-ascii85.pdf", packedPDF(io.MultiReader(strings.NewReader("["), run("0 ", 48*mb, "]")), "[/ASCII85Decode /FlateDecode]", a85, false, false, ""), "an object stream (object 6) holds an object of more than 262144 values", Limits{}},
		{"objstm-encrypted.pdf", packedPDF(io.MultiReader(strings.NewReader("["), run("0 ", 30*mb, "]")), "/FlateDecode", flate, true, false, ""), "an object stream (object 7) holds an object of more than 262144 values", Limits{}},
		// Every "n g obj" in the file is looked up once when the cross-reference is a stream.
		{"obj-headers.pdf", func() []byte {
			b := &pdfBuilder{header: "%PDF-1.5"}
			catalog := onePage(b)
			var junk strings.Builder
			for i := 0; junk.Len() < 4<<20-4096; i++ {
				fmt.Fprintf(&junk, "%d 0 obj\n", i%(1<<20))
			}
			b.addStream("<< >>", junk.String())
			return b.bytesXRefStream(catalog, "")
		}(), "", Limits{}},
		{"nested.json", []byte(strings.Repeat("[", 300) + strings.Repeat("]", 300)), "nested more than 256 levels", Limits{}},
		{"paths.json", deepJSON(250, 16<<10), "", Limits{}},
		{"row.csv", csvRow, "the CSV file has a row of more than 65536 columns", Limits{}},
		{"nested.html", []byte(strings.Repeat("<div>", 1000)), "nested too deeply", Limits{}},
		{"elements.html", []byte(strings.Repeat("<p>", 1300<<10)), "the HTML file has more than 524288 elements and text runs", Limits{}},
		{"attrs.html", []byte("<p " + strings.Repeat("a ", 2<<20-8) + ">hello"), "", Limits{}},
	}
}

func TestBombsStayBounded(t *testing.T) {
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			var err error
			peak := peakHeap(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				lim := b.lim
				if lim.MaxBytes == 0 {
					lim.MaxBytes = 512 << 20 // ingestion's limit
				}
				_, err = Text(ctx, b.name, b.data, lim)
			})
			t.Logf("%s: %d KiB input, peak heap %.1f MB, error %v", b.name, len(b.data)>>10, float64(peak)/1e6, err)
			if len(b.data) > 4<<20 {
				t.Errorf("input is %d bytes; the bound holds for inputs of at most 4 MiB", len(b.data))
			}
			if b.want == "" {
				if err != nil {
					t.Errorf("error = %v, want none", err)
				}
			} else {
				assertInvalid(t, err, b.want)
			}
			if peak > maxPeakHeap {
				t.Errorf("peak heap %.1f MB, want at most %d MB", float64(peak)/1e6, maxPeakHeap>>20)
			}
		})
	}
}

// TestNearLimitPeak: a small DOCX whose text comes close to the text limit (DefaultMaxText) is
// extracted whole, and one just past it is refused, both within the bound the bombs are held to.
func TestNearLimitPeak(t *testing.T) {
	text := strings.Repeat("ab ", 1<<16) + "x" // one paragraph's text, 192 KiB
	perParagraph := len(text) + 1              // and the newline that ends it
	under := DefaultMaxText / perParagraph     // paragraphs that still fit
	for _, tc := range []struct {
		name       string
		paragraphs int
		want       string // "": extracted
	}{
		{"just under the text limit", under, ""},
		{"just over the text limit", under + 1, "the file holds more than 32.0 MiB of text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := zipStream(t, docxParts(repeatReader("<w:p><w:r><w:t>"+text+"</w:t></w:r></w:p>", tc.paragraphs))...)
			if len(data) > 4<<20 {
				t.Fatalf("input is %d bytes; the bound holds for inputs of at most 4 MiB", len(data))
			}
			var (
				res Result
				err error
			)
			peak := peakHeap(func() { res, err = Text(context.Background(), "n.docx", data, Limits{}) })
			t.Logf("%d KiB in, %d bytes of text, peak heap %.1f MB, error %v", len(data)>>10, len(res.Text), float64(peak)/1e6, err)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error = %v, want the text", err)
				}
				if len(res.Text) < DefaultMaxText-perParagraph || len(res.Text) > DefaultMaxText {
					t.Errorf("%d bytes of text, want within one paragraph (%d bytes) under the limit %d", len(res.Text), perParagraph, DefaultMaxText)
				}
			} else {
				assertInvalid(t, err, tc.want)
			}
			if peak > maxPeakHeap {
				t.Errorf("peak heap %.1f MB, want at most %d MB", float64(peak)/1e6, maxPeakHeap>>20)
			}
		})
	}
}

// BenchmarkPeakHeap reports the peak heap one extraction adds (peak-MB) for each bomb and for a
// normal DOCX and PDF of about 4 MiB.
func BenchmarkPeakHeap(b *testing.B) {
	var body strings.Builder
	for i := 0; body.Len() < 4<<20; i++ {
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">Paragraph %d says something about the MIME database, </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>in bold</w:t></w:r></w:p>`, i)
	}
	var pages []string
	for size := 0; size < 4<<20; {
		c := "BT /F1 10 Tf 72 760 Td " + strings.Repeat("(A line of ordinary words on a normal page of text) Tj 0 -12 Td ", 60) + "ET"
		pages = append(pages, c)
		size += len(c) + 200
	}
	cases := append(bombs(b),
		bomb{name: "normal.docx", data: docx(b, body.String())},
		bomb{name: "normal.pdf", data: buildPDF(&pdfBuilder{}, "", pages...)})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				p := peakHeap(func() {
					lim := c.lim
					if lim.MaxBytes == 0 {
						lim.MaxBytes = 512 << 20
					}
					_, err := Text(context.Background(), c.name, c.data, lim)
					if (err == nil) != (c.want == "") {
						b.Fatalf("error = %v, want %q", err, c.want)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			b.ReportMetric(float64(len(c.data))/1e6, "input-MB")
		})
	}
}
