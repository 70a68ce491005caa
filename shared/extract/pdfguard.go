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
// too. It returns the bytes inflated and whether some filtered stream could not be measured here
// (encrypted, or through a chain of filters): checkPDFObjects measures those through the reader,
// and object streams again as the reader parses them.
func checkPDFStreams(data []byte, lim Limits, done <-chan struct{}) (total int64, unmeasured bool, err error) {
	limit := int64(pdfUnpackPerText) * int64(lim.MaxText)
	buf := make([]byte, 32<<10)
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte("stream"))
		if k < 0 {
			return total, unmeasured, nil
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
		dict := streamDict(data, at)
		if bytes.Contains(dict, []byte("/Image")) {
			continue // the reader counts images and never inflates them
		}
		if f := bytes.Index(dict, []byte("/Filter")); f >= 0 {
			if rest := bytes.TrimLeft(dict[f+len("/Filter"):], " \t\r\n"); len(rest) > 0 && rest[0] != '/' {
				unmeasured = true // a chain of filters, or an indirect one
			}
		}
		zr, err := zlib.NewReader(bytes.NewReader(data[start:]))
		if err != nil {
			if bytes.Contains(dict, []byte("/Filter")) {
				unmeasured = true
			}
			continue // not deflated, or encrypted
		}
		n, err := io.CopyBuffer(io.Discard, io.LimitReader(doneReader{zr, done}, maxPDFStream+1), buf)
		if errors.Is(err, errStopped) {
			return total, unmeasured, err
		}
		if n > maxPDFStream {
			return total, unmeasured, &pdfBomb{fmt.Sprintf("the PDF cannot be read: a stream at byte %d expands to more than %s (a decompression bomb?)", at, formatSize(maxPDFStream))}
		}
		if total += n; total > limit {
			return total, unmeasured, &pdfBomb{fmt.Sprintf("the PDF cannot be read: its streams expand to more than %s together, the limit (a decompression bomb?)", formatSize(int(limit)))}
		}
	}
}

// errStopped ends work nobody waits for any more: the caller's deadline passed.
var errStopped = errors.New("extraction stopped")

// doneReader stops reading once done is closed.
type doneReader struct {
	r    io.Reader
	done <-chan struct{}
}

func (d doneReader) Read(p []byte) (int, error) {
	select {
	case <-d.done:
		return 0, errStopped
	default:
	}
	return d.r.Read(p)
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
func checkPDFContent(v pdf.Value, what string, done <-chan struct{}) error {
	if v.Kind() == pdf.Array {
		for i := 0; i < v.Len(); i++ {
			if err := checkPDFContent(v.Index(i), what, done); err != nil {
				return err
			}
		}
		return nil
	}
	if v.Kind() != pdf.Stream {
		return nil
	}
	_, err := readPDFStream(v, what, &pdfScan{}, done, false)
	return err
}

// readPDFStream reads a stream through the reader, scanned by sc when not nil, and returns the
// bytes it decoded. A stream the reader cannot decode (an unknown filter makes it panic) counts as
// empty when recovering, since the reader will fail on it too; otherwise the panic goes on.
func readPDFStream(v pdf.Value, what string, sc *pdfScan, done <-chan struct{}, recovering bool) (total int64, err error) {
	if err := checkPredictor(v, what); err != nil {
		return 0, err
	}
	if recovering {
		defer func() {
			if r := recover(); r != nil {
				total, err = 0, nil
			}
		}()
	}
	rd := v.Reader()
	defer func() { _ = rd.Close() }() // a reader: its Close has nothing to report that Read did not
	buf := make([]byte, 32<<10)
	for {
		select {
		case <-done:
			return total, errStopped
		default:
		}
		n, err := rd.Read(buf)
		total += int64(n)
		if total > maxPDFStream {
			return total, &pdfBomb{fmt.Sprintf("the PDF cannot be read: %s expands to more than %s (a decompression bomb?)", what, formatSize(maxPDFStream))}
		}
		if sc != nil {
			if serr := sc.feed(buf[:n]); serr != nil {
				return total, &pdfBomb{fmt.Sprintf("the PDF cannot be read: %s %s", what, serr.Error())}
			}
		}
		if err != nil {
			return total, nil // the reader meets the same damage and reports the page
		}
	}
}

// checkPredictor refuses a predictor row so long that the reader's two row buffers would be a
// bomb of their own: it allocates them before reading a byte.
func checkPredictor(v pdf.Value, what string) error {
	params := []pdf.Value{v.Key("DecodeParms")}
	if params[0].Kind() == pdf.Array {
		params = params[:0]
		for i := 0; i < v.Key("DecodeParms").Len(); i++ {
			params = append(params, v.Key("DecodeParms").Index(i))
		}
	}
	for _, p := range params {
		if c := p.Key("Columns").Int64(); !p.Key("Predictor").IsNull() && c > maxPredictorColumns {
			return &pdfBomb{fmt.Sprintf("the PDF cannot be read: %s declares predictor rows of %d bytes (a damaged or malicious file?)", what, c)}
		}
	}
	return nil
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
	objects  bool // an object stream: the counts are per object, not per operator
}

var (
	errPDFOperands = errors.New("holds more than 131072 operands before one operator (a decompression bomb?)")
	errPDFStrings  = errors.New("holds more than 4.0 MiB of strings before one operator (a decompression bomb?)")
	errPDFValues   = errors.New("holds an object of more than 262144 values (a decompression bomb?)")
	errPDFObjStr   = errors.New("holds an object with more than 4.0 MiB of strings (a decompression bomb?)")
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
				defer s.objectEnds()
			}
		}
		return s.fits()
	case psHex:
		s.strings++
		if c == '>' {
			s.state = psSpace
			defer s.objectEnds()
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
			s.objectEnds()
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
		err := s.endToken()
		s.depth = max(0, s.depth-1)
		s.objectEnds()
		return err
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
	if s.objects {
		switch {
		case s.depth == 0:
			s.operands, s.strings = 0, 0
			return nil
		case t == "R":
			s.operands = max(0, s.operands-2) // a reference is one value, not three
			return nil
		}
		return s.operand()
	}
	first := t[0]
	isOperator := first != '/' && first != '+' && first != '-' && first != '.' && (first < '0' || first > '9') &&
		t != "true" && t != "false" && t != "null"
	if isOperator && s.depth == 0 {
		s.operands, s.strings = 0, 0
		return nil
	}
	return s.operand()
}

// objectEnds clears the counts of an object stream once an object is complete.
func (s *pdfScan) objectEnds() {
	if s.objects && s.depth == 0 {
		s.operands, s.strings = 0, 0
	}
}

func (s *pdfScan) operand() error {
	s.operands++
	switch {
	case s.objects && s.operands > maxPDFObjectValues:
		return errPDFValues
	case !s.objects && s.operands > maxPDFOperands:
		return errPDFOperands
	}
	return nil
}

func (s *pdfScan) fits() error {
	if s.strings > maxPDFStrings {
		if s.objects {
			return errPDFObjStr
		}
		return errPDFStrings
	}
	return nil
}
