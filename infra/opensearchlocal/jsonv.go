package opensearchlocal

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// OpenSearch parses request bodies token by token (Jackson): it keeps key order, rejects duplicate
// keys and reports positions. encoding/json does none of that, so the stand-in has its own small
// parser that keeps each value's offset for OpenSearch's "[line:col]" error positions.

// kind is a JSON value's type.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// jv is one parsed JSON value. Numbers keep their literal text.
type jv struct {
	k   kind
	off int // byte offset of the value's first character in the parsed document
	b   bool
	s   string // string value or number literal
	arr []*jv
	obj []member
	src []byte // the whole parsed document, for positions
}

// member is one key of an object, in document order.
type member struct {
	key    string
	keyOff int
	val    *jv
}

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return e.msg }

// parseJSON parses one JSON document; trailing non-space bytes are an error.
func parseJSON(src []byte) (*jv, error) {
	p := &jparser{src: src}
	p.skip()
	if p.i >= len(src) {
		return nil, &jsonError{off: p.i, msg: "Unexpected end-of-input: expected a JSON value"}
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i < len(src) {
		return nil, p.errf("Unexpected character (%s): expected end of input", describeChar(src, p.i))
	}
	return v, nil
}

type jparser struct {
	src []byte
	i   int
}

const maxDepth = 1000

func (p *jparser) errf(format string, a ...any) error {
	return &jsonError{off: p.i, msg: fmt.Sprintf(format, a...)}
}

func describeChar(src []byte, i int) string {
	r, _ := utf8.DecodeRune(src[i:])
	return fmt.Sprintf("'%c' (code %d)", r, r)
}

func (p *jparser) skip() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) value(depth int) (*jv, error) {
	if depth > maxDepth {
		return nil, p.errf("Document nesting depth exceeds the maximum allowed (%d)", maxDepth)
	}
	if p.i >= len(p.src) {
		return nil, p.errf("Unexpected end-of-input: expected a JSON value")
	}
	start := p.i
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		p.i++
		v := &jv{k: kArray, off: start, src: p.src, arr: []*jv{}}
		p.skip()
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			p.skip()
			e, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, e)
			p.skip()
			if p.i >= len(p.src) {
				return nil, p.errf("Unexpected end-of-input: expected close marker for Array")
			}
			if p.src[p.i] == ',' {
				p.i++
				continue
			}
			if p.src[p.i] == ']' {
				p.i++
				return v, nil
			}
			return nil, p.errf("Unexpected character (%s): was expecting comma to separate Array entries", describeChar(p.src, p.i))
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jv{k: kString, off: start, s: s, src: p.src}, nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
				p.i += len(lit)
				if p.i < len(p.src) && isIdentByte(p.src[p.i]) {
					break
				}
				switch lit {
				case "null":
					return &jv{k: kNull, off: start, src: p.src}, nil
				default:
					return &jv{k: kBool, off: start, b: lit == "true", src: p.src}, nil
				}
			}
		}
		p.i = start
		return nil, p.errf("Unrecognized token '%s': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", p.token())
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errf("Unexpected character (%s): expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", describeChar(p.src, p.i))
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *jparser) token() string {
	j := p.i
	for j < len(p.src) && isIdentByte(p.src[j]) {
		j++
	}
	if j == p.i {
		j = min(p.i+1, len(p.src))
	}
	return string(p.src[p.i:j])
}

func (p *jparser) object(depth int) (*jv, error) {
	v := &jv{k: kObject, off: p.i, src: p.src, obj: []member{}}
	p.i++
	p.skip()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return v, nil
	}
	seen := map[string]bool{}
	for {
		p.skip()
		if p.i >= len(p.src) {
			return nil, p.errf("Unexpected end-of-input: expected close marker for Object")
		}
		if p.src[p.i] != '"' {
			return nil, p.errf("Unexpected character (%s): was expecting double-quote to start field name", describeChar(p.src, p.i))
		}
		keyOff := p.i
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			p.i = keyOff
			return nil, p.errf("Duplicate field '%s'", key)
		}
		seen[key] = true
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			if p.i >= len(p.src) {
				return nil, p.errf("Unexpected end-of-input: was expecting a colon to separate field name and value")
			}
			return nil, p.errf("Unexpected character (%s): was expecting a colon to separate field name and value", describeChar(p.src, p.i))
		}
		p.i++
		p.skip()
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.obj = append(v.obj, member{key: key, keyOff: keyOff, val: val})
		p.skip()
		if p.i >= len(p.src) {
			return nil, p.errf("Unexpected end-of-input: expected close marker for Object")
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] == '}' {
			p.i++
			return v, nil
		}
		return nil, p.errf("Unexpected character (%s): was expecting comma to separate Object entries", describeChar(p.src, p.i))
	}
}

func (p *jparser) str() (string, error) {
	p.i++ // opening quote
	var sb strings.Builder
	for {
		if p.i >= len(p.src) {
			return "", p.errf("Unexpected end-of-input in VALUE_STRING")
		}
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.src) {
				return "", p.errf("Unexpected end-of-input in character escape sequence")
			}
			e := p.src[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				sb.WriteByte(e)
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.errf("Unexpected character: expected a hex-digit for character escape sequence")
				}
				if utf16.IsSurrogate(r) && p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							sb.WriteRune(d)
							continue
						}
					}
					p.i = save
				}
				sb.WriteRune(r)
			default:
				p.i -= 1
				return "", p.errf("Unrecognized character escape '%c' (code %d)", e, e)
			}
		case c < 0x20:
			return "", p.errf("Illegal unquoted character ((CTRL-CHAR, code %d)): has to be escaped using backslash to be included in string value", c)
		default:
			r, size := utf8.DecodeRune(p.src[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errf("Invalid UTF-8 start byte 0x%x", c)
			}
			sb.Write(p.src[p.i : p.i+size])
			p.i += size
		}
	}
}

func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.src) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.src[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

func (p *jparser) number() (*jv, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.src) && p.src[p.i] == '0' && p.i+1 < len(p.src) && p.src[p.i+1] >= '0' && p.src[p.i+1] <= '9' {
		return nil, p.errf("Invalid numeric value: Leading zeroes not allowed")
	}
	if digits() == 0 {
		return nil, p.errf("Unexpected character (%s) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value", describeChar(p.src, min(p.i, len(p.src)-1)))
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errf("Unexpected character in numeric value: Decimal point not followed by a digit")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errf("Unexpected character in numeric value: Exponent indicator not followed by a digit")
		}
	}
	return &jv{k: kNumber, off: start, s: string(p.src[start:p.i]), src: p.src}, nil
}

// keyPos is a member key's position prefix.
func (m member) keyPos(v *jv) string {
	l, c := lineCol(v.src, m.keyOff)
	return fmt.Sprintf("[%d:%d]", l, c)
}
