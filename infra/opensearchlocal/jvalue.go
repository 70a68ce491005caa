package opensearchlocal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// lineCol converts a byte offset into Jackson's 1-based line and column.
func lineCol(src []byte, off int) (int, int) {
	off = min(max(off, 0), len(src))
	line := 1 + bytes.Count(src[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCount(src[lineStart:off]) + 1
}

// pos is the value's "[line:col]" position prefix as OpenSearch's x_content_parse_exception writes it.
func (v *jv) pos() string {
	l, c := lineCol(v.src, v.off)
	return fmt.Sprintf("[%d:%d]", l, c)
}

// tokenName names the value's first token as OpenSearch's XContentParser.Token does
// (START_OBJECT, VALUE_STRING, VALUE_NUMBER, …).
func (v *jv) tokenName() string {
	switch v.k {
	case kNull:
		return "VALUE_NULL"
	case kBool:
		return "VALUE_BOOLEAN"
	case kNumber:
		return "VALUE_NUMBER"
	case kString:
		return "VALUE_STRING"
	case kArray:
		return "START_ARRAY"
	default:
		return "START_OBJECT"
	}
}

func (v *jv) isInt() bool { return v.k == kNumber && !strings.ContainsAny(v.s, ".eE") }

// get returns an object's member value by key, or nil.
func (v *jv) get(key string) *jv {
	if v == nil || v.k != kObject {
		return nil
	}
	for _, m := range v.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// float reads a number, or a numeric string as OpenSearch's lenient number parsing does.
func (v *jv) float() (float64, bool) {
	switch v.k {
	case kNumber:
		f, err := strconv.ParseFloat(v.s, 64)
		return f, err == nil || isRangeErr(err)
	case kString:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

func isRangeErr(err error) bool {
	return errors.Is(err, strconv.ErrRange)
}

// int reads an integer (a number literal or a numeric string without fraction).
func (v *jv) int() (int64, bool) {
	switch v.k {
	case kNumber:
		if v.isInt() {
			n, err := strconv.ParseInt(v.s, 10, 64)
			return n, err == nil
		}
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			return 0, false
		}
		return int64(f), true
	case kString:
		n, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// boolean reads true/false or their string forms, as OpenSearch's parser.booleanValue does.
func (v *jv) boolean() (bool, bool) {
	switch v.k {
	case kBool:
		return v.b, true
	case kString:
		switch v.s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// text is the value as OpenSearch's parser.text() gives it for scalars.
func (v *jv) text() string {
	switch v.k {
	case kString, kNumber:
		return v.s
	case kBool:
		return strconv.FormatBool(v.b)
	case kNull:
		return "null"
	}
	return string(v.raw())
}

// isScalar reports a value token (string, number, bool, null).
func (v *jv) isScalar() bool { return v.k != kArray && v.k != kObject }

// raw re-encodes the value compactly, keeping key order.
func (v *jv) raw() []byte {
	var b bytes.Buffer
	v.encode(&b)
	return b.Bytes()
}

func (v *jv) encode(b *bytes.Buffer) {
	switch v.k {
	case kNull:
		b.WriteString("null")
	case kBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kNumber:
		b.WriteString(v.s)
	case kString:
		writeJSONString(b, v.s)
	case kArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b)
		}
		b.WriteByte(']')
	case kObject:
		b.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, m.key)
			b.WriteByte(':')
			m.val.encode(b)
		}
		b.WriteByte('}')
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// MarshalJSON lets a parsed value be embedded in responses as it was sent.
func (v *jv) MarshalJSON() ([]byte, error) { return v.raw(), nil }

// preview is OpenSearch's "Preview of field's value" text for a value.
func (v *jv) preview() string {
	switch v.k {
	case kString, kNumber:
		return v.s
	case kBool:
		return strconv.FormatBool(v.b)
	case kNull:
		return "null"
	case kArray:
		return "null" // arrays are previewed by their first token, which has no text
	}
	return "{" + strings.Join(objectKeys(v), ", ") + "}"
}

func objectKeys(v *jv) []string {
	out := make([]string, 0, len(v.obj))
	for _, m := range v.obj {
		out = append(out, m.key)
	}
	return out
}
