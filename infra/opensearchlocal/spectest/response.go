package spectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateResponse checks one response body against the spec's schema for its operation and
// status. Responses are checked against the spec as published (objects open: OpenSearch adds
// fields the spec does not list yet).
func (s *Spec) ValidateResponse(method, path string, status int, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	sch, where, err := s.responseSchema(method, path, status, body)
	if err != nil || sch == nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: body is not JSON: %w", where, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s: response does not match the spec:\n%w\nbody: %s", where, err, body)
	}
	return nil
}

// responseSchema returns the compiled schema of an operation's response (nil when the spec
// documents no body for it), and a description of where it came from.
func (s *Spec) responseSchema(method, path string, status int, body []byte) (*jsonschema.Schema, string, error) {
	tmpl, op := s.Operation(method, path)
	if op == nil {
		return nil, "", fmt.Errorf("the spec has no operation %s %s", method, path)
	}
	responses, _ := op["responses"].(map[string]any)
	resp, documented := responses[strconv.Itoa(status)].(map[string]any)
	ptr := "#/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
	where := fmt.Sprintf("%s %s %d (%v)", method, tmpl, status, op["operationId"])
	if !documented {
		// Undocumented statuses: errors are the spec's ErrorResponseBase; other bodies (the 409
		// of delete-by-query with conflicts=abort) are the operation's 200 body.
		var probe any
		if err := json.Unmarshal(body, &probe); err != nil {
			return nil, "", fmt.Errorf("%s: body is not JSON: %w", where, err)
		}
		obj, _ := probe.(map[string]any)
		if _, isErr := obj["error"]; isErr {
			sch, err := s.compile(specURL, "#/components/schemas/_common___ErrorResponseBase")
			return sch, where + " undocumented: ErrorResponseBase", err
		}
		resp, _ = responses["200"].(map[string]any)
		ptr = "#/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method) + "/responses/200"
		where += " undocumented: the 200 body"
	}
	if ref, ok := resp["$ref"].(string); ok {
		ptr = ref
		resp = s.resolve(ref)
	}
	content, _ := resp["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return nil, where, nil
	}
	sch, err := s.compile(specURL, ptr+"/content/application~1json/schema")
	return sch, where, err
}
