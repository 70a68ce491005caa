package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// headingsOf extracts a file and returns its headings, each checked to stand at its offset.
func headingsOf(t *testing.T, name string, data []byte) []Heading {
	t.Helper()
	res, err := Text(context.Background(), name, data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Headings {
		if h.Offset < 0 || h.Offset > len(res.Text) || (h.Offset > 0 && res.Text[h.Offset-1] != '\n') {
			t.Errorf("heading %q at %d: not at the start of a line of %q", h.Text, h.Offset, res.Text)
			continue
		}
		line, _, _ := strings.Cut(res.Text[h.Offset:], "\n")
		if !strings.Contains(strings.Join(strings.Fields(line), " "), h.Text) {
			t.Errorf("heading %q at %d: its line is %q", h.Text, h.Offset, line)
		}
	}
	return res.Headings
}

func TestMarkdownHeadings(t *testing.T) {
	doc := "Title of the guide\n==================\n\nIntro text.\n\n" +
		"# Install #\n\nRun it.\n\n" +
		"```sh\n# not a heading\n```\n\n" +
		"## Configure   the  server\nSet it.\n\n" +
		"#nospace is a tag\n\n" +
		"A paragraph of two lines\nends here\n---\n\n" +
		"Options\n-------\n\n" +
		"####### seven is text\n\n" +
		"NOTES\n    Caps before an indented line are a heading in plain text only.\n"
	want := []Heading{
		{Level: 1, Text: "Title of the guide"},
		{Level: 1, Text: "Install"},
		{Level: 2, Text: "Configure the server"},
		{Level: 2, Text: "Options"},
	}
	got := headingsOf(t, "guide.md", []byte(doc))
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Offset" }, cmp.Ignore())); diff != "" {
		t.Errorf("Markdown headings (-want +got):\n%s", diff)
	}
	// The same text as plain text: Markdown's headings, and the line of capitals.
	got = headingsOf(t, "guide.txt", []byte(doc))
	want = append(want, Heading{Level: 2, Text: "NOTES"})
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Offset" }, cmp.Ignore())); diff != "" {
		t.Errorf("plain text headings (-want +got):\n%s", diff)
	}
}

func TestHTMLHeadings(t *testing.T) {
	page := `<html><head><title>Not a heading</title></head><body>
<h1>Caf&eacute;
   &amp; Bar</h1><p>Menu.</p>
<section><h2>Opening <em>hours</em></h2><p>Daily.</p>
<h3 hidden>Hidden</h3>
<table><tr><td>cell</td><td><h4>In a cell</h4></td></tr></table>
<h2></h2>
<h6>Small print</h6><p>Terms.</p></section></body></html>`
	got := headingsOf(t, "page.html", []byte(page))
	want := []Heading{{Level: 1, Text: "Café & Bar"}, {Level: 2, Text: "Opening hours"}, {Level: 4, Text: "In a cell"}, {Level: 6, Text: "Small print"}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Offset" }, cmp.Ignore())); diff != "" {
		t.Errorf("HTML headings (-want +got):\n%s", diff)
	}
}

func TestDOCXHeadings(t *testing.T) {
	body := `<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Annual report</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>Sales grew.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t xml:space="preserve">Figures </w:t></w:r><w:r><w:t>by region</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>North.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Heading9"/></w:pPr><w:r><w:t>Deep</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="HeadingX"/></w:pPr><w:r><w:t>Not numbered</w:t></w:r></w:p>`
	got := headingsOf(t, "report.docx", docx(t, body))
	want := []Heading{{Offset: 0, Level: 1, Text: "Annual report"}, {Offset: 27, Level: 2, Text: "Figures by region"}, {Offset: 53, Level: 6, Text: "Deep"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DOCX headings (-want +got):\n%s", diff)
	}
}

// TestHeadingTextBounded: a heading's text is at most MaxHeadingBytes, cut at a word.
func TestHeadingTextBounded(t *testing.T) {
	long := strings.Repeat("word ", 100)
	got := headingsOf(t, "a.md", []byte("# "+long+"\n\ntext\n"))
	if len(got) != 1 || len(got[0].Text) > MaxHeadingBytes || strings.HasSuffix(got[0].Text, " ") || !strings.HasPrefix(long, got[0].Text+" ") {
		t.Errorf("headings %+v: want one of at most %d bytes, cut at a word", got, MaxHeadingBytes)
	}
}

// TestEvalCorporaHeadings: the retrieval eval's licence and manual (shared/knowledge's
// testdata) are plain text whose sections the extraction sees: the MPL's underlined section
// titles, the manual page's sections.
func TestEvalCorporaHeadings(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // the first headings
	}{
		{"mpl/MPL-2.0.txt", []string{"Mozilla Public License Version 2.0", "1. Definitions", "2. License Grants and Conditions"}},
		{"apt-get/apt-get.8.txt", []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"}},
	} {
		data, err := os.ReadFile(filepath.Join("..", "knowledge", "testdata", "eval", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range headingsOf(t, filepath.Base(tc.file), data) {
			got = append(got, h.Text)
		}
		if len(got) < len(tc.want) || !cmp.Equal(got[:len(tc.want)], tc.want) {
			t.Errorf("%s: headings %q, want them to start with %q", tc.file, got, tc.want)
		}
	}
}

// BenchmarkTextHeadings is the heading pass alone over the text BenchmarkExtractText extracts
// (about 1 MiB), to set beside the whole extraction's time.
func BenchmarkTextHeadings(b *testing.B) {
	html := benchInput(b, "testdata/shared-mime-info/x34.html")
	res, err := Text(context.Background(), "x.html", html, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	text := normalize(strings.Repeat(res.Text+"\n\n", (1<<20)/len(res.Text)+1))
	b.SetBytes(int64(len(text)))
	n := 0
	for b.Loop() {
		n = len(textHeadings(text, false))
	}
	b.ReportMetric(float64(n), "headings")
}
