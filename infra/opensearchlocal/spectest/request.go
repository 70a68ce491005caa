package spectest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	jskind "github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ValidateRequest checks a request against the spec and returns its operation's id: the spec
// has an operation for the method and path; every path and query parameter is one the operation
// declares, with a value its schema admits, and the required ones are there; the body is one
// of the media types of the operation's requestBody and matches its schema with objects closed
// (strict.go). An NDJSON body (_bulk) is checked line by line as the array the spec describes,
// and each action line of its action-data pairs as a bulk OperationContainer.
func (s *Spec) ValidateRequest(method string, u *url.URL, contentType string, body []byte) (string, error) {
	path := u.EscapedPath()
	tmpl, op := s.Operation(method, path)
	if op == nil {
		return "", fmt.Errorf("the spec has no operation %s %s", method, path)
	}
	id, _ := op["operationId"].(string)
	where := fmt.Sprintf("%s %s (%s)", method, tmpl, id)
	if !inVersion(op, Version) {
		return id, fmt.Errorf("%s: OpenSearch %s has no such operation (x-version-added %v, x-version-removed %v)",
			where, Version, op["x-version-added"], op["x-version-removed"])
	}
	opPtr := "#/paths/" + pointerEscape(tmpl) + "/" + strings.ToLower(method)
	var errs []error
	params := s.parameters(tmpl, opPtr, op)

	// Path parameters: the template's {name} segments.
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, ts := range strings.Split(strings.Trim(tmpl, "/"), "/") {
		name, ok := strings.CutPrefix(ts, "{")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, "}")
		p, ok := params["path "+name]
		if !ok || p.absent != "" {
			errs = append(errs, fmt.Errorf("path parameter %s is not declared for OpenSearch %s", name, Version))
			continue
		}
		v, err := url.PathUnescape(segs[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("path parameter %s: %w", name, err))
			continue
		}
		if err := s.checkParam(p, v); err != nil {
			errs = append(errs, fmt.Errorf("path parameter %s=%q: %w", name, v, err))
		}
	}

	// Query parameters.
	query := u.Query()
	for name, values := range query {
		p, ok := params["query "+name]
		if !ok {
			errs = append(errs, fmt.Errorf("query parameter %s is not one of the operation's", name))
			continue
		}
		if p.absent != "" {
			errs = append(errs, fmt.Errorf("query parameter %s is not in OpenSearch %s (%s)", name, Version, p.absent))
			continue
		}
		for _, v := range values {
			if err := s.checkParam(p, v); err != nil {
				errs = append(errs, fmt.Errorf("query parameter %s=%q: %w", name, v, err))
			}
		}
	}
	for key, p := range params {
		if name, ok := strings.CutPrefix(key, "query "); ok && p.required && p.absent == "" && !query.Has(name) {
			errs = append(errs, fmt.Errorf("required query parameter %s is missing", name))
		}
	}

	if err := s.checkBody(opPtr, contentType, body); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return id, fmt.Errorf("%s: request does not match the spec:\n%w", where, err)
	}
	return id, nil
}

// param is one declared parameter of an operation.
type param struct {
	ptr      string // of its schema, in the strict document
	required bool
	absent   string // why OpenSearch Version does not know it ("" if it does)
}

// parameters are an operation's and its path's parameters by "<in> <name>".
func (s *Spec) parameters(tmpl, opPtr string, op map[string]any) map[string]param {
	out := map[string]param{}
	add := func(list any, ptr string) {
		items, _ := list.([]any)
		for i, it := range items {
			p, _ := it.(map[string]any)
			at := ptr + "/parameters/" + strconv.Itoa(i)
			if ref, ok := p["$ref"].(string); ok {
				p, at = s.resolve(ref), ref
			}
			in, _ := p["in"].(string)
			name, _ := p["name"].(string)
			req, _ := p["required"].(bool)
			pp := param{ptr: at + "/schema", required: req}
			if !inVersion(p, Version) {
				pp = param{absent: fmt.Sprintf("x-version-added %v, x-version-removed %v", p["x-version-added"], p["x-version-removed"])}
			}
			out[in+" "+name] = pp
		}
	}
	add(s.doc["paths"].(map[string]any)[tmpl].(map[string]any)["parameters"], "#/paths/"+pointerEscape(tmpl))
	add(op["parameters"], opPtr)
	return out
}

// checkParam checks a parameter's text against its schema: as the string it is, or as the
// boolean, number or comma list it spells (OpenSearch reads it by the parameter's type).
func (s *Spec) checkParam(p param, v string) error {
	sch, err := s.compile(strictURL, p.ptr)
	if err != nil {
		return err
	}
	candidates := []any{v}
	if v == "true" || v == "false" {
		candidates = append(candidates, v == "true")
	}
	if n, err := jsonschema.UnmarshalJSON(strings.NewReader(v)); err == nil {
		if _, ok := n.(json.Number); ok {
			candidates = append(candidates, n)
		}
	}
	if strings.Contains(v, ",") {
		var list []any
		for _, e := range strings.Split(v, ",") {
			list = append(list, e)
		}
		candidates = append(candidates, list)
	}
	var first error
	for _, c := range candidates {
		err := sch.Validate(c)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// checkBody checks a request body against the operation's requestBody (in the strict document,
// where requestPatches apply).
func (s *Spec) checkBody(opPtr string, contentType string, body []byte) error {
	ptr := opPtr + "/requestBody"
	rb, declared := lookup(s.strict, ptr).(map[string]any)
	if ref, ok := rb["$ref"].(string); ok {
		rb, _ = lookup(s.strict, ref).(map[string]any)
		ptr = ref
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if req, _ := rb["required"].(bool); req {
			return errors.New("the operation requires a body; there is none")
		}
		return nil
	}
	if !declared {
		return errors.New("the operation takes no body")
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", contentType, err)
	}
	content, _ := rb["content"].(map[string]any)
	if _, ok := content[media]; !ok {
		var known []string
		for m := range content {
			known = append(known, m)
		}
		slices.Sort(known)
		return fmt.Errorf("body of Content-Type %s; the operation takes %v", media, known)
	}
	sch, err := s.compile(strictURL, ptr+"/content/"+pointerEscape(media)+"/schema")
	if err != nil {
		return err
	}
	if _, ok := content["application/x-ndjson"]; ok { // an NDJSON operation, whatever the media type says
		return s.checkNDJSON(sch, body)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		summary := ""
		if loose, lerr := s.compile(specURL, ptr+"/content/"+pointerEscape(media)+"/schema"); lerr == nil && loose.Validate(inst) == nil {
			// The published spec takes it: every refusal is of an unlisted field.
			summary = fmt.Sprintf(" (fields the spec does not list there, or OpenSearch %s does not have: %s)", Version, strings.Join(unlisted(sch, inst), ", "))
		}
		return fmt.Errorf("body does not match %s%s:\n%w\nbody: %s", ptr, summary, err, clip(body))
	}
	return nil
}

// bulkAction is the schema of a _bulk action line.
const bulkAction = "#/components/schemas/_core.bulk___OperationContainer"

// checkNDJSON checks a _bulk body: its lines as the array the schema describes (each line any
// of an operation, an update action, a document), and each pair's action line, closed, as an
// operation; delete actions have no data line.
func (s *Spec) checkNDJSON(sch *jsonschema.Schema, body []byte) error {
	action, err := s.compile(strictURL, bulkAction)
	if err != nil {
		return err
	}
	var lines []any
	for i, line := range bytes.Split(bytes.TrimRight(body, "\n"), []byte("\n")) {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err != nil {
			return fmt.Errorf("line %d is not JSON: %w", i+1, err)
		}
		lines = append(lines, v)
	}
	if err := sch.Validate(lines); err != nil {
		return fmt.Errorf("bulk body does not match the spec:\n%w", err)
	}
	for i := 0; i < len(lines); i++ {
		if err := action.Validate(lines[i]); err != nil {
			return fmt.Errorf("line %d is no bulk action (%s):\n%w\nline: %s", i+1, bulkAction, err, clip(bytes.Split(body, []byte("\n"))[i]))
		}
		if m, _ := lines[i].(map[string]any); m["delete"] == nil {
			i++ // the data line
		}
	}
	return nil
}

// clip shortens a body for a message.
func clip(b []byte) string {
	const max = 4000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// unlisted names the fields of inst that sch refuses with a false schema (the published spec
// takes inst). A refused field also fails the schemas around it, and those drop what they
// evaluated, so the objects around it refuse their other fields too: unlisted removes the
// deepest refusal from a copy of inst and validates again, until nothing is refused.
func unlisted(sch *jsonschema.Schema, inst any) []string {
	inst = deepCopy(inst)
	var out []string
	for range 100 {
		var ve *jsonschema.ValidationError
		if err := sch.Validate(inst); !errors.As(err, &ve) {
			break
		}
		var deepest []string
		var walk func(e *jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if _, ok := e.ErrorKind.(*jskind.FalseSchema); ok && len(e.InstanceLocation) > len(deepest) {
				deepest = e.InstanceLocation
			}
			for _, c := range e.Causes {
				walk(c)
			}
		}
		walk(ve)
		if len(deepest) == 0 || !remove(inst, deepest) {
			break
		}
		out = append(out, "/"+strings.Join(deepest, "/"))
	}
	slices.Sort(out)
	return out
}

// remove deletes the object member at loc from v.
func remove(v any, loc []string) bool {
	for _, tok := range loc[:len(loc)-1] {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return false
			}
			v = c[i]
		default:
			return false
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m[loc[len(loc)-1]]; !ok {
		return false
	}
	delete(m, loc[len(loc)-1])
	return true
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}
