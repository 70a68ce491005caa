package mcpservers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
)

// Limits of a registration.
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 2000
	MaxURLLength         = 2048
	MaxHeaders           = 32
	MaxHeaderNameLength  = 128
	MaxHeaderValueLength = 8192
	// MaxHeadersBytes bounds all names and values together, so that a record (with its tools)
	// stays within a DynamoDB item.
	MaxHeadersBytes  = 16 << 10
	MinTimeoutMS     = 100
	MaxTimeoutMS     = 60_000
	DefaultTimeoutMS = 10_000
)

// NameRule describes a valid server name for error messages and the documentation.
const NameRule = "must be 1 to 64 letters, digits, _ or - and start with a letter or digit"

// nameRE is a server name: what the models' tool names allow (OpenAI and Bedrock both take
// ^[a-zA-Z0-9_-]{1,64}$), so a name can stand in a tool's name if a binding ever needs it.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// headerNameRE is an HTTP field name (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// reservedHeaders are set by the MCP transport itself; a registration may not replace them.
var reservedHeaders = []string{"accept", "connection", "content-length", "content-type", "host", "keep-alive",
	"mcp-protocol-version", "mcp-session-id", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}

// fieldErrs collects what is wrong with an input, by field, in the order found.
type fieldErrs []domain.FieldError

func (e *fieldErrs) add(field, format string, args ...any) {
	*e = append(*e, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// CreateInput is a registration: POST /api/v1/mcp-servers/ {name, url, description?, headers?,
// timeout_ms?}. Headers are secrets: they never appear in an error.
type CreateInput struct {
	Name        string
	URL         string
	Description string
	Headers     map[string]string
	TimeoutMS   int // 0: DefaultTimeoutMS
	shape       fieldErrs
}

var createFields = []string{"name", "url", "description", "headers", "timeout_ms"}

// UnmarshalJSON reads the body of a registration; what its JSON shape has wrong is reported by
// Create with the errors of its values.
func (in *CreateInput) UnmarshalJSON(b []byte) error {
	body, err := domain.DecodeObject(b)
	if err != nil {
		return err
	}
	*in = CreateInput{}
	in.shape = unknownFields(body, createFields)
	in.Name = str(body, "name", true, &in.shape)
	in.URL = str(body, "url", true, &in.shape)
	in.Description = str(body, "description", false, &in.shape)
	in.Headers, _ = headers(body, &in.shape)
	in.TimeoutMS, _ = timeout(body, &in.shape)
	return nil
}

// check validates a registration (after its shape).
func (in *CreateInput) check() []domain.FieldError {
	errs := slices.Clone(in.shape)
	bad := func(f string) bool {
		return slices.ContainsFunc(errs, func(e domain.FieldError) bool { return e.Field == f })
	}
	if !bad("name") {
		checkName(in.Name, &errs)
	}
	if !bad("url") {
		checkURL(in.URL, &errs)
	}
	checkDescription(in.Description, &errs)
	checkHeaders(in.Headers, &errs)
	return errs
}

// UpdateInput is a change: PATCH /api/v1/mcp-servers/{id}/. A nil field is left as it is;
// Headers set (HeadersSet) replaces the whole map, and an empty map removes them all.
type UpdateInput struct {
	Name        *string
	URL         *string
	Description *string
	Headers     map[string]string
	HeadersSet  bool
	TimeoutMS   *int // 0: back to DefaultTimeoutMS
	shape       fieldErrs
}

// UnmarshalJSON reads the body of a change. null description, headers and timeout_ms clear them
// (back to none and the default); name and url cannot be null.
func (in *UpdateInput) UnmarshalJSON(b []byte) error {
	body, err := domain.DecodeObject(b)
	if err != nil {
		return err
	}
	*in = UpdateInput{}
	in.shape = unknownFields(body, createFields)
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &in.Name}, {"url", &in.URL}, {"description", &in.Description}} {
		v, ok := body[f.name]
		if !ok {
			continue
		}
		if v == nil && f.name != "description" {
			in.shape.add(f.name, "must be a string, not null (leave it out to keep it)")
			continue
		}
		s := str(body, f.name, false, &in.shape)
		*f.dst = &s
	}
	if _, ok := body["headers"]; ok {
		in.Headers, in.HeadersSet = headers(body, &in.shape)
	}
	if _, ok := body["timeout_ms"]; ok {
		if t, ok := timeout(body, &in.shape); ok {
			in.TimeoutMS = &t
		}
	}
	return nil
}

// check validates a change (after its shape).
func (in *UpdateInput) check() []domain.FieldError {
	errs := slices.Clone(in.shape)
	bad := func(f string) bool {
		return slices.ContainsFunc(errs, func(e domain.FieldError) bool { return e.Field == f })
	}
	if in.Name != nil && !bad("name") {
		checkName(*in.Name, &errs)
	}
	if in.URL != nil && !bad("url") {
		checkURL(*in.URL, &errs)
	}
	if in.Description != nil {
		checkDescription(*in.Description, &errs)
	}
	checkHeaders(in.Headers, &errs)
	return errs
}

func unknownFields(body map[string]any, known []string) fieldErrs {
	var errs fieldErrs
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(known, k) {
			errs.add(domain.Clip(k, 64), "unknown field; the fields are %s", strings.Join(known, ", "))
		}
	}
	return errs
}

// str reads a string field; absent or null is "" (an error when required).
func str(body map[string]any, name string, required bool, errs *fieldErrs) string {
	switch v := body[name].(type) {
	case string:
		return v
	case nil:
		if required {
			errs.add(name, "is required")
		}
	default:
		errs.add(name, "must be a string, got %s", domain.JSONType(v))
	}
	return ""
}

// headers reads headers: an object of strings, or null (none). The values are never quoted in
// an error. ok is false when the field is not a usable object.
func headers(body map[string]any, errs *fieldErrs) (map[string]string, bool) {
	switch v := body["headers"].(type) {
	case nil:
		return map[string]string{}, true
	case map[string]any:
		out := make(map[string]string, len(v))
		good := true
		for _, k := range slices.Sorted(maps.Keys(v)) {
			s, ok := v[k].(string)
			if !ok {
				errs.add("headers."+domain.Clip(k, MaxHeaderNameLength), "must be a string, got %s", domain.JSONType(v[k]))
				good = false
				continue
			}
			out[k] = s
		}
		return out, good
	default:
		errs.add("headers", "must be an object of header names to string values, got %s", domain.JSONType(v))
		return nil, false
	}
}

// timeout reads timeout_ms: an integer, or null (the default).
func timeout(body map[string]any, errs *fieldErrs) (int, bool) {
	switch v := body["timeout_ms"].(type) {
	case nil:
		return 0, true
	case json.Number:
		n, err := v.Int64()
		if err != nil || n < MinTimeoutMS || n > MaxTimeoutMS {
			errs.add("timeout_ms", "must be an integer from %d to %d (milliseconds)", MinTimeoutMS, MaxTimeoutMS)
			return 0, false
		}
		return int(n), true
	default:
		errs.add("timeout_ms", "must be an integer from %d to %d (milliseconds), got %s", MinTimeoutMS, MaxTimeoutMS, domain.JSONType(v))
		return 0, false
	}
}

func checkName(name string, errs *fieldErrs) {
	switch {
	case !nameRE.MatchString(name):
		errs.add("name", NameRule)
	case uuid.Validate(name) == nil:
		errs.add("name", "must not be a UUID: configurations name a server by its name or its id, and ids are UUIDs")
	}
}

// checkURL accepts an absolute http(s) URL with a host and no user information. Where it points
// (internal addresses) is the connector's guard's to judge, when it connects.
func checkURL(raw string, errs *fieldErrs) {
	if len(raw) > MaxURLLength {
		errs.add("url", "must be at most %d characters", MaxURLLength)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || raw == "":
		errs.add("url", "must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		errs.add("url", "must be an http or https URL, not %q", domain.Clip(u.Scheme, 20))
	case u.Hostname() == "":
		errs.add("url", "must name a host")
	case u.User != nil:
		// Credentials in a URL end up in logs and error messages: they belong in headers.
		errs.add("url", "must not hold a user name or password; send credentials in headers")
	case u.Fragment != "":
		errs.add("url", "must not have a fragment")
	}
}

func checkDescription(d string, errs *fieldErrs) {
	if utf8.RuneCountInString(d) > MaxDescriptionLength {
		errs.add("description", "must be at most %d characters", MaxDescriptionLength)
	}
}

// checkHeaders validates header names and values; a value is never echoed.
func checkHeaders(h map[string]string, errs *fieldErrs) {
	if len(h) > MaxHeaders {
		errs.add("headers", "must hold at most %d headers", MaxHeaders)
		return
	}
	total := 0
	for k, v := range h {
		total += len(k) + len(v)
	}
	if total > MaxHeadersBytes {
		errs.add("headers", "must hold at most %d bytes of names and values together", MaxHeadersBytes)
		return
	}
	seen := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		field := "headers." + domain.Clip(k, MaxHeaderNameLength)
		lower := strings.ToLower(k)
		switch {
		case len(k) > MaxHeaderNameLength || !headerNameRE.MatchString(k):
			errs.add(field, "is not a valid HTTP header name")
		case slices.Contains(reservedHeaders, lower):
			errs.add(field, "is set by the MCP transport and cannot be given")
		case seen[lower] != "":
			errs.add(field, "repeats the header %s (header names are case-insensitive)", seen[lower])
		case len(h[k]) > MaxHeaderValueLength:
			errs.add(field, "must be at most %d bytes", MaxHeaderValueLength)
		case !validHeaderValue(h[k]):
			errs.add(field, "must not hold control characters (line breaks, NUL) or invalid UTF-8")
		}
		seen[lower] = k
	}
}

// validHeaderValue reports whether v can be sent as a header value: valid UTF-8 with no control
// character but tab.
func validHeaderValue(v string) bool {
	if !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return false
		}
	}
	return true
}
