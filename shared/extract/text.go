package extract

import (
	"bytes"
	"context"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// plainText reads plain text and Markdown. Markdown stays as written: its markup is light, readable
// and carries structure (headings, lists) that helps both the splitter and the embedder.
func plainText(_ context.Context, in input) (output, error) {
	s, charset, err := decodeText(in.data)
	if err != nil {
		return output{}, err
	}
	return output{text: s, charset: charset}, nil
}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// decodeText turns text bytes into a string. What it accepts:
//   - UTF-8, with or without a byte-order mark;
//   - UTF-16 little or big endian with a byte-order mark, converted (without a BOM the NUL bytes
//     make the file binary to Detect already);
//   - anything else that is not valid UTF-8 is read as Windows-1252, the superset of Latin-1 that
//     legacy Western text files are written in. Every byte sequence decodes under it, so this step
//     cannot fail; the binary check below is what rejects non-text.
//
// Text with more than a trace of control bytes (NUL, BEL, ESC …: more than 1 in 1000 characters) is
// binary data and rejected; the few that remain are removed by normalize.
func decodeText(data []byte) (text, charset string, err error) {
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		text, charset = string(data[len(bomUTF8):]), "utf-8"
		if !utf8.ValidString(text) {
			return "", "", invalidf("the file is not valid UTF-8 text although it starts with a UTF-8 byte-order mark")
		}
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0}):
		return "", "", invalidf("the file is UTF-32 text, which is not supported; save it as UTF-8")
	case bytes.HasPrefix(data, bomUTF16LE):
		text, charset = decodeUTF16(data[2:], false), "utf-16le"
	case bytes.HasPrefix(data, bomUTF16BE):
		text, charset = decodeUTF16(data[2:], true), "utf-16be"
	case utf8.Valid(data):
		text, charset = string(data), "utf-8"
	default:
		b, derr := charmap.Windows1252.NewDecoder().Bytes(data)
		if derr != nil {
			return "", "", invalidf("the file is not valid UTF-8 text")
		}
		text, charset = string(b), "windows-1252"
	}
	if n := controlCount(text); n > 0 && n*1000 > utf8.RuneCountInString(text) {
		return "", "", invalidf("the file is not text: it contains binary data (%d control bytes)", n)
	}
	return text, charset, nil
}

// decodeUTF16 converts UTF-16 bytes; an odd trailing byte is dropped and lone surrogates become
// U+FFFD.
func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// controlCount counts the characters that never occur in text files (the WHATWG "binary data
// bytes": C0 controls other than tab, line feed, form feed, carriage return and escape).
func controlCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isBinaryByte(s[i]) {
			n++
		}
	}
	return n
}

func isBinaryByte(b byte) bool {
	return b <= 0x08 || b == 0x0B || 0x0E <= b && b <= 0x1A || 0x1C <= b && b <= 0x1F
}

// normalize brings extracted text into the one shape the splitter sees: valid UTF-8; no NUL,
// byte-order marks or other control characters (tab and line feed stay, form feed becomes a
// paragraph break); CRLF and lone CR become LF; no trailing spaces or tabs on a line; runs of blank
// lines collapse to one blank line, so "\n\n" always means exactly one paragraph break; no blank
// lines at the start or end.
func normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.ContainsRune(s, '\r') {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	if strings.ContainsRune(s, '\f') {
		s = strings.ReplaceAll(s, "\f", "\n\n")
	}
	var b strings.Builder
	b.Grow(len(s))
	blank := false // a blank line is owed before the next line with text
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		if needsCleaning(line) {
			line = strings.Map(func(r rune) rune {
				if r == '\t' || r >= 0x20 && r != 0xFEFF && (r < 0x7F || r > 0x9F) {
					return r
				}
				return -1
			}, line)
		}
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
			if blank {
				b.WriteByte('\n')
			}
		}
		blank = false
		b.WriteString(line)
	}
	return b.String()
}

// needsCleaning reports whether a line holds a character normalize removes: a control character
// other than tab (C0, DEL, C1) or a byte-order mark. It looks at bytes, so clean text costs one
// pass without decoding.
func needsCleaning(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c < 0x20 && c != '\t', c == 0x7F:
			return true
		case c == 0xC2 && i+1 < len(line) && line[i+1] >= 0x80 && line[i+1] <= 0x9F: // U+0080–U+009F
			return true
		case c == 0xEF && strings.HasPrefix(line[i:], "\uFEFF"):
			return true
		}
	}
	return false
}

// hasWords reports whether s has at least one letter or digit: the least a chunk worth embedding
// needs.
func hasWords(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
