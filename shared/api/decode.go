package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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
	if err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "The request body could not be read")
	}
	return b, nil
}

// bodyFormat tells JSON from YAML by Content-Type; an absent type is read as JSON.
func bodyFormat(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "json", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", domain.Errorf(domain.KindUnsupportedMedia, "Malformed Content-Type %q", ct)
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json", nil
	case mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml":
		return "yaml", nil
	}
	return "", domain.Errorf(domain.KindUnsupportedMedia, "Unsupported Content-Type %q: send application/json or application/yaml", mt)
}

// decodeObject reads the body as one JSON or YAML object. Numbers come back as json.Number, so
// integers stay exact and every value has a JSON type.
func decodeObject(w http.ResponseWriter, r *http.Request, limit int64) (map[string]any, error) {
	format, ferr := bodyFormat(r)
	b, err := readBody(w, r, limit)
	if err != nil {
		return nil, err
	}
	if ferr != nil {
		// curl -d sends JSON as a form by default: a form or plain-text body that is a JSON
		// document is read as JSON; anything else is refused with 415.
		if !lenientType(r.Header.Get("Content-Type")) || !looksLikeJSON(b) {
			return nil, ferr
		}
		format = "json"
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, domain.Errorf(domain.KindInvalid, "The request body is empty: send a JSON object")
	}
	if format == "yaml" {
		if b, err = yamlToJSON(b); err != nil {
			return nil, err
		}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed JSON body: %s", jsonErrorText(err))
	}
	if dec.More() {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed JSON body: unexpected data after the object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, domain.Errorf(domain.KindInvalid, "The request body must be an object, not %s", jsonTypeName(v))
	}
	return m, nil
}

func lenientType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/x-www-form-urlencoded" || mt == "text/plain"
}

func looksLikeJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// yamlToJSON converts one YAML document to JSON, refusing non-string keys and multiple documents.
func yamlToJSON(b []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed YAML body: %s", firstLine(err.Error()))
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, domain.Errorf(domain.KindInvalid, "Malformed YAML body: send exactly one document")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, domain.Errorf(domain.KindInvalid, "The YAML body has values JSON cannot hold (non-string keys?)")
	}
	return out, nil
}

// decodeInto converts a decoded object into a typed request, naming the field whose type is wrong.
func decodeInto(m map[string]any, dst any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return domain.Errorf(domain.KindInvalid, "The request body could not be read")
	}
	if err := json.Unmarshal(b, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return domain.Invalid([]domain.FieldError{{Field: te.Field, Message: "must be " + article(te.Type.Kind().String())}})
		}
		return domain.Errorf(domain.KindInvalid, "The request body has a field of the wrong type")
	}
	return nil
}

func article(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "a boolean"
	case "ptr":
		return "a value of another type"
	}
	return "a " + kind
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
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
