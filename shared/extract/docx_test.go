package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"strings"
	"testing"
)

// zipFiles builds a ZIP archive with the given entries, in order.
func zipFiles(t testing.TB, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		// Entries are stored uncompressed, so sizes in the archive are predictable.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const (
	contentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`
	rootRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`
	wordHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>`
	wordTail = `<w:sectPr/></w:body></w:document>`
)

// docx builds a Word document whose body is the given WordprocessingML, the way Word lays out the
// package ([Content_Types].xml first, then the relationships, then the parts).
func docx(t testing.TB, body string, extra ...[2]string) []byte {
	entries := [][2]string{
		{"[Content_Types].xml", contentTypes},
		{"_rels/.rels", rootRels},
		{"word/document.xml", wordHead + body + wordTail},
	}
	return zipFiles(t, append(entries, extra...)...)
}

// deflated builds a ZIP with one compressed entry.
func deflated(t testing.TB, name, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err == nil {
		_, err = w.Write([]byte(content))
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDOCXText(t *testing.T) {
	body := `<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Annual report</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t xml:space="preserve">Sales grew </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>12%</w:t></w:r>` +
		`<w:r><w:tab/><w:t>in</w:t><w:br/><w:t>2024.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Kept</w:t></w:r>` +
		`<w:del><w:r><w:delText>deleted</w:delText></w:r></w:del></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Figures</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>first item</w:t></w:r></w:p>` +
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Region</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Total</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>North</w:t></w:r></w:p><w:p><w:r><w:t>and East</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>42</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>Boxed</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice>` +
		`<mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>Boxed</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
		`<w:p><w:r><w:t>End</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>`
	footnotes := `<?xml version="1.0" encoding="UTF-8"?><w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
		`<w:footnote w:type="separator" w:id="0"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>` +
		`<w:footnote w:id="1"><w:p><w:r><w:t>A footnote.</w:t></w:r></w:p></w:footnote></w:footnotes>`
	data := docx(t, body, [2]string{"word/footnotes.xml", footnotes})

	res, err := Text(context.Background(), "report.docx", data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Annual report\n" +
		"Sales grew 12%\tin\n2024.\n" +
		"Kept\n\n" +
		"Figures\n" +
		"- first item\n\n" +
		"Region | Total\n" +
		"North and East | 42\n\n" +
		"Boxed\n" +
		"End\n\n" +
		"A footnote."
	if res.Text != want {
		t.Errorf("text =\n%q\nwant\n%q", res.Text, want)
	}
	if res.MediaType != MediaDOCX || res.FileType != FileDocument {
		t.Errorf("media, file type = %s, %s", res.MediaType, res.FileType)
	}
}

func TestDOCXLateWordEntry(t *testing.T) {
	// mimetype recognises a DOCX by a "word/" entry near the start; with a large first entry the
	// bytes only say ZIP, and the name and the package contents decide.
	big := [2]string{"docProps/custom.xml", strings.Repeat("<x>padding</x>", 2000)}
	data := zipFiles(t, [2]string{"[Content_Types].xml", contentTypes}, big, [2]string{"_rels/.rels", rootRels},
		[2]string{"word/document.xml", wordHead + `<w:p><w:r><w:t>Late but found</w:t></w:r></w:p>` + wordTail})
	if got := Detect("x.docx", data[:4096]).MediaType; got != MediaDOCX {
		t.Errorf("Detect = %s, want %s", got, MediaDOCX)
	}
	res, err := Text(context.Background(), "x.docx", data, Limits{})
	if err != nil || res.Text != "Late but found" {
		t.Errorf("Text = %q, %v", res.Text, err)
	}
}

func TestDOCXErrors(t *testing.T) {
	good := docx(t, `<w:p><w:r><w:t>Hello</w:t></w:r></w:p>`)
	bomb := deflated(t, "word/document.xml", wordHead+`<w:p><w:r><w:t>`+strings.Repeat("a", 4<<20)+`</w:t></w:r></w:p>`+wordTail)
	ole := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 2048)...)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want string
	}{
		{"zip without word part", zipFiles(t, [2]string{"notes.txt", "hello"}), Limits{}, "the file is a ZIP archive but not a DOCX"},
		{"xlsx named docx", zipFiles(t, [2]string{"[Content_Types].xml", contentTypes}, [2]string{"xl/workbook.xml", "<workbook/>"}), Limits{},
			"unsupported file type application/vnd.openxmlformats-officedocument.spreadsheetml.sheet (supported: plain text, Markdown, HTML, CSV, JSON, PDF, DOCX)"},
		{"xlsx named docx, marker beyond the head", zipFiles(t, [2]string{"docProps/custom.xml", strings.Repeat("<x>padding</x>", 2000)}, [2]string{"xl/workbook.xml", "<workbook/>"}), Limits{},
			"the file is an Excel workbook (XLSX), not a DOCX"},
		{"truncated", good[:len(good)-40], Limits{}, "the DOCX is damaged: it is not a readable ZIP archive"},
		{"bad xml", docx(t, `<w:p><w:r><w:t>open</w:r></w:p>`), Limits{}, "the DOCX is damaged: word/document.xml is not well-formed XML"},
		{"no text", docx(t, `<w:p><w:r><w:drawing/></w:r></w:p>`), Limits{}, "no text could be extracted from this DOCX"},
		{"unpacks too far", bomb, Limits{MaxBytes: 64 << 10}, "the DOCX is too large: word/document.xml unpacks to more than 2.0 MiB of XML, the limit"},
		{"encrypted office file", ole, Limits{}, "the DOCX is encrypted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Text(context.Background(), "file.docx", tt.data, tt.lim)
			assertInvalid(t, err, tt.want)
		})
	}
}
