package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// Limits of http_request beyond Options.
const (
	maxRedirects   = netguard.MaxRedirects
	maxURLLen      = 8192
	maxHeaders     = 32
	maxHeaderValue = 8 << 10
	userAgent      = "agentorch-http-request/1.0"
)

// fetcher is the http_request tool.
type fetcher struct {
	client  *http.Client
	policy  netguard.Policy
	maxBody int64
	timeout time.Duration
}

func newFetcher(o Options) *fetcher {
	p := netguard.Policy{AllowPrivate: o.AllowPrivate, AllowAddr: o.allow, Resolver: o.resolver}
	var c http.Client
	if o.HTTPClient != nil {
		c = *o.HTTPClient // a copy, so the caller's CheckRedirect is left as it was
	} else {
		c = http.Client{Transport: p.Transport(o.Timeout)}
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := p.CheckRedirect(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &fetcher{client: &c, policy: p, maxBody: o.MaxResponseBytes, timeout: o.Timeout}
}

func (f *fetcher) Spec() domain.ToolSpec {
	return domain.ToolSpec{
		Name: NameHTTPRequest,
		Description: fmt.Sprintf("Sends an HTTP GET or POST request to a public http(s) URL and returns "+
			"\"HTTP <status>\", the content type and the body as text. Internal, private and cloud "+
			"metadata addresses are refused. Follows up to %d redirects; the body shown is cut at %d bytes "+
			"and binary bodies are described, not shown. Times out after %s.",
			maxRedirects, f.maxBody, f.timeout),
		Schema: objectSchema(map[string]any{
			"url": map[string]any{
				"type":        "string",
				"description": "Absolute http or https URL, e.g. \"https://example.com/api?q=1\".",
				"maxLength":   maxURLLen,
			},
			"method": map[string]any{
				"type":        "string",
				"enum":        []string{http.MethodGet, http.MethodPost},
				"description": "HTTP method. Default: GET.",
			},
			"headers": map[string]any{
				"type":                 "object",
				"description":          "Request headers by name, e.g. {\"Accept\": \"application/json\"}. Host, Content-Length, Accept-Encoding and hop-by-hop headers are not allowed.",
				"additionalProperties": map[string]any{"type": "string", "maxLength": maxHeaderValue},
				"maxProperties":        maxHeaders,
			},
			"body": map[string]any{
				"type":        "string",
				"description": "Request body, POST only. Set a Content-Type header to match it.",
				"maxLength":   MaxRequestBodyBytes,
			},
		}, "url"),
	}
}

func (f *fetcher) Call(ctx context.Context, input map[string]any) (string, error) {
	if err := checkInput(f.Spec().Schema, input); err != nil {
		return "", err
	}
	callCtx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := f.request(callCtx, input)
	if err != nil {
		return "", err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return "", f.failure(ctx, callCtx, err)
	}
	defer func() { _ = resp.Body.Close() }() // a response body: read or not, nothing is lost
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBody+1))
	if err != nil {
		return "", f.failure(ctx, callCtx, fmt.Errorf("read the response body: %w", err))
	}
	return f.render(resp, body), nil
}

// request builds the HTTP request from a schema-checked input.
func (f *fetcher) request(ctx context.Context, input map[string]any) (*http.Request, error) {
	raw := strings.TrimSpace(stringField(input, "url"))
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, fmt.Errorf("%w: input.url must be an absolute http or https URL", ErrInvalidInput)
	}
	if err := f.policy.CheckURL(u); err != nil {
		return nil, err
	}
	method := stringField(input, "method")
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if b, ok := input["body"].(string); ok {
		if method != http.MethodPost {
			return nil, fmt.Errorf("%w: input.body is only allowed with POST", ErrInvalidInput)
		}
		if len(b) > MaxRequestBodyBytes {
			return nil, fmt.Errorf("%w: input.body is larger than %d bytes", ErrInvalidInput, MaxRequestBodyBytes)
		}
		body = strings.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	req.Header.Set("User-Agent", userAgent)
	headers, _ := input["headers"].(map[string]any)
	for name, v := range headers {
		value, _ := v.(string)
		if err := checkHeader(name, value); err != nil {
			return nil, err
		}
		req.Header.Set(name, value)
	}
	return req, nil
}

// checkHeader refuses headers the tool must control (Host, framing, compression, hop-by-hop)
// and names or values that could split a request.
func checkHeader(name, value string) error {
	if name == "" || strings.Trim(name, "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return fmt.Errorf("%w: %q is not a valid header name", ErrInvalidInput, name)
	}
	switch http.CanonicalHeaderKey(name) {
	case "Host", "Content-Length", "Accept-Encoding", "Connection", "Keep-Alive", "Proxy-Connection",
		"Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return fmt.Errorf("%w: header %q is set by the tool and may not be given", ErrInvalidInput, name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("%w: header %q has a line break or NUL in its value", ErrInvalidInput, name)
	}
	return nil
}

// failure turns a transport error into a message for the model. ctx is the caller's context,
// callCtx the one bounded by the tool's own timeout.
func (f *fetcher) failure(ctx, callCtx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrForbiddenDestination):
		return err // the URL error says what was refused and why
	case ctx.Err() != nil:
		return fmt.Errorf("http_request stopped: %w", context.Cause(ctx))
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("http_request timed out after %s: %w", f.timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("http_request failed: %w", err)
}

// render formats a response as "HTTP <status>\n<content type>\n\n<body>".
func (f *fetcher) render(resp *http.Response, body []byte) string {
	truncated := int64(len(body)) > f.maxBody
	if truncated {
		body = body[:f.maxBody]
	}
	ct := resp.Header.Get("Content-Type")
	var text string
	switch {
	case len(body) == 0:
		text = "[empty body]"
	case isText(ct, body):
		if truncated {
			body = cutRune(body)
		}
		text = strings.ToValidUTF8(string(body), "\uFFFD")
		if truncated {
			text += fmt.Sprintf("\n[truncated] the body is longer than %d bytes", f.maxBody)
		}
	case truncated:
		text = fmt.Sprintf("[binary body of more than %d bytes, not shown]", f.maxBody)
	default:
		text = fmt.Sprintf("[binary body of %d bytes, not shown]", len(body))
	}
	return fmt.Sprintf("HTTP %s\n%s\n\n%s", resp.Status, ct, text)
}

// cutRune drops a UTF-8 sequence that truncation left incomplete at the end of b.
func cutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// isText reports whether a body of the given declared type (sniffed when absent) is text.
func isText(contentType string, body []byte) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if contentType == "" || err != nil {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/yaml", "application/x-yaml",
		"application/x-ndjson", "application/graphql", "application/sql", "application/csv":
		return true
	}
	return false
}
