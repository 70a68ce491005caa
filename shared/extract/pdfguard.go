package extract

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// Bounds on what the PDF reader may unpack and hold. The reader inflates streams as it goes and
// keeps every operand of a content stream until the operator that takes them, and a whole string
// token, in memory: a 300 KB file whose one stream inflates to 300 MB of a single string took it
// past 2 GB. Streams are measured before the reader sees them.
const (
	// maxPDFStream is the most one stream may inflate to.
	maxPDFStream = 64 << 20
	// pdfUnpackPerText bounds all streams together, as a multiple of Limits.MaxText.
	pdfUnpackPerText = 16
	// maxPDFOperands bounds the operands before one operator of a content stream or CMap (real
	// ones have a handful; a TJ array a few hundred).
	maxPDFOperands = 1 << 17
	// maxPDFStrings bounds the bytes of strings and names before one operator.
	maxPDFStrings = 4 << 20
)

// pdfBomb is a stream the reader must not be given; its message is for the user.
type pdfBomb struct{ msg string }

func (b *pdfBomb) Error() string { return b.msg }

// checkPDFStreams inflates, without keeping, every deflated stream of a file that is not an image,
// and refuses the file when one stream inflates to more than maxPDFStream or all of them to more
// than the unpack limit. It finds streams by their keyword rather than through the reader, so
// object streams and cross-reference streams, which the reader inflates on its own, are measured
// too. Encrypted streams do not inflate here; checkPDFContent measures those the walker reads.
func checkPDFStreams(data []byte, lim Limits) error {
	total, limit := int64(0), int64(pdfUnpackPerText)*int64(lim.MaxText)
	buf := make([]byte, 32<<10)
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte("stream"))
		if k < 0 {
			return nil
		}
		at := i + k
		i = at + len("stream")
		if at >= 3 && string(data[at-3:at]) == "end" {
			continue
		}
		start := i
		switch {
		case bytes.HasPrefix(data[start:], []byte("\r\n")):
			start += 2
		case start < len(data) && (data[start] == '\n' || data[start] == '\r'):
			start++
		default:
			continue
		}
		if dict := streamDict(data, at); bytes.Contains(dict, []byte("/Image")) {
			continue // the reader counts images and never inflates them
		}
		zr, err := zlib.NewReader(bytes.NewReader(data[start:]))
		if err != nil {
			continue // not deflated, or encrypted
		}
		n, _ := io.CopyBuffer(io.Discard, io.LimitReader(zr, maxPDFStream+1), buf)
		if n > maxPDFStream {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: a stream at byte %d expands to more than %s (a decompression bomb?)", at, formatSize(maxPDFStream))}
		}
		if total += n; total > limit {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: its streams expand to more than %s together, the limit (a decompression bomb?)", formatSize(int(limit)))}
		}
	}
}

// streamDict is the dictionary before the stream keyword at, back to its "obj" (at most 4 KiB).
func streamDict(data []byte, at int) []byte {
	from := max(0, at-4096)
	if k := bytes.LastIndex(data[from:at], []byte("obj")); k >= 0 {
		return data[from+k : at]
	}
	return data[from:at]
}

// checkPDFContent reads a content stream (or an array of them, or a CMap) as the reader will
// decode and decrypt it, and refuses it when it inflates too far or piles up more operands or
// string bytes before an operator than the bounds allow. what names it in the message.
func checkPDFContent(v pdf.Value, what string) error {
	if v.Kind() == pdf.Array {
		for i := 0; i < v.Len(); i++ {
			if err := checkPDFContent(v.Index(i), what); err != nil {
				return err
			}
		}
		return nil
	}
	if v.Kind() != pdf.Stream {
		return nil
	}
	rd := v.Reader()
	defer rd.Close()
	var sc pdfScan
	buf := make([]byte, 32<<10)
	total := 0
	for {
		n, err := rd.Read(buf)
		total += n
		if total > maxPDFStream {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: %s expands to more than %s (a decompression bomb?)", what, formatSize(maxPDFStream))}
		}
		if serr := sc.feed(buf[:n]); serr != nil {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: %s %s", what, serr.Error())}
		}
		if err != nil {
			return nil // the reader meets the same damage and reports the page
		}
	}
}

// Lexical states of pdfScan.
const (
	psSpace = iota
	psToken
	psComment
	psString
	psHex
)

// pdfScan follows a content stream's tokens as the reader's lexer does, counting what the
// reader would hold before the next operator.
type pdfScan struct {
	state    int
	tok      [8]byte // the start of a regular token, to tell an operator from a number
	ntok     int
	parens   int  // nesting in a literal string
	escape   bool // after a backslash in a literal string
	lt, gt   bool // a '<' or '>' that may be the first of "<<" or ">>"
	depth    int  // array and dictionary nesting
	operands int
	strings  int
}

var (
	errPDFOperands = errors.New("holds more than 131072 operands before one operator (a decompression bomb?)")
	errPDFStrings  = errors.New("holds more than 4.0 MiB of strings before one operator (a decompression bomb?)")
)

func (s *pdfScan) feed(p []byte) error {
	for _, c := range p {
		if err := s.step(c); err != nil {
			return err
		}
	}
	return nil
}

func (s *pdfScan) step(c byte) error {
	switch s.state {
	case psComment:
		if c == '\n' || c == '\r' {
			s.state = psSpace
		}
		return nil
	case psString:
		s.strings++
		switch {
		case s.escape:
			s.escape = false
		case c == '\\':
			s.escape = true
		case c == '(':
			s.parens++
		case c == ')':
			if s.parens--; s.parens == 0 {
				s.state = psSpace
			}
		}
		return s.fits()
	case psHex:
		s.strings++
		if c == '>' {
			s.state = psSpace
		}
		return s.fits()
	}
	if s.lt {
		s.lt = false
		if c == '<' {
			s.depth++
			return s.operand()
		}
		s.state = psHex
		return s.step(c)
	}
	if s.gt {
		s.gt = false
		if c == '>' {
			s.depth = max(0, s.depth-1)
			return nil
		}
	}
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return s.endToken()
	case '%':
		s.state = psComment
		return s.endToken()
	case '(':
		s.parens = 1
		if err := s.endToken(); err != nil {
			return err
		}
		s.state = psString
		return s.operand()
	case '<':
		s.lt = true
		return s.endToken()
	case '>':
		s.gt = true
		return s.endToken()
	case '[', '{':
		if err := s.endToken(); err != nil {
			return err
		}
		s.depth++
		return s.operand()
	case ']', '}':
		s.depth = max(0, s.depth-1)
		return s.endToken()
	case '/':
		if err := s.endToken(); err != nil {
			return err
		}
		s.state, s.ntok = psToken, 0
		s.tok[0], s.ntok = '/', 1
		return nil
	}
	if s.state != psToken {
		s.state, s.ntok = psToken, 0
	}
	if s.ntok < len(s.tok) {
		s.tok[s.ntok] = c
	}
	s.ntok++
	if s.tok[0] == '/' {
		s.strings++
		return s.fits()
	}
	return nil
}

// endToken closes a regular token: an operator at the top level clears the counts.
func (s *pdfScan) endToken() error {
	if s.state != psToken {
		return nil
	}
	s.state = psSpace
	t := string(s.tok[:min(s.ntok, len(s.tok))])
	first := t[0]
	isOperator := first != '/' && first != '+' && first != '-' && first != '.' && (first < '0' || first > '9') &&
		t != "true" && t != "false" && t != "null"
	if isOperator && s.depth == 0 {
		s.operands, s.strings = 0, 0
		return nil
	}
	return s.operand()
}

func (s *pdfScan) operand() error {
	if s.operands++; s.operands > maxPDFOperands {
		return errPDFOperands
	}
	return nil
}

func (s *pdfScan) fits() error {
	if s.strings > maxPDFStrings {
		return errPDFStrings
	}
	return nil
}
