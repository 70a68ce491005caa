package sessions

import (
	"archive/zip"
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/images"
)

// dataFormat judges the bytes of a data URL, as the upload endpoint judges an upload: the
// declared media type only picks between formats the bytes cannot tell apart. It returns the
// format the model receives, or ok false with a short description of what the bytes are.
func dataFormat(declared string, data []byte) (format, seen string, ok bool) {
	if _, isImage := imageFormats[declared]; isImage {
		mt, ok := images.Sniff(data)
		if !ok {
			return "", sniffed(data), false
		}
		return imageFormats[mt], mt, true
	}
	return documentFormat(documentFormats[declared], data)
}

// oleMagic starts the compound files of Word 97–2003 (.doc) and Excel 97–2003 (.xls).
var oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// documentFormat is the document format of data: pdf and the zip-based docx and xlsx by their
// contents; doc or xls (the same container) and the text formats as declared when the bytes are
// of that kind.
func documentFormat(declared string, data []byte) (format, seen string, ok bool) {
	seen = sniffed(data)
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return "pdf", "application/pdf", true
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if f := officeZip(data); f != "" {
			return f, "an Office Open XML " + f + " document", true
		}
		return "", "a zip archive that is no Word or Excel document", false
	case bytes.HasPrefix(data, oleMagic):
		if declared == "doc" || declared == "xls" {
			return declared, "", true
		}
		return "", "a Word or Excel 97-2003 document (declare application/msword or application/vnd.ms-excel)", false
	case isText(data):
		switch declared {
		case "txt", "csv", "md", "html":
			return declared, "", true
		}
		return "", "text", false
	}
	return "", seen, false
}

// officeZip tells docx from xlsx by the part every such package has.
func officeZip(data []byte) string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return ""
	}
	for _, f := range zr.File {
		switch f.Name {
		case "word/document.xml":
			return "docx"
		case "xl/workbook.xml":
			return "xlsx"
		}
	}
	return ""
}

// isText reports UTF-8 text without control characters other than tab, line feed, form feed
// and carriage return (an executable or other binary has them within its first bytes).
func isText(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if len(data) == 0 || !utf8.Valid(data) {
		return false
	}
	for _, b := range data {
		if (b < 0x20 && b != '\t' && b != '\n' && b != '\f' && b != '\r') || b == 0x7F {
			return false
		}
	}
	return true
}

// sniffed describes data for an error message.
func sniffed(data []byte) string {
	if bytes.HasPrefix(data, []byte("MZ")) {
		return "a Windows executable"
	}
	if bytes.HasPrefix(data, []byte("\x7FELF")) {
		return "an ELF executable"
	}
	mt, _, _ := strings.Cut(http.DetectContentType(data), ";")
	return mt
}
