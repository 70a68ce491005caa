package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/agentorch/agentorch/shared/api"
)

// openapiSpec is the embedded document, loaded and validated once for the whole test binary.
var openapiSpec struct {
	once sync.Once
	doc  *openapi3.T
	err  error
}

// openapiDoc returns the loaded, validated OpenAPI document.
func openapiDoc() (*openapi3.T, error) {
	openapiSpec.once.Do(func() {
		// Once per test binary and before any validation: the registry is global.
		openapi3filter.RegisterBodyDecoder("text/event-stream", decodeEventStream)
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(api.OpenAPIYAML())
		if err != nil {
			openapiSpec.err = fmt.Errorf("load openapi.yaml: %w", err)
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			openapiSpec.err = fmt.Errorf("validate openapi.yaml: %w", err)
			return
		}
		openapiSpec.doc = doc
	})
	return openapiSpec.doc, openapiSpec.err
}

// openapiOptions make response validation strict: undocumented statuses fail, every schema error
// is reported, and formats the library leaves unchecked by default (uuid) are asserted.
func openapiOptions() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}
}

// checkOpenAPI fails t unless the response is one the OpenAPI document allows for the request:
// a documented status, with the documented headers and a body matching the schema. Tests call it
// on every real response they get. reqBody is the body the request was sent with (req.Body is
// usually consumed by then); the request itself is checked against the document only when the
// service accepted it (2xx), since refusing bad input is what many tests are about. Bodies that
// are not JSON (an uploaded image from GET /media/{name}, a multipart upload) are checked by their
// documented media type and headers: the document's binary schemas (format: binary) take any bytes.
func checkOpenAPI(t testing.TB, req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) {
	t.Helper()
	if err := openapiError(req, reqBody, status, header, respBody); err != nil {
		t.Errorf("OpenAPI: %s %s answered %d against the document:\n%v\nresponse body: %s", req.Method, req.URL.Path, status, err, openapiShow(header, respBody))
	}
}

// openapiError is checkOpenAPI returning its verdict, so that its failures can be tested.
func openapiError(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	doc, err := openapiDoc()
	if err != nil {
		return err
	}
	if header == nil {
		header = http.Header{}
	}
	method := req.Method
	if method == http.MethodHead {
		method = http.MethodGet // net/http.ServeMux serves HEAD with the GET handler
	}
	matches := matchOpenAPIPath(doc, req.URL.Path)
	if len(matches) == 0 {
		// The router answers unknown paths with 404 in the envelope; nothing else is allowed.
		if status != http.StatusNotFound {
			return fmt.Errorf("no path of the document matches %s, yet the status is %d (want 404)", req.URL.Path, status)
		}
		return checkEnvelope(doc, "NotFoundError", header, respBody)
	}
	// The most specific path decides, as in the router: GET /agent/validate/ is the validate
	// path with a method it lacks (405), not GET /agent/{id}/.
	var m openapiMatch
	if matches[0].item.GetOperation(method) != nil {
		m = matches[0]
	}
	if m.item == nil {
		// A known path with another method: 405 with Allow, in the envelope.
		if status != http.StatusMethodNotAllowed {
			return fmt.Errorf("the document has no %s operation on %s, yet the status is %d (want 405)", method, matches[0].path, status)
		}
		if header.Get("Allow") == "" {
			return errors.New("405 without an Allow header")
		}
		return checkEnvelope(doc, "InvalidRequestError", header, respBody)
	}

	op := m.item.GetOperation(method)
	if req.Method == http.MethodHead {
		// A HEAD response has no body to validate; its status must still be documented.
		if op.Responses.Status(status) == nil {
			return fmt.Errorf("status %d is not documented for %s %s", status, method, m.path)
		}
		return nil
	}
	opts := openapiOptions()
	route := &routers.Route{Spec: doc, Path: m.path, PathItem: m.item, Method: method, Operation: op}
	r := req.Clone(context.Background())
	r.Body = http.NoBody
	if len(reqBody) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if ct := canonicalMediaType(r.Header.Get("Content-Type"), len(reqBody) > 0); ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: m.params, Route: route, Options: opts}

	var errs []error
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			errs = append(errs, fmt.Errorf("the service accepted a request the document does not allow: %w", err))
		}
	}
	resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	resp.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), resp); err != nil {
		errs = append(errs, err)
	} else if ref := op.Responses.Status(status); ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(bytes.TrimSpace(respBody)) > 0 {
		errs = append(errs, fmt.Errorf("status %d is documented without a body, yet the response has one", status))
	}
	return errors.Join(errs...)
}

// decodeEventStream reads a server-sent event stream as the service writes it into the value
// the document's ExecuteStream schema describes: one {"event", "data"} object per message, data
// decoded from its JSON. It refuses what the service never sends and a client could not rely
// on: a message without exactly one event line and one data line, other fields, data that is
// not one line of JSON, an unterminated last message, and a stream that does not end with its
// one ending message: the result, the result of a run that paused (requires_action) or the
// error (failed). What each ending's data holds is the document's to say (StreamMessage).
func decodeEventStream(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	text := string(b)
	if !strings.HasSuffix(text, "\n\n") {
		return nil, errors.New("event stream: the last message does not end with a blank line")
	}
	var out []any
	var names []string
	for i, block := range strings.Split(strings.TrimSuffix(text, "\n\n"), "\n\n") {
		var name, data string
		for _, line := range strings.Split(block, "\n") {
			field, value, ok := strings.Cut(line, ": ")
			switch {
			case !ok:
				return nil, fmt.Errorf("event stream: message %d: line %q is not \"field: value\"", i, line)
			case field == "event" && name == "":
				name = value
			case field == "data" && data == "":
				data = value
			default:
				return nil, fmt.Errorf("event stream: message %d: unexpected or repeated field %q", i, field)
			}
		}
		if name == "" || data == "" {
			return nil, fmt.Errorf("event stream: message %d lacks its event or data line", i)
		}
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			return nil, fmt.Errorf("event stream: message %d (%s): data is not JSON: %w", i, name, err)
		}
		out = append(out, map[string]any{"event": name, "data": v})
		names = append(names, name)
	}
	if last := names[len(names)-1]; !streamEndings[last] {
		return nil, fmt.Errorf("event stream: ends with %q, want result, requires_action or failed", last)
	}
	for i, n := range names[:len(names)-1] {
		if streamEndings[n] {
			return nil, fmt.Errorf("event stream: %s at message %d is not the last", n, i)
		}
	}
	return out, nil
}

// streamEndings are the messages that end an event stream, exactly one of them and last.
var streamEndings = map[string]bool{"result": true, "requires_action": true, "failed": true}

// openapiMatch is one path of the document that matches a request path.
type openapiMatch struct {
	path   string
	item   *openapi3.PathItem
	params map[string]string
	vars   int
}

// matchOpenAPIPath finds the document's paths matching p, with or without its trailing slash,
// most specific (fewest parameters) first, as net/http.ServeMux prefers them.
func matchOpenAPIPath(doc *openapi3.T, p string) []openapiMatch {
	// Only a clean path (one trailing slash at most) is a path of the document; the router
	// answers the others with 404.
	if c := path.Clean(p); !strings.HasPrefix(p, "/") || (p != c && p != c+"/") {
		return nil
	}
	want := strings.Split(strings.Trim(p, "/"), "/")
	var out []openapiMatch
	for tmpl, item := range doc.Paths.Map() {
		segs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(segs) != len(want) {
			continue
		}
		m := openapiMatch{path: tmpl, item: item, params: map[string]string{}}
		for i, s := range segs {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && want[i] != "" {
				m.params[s[1:len(s)-1]] = want[i]
				m.vars++
				continue
			}
			if s != want[i] {
				m.item = nil
				break
			}
		}
		if m.item != nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].vars != out[j].vars {
			return out[i].vars < out[j].vars
		}
		return out[i].path < out[j].path
	})
	return out
}

// canonicalMediaType maps the request types the service accepts beyond the two the document
// lists (absent, +json, x-yaml, text/yaml) onto them, as the service reads them.
func canonicalMediaType(ct string, hasBody bool) string {
	if ct == "" {
		if hasBody {
			return "application/json"
		}
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "application/json"
	case mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml":
		return "application/yaml"
	}
	return ct
}

// checkEnvelope validates a response for which no operation applies (unknown path, wrong method)
// against one of the document's error schemas.
func checkEnvelope(doc *openapi3.T, schema string, header http.Header, body []byte) error {
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the document has no schema %s", schema)
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("Content-Type is %q, want application/json", header.Get("Content-Type"))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	opts := append(openapiOptions().SchemaValidationOptions, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors(), openapi3.VisitAsResponse())
	if err := ref.Value.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("the body does not match %s: %w", schema, err)
	}
	return nil
}

// openapiShow is a response body as a failure message shows it: text clipped, binary summed up.
func openapiShow(header http.Header, b []byte) string {
	if !utf8.Valid(b) {
		return fmt.Sprintf("(%d bytes of %s)", len(b), header.Get("Content-Type"))
	}
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// openapiFakeTB records what checkOpenAPI reports instead of failing the real test.
type openapiFakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *openapiFakeTB) Helper() {}

func (f *openapiFakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

// openapiCase is a request and a response the helper must accept, or reject when wantErr.
type openapiCase struct {
	name    string
	method  string
	path    string
	reqBody string
	reqType string // the request's Content-Type; application/json when empty and there is a body
	status  int
	header  http.Header
	body    any // nil: no body; a string is sent as is, anything else as JSON
	wantErr bool
}

// runOpenAPICases checks each case through openapiError and checkOpenAPI.
func runOpenAPICases(t *testing.T, tests []openapiCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the helper is shared by parallel tests; -race checks it
			var body []byte
			switch b := tt.body.(type) {
			case nil:
			case string:
				body = []byte(b)
			default:
				body = openapiJSON(t, b)
			}
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.reqBody))
			if tt.reqType != "" {
				r.Header.Set("Content-Type", tt.reqType)
			} else if tt.reqBody != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			err := openapiError(r, []byte(tt.reqBody), tt.status, tt.header, body)
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("openapiError = %v, want error: %v", err, tt.wantErr)
			}
			if err != nil {
				t.Logf("rejected as expected: %v", err)
			}

			fake := &openapiFakeTB{}
			checkOpenAPI(fake, r, []byte(tt.reqBody), tt.status, tt.header, body)
			if fake.failed != tt.wantErr {
				t.Errorf("checkOpenAPI failed the test: %v (%s), want %v", fake.failed, fake.msg, tt.wantErr)
			}
		})
	}
}

func openapiJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
