package mcpservers

import (
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
// timeout_ms?}. Headers are secrets: they never appear in an error. Name and URL are pointers so
// that a missing one is told from an empty one.
type CreateInput struct {
	Name        *string `json:"name"`
	URL         *string `json:"url"`
	Description string  `json:"description"`
	// Headers: an object of header names to string values; null or none is no headers.
	Headers   map[string]string `json:"headers" want:"an object of header names to string values"`
	TimeoutMS *int              `json:"timeout_ms" want:"an integer from 100 to 60000 (milliseconds)"` // nil: DefaultTimeoutMS
	// Auth: OAuth 2.1 instead of (or beside) static headers; nil: none.
	Auth *AuthInput `json:"auth"`
}

// Validate lists what is wrong with a registration's values, in the order of its fields.
func (in *CreateInput) Validate() []domain.FieldError {
	var errs fieldErrs
	if in.Name == nil {
		errs.add("name", "is required")
	}
	if in.URL == nil {
		errs.add("url", "is required")
	}
	checkTimeout(in.TimeoutMS, &errs)
	if in.Name != nil {
		checkName(*in.Name, &errs)
	}
	if in.URL != nil {
		checkURL(*in.URL, &errs)
	}
	checkDescription(in.Description, &errs)
	checkHeaders(in.Headers, &errs)
	if in.Auth != nil {
		in.Auth.check(in.Headers, &errs)
	}
	return errs
}

// UpdateInput is a change: PATCH /api/v1/mcp-servers/{id}/. A field left out is left as it is;
// null description, headers and timeout_ms clear them (back to none and the default); name and
// url cannot be null. Headers set replaces the whole map, and an empty map removes them all.
type UpdateInput struct {
	Name        domain.Optional[string]            `json:"name"`
	URL         domain.Optional[string]            `json:"url"`
	Description domain.Optional[string]            `json:"description"`
	Headers     domain.Optional[map[string]string] `json:"headers" want:"an object of header names to string values"`
	TimeoutMS   domain.Optional[int]               `json:"timeout_ms" want:"an integer from 100 to 60000 (milliseconds)"`
}

// Validate lists what is wrong with a change's values, in the order of its fields.
func (in *UpdateInput) Validate() []domain.FieldError {
	var errs fieldErrs
	for _, f := range []struct {
		name string
		v    domain.Optional[string]
	}{{"name", in.Name}, {"url", in.URL}} {
		if f.v.Null {
			errs.add(f.name, "must be a string, not null (leave it out to keep it)")
		}
	}
	if in.TimeoutMS.Set && !in.TimeoutMS.Null {
		checkTimeout(&in.TimeoutMS.Value, &errs)
	}
	if in.Name.Set && !in.Name.Null {
		checkName(in.Name.Value, &errs)
	}
	if in.URL.Set && !in.URL.Null {
		checkURL(in.URL.Value, &errs)
	}
	checkDescription(in.Description.Value, &errs)
	checkHeaders(in.Headers.Value, &errs)
	return errs
}

// checkTimeout validates timeout_ms (nil: the default).
func checkTimeout(ms *int, errs *fieldErrs) {
	if ms != nil && (*ms < MinTimeoutMS || *ms > MaxTimeoutMS) {
		errs.add("timeout_ms", "must be an integer from %d to %d (milliseconds)", MinTimeoutMS, MaxTimeoutMS)
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
