package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentorch/agentorch/shared/domain"
)

// DefaultMaxBodyBytes is the documented request body limit (1 MiB) unless MAX_BODY_BYTES says
// otherwise.
const DefaultMaxBodyBytes = 1 << 20

// readBody reads the whole body, refusing more than limit bytes with 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, domain.Errorf(domain.KindTooLarge, "Request body is larger than the limit of %d bytes", limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, domain.Errorf(domain.KindTooLarge, "Request body is larger than the limit of %d bytes", limit)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The dev server's read deadline (API Gateway gives Lambda whole bodies).
		return nil, domain.Errorf(domain.KindRequestTimeout, "The request body did not arrive in time")
	}
	if err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "The request body could not be read")
	}
	return b, nil
}

// bodyFormat tells JSON from YAML by Content-Type; an absent type is read as JSON. Anything else
// is refused with 415: other types (curl -d sends a form), a charset other than UTF-8, and any
// Content-Encoding but identity (API Gateway hands bodies to Lambda as sent, never decompressed).
func bodyFormat(r *http.Request) (string, error) {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, enc := range strings.Split(v, ",") {
			if enc = strings.TrimSpace(enc); enc != "" && !strings.EqualFold(enc, "identity") {
				return "", domain.Errorf(domain.KindUnsupportedMedia, "Unsupported Content-Encoding %q: send the body uncompressed", enc)
			}
		}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "json", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", domain.Errorf(domain.KindUnsupportedMedia, "Malformed Content-Type %q", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return "", domain.Errorf(domain.KindUnsupportedMedia, "Unsupported charset %q: bodies are UTF-8", cs)
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json", nil
	case mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml":
		return "yaml", nil
	case mt == "application/x-www-form-urlencoded" || mt == "text/plain":
		return "", domain.Errorf(domain.KindUnsupportedMedia, "Unsupported Content-Type %q: send application/json or application/yaml (curl -d sends a form: add -H 'Content-Type: application/json', or use curl --json)", mt)
	}
	return "", domain.Errorf(domain.KindUnsupportedMedia, "Unsupported Content-Type %q: send application/json or application/yaml", mt)
}

// decodeObject reads the body as one JSON or YAML object. Numbers come back as json.Number, so
// integers stay exact and every value has a JSON type. Text that JSON decoding would silently
// replace (invalid UTF-8, a lone surrogate escape) and NUL characters are refused with 400
// naming the field.
func decodeObject(w http.ResponseWriter, r *http.Request, limit int64) (map[string]any, error) {
	m, _, err := readObject(w, r, limit)
	return m, err
}

// readObject is decodeObject that also returns the body as JSON (a YAML body converted), for a
// typed input that reads itself from it.
func readObject(w http.ResponseWriter, r *http.Request, limit int64) (map[string]any, []byte, error) {
	format, err := bodyFormat(r)
	if err != nil {
		return nil, nil, err
	}
	b, err := readBody(w, r, limit)
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil, domain.Errorf(domain.KindInvalid, "The request body is empty: send a JSON object")
	}
	if format == "yaml" {
		if b, err = yamlToJSON(b); err != nil {
			return nil, nil, err
		}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, domain.Errorf(domain.KindInvalid, "Malformed JSON body: %s", jsonErrorText(err))
	}
	if dec.More() {
		return nil, nil, domain.Errorf(domain.KindInvalid, "Malformed JSON body: unexpected data after the object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, domain.Errorf(domain.KindInvalid, "The request body must be an object, not %s", domain.JSONType(v))
	}
	if format == "json" {
		if err := checkJSONText(b); err != nil {
			return nil, nil, err
		}
	}
	return m, b, nil
}

// yamlToJSON converts one YAML document to JSON, refusing non-string keys and multiple documents.
func yamlToJSON(b []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed YAML body: %s", firstLine(err.Error()))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed YAML body: send exactly one document")
	}
	// yaml.v3 refuses invalid UTF-8 and surrogate escapes itself; "\0" it decodes to a NUL.
	if err := checkText(v, ""); err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "The YAML body has values JSON cannot hold (non-string keys?)")
	}
	return out, nil
}

// boolParam reads a boolean query parameter: 1, true, yes, on or 0, false, no, off in any case;
// absent is false. Anything else (an empty value too) is a 400 naming the parameter, rather than
// a silent false.
func boolParam(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	switch strings.ToLower(q.Get(name)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, domain.Invalid([]domain.FieldError{{Field: name, Message: "must be true or false (also 1/0, yes/no, on/off)"}})
}

// kindName names the JSON type a Go type decodes from, as in "must be an array".
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	}
	return "a value of another type"
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return "invalid JSON"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// unknownFields names each key of m that is not one of known, in sorted order, with the list
// of the fields there are.
func unknownFields(m map[string]any, known []string) []domain.FieldError {
	msg := "unknown field; the fields are " + strings.Join(known, ", ")
	if len(known) == 0 {
		msg = "unknown field; this request takes no fields"
	}
	var errs []domain.FieldError
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			errs = append(errs, domain.FieldError{Field: domain.Clip(k, 64), Message: msg})
		}
	}
	return errs
}

// emptyBody refuses a body with fields for an operation that takes none: no body, an empty one
// and {} pass (in any format bodyFormat accepts), anything else is a 400 rather than ignored.
func emptyBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	if r.ContentLength == 0 {
		return nil
	}
	b, err := readBody(w, r, limit)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return decode(w, r, limit, &struct{}{})
}
