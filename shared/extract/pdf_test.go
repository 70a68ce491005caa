package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// textContent draws three lines: words apart by TJ kerning, a word split by a small kern, and a
// paragraph further down.
const textContent = "BT /F1 12 Tf 72 720 Td [(Hello) -250 (World)] TJ 0 -14 Td [(Kern) 20 (ing)] TJ 0 -40 Td (New paragraph) Tj ET"

func TestPDFHandWrittenText(t *testing.T) {
	data := buildPDF(&pdfBuilder{}, "", textContent, "BT /F1 12 Tf 72 720 Td (Page two) Tj ET")
	res, err := Text(context.Background(), "doc.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Hello World\nKerning\n\nNew paragraph\n\nPage two"
	if res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
	if res.Pages != 2 || res.MediaType != MediaPDF || res.FileType != FileDocument {
		t.Errorf("pages, media, file type = %d, %s, %s; want 2, %s, document", res.Pages, res.MediaType, res.FileType, MediaPDF)
	}
}

// TestPDFRealDocument extracts a 17-page TeX-typeset PDF and compares its words with those of the
// same document's HTML rendering: almost every PDF word must be an HTML word (words glued together,
// as the library's own GetPlainText produces for this file, are not) and almost every HTML word of
// the body must be found in the PDF.
func TestPDFRealDocument(t *testing.T) {
	data, err := os.ReadFile("testdata/shared-mime-info/spec.pdf")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Text(context.Background(), "spec.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 17 {
		t.Errorf("pages = %d, want 17", res.Pages)
	}
	if n := strings.Count(res.Text, "\n\n"); n < 17 {
		t.Errorf("%d paragraph breaks, want at least one per page", n)
	}
	htmlWords := map[string]bool{}
	pages, _ := filepath.Glob("testdata/shared-mime-info/*.html")
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Text(context.Background(), p, b, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range words(h.Text) {
			htmlWords[w] = true
		}
	}
	pdfWords := words(res.Text)
	pdfSet := map[string]bool{}
	found := 0
	for _, w := range pdfWords {
		pdfSet[w] = true
		if htmlWords[w] {
			found++
		}
	}
	precision := float64(found) / float64(len(pdfWords))
	inPDF := 0
	for w := range htmlWords {
		if pdfSet[w] {
			inPDF++
		}
	}
	recall := float64(inPDF) / float64(len(htmlWords))
	t.Logf("%d PDF words, precision %.3f, recall %.3f", len(pdfWords), precision, recall)
	if len(pdfWords) < 3000 || precision < 0.97 || recall < 0.9 {
		t.Errorf("PDF vs HTML words: %d words, precision %.3f, recall %.3f; want ≥3000, ≥0.97, ≥0.9", len(pdfWords), precision, recall)
	}
}

// words splits text into lower-case words of letters and digits; hyphenated line ends and page
// headers make a few PDF-only words, which the thresholds allow for.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func TestPDFFormXObjectAndCompositeFont(t *testing.T) {
	b := &pdfBuilder{}
	form := b.addStream("<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] >>",
		"BT /F1 12 Tf 72 700 Td (Inside a form) Tj ET")
	cmap := b.addStream("<< >>", "/CIDInit /ProcSet findresource begin 12 dict begin begincmap "+
		"/CMapName /Test def 1 begincodespacerange <0000> <FFFF> endcodespacerange "+
		"2 beginbfchar <0003> <0048> <0004> <0069> endbfchar endcmap end end")
	cid := b.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /ToUnicode %d 0 R "+
		"/DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /DW 1000 /W [3 [600 300]] "+
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>] >>", cmap))
	b.fonts = fmt.Sprintf("/F2 %d 0 R", cid)
	data := buildPDF(b, fmt.Sprintf("/XObject << /Fm1 %d 0 R >>", form),
		"/Fm1 Do BT /F2 12 Tf 72 600 Td <00030004> Tj ET")
	res, err := Text(context.Background(), "x.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Inside a form\n\nHi"; res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
}

func TestPDFErrors(t *testing.T) {
	good := buildPDF(&pdfBuilder{}, "", textContent)

	imageOnly := func() []byte {
		b := &pdfBuilder{}
		img := b.addStream("<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 >>", "\xff")
		return buildPDF(b, fmt.Sprintf("/XObject << /Im1 %d 0 R >>", img), "q 612 0 0 792 0 0 cm /Im1 Do Q")
	}()
	unmapped := func() []byte {
		b := &pdfBuilder{}
		cid := b.add("<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H " +
			"/DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test " +
			"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>] >>")
		b.fonts = fmt.Sprintf("/F2 %d 0 R", cid)
		return buildPDF(b, "", "BT /F2 12 Tf 72 700 Td <00030004> Tj ET")
	}()
	protected := func() []byte {
		b := &pdfBuilder{}
		b.encrypt("secret", "owner")
		return buildPDF(b, "", textContent)
	}()
	aes256 := func() []byte {
		b := &pdfBuilder{}
		enc := b.add("<< /Filter /Standard /V 5 /R 6 /Length 256 /P -4 /O <00> /U <00> /OE <00> /UE <00> /Perms <00> >>")
		b.trailer = fmt.Sprintf("/Encrypt %d 0 R /ID [<30> <30>]", enc)
		return buildPDF(b, "", textContent)
	}()
	cyclic := func() []byte {
		b := &pdfBuilder{}
		catalog := b.add("<< /Type /Catalog /Pages 2 0 R >>")
		b.add("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
		b.add("<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
		return b.bytes(catalog)
	}()
	blank := buildPDF(&pdfBuilder{}, "", "")
	garbage := append([]byte("%PDF-1.4\n"), []byte(strings.Repeat("garbage ", 100)+"\nstartxref\n9\n%%EOF\n")...)

	tests := []struct {
		name string
		data []byte
		lim  Limits
		want string
	}{
		{"scanned", imageOnly, Limits{}, "no text could be extracted from this PDF (scanned or image-only?)"},
		{"blank page", blank, Limits{}, "no text could be extracted from this PDF (scanned or image-only?)"},
		{"no unicode map", unmapped, Limits{}, "its fonts have no Unicode mapping"},
		{"password", protected, Limits{}, "the PDF is encrypted (password-protected)"},
		{"aes-256", aes256, Limits{}, "the PDF is encrypted with a method that cannot be read"},
		{"truncated", good[:len(good)/2], Limits{}, "the PDF is truncated"},
		{"corrupt", garbage, Limits{}, "the PDF is damaged"},
		{"cyclic page tree", cyclic, Limits{}, "the PDF is damaged: its page tree is malformed"},
		{"too many pages", buildPDF(&pdfBuilder{}, "", textContent, textContent, textContent), Limits{MaxPages: 2}, "the PDF has 3 pages; the limit is 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Text(context.Background(), "file.pdf", tt.data, tt.lim)
			assertInvalid(t, err, tt.want)
		})
	}
}

// assertInvalid checks that err is an invalid_request_error whose message contains want.
func assertInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("error = %v (%T), want a *domain.Error", err, err)
	}
	if de.Kind != domain.KindInvalid {
		t.Errorf("kind = %v, want invalid", de.Kind)
	}
	if !strings.Contains(de.Message, want) {
		t.Errorf("message = %q, want it to contain %q", de.Message, want)
	}
}

func TestPDFEncryptedWithoutUserPassword(t *testing.T) {
	// Owner-password-only files (copy or print restrictions) open without a password and are
	// read: their streams are decrypted with the key derived from the empty user password.
	b := &pdfBuilder{}
	b.encrypt("", "owner")
	data := buildPDF(b, "", textContent)
	if strings.Contains(string(data), "Hello") {
		t.Fatal("fixture is not encrypted")
	}
	res, err := Text(context.Background(), "r.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "Hello World") {
		t.Errorf("text = %q", res.Text)
	}
}

func TestPDFLenientFraming(t *testing.T) {
	b := &pdfBuilder{header: "%PDF-2.0"}
	v2 := buildPDF(b, "", textContent)
	padded := append(append([]byte{}, buildPDF(&pdfBuilder{}, "", textContent)...), make([]byte, 300)...)
	for name, data := range map[string][]byte{"PDF 2.0 header": v2, "padding after %%EOF": padded} {
		res, err := Text(context.Background(), "f.pdf", data, Limits{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(res.Text, "Hello World") {
			t.Errorf("%s: text = %q", name, res.Text)
		}
	}
}

func TestPDFImageOnlyPageWarning(t *testing.T) {
	b := &pdfBuilder{}
	img := b.addStream("<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 >>", "\xff")
	data := buildPDF(b, fmt.Sprintf("/XObject << /Im1 %d 0 R >>", img), textContent, "/Im1 Do", "/Im1 Do")
	res, err := Text(context.Background(), "f.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pages 2-3 have only images and no text (scanned?)"}; fmt.Sprint(res.Warnings) != fmt.Sprint(want) {
		t.Errorf("warnings = %q, want %q", res.Warnings, want)
	}
}

func TestPageList(t *testing.T) {
	for _, tt := range []struct {
		pages []int
		want  string
	}{
		{[]int{3}, "page 3 has"},
		{[]int{3, 4}, "pages 3-4 have"},
		{[]int{1, 3}, "pages 1 and 3 have"},
		{[]int{2, 3, 4, 5, 9, 11, 12}, "pages 2-5, 9 and 11-12 have"},
	} {
		if got := pageList(tt.pages); got != tt.want {
			t.Errorf("pageList(%v) = %q, want %q", tt.pages, got, tt.want)
		}
	}
}

func TestPDFDamagedPageKeepsEarlierText(t *testing.T) {
	// "begin" on a number makes the library's content interpreter panic half-way through the
	// page; the text before it is kept and the page is named in a warning.
	data := buildPDF(&pdfBuilder{}, "", "BT /F1 12 Tf 72 700 Td (Before the damage) Tj ET 5 begin BT (After) Tj ET", textContent)
	res, err := Text(context.Background(), "d.pdf", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Before the damage\n\nHello World"; !strings.HasPrefix(res.Text, want) {
		t.Errorf("text = %q, want it to start %q", res.Text, want)
	}
	if want := []string{"page 1 has damaged content; the text read before the damage was kept"}; fmt.Sprint(res.Warnings) != fmt.Sprint(want) {
		t.Errorf("warnings = %q, want %q", res.Warnings, want)
	}
}

func TestPDFTextLimit(t *testing.T) {
	long := "BT /F1 12 Tf 72 700 Td " + strings.Repeat("(words and more words) Tj ", 200) + "ET"
	_, err := Text(context.Background(), "l.pdf", buildPDF(&pdfBuilder{}, "", long), Limits{MaxText: 1000})
	assertInvalid(t, err, "the file holds more than 1000 bytes of text")
}

func TestPDFDeadline(t *testing.T) {
	contents := make([]string, 3000)
	for i := range contents {
		contents[i] = textContent
	}
	data := buildPDF(&pdfBuilder{}, "", contents...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	// That Text returns at the deadline rather than after the file is TestPDFStopsAfterDeadline's
	// (a page that takes minutes); here the error is named.
	_, err := Text(ctx, "big.pdf", data, Limits{MaxPages: 5000})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want one that matches context.DeadlineExceeded", err)
	}
	assertInvalid(t, err, "text extraction ran out of time")

	// A cancelled context is the caller's doing, not the file's: a plain error.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = Text(ctx, "big.pdf", data, Limits{MaxPages: 5000})
	var de *domain.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &de) {
		t.Errorf("cancelled: error = %v, want context.Canceled and no domain error", err)
	}
}

// TestPDFStopsAfterDeadline checks that Text returns at its deadline and the reading goroutine
// ends after it, on a page that would take minutes (a form of four million operators drawn 2000
// times), rather than finishing the page for nobody. The wait for the goroutine is generous: a
// reader that finished the page would take far longer.
func TestPDFStopsAfterDeadline(t *testing.T) {
	b := &pdfBuilder{}
	form := b.addStream("<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Filter /FlateDecode >>", zlibOf(t, repeatReader("q Q\n", 4<<20)))
	data := buildPDF(b, fmt.Sprintf("/XObject << /Fm1 %d 0 R >>", form), strings.Repeat("/Fm1 Do\n", 2000))
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Text(ctx, "slow.pdf", data, Limits{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the deadline's", err)
	}
	wait := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(wait) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines 30s after the deadline, %d before: the page is still being read", n, before)
	}
}
