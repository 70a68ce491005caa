package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// Names of the built-in tools, as agents list them in system_config.tools.
const (
	NameCalculator  = "calculator"
	NameCurrentTime = "current_time"
	NameHTTPRequest = "http_request"
)

// Defaults of Options.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 100 << 10
	// MaxRequestBodyBytes bounds the body an http_request call may send.
	MaxRequestBodyBytes = 100 << 10
)

// Options configures the built-in tools; the zero value is the production setting.
type Options struct {
	// HTTPClient, when set, replaces the guarded client of http_request. Its transport then
	// decides which addresses are reachable: URLs and redirects are still checked, but
	// resolved addresses only by the default client.
	HTTPClient *http.Client
	// Now is the clock of current_time; nil means time.Now.
	Now func() time.Time
	// AllowPrivate turns the public-address guard off. For tests against local servers only.
	AllowPrivate bool
	// MaxResponseBytes caps the response body http_request shows; 0 means 100 KB.
	MaxResponseBytes int64
	// Timeout bounds one http_request call, redirects included; 0 means 10 s.
	Timeout time.Duration

	// allow, when set, admits addresses the public-address policy refuses, so in-package
	// tests can treat one httptest server as public while every other local address stays
	// refused.
	allow func(netip.AddrPort) bool
	// resolver, when set, replaces the system resolver of the guarded client, so tests can
	// make a name resolve to a local address.
	resolver *net.Resolver
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Builtins returns the built-in tools: calculator, current_time and http_request.
func Builtins(opts Options) []domain.Tool {
	opts = opts.withDefaults()
	return []domain.Tool{
		calculator{},
		clock{now: opts.Now},
		newFetcher(opts),
	}
}

// clock is the current_time tool.
type clock struct {
	now func() time.Time
}

func (clock) Spec() domain.ToolSpec {
	return domain.ToolSpec{
		Name: NameCurrentTime,
		Description: "Returns the current date and time as RFC 3339 with the day of the week, " +
			"e.g. \"2026-11-22T18:00:00Z (Sunday)\". Use it whenever the answer depends on today's " +
			"date or the time of day; do not guess them.",
		Schema: objectSchema(map[string]any{
			"timezone": map[string]any{
				"type":        "string",
				"description": "IANA time zone name such as \"Europe/Paris\" or \"America/New_York\". Default: UTC.",
				"maxLength":   64,
			},
		}),
	}
}

func (c clock) Call(_ context.Context, input map[string]any) (string, error) {
	if err := checkInput(c.Spec().Schema, input); err != nil {
		return "", err
	}
	loc, err := location(strings.TrimSpace(stringField(input, "timezone")))
	if err != nil {
		return "", err
	}
	t := c.now().In(loc)
	return fmt.Sprintf("%s (%s)", t.Format(time.RFC3339), t.Weekday()), nil
}

// location resolves an IANA zone name; "" and any spelling of UTC mean UTC. "Local" is
// refused: the server's zone means nothing to the user.
func location(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "UTC") || strings.EqualFold(name, "Z") {
		return time.UTC, nil
	}
	// The zone database is the system's, or the one the functions that run tools embed
	// (shared/app/run: Lambda's provided.al2023 has none).
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fmt.Errorf("%w: unknown time zone %q; use an IANA name such as \"Europe/Paris\"", ErrInvalidInput, name)
	}
	return loc, nil
}
