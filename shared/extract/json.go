package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxJSONDepth bounds nesting: the flattener recurses once per level.
const maxJSONDepth = 256

// jsonText flattens JSON to one "path: value" line per leaf, in document order:
//
//	name: Widget
//	dimensions.width: 20
//	tags[0]: blue
//
// A top-level array (and each line of NDJSON) is a list of records: each record's paths start
// inside it, and records are separated by a blank line so the splitter keeps a record together.
// Strings have their whitespace runs folded to one space, so every leaf is one line; empty objects
// and arrays show as {} and []. A file that does not parse as JSON in full is read as plain text
// (Detect only saw its first bytes), and the result says text/plain.
func jsonText(ctx context.Context, in input) (output, error) {
	s, cs, err := decodeText(in.data)
	if err != nil {
		return output{}, err
	}
	data := []byte(s)
	var records [][]byte
	if in.typ.MediaType == MediaNDJSON {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				records = append(records, line)
			}
		}
	} else {
		records = [][]byte{data}
	}
	for _, rec := range records {
		if !json.Valid(rec) {
			return output{text: s, charset: cs, media: MediaText}, nil
		}
	}
	if ctx.Err() != nil {
		return output{}, contextError(ctx, "")
	}
	f := flattener{ctx: ctx, limit: in.lim.MaxText}
	for _, rec := range records {
		dec := json.NewDecoder(bytes.NewReader(rec))
		dec.UseNumber()
		if err := f.top(dec); err != nil {
			return output{}, err
		}
	}
	return output{text: f.b.String(), charset: cs}, nil
}

// flattener writes JSON leaves as "path: value" lines.
type flattener struct {
	ctx    context.Context
	b      textBuf
	limit  int
	leaves int
	// path is the path of the value being read, grown and cut back level by level: a string per
	// level would hold the path once per level (250 levels of 16 KiB keys are 500 MB).
	path []byte
}

// top flattens one document; a top-level array is a list of records.
func (f *flattener) top(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(err)
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		for dec.More() {
			f.record()
			f.path = f.path[:0]
			if err := f.value(dec, 1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return jsonErr(err)
	}
	f.record()
	f.path = f.path[:0]
	return f.token(dec, tok, 0)
}

// record starts a new record with a blank line.
func (f *flattener) record() {
	if f.b.Len() > 0 {
		f.b.WriteString("\n\n")
	}
}

func (f *flattener) value(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(err)
	}
	return f.token(dec, tok, depth)
}

func (f *flattener) token(dec *json.Decoder, tok json.Token, depth int) error {
	if depth > maxJSONDepth {
		return invalidf("the JSON file is nested more than %d levels deep", maxJSONDepth)
	}
	switch t := tok.(type) {
	case json.Delim:
		n, mark := 0, len(f.path)
		for ; dec.More(); n++ {
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return jsonErr(err)
				}
				if mark > 0 {
					f.path = append(f.path, '.')
				}
				f.path = fmt.Append(f.path, key)
			} else {
				f.path = append(strconv.AppendInt(append(f.path, '['), int64(n), 10), ']')
			}
			err := f.value(dec, depth+1)
			f.path = f.path[:mark]
			if err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return jsonErr(err)
		}
		if n == 0 {
			empty := "[]"
			if t == '{' {
				empty = "{}"
			}
			return f.leaf(empty)
		}
		return nil
	case string:
		return f.leaf(strings.Join(strings.Fields(t), " "))
	case json.Number:
		return f.leaf(t.String())
	case bool:
		return f.leaf(strconv.FormatBool(t))
	case nil:
		return f.leaf("null")
	}
	return invalidf("the JSON file could not be read")
}

func (f *flattener) leaf(v string) error {
	f.leaves++
	if f.leaves%4096 == 0 && f.ctx.Err() != nil {
		return contextError(f.ctx, "")
	}
	if f.b.Len() > 0 && !f.b.HasSuffix("\n\n") {
		f.b.WriteString("\n")
	}
	if len(f.path) > 0 {
		f.b.WriteBytes(f.path)
		f.b.WriteString(": ")
	}
	f.b.WriteString(v)
	if f.b.Len() > f.limit {
		return invalidf("the file holds more than %s of text, the limit", formatSize(f.limit))
	}
	return nil
}

// jsonErr turns a decoder error on already validated input into a client error; it should not
// happen, but a wrong message is better than a panic.
func jsonErr(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return wrapInvalid(err, "the JSON file could not be read")
}
