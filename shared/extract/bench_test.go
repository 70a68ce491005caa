package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// benchInput repeats a real document until it is about 1 MiB.
func benchInput(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Repeat(data, (1<<20)/len(data)+1)
}

func benchExtract(b *testing.B, name string, data []byte) {
	b.Helper()
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var out int
	for b.Loop() {
		res, err := Text(ctx, name, data, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		out = len(res.Text)
	}
	b.ReportMetric(float64(out)/float64(len(data)), "text/input")
}

// BenchmarkExtractText reads about 1 MiB of plain text (the specification's text, repeated).
func BenchmarkExtractText(b *testing.B) {
	html := benchInput(b, "testdata/shared-mime-info/x34.html")
	res, err := Text(context.Background(), "x.html", html, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	text := []byte(strings.Repeat(res.Text+"\n\n", (1<<20)/len(res.Text)+1))
	benchExtract(b, "spec.txt", text)
}

// BenchmarkExtractHTML reads about 1 MiB of HTML (the specification's main page, repeated).
func BenchmarkExtractHTML(b *testing.B) {
	benchExtract(b, "spec.html", benchInput(b, "testdata/shared-mime-info/x34.html"))
}

// BenchmarkExtractPDF reads the 17-page, 137 KiB specification PDF.
func BenchmarkExtractPDF(b *testing.B) {
	data, err := os.ReadFile("testdata/shared-mime-info/spec.pdf")
	if err != nil {
		b.Fatal(err)
	}
	benchExtract(b, "spec.pdf", data)
}

// BenchmarkExtractDOCX reads a generated DOCX of about 1 MiB (stored, not compressed).
func BenchmarkExtractDOCX(b *testing.B) {
	var body strings.Builder
	for i := 0; body.Len() < 1<<20; i++ {
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">Paragraph %d says something about the MIME database, </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>in bold</w:t></w:r></w:p>`, i)
	}
	benchExtract(b, "gen.docx", docx(b, body.String()))
}

// BenchmarkExtractCSV reads about 1 MiB of CSV.
func BenchmarkExtractCSV(b *testing.B) {
	var s strings.Builder
	s.WriteString("id,name,price,description\n")
	for i := 0; s.Len() < 1<<20; i++ {
		fmt.Fprintf(&s, "%d,Widget %d,%d.50,\"A widget, number %d\"\n", i, i, i%100, i)
	}
	benchExtract(b, "items.csv", []byte(s.String()))
}
