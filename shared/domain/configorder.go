package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ConfigDocJSON wraps a decoded JSON object (numbers as json.Number) together with the JSON text
// it was decoded from, so that the document also knows the order in which the client wrote its
// members (OrderedJSON). Text that does not give exactly obj's members (a key written twice, which
// the decoder resolves to the last) is set aside: the document is then ConfigDocOf(obj).
func ConfigDocJSON(obj map[string]any, text []byte) ConfigDoc {
	d := ConfigDoc{obj: obj}
	if obj != nil {
		if b, ok := orderedJSON(text); ok {
			d.ordered = b
		}
	}
	return d
}

// OrderedJSON is the document in JSON as the API writes Object() (encoding/json, compact, without
// HTML escapes, numbers as sent), except that every object's members stand in the order the
// client wrote them: the same members and bytes, only placed differently, so the same size and the
// same ConfigHash. A document without its text (built from a map, or the result of Merge) gives
// encoding/json's order, keys sorted.
func (d ConfigDoc) OrderedJSON() (json.RawMessage, error) {
	if d.ordered != nil {
		return bytes.Clone(d.ordered), nil
	}
	return encodeJSON(d.obj)
}

// encodeJSON is json.Marshal without HTML escapes, as the API writes its answers.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errDuplicateKey stops orderedJSON at a key written twice in one object.
var errDuplicateKey = errors.New("a key is written twice")

// orderedJSON re-encodes one JSON value member by member, keeping the members' order: each
// scalar as encoding/json encodes the decoded value, so the result matches json.Marshal of the
// decoded value but for the order. It reports false for text that is not one JSON value or that
// repeats a key in an object.
func orderedJSON(text []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := writeOrdered(dec, &buf); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return buf.Bytes(), true
}

func writeOrdered(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		b, err := encodeJSON(tok) // a string, json.Number, bool or nil
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	switch delim {
	case '{':
		buf.WriteByte('{')
		seen := map[string]bool{}
		for n := 0; dec.More(); n++ {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, ok := k.(string)
			if !ok {
				return errors.New("an object key is not a string")
			}
			if seen[key] {
				return errDuplicateKey
			}
			seen[key] = true
			if n > 0 {
				buf.WriteByte(',')
			}
			b, err := encodeJSON(key)
			if err != nil {
				return err
			}
			buf.Write(b)
			buf.WriteByte(':')
			if err := writeOrdered(dec, buf); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case '[':
		buf.WriteByte('[')
		for n := 0; dec.More(); n++ {
			if n > 0 {
				buf.WriteByte(',')
			}
			if err := writeOrdered(dec, buf); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return errors.New("unexpected " + delim.String())
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
