package api

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// Why a string is refused; encoding/json would otherwise replace the first two with U+FFFD.
const (
	problemUTF8      = "must be valid UTF-8 text"
	problemSurrogate = "must be valid UTF-8 text: a \\u escape of half a surrogate pair (\\ud800-\\udfff) is not a character"
	problemNUL       = "must not contain NUL characters (\\u0000)"
)

// checkJSONText finds the first string of a valid JSON document (values and keys) that is not
// valid UTF-8, holds an unpaired surrogate escape or a NUL, and names its field.
func checkJSONText(b []byte) error {
	if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
		return nil // nothing to find: the common case costs one pass
	}
	s := &textScanner{b: b}
	return s.value("")
}

// textScanner walks a document encoding/json has already accepted, so it need not check syntax.
type textScanner struct {
	b []byte
	i int
}

func (s *textScanner) ws() {
	for s.i < len(s.b) && strings.IndexByte(" \t\r\n", s.b[s.i]) >= 0 {
		s.i++
	}
}

func (s *textScanner) value(path string) error {
	s.ws()
	if s.i >= len(s.b) {
		return nil
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		for {
			s.ws()
			switch s.b[s.i] {
			case '}':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			key, problem := s.str()
			if problem != "" {
				return textKeyError(path, problem)
			}
			s.ws()
			s.i++ // the colon
			if err := s.value(joinPath(path, key)); err != nil {
				return err
			}
		}
	case '[':
		s.i++
		for n := 0; ; {
			s.ws()
			switch s.b[s.i] {
			case ']':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			if err := s.value(joinPath(path, strconv.Itoa(n))); err != nil {
				return err
			}
			n++
		}
	case '"':
		if _, problem := s.str(); problem != "" {
			return textFieldError(path, problem)
		}
		return nil
	}
	for s.i < len(s.b) && strings.IndexByte(",]} \t\r\n", s.b[s.i]) < 0 {
		s.i++ // a number, true, false or null
	}
	return nil
}

// str reads the string at s.i, returning it decoded (for naming fields) or why it is refused.
func (s *textScanner) str() (string, string) {
	var out strings.Builder
	s.i++ // the opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out.String(), ""
		case c == '\\':
			e := s.b[s.i+1]
			s.i += 2
			if e != 'u' {
				out.WriteByte(jsonUnescape(e))
				continue
			}
			r := hex4(s.b[s.i:])
			s.i += 4
			switch {
			case r == 0:
				return "", problemNUL
			case r >= 0xDC00 && r <= 0xDFFF:
				return "", problemSurrogate
			case r >= 0xD800 && r <= 0xDBFF:
				if !bytes.HasPrefix(s.b[s.i:], []byte(`\u`)) || len(s.b) < s.i+6 {
					return "", problemSurrogate
				}
				lo := hex4(s.b[s.i+2:])
				if lo < 0xDC00 || lo > 0xDFFF {
					return "", problemSurrogate
				}
				s.i += 6
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			}
			out.WriteRune(r)
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", problemUTF8
			}
			out.WriteRune(r)
			s.i += size
		}
	}
	return out.String(), ""
}

func hex4(b []byte) rune {
	if len(b) < 4 {
		return utf8.RuneError
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return utf8.RuneError
	}
	return rune(n)
}

func jsonUnescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return c // " \ /
}

// checkText does for a decoded value (from YAML) what checkJSONText does for JSON text.
func checkText(v any, path string) error {
	switch t := v.(type) {
	case string:
		if p := textProblem(t); p != "" {
			return textFieldError(path, p)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p := textProblem(k); p != "" {
				return textKeyError(path, p)
			}
			if err := checkText(t[k], joinPath(path, k)); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := checkText(x, joinPath(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

func textProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return problemUTF8
	case strings.IndexByte(s, 0) >= 0:
		return problemNUL
	}
	return ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func textFieldError(path, problem string) error {
	return domain.Invalid([]domain.FieldError{{Field: path, Message: problem}})
}

// textKeyError names the object that has a bad key; the key itself cannot be shown.
func textKeyError(path, problem string) error {
	if path == "" {
		return domain.Invalid([]domain.FieldError{{Field: "", Message: "The request body has a key that " + problem}})
	}
	return domain.Invalid([]domain.FieldError{{Field: path, Message: "has a key that " + problem}})
}
