package extract

import (
	"bytes"
	"strconv"
)

// rawLexer reads the tokens of a PDF's bytes as the reader's own lexer does, for the checks that
// must run before the reader parses anything (it allocates from numbers it has not yet checked).
// It only looks: a token it cannot make sense of ends the check, and the reader reports the damage.
type rawLexer struct {
	data []byte
	pos  int
}

// maxRawDepth is the reader's bound on nested arrays and dictionaries.
const maxRawDepth = 1000

func isPDFSpace(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

func isPDFDelim(c byte) bool {
	switch c {
	case '<', '>', '(', ')', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// token returns the next token: "<<", ">>", "[", "]", a name with its slash, a string with its
// delimiters, or a regular token (number or keyword); nil at the end of the data.
func (l *rawLexer) token() []byte {
	d := l.data
	for l.pos < len(d) {
		if c := d[l.pos]; isPDFSpace(c) {
			l.pos++
		} else if c == '%' {
			for l.pos < len(d) && d[l.pos] != '\r' && d[l.pos] != '\n' {
				l.pos++
			}
		} else {
			break
		}
	}
	if l.pos >= len(d) {
		return nil
	}
	start := l.pos
	switch c := d[l.pos]; c {
	case '<', '>':
		if l.pos+1 < len(d) && d[l.pos+1] == c {
			l.pos += 2
		} else if c == '<' {
			if k := bytes.IndexByte(d[l.pos:], '>'); k >= 0 {
				l.pos += k + 1
			} else {
				l.pos = len(d)
			}
		} else {
			l.pos++
		}
	case '(':
		depth := 0
	String:
		for ; l.pos < len(d); l.pos++ {
			switch d[l.pos] {
			case '\\':
				l.pos++
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					l.pos++
					break String
				}
			}
		}
		l.pos = min(l.pos, len(d))
	case '[', ']', '{', '}', ')':
		l.pos++
	default:
		l.pos++ // a name's slash, or the first character of a regular token
		for l.pos < len(d) && !isPDFDelim(d[l.pos]) && !isPDFSpace(d[l.pos]) {
			l.pos++
		}
	}
	return d[start:l.pos]
}

// value reads one object and returns its bytes: a reference "n g R" is one value, an array or a
// dictionary runs to its matching end. ok is false at the end of the data or nesting too deep.
func (l *rawLexer) value() (v []byte, ok bool) {
	tok := l.token()
	if tok == nil {
		return nil, false
	}
	begin := l.pos - len(tok)
	switch string(tok) {
	case "<<", "[":
		for depth := 1; depth > 0; {
			t := l.token()
			switch string(t) {
			case "":
				return nil, false
			case "<<", "[":
				if depth++; depth > maxRawDepth {
					return nil, false
				}
			case ">>", "]":
				depth--
			}
		}
		return l.data[begin:l.pos], true
	}
	if _, isInt := rawInt(tok); isInt {
		save := l.pos
		if g, _ := rawInt(l.token()); g >= 0 {
			if string(l.token()) == "R" {
				return l.data[begin:l.pos], true
			}
		}
		l.pos = save
	}
	return tok, true
}

// dict reads a dictionary whose "<<" was just read and returns its entries by name (slash
// included, escapes decoded); the last of repeated keys wins, as in the reader.
func (l *rawLexer) dict() (map[string][]byte, bool) {
	entries := map[string][]byte{}
	for {
		k := l.token()
		switch {
		case k == nil:
			return nil, false
		case string(k) == ">>":
			return entries, true
		case k[0] != '/':
			return nil, false
		}
		v, ok := l.value()
		if !ok {
			return nil, false
		}
		entries[rawName(k)] = v
	}
}

// rawName decodes the #xx escapes of a name token.
func rawName(tok []byte) string {
	if bytes.IndexByte(tok, '#') < 0 {
		return string(tok)
	}
	var b []byte
	for i := 0; i < len(tok); i++ {
		if tok[i] == '#' && i+2 < len(tok) {
			if x, err := strconv.ParseUint(string(tok[i+1:i+3]), 16, 8); err == nil {
				b = append(b, byte(x))
				i += 2
				continue
			}
		}
		b = append(b, tok[i])
	}
	return string(b)
}

// rawInt parses an integer token as the reader does (an optional sign and digits).
func rawInt(tok []byte) (int64, bool) {
	s := string(tok)
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if digits == "" {
		return -1, false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return -1, false
		}
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1, false
	}
	return x, true
}

// rawInts parses an array of integers; ok is false when it is not one.
func rawInts(v []byte) ([]int64, bool) {
	l := rawLexer{data: v}
	if string(l.token()) != "[" {
		return nil, false
	}
	var xs []int64
	for {
		t := l.token()
		if string(t) == "]" {
			return xs, true
		}
		x, ok := rawInt(t)
		if !ok {
			return nil, false
		}
		xs = append(xs, x)
	}
}
