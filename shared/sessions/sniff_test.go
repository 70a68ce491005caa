package sessions

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

func zipWith(t *testing.T, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDataURLJudgedByBytes sends data URLs through parseContent: the bytes decide, as for
// uploads, and a declared type that the bytes contradict is a 400 naming the block.
func TestDataURLJudgedByBytes(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var pngBuf, jpgBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpgBuf, img, nil); err != nil {
		t.Fatal(err)
	}
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), make([]byte, 64)...)
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 32)...)
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
	docx := zipWith(t, "[Content_Types].xml", "word/document.xml")
	xlsx := zipWith(t, "[Content_Types].xml", "xl/workbook.xml")
	ole := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 64)...)

	tests := []struct {
		name, block, declared string
		data                  []byte
		want                  string // the format given to the model; empty: refused
	}{
		{"png as png", "image", "image/png", pngBuf.Bytes(), "png"},
		{"jpeg declared png", "image", "image/png", jpgBuf.Bytes(), "jpeg"},
		{"exe as png", "image", "image/png", exe, ""},
		{"elf as jpeg", "image", "image/jpeg", elf, ""},
		{"text as gif", "image", "image/gif", []byte("GIF? no, just text"), ""},
		{"pdf as pdf", "file", "application/pdf", pdf, "pdf"},
		{"exe as pdf", "file", "application/pdf", exe, ""},
		{"exe as text", "file", "text/plain", exe, ""},
		{"text as pdf", "file", "application/pdf", []byte("not a pdf at all"), ""},
		{"docx", "file", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx, "docx"},
		{"xlsx declared docx", "file", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", xlsx, "xlsx"},
		{"plain zip as docx", "file", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", zipWith(t, "a.txt"), ""},
		{"doc", "file", "application/msword", ole, "doc"},
		{"xls", "file", "application/vnd.ms-excel", ole, "xls"},
		{"ole as pdf", "file", "application/pdf", ole, ""},
		{"csv", "file", "text/csv", []byte("a,b\n1,2\n"), "csv"},
		{"markdown with BOM", "file", "text/markdown", []byte("\xEF\xBB\xBF# Title\n\ttext\r\n"), "md"},
		{"html", "file", "text/html", []byte("<html><body>hi</body></html>"), "html"},
		{"nul bytes as text", "file", "text/plain", []byte("abc\x00def"), ""},
		{"latin-1 as text", "file", "text/plain", []byte("caf\xe9"), ""},
	}
	s := &Service{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := "data:" + tt.declared + ";base64," + base64.StdEncoding.EncodeToString(tt.data)
			block := `{"type":"file","file_url":"` + url + `"}`
			at := "content.0.file_url"
			if tt.block == "image" {
				block = `{"type":"image_url","image_url":{"url":"` + url + `"}}`
				at = "content.0.image_url.url"
			}
			var c Content
			if err := json.Unmarshal([]byte("["+block+"]"), &c); err != nil {
				t.Fatal(err)
			}
			parts, _, err := s.parseContent(context.Background(), c)
			if tt.want == "" {
				var de *domain.Error
				if domain.KindOf(err) != domain.KindInvalid || !asDomain(err, &de) || len(de.Fields) != 1 || de.Fields[0].Field != at ||
					!strings.Contains(de.Fields[0].Message, "declares "+tt.declared) {
					t.Fatalf("err = %v, want a 400 on %s", err, at)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got *domain.Media
			if len(parts) == 1 {
				got = parts[0].Image
				if got == nil {
					got = parts[0].Document
				}
			}
			if got == nil || got.Format != tt.want || !bytes.Equal(got.Data, tt.data) {
				t.Fatalf("parts = %+v, want one %s part with the data", parts, tt.want)
			}
		})
	}
}
