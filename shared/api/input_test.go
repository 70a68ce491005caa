package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
)

// decodeBody runs the one decoder on a JSON body as readObject hands it over.
func decodeBody(t *testing.T, body string, dst any) []domain.FieldError {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("test body %s: %v", body, err)
	}
	err := decodeJSON(m, []byte(body), dst)
	if err == nil {
		return nil
	}
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		t.Fatalf("decode %s = %v, want an invalid_request_error", body, err)
	}
	return de.Fields
}

// TestDecodeMCPServerInputs: the shape errors of the MCP server group, word for word as its
// own decoding named them before the one decoder (every value of the wrong type, by full path,
// with the JSON type it has; unknown fields first, in sorted order).
func TestDecodeMCPServerInputs(t *testing.T) {
	const fields = "unknown field; the fields are name, url, description, headers, timeout_ms, auth"
	const updateFields = "unknown field; the fields are name, url, description, headers, timeout_ms" // auth is set at registration only
	const headers = "must be an object of header names to string values"
	const timeout = "must be an integer from 100 to 60000 (milliseconds)"
	for _, tc := range []struct {
		name, body string
		update     bool
		want       []domain.FieldError
	}{
		{"url a number", `{"name":"a","url":5}`, false, []domain.FieldError{{Field: "url", Message: "must be a string, got a number"}}},
		{"headers an array", `{"name":"a","url":"u","headers":["Authorization"]}`, false, []domain.FieldError{{Field: "headers", Message: headers + ", got an array"}}},
		{"headers a string", `{"name":"a","url":"u","headers":"Authorization: x"}`, false, []domain.FieldError{{Field: "headers", Message: headers + ", got a string"}}},
		{"header values of other types", `{"name":"a","url":"u","headers":{"X-Key":5,"A":{"v":"secret"},"B":"ok"}}`, false, []domain.FieldError{
			{Field: "headers.A", Message: "must be a string, got an object"}, {Field: "headers.X-Key", Message: "must be a string, got a number"}}},
		{"timeout a fraction", `{"name":"a","url":"u","timeout_ms":1000.5}`, false, []domain.FieldError{{Field: "timeout_ms", Message: timeout}}},
		{"timeout too large for an integer", `{"name":"a","url":"u","timeout_ms":1e30}`, false, []domain.FieldError{{Field: "timeout_ms", Message: timeout}}},
		{"timeout a string", `{"name":"a","url":"u","timeout_ms":"1000"}`, false, []domain.FieldError{{Field: "timeout_ms", Message: timeout + ", got a string"}}},
		{"unknown fields, any case", `{"name":"a","url":"u","token":"x","NAME":"b"}`, false, []domain.FieldError{{Field: "NAME", Message: fields}, {Field: "token", Message: fields}}},
		{"unknown and wrong", `{"name":true,"url":[],"zz":1}`, false, []domain.FieldError{{Field: "zz", Message: fields},
			{Field: "name", Message: "must be a string, got a boolean"}, {Field: "url", Message: "must be a string, got an array"}}},
		{"nulls", `{"name":null,"url":null,"description":null,"headers":null,"timeout_ms":null}`, false, nil},
		{"update headers an array", `{"headers":[]}`, true, []domain.FieldError{{Field: "headers", Message: headers + ", got an array"}}},
		{"update unknown field", `{"colour":"red"}`, true, []domain.FieldError{{Field: "colour", Message: updateFields}}},
		{"update description a number", `{"description":5}`, true, []domain.FieldError{{Field: "description", Message: "must be a string, got a number"}}},
		{"update nulls", `{"name":null,"url":null,"description":null,"headers":null,"timeout_ms":null}`, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dst any = &mcpservers.CreateInput{}
			if tc.update {
				dst = &mcpservers.UpdateInput{}
			}
			if diff := cmp.Diff(tc.want, decodeBody(t, tc.body, dst)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeOptional: a change tells a field left out, null and a value apart.
func TestDecodeOptional(t *testing.T) {
	var in mcpservers.UpdateInput
	if errs := decodeBody(t, `{"description":null,"timeout_ms":500,"headers":{"A":"b"}}`, &in); errs != nil {
		t.Fatal(errs)
	}
	if in.Name.Set || !in.Description.Set || !in.Description.Null || in.TimeoutMS != domain.Some(500) ||
		!in.Headers.Set || in.Headers.Value["A"] != "b" {
		t.Errorf("decoded %+v", in)
	}
	if errs := in.Validate(); errs != nil {
		t.Errorf("Validate = %v", errs)
	}
}

// TestDecodeFirstError: the requests of the first endpoints keep their form (only the first
// value of the wrong type in sorted key order, paths as encoding/json names them, no JSON type;
// unknown fields alone), and a key's company is refused alone with its own message.
func TestDecodeFirstError(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		dst        any
		want       []domain.FieldError
	}{
		{"two wrong", `{"stream":"x","async":"y"}`, &executeBody{}, []domain.FieldError{{Field: "async", Message: "must be a boolean"}}},
		{"inputs not an object", `{"inputs":[1]}`, &executeBody{}, []domain.FieldError{{Field: "inputs", Message: "must be an object of variable names to values"}}},
		{"correlation id a number", `{"correlation_id":5}`, &executeBody{}, []domain.FieldError{{Field: "correlation_id", Message: "must be a string"}}},
		{"any content", `{"content":[{"type":"text"}],"inputs":{"a":[1]},"tool_results":5}`, &executeBody{}, nil},
		{"unknown before wrong", `{"stream":"x","zz":1,"aa":2}`, &executeBody{}, []domain.FieldError{
			{Field: "aa", Message: "unknown field; the fields are content, correlation_id, inputs, response_format, stream, async, tool_results, approvals, elicitations"},
			{Field: "zz", Message: "unknown field; the fields are content, correlation_id, inputs, response_format, stream, async, tool_results, approvals, elicitations"}}},
		{"array item", `{"scopes":["agents:read",3]}`, &createKeyRequest{}, []domain.FieldError{{Field: "scopes", Message: "must be a string"}}},
		{"fraction for an integer", `{"expires_in":1.5}`, &createKeyRequest{}, []domain.FieldError{{Field: "expires_in", Message: "must be an integer"}}},
		{"company", `{"company":"other","zz":1,"name":5}`, &createKeyRequest{}, []domain.FieldError{{Field: "company", Message: "unknown field: a key's company is always the caller's"}}},
		{"rating", `{"message":"m","rating":"5"}`, &feedbackRequest{}, []domain.FieldError{{Field: "rating", Message: "must be an integer"}}},
		{"no fields", `{"a":1}`, &struct{}{}, []domain.FieldError{{Field: "a", Message: "unknown field; this request takes no fields"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decodeBody(t, tc.body, tc.dst)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// takingInput reports its shape errors itself and words its unknown keys by a value.
type takingInput struct {
	Op     *string  `json:"op" want:"one of a, b" got:"paren"`
	IDs    []string `json:"ids" want:"an array of ids" items:"first"`
	Name   string   `json:"name"`
	Params *struct {
		N int `json:"n"`
	} `json:"params"`
	unknown, wrong []domain.FieldError
}

func (in *takingInput) TakeShape(unknown, wrong []domain.FieldError) {
	in.unknown, in.wrong = unknown, wrong
}

func (in *takingInput) UnknownField(object, _ string) string {
	if in.Op != nil && object == "params" {
		return *in.Op + " takes n"
	}
	return ""
}

// TestDecodeTakeShape: an input that takes its shape errors gets them worded by its tags and
// hooks, and the rest of the body decoded (what was wrong left out).
func TestDecodeTakeShape(t *testing.T) {
	var in takingInput
	if errs := decodeBody(t, `{"op":"a","ids":["x",1,"y",{}],"name":5,"params":{"n":"2","q":1},"zz":1}`, &in); errs != nil {
		t.Fatalf("decode answered %v, want the errors handed over", errs)
	}
	wantUnknown := []domain.FieldError{{Field: "zz", Message: "unknown field; the fields are op, ids, name, params"},
		{Field: "params.q", Message: "unknown field; a takes n"}}
	wantWrong := []domain.FieldError{{Field: "ids", Message: "must be an array of ids: item 1 is a number"},
		{Field: "name", Message: "must be a string, got a number"}, {Field: "params.n", Message: "must be an integer, got a string"}}
	if d := cmp.Diff(wantUnknown, in.unknown); d != "" {
		t.Errorf("unknown (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantWrong, in.wrong); d != "" {
		t.Errorf("wrong (-want +got):\n%s", d)
	}
	if *in.Op != "a" || !cmp.Equal(in.IDs, []string{"x", "", "y", ""}) || in.Name != "" || in.Params == nil || in.Params.N != 0 {
		t.Errorf("decoded %+v", in)
	}
	in = takingInput{}
	if decodeBody(t, `{"op":7}`, &in); !cmp.Equal(in.wrong, []domain.FieldError{{Field: "op", Message: "must be one of a, b (got a number)"}}) || in.Op != nil {
		t.Errorf("op a number: %+v", in)
	}
}
