package extract

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/agentorch/agentorch/shared/domain"
)

func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	if bigEndian {
		b = []byte{0xFE, 0xFF}
	} else {
		b = []byte{0xFF, 0xFE}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

func TestPlainTextEncodings(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    string
		charset string
	}{
		{"utf-8", []byte("naïve café 😀"), "naïve café 😀", "utf-8"},
		{"utf-8 with BOM", []byte("\xEF\xBB\xBFhello"), "hello", "utf-8"},
		{"utf-16le with BOM", utf16Bytes("Grüße 😀\r\nzweite Zeile", false), "Grüße 😀\nzweite Zeile", "utf-16le"},
		{"utf-16be with BOM", utf16Bytes("héllo", true), "héllo", "utf-16be"},
		{"latin-1 falls back to windows-1252", []byte("caf\xe9 \x93quoted\x94"), "café \u201cquoted\u201d", "windows-1252"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Text(context.Background(), "notes.txt", tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want || res.Charset != tt.charset {
				t.Errorf("text, charset = %q, %q; want %q, %q", res.Text, res.Charset, tt.want, tt.charset)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\r\nb\rc\n", "a\nb\nc"},
		{"trailing   \t\nspaces  ", "trailing\nspaces"},
		{"  indented\n    kept", "  indented\n    kept"},
		{"one\n\n\n\n\ntwo\n \n\t\n \nthree", "one\n\ntwo\n\nthree"},
		{"\n\n\nleading and trailing\n\n\n", "leading and trailing"},
		{"nul\x00bytes\x00 and \x07bell and \ufeffbom", "nulbytes and bell and bom"},
		{"page\fbreak", "page\n\nbreak"},
		{"bad \xff utf-8", "bad \ufffd utf-8"},
		{"c1 \u0085control", "c1 control"},
		{"tab\tinside", "tab\tinside"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkdownKeptAsWritten(t *testing.T) {
	md := "# Title\n\nSome *emphasis* and a [link](https://example.com).\n\n- item\n\n```go\nfmt.Println(1)\n```\n"
	res, err := Text(context.Background(), "README.md", []byte(md), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(md); res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
	if res.MediaType != MediaMarkdown || res.FileType != FileDocument {
		t.Errorf("media, file type = %s, %s", res.MediaType, res.FileType)
	}
}

// minimalExe is the start of a Windows executable: the MZ header, whose fields hold NUL bytes.
var minimalExe = append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00\xb8\x00"), make([]byte, 200)...)

func TestTextErrors(t *testing.T) {
	tests := []struct {
		name, file string
		data       []byte
		lim        Limits
		kind       domain.Kind
		want       string
	}{
		{"empty", "a.txt", nil, Limits{}, domain.KindInvalid, "the file is empty"},
		{"exe named txt", "notes.txt", minimalExe, Limits{}, domain.KindInvalid,
			"unsupported file type application/vnd.microsoft.portable-executable (supported: plain text, Markdown, HTML, CSV, JSON, PDF, DOCX)"},
		{"png", "photo.txt", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), Limits{}, domain.KindInvalid, "unsupported file type image/png"},
		{"old word", "letter.doc", append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 600)...), Limits{}, domain.KindInvalid, "old Word .doc files cannot be read; save it as DOCX or PDF"},
		{"binary after a text head", "log.txt", append([]byte(strings.Repeat("text line\n", 500)), make([]byte, 600)...), Limits{}, domain.KindInvalid, "the file is not text: it contains binary data"},
		{"whitespace only", "blank.txt", []byte(" \n\t\n "), Limits{}, domain.KindInvalid, "no text could be extracted from this file"},
		{"utf-32", "wide.txt", []byte("\xFF\xFE\x00\x00h\x00\x00\x00"), Limits{}, domain.KindInvalid, "UTF-32"},
		{"too large", "big.txt", []byte(strings.Repeat("a", 2048)), Limits{MaxBytes: 1024}, domain.KindTooLarge, "the file is 2.0 KiB; the limit is 1.0 KiB"},
		{"too much text", "big.txt", []byte(strings.Repeat("a", 2048)), Limits{MaxText: 1024}, domain.KindInvalid, "more than 1.0 KiB of text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Text(context.Background(), tt.file, tt.data, tt.lim)
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("error = %v, want a *domain.Error", err)
			}
			if de.Kind != tt.kind || !strings.Contains(de.Message, tt.want) {
				t.Errorf("error = %v %q, want %v containing %q", de.Kind, de.Message, tt.kind, tt.want)
			}
		})
	}
}

func TestTextStartingWithMZIsText(t *testing.T) {
	res, err := Text(context.Background(), "memo.txt", []byte("MZ Architects: minutes of the meeting"), Limits{})
	if err != nil || res.MediaType != MediaText {
		t.Errorf("Text = %q, %s, %v; want the text as text/plain", res.Text, res.MediaType, err)
	}
}
