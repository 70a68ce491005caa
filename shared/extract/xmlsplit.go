package extract

import (
	"errors"
	"io"
)

// Bounds on the tokens encoding/xml builds, which it holds whole in memory: character data is
// passed on in pieces of at most about xmlTextPiece bytes, and markup (a tag with its attributes,
// a comment, a CDATA section, a processing instruction, a doctype) longer than maxXMLMarkup is
// refused.
const (
	xmlTextPiece = 64 << 10
	maxXMLMarkup = 2 << 20
)

// errXMLMarkup marks markup longer than maxXMLMarkup.
var errXMLMarkup = errors.New("XML markup too long")

// xmlEmptyComment is what cuts character data: the decoder returns the text before it and after
// it as two CharData tokens and the comment as a Comment token, which the walker ignores, so the
// text read is the same.
const xmlEmptyComment = "<!---->"

// Lexical states of xmlSplitter.
const (
	xsText    = iota
	xsOpen    // after "<"
	xsBang    // after "<!"
	xsTag     // in a start or end tag
	xsComment // in <!-- -->
	xsCDATA   // in <![CDATA[ ]]>
	xsPI      // in <? ?>
	xsDecl    // in <!DOCTYPE …>
)

// xmlSplitter passes an XML document through to encoding/xml so that no token it builds can be
// large, whatever the input: the decoder buffers a whole token (300 MB of text in one <w:t> is one
// token) before the caller sees any of it. It follows XML's lexical structure just enough to know
// whether a byte is character data or markup. Character data is cut every xmlTextPiece bytes, at a
// point where a cut changes nothing (not inside a UTF-8 sequence, an entity reference or a CRLF);
// markup cannot be cut and is an error past maxXMLMarkup.
type xmlSplitter struct {
	r   io.Reader
	off bool // pass bytes through untouched (the decoder switched to a charset reader above)

	buf  [32 << 10]byte
	head int // buf[head:tail] is read but not yet passed on
	tail int
	err  error

	inject string // part of xmlEmptyComment still to pass on

	state   int
	run     int  // bytes of the current token
	quote   byte // open attribute quote in a tag
	last    [2]byte
	entity  int  // bytes since an '&' in character data, 0 outside an entity reference
	depth   int  // '[' nesting in a doctype
	opening bool // after "<!-", in the opening of a comment
}

func (s *xmlSplitter) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if s.inject != "" {
			c := copy(p[n:], s.inject)
			n += c
			s.inject = s.inject[c:]
			continue
		}
		if s.head == s.tail {
			if s.err != nil || n > 0 {
				break
			}
			s.head = 0
			s.tail, s.err = s.r.Read(s.buf[:])
			if s.tail == 0 && s.err == nil {
				continue
			}
			continue
		}
		if s.off {
			c := copy(p[n:], s.buf[s.head:s.tail])
			n += c
			s.head += c
			continue
		}
		c := s.buf[s.head]
		if s.state == xsText && s.run >= xmlTextPiece && s.cuttable(c) {
			s.inject, s.run = xmlEmptyComment, 0
			continue
		}
		if err := s.step(c); err != nil {
			s.err, s.head, s.tail = err, 0, 0
			break
		}
		p[n] = c
		n++
		s.head++
	}
	if n == 0 && s.head == s.tail && s.err != nil {
		return 0, s.err
	}
	return n, nil
}

// cuttable reports whether character data may be cut before c: not before a UTF-8 continuation
// byte, inside an entity reference or between CR and LF (the decoder turns CRLF into one LF). A run
// that stays uncuttable for long (invalid input) is cut anyway, and the decoder then reports it.
func (s *xmlSplitter) cuttable(c byte) bool {
	if s.run >= xmlTextPiece+64 {
		return true
	}
	return c&0xC0 != 0x80 && s.entity == 0 && !(c == '\n' && s.last[1] == '\r')
}

// step advances the lexical state over c.
func (s *xmlSplitter) step(c byte) error {
	s.run++
	prev := s.last
	s.last = [2]byte{prev[1], c}
	switch s.state {
	case xsText:
		switch {
		case c == '<':
			s.state, s.run, s.entity = xsOpen, 1, 0
		case c == '&':
			s.entity = 1
		case s.entity > 0 && (c == ';' || s.entity > 32):
			s.entity = 0
		case s.entity > 0:
			s.entity++
		}
		return nil
	case xsOpen:
		switch c {
		case '!':
			s.state = xsBang
		case '?':
			s.state = xsPI
		default:
			s.state, s.quote = xsTag, 0
			s.tagByte(c)
		}
	case xsBang:
		switch c {
		case '-':
			s.state, s.opening = xsComment, true
		case '[':
			s.state, s.last = xsCDATA, [2]byte{}
		default:
			s.state, s.quote, s.depth = xsDecl, 0, 0
		}
	case xsTag:
		s.tagByte(c)
	case xsComment:
		if s.opening {
			// The second '-' of "<!--": the decoder looks for "-->" only after it.
			s.opening, s.last = false, [2]byte{}
		} else if c == '>' && prev == [2]byte{'-', '-'} {
			s.toText()
		}
	case xsCDATA:
		if c == '>' && prev == [2]byte{']', ']'} {
			s.toText()
		}
	case xsPI:
		if c == '>' && prev[1] == '?' {
			s.toText()
		}
	case xsDecl:
		switch {
		case s.quote != 0:
			if c == s.quote {
				s.quote = 0
			}
		case c == '"' || c == '\'':
			s.quote = c
		case c == '[':
			s.depth++
		case c == ']':
			s.depth--
		case c == '>' && s.depth <= 0:
			s.toText()
		}
	}
	return s.markupFits()
}

func (s *xmlSplitter) tagByte(c byte) {
	switch {
	case s.quote != 0:
		if c == s.quote {
			s.quote = 0
		}
	case c == '"' || c == '\'':
		s.quote = c
	case c == '>':
		s.toText()
	}
}

func (s *xmlSplitter) toText() { s.state, s.run, s.entity = xsText, 0, 0 }

func (s *xmlSplitter) markupFits() error {
	if s.state != xsText && s.run > maxXMLMarkup {
		return errXMLMarkup
	}
	return nil
}
